"""Sweeps: many drops × a parameter grid, each task written once, atomically, resumable.

Layout of a results folder ``out_dir``::

    scenario.toml                 the scenario file's exact text
    meta.json                     cellopt version, the text's SHA-256, seeds, grid points,
                                  drops, start time(s)
    drops/<grid-id>_drop<k>.npz   per-user rates of every method (written first)
    drops/<grid-id>_drop<k>.csv   per-method summary rows (written last: the task's marker)
    index.csv                     all summary rows; rebuilt from drops/*.csv by :func:`collect`

A task (one grid point × one drop) is finished iff its summary CSV exists (and is sound,
see below). Both files are written to a temporary file in ``drops/``, flushed, and moved
into place with :func:`os.replace`, so a killed run, a full disk or a crash never leaves a
half-written result; ``resume=True`` then runs the missing tasks. On resume every finished
task is checked first (both files parse, the CSV has the expected columns and one row per
method, the npz holds the expected arrays and agrees with the CSV): a damaged one is
recomputed, with a warning naming the file. A folder holding results whose ``meta.json``
or ``scenario.toml`` is missing is refused unless ``force=True``; one written for another
scenario, seed base or grid always is (:class:`~cellopt.errors.StoreError`).

Seeds: ``numpy.random.SeedSequence(seeds.base).spawn(drops)`` gives one child per drop; drop
``k`` is built with ``int(child_k.generate_state(1)[0])`` at every grid point, whatever the
worker count or the order of the tasks (and adding drops does not move the earlier ones).
"""

from __future__ import annotations

import concurrent.futures
import datetime
import hashlib
import io
import itertools
import json
import math
import multiprocessing
import os
import re
import signal
import struct
import time
import warnings
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cellopt.errors import CelloptError, StoreError, ValidationError, check_memory
from cellopt.network import check_count
from cellopt.scenario import Scenario, drop_seeds

__all__ = ["SUMMARY_COLUMNS", "cached_frame", "collect", "grid_points", "load_rates", "rate_summary",
           "run_sweep", "run_tasks"]

#: Columns of the per-method summary rows (after ``grid_id, drop, seed`` and the grid keys);
#: rates, ``n_users`` and ``n_outage`` count the users of the study area only.
SUMMARY_COLUMNS = [
    "method", "solver", "objective", "upper_bound", "gap", "rate_p5_mbps", "rate_p50_mbps",
    "rate_mean_mbps", "n_users", "n_outage", "status", "wall_s",
]
_RESULT = re.compile(r"^(?P<gid>g\d+)_drop(?P<drop>\d+)\.csv$")
#: Summary columns that are never empty in a result written whole.
_NOT_NULL = ["grid_id", "drop", "seed", "method", "solver", "n_users", "n_outage", "status", "wall_s"]
#: What np.load raises, depending on where a .npz is damaged.
_NPZ_ERRORS = (OSError, EOFError, KeyError, ValueError, NotImplementedError, zipfile.BadZipFile,
               zlib.error, struct.error)
#: Seconds to wait for a Dask scheduler before giving up.
_CONNECT_TIMEOUT_S = 5.0
#: Rough memory of one queued task (its arguments and seed) [bytes], to refuse absurd sweeps.
_TASK_BYTES = 4096


class _Damaged(Exception):
    """A stored result that is not what a finished task writes (the reason is the message)."""


# ---------------------------------------------------------------------------- helpers
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


def _overrides(point: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """{"picos.per_sector": 2} → {"picos": {"per_sector": 2}} for Scenario.with_overrides."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in point.items():
        section, name = key.split(".")
        out.setdefault(section, {})[name] = value
    return out


def _check_folder(path: Path) -> None:
    """Refuse a results folder that is an existing file, before any work is done."""
    if path.exists() and not path.is_dir():
        raise ValidationError(f"the results folder {path} is an existing file; fix: give a folder "
                              "(it is created if missing)")


def _atomic_write(path: Path, write: Any, mode: str = "w") -> None:
    """Call ``write(f)`` on a temporary file next to `path`, then move it onto `path`.

    The data is flushed to disk before the move, so `path` is either the old file or the
    whole new one, never a part: a crash, a kill or a full disk leaves at most a hidden
    ``.<name>.<pid>.tmp``, which is removed here (or by the next resume). An ``OSError``
    names `path` rather than the temporary file.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, mode, **({} if "b" in mode else {"encoding": "utf-8", "newline": ""})) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as err:
        if err.errno is None or err.filename == str(path):
            raise
        raise OSError(err.errno, err.strerror, str(path)) from err  # same subclass, by errno
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # e.g. a folder that became read-only: the .tmp is cleaned up on resume
            pass


def _read_whole_csv(path: Path) -> pd.DataFrame:
    """A CSV written whole by :func:`_atomic_write`; raise _Damaged for a torn or garbled one."""
    raw = path.read_bytes()
    if not raw.endswith(b"\n"):  # every table is written with a final newline
        raise _Damaged("its last line is cut (the file does not end with a newline)")
    try:
        return pd.read_csv(io.BytesIO(raw))
    except ValueError as err:  # ParserError, EmptyDataError and UnicodeDecodeError are ValueErrors
        raise _Damaged(f"it does not parse as CSV ({err})") from None


def cached_frame(path: str | Path, resume: bool, run: Callable[[], Any]) -> pd.DataFrame:
    """The table of one unit of work: read back from `path` when resuming and it exists,
    else ``pd.DataFrame(run())``, written to `path` at once (atomically) and returned.

    A file that exists but is torn or unreadable is computed again, with a warning.
    """
    path = Path(path)
    if resume and path.exists():
        try:
            return _read_whole_csv(path)
        except _Damaged as err:
            warnings.warn(f"{path} is damaged: {err}; computing it again", stacklevel=2)
    frame = pd.DataFrame(run())
    _atomic_write(path, lambda f: frame.to_csv(f, index=False))
    return frame


def _result_name(gid: str, drop: int) -> str:
    return f"{gid}_drop{drop}"


# ---------------------------------------------------------------------------- one task
def rate_summary(rate_mbps: np.ndarray) -> dict[str, float]:
    """5th percentile, median and mean of user rates [Mbit/s] (NaN for no users)."""
    r = np.asarray(rate_mbps, float)
    if not len(r):
        return {"rate_p5_mbps": np.nan, "rate_p50_mbps": np.nan, "rate_mean_mbps": np.nan}
    p5, p50 = np.percentile(r, [5, 50])
    return {"rate_p5_mbps": float(p5), "rate_p50_mbps": float(p50), "rate_mean_mbps": float(r.mean())}


def _run_task(raw: dict[str, Any], path: str, point: dict[str, Any], gid: str, drop: int,
              seed: int, drops_dir: str) -> str:
    """Build and solve one drop with every method; write its rates and summary. Module-level
    with plain arguments, so it runs in a spawned worker. Returns the summary file's path."""
    from cellopt.solvers import solve

    scenario = Scenario.from_dict(raw, path)
    net, links, problem = scenario.build(seed)
    served = links.users_with_rate()
    study = net.in_study_area()  # statistics leave out the users of a guard band
    rows, rates = [], np.zeros((len(scenario.methods), net.n_users))
    for i, spec in enumerate(scenario.methods):
        t0 = time.perf_counter()
        sol = solve(problem, method=spec.name, **spec.options)
        wall = time.perf_counter() - t0
        rates[i, served] = sol.user_rate_mbps  # users in outage count with rate 0
        rows.append({
            "grid_id": gid, "drop": drop, "seed": seed, **point,
            "method": spec.label, "solver": spec.name, "objective": sol.objective,
            "upper_bound": np.nan if sol.upper_bound is None else sol.upper_bound,
            "gap": np.nan if sol.gap is None else sol.gap,
            **rate_summary(rates[i, study]),
            "n_users": int(study.sum()), "n_outage": int((study & ~served).sum()),
            "status": sol.status, "wall_s": wall,
        })
    out = Path(drops_dir)
    name = _result_name(gid, drop)
    labels = np.array([s.label for s in scenario.methods], dtype=str)
    # The rates first, the summary (the task's marker) last: a marker always has its rates.
    _atomic_write(out / f"{name}.npz", lambda f: np.savez(
        f, method=labels, rate_mbps=rates, served=served, study=study), "wb")
    _atomic_write(out / f"{name}.csv", lambda f: pd.DataFrame(rows).to_csv(f, index=False))
    return str(out / f"{name}.csv")


# ---------------------------------------------------------------------------- checks
def _same_value(stored: Any, wanted: Any) -> bool:
    """A grid value read back from CSV equals the one asked for (numbers to 1e-12)."""
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
        try:
            return math.isclose(float(stored), float(wanted), rel_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return str(stored) == str(wanted)


def _check_summary(frame: pd.DataFrame, *, columns: Sequence[str] | None,
                   methods: Sequence[str] | None, gid: str, drop: int, seed: int | None = None,
                   point: Mapping[str, Any] | None = None) -> None:
    """Raise _Damaged unless `frame` is the summary a task writes for (`gid`, `drop`)."""
    fixed = ["grid_id", "drop", "seed", *SUMMARY_COLUMNS]
    if columns is not None and list(frame.columns) != list(columns):
        raise _Damaged(f"its columns are {list(frame.columns)}, expected {list(columns)}")
    if missing := [c for c in fixed if c not in frame.columns]:
        raise _Damaged(f"it lacks the columns {missing}")
    if methods is not None and list(frame["method"]) != list(methods):
        raise _Damaged(f"its rows are for the methods {list(frame['method'])}, expected one row per "
                       f"method {list(methods)}")
    if not len(frame):
        raise _Damaged("it has no rows")
    if empty := [c for c in _NOT_NULL if frame[c].isna().any()]:
        raise _Damaged(f"it has empty values in the columns {empty}")
    if (frame["grid_id"].astype(str) != gid).any() or (frame["drop"] != drop).any():
        raise _Damaged(f"its rows are not all of grid point {gid}, drop {drop}")
    if seed is not None and (frame["seed"] != seed).any():
        raise _Damaged(f"it was built with the seed {frame['seed'].iloc[0]}, not with this sweep's "
                       f"seed {seed} of drop {drop}")
    for key, value in (point or {}).items():
        if not all(_same_value(v, value) for v in frame[key]):
            raise _Damaged(f"its {key} is {frame[key].iloc[0]!r}, not {value!r}")


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a task's .npz; raise _Damaged for a missing or unreadable file."""
    if not path.is_file():
        raise _Damaged(f"its per-user rates {path.name} are missing")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in ("method", "rate_mbps", "served")}
            arrays["study"] = z["study"] if "study" in z.files else np.ones(len(arrays["served"]), bool)
    except _NPZ_ERRORS as err:
        raise _Damaged(f"{path.name} cannot be read ({type(err).__name__}: {err})") from None
    return arrays


def _check_rates(arrays: Mapping[str, np.ndarray], frame: pd.DataFrame, name: str) -> None:
    """Raise _Damaged unless the arrays hold one rate row per method of `frame` and agree with it."""
    labels, rates = arrays["method"], arrays["rate_mbps"]
    served, study = arrays["served"], arrays["study"]
    n = len(served)
    if (rates.ndim != 2 or rates.shape != (len(frame), n) or served.dtype != bool
            or study.dtype != bool or study.shape != (n,) or rates.dtype.kind != "f"):
        raise _Damaged(f"{name} holds arrays of unexpected shapes or types (rate_mbps "
                       f"{rates.shape} {rates.dtype}, served {served.shape} {served.dtype})")
    if list(labels) != list(frame["method"]):
        raise _Damaged(f"{name} holds the methods {list(labels)}, the summary {list(frame['method'])}")
    if (frame["n_users"] != int(study.sum())).any() or \
            (frame["n_outage"] != int((study & ~served).sum())).any():
        raise _Damaged(f"{name} and the summary disagree on the number of users")
    for i, (_, row) in enumerate(frame.iterrows()):
        got = rate_summary(rates[i, study])
        if not all(np.isclose(got[c], float(row[c]), rtol=1e-9, atol=1e-12, equal_nan=True)
                   for c in got):
            raise _Damaged(f"{name} and the summary disagree on the rates of {row['method']!r}")


def _result_problem(drops_dir: Path, gid: str, drop: int, **expected: Any) -> str | None:
    """Why the finished task (`gid`, `drop`) cannot be kept, or None if both its files are sound."""
    csv = drops_dir / f"{_result_name(gid, drop)}.csv"
    npz = csv.with_suffix(".npz")
    try:
        frame = _read_whole_csv(csv)
        _check_summary(frame, gid=gid, drop=drop, **expected)
        _check_rates(_load_npz(npz), frame, npz.name)
    except _Damaged as err:
        return str(err)
    return None


def _finished(drops_dir: Path) -> dict[tuple[str, int], Path]:
    """The summary files in `drops_dir`, by (grid id, drop)."""
    if not drops_dir.is_dir():
        return {}
    found = {}
    for p in drops_dir.glob("*.csv"):
        if m := _RESULT.match(p.name):
            found[m["gid"], int(m["drop"])] = p
    return found


def _read_meta(out_dir: Path) -> dict[str, Any]:
    """``out_dir/meta.json``; StoreError if it is missing or unreadable."""
    path = out_dir / "meta.json"
    if not path.is_file():
        raise StoreError(f"{path} is missing, so {out_dir} is not a results folder of cellopt, or "
                         "it was damaged; fix: give a folder written by `cellopt experiment` "
                         "(run_sweep)")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:  # JSONDecodeError and UnicodeDecodeError
        raise StoreError(f"{path} cannot be read ({err}); fix: run the sweep again into a new "
                         "folder, or restore the file") from None
    if not isinstance(meta, dict):
        raise StoreError(f"{path} does not hold a JSON object; fix: restore the file")
    return meta


# ---------------------------------------------------------------------------- results
def collect(out_dir: str | Path) -> pd.DataFrame:
    """Read every finished summary in ``out_dir/drops``, write ``out_dir/index.csv``, return it.

    Rows are sorted by grid id and drop, in the scenario's method order within a drop.

    Raises
    ------
    StoreError
        If `out_dir` has no ``drops/`` folder, or a summary file is torn or does not match
        the folder's ``meta.json`` (its columns, methods or seeds): no row is left out
        silently. ``run_sweep(..., resume=True)`` recomputes such files.
    """
    out_dir = Path(out_dir)
    drops_dir = out_dir / "drops"
    if not drops_dir.is_dir():
        raise StoreError(f"{out_dir} is not a results folder (it has no drops/ folder); fix: give a "
                         "folder written by `cellopt experiment` (run_sweep)")
    try:
        meta: dict[str, Any] | None = _read_meta(out_dir)
    except StoreError:  # the summaries are still checked against each other
        meta = None
    grid = list((meta or {}).get("grid", {})) if meta else None
    columns = None if grid is None else ["grid_id", "drop", "seed", *grid, *SUMMARY_COLUMNS]
    methods = (meta or {}).get("methods")
    seeds = (meta or {}).get("drop_seeds") or []
    found = sorted(_finished(drops_dir).items(), key=lambda kv: (kv[0][0], kv[0][1]))
    frames = []
    for (gid, drop), path in found:
        try:
            frame = _read_whole_csv(path)
            _check_summary(frame, columns=columns or (list(frames[0].columns) if frames else None),
                           methods=methods, gid=gid, drop=drop,
                           seed=seeds[drop] if drop < len(seeds) else None)
        except _Damaged as err:
            raise StoreError(f"{path} is damaged: {err}; fix: recompute it with `cellopt experiment "
                             f"SCENARIO --out {out_dir} --resume` (run_sweep(..., resume=True)), "
                             "or delete it") from None
        frames.append(frame)
    if frames:
        index = pd.concat(frames, ignore_index=True)
    else:
        index = pd.DataFrame(columns=columns or ["grid_id", "drop", "seed", *SUMMARY_COLUMNS])
    _atomic_write(out_dir / "index.csv", lambda f: index.to_csv(f, index=False))
    return index


def load_rates(out_dir: str | Path, grid_id: str, drop: int) -> pd.DataFrame:
    """Per-user rates [Mbit/s] of one task: one column per method, one row per dropped user
    of the study area (users in outage have rate 0, guard-band users are left out), plus a
    boolean ``served`` column.

    Raises
    ------
    StoreError
        If the task's ``.npz`` is missing or cannot be read.
    """
    path = Path(out_dir) / "drops" / f"{_result_name(grid_id, drop)}.npz"
    try:
        z = _load_npz(path)
    except _Damaged as err:
        raise StoreError(f"{path} is damaged: {err}; fix: recompute it with `cellopt experiment "
                         f"SCENARIO --out {out_dir} --resume` (run_sweep(..., resume=True))") from None
    frame = pd.DataFrame(z["rate_mbps"].T, columns=list(z["method"]))
    frame["served"] = z["served"]
    return frame[z["study"]].reset_index(drop=True)


def _check_resumable(out_dir: Path, text: str, meta: Mapping[str, Any], n_results: int,
                     force: bool) -> dict[str, Any] | None:
    """The stored ``meta.json`` of a folder being resumed, after checking that it is this sweep.

    Raises StoreError when results exist but ``meta.json`` or ``scenario.toml`` is missing
    or unreadable (unless `force`), or when what is stored differs from this sweep (always).
    """
    meta_path, copy = out_dir / "meta.json", out_dir / "scenario.toml"
    old: dict[str, Any] | None = None
    if meta_path.is_file():
        try:
            old = _read_meta(out_dir)
        except StoreError as err:
            if n_results and not force:
                raise StoreError(f"{err}; or, if the {n_results} finished drop(s) in {out_dir} are "
                                 "results of this very scenario, pass force=True (--force) to keep "
                                 "them") from None
    missing = [p.name for p in (meta_path, copy) if not p.is_file()]
    if missing and n_results and not force:
        raise StoreError(f"{out_dir} holds {n_results} finished drop(s) but no {' and no '.join(missing)}, "
                         "so cellopt cannot tell which scenario, seeds and grid they belong to; fix: "
                         "give another out_dir (--out), or, if they are results of this very "
                         "scenario, pass force=True (--force) to keep them")
    differ = []
    if (copy.is_file() and copy.read_text(encoding="utf-8") != text) or \
            (old is not None and old.get("scenario_sha256", meta["scenario_sha256"])
             != meta["scenario_sha256"]):
        differ.append("scenario text")
    if old is not None:
        if old.get("seed_base") != meta["seed_base"]:
            differ.append("seed base")
        if old.get("grid") != meta["grid"]:
            differ.append("grid")
    if differ:
        raise StoreError(f"{out_dir} holds a sweep of another {', '.join(differ)}; fix: give another "
                         "out_dir (--out), or run the scenario and grid it was written for")
    return old


# ---------------------------------------------------------------------------- sweep
def run_sweep(
    scenario: Scenario,
    out_dir: str | Path,
    *,
    drops: int | None = None,
    grid: Mapping[str, Sequence[Any]] | None = None,
    workers: int = 1,
    resume: bool = False,
    progress: bool = True,
    scheduler: Any = None,
    force: bool = False,
) -> pd.DataFrame:
    """Run `drops` drops at every point of `grid`, solving each with every scenario method.

    Parameters
    ----------
    scenario : Scenario
        From :func:`~cellopt.scenario.load_scenario`; its file's text is copied to the folder.
    out_dir : path
        Results folder (created). See the module docstring for its layout.
    drops : int, optional
        Number of drops (default the scenario's ``seeds.drops``).
    grid : dict, optional
        ``{"section.key": [values, ...]}``; every combination is one grid point, applied with
        :meth:`Scenario.with_overrides`. Grid points are named ``g000``, ``g001``, … in
        product order (listed in ``meta.json``).
    workers : int
        ``> 1``: run tasks in a spawn-context :class:`~concurrent.futures.ProcessPoolExecutor`.
    resume : bool
        Skip tasks whose result exists and is sound; recompute damaged ones (with a
        warning naming the file). Without it, a folder holding results is refused.
    progress : bool
        Show a tqdm progress bar.
    scheduler : str or dask.distributed.Client, optional
        Run the tasks on this Dask cluster instead (``workers`` is then ignored); the
        results are identical, drop by drop.
    force : bool
        With `resume`: keep the results of a folder whose ``meta.json`` or
        ``scenario.toml`` is missing or unreadable, as results of `scenario` (each is still
        checked; one built with another seed is recomputed).

    Returns
    -------
    pandas.DataFrame
        The index: one row per (grid point, drop, method), see :data:`SUMMARY_COLUMNS`.

    Raises
    ------
    ValidationError
        For bad `drops`/`workers`/`grid`, or `out_dir` an existing file.
    ResourceLimitError
        For more tasks than fit in memory.
    StoreError
        For a folder with results and ``resume=False``; on resume, for a folder whose
        ``meta.json`` or ``scenario.toml`` is missing (unless `force`) or whose scenario
        text, seed base or grid differ from this sweep's.
    CelloptError
        For a `scheduler` that cannot be reached.
    """
    drops = scenario.drops if drops is None else drops
    drops = check_count(drops, "drops", fix="give an integer ≥ 1", minimum=1)
    workers = check_count(workers, "workers", fix="give an integer ≥ 1", minimum=1)
    drops = int(drops)
    points = grid_points(grid)
    check_memory(len(points) * drops * _TASK_BYTES, f"{len(points)} grid point(s) × {drops} drops",
                 "ask for fewer drops or grid points")
    scenarios = [scenario.with_overrides(**_overrides(p)) if p else scenario for p in points]
    gids = [f"g{i:03d}" for i in range(len(points))]

    out_dir = Path(out_dir)
    _check_folder(out_dir)
    drops_dir = out_dir / "drops"
    existing = _finished(drops_dir)
    if existing and not resume:
        raise StoreError(f"{out_dir} already holds {len(existing)} results; fix: pass resume=True "
                         "(--resume) to continue that sweep, or give another out_dir (--out)")
    text = Path(scenario.path).read_text(encoding="utf-8")
    import cellopt

    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    meta = {
        "cellopt_version": cellopt.__version__, "scenario": str(Path(scenario.path).resolve()),
        # the copy's checksum: a foreign scenario is refused even if scenario.toml is lost
        "scenario_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "seed_base": scenario.seed_base, "drops": drops, "drop_seeds": [],
        "grid": {k: list(v) for k, v in (grid or {}).items()},
        "grid_points": dict(zip(gids, points, strict=True)),
        "methods": [s.label for s in scenario.methods], "started": now, "resumed": [],
    }
    meta = json.loads(json.dumps(meta, default=str))  # as it reads back, to compare with the stored
    if resume:
        old = _check_resumable(out_dir, text, meta, len(existing), force)
        if old is not None:
            meta["started"] = old.get("started", now)
            meta["resumed"] = [*old.get("resumed", []), now]
            meta["drops"] = max(drops, int(old.get("drops", drops)))
    if strays := sorted({str(existing[key]) for key in existing if key[0] not in gids}):
        raise StoreError(f"{out_dir} holds results of grid points this grid does not have: "
                         f"{strays[:3]}; fix: give another out_dir (--out)")
    # Drops beyond `drops` left by an earlier, longer run are checked (and repaired) too.
    wanted = sorted({(gid, k) for gid in gids for k in range(drops)} | set(existing))
    meta["drops"] = max(meta["drops"], 1 + max(k for _, k in wanted))
    seeds = meta["drop_seeds"] = drop_seeds(scenario.seed_base, meta["drops"])

    drops_dir.mkdir(parents=True, exist_ok=True)
    for tmp in drops_dir.glob(".*.tmp"):  # leftovers of a killed run
        tmp.unlink()
    _atomic_write(out_dir / "scenario.toml", lambda f: f.write(text))
    _atomic_write(out_dir / "meta.json", lambda f: json.dump(meta, f, indent=2, default=str))

    columns = ["grid_id", "drop", "seed", *meta["grid"], *SUMMARY_COLUMNS]
    by_gid = {gid: (sc, point) for sc, point, gid in zip(scenarios, points, gids, strict=True)}
    tasks = []
    for gid, k in wanted:
        sc, point = by_gid[gid]
        if (gid, k) in existing:
            problem = _result_problem(drops_dir, gid, k, columns=columns, methods=meta["methods"],
                                      seed=seeds[k], point=point)
            if problem is None:
                continue
            warnings.warn(f"{existing[gid, k]} is damaged: {problem}; computing that drop again",
                          stacklevel=2)
        tasks.append((sc.raw, str(sc.path), point, gid, k, seeds[k], str(drops_dir)))
    run_tasks(_run_task, tasks, workers=workers, scheduler=scheduler, progress=progress,
              unit="drop")
    return collect(out_dir)


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
    client = _dask_client(scheduler) if scheduler is not None and tasks else None
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


def _dask_client(scheduler: Any) -> Any:
    """A connected ``dask.distributed.Client``: `scheduler` itself, or one for its address.

    The connect gives up after a few seconds, with the address and the fix.
    """
    try:
        from dask.distributed import Client
    except ImportError as err:  # an optional extra
        raise CelloptError("--scheduler needs dask.distributed; fix: pip install 'cellopt[dask]'") \
            from err
    if isinstance(scheduler, Client):
        return scheduler
    if not isinstance(scheduler, str) or not scheduler.strip():
        # Client("") would quietly start a local cluster instead
        raise ValidationError(f"scheduler={scheduler!r}; fix: give the address of a Dask scheduler, "
                              "e.g. tcp://HOST:8786")
    try:
        return Client(scheduler, timeout=_CONNECT_TIMEOUT_S)
    except ValueError as err:  # a malformed address
        raise ValidationError(f"scheduler={scheduler!r}: {err}; fix: give the address of a Dask "
                              "scheduler, e.g. tcp://HOST:8786") from None
    except OSError as err:  # dask's connect timeout, refused or unresolved addresses
        raise CelloptError(
            f"cannot reach the Dask scheduler at {scheduler!r} within {_CONNECT_TIMEOUT_S:g} s "
            f"({err}); fix: start it (`dask scheduler`, and workers with `dask worker "
            f"{scheduler}`), check the address, or run without --scheduler") from None


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
