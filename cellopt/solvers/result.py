"""Filling a :class:`~cellopt.Solution` from a method's shares and prices, and the one
rule that decides whether it may be called optimal (:func:`apply_status_rule`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from cellopt.errors import ValidationError, describe_rows
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.certificate import certified_gap, dual_bound
from cellopt.solvers.common import energy_cost, feasible_shares, loads, objective_terms
from cellopt.status import FAILED, MAX_ITER, OPTIMAL, STATUSES

__all__ = ["apply_status_rule", "build_solution"]


def apply_status_rule(problem: Problem, sol: Solution, tol: float, *,
                      uncertified: str = MAX_ITER) -> Solution:
    """The status rule every answer goes through before it is returned.

    It is applied in one place for each way out of the solvers: :func:`cellopt.solve`
    (every registered method, single association, problems without links),
    :func:`cellopt.solve_power` (column generation) and
    :func:`cellopt.load_coupling.solve_load_coupled` (the load-coupling rounds).

    1. The gap is recomputed from what is reported:
       ``gap = certified_gap(problem, sol.upper_bound, sol.objective, sol.utility)``.
    2. An objective that is not finite (−inf: α ≥ 1 and a user at rate 0; NaN) is not an
       answer: status ``"failed"``, whatever the method said (a limit or a stop included;
       the message keeps why it ended and says why it failed).
    3. ``"optimal"`` stays only when the reported `upper_bound` is finite and certifies
       ``gap ≤ tol``; otherwise the status becomes `uncertified` and the message says
       why. Other statuses are kept (this rule never promotes one).

    Parameters
    ----------
    problem : Problem
        The problem `sol` answers, in the units of `sol` (weights and α give the gap).
    sol : Solution
        The answer as the method or loop built it.
    tol : float
        The rate-equivalent gap that ``"optimal"`` certifies (> 0).
    uncertified : str
        The status of an ``"optimal"`` claim the reported bound does not certify: one
        of :data:`~cellopt.status.STATUSES` that claims no certificate. ``"max_iter"``
        (default) for a single solve (the method stopped before its certificate reached
        `tol`); :func:`cellopt.solve_power` passes ``"converged"``.

    Returns
    -------
    Solution
        A copy of `sol` with `gap`, and where the rule applies `status` and `message`,
        replaced.
    """
    if uncertified not in STATUSES or uncertified == OPTIMAL:
        raise ValidationError(f"uncertified={uncertified!r}; fix: one of "
                         f"{sorted(set(STATUSES) - {OPTIMAL})}")
    upper, objective = sol.upper_bound, float(sol.objective)
    gap = certified_gap(problem, upper, objective, sol.utility)
    status, message = sol.status, sol.message
    if not np.isfinite(objective):
        why = f"the objective is {objective}, not an answer"
        if objective == -np.inf and len(sol.user_rate_mbps):
            starved = np.flatnonzero(sol.user_rate_mbps <= 0)
            why += (f": users {describe_rows(starved)} get rate 0, whose utility is −inf at "
                    f"alpha={problem.alpha:g}")
        status, message = FAILED, f"{message}; {why}"
    elif status == OPTIMAL and (upper is None or not np.isfinite(upper) or gap is None
                                or not gap <= tol):
        why = ("no upper bound was computed" if upper is None
               else f"the reported upper bound {upper!r} gives gap {gap} > tol={tol:g}")
        status, message = uncertified, f"{message}; not certified ({why}): status {uncertified!r}"
    return dataclasses.replace(sol, gap=gap, status=status, message=message)


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
    serving = serving_cells(problem, problem.rate_mbps * x)
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
        network_fingerprint=problem.network_fingerprint,
    )


def serving_cells(problem: Problem, flow: np.ndarray) -> np.ndarray:
    """The cell that carries most of each user's traffic, shape (n_users,) (−1: no traffic).

    `flow`, shape (L,), is the traffic of every link [Mbps]; a user's links to one cell
    (one per resource) count together. Ties go to the first such cell in link order.
    """
    serving = np.full(problem.n_users, -1, dtype=np.int64)
    if not len(flow):
        return serving
    key = problem.user.astype(np.int64) * problem.n_cells + problem.cell
    if problem.n_resources > 1:  # sum a user's links to one cell (links are sorted by user)
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        flow, key = np.add.reduceat(flow[order], starts), key[starts]
    user, cell = np.divmod(key, problem.n_cells)
    first = np.flatnonzero(np.r_[True, user[1:] != user[:-1]])
    top = np.maximum.reduceat(flow, first)
    at_top = np.flatnonzero((flow == np.repeat(top, np.diff(np.r_[first, len(flow)])))
                            & (flow > 0))
    at_top = at_top[np.r_[True, user[at_top][1:] != user[at_top][:-1]][:len(at_top)]]
    serving[user[at_top]] = cell[at_top]
    return serving
