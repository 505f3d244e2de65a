"""Sweeps: many drops × a parameter grid, each task written once, atomically, resumable.

Layout of a results folder ``out_dir``::

    scenario.toml                 the scenario file's exact text
    meta.json                     kind "sweep", cellopt version, the text's SHA-256,
                                  settings (seed base, grid), drops, drop seeds, grid
                                  points, methods, start time(s) (:mod:`cellopt.study.store`)
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
scenario, seed base or grid always is (:class:`~cellopt.errors.StoreError`). The sweep holds
the folder's lock while it runs (:class:`~cellopt.study.lock.FolderLock`): a second run
into the folder is refused, and the stale lock of a killed run is taken over on resume.

Seeds: ``numpy.random.SeedSequence(seeds.base).spawn(drops)`` gives one child per drop; drop
``k`` is built with ``int(child_k.generate_state(1)[0])`` at every grid point, whatever the
worker count or the order of the tasks (and adding drops does not move the earlier ones).
"""

from __future__ import annotations

import re
import struct
import time
import warnings
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cellopt.checks import check_count, close_names
from cellopt.errors import StoreError, ValidationError, check_memory
from cellopt.study.atomic import png_writer
from cellopt.study.builders import BUILDERS
from cellopt.study.outputs import OutputFile, is_matplotlib_png, write_table
from cellopt.study.scenario import Scenario
from cellopt.study.schema import SECTION_KEYS
from cellopt.study.seeds import drop_seeds
from cellopt.study.store import (
    TASK_BYTES,
    Damaged,
    ResultsFolder,
    grid_ids,
    grid_points,
    grid_text,
    overrides,
    read_whole_csv,
    same_value,
    toml_value,
)
from cellopt.study.summary import rate_summary, run_bounds
from cellopt.study.tasks import run_tasks

__all__ = ["SUMMARY_COLUMNS", "SWEEP_FILES", "collect", "grid_scenarios", "load_rates", "plot_sweep",
           "resumed_drops", "run_sweep", "sweep_grid"]

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


def _result_name(gid: str, drop: int) -> str:
    return f"{gid}_drop{drop}"


def _write_figure(f: Any, fig: Any) -> None:
    png_writer(fig, dpi=110)(f)


#: A task writes its rates first and its summary last (the task's marker).
RATES_FILE = OutputFile("drops/{task}.npz", lambda f, arrays: np.savez(f, **arrays), "wb",
                        what="per-user rates of every method")
SUMMARY_FILE = OutputFile("drops/{task}.csv", write_table, what="per-method summary rows")
INDEX_FILE = OutputFile("index.csv", write_table, what="all summary rows (collect)")
RATE_CDF_FILE = OutputFile("rate_cdf_{grid_id}.png", _write_figure, "wb", recognise=is_matplotlib_png,
                           what="the rates of all drops of a grid point pooled (plot_sweep)")
GAIN_FILE = OutputFile("gain_{rate}.png", _write_figure, "wb", recognise=is_matplotlib_png,
                       what="rate percentile gains over the first method (plot_sweep)")
#: The files of a sweep's folder (beside :data:`~cellopt.study.store.FOLDER_FILES`), each
#: written whole on its own.
SWEEP_FILES = (RATES_FILE, SUMMARY_FILE, INDEX_FILE, RATE_CDF_FILE, GAIN_FILE)


def _run_task(raw: dict[str, Any], path: str, point: dict[str, Any], gid: str, drop: int,
              seed: int, out_dir: str) -> str:
    """Build and solve one drop with every method; write its rates and summary. Module-level
    with plain arguments, so it runs in a spawned worker. Returns the summary file's path."""
    scenario = Scenario.from_dict(raw, path)
    built = scenario.build(seed)
    served, study = built.solvable, built.in_study_area  # statistics leave out a guard band
    rows, rates = [], np.zeros((len(scenario.runs), built.network.n_users))
    solutions, walls = {}, {}
    for spec in scenario.runs:
        t0 = time.perf_counter()
        solutions[spec.label] = spec.solve(scenario, built)
        walls[spec.label] = time.perf_counter() - t0
    bounds = run_bounds(built.problem, solutions)  # every gap to the drop's best bound
    for i, spec in enumerate(scenario.runs):
        sol = solutions[spec.label]
        rates[i] = built.per_user(sol.user_rate_mbps)  # users in outage count with rate 0
        rows.append({
            "grid_id": gid, "drop": drop, "seed": seed, **point,
            "method": spec.label, "solver": spec.name, "objective": sol.objective,
            "upper_bound": bounds[spec.label].upper_bound, "gap": bounds[spec.label].gap,
            **rate_summary(rates[i, study]),
            "n_users": int(study.sum()), "n_outage": int((study & ~served).sum()),
            "status": sol.status, "wall_s": walls[spec.label],
        })
    name = _result_name(gid, drop)
    labels = np.array([s.label for s in scenario.runs], dtype=str)
    # The rates first, the summary (the task's marker) last: a marker always has its rates.
    RATES_FILE.write_to(out_dir, {"method": labels, "rate_mbps": rates, "served": served,
                                  "study": study}, task=name)
    return str(SUMMARY_FILE.write_to(out_dir, pd.DataFrame(rows), task=name))


# ---------------------------------------------------------------------------- checks
def _check_summary(frame: pd.DataFrame, *, columns: Sequence[str] | None,
                   methods: Sequence[str] | None, gid: str, drop: int, seed: int | None = None,
                   point: Mapping[str, Any] | None = None) -> None:
    """Raise Damaged unless `frame` is the summary a task writes for (`gid`, `drop`)."""
    fixed = ["grid_id", "drop", "seed", *SUMMARY_COLUMNS]
    if columns is not None and list(frame.columns) != list(columns):
        raise Damaged(f"its columns are {list(frame.columns)}, expected {list(columns)}")
    if missing := [c for c in fixed if c not in frame.columns]:
        raise Damaged(f"it lacks the columns {missing}")
    if methods is not None and list(frame["method"]) != list(methods):
        raise Damaged(f"its rows are for the methods {list(frame['method'])}, expected one row per "
                       f"method {list(methods)}")
    if not len(frame):
        raise Damaged("it has no rows")
    if empty := [c for c in _NOT_NULL if frame[c].isna().any()]:
        raise Damaged(f"it has empty values in the columns {empty}")
    if (frame["grid_id"].astype(str) != gid).any() or (frame["drop"] != drop).any():
        raise Damaged(f"its rows are not all of grid point {gid}, drop {drop}")
    if seed is not None and (frame["seed"] != seed).any():
        raise Damaged(f"it was built with the seed {frame['seed'].iloc[0]}, not with this sweep's "
                       f"seed {seed} of drop {drop}")
    for key, value in (point or {}).items():
        if not all(same_value(v, value) for v in frame[key]):
            raise Damaged(f"its {key} is {frame[key].iloc[0]!r}, not {value!r}")


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a task's .npz; raise Damaged for a missing or unreadable file."""
    if not path.is_file():
        raise Damaged(f"its per-user rates {path.name} are missing")
    try:
        # np.load leaks its file when a damaged .npz makes it raise: open it here instead
        with open(path, "rb") as f, np.load(f, allow_pickle=False) as z:
            arrays = {k: z[k] for k in ("method", "rate_mbps", "served")}
            arrays["study"] = z["study"] if "study" in z.files else np.ones(len(arrays["served"]), bool)
    except _NPZ_ERRORS as err:
        raise Damaged(f"{path.name} cannot be read ({type(err).__name__}: {err})") from None
    return arrays


def _check_rates(arrays: Mapping[str, np.ndarray], frame: pd.DataFrame, name: str) -> None:
    """Raise Damaged unless the arrays hold one rate row per method of `frame` and agree with it."""
    labels, rates = arrays["method"], arrays["rate_mbps"]
    served, study = arrays["served"], arrays["study"]
    n = len(served)
    if (rates.ndim != 2 or rates.shape != (len(frame), n) or served.dtype != bool
            or study.dtype != bool or study.shape != (n,) or rates.dtype.kind != "f"):
        raise Damaged(f"{name} holds arrays of unexpected shapes or types (rate_mbps "
                       f"{rates.shape} {rates.dtype}, served {served.shape} {served.dtype})")
    if list(labels) != list(frame["method"]):
        raise Damaged(f"{name} holds the methods {list(labels)}, the summary {list(frame['method'])}")
    if (frame["n_users"] != int(study.sum())).any() or \
            (frame["n_outage"] != int((study & ~served).sum())).any():
        raise Damaged(f"{name} and the summary disagree on the number of users")
    for i, (_, row) in enumerate(frame.iterrows()):
        got = rate_summary(rates[i, study])
        if not all(np.isclose(got[c], float(row[c]), rtol=1e-9, atol=1e-12, equal_nan=True)
                   for c in got):
            raise Damaged(f"{name} and the summary disagree on the rates of {row['method']!r}")


def _result_problem(out_dir: Path, gid: str, drop: int, **expected: Any) -> str | None:
    """Why the finished task (`gid`, `drop`) cannot be kept, or None if both its files are sound."""
    csv = SUMMARY_FILE.path(out_dir, task=_result_name(gid, drop))
    npz = RATES_FILE.path(out_dir, task=_result_name(gid, drop))
    try:
        frame = read_whole_csv(csv)
        _check_summary(frame, gid=gid, drop=drop, **expected)
        _check_rates(_load_npz(npz), frame, npz.name)
    except Damaged as err:
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


# ---------------------------------------------------------------------------- results
def sweep_grid(meta: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The grid of a sweep's ``meta.json`` ({} without a grid)."""
    return meta.get("settings", meta).get("grid") or {}


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
        meta: dict[str, Any] | None = ResultsFolder(out_dir, "sweep").read_meta()
    except StoreError:  # the summaries are still checked against each other
        meta = None
    grid = None if meta is None else list(sweep_grid(meta))
    columns = None if grid is None else ["grid_id", "drop", "seed", *grid, *SUMMARY_COLUMNS]
    methods = (meta or {}).get("methods")
    seeds = (meta or {}).get("drop_seeds") or []
    found = sorted(_finished(drops_dir).items(), key=lambda kv: (kv[0][0], kv[0][1]))
    frames = []
    for (gid, drop), path in found:
        try:
            frame = read_whole_csv(path)
            _check_summary(frame, columns=columns or (list(frames[0].columns) if frames else None),
                           methods=methods, gid=gid, drop=drop,
                           seed=seeds[drop] if drop < len(seeds) else None)
        except Damaged as err:
            raise StoreError(f"{path} is damaged: {err}; fix: recompute it with `cellopt experiment "
                             f"SCENARIO --out {out_dir} --resume` (run_sweep(..., resume=True)), "
                             "or delete it") from None
        frames.append(frame)
    if frames:
        index = pd.concat(frames, ignore_index=True)
    else:
        index = pd.DataFrame(columns=columns or ["grid_id", "drop", "seed", *SUMMARY_COLUMNS])
    INDEX_FILE.write_to(out_dir, index)
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
    path = RATES_FILE.path(out_dir, task=_result_name(grid_id, drop))
    try:
        z = _load_npz(path)
    except Damaged as err:
        raise StoreError(f"{path} is damaged: {err}; fix: recompute it with `cellopt experiment "
                         f"SCENARIO --out {out_dir} --resume` (run_sweep(..., resume=True))") from None
    frame = pd.DataFrame(z["rate_mbps"].T, columns=list(z["method"]))
    frame["served"] = z["served"]
    return frame[z["study"]].reset_index(drop=True)


# ---------------------------------------------------------------------------- grid
def grid_scenarios(scenario: Scenario, grid: Mapping[str, Sequence[Any]] | None, *,
                   cli: bool = False) -> list[Scenario]:
    """The scenario at every point of `grid` (product order), each key and value checked.

    Parameters
    ----------
    scenario : Scenario
    grid : dict, optional
        ``{"section.key": [values, ...]}`` (see :func:`run_sweep`).
    cli : bool
        Name a bad key in messages as the command line gives it (``--grid
        picos.per_sector=1,2``) rather than as the argument ``grid['picos.per_sector']``.

    Raises
    ------
    ValidationError
        Naming the grid key (not the scenario file) and the fix: a section or key the
        scenario schema does not have (with the nearest valid names), a ``seeds`` key
        (every grid point is built with the sweep's drop seeds: ``drops`` sets their
        number), or a value the scenario refuses at that key or in that combination.
    """
    points = grid_points(grid)
    if not grid:
        return [scenario]

    def where(key: str) -> str:
        values = list(grid[key])
        return f"--grid {grid_text({key: values})[0]}" if cli else f"grid[{key!r}]={values!r}"

    def did_you_mean(key: str, fixed: str) -> str:
        if cli:
            return f"did you mean --grid {grid_text({fixed: list(grid[key])})[0]}? "
        return f"did you mean {fixed!r}? "

    builders = [str(b) for b in grid.get("network.builder", [scenario.network["builder"]])]
    if unknown := [b for b in builders if b not in BUILDERS]:
        near = close_names(unknown[0], sorted(BUILDERS))
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise ValidationError(f"{where('network.builder')}: there is no builder {unknown[0]!r}; fix: "
                              f"{hint}the builders are {sorted(BUILDERS)}")
    for key in grid:
        section, name = key.split(".")
        if section == "seeds":
            fix = "--drops N" if cli else "drops=N"
            raise ValidationError(f"{where(key)}: the seeds are not a grid parameter (every grid "
                                  f"point is built with the same drop seeds); fix: ask for more "
                                  f"drops with {fix}, or change [seeds] in the scenario file")
        sections = ["network", *(s for s in SECTION_KEYS if s != "seeds")]
        if section not in sections:
            near = close_names(section, sections)
            hint = did_you_mean(key, f"{near[0]}.{name}") if near else ""
            raise ValidationError(f"{where(key)}: there is no scenario section [{section}]; fix: "
                                  f"{hint}the sections a grid can vary are {sections}")
        if section == "network":
            keys = sorted({"builder", *(k for b in builders if b in BUILDERS for k in BUILDERS[b].keys)})
        else:
            keys = sorted(SECTION_KEYS[section])
        if name not in keys:
            near = close_names(name, keys)
            hint = did_you_mean(key, f"{section}.{near[0]}") if near else ""
            what = f"builder {builders[0]!r}" if section == "network" and len(builders) == 1 \
                else f"[{section}]"
            raise ValidationError(f"{where(key)}: {what} has no key {name!r}; fix: {hint}the keys of "
                                  f"[{section}] are {keys}")

    def refused(err: ValidationError, what: str) -> ValidationError:
        prefix = f"{scenario.path}: "  # the value is the grid's, not the file's
        lines = [p[len(prefix):] if p.startswith(prefix) else p for p in err.problems]
        fix = "; fix: give " + ("--grid" if cli else "the grid") + " values the scenario accepts"
        return type(err)([f"{what}: {line}" + ("" if "fix:" in line else fix) for line in lines])

    scenarios = []
    for point in points:
        try:
            scenarios.append(scenario.with_overrides(**overrides(point)))
        except ValidationError as err:
            for key, value in point.items():  # a value the scenario refuses on its own: name it
                try:
                    scenario.with_overrides(**overrides({key: value}))
                except ValidationError as alone:
                    raise refused(alone, f"{where(key)}: the value {toml_value(value)}") from None
            shown = ", ".join(f"{k}={toml_value(v)}" for k, v in point.items())
            raise refused(err, f"the grid point {shown}" + (" (--grid)" if cli else "")) from None
    return scenarios


def resumed_drops(out_dir: str | Path) -> int | None:
    """The number of drops of the sweep stored in `out_dir` (its ``meta.json``), or None if
    it has none that can be read: what a resume without `drops` continues."""
    try:
        meta = ResultsFolder(out_dir, "sweep").read_meta()
    except (StoreError, ValidationError, OSError):
        return None
    drops = meta.get("drops")
    if meta.get("kind", "sweep") != "sweep" or not isinstance(drops, int) or isinstance(drops, bool) \
            or drops < 1:
        return None
    return drops


# ---------------------------------------------------------------------------- sweep
def run_sweep(
    scenario: Scenario,
    out_dir: str | Path,
    *,
    drops: int | None = None,
    grid: Mapping[str, Sequence[Any]] | None = None,
    workers: int = 1,
    resume: bool = False,
    progress: bool | None = None,
    scheduler: Any = None,
    force: bool = False,
) -> pd.DataFrame:
    """Run `drops` drops at every point of `grid`, solving each with every scenario method.

    Parameters
    ----------
    scenario : Scenario
        From :func:`~cellopt.study.scenario.load_scenario`; its file's text is copied to the folder.
    out_dir : path
        Results folder (created). See the module docstring for its layout.
    drops : int, optional
        Number of drops. Default: the scenario's ``seeds.drops``, whatever the grid; with
        `resume`, the number of drops of the sweep stored in `out_dir` (its ``meta.json``),
        so that a resume finishes that sweep (give `drops` to add drops to it).
    grid : dict, optional
        ``{"section.key": [values, ...]}``; every combination is one grid point, applied with
        :meth:`Scenario.with_overrides` (:func:`grid_scenarios` checks each key and value).
        Grid points are named ``g000``, ``g001``, … in product order (listed in ``meta.json``).
    workers : int
        ``> 1``: run tasks in a spawn-context :class:`~concurrent.futures.ProcessPoolExecutor`.
    resume : bool
        Skip tasks whose result exists and is sound; recompute damaged ones (with a
        warning naming the file). Without it, a folder holding results is refused.
    progress : bool or None
        Show a tqdm progress bar. None (default): when standard error is a terminal (:mod:`cellopt.progress`).
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
    FolderInUseError
        While another running process writes to `out_dir` (it holds its lock,
        :class:`~cellopt.study.lock.FolderLock`; the lock of a run that was killed is
        taken over with a warning).
    StoreError
        For a folder with results and ``resume=False``; on resume, for a folder whose
        ``meta.json`` or ``scenario.toml`` is missing (unless `force`) or whose scenario
        text, seed base or grid differ from this sweep's.
    CelloptError
        For a `scheduler` that cannot be reached.
    """
    if drops is None:
        drops = (resumed_drops(out_dir) if resume else None) or scenario.drops
    drops = check_count(drops, "drops", fix="give an integer ≥ 1", minimum=1)
    workers = check_count(workers, "workers", fix="give an integer ≥ 1", minimum=1)
    drops = int(drops)
    points = grid_points(grid)
    check_memory(len(points) * drops * TASK_BYTES, f"{len(points)} grid point(s) × {drops} drops",
                 "ask for fewer drops or grid points")
    scenarios = grid_scenarios(scenario, grid)
    gids = grid_ids(points)

    folder = ResultsFolder(out_dir, "sweep")
    with folder:  # the folder is this run's until it ends (FolderLock)
        drops_dir = folder.path / "drops"
        existing = _finished(drops_dir)
        settings = {"seed_base": scenario.seed_base, "grid": {k: list(v) for k, v in (grid or {}).items()}}
        old = folder.open(scenario.path, settings, n_results=len(existing), resume=resume, force=force,
                          subfolders=["drops"])
        if strays := sorted({str(existing[key]) for key in existing if key[0] not in gids}):
            raise StoreError(f"{folder.path} holds results of grid points this grid does not have: "
                             f"{strays[:3]}; fix: give another out_dir (--out)")
        # Drops beyond `drops` left by an earlier, longer run are checked (and repaired) too.
        wanted = sorted({(gid, k) for gid in gids for k in range(drops)} | set(existing))
        n_drops = max(drops, int(old.get("drops", drops)), 1 + max(k for _, k in wanted))
        seeds = drop_seeds(scenario.seed_base, n_drops)
        meta = folder.write_meta(drops=n_drops, drop_seeds=seeds,
                                 grid_points=dict(zip(gids, points, strict=True)),
                                 methods=[s.label for s in scenario.runs])

        columns = ["grid_id", "drop", "seed", *sweep_grid(meta), *SUMMARY_COLUMNS]
        by_gid = {gid: (sc, point) for sc, point, gid in zip(scenarios, points, gids, strict=True)}
        tasks = []
        for gid, k in wanted:
            sc, point = by_gid[gid]
            if (gid, k) in existing:
                problem = _result_problem(folder.path, gid, k, columns=columns, methods=meta["methods"],
                                          seed=seeds[k], point=point)
                if problem is None:
                    continue
                warnings.warn(f"{existing[gid, k]} is damaged: {problem}; computing that drop again",
                              stacklevel=2)
            tasks.append((sc.raw, str(sc.path), point, gid, k, seeds[k], str(folder.path)))
        run_tasks(_run_task, tasks, workers=workers, scheduler=scheduler, progress=progress,
                  unit="drop")
        return collect(folder.path)


# ---------------------------------------------------------------------------- figures
#: The figures (and the report) a ``cellopt run`` folder holds.
RUN_FIGURES = ("rate_cdf.png", "network_map.png", "convergence.png", "report.html")


def _is_run_folder(out: Path) -> bool:
    """`out` was written by ``cellopt run`` (run_scenario), not by a sweep."""
    return (not (out / "meta.json").exists() and not (out / "drops").exists()
            and (out / "method_summary.csv").is_file() and (out / "user_rates.csv").is_file())


def plot_sweep(out_dir: str | Path) -> list[Path]:
    """Draw a sweep's figures from its folder, without solving; return the files written.

    Writes ``rate_cdf_<grid-id>.png`` (all drops of a grid point pooled) and, for a grid
    of one numeric key with more than one point and method, ``gain_p5.png`` and
    ``gain_p50.png`` (rate percentiles over those of the first method, per drop).

    Raises
    ------
    StoreError
        For a folder that is not a sweep's (a ``cellopt run`` folder is named as one, with
        the figures it holds) or holds no finished drop.
    """
    import matplotlib.pyplot as plt

    from cellopt.plotting import plot_gain_curve, plot_rate_cdf

    out = Path(out_dir)
    if not out.is_dir():
        raise StoreError(f"{out} is not a folder; fix: give a folder written by `cellopt experiment`")
    if _is_run_folder(out):
        figures_ = [name for name in RUN_FIGURES if (out / name).is_file()]
        kept = f"its figures are already in it: {', '.join(figures_)}" if figures_ \
            else "it holds no figure (written with --no-report, or its figures were removed)"
        raise StoreError(f"{out} is a `cellopt run` folder (one drop); `cellopt plot` redraws the "
                         f"figures of `cellopt experiment` folders; {kept}; fix: open those, or run "
                         f"`cellopt run SCENARIO --out {out}` again to draw them anew")
    meta = ResultsFolder(out, "sweep").read_meta()  # before collect: no index.csv for a stranger
    index = collect(out)
    if index.empty:
        raise StoreError(f"{out} holds no finished drop yet; fix: run `cellopt experiment SCENARIO "
                         f"--out {out}` (with --resume to continue it) first")
    figures: list[tuple[Any, OutputFile, dict[str, str]]] = []
    for gid in index["grid_id"].unique():  # a few grid points
        drops = index.loc[index["grid_id"] == gid, "drop"].unique()
        rates = pd.concat([load_rates(out, gid, int(k)) for k in drops], ignore_index=True)
        ax = plot_rate_cdf({m: rates[m].to_numpy() for m in rates.columns if m != "served"})
        ax.set_title(f"{gid}: {meta.get('grid_points', {}).get(gid) or 'scenario as given'}, "
                     f"{len(drops)} drop(s)")
        figures.append((ax.figure, RATE_CDF_FILE, {"grid_id": gid}))
    keys = list(sweep_grid(meta))
    numeric = len(keys) == 1 and pd.api.types.is_numeric_dtype(index[keys[0]]) \
        and not pd.api.types.is_bool_dtype(index[keys[0]])
    # A gain curve needs a numeric x axis and a method to compare with the first.
    if numeric and index["grid_id"].nunique() > 1 and index["method"].nunique() > 1:
        key, base = keys[0], index["method"].iloc[0]
        for col, label, name in (("rate_p5_mbps", "5th-percentile", "p5"),
                                 ("rate_p50_mbps", "median", "p50")):
            wide = index.pivot_table(index=["drop", key], columns="method", values=col)
            gains = {m: (wide[m] / wide[base]).unstack(key) for m in wide.columns if m != base}
            x = next(iter(gains.values())).columns.to_numpy(float)
            ax = plot_gain_curve(x, {m: g.to_numpy() for m, g in gains.items()}, xlabel=key,
                                 ylabel=f"{label} rate gain over {base}")
            figures.append((ax.figure, GAIN_FILE, {"rate": name}))
    try:
        return [entry.write_to(out, fig, **fields) for fig, entry, fields in figures]
    finally:
        for fig, _, _ in figures:
            plt.close(fig)
