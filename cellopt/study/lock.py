"""The lock of a results folder: one run writes into a folder at a time.

A run owns its folder while it runs: :class:`FolderLock` keeps ``.cellopt.lock`` there
(which process holds it, on which host, since when, for which command). A second run into
the folder is refused with :class:`FolderInUseError`; the lock of a run that is no longer
running (killed, or its machine restarted) is taken over with a warning, so a resume after
``kill -9`` just works. ``cellopt run`` and ``cellopt experiment`` take it, and so do
:func:`~cellopt.study.sweep.run_sweep` and :func:`~cellopt.study.capacity.capacity_sweep`
(through :meth:`ResultsFolder.open <cellopt.study.store.ResultsFolder.open>`).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import datetime
import json
import os
import secrets
import shlex
import socket
import sys
import threading
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cellopt.errors import StoreError, ValidationError

__all__ = ["LOCK_GRACE_S", "LOCK_NAME", "FolderInUseError", "FolderLock"]

#: The lock file a run keeps in the folder it writes.
LOCK_NAME = ".cellopt.lock"
#: An unreadable lock younger than this [s] belongs to a run that is writing it; an older one
#: was left by a run that stopped while taking it, and is taken over.
LOCK_GRACE_S = 60.0
#: Attempts to take a lock that other runs keep taking over at the same moment.
_LOCK_ATTEMPTS = 5
_HOST = socket.gethostname()


class FolderInUseError(StoreError):
    """Another run holds the lock of the folder (see :class:`FolderLock`).

    Attributes
    ----------
    folder, lock : pathlib.Path
        The folder and its lock file.
    holder : dict
        What the lock file says (``pid``, ``host``, ``started``, ``command``); empty when
        it cannot be read.
    """

    def __init__(self, folder: Path, lock: Path, holder: Mapping[str, Any] | None) -> None:
        self.folder, self.lock, self.holder = folder, lock, dict(holder or {})
        if holder:
            who = f"another cellopt run ({_describe(holder)})"
            if holder.get("host") != _HOST:
                who += " on another host, which cellopt cannot check from here"
        else:
            who = f"another cellopt run that is just starting (its lock {lock} is not written yet)"
        super().__init__(f"{folder} is in use by {who}; fix: wait for that run to finish, or "
                         f"write to another folder (--out), or, if that run is no longer running, "
                         f"delete {lock}")


@dataclasses.dataclass
class _Hold:
    """A lock this process holds: its token and how many :class:`FolderLock` hold it."""

    token: str
    count: int


#: The locks this process holds, by lock file; a lock is taken again by the same process
#: (e.g. ``cellopt experiment`` around :func:`~cellopt.study.sweep.run_sweep`) by counting.
_HELD: dict[Path, _Hold] = {}
_HELD_GUARD = threading.Lock()
if hasattr(os, "register_at_fork"):  # a forked child holds none of its parent's locks
    os.register_at_fork(after_in_child=_HELD.clear)


@atexit.register
def _release_at_exit() -> None:
    """Remove the lock files this process still holds when it exits (normally, or by an
    exception or ``sys.exit``; a killed process leaves a stale lock, taken over later)."""
    with _HELD_GUARD:
        for key, hold in list(_HELD.items()):
            if (_read_lock(key)[1] or {}).get("token") == hold.token:
                with contextlib.suppress(OSError):
                    key.unlink()
        _HELD.clear()


class FolderLock:
    """The lock of a results folder: ``<folder>/.cellopt.lock`` while a run writes there.

    :meth:`acquire` creates the lock file atomically (``O_CREAT | O_EXCL``) holding this
    process's id, its host, the start time (UTC) and the command line; :meth:`release`
    removes it. As a context manager the lock is held for the block, and released on an
    exception or Ctrl+C too; a lock not released is removed when the process exits (a
    killed process leaves it behind). A lock file whose process is not running any more
    on this host (or whose pid is now another process's) is stale: it is taken over with
    a warning. The lock is per process: taking it again in the process that holds it is
    allowed (and counted, so that the file goes with the last release).

    Parameters
    ----------
    folder : str or path-like
        Created if missing (and removed again at release if it is still empty then).
    command : str, optional
        What to record as the run's command (default: this process's command line).

    Raises
    ------
    ValidationError
        If `folder` is an existing file.
    """

    def __init__(self, folder: str | os.PathLike[str], command: str | None = None) -> None:
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise ValidationError(f"the results folder {self.folder} is an existing file; fix: give "
                                  "a folder (it is created if missing)")
        self.path = self.folder / LOCK_NAME
        self.command = _command_line() if command is None else command
        self._token: str | None = None
        self._key: Path | None = None
        self._pid = os.getpid()
        self._created: list[Path] = []

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._token is not None

    def acquire(self) -> FolderLock:
        """Take the lock (no-op if this object holds it); return self.

        Raises
        ------
        FolderInUseError
            If another running process holds it.
        OSError
            If the folder cannot be created or the lock file not written.
        """
        if self._token is not None:
            return self
        self._created = [p for p in (self.folder, *self.folder.parents) if not p.exists()]
        self.folder.mkdir(parents=True, exist_ok=True)
        key = self.path.resolve()
        try:
            with _HELD_GUARD:
                hold = _HELD.get(key)
                if hold is not None and (_read_lock(key)[1] or {}).get("token") == hold.token:
                    hold.count += 1
                else:  # not held, or its file was deleted or replaced meanwhile: take it anew
                    hold = _HELD[key] = _Hold(self._take(key), 1)
        except BaseException:
            self._remove_created()
            raise
        self._token, self._key, self._pid = hold.token, key, os.getpid()
        return self

    def release(self) -> None:
        """Give the lock up; the last holder in this process removes the lock file (if it is
        still this process's) and the folders :meth:`acquire` created, if they are empty."""
        token, key = self._token, self._key
        if token is None or key is None:
            return
        self._token = None
        if os.getpid() != self._pid:  # a forked child: the parent holds the lock
            return
        with _HELD_GUARD:
            hold = _HELD.get(key)
            if hold is None or hold.token != token:
                return
            hold.count -= 1
            if hold.count:
                return
            del _HELD[key]
            if (_read_lock(key)[1] or {}).get("token") == token:
                with contextlib.suppress(FileNotFoundError):
                    key.unlink()
        self._remove_created()

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _take(self, path: Path) -> str:
        """Create the lock file at `path`, taking a stale one over; return its token."""
        holder: dict[str, Any] | None = None
        for _ in range(_LOCK_ATTEMPTS):
            token = secrets.token_hex(8)
            record = {"pid": os.getpid(), "host": _HOST,
                      "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                      "command": self.command, "process_start": _process(os.getpid())[1],
                      "token": token}
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                raw, holder = _read_lock(path)
                if raw is None:  # removed meanwhile: try again
                    continue
                reason = _stale(path, holder)
                if reason is None:
                    raise FolderInUseError(self.folder, path, holder) from None
                if _discard_stale(path, raw):
                    what = f"; that run: {_describe(holder)}" if holder else ""
                    warnings.warn(f"{self.folder} was locked by a run that is not running any more "
                                  f"({reason}{what}); this run takes the folder over", stacklevel=2)
                continue
            try:
                data = (json.dumps(record, indent=2) + "\n").encode("utf-8")
                while data:
                    data = data[os.write(fd, data):]
                os.fsync(fd)
            except BaseException:
                os.close(fd)
                path.unlink(missing_ok=True)
                raise
            os.close(fd)
            return token
        raise FolderInUseError(self.folder, path, holder)

    def _remove_created(self) -> None:
        """Remove the folders :meth:`acquire` created, innermost first, while they are empty."""
        for folder in self._created:
            try:
                folder.rmdir()
            except OSError:  # not empty (the run wrote there), or not ours to remove
                break
        self._created = []


def _command_line() -> str:
    """This process's command line, as one string (the program by its name)."""
    argv = list(sys.argv) or ["python"]
    if argv[0] and argv[0] not in ("-c", "-m"):
        argv[0] = Path(argv[0]).name
    return shlex.join(argv)


def _describe(holder: Mapping[str, Any]) -> str:
    """Who holds a lock, in a few words: pid, host, start time and command."""
    return (f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, started "
            f"{holder.get('started', '?')}: {holder.get('command', '?')}")


def _read_lock(path: Path) -> tuple[bytes | None, dict[str, Any] | None]:
    """The bytes of a lock file (None if there is none) and its record (None if unreadable)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    try:
        record = json.loads(raw.decode("utf-8"))
    except ValueError:  # empty (being written) or garbled
        return raw, None
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int) or record["pid"] <= 0:
        return raw, None
    return raw, record


def _stale(path: Path, holder: Mapping[str, Any] | None) -> str | None:
    """Why the lock at `path` is stale, or None if its run may still be running."""
    if holder is None:
        try:
            age = time.time() - path.stat().st_mtime
        except FileNotFoundError:
            return "it is gone"
        if age <= LOCK_GRACE_S:
            return None
        return f"its lock file is unreadable and {age:.0f} s old"
    if holder.get("host") != _HOST:
        return None
    pid = holder["pid"]
    if pid == os.getpid():  # this process holds none but the ones in _HELD
        return f"pid {pid} is this process, which did not take the lock (an earlier process's pid)"
    alive, started = _process(pid)
    if not alive:
        return f"pid {pid} is not running"
    recorded = holder.get("process_start")
    if recorded is not None and started is not None and recorded != started:
        return f"pid {pid} is now another process"
    return None


def _discard_stale(path: Path, raw: bytes) -> bool:
    """Remove the stale lock at `path` whose bytes were `raw`; False if it changed meanwhile.

    The lock is moved aside first, and checked there: if another run took the folder over
    between reading and moving, its fresh lock is put back.
    """
    aside = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(6)}.stale")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return False
    try:
        if aside.read_bytes() == raw:
            return True
        with contextlib.suppress(OSError):
            os.link(aside, path)
        return False
    finally:
        aside.unlink(missing_ok=True)


def _process(pid: int) -> tuple[bool, str | None]:
    """Whether process `pid` runs on this host, and its start time where the system tells it
    (Linux: clock ticks since boot; to tell a reused pid from the process that held a lock)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").is_file():
        try:
            fields = stat.read_text(encoding="ascii", errors="replace").rpartition(")")[2].split()
        except (FileNotFoundError, ProcessLookupError):
            return False, None
        except OSError:
            return True, None
        if fields and fields[0] in ("Z", "X"):  # exited, not yet reaped
            return False, None
        return True, fields[19] if len(fields) > 19 else None
    if os.name == "nt":
        return _windows_process_alive(pid), None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False, None
    except OSError:  # PermissionError: it runs, as another user
        return True, None
    return True, None


def _windows_process_alive(pid: int) -> bool:
    """Whether process `pid` runs (Windows, where ``os.kill(pid, 0)`` would end it)."""
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return ctypes.get_last_error() == 5  # ERROR_ACCESS_DENIED: it runs, as another user
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return True
        return code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)
