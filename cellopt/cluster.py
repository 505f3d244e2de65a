"""Connecting to a Dask cluster: a scheduler argument (address or Client) in, a Client out."""

from __future__ import annotations

from typing import Any

from cellopt.errors import CelloptError, ValidationError

__all__ = ["connect", "distributed"]


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
        return client_type(scheduler, timeout=timeout_s)
    except ValueError as err:  # a malformed address
        raise ValidationError(f"scheduler={scheduler!r}: {err}; fix: give the address of a Dask "
                              "scheduler, e.g. 'tcp://HOST:8786'") from None
    except OSError as err:  # dask's connect timeout, refused or unresolved addresses
        raise CelloptError(
            f"cannot reach the Dask scheduler at {scheduler!r} within {timeout_s:g} s ({err}); "
            f"fix: start it (`dask scheduler`, and workers with `dask worker {scheduler}`), or "
            "check the address") from None
