"""Dask clients: connecting to a cluster (a scheduler address or Client in, a Client out), or
starting a local one set up for the methods that run on Dask.

``dask.distributed`` is an optional extra, imported only when a function here runs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

from cellopt.errors import CelloptError, ValidationError

__all__ = ["WORKER_MALLOC_ENV", "connect", "distributed", "local_client", "open_client"]

#: Environment of the worker processes :func:`local_client` starts. Dask's nanny sets
#: ``MALLOC_TRIM_THRESHOLD_=65536`` by default, which (glibc) also fixes the mmap threshold
#: at 128 kB: every large temporary of an evaluation is then a fresh mmap, paid in page
#: faults — evaluations ran 2–3× slower than in a plain process. These values keep large
#: arrays on the heap and the heap untrimmed (up to 1 GiB).
WORKER_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "1073741824"}


def distributed() -> Any:
    """The ``dask.distributed`` module, or a CelloptError naming the fix (an optional extra)."""
    try:
        import dask.distributed
    except ImportError as err:
        raise CelloptError("running on Dask needs dask.distributed; fix: pip install "
                           "'cellopt[dask]'") from err
    return dask.distributed


def connect(scheduler: Any, timeout_s: float) -> Any:
    """A connected ``dask.distributed.Client``: `scheduler` itself, or one for its address.

    Parameters
    ----------
    scheduler : dask.distributed.Client or str
        A connected client (returned as it is) or a scheduler address, e.g.
        ``"tcp://HOST:8786"`` (the caller closes the client it gets).
    timeout_s : float
        Seconds to wait for the scheduler before giving up [s].

    Raises
    ------
    ValidationError
        For a `scheduler` that is neither a Client nor an address.
    CelloptError
        Without ``dask.distributed``, or for a scheduler that cannot be reached in time.
    """
    client_type = distributed().Client
    if isinstance(scheduler, client_type):
        return scheduler
    if not isinstance(scheduler, str) or not scheduler.strip():
        # Client("") would quietly start a local cluster instead
        raise ValidationError(f"scheduler={scheduler!r}; fix: give a dask.distributed.Client or "
                              "the address of a Dask scheduler, e.g. 'tcp://HOST:8786'")
    try:
        # the address's scheme first, without a Client: a Client refused while it starts
        # can leave dask's event-loop runner half started for the next one in the process
        comm = distributed().comm
        comm.registry.get_backend(comm.parse_address(scheduler)[0])
        return client_type(scheduler, timeout=timeout_s)
    except ValueError as err:  # a malformed address
        raise ValidationError(f"scheduler={scheduler!r}: {err}; fix: give the address of a Dask "
                              "scheduler, e.g. 'tcp://HOST:8786'") from None
    except OSError as err:  # dask's connect timeout, refused or unresolved addresses
        raise CelloptError(
            f"cannot reach the Dask scheduler at {scheduler!r} within {timeout_s:g} s ({err}); "
            f"fix: start it (`dask scheduler`, and workers with `dask worker {scheduler}`), or "
            "check the address") from None


@contextlib.contextmanager
def local_client(n_workers: int = 2) -> Iterator[Any]:
    """A ``dask.distributed.Client`` of a local cluster set up for ``dual_dask``; the
    client and the cluster are closed on exit.

    `n_workers` worker processes with one thread each, the scheduler's HTTP server
    (dashboard) on a free port, and the worker processes started with
    :data:`WORKER_MALLOC_ENV` (what ``dual_dask`` starts when given no scheduler).

    Parameters
    ----------
    n_workers : int
        Worker processes ≥ 1.

    Yields
    ------
    dask.distributed.Client

    Raises
    ------
    CelloptError
        Without ``dask.distributed``.
    """
    dask_distributed = distributed()
    Client, LocalCluster = dask_distributed.Client, dask_distributed.LocalCluster
    import dask

    # The nanny reads these from os.environ first, from its settings second: set both
    # while the workers start, then put the environment back.
    saved = {k: os.environ.get(k) for k in WORKER_MALLOC_ENV}
    try:
        os.environ.update(WORKER_MALLOC_ENV)
        with dask.config.set({f"distributed.nanny.pre-spawn-environ.{k}": v
                              for k, v in WORKER_MALLOC_ENV.items()}):
            # The scheduler's HTTP server starts in any case, on 8787 unless told
            # otherwise: a free port, so a second cluster does not warn about 8787.
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                   dashboard_address=":0")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    try:
        client = Client(cluster)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


def open_client(scheduler: Any, timeout_s: float) -> tuple[Any, Callable[[], None]]:
    """A connected ``dask.distributed.Client`` with at least one worker, and how to close
    what was opened for it.

    Parameters
    ----------
    scheduler : dask.distributed.Client or str or None
        A connected client (used as it is; the caller's to close), a scheduler address
        (:func:`connect`), or None for a :func:`local_client` of 2 workers.
    timeout_s : float
        Seconds to wait for the scheduler, and then for its first worker [s].

    Returns
    -------
    client : dask.distributed.Client
    close : callable
        Closes the client (and the local cluster) opened for the call; does nothing for
        a Client passed in.

    Raises
    ------
    ValidationError
        For a `scheduler` that is neither None, a Client nor an address.
    CelloptError
        Without ``dask.distributed``, for a scheduler that cannot be reached in time, or
        one without a worker after `timeout_s`.
    """
    if scheduler is None:
        stack = contextlib.ExitStack()
        client = stack.enter_context(local_client())
        return client, stack.close
    client = connect(scheduler, timeout_s)
    if client is scheduler:  # a Client passed in: the caller's to close
        _wait_for_a_worker(client, repr(client), timeout_s)
        return client, lambda: None
    try:
        _wait_for_a_worker(client, scheduler, timeout_s)
    except BaseException:
        client.close()
        raise
    return client, client.close


def _wait_for_a_worker(client: Any, where: str, timeout_s: float) -> None:
    try:
        client.wait_for_workers(1, timeout=timeout_s)
    except (OSError, TimeoutError) as err:
        raise CelloptError(f"the Dask scheduler {where} has no worker after {timeout_s:g} "
                           f"s ({err}); fix: start workers with `dask worker ADDRESS`") from None
