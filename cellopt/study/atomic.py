"""Atomic file writing: every file cellopt writes is either the old one or the whole new one.

A file is written to a temporary file in the target's folder, flushed to disk, then moved
onto the target with :func:`os.replace` (atomic on POSIX and Windows when both are on the
same file system, which a file in the same folder always is). The temporary name is hidden
and unique to the process and the call,

    .<name>.<pid>.<random>.tmp             (or .<stem>.<pid>.<random>.tmp<suffix>)

so two runs writing the same target at once never share a temporary file: each replaces
the target with a complete file of its own, and the last move wins. A failure or an
interruption (an exception, Ctrl+C, a full disk) removes the temporary file and leaves the
target as it was; a killed process leaves at most a hidden ``.*.tmp`` file next to it,
which :meth:`~cellopt.study.store.ResultsFolder.open` removes on resume.

:func:`atomic_write` (a callback given an open file), :func:`atomic_open` (the open file as
a context manager) and :func:`atomic_path` (a temporary path, for writers that take a path,
such as GDAL) are the three ways in; :func:`save_figure` writes a matplotlib figure.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_open", "atomic_path", "atomic_write", "save_figure", "temporary_path"]

_MODES = {"w": "x", "wb": "xb"}


def temporary_path(path: str | os.PathLike[str], *, keep_suffix: bool = False) -> Path:
    """A fresh hidden name for a temporary file beside `path`, unique to this process and call.

    Parameters
    ----------
    path : str or path-like
        The target file.
    keep_suffix : bool
        End the name with the target's suffix (``.results.<pid>.<random>.tmp.gpkg`` for
        ``results.gpkg``), for writers that choose the format by it; by default the name
        ends with ``.tmp`` (``.results.gpkg.<pid>.<random>.tmp``).

    Returns
    -------
    pathlib.Path
        In the folder of `path`; nothing is created.
    """
    path = Path(path)
    tag = f"{os.getpid()}.{secrets.token_hex(6)}"
    if keep_suffix:
        return path.with_name(f".{path.stem}.{tag}.tmp{path.suffix}")
    return path.with_name(f".{path.name}.{tag}.tmp")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, keep_suffix: bool = False) -> Iterator[Path]:
    """A temporary path to write `path` at; moved onto `path` when the block ends without error.

    For writers that take a file name rather than an open file (GDAL, through pyogrio). The
    block creates the file at the yielded path; on leaving it the file is flushed to disk
    and moved onto `path`. SQLite's side files of the temporary file (``-journal``,
    ``-wal``, ``-shm``), if any are left, are removed with it.

    Parameters
    ----------
    path : str or path-like
        The target file; its folder must exist.
    keep_suffix : bool
        See :func:`temporary_path` (``True`` for a GeoPackage: GDAL warns about any other
        extension).

    Yields
    ------
    pathlib.Path
        The temporary path (not yet created).

    Raises
    ------
    OSError
        From the block, the flush or the move; one that names no file or the temporary
        file is raised again naming `path` (same errno, hence the same subclass).
    """
    with _committing(path, keep_suffix=keep_suffix, sync=True) as tmp:
        yield tmp


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """An open temporary file whose content replaces `path` when the block ends without error.

    Parameters
    ----------
    path : str or path-like
        The target file; its folder must exist.
    mode : {"w", "wb"}
        Text (UTF-8, newlines written as given: ``"\\n"`` stays ``"\\n"`` on every platform)
        or binary.

    Yields
    ------
    file object
        Open for writing; flushed to disk and closed before the move.

    Raises
    ------
    ValueError
        For another `mode`.
    OSError
        As for :func:`atomic_path`.
    """
    if mode not in _MODES:
        raise ValueError(f"mode {mode!r}; fix: give 'w' (text) or 'wb' (binary)")
    text = {} if "b" in mode else {"encoding": "utf-8", "newline": ""}
    with _committing(path, keep_suffix=False, sync=False) as tmp, open(tmp, _MODES[mode], **text) as f:
        yield f
        f.flush()
        os.fsync(f.fileno())


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[Any]], Any], mode: str = "w") -> Path:
    """Call ``write(f)`` on a temporary file next to `path`, then move it onto `path`.

    `path` is then either the old file or the whole new one, never a part. See
    :func:`atomic_open` for `mode` and the errors raised.

    Returns
    -------
    pathlib.Path
        `path`.
    """
    with atomic_open(path, mode) as f:
        write(f)
    return Path(path)


def save_figure(fig: Any, path: str | os.PathLike[str], dpi: int = 120) -> Path:
    """Save a matplotlib figure as PNG atomically (``bbox_inches="tight"``); return `path`."""
    return atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=dpi, bbox_inches="tight"), "wb")


# ---------------------------------------------------------------------------- internals
#: Side files SQLite (hence GDAL's GeoPackage driver) may leave beside a database.
_SQLITE_SIDE_FILES = ("-journal", "-wal", "-shm")


@contextlib.contextmanager
def _committing(path: str | os.PathLike[str], *, keep_suffix: bool, sync: bool) -> Iterator[Path]:
    """Yield a temporary path; then fsync it (if `sync`), move it onto `path`, clean up."""
    path = Path(path)
    tmp = temporary_path(path, keep_suffix=keep_suffix)
    try:
        yield tmp
        if sync:
            _fsync_file(tmp)
        os.replace(tmp, path)
        _fsync_folder(path.parent)
    except OSError as err:
        if err.errno is None or (err.filename is not None and str(err.filename) != str(tmp)):
            raise
        raise OSError(err.errno, err.strerror, str(path)) from err  # same subclass, by errno
    finally:
        _remove(tmp, side_files=sync)


def _fsync_file(path: Path) -> None:
    """Flush the file at `path` to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_folder(folder: Path) -> None:
    """Flush a folder's entries to disk, so that a move into it survives a power cut (POSIX;
    best effort: some systems cannot open or sync a folder, and the move is done anyway)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove(tmp: Path, *, side_files: bool) -> None:
    """Remove the temporary file if it is still there (and SQLite's side files of it)."""
    names = [tmp.name, *(tmp.name + s for s in _SQLITE_SIDE_FILES)] if side_files else [tmp.name]
    for name in names:
        try:
            (tmp.parent / name).unlink(missing_ok=True)
        except OSError:  # e.g. a folder that became read-only: a resume removes the .tmp
            pass
