"""Atomic file writing: every file cellopt writes is either the old one or the whole new one.

A file is written to a temporary file in the target's folder, flushed to disk, then moved
onto the target with :func:`os.replace` (atomic on POSIX and Windows when both are on the
same file system, which a file in the same folder always is). The temporary name is hidden
and unique to the process and the call,

    .<name>.<pid>.<random>.tmp             (or .<stem>.<pid>.<random>.tmp<suffix>)

so two processes writing the same target at once never share a temporary file: each
replaces the target with a complete file of its own, and the last move wins. A failure or
an interruption (an exception, Ctrl+C, a full disk) removes the temporary file and leaves
the target as it was; a killed process leaves at most a hidden temporary file next to it
(:func:`leftover_temporaries` finds them), which the next run into the folder removes.

:func:`atomic_write` (a callback given an open file), :func:`atomic_open` (the open file as
a context manager) and :func:`atomic_path` (a temporary path, for writers that take a path,
such as GDAL) are the ways in for one file; :func:`save_figure` writes a matplotlib
figure. :func:`atomic_files` writes a set of files that replace their targets together,
only once every one of them is written whole.

Errors of the writers are raised naming the target: an ``OSError`` of the temporary file
keeps its errno (hence its subclass), and an error of a writer library that is not an
``OSError`` (GDAL through pyogrio or Fiona, SQLite, HDF5), or is one without an errno
(GDAL through rasterio: "Write failed. See previous exception for details"), becomes a
:class:`WriteError` whose message holds the library's messages and the cause.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "FULL_DISK_BYTES",
    "AtomicFiles",
    "WriteError",
    "atomic_files",
    "atomic_open",
    "atomic_path",
    "atomic_write",
    "leftover_temporaries",
    "png_writer",
    "save_figure",
    "temporary_path",
    "temporary_target",
]

_MODES = {"w": "x", "wb": "xb"}


class WriteError(OSError):
    """A writer library (GDAL, SQLite, HDF5) failed to write a file.

    An ``OSError`` like any other failed write: ``errno`` is read from the library's
    messages (its error's and those of the errors it was raised from) where they name the
    cause (``ENOSPC`` for a full disk, ``EFBIG``, ``EROFS``, ``EACCES``, ``EDQUOT``;
    ``ENOENT`` and ``ENOTDIR`` for a folder that is missing or is a file); where
    they name none, from the disk (less than :data:`FULL_DISK_BYTES` free: ``ENOSPC``; a
    temporary file as large as the file-size limit: ``EFBIG``), else ``EIO``. ``strerror``
    holds the cause and the library's messages, ``filename`` the target file.
    """


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


#: A name made by :func:`temporary_path`, or a side file SQLite leaves beside one.
_TEMPORARY = re.compile(r"^\.(?P<base>.+)\.(?P<pid>\d+)\.[0-9a-f]{12}\.tmp(?P<suffix>\.[^.]+?)?"
                        r"(?:-journal|-wal|-shm)?$")


def temporary_target(name: str) -> tuple[str, int] | None:
    """The target's name and the writing process's id of a temporary file name, or None.

    Parameters
    ----------
    name : str
        A file name (no folder), e.g. ``.results.4711.0123456789ab.tmp.gpkg``.

    Returns
    -------
    tuple of (str, int) or None
        ``("results.gpkg", 4711)`` for a name :func:`temporary_path` makes (or a side file
        of SQLite beside one); None for any other name.
    """
    match = _TEMPORARY.match(name)
    if match is None:
        return None
    return match["base"] + (match["suffix"] or ""), int(match["pid"])


def leftover_temporaries(folder: str | os.PathLike[str], targets: Iterable[str] | None = None
                         ) -> list[Path]:
    """Temporary files of the atomic writer that other processes left in `folder`.

    A process killed while writing leaves its temporary file; the caller, which owns the
    folder (it holds its lock, :class:`~cellopt.study.lock.FolderLock`), may remove them.
    Temporary files of this process are not listed.

    Parameters
    ----------
    folder : str or path-like
        Searched without its subfolders; a missing folder has none.
    targets : iterable of str, optional
        Only those of these target names (default: every target).

    Returns
    -------
    list of pathlib.Path
        Sorted by name.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    wanted = None if targets is None else set(targets)
    found = []
    for path in folder.iterdir():
        parsed = temporary_target(path.name) if path.name.startswith(".") else None
        if parsed is None or parsed[1] == os.getpid():
            continue
        if wanted is None or parsed[0] in wanted:
            found.append(path)
    return sorted(found)


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
    WriteError
        For an error of a writer library in the block (see :class:`WriteError`).
    """
    path = Path(path)
    with _temporary(path, keep_suffix=keep_suffix) as tmp:
        yield tmp
        _fsync_file(tmp)
        _move(tmp, path)


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
    path = Path(path)
    with _temporary(path, keep_suffix=False) as tmp:
        with _open_temporary(tmp, mode) as f:
            yield f
        _move(tmp, path)


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


def png_writer(fig: Any, dpi: int = 120) -> Callable[[IO[bytes]], Any]:
    """The callback that writes matplotlib figure `fig` as PNG to an open binary file.

    For :func:`atomic_write` and :meth:`AtomicFiles.write` (mode ``"wb"``); the figure is
    cropped to its content (``bbox_inches="tight"``).
    """
    return lambda f: fig.savefig(f, format="png", dpi=dpi, bbox_inches="tight")


def save_figure(fig: Any, path: str | os.PathLike[str], dpi: int = 120) -> Path:
    """Save a matplotlib figure as PNG atomically (``bbox_inches="tight"``); return `path`."""
    return atomic_write(path, png_writer(fig, dpi), "wb")


class AtomicFiles:
    """Files written now to temporary names, and moved onto their targets together later.

    Made by :func:`atomic_files`. Each file is written whole (and flushed to disk) to a
    hidden temporary file beside its target; :meth:`commit` moves them all in the order
    they were written, :meth:`discard` removes those not moved. A failure while writing
    any of them thus leaves every target as it was.
    """

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []  # (temporary, target), in order

    @property
    def targets(self) -> list[Path]:
        """The targets written so far, in order."""
        return [target for _, target in self._staged]

    def write(self, path: str | os.PathLike[str], write: Callable[[IO[Any]], Any],
              mode: str = "w") -> Path:
        """Call ``write(f)`` on a temporary file for `path` (see :func:`atomic_write`).

        Returns
        -------
        pathlib.Path
            `path` (not yet replaced: :meth:`commit` does).
        """
        path = Path(path)
        with _temporary(path, keep_suffix=False) as tmp:
            with _open_temporary(tmp, mode) as f:
                write(f)
        self._stage(tmp, path)
        return path

    @contextlib.contextmanager
    def path(self, path: str | os.PathLike[str], *, keep_suffix: bool = False) -> Iterator[Path]:
        """A temporary path for `path`, for writers that take a path (see :func:`atomic_path`)."""
        path = Path(path)
        with _temporary(path, keep_suffix=keep_suffix) as tmp:
            yield tmp
            _fsync_file(tmp)
        self._stage(tmp, path)

    def temporary(self, path: str | os.PathLike[str]) -> Path:
        """The temporary file written for `path` and not moved yet (to read it back).

        Raises
        ------
        KeyError
            If no file of this set is written for `path`.
        """
        path = Path(path)
        for tmp, target in self._staged:
            if target == path:
                return tmp
        raise KeyError(f"{path} is not written in this set")

    def commit(self) -> list[Path]:
        """Move every written file onto its target, in order; return the targets.

        Raises
        ------
        IsADirectoryError
            For a target that is a folder, before any file is moved: every target stays
            as it was.
        OSError
            From a move, naming its target; the files not yet moved are removed, those
            moved stay.
        """
        for _, target in self._staged:  # a folder cannot be replaced: check all before any move
            if target.is_dir() and not target.is_symlink():
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
        done = []
        with _interrupts_held():  # Ctrl+C waits for the last move: never a mix of two sets
            try:
                while self._staged:
                    tmp, target = self._staged[0]
                    with _naming_target(target, tmp):
                        os.replace(tmp, target)
                    self._staged.pop(0)
                    done.append(target)
            finally:
                for folder in {t.parent for t in done}:
                    _fsync_folder(folder)
        return done

    def discard(self) -> None:
        """Remove the temporary files not moved yet; their targets stay as they were."""
        while self._staged:
            tmp, _ = self._staged.pop()
            _remove(tmp)

    def _stage(self, tmp: Path, target: Path) -> None:
        for i, (old, seen) in enumerate(self._staged):
            if seen == target:  # written again: the newer file wins
                _remove(old)
                del self._staged[i]
                break
        self._staged.append((tmp, target))


@contextlib.contextmanager
def atomic_files() -> Iterator[AtomicFiles]:
    """A set of files that replace their targets together when the block ends without error.

    Every file is written whole to a temporary file first; only when the block ends
    without error are they moved onto their targets (in the order written), so a failure,
    Ctrl+C or a full disk while writing any of them leaves every target as it was. Ctrl+C
    during the moves waits for the last one (then raises KeyboardInterrupt): the targets
    are the old set or the new one, never a mix. While
    the block runs the disk holds the old files and the new ones.

    Yields
    ------
    AtomicFiles
        Write each file with :meth:`AtomicFiles.write` or :meth:`AtomicFiles.path`.

    Raises
    ------
    OSError
        As for :func:`atomic_path` and :meth:`AtomicFiles.commit`.
    """
    files = AtomicFiles()
    try:
        yield files
        files.commit()
    finally:
        files.discard()


# ---------------------------------------------------------------------------- internals
@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl+C (SIGINT) back while the block runs, and deliver it when the block ends
    without error (to the handler there was: Python's raises KeyboardInterrupt). Only in the
    main thread, where Python handles signals; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    held: list[tuple[int, Any]] = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held and callable(previous):
        previous(*held[0])
    elif held and previous == signal.SIG_DFL:
        raise KeyboardInterrupt


#: Side files SQLite (hence GDAL's GeoPackage driver) may leave beside a database.
_SQLITE_SIDE_FILES = ("-journal", "-wal", "-shm")
#: Writer libraries whose errors are not OSErrors, by top-level module: the name shown.
_WRITER_LIBRARIES = {"pyogrio": "GDAL", "fiona": "GDAL", "osgeo": "GDAL", "rasterio": "GDAL",
                     "sqlite3": "SQLite", "_sqlite3": "SQLite", "h5py": "HDF5", "tables": "HDF5"}
#: Words of a writer library's message that tell the cause, and its errno.
_ERRNO_HINTS = (
    (("no space left", "disk is full", "disk full"), errno.ENOSPC),
    (("file too large",), errno.EFBIG),
    (("quota",), errno.EDQUOT),
    (("read-only file system",), errno.EROFS),
    (("permission denied", "readonly database", "read-only database"), errno.EACCES),
    (("no such file or directory",), errno.ENOENT),
    (("not a directory",), errno.ENOTDIR),
)


@contextlib.contextmanager
def _temporary(path: Path, *, keep_suffix: bool) -> Iterator[Path]:
    """A temporary path for `path`: removed if the block fails, whose errors then name `path`.

    SQLite's side files of it are removed in either case; the file itself stays when the
    block succeeds (the block moves it, or stages it).
    """
    tmp = temporary_path(path, keep_suffix=keep_suffix)
    try:
        with _naming_target(path, tmp):
            yield tmp
    except BaseException:
        _remove(tmp)
        raise
    _remove(tmp, only_side_files=True)


@contextlib.contextmanager
def _open_temporary(tmp: Path, mode: str) -> Iterator[IO[Any]]:
    """`tmp` created and open in `mode` ("w" or "wb"); flushed to disk when the block ends."""
    if mode not in _MODES:
        raise ValueError(f"mode {mode!r}; fix: give 'w' (text) or 'wb' (binary)")
    text = {} if "b" in mode else {"encoding": "utf-8", "newline": ""}
    with open(tmp, _MODES[mode], **text) as f:
        yield f
        f.flush()
        os.fsync(f.fileno())


@contextlib.contextmanager
def _naming_target(path: Path, tmp: Path) -> Iterator[None]:
    """Raise the block's errors naming `path`: an OSError of `tmp` (or of no file) with the same
    errno, hence the same subclass; an error of a writer library as a :class:`WriteError`."""
    try:
        yield
    except OSError as err:
        if err.filename is not None and not str(err.filename).startswith(str(tmp)):
            raise  # about another file, which it names
        if err.errno is None:  # a writer library's own OSError (rasterio's), naming no cause
            mapped = _writer_error(err, path, tmp)
            if mapped is None:
                raise
            raise mapped from err
        raise (WriteError if isinstance(err, WriteError) else OSError)(
            err.errno, err.strerror, str(path)) from err
    except Exception as err:
        mapped = _writer_error(err, path, tmp)
        if mapped is None:
            raise
        raise mapped from err


def _writer_error(err: Exception, path: Path, tmp: Path) -> WriteError | None:
    """`err` of a writer library as a :class:`WriteError` naming `path`; None for other errors.

    The cause is read from the messages of `err` and of the errors it was raised from;
    where they name none (GDAL's "Write failed. See previous exception for details"), the
    disk of `tmp` is looked at: almost no free space is ``ENOSPC``, a temporary file as
    large as the process's file-size limit (``ulimit -f``) is ``EFBIG``.
    """
    library = _WRITER_LIBRARIES.get(type(err).__module__.partition(".")[0])
    if library is None:
        return None
    text = _chain_text(err)
    lower = text.lower()
    code = next((c for words, c in _ERRNO_HINTS if any(w in lower for w in words)), None)
    found = ""
    if code is None:
        code, found = _diagnosed(tmp)
    what = "could not write the file" if code == errno.EIO else os.strerror(code)
    return WriteError(code, f"{what}{found} ({library}: {text})", str(path))


#: Free space [bytes] under which a failed write is put down to a full disk.
FULL_DISK_BYTES = 1 << 20
#: Errors of the chain of a writer library's error that :func:`_chain_text` reads at most.
_CHAIN_DEPTH = 5
#: Words of a writer library's message that tell nothing (the errors chained to it do).
_NO_DETAIL = "See previous exception for details."


def _chain_text(err: BaseException) -> str:
    """The messages of `err` and of the errors it was raised from, one line, first to last:
    ``RasterioIOError: Write failed; CPLE_AppDefinedError: TIFFAppendToStrip: ...``."""
    parts: list[str] = []
    seen: BaseException | None = err
    while seen is not None and len(parts) < _CHAIN_DEPTH:
        message = " ".join(str(seen).replace(_NO_DETAIL, "").split()) or "no message"
        part = f"{type(seen).__name__}: {message}"
        if part not in parts:
            parts.append(part)
        seen = seen.__cause__ or seen.__context__
    return "; ".join(parts)


def _diagnosed(tmp: Path) -> tuple[int, str]:
    """The errno of a failed write whose messages name no cause, from the disk of `tmp`, and
    what was seen (``EIO`` and "" when nothing explains it)."""
    try:
        stat = os.statvfs(tmp.parent)
        free = stat.f_bavail * stat.f_frsize
    except (OSError, AttributeError):  # no statvfs (Windows), or the folder went away
        free = None
    if free is not None and free < FULL_DISK_BYTES:
        return errno.ENOSPC, f": {free:,} bytes free on its disk"
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        size = tmp.stat().st_size
    except (ImportError, OSError, ValueError):
        return errno.EIO, ""
    if limit != resource.RLIM_INFINITY and size >= limit:
        return errno.EFBIG, f": it reached the file-size limit of {limit:,} bytes"
    return errno.EIO, ""


def _move(tmp: Path, path: Path) -> None:
    """Move `tmp` onto `path` and flush the folder's entry."""
    os.replace(tmp, path)
    _fsync_folder(path.parent)


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


def _remove(tmp: Path, *, only_side_files: bool = False) -> None:
    """Remove the temporary file if it is still there, and SQLite's side files of it."""
    names = [tmp.name + s for s in _SQLITE_SIDE_FILES]
    if not only_side_files:
        names.insert(0, tmp.name)
    for name in names:
        try:
            (tmp.parent / name).unlink(missing_ok=True)
        except OSError:  # e.g. a folder that became read-only: the next run removes it
            pass
