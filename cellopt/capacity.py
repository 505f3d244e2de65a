"""Capacity: the largest user density a network serves at a target cell-edge rate (DESIGN §4).

Capacity is the largest density of users [users/km²] at which the 5th-percentile user
rate, pooled over several drops, is at least a target (1 Mbit/s by default). The
5th-percentile rate falls as users are added, so the capacity is found by bracketing
(doubling or halving from a first guess) and then bisecting the density in log space.
Every density uses the same drop seeds (common random numbers), which keeps the
estimate of the rate-vs-density curve smooth. Users in outage (no usable link) count
with rate 0.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from cellopt.scenario import Scenario, drop_seeds
from cellopt.solvers import solve

__all__ = ["CapacityResult", "capacity", "pooled_rates_mbps"]


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
    """Every user's rate over the drops of `scenario` at one user density (pooled).

    Returns
    -------
    rates : ndarray, shape (total users,)
        [Mbit/s]; users in outage have rate 0.
    n_users : int
    """
    users = {k: v for k, v in scenario.raw["users"].items() if k != "n"}  # density replaces n
    raw = {**scenario.raw, "users": {**users, "density_per_km2": float(density_per_km2)}}
    scen = Scenario.from_dict(raw, scenario.path)
    rates = []
    for seed in seeds:  # a few drops: a loop over runs, not over data
        net, _, problem = scen.build(seed)
        served = solve(problem, method=method, **options).user_rate_mbps if problem.n_users \
            else np.zeros(0)
        # Only the pooled distribution matters: users in outage are appended at rate 0.
        rates.append(np.r_[served, np.zeros(net.n_users - problem.n_users)])
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
        Called with each evaluation row.
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

    def meets(density: float) -> bool:
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
