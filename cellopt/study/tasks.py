"""Running independent tasks: in this process, on spawned worker processes, or on Dask.

Every long run of :mod:`cellopt.study` is a list of tasks, each a module-level function
with plain arguments that writes its own result; :func:`run_tasks` runs them with a
progress bar, stops at the first error (keeping what finished) and at once on Ctrl+C.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from multiprocessing import resource_tracker
from typing import Any

from cellopt.cluster import connect
from cellopt.progress import progress_bar, shows

__all__ = ["run_tasks"]

#: Seconds to wait for a Dask scheduler before giving up.
CONNECT_TIMEOUT_S = 5.0
#: Seconds an interrupted worker has to end after SIGTERM before it is killed.
END_TIMEOUT_S = 10.0


def run_tasks(fn: Callable[..., Any], tasks: Sequence[tuple], *, workers: int = 1,
              scheduler: Any = None, progress: bool | None = None, unit: str = "task") -> None:
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
    progress : bool or None
        Show a tqdm progress bar counting `unit`. None (default): when standard error is a
        terminal (:mod:`cellopt.progress`).

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
    bar = progress_bar(len(tasks), progress=progress, desc="", unit=unit) \
        if shows(progress) and tasks else None
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


def _start_worker(start_method: str | None) -> None:
    """Worker initializer: Ctrl+C reaches the whole process group; only the parent handles it.

    The worker was started with SIGINT blocked (:func:`_sigint_held`), so a Ctrl+C during
    its start-up is still pending here: ignoring SIGINT first discards it, then unblocking
    restores the usual signal mask for the tasks.

    The worker's default start method, which multiprocessing sets to "spawn" in a spawned
    process, is set back to the parent's (`start_method`): tasks see the same defaults as
    when run serially, and with "fork" the locks they make (tqdm makes one for any bar)
    have no named semaphore that a worker ended on Ctrl+C would leave to the resource
    tracker, which reports each as leaked when the run exits.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if start_method is not None:
        multiprocessing.set_start_method(start_method, force=True)


def _default_start_method() -> str:
    """This process's default start method of multiprocessing (without fixing it)."""
    return multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """Hold a Ctrl+C back while worker processes start; deliver it when the block ends.

    Interrupted half way, the parent would lose track of a worker it had just started
    (the worker, left without its start-up data, prints a traceback), and a worker
    interrupted before its initializer runs prints a KeyboardInterrupt traceback. So,
    for the block, in the main thread: SIGINT is blocked and its disposition is "ignore".
    Spawned workers start from a fresh interpreter, which resets the signal mask but keeps
    an ignored signal ignored, so they ignore SIGINT from their first instruction. A
    Ctrl+C that reaches the parent meanwhile stays pending (Linux queues a blocked signal
    even while it is ignored); at the end the pending signal is taken by a handler that
    records it, and then re-raised for the previous handler: a KeyboardInterrupt, once
    every started worker is known to the pool. Elsewhere (another thread, no
    ``pthread_sigmask``) only what is possible of this is done.
    """
    # The first process a spawn context starts launches multiprocessing's resource tracker,
    # and unblocks SIGINT after it: inside the block that would leave SIGINT ignored and a
    # Ctrl+C lost. So the tracker is started before it.
    resource_tracker.ensure_running()
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    received: list[int] = []

    def record(signum: int, frame: object) -> None:
        received.append(signum)

    if previous is not None:
        signal.signal(signal.SIGINT, record)  # a Ctrl+C before the mask is recorded
    blocked = (signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
               if hasattr(signal, "pthread_sigmask") else None)
    if previous is not None and blocked is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # what the workers start with
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, record)
        if blocked is not None:  # a pending SIGINT reaches the recording handler now
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
            if received:
                signal.raise_signal(signal.SIGINT)  # handled as it would have been


def _end_workers(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """End the pool's worker processes now, running tasks and all, and wait until they are gone."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(END_TIMEOUT_S)
        if proc.is_alive():  # SIGTERM not acted on (e.g. stuck in the kernel)
            proc.kill()
            proc.join()
    # The pool's thread sees its workers gone, fails the futures left and closes the queues.
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    if manager is not None:
        manager.join(END_TIMEOUT_S)


def _run_on_pool(fn: Callable[..., Any], tasks: Sequence[tuple], workers: int, bar: Any) -> None:
    """Run the tasks on `workers` spawned processes (see :func:`run_tasks`)."""
    ctx = multiprocessing.get_context("spawn")
    pool = None
    try:
        with _sigint_held():  # every worker starts whole, and ignoring SIGINT
            pool = concurrent.futures.ProcessPoolExecutor(
                workers, mp_context=ctx, initializer=_start_worker,
                initargs=(_default_start_method(),))
            futures = [pool.submit(fn, *task) for task in tasks]
        for fut in concurrent.futures.as_completed(futures):
            fut.result()
            if bar is not None:
                bar.update(1)
        pool.shutdown(wait=True)
    except KeyboardInterrupt:
        # Stop now: a task cut short leaves only a hidden .tmp, which the next resume removes.
        if pool is not None:
            _end_workers(pool)
        raise
    except BaseException:
        if pool is not None:
            try:
                pool.shutdown(wait=True, cancel_futures=True)  # running tasks finish and keep their results
            except KeyboardInterrupt:  # ... unless Ctrl+C stops the wait
                _end_workers(pool)
                raise
        raise


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
