"""Joint power, association and bandwidth: column generation over power patterns (DESIGN §2.5)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from cellopt.errors import ValidationError
from cellopt.network import Network
from cellopt.power.gains import GainTable
from cellopt.power.patterns import (
    Levels,
    PatternSpace,
    best_pattern_exhaustive,
    cell_best,
    link_coefficients,
    local_search,
    reduced_values,
    relaxed_value_bound,
)
from cellopt.problem import Problem, utility_derivative
from cellopt.radio.model import RadioModel
from cellopt.solution import Solution
from cellopt.solvers import PATTERN_METHODS, solve
from cellopt.solvers.common import relative_gap, user_value

__all__ = ["master_problem", "solve_power"]

#: Most (patterns × users × table entries) that bound="auto" still enumerates exactly;
#: an explicit bound="exact" is allowed up to 10× more.
EXACT_WORK_MAX = 3e8
_EXACT_PATTERNS_MAX = int(10 * EXACT_WORK_MAX)  # the work check above is the real limit


def master_problem(gains: GainTable, space: PatternSpace, patterns: np.ndarray,
                   network: Network, alpha: float = 1.0,
                   links_per_pattern: int | None = None) -> Problem:
    """The association problem over a fixed pattern set, with free pattern shares.

    Resource k of the problem is pattern ``patterns[k]``; link rates are the rates under
    that pattern over the whole band; ``pattern_cost`` is each pattern's energy cost. The
    input row of link (pattern k, user i, candidate c) is ``(k · n_users + i) ·
    n_candidates + c``, so that rows keep their number as patterns are appended.
    With `links_per_pattern`, each user keeps only its fastest links in each pattern.
    """
    patterns = np.atleast_2d(patterns)
    n_s, n_u, n_c = len(patterns), gains.n_users, gains.n_candidates
    rate = gains.rates_mbps(space.power_mw(patterns))  # (S, U, n)
    if links_per_pattern is not None and links_per_pattern < n_c:
        rank = np.argsort(np.argsort(-rate, axis=2, kind="stable"), axis=2, kind="stable")
        rate = np.where(rank < links_per_pattern, rate, 0.0)
    u, c = network.user_arrays(), network.cell_arrays()
    return Problem.from_links(
        np.broadcast_to(np.arange(n_u)[None, :, None], rate.shape).ravel(),
        np.broadcast_to(gains.cell[None, :, :n_c], rate.shape).ravel(),
        rate.ravel(), n_users=n_u, n_cells=gains.n_cells,
        resource=np.broadcast_to(np.arange(n_s)[:, None, None], rate.shape).ravel(),
        n_resources=n_s, weight=u["weight"], alpha=alpha, demand_mbps=u["demand_mbps"],
        backhaul_mbps=c["backhaul_mbps"], price_per_mbps=c["price_per_mbps"],
        cell_tier=c["tier"], pattern_cost=space.energy_cost(patterns), third_party=c["third_party"],
    )


def solve_power(
    network: Network,
    levels_db: Levels = (0.0, -10.0, None),
    *,
    method: str = "alm",
    bound: str | None = "auto",
    energy_price_per_w: float | np.ndarray = 0.0,
    alpha: float = 1.0,
    tol: float = 1e-4,
    gain_tol: float | None = 1e-3,
    max_patterns: int = 60,
    time_limit_s: float | None = None,
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
    n_candidates: int = 8,
    n_interferers: int = 32,
    model: RadioModel | None = None,
    rng: np.random.Generator | int | None = None,
    gains: GainTable | None = None,
    links_per_pattern: int | None = 3,
    **options: Any,
) -> Solution:
    """Optimize transmit powers jointly with association and bandwidth.

    Column generation over power patterns (DESIGN §2.5): start from full power; solve
    the association problem over the current patterns with free shares θ (the convex
    `method`, warm-started); at the users' marginal utilities λ_i = w_i U'(r_i) and the
    backhaul prices, search for the pattern of highest reduced value by local search
    over the cells' levels (from the most used, the most valuable and the last added
    pattern, and full power);
    add every distinct pattern found that beats the best current one by more than `tol`
    (relative to the objective), else stop; stop too when the objective tails off (see
    `gain_tol`). With ``bound="exact"`` a failed local search is checked by enumerating
    every pattern, so that, with ``gain_tol=None``, the answer is the global optimum up
    to `tol`.

    Parameters
    ----------
    network : Network
    levels_db : sequence of float or None, or mapping tier -> sequence
        Allowed levels relative to each cell's ``tx_power_dbm`` [dB] (≤ 0), None = off;
        one list for all cells or one per tier.
    method : str
        Convex method for the fixed pattern set: one of
        :data:`cellopt.solvers.PATTERN_METHODS` (``"alm"``, ``"reference"``).
    bound : {"auto", "exact", "relaxed", None}
        Upper bound on the joint problem over every pattern: ``"exact"`` enumerates them
        (small networks), ``"relaxed"`` bounds the best pattern's value with
        interference-free rates (valid for any size, loose), None computes none;
        ``"auto"``: exact when at most :data:`EXACT_WORK_MAX` (patterns × users ×
        table entries), else relaxed. ``Solution.bound_kind`` says which was used.
    energy_price_per_w : float or ndarray, shape (n_cells,)
        e_j [utility per W of transmit power, per unit share of the band]: the objective
        pays Σ_s θ_s Σ_j e_j p_js.
    alpha : float
        α-fair utility.
    tol : float
        Relative tolerance of the convex solves and of the pattern-improvement test.
    gain_tol : float or None
        Tail-off stop: end when one iteration raises the objective by less than
        ``gain_tol × Σ_i w_i`` (for α = 1: the weighted geometric-mean rate by less than a
        factor e^gain_tol, 0.1 % by default). Column generation gains little per pattern
        long before no pattern improves at all; None runs until then.
    max_patterns : int
        Most patterns in the set (status ``"max_iter"`` if still improving then).
    time_limit_s : float, optional
    callback : callable, optional
        Called after each column-generation iteration with its history row; True stops.
    n_candidates, n_interferers : int
        Candidate servers and power-controllable cells per user; see :class:`GainTable`.
    model : RadioModel, optional
    rng : int or numpy.random.Generator, optional
        Shadowing seed (the same as :func:`~cellopt.radio.link_table` gives the same
        full-power rates).
    gains : GainTable, optional
        Precomputed gains (then `n_candidates`, `n_interferers`, `model`, `rng` are unused).
    links_per_pattern : int or None
        Links each user keeps per pattern in the convex problem: its fastest ones (3 by
        default; None keeps every candidate). Fewer links keep the convex solves small
        when there are many patterns; the search and the bound use every candidate.
    **options
        Passed to the convex method.

    Returns
    -------
    Solution
        Of the final pattern set's problem (``x`` on its links, resources = patterns),
        with ``patterns`` (dBm), ``pattern_share``, ``cell_power_dbm``, ``energy_w``,
        ``bound_kind``, the joint ``upper_bound`` and ``gap``, and ``history`` (one row
        per iteration: ``iteration, n_patterns, objective, best_current_value,
        candidate_value, n_new`` (improving patterns found, added unless the run stops
        there), ``found_by, inner_iterations, inner_time_s, search_time_s, time_s``).
        ``status`` is "optimal" when an exact bound certifies gap ≤ tol, "solved" when
        no better pattern was found or the objective tailed off, "max_iter",
        "time_limit" (the last finished master is kept) or "stopped" otherwise.
    """
    t0 = time.perf_counter()
    if method not in PATTERN_METHODS:
        raise ValueError(f"method {method!r} cannot solve over power patterns; fix: one of "
                         f"{sorted(PATTERN_METHODS)}")
    if gain_tol is not None and not gain_tol >= 0:
        raise ValueError(f"gain_tol={gain_tol}; fix: a number ≥ 0 or None")
    if bound not in ("auto", "exact", "relaxed", None):
        raise ValueError(f"bound={bound!r}; fix: 'auto', 'exact', 'relaxed' or None")
    if int(max_patterns) != max_patterns or max_patterns < 1:
        raise ValueError(f"max_patterns={max_patterns}; fix: a whole number ≥ 1")
    if gains is None:
        gains = GainTable.from_network(network, n_candidates=n_candidates,
                                       n_interferers=n_interferers, model=model, rng=rng)
    elif (gains.n_users, gains.n_cells) != (network.n_users, network.n_cells):
        raise ValidationError("gains were built for another network; fix: rebuild them with "
                              "GainTable.from_network(network)")
    space = PatternSpace.from_network(network, levels_db, energy_price_per_w)
    work = space.n_patterns * gains.cell.size
    if bound == "auto":
        bound = "exact" if work <= EXACT_WORK_MAX else "relaxed"
    if bound == "exact" and work > _EXACT_PATTERNS_MAX:
        raise ValidationError(f"an exact bound would evaluate {space.n_patterns:.3g} patterns × "
                              f"{gains.cell.size} table entries; fix: bound='relaxed' or fewer "
                              "cells or levels")

    patterns = space.full_power()[None, :]
    weight = network.user_arrays()["weight"]
    total_weight = float(weight.sum())
    cell_price0 = network.cell_arrays()["price_per_mbps"]
    history: list[dict[str, Any]] = []
    status, message = "solved", "no pattern improves on the current set"
    sol, prev, best, last_added = None, None, None, patterns[0]
    coef = None
    inner_iter = 0
    while True:
        problem = master_problem(gains, space, patterns, network, alpha, links_per_pattern)
        warm = _warm_start(problem, prev, coef, gains, space, patterns) if method == "alm" else {}
        t_inner = time.perf_counter()
        if time_limit_s is not None:  # the inner solve gets what is left of the budget
            warm["time_limit_s"] = max(time_limit_s - (t_inner - t0), 1.0)
        sol = solve(problem, method=method, tol=tol, **warm, **options)
        t_search = time.perf_counter()
        out_of_time = time_limit_s is not None and t_search - t0 > time_limit_s
        inner_iter += sol.n_iter
        prev = (problem, sol)
        marginal = weight * utility_derivative(np.maximum(sol.user_rate_mbps, 1e-300), alpha)
        coef = link_coefficients(gains, marginal, cell_price0 + sol.prices["backhaul"])
        if best is None or sol.objective > best[0].objective:
            best = (sol, problem, patterns, coef, marginal)
        current = reduced_values(gains, space, coef, patterns)
        best_current = float(current.max())
        threshold = best_current + tol * max(1.0, abs(sol.objective))
        found, found_by = [], ""
        if not out_of_time:
            # Starts: the most used pattern, the one of highest value, the one just added
            # and full power (distinct ones only).
            starts = np.unique(np.stack([patterns[int(np.argmax(sol.pattern_share))],
                                         patterns[int(np.argmax(current))], last_added,
                                         space.full_power()]), axis=0)
            found = [local_search(gains, space, coef, s)[:2] for s in starts]
            found_by = "local search"
            if max(v for _, v in found) <= threshold and bound == "exact":
                found = [best_pattern_exhaustive(gains, space, coef,
                                                 max_patterns=_EXACT_PATTERNS_MAX)]
                found_by = "enumeration"
        cand_value = max((v for _, v in found), default=np.nan)
        # Every distinct improving pattern the starts found joins the set (best first):
        # one convex solve then prices several columns.
        new = _new_patterns(found, threshold, max_patterns - len(patterns), space.n_cells)
        improves = cand_value > threshold  # patterns of the set are ≤ best_current: never re-added
        row = dict(iteration=len(history) + 1, n_patterns=len(patterns), objective=sol.objective,
                   best_current_value=best_current, candidate_value=cand_value,
                   n_new=len(new), found_by=found_by if len(new) else "",
                   inner_iterations=sol.n_iter,
                   inner_time_s=t_search - t_inner, search_time_s=time.perf_counter() - t_search,
                   time_s=time.perf_counter() - t0)
        history.append(row)
        if callback is not None and callback(dict(row)):
            status, message = "stopped", "the callback asked to stop"
            break
        if out_of_time or (improves and time_limit_s is not None
                           and time.perf_counter() - t0 > time_limit_s):
            status, message = "time_limit", f"reached time_limit_s={time_limit_s:g}"
            break
        if not improves:
            break
        gained = sol.objective - history[-2]["objective"] if len(history) > 1 else np.inf
        if gain_tol is not None and gained < gain_tol * total_weight:
            message = (f"tailing off: the last iteration gained {gained:.3g} < gain_tol × Σw = "
                       f"{gain_tol * total_weight:.3g}")
            break
        if len(patterns) >= max_patterns:
            status, message = "max_iter", f"reached max_patterns={max_patterns} while improving"
            break
        patterns = np.vstack([patterns, new])
        last_added = new[0]

    if status == "time_limit" and best[0].objective > sol.objective:
        # A master cut short by the time limit can end below the previous, finished one.
        sol, problem, patterns, coef, marginal = best
        message += "; the last master, cut short, was worse and is dropped"
    upper = None
    if bound is not None:
        if bound == "exact":
            best_value = best_pattern_exhaustive(gains, space, coef,
                                                 max_patterns=_EXACT_PATTERNS_MAX)[1]
        else:
            best_value = relaxed_value_bound(gains, space, coef)
        upper = _joint_bound(gains, space, problem, marginal, sol.prices["backhaul"], best_value)
    gap = relative_gap(upper, sol.objective)
    if status == "solved" and bound == "exact" and gap is not None and gap <= tol:
        status = "optimal"
        message = f"no pattern improves; exact bound certifies gap {gap:.2e} ≤ tol={tol:g}"
    elif status == "solved":
        message += "" if gap is None else f"; {bound} bound gap {gap:.2e}"
    p_mw = space.power_mw(patterns)
    avg_mw = sol.pattern_share @ p_mw
    with np.errstate(divide="ignore"):
        cell_power = 10.0 * np.log10(avg_mw)
    sol.method = f"power+{method}"
    sol.status, sol.message = status, f"{message} ({len(patterns)} patterns, inner {method})"
    sol.upper_bound, sol.gap, sol.bound_kind = upper, gap, bound
    sol.n_iter, sol.wall_s = inner_iter, time.perf_counter() - t0
    sol.history = pd.DataFrame(history)
    sol.patterns = space.power_dbm(patterns)
    sol.cell_power_dbm = cell_power
    sol.energy_w = float(avg_mw.sum() * 1e-3)
    return sol


def _joint_bound(gains: GainTable, space: PatternSpace, problem: Problem, marginal: np.ndarray,
                 nu: np.ndarray, best_value: float) -> float:
    """The dual bound of the joint problem at λ, ν (DESIGN §2.5).

    ``Σ_i max_{0≤r≤r̂_i} [w_i U(r) − λ_i r] + Σ_j ν_j C_j + max_s V(s)``, where r̂_i caps
    the user's rate in any pattern: its demand, or the sum of its candidates' rates with
    no interference at their highest level. `best_value` is max_s V(s) or a bound on it.
    """
    top_mw = 10.0 ** (space.level_dbm.max(axis=1) / 10.0)
    cap = np.minimum(problem.demand_mbps, gains.isolated_rates_mbps(top_mw).sum(axis=1))
    users = user_value(marginal, problem.weight, problem.alpha, cap)
    capped = np.isfinite(problem.backhaul_mbps)
    return float(users.sum() + (nu[capped] * problem.backhaul_mbps[capped]).sum() + best_value)


def _new_patterns(found: list[tuple[np.ndarray, float]], threshold: float, room: int,
                  n_cells: int) -> np.ndarray:
    """The distinct found patterns of value above `threshold`, best first, at most `room`.

    None of them is in the set already: every pattern of the set is worth ≤ threshold.
    """
    rows = [p for p, v in sorted(found, key=lambda f: -f[1]) if v > threshold]
    if not rows or room <= 0:
        return np.zeros((0, n_cells), np.int64)
    rows = np.stack(rows)
    _, first = np.unique(rows, axis=0, return_index=True)
    return rows[np.sort(first)][:room]


def _warm_start(problem: Problem, prev: tuple[Problem, Solution] | None, coef: np.ndarray | None,
                gains: GainTable, space: PatternSpace, patterns: np.ndarray) -> dict[str, Any]:
    """x, prices and shares of the previous master, extended to the pattern just added."""
    if prev is None:
        return {}
    old_problem, old = prev
    n_rows = len(patterns) * gains.n_users * gains.n_candidates
    pos = np.full(n_rows, -1)
    pos[problem.link_index] = np.arange(problem.n_links)
    x0 = np.zeros(problem.n_links)
    where = pos[old_problem.link_index]
    x0[where[where >= 0]] = old.x[where >= 0]
    # The new pattern's airtime price: what its best user would pay for it.
    added = patterns[old_problem.n_resources:]
    mu_new = [cell_best(gains, rate * coef) for rate in gains.rates_mbps(space.power_mw(added))]
    mu0 = np.column_stack([old.prices["airtime"], *mu_new])
    theta0 = np.r_[old.pattern_share * (1.0 - 0.01 * len(added)), np.full(len(added), 0.01)]
    return dict(x0=x0, prices0=(mu0, old.prices["backhaul"]), theta0=theta0)
