"""Results folders: one layout, written atomically, checked before a resume.

Every long run (:func:`~cellopt.study.sweep.run_sweep`,
:func:`~cellopt.study.capacity.capacity_sweep`) writes into a folder holding

    scenario.toml    the scenario file's exact text
    meta.json        what the folder holds (one schema, see :meth:`ResultsFolder.write_meta`)
    <task files>     one or more files per task

each written whole (:func:`~cellopt.study.atomic.atomic_write`), and each an
:class:`~cellopt.study.outputs.OutputFile`: :data:`FOLDER_FILES`, and those of the folder's
kind (:data:`~cellopt.study.sweep.SWEEP_FILES`, :data:`~cellopt.study.capacity.CAPACITY_FILES`).

A task is finished when its last file (its *marker*) exists and is sound. On resume,
:meth:`ResultsFolder.open` refuses a folder written for another scenario or other
settings, and a folder with results but no ``meta.json`` or ``scenario.toml`` unless
``force``; the caller then checks every finished task and recomputes damaged ones.

A run owns its folder while it runs: it holds the folder's lock
(:class:`~cellopt.study.lock.FolderLock`; :meth:`ResultsFolder.open` takes it). A
``cellopt run`` folder records the run that wrote it (:data:`RUN_RECORD`), and a run into
a folder holding another scenario's results is refused (:func:`check_owner`).
"""

from __future__ import annotations

import datetime
import hashlib
import io
import itertools
import json
import math
import re
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from cellopt._version import __version__
from cellopt.errors import StoreError, ValidationError
from cellopt.study import atomic
from cellopt.study.lock import FolderLock
from cellopt.study.outputs import OutputFile, write_json

__all__ = [
    "FOLDER_FILES",
    "RUN_RECORD",
    "TASK_BYTES",
    "Damaged",
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


# ---------------------------------------------------------------------------- owners
#: The record a ``cellopt run`` folder keeps of the run that wrote it (:func:`run_record`).
RUN_RECORD = "run.json"
#: The files whose presence says a folder holds a ``cellopt run``'s results where it has no
#: :data:`RUN_RECORD` (written by an earlier cellopt): tables every cellopt has written, not
#: the run's current files (those are :data:`cellopt.study.run.RUN_OUTPUTS`).
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
SCENARIO_FILE = OutputFile("scenario.toml", lambda f, text: f.write(text),
                           what="the scenario file's exact text")
META_FILE = OutputFile("meta.json", write_json,
                       what="what the folder holds (ResultsFolder.write_meta)")
#: The files of every results folder, beside those of its kind
#: (:data:`~cellopt.study.sweep.SWEEP_FILES`, :data:`~cellopt.study.capacity.CAPACITY_FILES`).
FOLDER_FILES = (SCENARIO_FILE, META_FILE)


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
        return META_FILE.path(self.path)

    @property
    def scenario_path(self) -> Path:
        return SCENARIO_FILE.path(self.path)

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
        SCENARIO_FILE.write_to(self.path, text)
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
        META_FILE.write_to(self.path, meta)
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
