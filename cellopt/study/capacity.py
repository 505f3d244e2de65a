"""Capacity: the largest user density a network serves, by one of two metrics.

Capacity is the largest density of users [users/km²] at which the network still meets a
target, pooled over several drops:

- ``metric="p5_rate"`` (default): the 5th-percentile user rate is at least
  ``target_p5_mbps`` (1 Mbit/s by default) — for full-buffer traffic;
- ``metric="demand"``: at least ``target_served_share`` (95 % by default) of the users
  receive their demand (a rate ≥ (1 − :data:`SERVED_RTOL`) × ``demand_mbps``) — for
  finite demands; users with an infinite demand never count as served.

Both fall as users are added, so the capacity is found by bracketing
(doubling or halving from a first guess) and then bisecting the density in log space.
Every density uses the same drop seeds (common random numbers), which keeps the
estimate of the rate-vs-density curve smooth. Users in outage (no usable link) count
with rate 0, and only the users of the study area count (a guard band's users are
solved for but left out, see :func:`cellopt.topology.study_window`).

:func:`capacity_sweep` runs the search at every point of a parameter grid (femtocell
adoption, say) for several methods in independent replicates, resumably, so that
capacity gains come with a Monte-Carlo error. Its folder is checked like a sweep's (see
:mod:`cellopt.study.store`): on resume a damaged result is recomputed with a warning, and a
folder with results but no ``meta.json`` or ``scenario.toml``, or with another scenario or
other settings, is refused.
"""

from __future__ import annotations

import io
import math
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cellopt.checks import check_bool, check_callable, check_count, check_number, check_seeds
from cellopt.errors import StoreError, ValidationError, check_memory
from cellopt.progress import shows
from cellopt.solvers import METHODS
from cellopt.study.outputs import OutputFile, write_table
from cellopt.study.runkinds import PowerRun, RunKind, run_named, run_names
from cellopt.study.scenario import Scenario
from cellopt.study.seeds import drop_seeds
from cellopt.study.store import (
    TASK_BYTES,
    Damaged,
    ResultsFolder,
    grid_ids,
    grid_points,
    overrides,
    read_whole_csv,
    same_value,
)
from cellopt.study.tasks import run_tasks

__all__ = ["CAPACITY_FILES", "METRICS", "SERVED_RTOL", "CapacityResult", "capacity",
           "capacity_sweep", "pooled_rates_mbps"]

#: Capacity metrics: what a density must meet.
METRICS = ("p5_rate", "demand")
#: A user receives its demand when its rate is at least (1 − SERVED_RTOL) × demand: the
#: solvers stop within a relative 1e-4 of the optimum, so a demand met to the 4th digit
#: is met.
SERVED_RTOL = 1e-3


@dataclass
class CapacityResult:
    """Result of :func:`capacity`.

    Attributes
    ----------
    capacity_per_km2 : float
        Largest density evaluated that meets the target (0 if even the lowest density
        tried misses it).
    upper_per_km2 : float
        Smallest density evaluated that misses the target (inf if none did): the
        capacity lies in [capacity_per_km2, upper_per_km2].
    target_p5_mbps : float
    evaluations : pandas.DataFrame
        One row per density tried: ``density_per_km2, rate_p5_mbps, rate_p50_mbps,
        served_share, n_users, meets_target, wall_s``.
    status : str
        "solved" when the bracket is within `rel_tol`, "max_evals" otherwise.
    metric : str
        One of :data:`METRICS`.
    target_served_share : float
        The share of users that must receive their demand (``metric="demand"``).
    """

    capacity_per_km2: float
    upper_per_km2: float
    target_p5_mbps: float
    evaluations: pd.DataFrame
    status: str
    metric: str = "p5_rate"
    target_served_share: float = 0.95


def pooled_rates_mbps(scenario: Scenario, density_per_km2: float, seeds: Sequence[int],
                      method: str = "dual", **options: Any) -> tuple[np.ndarray, int]:
    """The rates of the study-area users over the drops of `scenario` at one density, pooled.

    Users are dropped at `density_per_km2` over the whole region (guard band included)
    and all are solved for; only those in the study area
    (:meth:`~cellopt.Network.in_study_area`) are returned.

    Returns
    -------
    rates : ndarray, shape (n_users,)
        [Mbit/s]; users in outage have rate 0.
    n_users : int
        Study-area users over all drops.
    """
    _check_scenario(scenario)
    density_per_km2 = check_number(density_per_km2, "density_per_km2", low=0.0, unit="per km²",
                                   fix="give a finite density ≥ 0 in users per km²")
    seeds = check_seeds(seeds)
    _run_of(scenario, method, options)
    rates, _ = _pooled(scenario, density_per_km2, seeds, method, **options)
    return rates, len(rates)


def _pooled(scenario: Scenario, density_per_km2: float, seeds: Sequence[int], method: str,
            **options: Any) -> tuple[np.ndarray, np.ndarray]:
    """Rates and demands [Mbit/s] of the study-area users of every drop, pooled."""
    users = {k: v for k, v in scenario.raw["users"].items() if k != "n"}  # density replaces n
    raw = {**scenario.raw, "users": {**users, "density_per_km2": float(density_per_km2)}}
    scen = Scenario.from_dict(raw, scenario.path)
    run = _run_of(scen, method, options)
    rates, demands = [], []
    for seed in seeds:  # a few drops: a loop over runs, not over data
        built = scen.build(seed)
        rate = np.zeros(built.network.n_users)  # users in outage keep rate 0
        if built.problem.n_users:
            rate = built.per_user(run.solve(scen, built).user_rate_mbps)
        rates.append(rate[built.in_study_area])
        demands.append(built.network.users["demand_mbps"].to_numpy(float)[built.in_study_area])
    return np.concatenate(rates), np.concatenate(demands)


def _run_of(scenario: Scenario, method: Any, options: Mapping[str, Any]) -> RunKind:
    """The run `method` names (:func:`~cellopt.study.runkinds.run_named`), checked: a
    registered method with options :func:`cellopt.solve` takes (those of a load-coupled
    solve too, where the scenario has one), or "power" (the scenario's ``[power]`` section,
    which takes no more options)."""
    if isinstance(method, bool) or not isinstance(method, str):
        raise ValidationError(f"method={method!r} is a {type(method).__name__}; fix: give a "
                              f"method name, one of {sorted(METHODS)} or {PowerRun.name!r}")
    run = run_named(scenario, method, options)
    if run is None or (options and not run.takes_options):
        raise ValidationError(f"method={method!r} runs the scenario's [power] section; "
                              + ("it has none; fix: add one (docs/scenarios.md, \"Power\")"
                                 if run is None else
                                 f"options {sorted(options)} are not used; fix: set them in the "
                                 "[power] section"))
    if run.takes_options:
        run.check(coupled=scenario.problem.get("interference", "full") != "full")
    return run


def served_share(rate_mbps: np.ndarray, demand_mbps: np.ndarray) -> float:
    """The share of users whose rate is at least (1 − :data:`SERVED_RTOL`) × their demand.

    Users with an infinite demand never count as served; no user gives NaN.
    """
    if not len(rate_mbps):
        return math.nan
    return float(np.mean(rate_mbps >= (1.0 - SERVED_RTOL) * demand_mbps))


def capacity(
    scenario: Scenario,
    *,
    metric: str = "p5_rate",
    target_p5_mbps: float = 1.0,
    target_served_share: float = 0.95,
    drops: int = 3,
    seeds: Sequence[int] | None = None,
    method: str = "dual",
    first_guess_per_km2: float = 100.0,
    rel_tol: float = 0.05,
    max_evals: int = 30,
    min_density_per_km2: float = 1.0,
    max_density_per_km2: float = 1e6,
    callback: Callable[[dict[str, Any]], None] | None = None,
    evaluations: pd.DataFrame | None = None,
    **options: Any,
) -> CapacityResult:
    """Largest user density meeting a target, by bisection (see the module docstring).

    Parameters
    ----------
    scenario : Scenario
        Its ``[users]`` density is replaced by the densities tried.
    metric : str
        ``"p5_rate"`` (the 5th-percentile rate meets `target_p5_mbps`) or ``"demand"``
        (a share `target_served_share` of the users receive their demand; needs
        finite ``[users] demand_mbps``).
    target_p5_mbps : float
        Target 5th-percentile rate [Mbit/s] over all users of all drops.
    target_served_share : float
        Share of users, in (0, 1], that must receive their demand (0.95).
    drops : int
        Drops per density, ≥ 1 (ignored if `seeds` is given).
    seeds : sequence of int, optional
        Drop seeds (integers ≥ 0, at least one), the same at every density. Default: the
        first `drops` drop seeds of the scenario's base seed (as :attr:`Scenario.seeds`).
    method : str
        Solver (any registered method, baselines included), or ``"power"``: the
        scenario's ``[power]`` section (power patterns with the association).
    first_guess_per_km2 : float
        Where the bracketing starts [users/km²], within the two bounds below.
    rel_tol : float
        Stop when upper / capacity ≤ 1 + rel_tol; in (0, 1).
    max_evals : int
        Most densities evaluated (≥ 1).
    min_density_per_km2, max_density_per_km2 : float
        The bracketing stays within these: finite, > 0, min < max.
    callback : callable, optional
        Called with each new evaluation row (to write it out as the search goes).
    evaluations : pandas.DataFrame, optional
        Rows of an earlier, interrupted search with the same scenario, seeds and method
        (as passed to `callback`): densities found there are reused, not solved
        again, so the search resumes where it stopped.
    **options
        Passed to :func:`cellopt.solve`.

    Returns
    -------
    CapacityResult

    Raises
    ------
    ValidationError
        For an unknown metric, a target, densities or tolerance out of range, a count
        that is not a whole number ≥ 1, empty or non-integer seeds, an unknown method or
        options it does not take, or the demand metric on a scenario whose users want
        infinite rates; each naming the argument and the fix.
    """
    _check_scenario(scenario)
    check_metric(scenario, metric, target_p5_mbps, target_served_share)
    _run_of(scenario, method, options)  # a bad method fails now, not at the first density
    first_guess_per_km2, min_density_per_km2, max_density_per_km2, rel_tol, max_evals = \
        _check_search(first_guess_per_km2=first_guess_per_km2,
                      min_density_per_km2=min_density_per_km2,
                      max_density_per_km2=max_density_per_km2, rel_tol=rel_tol,
                      max_evals=max_evals)
    drops = check_count(drops, "drops", minimum=1, fix="give a whole number of drops ≥ 1 per "
                        "density, e.g. 3")
    check_callable(callback, "callback", fix="give a function of one dict (an evaluation row), "
                   "or None")
    if evaluations is not None and not (isinstance(evaluations, pd.DataFrame)
                                        and set(_LOG_COLUMNS[:5]) <= set(evaluations.columns)):
        raise ValidationError(f"evaluations is a {type(evaluations).__name__} without the columns "
                              f"{_LOG_COLUMNS[:5]}; fix: give the rows passed to callback by an "
                              "earlier search (a DataFrame), or None")
    seeds = drop_seeds(scenario.seed_base, drops) if seeds is None else check_seeds(seeds)
    rows: list[dict[str, Any]] = []
    known = [] if evaluations is None else evaluations.to_dict("records")

    def meets_target(row: Mapping[str, Any]) -> bool:
        if row["n_users"] == 0:  # no user: nobody unserved
            return True
        if metric == "demand":
            return bool(row["served_share"] >= target_served_share)
        return bool(row["rate_p5_mbps"] >= target_p5_mbps)

    def meets(density: float) -> bool:
        earlier = [r for r in known if math.isclose(r["density_per_km2"], density, rel_tol=1e-9)]
        if earlier:  # the search is deterministic: an interrupted run asked for this density too
            row = {**earlier[0], "meets_target": meets_target(earlier[0])}
            rows.append(row)
            return row["meets_target"]
        t0 = time.perf_counter()
        rates, demands = _pooled(scenario, density, seeds, method, **options)
        n = len(rates)
        p5, p50 = np.percentile(rates, [5, 50]) if n else (np.nan, np.nan)
        row = dict(density_per_km2=density, rate_p5_mbps=float(p5), rate_p50_mbps=float(p50),
                   served_share=served_share(rates, demands), n_users=n,
                   wall_s=time.perf_counter() - t0)
        row["meets_target"] = meets_target(row)
        rows.append(row)
        if callback is not None:
            callback(dict(row))
        return row["meets_target"]

    lo, hi = 0.0, math.inf
    d = float(first_guess_per_km2)
    # Bracket: double while the target is met, halve while it is not.
    while len(rows) < max_evals:
        if meets(d):
            lo = d
            if hi < math.inf or d >= max_density_per_km2:
                break
            d = min(2.0 * d, max_density_per_km2)
        else:
            hi = d
            if lo > 0 or d <= min_density_per_km2:
                break
            d = max(0.5 * d, min_density_per_km2)
    # Bisect in log space.
    while lo > 0 and hi < math.inf and hi / lo > 1.0 + rel_tol and len(rows) < max_evals:
        d = math.sqrt(lo * hi)
        if meets(d):
            lo = d
        else:
            hi = d
    done = (lo > 0 and hi / lo <= 1.0 + rel_tol) or (lo == 0 and hi <= min_density_per_km2) \
        or (hi == math.inf and lo >= max_density_per_km2)
    return CapacityResult(capacity_per_km2=lo, upper_per_km2=hi, target_p5_mbps=target_p5_mbps,
                          evaluations=pd.DataFrame(rows), status="solved" if done else "max_evals",
                          metric=metric, target_served_share=target_served_share)


def check_metric(scenario: Scenario, metric: str, target_p5_mbps: float,
                 target_served_share: float) -> None:
    """Raise a ValidationError for an unknown metric or a target out of range."""
    if isinstance(metric, bool) or not isinstance(metric, str) or metric not in METRICS:
        raise ValidationError(f"metric={metric!r}; fix: use one of {list(METRICS)}")
    check_number(target_p5_mbps, "target_p5_mbps", low=0.0, low_open=True, unit="Mbit/s",
                 fix="a finite rate > 0 in Mbit/s, e.g. 1.0")
    check_number(target_served_share, "target_served_share", low=0.0, high=1.0, low_open=True,
                 fix="a share in (0, 1], e.g. 0.95")
    demand = scenario.users.get("demand_mbps", math.inf)
    if metric == "demand" and isinstance(demand, float) and demand == math.inf:
        raise ValidationError(f"{scenario.path}: metric='demand' but [users] demand_mbps is inf (full "
                              "buffer: nobody's demand is ever met); fix: give a finite demand_mbps "
                              "or use metric='p5_rate'")


#: The keywords of :func:`capacity` that :func:`capacity_sweep` passes on through its
#: ``**options`` (the others it sets itself); the rest go to the solver.
SEARCH_OPTIONS = ("first_guess_per_km2", "rel_tol", "max_evals", "min_density_per_km2",
                  "max_density_per_km2")


def _check_scenario(scenario: Any) -> None:
    if not isinstance(scenario, Scenario):
        raise ValidationError(f"scenario is a {type(scenario).__name__}; fix: give a Scenario, "
                              "e.g. cellopt.load_scenario('scenario.toml')")


def _check_search(*, first_guess_per_km2: Any = 100.0, min_density_per_km2: Any = 1.0,
                  max_density_per_km2: Any = 1e6, rel_tol: Any = 0.05, max_evals: Any = 30
                  ) -> tuple[float, float, float, float, int]:
    """The bracketing settings of :func:`capacity`, checked: densities finite and > 0 with
    min < max and the first guess between them, ``rel_tol`` in (0, 1), ``max_evals`` ≥ 1."""
    fix = "give a finite density > 0 in users per km²"
    first, low, high = (check_number(v, name, low=0.0, low_open=True, unit="per km²", fix=fix)
                        for name, v in (("first_guess_per_km2", first_guess_per_km2),
                                        ("min_density_per_km2", min_density_per_km2),
                                        ("max_density_per_km2", max_density_per_km2)))
    if not low < high:
        raise ValidationError(f"min_density_per_km2={low:g} is not below max_density_per_km2="
                              f"{high:g}; fix: give min_density_per_km2 < max_density_per_km2")
    if not low <= first <= high:
        raise ValidationError("densities must satisfy 0 < min_density_per_km2 ≤ first_guess_per_km2 "
                              f"≤ max_density_per_km2 (got {low:g}, {first:g}, {high:g}); fix: "
                              "move first_guess_per_km2 into the range")
    rel_tol = check_number(rel_tol, "rel_tol", low=0.0, high=1.0, low_open=True, high_open=True,
                           fix="give a relative tolerance in (0, 1), e.g. 0.05")
    max_evals = check_count(max_evals, "max_evals", minimum=1,
                            fix="give a whole number of densities ≥ 1, e.g. 30")
    return first, low, high, rel_tol, max_evals


# ---------------------------------------------------------------------------- sweeps
#: A task's evaluation log is appended a row at a time as each density finishes, and
#: rewritten whole (without a torn last line) when the task resumes; its result is written
#: last (the task's marker).
EVALUATIONS_FILE = OutputFile("evaluations/{task}.csv", write_table, what="every density tried")
RESULT_FILE = OutputFile("results/{task}.csv", write_table, what="the task's capacity")
TABLE_FILE = OutputFile("capacity.csv", write_table, what="all results, one row per task")
#: The files of a capacity sweep's folder (beside :data:`~cellopt.study.store.FOLDER_FILES`).
CAPACITY_FILES = (EVALUATIONS_FILE, RESULT_FILE, TABLE_FILE)
#: Columns of the capacity sweep's result rows (after the grid keys).
SWEEP_COLUMNS = ["grid_id", "method", "replicate", "capacity_per_km2", "upper_per_km2",
                 "metric", "target_p5_mbps", "target_served_share", "status", "n_evaluations",
                 "wall_s"]


def capacity_sweep(
    scenario: Scenario,
    out_dir: str | Path,
    *,
    grid: Mapping[str, Sequence[Any]] | None = None,
    methods: Sequence[str] = ("max_rsrp", "dual"),
    replicates: int = 3,
    drops: int = 2,
    metric: str = "p5_rate",
    target_p5_mbps: float = 1.0,
    target_served_share: float = 0.95,
    workers: int = 1,
    scheduler: Any = None,
    resume: bool = False,
    progress: bool | None = None,
    force: bool = False,
    **options: Any,
) -> pd.DataFrame:
    """:func:`capacity` at every grid point, for every method, in independent replicates.

    Replicate k pools drops ``k·drops … (k+1)·drops − 1`` of the scenario's seeds
    (``SeedSequence(seeds.base).spawn``) at every grid point and for every method, so
    capacities at two grid points, or of two methods, are paired comparisons; the spread
    over replicates is the Monte-Carlo error.

    Layout of `out_dir`::

        scenario.toml, meta.json            the scenario's text; version, seeds, settings
        evaluations/<task>.csv              every density tried, appended as it finishes
        results/<task>.csv                  the task's capacity (written last: its marker)
        capacity.csv                        all results, one row per task

    with ``<task> = <grid-id>_<method>_r<replicate>``. ``resume=True`` skips finished
    tasks and replays the densities an interrupted task had already evaluated.

    Parameters
    ----------
    scenario : Scenario
    out_dir : path
    grid : dict, optional
        ``{"section.key": [values]}`` as for :func:`~cellopt.study.sweep.run_sweep`.
    methods : sequence of str
        Registered method names, and ``"power"`` for the scenario's ``[power]`` section.
    replicates, drops : int
        Independent replicates, and drops pooled per density in each.
    metric, target_p5_mbps, target_served_share
        As for :func:`capacity`.
    workers, scheduler, progress
        As for :func:`~cellopt.study.tasks.run_tasks`.
    resume : bool
        Continue a sweep in `out_dir`; without it, a folder holding results is refused.
        Each finished result is checked first: a torn or foreign one is computed again,
        with a warning naming the file (its evaluation log is replayed).
    force : bool
        With `resume`: keep the results of a folder whose ``meta.json`` or
        ``scenario.toml`` is missing or unreadable, as results of this sweep.
    **options
        Passed to :func:`capacity` (``rel_tol``, ``first_guess_per_km2``, ...) and from
        there to :func:`cellopt.solve`; checked before any task runs.

    Returns
    -------
    pandas.DataFrame
        One row per (grid point, method, replicate): the grid keys and
        :data:`SWEEP_COLUMNS`; also written to ``out_dir/capacity.csv``.

    Raises
    ------
    ValidationError
        For bad counts, methods or grid, or `out_dir` an existing file.
    StoreError
        For a folder holding a sweep and ``resume=False``; on resume, for a folder whose
        ``meta.json`` or ``scenario.toml`` is missing (unless `force`) or that holds
        another scenario or other settings; for a result damaged after the run.
    """
    _check_scenario(scenario)
    replicates, drops, workers = (check_count(value, name, fix="give an integer ≥ 1", minimum=1)
                                  for name, value in (("replicates", replicates),
                                                      ("drops", drops), ("workers", workers)))
    resume, force = (check_bool(v, n) for n, v in (("resume", resume), ("force", force)))
    progress = shows(progress)
    check_metric(scenario, metric, target_p5_mbps, target_served_share)
    target = {"metric": metric, "target_p5_mbps": float(target_p5_mbps),
              "target_served_share": float(target_served_share)}
    if isinstance(methods, (str, bytes)) or not isinstance(methods, Sequence) or not methods:
        raise ValidationError(f"methods={methods!r}; fix: give a non-empty list of method names, "
                              "e.g. ['max_rsrp', 'dual']")
    unknown = [m for m in methods if not isinstance(m, str) or m not in run_names(scenario)]
    if unknown:
        raise ValidationError(f"unknown methods {unknown}; valid: {sorted(METHODS)}"
                              + (f" and {PowerRun.name!r} (the scenario's [power] section)"
                                 if scenario.power else "") + "; fix: use some of them")
    taken = sorted(set(options) & {"seeds", "drops", "method", "callback", "evaluations", "metric",
                                   "target_p5_mbps", "target_served_share"})
    if taken:
        raise ValidationError(f"options {taken} are set by capacity_sweep itself; fix: drop "
                              "them (give drops, methods and the target as its own arguments)")
    _check_search(**{k: v for k, v in options.items() if k in SEARCH_OPTIONS})
    solver_options = {k: v for k, v in options.items() if k not in SEARCH_OPTIONS}
    for method in methods:  # a handful of methods
        _run_of(scenario, method, solver_options)
    points = grid_points(grid)
    check_memory(len(points) * len(methods) * replicates * TASK_BYTES + replicates * drops * 64,
                 f"{len(points)} grid point(s) × {len(methods)} method(s) × {replicates} replicates",
                 "ask for fewer replicates or grid points")
    gids = grid_ids(points)
    seeds = drop_seeds(scenario.seed_base, replicates * drops)
    folder = ResultsFolder(out_dir, "capacity")
    out = folder.path
    n_results = len(list((out / "results").glob("g*.csv"))) if (out / "results").is_dir() else 0
    settings = {"seed_base": scenario.seed_base, "grid": {k: list(v) for k, v in (grid or {}).items()},
                "methods": list(methods), "replicates": replicates, "drops": drops,
                **target, "options": options}
    with folder:  # the folder's lock, held to the end, released on any error
        folder.open(scenario.path, settings, n_results=n_results, resume=resume, force=force,
                    subfolders=["evaluations", "results"])
        meta = folder.write_meta(drop_seeds=seeds, grid_points=dict(zip(gids, points, strict=True)))

        columns = ["grid_id", *meta["settings"]["grid"], *SWEEP_COLUMNS[1:]]
        tasks, every = [], []
        for point, gid in zip(points, gids, strict=True):
            sc = scenario.with_overrides(**overrides(point)) if point else scenario
            for method in methods:
                for k in range(replicates):
                    name = f"{gid}_{method}_r{k}"
                    every.append((name, gid, point, method, k))
                    result = RESULT_FILE.path(out, task=name)
                    if result.exists():
                        try:
                            _read_capacity_result(result, columns, gid, point, method, k, target)
                            continue
                        except Damaged as err:
                            warnings.warn(f"{result} is damaged: {err}; computing it again", stacklevel=2)
                    tasks.append((sc.raw, str(sc.path), point, gid, method, k,
                                  seeds[k * drops:(k + 1) * drops], target, options,
                                  str(out), name))
        run_tasks(_capacity_task, tasks, workers=workers, scheduler=scheduler, progress=progress,
                  unit="capacity")
        frames = []
        for name, gid, point, method, k in every:  # in grid, method, replicate order
            path = RESULT_FILE.path(out, task=name)
            try:
                frames.append(_read_capacity_result(path, columns, gid, point, method, k, target))
            except (Damaged, FileNotFoundError) as err:
                raise StoreError(f"{path} is damaged or missing ({err}); fix: run the sweep again with "
                                 "resume=True, which computes it again") from None
        table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=SWEEP_COLUMNS)
        TABLE_FILE.write_to(out, table)
        return table


def _read_capacity_result(path: Path, columns: Sequence[str], gid: str, point: Mapping[str, Any],
                          method: str, replicate: int, target: Mapping[str, Any]) -> pd.DataFrame:
    """One task's result row, checked to be whole and to be that task's; raise Damaged if not."""
    frame = read_whole_csv(path)
    if list(frame.columns) != list(columns):
        raise Damaged(f"its columns are {list(frame.columns)}, expected {list(columns)}")
    if len(frame) != 1:
        raise Damaged(f"it has {len(frame)} rows, expected 1")
    row = frame.iloc[0]
    if empty := [c for c in columns if pd.isna(row[c])]:
        raise Damaged(f"it has empty values in the columns {empty}")
    if str(row["grid_id"]) != gid or str(row["method"]) != method or row["replicate"] != replicate \
            or not all(same_value(row[k], v) for k, v in point.items()):
        raise Damaged(f"it is not the result of {gid}, {method}, replicate {replicate}")
    if not all(same_value(row[k], v) for k, v in target.items()) \
            or row["status"] not in ("solved", "max_evals"):
        raise Damaged("its target or status is not one this sweep writes")
    return frame


_LOG_COLUMNS = ["density_per_km2", "rate_p5_mbps", "rate_p50_mbps", "served_share", "n_users",
                "wall_s", "meets_target"]


def _read_log(log: Path) -> pd.DataFrame | None:
    """The whole rows of a task's evaluation log (a torn last line is left out), or None if the
    log cannot be used at all (then the search starts over, with a warning)."""
    raw = log.read_bytes()
    raw = raw[:raw.rfind(b"\n") + 1]  # the line being appended when the run stopped is cut
    try:
        frame = pd.read_csv(io.BytesIO(raw), on_bad_lines="skip") if raw else None
    except ValueError as err:  # unparseable, or not UTF-8
        warnings.warn(f"{log} is damaged ({err}); starting that capacity search over", stacklevel=2)
        return None
    if frame is None or list(frame.columns) != _LOG_COLUMNS:
        if frame is not None:
            warnings.warn(f"{log} has the columns {list(frame.columns)}, not {_LOG_COLUMNS}; starting "
                          "that capacity search over", stacklevel=2)
        return None
    for c in _LOG_COLUMNS[:6]:
        frame[c] = pd.to_numeric(frame[c], errors="coerce")
    return frame.dropna(subset=["density_per_km2", "n_users"])


def _capacity_task(raw: dict[str, Any], path: str, point: dict[str, Any], gid: str, method: str,
                   replicate: int, seeds: list[int], target: dict[str, Any],
                   options: dict[str, Any], out: str, name: str) -> None:
    """One capacity search of a sweep (module level: it runs in spawned workers)."""
    scenario = Scenario.from_dict(raw, path)
    log = EVALUATIONS_FILE.path(out, task=name)
    columns = _LOG_COLUMNS
    earlier = None
    if log.exists():  # an interrupted run: replay its densities, rewrite the log without torn lines
        earlier = _read_log(log)
        if earlier is None:
            log.unlink()
        else:
            EVALUATIONS_FILE.write_to(out, earlier, task=name)

    def write(row: dict[str, Any]) -> None:
        new = not log.exists() or log.stat().st_size == 0
        line = ",".join(float.__repr__(v) if isinstance(v, float) else str(v)  # round-trips
                        for v in (row[c] for c in columns))
        with open(log, "a", encoding="utf-8") as f:
            f.write((",".join(columns) + "\n" if new else "") + line + "\n")
            f.flush()
            os.fsync(f.fileno())

    t0 = time.perf_counter()
    res = capacity(scenario, **target, seeds=seeds, method=method, callback=write,
                   evaluations=earlier, **options)
    row = {"grid_id": gid, **point, "method": method, "replicate": replicate,
           "capacity_per_km2": res.capacity_per_km2, "upper_per_km2": res.upper_per_km2,
           **target, "status": res.status,
           "n_evaluations": len(res.evaluations), "wall_s": time.perf_counter() - t0}
    RESULT_FILE.write_to(out, pd.DataFrame([row]), task=name)
