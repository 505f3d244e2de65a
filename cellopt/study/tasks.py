"""Running independent tasks: in this process, on spawned worker processes, or on Dask.

Every long run of :mod:`cellopt.study` is a list of tasks, each a module-level function
with plain arguments that writes its own result; :func:`run_tasks` runs them with a
progress bar, stops at the first error (keeping what finished) and at once on Ctrl+C.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import signal
from collections.abc import Callable, Sequence
from typing import Any

from cellopt.cluster import connect

__all__ = ["run_tasks"]

#: Seconds to wait for a Dask scheduler before giving up.
CONNECT_TIMEOUT_S = 5.0


def run_tasks(fn: Callable[..., Any], tasks: Sequence[tuple], *, workers: int = 1,
              scheduler: Any = None, progress: bool = True, unit: str = "task") -> None:
    """Call ``fn(*task)`` for every task: serially, on `workers` spawned processes, or on Dask.

    `fn` must be a module-level function (it is pickled to the workers) that writes its
    own results; the first exception stops the run and is raised, after the tasks already
    running have finished (and written their results). A KeyboardInterrupt stops at once:
    the worker processes are ended, results already written are kept.

    Parameters
    ----------
    fn : callable
    tasks : sequence of tuple
        Plain, picklable arguments.
    workers : int
        ``> 1``: a spawn-context :class:`~concurrent.futures.ProcessPoolExecutor`.
    scheduler : str or dask.distributed.Client, optional
        Run on this Dask cluster instead (``workers`` is then ignored).
    progress : bool
        Show a tqdm progress bar counting `unit`.

    Raises
    ------
    CelloptError
        For a `scheduler` that cannot be reached within a few seconds, or without
        ``dask.distributed`` installed.
    ValidationError
        For a `scheduler` that is not an address.
    """
    # Connect before the progress bar shows; nothing to run needs no cluster.
    client = connect(scheduler, CONNECT_TIMEOUT_S) if scheduler is not None and tasks else None
    bar = _progress(len(tasks), unit) if progress and tasks else None
    try:
        if client is not None:
            _run_on_dask(client, fn, tasks, bar)
        elif workers == 1 or len(tasks) <= 1:
            for task in tasks:
                fn(*task)
                if bar is not None:
                    bar.update(1)
        else:
            _run_on_pool(fn, tasks, workers, bar)
    finally:
        if bar is not None:
            bar.close()
        if client is not None and client is not scheduler:
            client.close()


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl+C reaches the whole process group; only the parent handles it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_on_pool(fn: Callable[..., Any], tasks: Sequence[tuple], workers: int, bar: Any) -> None:
    """Run the tasks on `workers` spawned processes (see :func:`run_tasks`)."""
    ctx = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx, initializer=_ignore_sigint)
    try:
        futures = [pool.submit(fn, *task) for task in tasks]
        for fut in concurrent.futures.as_completed(futures):
            fut.result()
            if bar is not None:
                bar.update(1)
    except KeyboardInterrupt:
        # Stop now: a task cut short leaves only a hidden .tmp, which the next resume removes.
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)  # running tasks finish and keep their results
        raise
    pool.shutdown(wait=True)


def _run_on_dask(client: Any, fn: Callable[..., Any], tasks: Sequence[tuple], bar: Any) -> None:
    """Run the tasks on a Dask distributed cluster through `client`.

    The workers write their results into the same folder, so it must be on a file system
    they share (always true for a ``LocalCluster``).
    """
    from dask.distributed import as_completed

    futures = [client.submit(fn, *task, pure=False) for task in tasks]
    for fut in as_completed(futures):
        fut.result()
        if bar is not None:
            bar.update(1)


def _progress(total: int, unit: str) -> Any:
    """A tqdm progress bar over the tasks."""
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=unit)
