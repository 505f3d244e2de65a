"""Results folders: one layout, written atomically, checked before a resume.

Every long run (:func:`~cellopt.study.sweep.run_sweep`,
:func:`~cellopt.study.capacity.capacity_sweep`) writes into a folder holding

    scenario.toml    the scenario file's exact text
    meta.json        what the folder holds (one schema, see :meth:`ResultsFolder.write_meta`)
    <task files>     one or more files per task, each written whole by
                     :func:`~cellopt.study.atomic.atomic_write`

A task is finished when its last file (its *marker*) exists and is sound. On resume,
:meth:`ResultsFolder.open` refuses a folder written for another scenario or other
settings, and a folder with results but no ``meta.json`` or ``scenario.toml`` unless
``force``; the caller then checks every finished task and recomputes damaged ones.

A run owns its folder while it runs: :class:`FolderLock` keeps ``.cellopt.lock`` there
(which process holds it, on which host, since when, for which command). A second run into
the folder is refused with :class:`FolderInUseError`; the lock of a run that is no longer
running (killed, or its machine restarted) is taken over with a warning, so a resume after
``kill -9`` just works. ``cellopt run`` and ``cellopt experiment`` take it, and so do
:func:`~cellopt.study.sweep.run_sweep` and :func:`~cellopt.study.capacity.capacity_sweep`
(through :meth:`ResultsFolder.open`).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import datetime
import hashlib
import io
import itertools
import json
import math
import os
import re
import secrets
import shlex
import socket
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from cellopt._version import __version__
from cellopt.errors import StoreError, ValidationError
from cellopt.study import atomic

__all__ = [
    "LOCK_NAME",
    "RUN_RECORD",
    "TASK_BYTES",
    "Damaged",
    "FolderInUseError",
    "FolderLock",
    "ResultsFolder",
    "SettingsMismatch",
    "as_stored",
    "cached_frame",
    "check_owner",
    "default_folder",
    "grid_ids",
    "grid_points",
    "grid_text",
    "overrides",
    "read_whole_csv",
    "run_record",
    "same_value",
    "setting_text",
    "toml_value",
]

#: Rough memory of one queued task (its arguments and seed) [bytes], to refuse absurd runs.
TASK_BYTES = 4096


class Damaged(Exception):
    """A stored file that is not what a finished task writes (the reason is the message)."""


# ---------------------------------------------------------------------------- the lock
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


class SettingsMismatch(StoreError):
    """A folder being resumed holds a run of another kind, scenario text or settings.

    The message names each difference, what is stored against what was asked.

    Attributes
    ----------
    folder : pathlib.Path
    kind : str
        The kind of run asked for (``"sweep"``, ``"capacity"``).
    differ : dict of str to (stored, requested)
        Each difference: ``"kind"``, ``"scenario text"`` or a setting (``"grid"``,
        ``"seed base"``, ...), with the stored and the requested value.
    stored : dict
        The folder's ``meta.json`` (empty if it has none).
    what : str
        The message without its fix (for callers that know a better one).
    """

    def __init__(self, folder: Path, kind: str, differ: Mapping[str, tuple[Any, Any]],
                 stored: Mapping[str, Any]) -> None:
        self.folder, self.kind, self.differ, self.stored = folder, kind, dict(differ), dict(stored)
        shown_ = "; ".join(f"{key}: stored {setting_text(key, a)}, requested {setting_text(key, b)}"
                           for key, (a, b) in self.differ.items())
        self.what = (f"{folder} holds a {kind} of another {', '.join(self.differ)} (other settings "
                     f"than this run's: {shown_})")
        super().__init__(f"{self.what}; fix: give another out_dir (--out), or run the scenario "
                         "and settings it was written for")


def toml_value(value: Any) -> str:
    """`value` (a TOML scalar as read back from JSON) written as TOML, e.g. for ``--grid``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)  # a TOML basic string


def grid_text(grid: Mapping[str, Sequence[Any]] | None) -> list[str]:
    """A grid as the ``SECTION.KEY=V1,V2`` items of ``cellopt experiment --grid``."""
    return [f"{key}={','.join(toml_value(v) for v in values)}" for key, values in (grid or {}).items()]


def setting_text(key: str, value: Any) -> str:
    """A stored or requested setting in a message (a grid as its ``--grid`` items)."""
    if key == "grid" and isinstance(value, Mapping):
        return " ".join(f"--grid {item}" for item in grid_text(value)) if value else "no grid"
    return str(value) if key == "scenario text" else repr(value)


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



# ---------------------------------------------------------------------------- owners
#: The record a ``cellopt run`` folder keeps of the run that wrote it (:func:`run_record`).
RUN_RECORD = "run.json"
#: The files whose presence says a folder holds a ``cellopt run``'s results.
_RUN_TABLES = ("method_summary.csv", "user_rates.csv")


def default_folder(name: str, stem: str = "scenario") -> Path:
    """The default results folder of a scenario: ``results/<name>``.

    What ``cellopt run`` and ``cellopt experiment`` write to without ``--out``, so that
    each scenario keeps its own results. Characters other than letters, digits, ``.``,
    ``-`` and ``_`` become ``_`` (a name never points outside ``results/``).

    Parameters
    ----------
    name : str
        The scenario's name (its ``name`` key, else its file's stem).
    stem : str
        Used when nothing is left of `name` (e.g. ``".."``).
    """
    safe = re.sub(r"[^\w.-]+", "_", name).strip("._") or stem
    return Path("results") / safe


def run_record(scenario_name: str, scenario_path: str | Path, **extra: Any) -> dict[str, Any]:
    """What a ``cellopt run`` folder records in :data:`RUN_RECORD` about the run that wrote it.

    ``kind`` ("run"), ``scenario`` (the name), ``scenario_path`` (the file, resolved),
    ``cellopt_version``, ``written`` (UTC) and the `extra` keys (the seed and methods).
    """
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    return {"kind": "run", "scenario": scenario_name,
            "scenario_path": str(Path(scenario_path).resolve()), "cellopt_version": __version__,
            "written": now, **as_stored(extra)}


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object from `path`, empty if it cannot be read as one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _owners(folder: Path) -> list[tuple[str | None, str]]:
    """Whose results `folder` holds: (the scenario file, or None where no record says it;
    the results and their record in words), for a run's and for a sweep's."""
    owners: list[tuple[str | None, str]] = []
    record, meta = folder / RUN_RECORD, folder / "meta.json"
    if record.is_file():
        data = _read_json(record)
        path = data.get("scenario_path")
        owners.append((path, f"the `cellopt run` results of scenario {data.get('scenario')!r} "
                             f"({path}, written {data.get('written', '?')}; {record})")
                      if isinstance(path, str) else
                      (None, f"the results of a `cellopt run` ({record} cannot be read)"))
    elif all((folder / name).is_file() for name in _RUN_TABLES):
        owners.append((None, f"the results of a `cellopt run` that did not record its scenario "
                             f"(no {RUN_RECORD}: an earlier cellopt)"))
    if meta.is_file():
        data = _read_json(meta)
        path = data.get("scenario")
        owners.append((path, f"a {data.get('kind', 'sweep')} of the scenario {path} ({meta})")
                      if isinstance(path, str) else
                      (None, f"the results of a sweep ({meta} cannot be read)"))
    return owners


def check_owner(folder: str | Path, scenario_name: str, scenario_path: str | Path, *,
                force: bool = False) -> None:
    """Refuse to write a scenario's results into a folder holding another scenario's.

    A folder's scenario is the one its :data:`RUN_RECORD` (a ``cellopt run``) or its
    ``meta.json`` (a sweep or capacity study) names, by its file; results the folder does
    not say the scenario of (a garbled record, or a run of a cellopt that kept none) count
    as another scenario's.

    Parameters
    ----------
    folder : path
        The results folder (missing or empty: nothing to check).
    scenario_name : str
        The scenario about to write there (named in the message).
    scenario_path : path
        Its file.
    force : bool
        Write there anyway (``--force``): the run's files replace the others' files of
        the same name.

    Raises
    ------
    StoreError
        For a folder holding another scenario's results, without `force`.
    """
    folder = Path(folder)
    if force or not folder.is_dir():
        return
    mine = Path(scenario_path).resolve()
    other = [what for path, what in _owners(folder) if path is None or Path(path) != mine]
    if other:
        raise StoreError(f"{folder} holds {' and '.join(other)}; this run is scenario "
                         f"{scenario_name!r} ({mine}), whose files would replace or mix with "
                         "them; fix: write to another folder (--out; without it each scenario "
                         "writes to results/<scenario name>), or pass --force (force=True) to "
                         "write there anyway")


# ---------------------------------------------------------------------------- files
def read_whole_csv(path: Path) -> pd.DataFrame:
    """A CSV written whole by :func:`atomic_write`; raise :class:`Damaged` for a torn or garbled one."""
    raw = Path(path).read_bytes()
    if not raw.endswith(b"\n"):  # every table is written with a final newline
        raise Damaged("its last line is cut (the file does not end with a newline)")
    try:
        return pd.read_csv(io.BytesIO(raw))
    except ValueError as err:  # ParserError, EmptyDataError and UnicodeDecodeError are ValueErrors
        raise Damaged(f"it does not parse as CSV ({err})") from None


def cached_frame(path: str | Path, resume: bool, run: Callable[[], Any]) -> pd.DataFrame:
    """The table of one unit of work: read back from `path` when resuming and it exists,
    else ``pd.DataFrame(run())``, written to `path` at once (atomically) and returned.

    A file that exists but is torn or unreadable is computed again, with a warning.
    """
    path = Path(path)
    if resume and path.exists():
        try:
            return read_whole_csv(path)
        except Damaged as err:
            warnings.warn(f"{path} is damaged: {err}; computing it again", stacklevel=2)
    frame = pd.DataFrame(run())
    atomic.atomic_write(path, lambda f: frame.to_csv(f, index=False))
    return frame


def same_value(stored: Any, wanted: Any) -> bool:
    """A value read back from CSV equals the one asked for (numbers to 1e-12)."""
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
        try:
            return math.isclose(float(stored), float(wanted), rel_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return str(stored) == str(wanted)


# ---------------------------------------------------------------------------- grids
def grid_points(grid: Mapping[str, Sequence[Any]] | None) -> list[dict[str, Any]]:
    """The Cartesian product of `grid` ({"section.key": [values]}), keys in order; [{}] if None.

    Raises
    ------
    ValidationError
        For a key that is not ``section.key`` or values that are not a non-empty list.
    """
    if not grid:
        return [{}]
    for key, values in grid.items():
        if not isinstance(key, str) or key.count(".") != 1 or not all(key.split(".")):
            raise ValidationError(f"grid key {key!r}; fix: name it 'section.key', e.g. 'picos.per_sector'")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
            raise ValidationError(f"grid[{key!r}]={values!r}; fix: give a non-empty list of values")
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*grid.values())]


def grid_ids(points: Sequence[Mapping[str, Any]]) -> list[str]:
    """The names of grid points in files: ``g000``, ``g001``, … in product order."""
    return [f"g{i:03d}" for i in range(len(points))]


def overrides(point: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """{"picos.per_sector": 2} → {"picos": {"per_sector": 2}}, for ``Scenario.with_overrides``."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in point.items():
        section, name = key.split(".")
        out.setdefault(section, {})[name] = value
    return out


# ---------------------------------------------------------------------------- the folder
class ResultsFolder:
    """The results folder of one long run of `kind` (``"sweep"`` or ``"capacity"``).

    Parameters
    ----------
    path : path
        Created by :meth:`open` if missing.
    kind : str
        What writes it; ``meta.json`` records it, and a folder of another kind is refused.

    Raises
    ------
    ValidationError
        If `path` is an existing file.
    """

    def __init__(self, path: str | Path, kind: str) -> None:
        self.path = Path(path)
        self.kind = kind
        if self.path.exists() and not self.path.is_dir():
            raise ValidationError(f"the results folder {self.path} is an existing file; fix: give a "
                                  "folder (it is created if missing)")
        self._lock: FolderLock | None = None

    def __enter__(self) -> ResultsFolder:
        """Take the folder's lock for the block (see :class:`FolderLock`)."""
        self.lock()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lock(self) -> FolderLock:
        """Take the folder's lock, if this object does not hold it yet; return it.

        It is held until :meth:`close`, the end of a ``with`` block, or else until this
        object is garbage-collected or the interpreter exits.

        Raises
        ------
        FolderInUseError
            If another running process holds it.
        """
        if self._lock is None or not self._lock.held:
            self._lock = FolderLock(self.path).acquire()
            weakref.finalize(self, self._lock.release)
        return self._lock

    def close(self) -> None:
        """Release the folder's lock (if this object holds it)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    @property
    def meta_path(self) -> Path:
        return self.path / "meta.json"

    @property
    def scenario_path(self) -> Path:
        return self.path / "scenario.toml"

    def read_meta(self) -> dict[str, Any]:
        """``meta.json``; :class:`~cellopt.errors.StoreError` if it is missing or unreadable."""
        path = self.meta_path
        if not path.is_file():
            raise StoreError(f"{path} is missing, so {self.path} is not a results folder of cellopt, "
                             "or it was damaged; fix: give a folder written by `cellopt experiment` "
                             "(run_sweep) or capacity_sweep")
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as err:  # JSONDecodeError and UnicodeDecodeError
            raise StoreError(f"{path} cannot be read ({err}); fix: run again into a new folder, or "
                             "restore the file") from None
        if not isinstance(meta, dict):
            raise StoreError(f"{path} does not hold a JSON object; fix: restore the file")
        return meta

    def open(self, scenario_file: str | Path, settings: Mapping[str, Any], *, n_results: int,
             resume: bool, force: bool, subfolders: Sequence[str]) -> dict[str, Any]:
        """Check the folder for this run, prepare it and copy the scenario's text into it.

        Parameters
        ----------
        scenario_file : path
            The scenario's TOML file; its text is copied to ``scenario.toml``.
        settings : mapping
            What must not change between a run and its resume (JSON-serialisable).
        n_results : int
            Finished tasks already in the folder.
        resume, force : bool
            See :func:`~cellopt.study.sweep.run_sweep`.
        subfolders : sequence of str
            Created, and cleared of the temporary files of a killed run.

        Returns
        -------
        dict
            The stored ``meta.json`` being resumed (empty when there is none).

        Raises
        ------
        FolderInUseError
            If another running process holds the folder's lock (:meth:`lock`, taken here
            unless this object holds it already; released again if the folder is refused).
        StoreError
            Results and no `resume`; on resume, ``meta.json`` or ``scenario.toml`` missing
            or unreadable beside results (unless `force`), or another kind, scenario text or
            settings (always).
        """
        taken = self._lock is None or not self._lock.held
        self.lock()
        try:
            return self._open(scenario_file, settings, n_results=n_results, resume=resume,
                              force=force, subfolders=subfolders)
        except BaseException:
            if taken:
                self.close()
            raise

    def _open(self, scenario_file: str | Path, settings: Mapping[str, Any], *, n_results: int,
              resume: bool, force: bool, subfolders: Sequence[str]) -> dict[str, Any]:
        """:meth:`open`, with the lock held."""
        if n_results and not resume:
            raise StoreError(f"{self.path} already holds {n_results} results; fix: pass resume=True "
                             "(--resume) to continue that run, or give another out_dir (--out)")
        text = Path(scenario_file).read_text(encoding="utf-8")
        self._scenario = (str(Path(scenario_file).resolve()),
                          hashlib.sha256(text.encode("utf-8")).hexdigest())
        self._settings = as_stored(settings)
        self._old = (self._check_resumable(text, self._scenario[1], self._settings, n_results, force)
                     if resume else {})
        for sub in subfolders:
            folder = self.path / sub
            folder.mkdir(parents=True, exist_ok=True)
            # Leftovers of a killed run (the lock says no other run writes here now).
            for tmp in {*atomic.leftover_temporaries(folder), *folder.glob(".*.tmp")}:
                tmp.unlink(missing_ok=True)
        atomic.atomic_write(self.scenario_path, lambda f: f.write(text))
        return self._old

    def write_meta(self, **extra: Any) -> dict[str, Any]:
        """Write ``meta.json`` for the run :meth:`open` prepared, and return it.

        It holds ``kind``, ``cellopt_version``, ``scenario`` (the file's path),
        ``scenario_sha256`` (of its text: a foreign scenario is refused even if
        ``scenario.toml`` is lost), ``settings`` (compared exactly on resume), ``started``,
        ``resumed`` (times, UTC) and the run's `extra` keys.
        """
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        old = self._old
        meta = {"kind": self.kind, "cellopt_version": __version__,
                "scenario": self._scenario[0], "scenario_sha256": self._scenario[1],
                "settings": self._settings, "started": old.get("started", now),
                "resumed": [*old.get("resumed", []), now] if old else [], **as_stored(extra)}
        atomic.atomic_write(self.meta_path, lambda f: json.dump(meta, f, indent=2))
        return meta

    def _check_resumable(self, text: str, sha: str, settings: Mapping[str, Any], n_results: int,
                         force: bool) -> dict[str, Any]:
        """The stored meta of a folder being resumed, after checking it is this run's."""
        old: dict[str, Any] = {}
        if self.meta_path.is_file():
            try:
                old = self.read_meta()
            except StoreError as err:
                if n_results and not force:
                    raise StoreError(f"{err}; or, if the {n_results} finished result(s) in "
                                     f"{self.path} are results of this very run, pass force=True "
                                     "(--force) to keep them") from None
        missing = [p.name for p in (self.meta_path, self.scenario_path) if not p.is_file()]
        if missing and n_results and not force:
            raise StoreError(
                f"{self.path} holds {n_results} finished result(s) but no "
                f"{' and no '.join(missing)}, so cellopt cannot tell which scenario and settings "
                "they belong to; fix: give another out_dir (--out), or, if they are results of "
                "this very run, pass force=True (--force) to keep them")
        differ: dict[str, tuple[Any, Any]] = {}
        if old and old.get("kind", self.kind) != self.kind:
            differ["kind"] = (old["kind"], self.kind)
        if (self.scenario_path.is_file() and self.scenario_path.read_text(encoding="utf-8") != text) \
                or old.get("scenario_sha256", sha) != sha:
            differ["scenario text"] = (f"{self.scenario_path} (from {old.get('scenario', '?')})",
                                       self._scenario[0])
        stored = old.get("settings", {k: old.get(k) for k in settings}) if old else settings
        differ.update({key.replace("_", " "): (stored.get(key), settings[key]) for key in settings
                       if stored.get(key) != settings[key]})
        if differ:
            raise SettingsMismatch(self.path, self.kind, differ, old)
        return old


def as_stored(value: Any) -> Any:
    """`value` as it reads back from JSON, to compare with what is stored."""
    return json.loads(json.dumps(value, default=str))
