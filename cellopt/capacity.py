"""Capacity: the largest user density a network serves at a target cell-edge rate.

Capacity is the largest density of users [users/km²] at which the 5th-percentile user
rate, pooled over several drops, is at least a target (1 Mbit/s by default). The
5th-percentile rate falls as users are added, so the capacity is found by bracketing
(doubling or halving from a first guess) and then bisecting the density in log space.
Every density uses the same drop seeds (common random numbers), which keeps the
estimate of the rate-vs-density curve smooth. Users in outage (no usable link) count
with rate 0, and only the users of the study area count (a guard band's users are
solved for but left out, see :func:`cellopt.topology.study_window`).

:func:`capacity_sweep` runs the search at every point of a parameter grid (femtocell
adoption, say) for several methods in independent replicates, resumably, so that
capacity gains come with a Monte-Carlo error.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cellopt.runner import _atomic_write, _overrides, grid_points, run_tasks
from cellopt.scenario import Scenario, drop_seeds
from cellopt.solvers import METHODS, solve

__all__ = ["CapacityResult", "capacity", "capacity_sweep", "pooled_rates_mbps"]


@dataclass
class CapacityResult:
    """Result of :func:`capacity`.

    Attributes
    ----------
    capacity_per_km2 : float
        Largest density evaluated whose pooled 5th-percentile rate meets the target
        (0 if even the lowest density tried misses it).
    upper_per_km2 : float
        Smallest density evaluated that misses the target (inf if none did): the
        capacity lies in [capacity_per_km2, upper_per_km2].
    target_p5_mbps : float
    evaluations : pandas.DataFrame
        One row per density tried: ``density_per_km2, rate_p5_mbps, rate_p50_mbps,
        n_users, meets_target, wall_s``.
    status : str
        "solved" when the bracket is within `rel_tol`, "max_evals" otherwise.
    """

    capacity_per_km2: float
    upper_per_km2: float
    target_p5_mbps: float
    evaluations: pd.DataFrame
    status: str


def pooled_rates_mbps(scenario: Scenario, density_per_km2: float, seeds: Sequence[int],
                      method: str = "alm", **options: Any) -> tuple[np.ndarray, int]:
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
    users = {k: v for k, v in scenario.raw["users"].items() if k != "n"}  # density replaces n
    raw = {**scenario.raw, "users": {**users, "density_per_km2": float(density_per_km2)}}
    scen = Scenario.from_dict(raw, scenario.path)
    rates = []
    for seed in seeds:  # a few drops: a loop over runs, not over data
        net, links, problem = scen.build(seed)
        rate = np.zeros(net.n_users)  # users in outage keep rate 0
        if problem.n_users:
            rate[links.users_with_rate()] = solve(problem, method=method, **options).user_rate_mbps
        rates.append(rate[net.in_study_area()])
    rates = np.concatenate(rates)
    return rates, len(rates)


def capacity(
    scenario: Scenario,
    *,
    target_p5_mbps: float = 1.0,
    drops: int = 3,
    seeds: Sequence[int] | None = None,
    method: str = "alm",
    first_guess_per_km2: float = 100.0,
    rel_tol: float = 0.05,
    max_evals: int = 30,
    min_density_per_km2: float = 1.0,
    max_density_per_km2: float = 1e6,
    callback: Callable[[dict[str, Any]], None] | None = None,
    evaluations: pd.DataFrame | None = None,
    **options: Any,
) -> CapacityResult:
    """Largest user density meeting a 5th-percentile rate target, by bisection.

    Parameters
    ----------
    scenario : Scenario
        Its ``[users]`` density is replaced by the densities tried.
    target_p5_mbps : float
        Target 5th-percentile rate [Mbit/s] over all users of all drops.
    drops : int
        Drops per density (ignored if `seeds` is given).
    seeds : sequence of int, optional
        Drop seeds, the same at every density. Default: the first `drops` drop seeds of
        the scenario's base seed (as :attr:`Scenario.seeds`).
    method : str
        Solver (any registered method, baselines included).
    first_guess_per_km2 : float
        Where the bracketing starts [users/km²].
    rel_tol : float
        Stop when upper / capacity ≤ 1 + rel_tol.
    max_evals : int
        Most densities evaluated.
    min_density_per_km2, max_density_per_km2 : float
        The bracketing stays within these.
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
    """
    if not target_p5_mbps > 0:
        raise ValueError(f"target_p5_mbps={target_p5_mbps}; fix: a rate > 0 in Mbit/s")
    if not (0 < min_density_per_km2 <= first_guess_per_km2 <= max_density_per_km2):
        raise ValueError("densities must satisfy 0 < min_density_per_km2 ≤ first_guess_per_km2 "
                         f"≤ max_density_per_km2 (got {min_density_per_km2}, "
                         f"{first_guess_per_km2}, {max_density_per_km2})")
    if not rel_tol > 0:
        raise ValueError(f"rel_tol={rel_tol}; fix: a tolerance > 0")
    if seeds is None:
        seeds = drop_seeds(scenario.seed_base, int(drops))
    rows: list[dict[str, Any]] = []
    known = [] if evaluations is None else evaluations.to_dict("records")

    def meets(density: float) -> bool:
        earlier = [r for r in known if math.isclose(r["density_per_km2"], density, rel_tol=1e-9)]
        if earlier:  # the search is deterministic: an interrupted run asked for this density too
            row = {**earlier[0], "meets_target": bool(earlier[0]["n_users"] == 0
                                                      or earlier[0]["rate_p5_mbps"] >= target_p5_mbps)}
            rows.append(row)
            return row["meets_target"]
        t0 = time.perf_counter()
        rates, n = pooled_rates_mbps(scenario, density, seeds, method, **options)
        p5, p50 = np.percentile(rates, [5, 50]) if n else (np.nan, np.nan)
        row = dict(density_per_km2=density, rate_p5_mbps=float(p5), rate_p50_mbps=float(p50),
                   n_users=n, wall_s=time.perf_counter() - t0)
        row["meets_target"] = bool(n == 0 or p5 >= target_p5_mbps)  # no user: nobody unserved
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
                          evaluations=pd.DataFrame(rows), status="solved" if done else "max_evals")


# ---------------------------------------------------------------------------- sweeps
#: Columns of the capacity sweep's result rows (after the grid keys).
SWEEP_COLUMNS = ["grid_id", "method", "replicate", "capacity_per_km2", "upper_per_km2",
                 "target_p5_mbps", "status", "n_evaluations", "wall_s"]


def capacity_sweep(
    scenario: Scenario,
    out_dir: str | Path,
    *,
    grid: Mapping[str, Sequence[Any]] | None = None,
    methods: Sequence[str] = ("max_rsrp", "alm"),
    replicates: int = 3,
    drops: int = 2,
    target_p5_mbps: float = 1.0,
    workers: int = 1,
    scheduler: Any = None,
    resume: bool = False,
    progress: bool = True,
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
        ``{"section.key": [values]}`` as for :func:`cellopt.runner.run_sweep`.
    methods : sequence of str
        Registered method names.
    replicates, drops : int
        Independent replicates, and drops pooled per density in each.
    target_p5_mbps : float
    workers, scheduler, progress
        As for :func:`cellopt.runner.run_tasks`.
    resume : bool
        Continue a sweep in `out_dir`; without it, a folder holding results is refused.
    **options
        Passed to :func:`capacity` (``rel_tol``, ``first_guess_per_km2``, ...) and from
        there to :func:`cellopt.solve`.

    Returns
    -------
    pandas.DataFrame
        One row per (grid point, method, replicate): the grid keys and
        :data:`SWEEP_COLUMNS`; also written to ``out_dir/capacity.csv``.
    """
    for name, value in (("replicates", replicates), ("drops", drops), ("workers", workers)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name}={value!r}; fix: give an integer ≥ 1")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; valid: {sorted(METHODS)}")
    points = grid_points(grid)
    gids = [f"g{i:03d}" for i in range(len(points))]
    seeds = drop_seeds(scenario.seed_base, replicates * drops)
    out = Path(out_dir)
    text = Path(scenario.path).read_text(encoding="utf-8")
    settings = {"seed_base": scenario.seed_base, "grid": {k: list(v) for k, v in (grid or {}).items()},
                "methods": list(methods), "replicates": replicates, "drops": drops,
                "target_p5_mbps": target_p5_mbps, "options": options}
    meta_path = out / "meta.json"
    if meta_path.exists():
        old = json.loads(meta_path.read_text(encoding="utf-8"))
        if not resume:
            raise ValueError(f"{out} already holds a capacity sweep; fix: pass resume=True to "
                             "continue it, or give another out_dir")
        if old.get("settings") != json.loads(json.dumps(settings, default=str)) \
                or (out / "scenario.toml").read_text(encoding="utf-8") != text:
            raise ValueError(f"{out} holds a sweep of another scenario or other settings; fix: "
                             "give another out_dir")
    import cellopt

    for sub in ("evaluations", "results"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    _atomic_write(out / "scenario.toml", lambda f: f.write(text))
    _atomic_write(meta_path, lambda f: json.dump({
        "cellopt_version": cellopt.__version__, "scenario": str(Path(scenario.path).resolve()),
        "written": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "drop_seeds": seeds, "grid_points": dict(zip(gids, points, strict=True)),
        "settings": settings}, f, indent=2, default=str))

    tasks = []
    for point, gid in zip(points, gids, strict=True):
        sc = scenario.with_overrides(**_overrides(point)) if point else scenario
        for method in methods:
            for k in range(replicates):
                name = f"{gid}_{method}_r{k}"
                if not (out / "results" / f"{name}.csv").exists():
                    tasks.append((sc.raw, str(sc.path), point, gid, method, k,
                                  seeds[k * drops:(k + 1) * drops], target_p5_mbps, options,
                                  str(out), name))
    run_tasks(_capacity_task, tasks, workers=workers, scheduler=scheduler, progress=progress,
              unit="capacity")
    files = sorted((out / "results").glob("g*.csv"))
    table = pd.concat([pd.read_csv(f) for f in files], ignore_index=True) if files \
        else pd.DataFrame(columns=SWEEP_COLUMNS)
    order = {m: i for i, m in enumerate(methods)}
    table = table.sort_values(["grid_id", "method", "replicate"], key=lambda c: c.map(order)
                              if c.name == "method" else c, ignore_index=True)
    _atomic_write(out / "capacity.csv", lambda f: table.to_csv(f, index=False))
    return table


def _capacity_task(raw: dict[str, Any], path: str, point: dict[str, Any], gid: str, method: str,
                   replicate: int, seeds: list[int], target_p5_mbps: float,
                   options: dict[str, Any], out: str, name: str) -> None:
    """One capacity search of a sweep (module level: it runs in spawned workers)."""
    scenario = Scenario.from_dict(raw, path)
    log = Path(out) / "evaluations" / f"{name}.csv"
    columns = ["density_per_km2", "rate_p5_mbps", "rate_p50_mbps", "n_users", "wall_s",
               "meets_target"]
    earlier = None
    if log.exists():  # an interrupted run: replay its densities, rewrite the log without
        earlier = pd.read_csv(log, on_bad_lines="skip").dropna(subset=columns[:4])  # torn lines
        _atomic_write(log, lambda f: earlier.to_csv(f, index=False))

    def write(row: dict[str, Any]) -> None:
        new = not log.exists() or log.stat().st_size == 0
        line = ",".join(float.__repr__(v) if isinstance(v, float) else str(v)  # round-trips
                        for v in (row[c] for c in columns))
        with open(log, "a", encoding="utf-8") as f:
            f.write((",".join(columns) + "\n" if new else "") + line + "\n")
            f.flush()
            os.fsync(f.fileno())

    t0 = time.perf_counter()
    res = capacity(scenario, target_p5_mbps=target_p5_mbps, seeds=seeds, method=method,
                   callback=write, evaluations=earlier, **options)
    row = {"grid_id": gid, **point, "method": method, "replicate": replicate,
           "capacity_per_km2": res.capacity_per_km2, "upper_per_km2": res.upper_per_km2,
           "target_p5_mbps": target_p5_mbps, "status": res.status,
           "n_evaluations": len(res.evaluations), "wall_s": time.perf_counter() - t0}
    _atomic_write(Path(out) / "results" / f"{name}.csv",
                  lambda f: pd.DataFrame([row]).to_csv(f, index=False))
