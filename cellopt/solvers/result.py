"""Filling a :class:`~cellopt.Solution` from a method's shares and prices."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.certificate import certified_gap, dual_bound
from cellopt.solvers.common import energy_cost, feasible_shares, loads, objective_terms

__all__ = ["build_solution"]


def build_solution(
    problem: Problem,
    x: np.ndarray,
    *,
    method: str,
    status: str,
    message: str,
    mu: np.ndarray | None,
    nu: np.ndarray | None,
    n_iter: int,
    wall_s: float,
    history: pd.DataFrame | list[dict] | None = None,
    upper_bound: float | None = None,
    exceeded_backhaul: np.ndarray | None = None,
    theta: np.ndarray | None = None,
) -> Solution:
    """Fill every field of a :class:`Solution` from shares and prices.

    `x` must be feasible (pass it through :func:`repair`, with the same `theta` for free
    pattern shares). With prices and no explicit `upper_bound`, the bound is g(μ, ν) at
    those prices.
    """
    rate, airtime, traffic = loads(problem, x)
    util, cost = objective_terms(problem, x)
    theta = feasible_shares(problem, theta)
    energy = energy_cost(problem, theta)
    mu = np.zeros(problem.n_groups) if mu is None else np.maximum(np.asarray(mu, float), 0.0)
    nu = np.zeros(problem.n_cells) if nu is None else np.maximum(np.asarray(nu, float), 0.0)
    nu = np.where(np.isfinite(problem.backhaul_mbps), nu, 0.0)
    if upper_bound is None:
        upper_bound = dual_bound(problem, mu, nu)
    objective = util - cost - energy
    serving = np.full(problem.n_users, -1, dtype=np.int64)
    flow = problem.rate_mbps * x
    per_cell = pd.DataFrame({"u": problem.user, "c": problem.cell, "f": flow})
    per_cell = per_cell.groupby(["u", "c"], sort=False)["f"].sum().reset_index()
    top = per_cell.sort_values(["u", "f"], ascending=[True, False]).drop_duplicates("u")
    top = top[top["f"] > 0]
    serving[top["u"].to_numpy()] = top["c"].to_numpy()
    if history is None:
        history = []
    history = history if isinstance(history, pd.DataFrame) else pd.DataFrame(history)
    offload = None
    if problem.third_party is not None:
        total = traffic.sum()
        offload = float(traffic[problem.third_party].sum() / total) if total > 0 else 0.0
    return Solution(
        status=status, message=message, method=method, utility=util, cost=cost,
        energy_cost=energy, objective=objective, upper_bound=upper_bound,
        gap=certified_gap(problem, upper_bound, objective, util),
        n_iter=int(n_iter), wall_s=float(wall_s), history=history, x=x,
        user_rate_mbps=rate, cell_airtime=airtime.reshape(problem.n_cells, problem.n_resources),
        cell_traffic_mbps=traffic,
        prices={"airtime": mu.reshape(problem.n_cells, problem.n_resources), "backhaul": nu},
        serving_cell=serving,
        exceeded_backhaul=np.zeros(0, np.int64) if exceeded_backhaul is None
        else np.asarray(exceeded_backhaul, np.int64),
        pattern_share=theta, bound_kind=None if upper_bound is None else "problem",
        cell_payment=problem.price_per_mbps * traffic, offload_share=offload,
    )
