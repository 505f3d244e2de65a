"""Single association: each user served by one cell.

The integer problem is solved by rounding the fractional optimum — each user goes to the
cell that carries most of its rate — then improving locally: users move to the
candidate cell that the current prices say is better for them, a conflict-free batch at
a time, as long as the objective rises. Each association is scored exactly: the
association-restricted problem (every user only on its serving cell's links, all
constraints kept) is solved by the ``alm`` method. The fractional optimum's upper bound
stays valid for the integer problem, so the reported gap is certified.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.alm import solve_alm
from cellopt.solvers.certificate import certified_gap
from cellopt.solvers.common import link_prices, user_value
from cellopt.solvers.result import build_solution
from cellopt.status import OPTIMAL, SOLVED, STOPPED, TIME_LIMIT

__all__ = ["round_to_single", "solve_association"]


def solve_association(problem: Problem, serving_cell: np.ndarray, *, tol: float = 1e-6) -> Solution:
    """The optimal shares when user i may use only cell ``serving_cell[i]`` (all its resources).

    Parameters
    ----------
    problem : Problem
    serving_cell : ndarray of int, shape (n_users,)
        Cell of each user (−1: not served).
    tol : float
        Gap of the restricted solve.

    Returns
    -------
    Solution
        Of the restricted problem, with x mapped back onto the links of `problem`.
    """
    keep = problem.cell == serving_cell[problem.user]
    sub = problem.restrict(keep)
    sol = solve_alm(sub, tol=tol)
    x = np.zeros(problem.n_links)
    x[np.flatnonzero(keep)] = sol.x
    sol.x = x
    return sol


def _moves(problem: Problem, serving: np.ndarray, sol: Solution) -> tuple[np.ndarray, np.ndarray]:
    """Users that the current prices say should move, with their new cell (conflict-free).

    A user's value at a cell is ``max_r w U(r) − π r`` at its cheapest price on that
    cell's links (the cell's airtime and backhaul prices); a move is proposed when another
    candidate cell beats the serving one. At most one user leaves and one joins each cell
    per round, so the estimates stay meaningful.
    """
    p = problem
    pi = link_prices(p, sol.prices["airtime"], sol.prices["backhaul"])
    # Cheapest price per (user, cell), then the value the user would get there.
    key = p.user * p.n_cells + p.cell
    uniq, inv = np.unique(key, return_inverse=True)
    best_pi = np.full(len(uniq), np.inf)
    np.minimum.at(best_pi, inv, pi)
    users, cells = uniq // p.n_cells, uniq % p.n_cells
    cap = np.bincount(inv, p.rate_mbps, minlength=len(uniq))
    value = user_value(best_pi, p.weight[users], p.alpha, np.minimum(cap, p.demand_mbps[users]))
    here = cells == serving[users]
    current = np.full(p.n_users, -np.inf)
    current[users[here]] = value[here]
    gain = value - current[users]
    cand = np.flatnonzero(~here & (gain > 1e-9 * np.maximum(1.0, np.abs(current[users]))))
    if not len(cand):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    cand = cand[np.argsort(-gain[cand], kind="stable")]
    # Best move per user, then at most one move out of and into each cell.
    cand = cand[np.unique(users[cand], return_index=True)[1]]
    cand = cand[np.argsort(-gain[cand], kind="stable")]
    origin = serving[users[cand]]
    cand = cand[np.unique(origin, return_index=True)[1]]
    cand = cand[np.argsort(-gain[cand], kind="stable")]
    cand = cand[np.unique(cells[cand], return_index=True)[1]]
    cand = cand[np.argsort(-gain[cand], kind="stable")]  # most promising first
    return users[cand], cells[cand]


def round_to_single(
    problem: Problem,
    fractional: Solution,
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
) -> Solution:
    """Round a fractional solution to single association and improve it locally.

    Parameters
    ----------
    problem : Problem
    fractional : Solution
        The fractional optimum (its upper bound certifies the result).
    tol : float
        Gap at which the search stops early.
    max_iter : int, optional
        Rounds of local improvement (default 20).
    time_limit_s : float, optional
    callback : callable, optional
        Called per round with the history row; True stops.

    Returns
    -------
    Solution
        Every user on at most one cell; ``upper_bound`` is the fractional bound.
    """
    t0 = time.perf_counter()
    rounds = 20 if max_iter is None else int(max_iter)
    serving = fractional.serving_cell.copy()
    sol = solve_association(problem, serving)
    bound = fractional.upper_bound
    history = []
    status, message = SOLVED, "no move improves the objective"
    n_round = 0
    for n_round in range(1, rounds + 1):
        gap = certified_gap(problem, bound, sol.objective, sol.utility)
        row = dict(iteration=n_round, objective=sol.objective, upper_bound=bound, gap=gap,
                   time_s=time.perf_counter() - t0)
        users, cells = _moves(problem, serving, sol)
        row["moves"] = len(users)
        history.append(row)
        if callback is not None and callback(dict(row)):
            status, message = STOPPED, "the callback asked to stop"
            break
        if gap is not None and gap <= tol:
            break
        if time_limit_s is not None and time.perf_counter() - t0 > time_limit_s:
            status, message = TIME_LIMIT, f"reached time_limit_s={time_limit_s:g}"
            break
        if not len(users):
            break
        # The price estimates ignore how moves change loads: if the whole batch does not
        # pay, try its more promising half, and so on.
        improved = False
        n_try = len(users)
        while n_try >= 1 and not improved:
            trial_serving = serving.copy()
            trial_serving[users[:n_try]] = cells[:n_try]
            trial = solve_association(problem, trial_serving)
            improved = trial.objective > sol.objective
            n_try //= 2
        if not improved:
            break
        serving, sol = trial_serving, trial
    else:
        message = f"stopped after max_iter={rounds} rounds of moves"
    gap = certified_gap(problem, bound, sol.objective, sol.utility)
    if status == SOLVED and gap is not None and gap <= tol:
        status = OPTIMAL
    return build_solution(
        problem, sol.x, method=fractional.method, status=status,
        message=f"single association (rounded {fractional.method}, {n_round} round(s)): {message}",
        # The fractional prices: g at them is the reported (fractional) bound.
        mu=fractional.prices["airtime"], nu=fractional.prices["backhaul"], upper_bound=bound,
        n_iter=fractional.n_iter + n_round, wall_s=fractional.wall_s + time.perf_counter() - t0,
        history=history)
