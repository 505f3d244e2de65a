"""A fixed association made an answer: what every baseline does once each user has its cell.

A baseline rule picks one serving cell per user (−1 for a user without links);
:func:`baseline_solution` then shares each cell's airtime optimally among its users
(:func:`in_cell_shares`: without backhaul caps, with the prices c_j; in closed form for
one resource, :func:`in_cell_optimum`, by an inner convex solver for several), scales
down the shares of the cells over their backhaul cap (reported in
``Solution.exceeded_backhaul``) and builds the :class:`~cellopt.Solution`, whose prices
are the in-cell airtime prices μ (ν = 0) and whose upper bound is the dual function
``g(μ, 0)``. :func:`check_baseline` checks a baseline's arguments and its inner solver;
:class:`Pairs` and :func:`argmax_per_user` pick each user's cell by a score per
(user, cell) pair, vectorized.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from cellopt.checks import check_array
from cellopt.errors import ValidationError
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.api import solve
from cellopt.solvers.arguments import check_arguments, check_inner, check_problem
from cellopt.solvers.certificate import certified_gap, dual_bound
from cellopt.solvers.common import best_rate, loads, objective_terms, repair
from cellopt.solvers.registry import method_info, methods_with
from cellopt.solvers.result import build_solution
from cellopt.status import OPTIMAL, SOLVED

__all__ = ["Callback", "Pairs", "argmax_per_user", "baseline_solution", "call_with_row", "check_baseline",
           "in_cell_optimum", "in_cell_shares"]

#: Log-space bisection steps for the in-cell airtime price (bracket of ≤ ~700 in log μ
#: → relative precision ≤ 700 / 2^64 ≈ 4e-17).
_BISECTION_STEPS = 64

#: A method's ``callback``: called with a history row (a dict); True asks it to stop.
Callback = Callable[[dict[str, Any]], bool | None] | None


# ============================================================================ in-cell shares
def in_cell_shares(
    problem: Problem,
    serving_cell: np.ndarray,
    *,
    tol: float = 1e-4,
    time_limit_s: float | None = None,
    inner_method: str = "dual",
    inner_options: Mapping[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray, str | None, str]:
    """Optimal shares for a fixed association, without backhaul caps.

    Solves the problem restricted to the links of each user's serving cell, with every
    backhaul cap removed and the prices c_j kept. With one resource this is exact in closed
    form per cell: user i in cell j gets ``r_i = min(d_i, R_i, (w_i / (μ_j / R_i + c_j))^(1/α))``
    (α > 0), with μ_j ≥ 0 found by log-space bisection (all cells at once) so that
    ``Σ_i r_i / R_i = 1``, or μ_j = 0 if the users' demands at μ_j = 0 already fit; for
    α = 0 airtime goes greedily by decreasing ``(w_i − c_j) R_i > 0`` up to the demand caps
    and μ_j is the value of the marginal user. With several resources the restricted
    problem is solved by ``cellopt.solve(restricted, method=inner_method, tol=tol)``.

    Parameters
    ----------
    problem : Problem
    serving_cell : ndarray of int, shape (n_users,)
        Cell of each user (−1: none).
    tol : float
        Relative gap for the inner solver.
    time_limit_s : float, optional
        Wall-clock budget [s] for the inner solver.
    inner_method : str
        Registered method for several resources (ignored for one resource): one that
        solves the convex problem (``method_info(name).convex``: an optimizer or the
        reference).
    inner_options : dict, optional
        Extra keywords for the inner solver.

    Returns
    -------
    x : ndarray, shape (L,)
        Shares on the problem's links (0 off the serving cells); airtime-feasible and
        within the demands, not necessarily within the backhaul caps.
    mu : ndarray, shape (n_cells, n_resources)
        Airtime prices of the restricted problem (≥ 0) [utility per unit airtime].
    inner_status : str or None
        The inner solver's status (None for the closed form).
    how : str
        A short description of how the shares were computed.
    """
    check_problem(problem)
    serving_cell = check_array(serving_cell, "serving_cell", shape=(problem.n_users,), kind="int",
                               low=-1, high=problem.n_cells - 1,
                               fix=f"give each user's cell in [0, {problem.n_cells}) or -1 for "
                                   f"none, shape ({problem.n_users},)")
    inner_options = check_inner(inner_method, inner_options, tol=tol, time_limit_s=time_limit_s)
    keep = np.flatnonzero(problem.cell == serving_cell[problem.user])
    sub = problem.restrict(keep).replace(backhaul_mbps=np.full(problem.n_cells, np.inf))
    x = np.zeros(problem.n_links)
    if problem.n_resources == 1:
        x_sub, mu = _single_resource_shares(sub)
        x[keep] = x_sub
        return x, mu.reshape(problem.n_cells, 1), None, "in-cell shares optimal in closed form"
    if not method_info(inner_method).convex:
        raise ValidationError(f"inner_method={inner_method!r} is a baseline; fix: use a solver of the "
                              f"convex problem: one of {methods_with('convex')}")
    inner = solve(sub, method=inner_method, tol=tol, time_limit_s=time_limit_s,
                  **dict(inner_options or {}))
    x[keep] = inner.x
    mu = np.maximum(np.asarray(inner.prices["airtime"], float), 0.0)
    mu = mu.reshape(problem.n_cells, problem.n_resources)
    return x, mu, inner.status, f"in-cell shares by {inner_method!r} ({inner.status})"


def _single_resource_shares(sub: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form in-cell optimum for K = 1 when each user has at most one link.

    Returns
    -------
    x : ndarray, shape (L_sub,)
    mu : ndarray, shape (n_cells,)
    """
    return in_cell_optimum(sub.cell, sub.rate_mbps, sub.weight[sub.user], sub.price_per_mbps[sub.cell],
                           np.minimum(sub.demand_mbps[sub.user], sub.rate_mbps), sub.alpha,
                           sub.n_cells)


def in_cell_optimum(group: np.ndarray, rate_mbps: np.ndarray, weight: np.ndarray,
                    price_per_mbps: np.ndarray, cap_mbps: np.ndarray, alpha: float,
                    n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Each group's airtime shared optimally among its members, all groups at once.

    A group is one cell's users on one resource, each with one link: member e gets the
    share x_e of the group's airtime, rate ``x_e R_e``, so as to maximize
    ``Σ_e w_e U(x_e R_e) − c_e x_e R_e`` subject to ``Σ_e x_e ≤ 1`` and ``x_e R_e ≤ cap_e``
    (the in-cell problem of :func:`in_cell_shares` with one resource). For α > 0 the
    airtime price μ_g of each group is found by log-space bisection, all groups at once
    (the shares are closed-form at a given μ); for α = 0 airtime goes greedily by
    decreasing ``(w_e − c_e) R_e``.

    Parameters
    ----------
    group : ndarray of int, shape (n,)
        Group of each member, in [0, n_groups).
    rate_mbps : ndarray, shape (n,)
        R_e > 0, the member's rate with the whole airtime [Mbit/s].
    weight, price_per_mbps : ndarray, shape (n,)
        w_e and c_e (the price of its cell's traffic [utility per Mbit/s]).
    cap_mbps : ndarray, shape (n,)
        Most useful rate, ``min(d_e, R_e)`` [Mbit/s].
    alpha : float
    n_groups : int

    Returns
    -------
    x : ndarray, shape (n,)
    mu : ndarray, shape (n_groups,)
        Airtime price of each group (0 where the members' demands fit).
    """
    cell, rate, w, c, cap = group, rate_mbps, weight, price_per_mbps, cap_mbps
    n_cells = n_groups
    mu = np.zeros(n_cells)
    if not len(cell):
        return np.zeros(0), mu
    if alpha == 0:
        return _greedy_linear(cell, (w - c) * rate, cap / rate, n_cells)

    def shares(mu_cell: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = best_rate(mu_cell[cell] / rate + c, w, alpha, cap) / rate
        return x, np.bincount(cell, x, minlength=n_cells)

    x, total = shares(mu)
    need = total > 1.0
    if not need.any():
        return x, mu
    # Upper bracket: with μ ≥ w_i R_i^(1−α) n_j^α every x_i ≤ 1/n_j, so Σ x ≤ 1.
    n_in = np.bincount(cell, minlength=n_cells)
    hi = np.zeros(n_cells)
    np.maximum.at(hi, cell, w * rate ** (1.0 - alpha) * n_in[cell] ** alpha)
    hi = np.where(need, 2.0 * hi, 1.0)
    # Lower bracket: shrink until Σ x > 1 (Σ x(μ) → Σ x(0) > 1 as μ → 0).
    lo = hi * 1e-6
    for _ in range(45):
        _, total = shares(np.where(need, lo, 0.0))
        short = need & (total <= 1.0)
        if not short.any():
            break
        lo = np.where(short, lo * 1e-6, lo)
    for _ in range(_BISECTION_STEPS):
        mid = np.sqrt(lo * hi)
        _, total = shares(np.where(need, mid, 0.0))
        over = total > 1.0
        lo, hi = np.where(over, mid, lo), np.where(over, hi, mid)
    mu = np.where(need, hi, 0.0)  # the feasible side of the bracket: Σ x ≤ 1
    x, _ = shares(mu)
    return x, mu


def _greedy_linear(cell: np.ndarray, value: np.ndarray, x_cap: np.ndarray,
                   n_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Fractional knapsack per cell: airtime by decreasing value per unit airtime.

    Parameters
    ----------
    cell : ndarray of int, shape (n,)
    value : ndarray, shape (n,)
        ``(w_i − c_j) R_i`` [utility per unit airtime]; only positive values get airtime.
    x_cap : ndarray, shape (n,)
        Largest useful share ``min(d_i, R_i) / R_i``.
    n_cells : int

    Returns
    -------
    x : ndarray, shape (n,)
    mu : ndarray, shape (n_cells,)
        Value of each cell's marginal user (0 if airtime is left over).
    """
    x = np.zeros(len(cell))
    mu = np.zeros(n_cells)
    pos = np.flatnonzero(value > 0)
    if not len(pos):
        return x, mu
    order = pos[np.lexsort((-value[pos], cell[pos]))]
    g, xc = cell[order], x_cap[order]
    first = np.r_[True, g[1:] != g[:-1]]
    before = np.cumsum(xc) - xc  # airtime handed out earlier, over all cells
    before -= before[np.flatnonzero(first)][np.cumsum(first) - 1]  # … within the cell
    x[order] = np.clip(1.0 - before, 0.0, xc)
    marginal = (before < 1.0) & (before + xc >= 1.0)
    mu[g[marginal]] = value[order][marginal]
    return x, mu


# ============================================================================ pairs
class Pairs:
    """The problem's distinct (user, cell) pairs, sorted by user then cell.

    Attributes
    ----------
    user, cell : ndarray of int64, shape (P,)
    of_link : ndarray of int64, shape (L,)
        Pair of each link.
    rate : ndarray, shape (P,)
        Full-band rate ``R_ij = Σ_k R_ijk`` [Mbit/s].
    """

    def __init__(self, problem: Problem):
        key = problem.user * problem.n_cells + problem.cell
        uniq, self.of_link = np.unique(key, return_inverse=True)
        self.of_link = self.of_link.reshape(-1)
        self.user, self.cell = uniq // problem.n_cells, uniq % problem.n_cells
        self.rate = self.sum_per_pair(problem.rate_mbps)

    def sum_per_pair(self, values: np.ndarray) -> np.ndarray:
        """Per-link `values`, shape (L,), summed over each pair's links, shape (P,)."""
        return np.bincount(self.of_link, values, minlength=len(self.user))

    def max_per_pair(self, values: np.ndarray) -> np.ndarray:
        """The largest of each pair's per-link `values`, shape (P,)."""
        out = np.full(len(self.user), -np.inf)
        np.maximum.at(out, self.of_link, values)
        return out

    def cell_of(self, pair: np.ndarray) -> np.ndarray:
        """Cell of each user's pair (−1 where the pair is −1), shape (n_users,)."""
        return np.where(pair >= 0, self.cell[np.maximum(pair, 0)] if len(self.cell) else -1, -1)


def argmax_per_user(pair_user: np.ndarray, score: np.ndarray, n_users: int) -> np.ndarray:
    """Index of each user's pair of largest score (first on ties; −1: no pair), (n_users,)."""
    out = np.full(n_users, -1, np.int64)
    if len(pair_user):
        order = np.lexsort((-score, pair_user))
        u = pair_user[order]
        first = np.r_[True, u[1:] != u[:-1]]
        out[u[first]] = order[first]
    return out


# ============================================================================ the answer
def check_baseline(method: str, problem: Problem, *, tol: Any, max_iter: Any, time_limit_s: Any,
                   callback: Any, inner_method: Any, inner_options: Any, **own: Any) -> dict[str, Any]:
    """Check a baseline's arguments (as :func:`cellopt.solve` does, for direct calls too) and
    its inner solver, whether or not the problem needs it; return the inner keywords.

    The entries of `tol` to `inner_options` are the documentation of these options of the
    one-shot baselines, whose docstrings refer here.

    Parameters
    ----------
    method : str
        The baseline's registered name.
    problem : Problem
    tol : float
        Relative gap passed to the inner solver (several resources only).
    max_iter : int, optional
        Unused (one-shot rule).
    time_limit_s : float, optional
        Wall-clock budget [s] handed to the inner solver.
    callback : callable, optional
        Called once with the final row (``iteration, objective, upper_bound, gap, moves``);
        its return value has no effect.
    inner_method : str
        Solver of the in-cell problem when ``n_resources > 1`` (default ``"dual"``).
    inner_options : dict, optional
        Options of the inner solver (those of `inner_method`, e.g. ``{"max_iter": 50}``).
    **own
        The baseline's other options, as given.

    Returns
    -------
    dict
        ``inner_method`` and the checked ``inner_options``: the keywords of
        :func:`baseline_solution`'s `inner`.

    Raises
    ------
    ValidationError
        As :func:`~cellopt.solvers.arguments.check_arguments` and
        :func:`~cellopt.solvers.arguments.check_inner`.
    """
    check_problem(problem)
    check_arguments(method, tol=tol, max_iter=max_iter, time_limit_s=time_limit_s,
                    callback=callback, single_association=False,
                    options=dict(own, inner_method=inner_method, inner_options=inner_options))
    options = check_inner(inner_method, inner_options, tol=tol, time_limit_s=time_limit_s)
    return {"inner_method": inner_method, "inner_options": options}


def call_with_row(callback: Callback, row: dict[str, Any]) -> bool:
    """Call the callback with a history row (NaN bound and gap passed as None)."""
    if callback is None:
        return False
    info = {k: None if k in ("upper_bound", "gap") and (v is None or not np.isfinite(v)) else v
            for k, v in row.items()}
    return bool(callback(info))


def baseline_solution(
    problem: Problem,
    assoc: np.ndarray,
    *,
    method: str,
    rule: str,
    t0: float,
    tol: float,
    time_limit_s: float | None,
    callback: Callback,
    inner: dict[str, Any],
    n_iter: int = 1,
    history: list[dict[str, Any]] | None = None,
    status: str = SOLVED,
) -> Solution:
    """In-cell shares for `assoc`, backhaul repair, and the Solution.

    Parameters
    ----------
    problem : Problem
    assoc : ndarray of int, shape (n_users,)
        Each user's serving cell (−1: none).
    method : str
        The baseline's name (``Solution.method``, and the start of the message).
    rule : str
        How the association was chosen, for the message.
    t0 : float
        The ``time.perf_counter()`` the baseline started at (wall time, time limit).
    tol, time_limit_s
        Handed to the inner solver (several resources only; the time left of
        `time_limit_s`).
    callback : callable or None
        Called once with the one history row when `history` is None.
    inner : dict
        ``inner_method`` and ``inner_options`` (:func:`check_baseline`).
    n_iter : int
    history : list of dict, optional
        The baseline's own history rows (default: one row with the final objective, bound
        and gap).
    status : str
        The baseline's status; an inner solver that did not succeed replaces "solved".

    Returns
    -------
    Solution
        Prices: the in-cell airtime prices μ (ν = 0); ``upper_bound`` = g(μ, 0).
    """
    remaining = None if time_limit_s is None else max(0.0, time_limit_s - (time.perf_counter() - t0))
    x, mu, inner_status, how = in_cell_shares(problem, assoc, tol=tol, time_limit_s=remaining,
                                              **inner)
    if inner_status is not None and inner_status not in (OPTIMAL, SOLVED) and status == SOLVED:
        status = inner_status
    _, _, traffic = loads(problem, x)
    exceeded = np.flatnonzero(traffic > problem.backhaul_mbps * (1.0 + 1e-9))
    x = repair(problem, x)
    message = f"{method}: {rule}; {how}"
    if len(exceeded):
        message += (f"; {len(exceeded)} cell(s) over their backhaul cap (cells "
                    f"{exceeded[:10].tolist()}{' …' if len(exceeded) > 10 else ''}): their "
                    "shares scaled down to fit")
    if history is None:
        util, cost = objective_terms(problem, x)
        bound = dual_bound(problem, mu, None)
        gap = certified_gap(problem, bound, util - cost, util)
        history = [{"iteration": 1, "objective": util - cost, "upper_bound": bound,
                    "gap": np.nan if gap is None else gap, "moves": 0}]
        call_with_row(callback, history[-1])  # one-shot: nothing left to stop
    else:
        bound = dual_bound(problem, mu, None)
    return build_solution(problem, x, method=method, status=status, message=message, mu=mu,
                          nu=None, n_iter=n_iter, wall_s=time.perf_counter() - t0, history=history,
                          upper_bound=bound, exceeded_backhaul=exceeded)
