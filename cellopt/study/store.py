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
"""

from __future__ import annotations

import datetime
import hashlib
import io
import itertools
import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from cellopt import __version__
from cellopt._deprecated import moved_names
from cellopt.errors import StoreError, ValidationError
from cellopt.study import atomic

__all__ = [
    "TASK_BYTES",
    "Damaged",
    "ResultsFolder",
    "as_stored",
    "cached_frame",
    "grid_ids",
    "grid_points",
    "overrides",
    "read_whole_csv",
    "same_value",
]

#: The writers moved to :mod:`cellopt.study.atomic`, the one atomic writer.
__getattr__ = moved_names("cellopt.study.store", dict.fromkeys(["atomic_write", "save_figure"],
                                                                "cellopt.study.atomic"))

#: Rough memory of one queued task (its arguments and seed) [bytes], to refuse absurd runs.
TASK_BYTES = 4096


class Damaged(Exception):
    """A stored file that is not what a finished task writes (the reason is the message)."""


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
        StoreError
            Results and no `resume`; on resume, ``meta.json`` or ``scenario.toml`` missing
            or unreadable beside results (unless `force`), or another kind, scenario text or
            settings (always).
        """
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
            for tmp in folder.glob(".*.tmp"):  # leftovers of a killed run
                tmp.unlink()
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
        differ = []
        if old and old.get("kind", self.kind) != self.kind:
            differ.append(f"kind ({old['kind']})")
        if (self.scenario_path.is_file() and self.scenario_path.read_text(encoding="utf-8") != text) \
                or old.get("scenario_sha256", sha) != sha:
            differ.append("scenario text")
        stored = old.get("settings", {k: old.get(k) for k in settings}) if old else settings
        differ += [key.replace("_", " ") for key in settings if stored.get(key) != settings[key]]
        if differ:
            raise StoreError(f"{self.path} holds a {self.kind} of another {', '.join(differ)} (other "
                             "settings than this run's); fix: give another out_dir (--out), or run "
                             "the scenario and settings it was written for")
        return old


def as_stored(value: Any) -> Any:
    """`value` as it reads back from JSON, to compare with what is stored."""
    return json.loads(json.dumps(value, default=str))
