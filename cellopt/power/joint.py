"""Joint power, association and bandwidth: column generation over power patterns.

Start from full power; solve the association problem over the current patterns with free
shares θ (the *master*); from its prices, search for the pattern of highest reduced value
(*pricing*); add the improving ones; repeat. The stops, the statuses and the bounds are
described in :func:`solve_power`; docs/model.md ("Power patterns") has the mathematics.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from cellopt.errors import ValidationError
from cellopt.network import Network
from cellopt.parameters import is_integer, is_real
from cellopt.power.bounds import bound_gains, joint_bound, relaxed_bound
from cellopt.power.gains import GainTable
from cellopt.power.patterns import (
    Levels,
    PatternSpace,
    cell_best,
    link_coefficients,
    reduced_values,
    top_patterns_exhaustive,
)
from cellopt.power.search import Neighbourhoods, search_patterns
from cellopt.problem import Problem
from cellopt.radio.model import RadioModel
from cellopt.solution import Solution
from cellopt.solvers.api import solve
from cellopt.solvers.certificate import certified_gap, utility_scale
from cellopt.solvers.common import link_prices, repair, user_min
from cellopt.solvers.registry import PATTERN_METHODS
from cellopt.solvers.result import build_solution
from cellopt.status import CONVERGED, LOCAL_OPTIMUM, MAX_ITER, OPTIMAL, STOPPED, TAIL_OFF, TIME_LIMIT

__all__ = ["EXACT_WORK_MAX", "MAX_ITER_EXACT", "MAX_ITER_SEARCH", "PRICING_WORK_MAX", "master_duals",
           "master_problem", "solve_power"]

#: Most (patterns × users × table entries) that bound="auto" still enumerates exactly for
#: the final bound; an explicit bound="exact" is allowed up to 10× more.
EXACT_WORK_MAX = 3e8
#: Most (patterns × users × table entries) that pricing="auto" enumerates at every
#: iteration (about 0.2 s per pricing round on one core).
PRICING_WORK_MAX = 3e7
_EXACT_LIMIT = 10 * EXACT_WORK_MAX
#: Most patterns in a master with search pricing when `max_patterns` is None (with exact
#: pricing there is no cap: see solve_power).
_SEARCH_MAX_PATTERNS = 40
#: The work budget of max_iter="auto" [column-generation iterations]: with search pricing
#: (about a minute on the README's 285-cell network on an idle 2-core machine) ...
MAX_ITER_SEARCH = 20
#: ... and with exact pricing, where column generation ends on its own (the pattern
#: space is finite) and the budget is only a safety net.
MAX_ITER_EXACT = 500
_RELAXED_SHARE = 0.04  # share of the time limit kept for a relaxed bound at the end
_FINISH_SHARE = 0.05   # ... and for finishing the best master
_UNUSED_SHARE = 1e-4  # a pattern with less share of the band than this is unused
#: With exact pricing, the share of `tol` (rate-equivalent) given to the masters and the
#: share by which a new pattern must beat the set: together at most half of `tol`, so
#: that when no pattern improves, the bound certifies the answer.
_EXACT_SHARE = 0.25
_SMALL_SHARE = 1e-3   # ... and is dropped from the answer if that costs (next to) nothing


def master_problem(gains: GainTable, space: PatternSpace, patterns: np.ndarray,
                   network: Network, alpha: float = 1.0,
                   links_per_pattern: int | None = None) -> Problem:
    """The association problem over a fixed pattern set, with free pattern shares.

    Resource k of the problem is pattern ``patterns[k]``; link rates are the rates under
    that pattern over the whole band; ``pattern_cost`` is each pattern's energy cost. The
    input row of link (pattern k, user i, candidate c) is ``(k · n_users + i) ·
    n_candidates + c``. With `links_per_pattern`, each user keeps only its fastest links
    in each pattern.
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


def master_duals(problem: Problem, sol: Solution) -> tuple[np.ndarray, np.ndarray]:
    """The users' rate prices λ and the backhaul prices ν of a master solution.

    ``λ_i = min_{e∋i} (μ_e / R_e + c_j + ν_j)``, each user's cheapest price at the
    master's airtime prices: then ``(λ_i − c_j − ν_j) R_e ≤ μ_e`` on every master link, so
    the joint bound at (λ, ν) is at most the master's own dual bound plus what patterns
    outside the set add — the certificate of the master carries over.

    Returns
    -------
    lam : ndarray, shape (n_users,) [utility per Mbit/s]
    nu : ndarray, shape (n_cells,) [utility per Mbit/s]
    """
    nu = np.where(np.isfinite(problem.backhaul_mbps), sol.prices["backhaul"], 0.0)
    lam = user_min(problem, link_prices(problem, sol.prices["airtime"], nu))
    return np.where(np.isfinite(lam), lam, 0.0), nu


class _PatternSet:
    """The master's patterns, their last shares, and how many masters in a row each went
    unused."""

    def __init__(self, first: np.ndarray):
        self.patterns = np.atleast_2d(first).astype(np.int64)
        self.idle = np.zeros(1, np.int64)
        self.share = np.ones(1)

    def __len__(self) -> int:
        return len(self.patterns)

    def record_use(self, share: np.ndarray) -> None:
        self.share = np.asarray(share, float)
        self.idle = np.where(self.share > _UNUSED_SHARE, 0, self.idle + 1)

    def _keep(self, keep: np.ndarray) -> None:
        self.patterns, self.idle, self.share = self.patterns[keep], self.idle[keep], self.share[keep]

    def add(self, new: np.ndarray, max_patterns: int | None, retire_after: int | None) -> int:
        """Add `new` patterns, first retiring those idle for `retire_after` masters; when
        the set is full (`max_patterns`; None: never), the longest idle and then the least
        used make room. How many joined."""
        if retire_after is not None:
            self._keep(self.idle < retire_after)
        if max_patterns is None:
            max_patterns = len(self) + len(new)
        new = new[:max_patterns]
        excess = len(self) + len(new) - max_patterns
        if excess > 0:
            order = np.lexsort((self.share, -self.idle))  # longest idle, then least used
            self._keep(np.setdiff1d(np.arange(len(self)), order[:excess]))
        self.patterns = np.vstack([self.patterns, new])
        self.idle = np.r_[self.idle, np.zeros(len(new), np.int64)]
        self.share = np.r_[self.share, np.zeros(len(new))]
        return len(new)


#: Largest full-power energy cost per unit of the users' total weight that solve_power
#: accepts: beyond it utilities vanish in rounding next to the energy terms.
_ENERGY_RATIO_MAX = 1e9


def solve_power(
    network: Network,
    levels_db: Levels = (0.0, -10.0, None),
    *,
    method: str = "ipm",
    bound: str | None = "auto",
    energy_price_per_w: float | np.ndarray = 0.0,
    alpha: float = 1.0,
    tol: float = 1e-4,
    gain_tol: float | None = 1e-3,
    pricing: str = "auto",
    stabilization: float = 0.5,
    retire_after: int | None = 5,
    max_patterns: int | None = None,
    max_iter: int | str | None = "auto",
    time_limit_s: float | None = None,
    progress: bool = True,
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
    n_candidates: int = 8,
    n_interferers: int = 32,
    model: RadioModel | None = None,
    rng: np.random.Generator | int | None = None,
    gains: GainTable | None = None,
    links_per_pattern: int | str | None = "auto",
    cluster_cells: int = 3,
    **options: Any,
) -> Solution:
    """Optimize transmit powers jointly with association and bandwidth.

    Column generation over power patterns. Each iteration solves the master (the
    association problem over the current patterns, shares free) with the convex
    `method`, reads the users' rate prices λ and the backhaul prices ν from its duals
    (:func:`master_duals`), and prices new patterns: their reduced value
    ``V(s) = Σ_j max_i (λ_i − c_j − ν_j)⁺ R_ij(s) − E_s`` must beat the best pattern of the
    set. Pricing is exact (every pattern enumerated) when the pattern space is small,
    else a search (:func:`~cellopt.power.patterns.search_patterns`: single-cell moves and
    exact enumeration over neighbourhoods of cells). Prices are stabilized (Wentges):
    the search runs at a convex combination of the master's prices and the best prices
    seen, and falls back to the master's prices when that finds nothing. Patterns that
    held no share for `retire_after` masters in a row leave the set.

    The run stops on a work budget, `max_iter` iterations, not on the clock: the same
    inputs give the same answer, bit for bit, however busy the machine is. A time limit
    (`time_limit_s`) is an explicit option; it makes the answer depend on the machine.

    Parameters
    ----------
    network : Network
    levels_db : sequence of float or None, or mapping tier -> sequence
        Allowed levels relative to each cell's ``tx_power_dbm`` [dB] (≤ 0), None = off;
        one list for all cells or one per tier.
    method : str
        Convex method for the master: one of :data:`cellopt.solvers.PATTERN_METHODS`
        (``"ipm"``, the fastest, by default; ``"dual"``, ``"alm"``, ``"reference"``).
    bound : {"auto", "exact", "relaxed", None}
        Upper bound on the joint problem over every pattern, valid for the physical
        model (every cell interfering at its pattern's power, not only the
        `n_interferers` of each user's table): the cells lumped beyond the table count
        at their lowest level in the bound (0 when they may be off) and at full power in
        the answer, so objective ≤ physical optimum ≤ bound, and the gap includes the
        truncation's looseness. ``"exact"``: the Lagrangian bound with every pattern
        enumerated (small networks); ``"relaxed"``: the optimum of a convex relaxation
        with every cluster of cells on its own patterns and the other clusters'
        interference at their lowest level (:func:`relaxed_bound`; valid for any size);
        None: no bound. ``"auto"``: exact when the enumeration is at most
        :data:`EXACT_WORK_MAX` (patterns × users × table entries), else relaxed.
        ``Solution.bound_kind`` and ``bound_info`` say which was computed.
    energy_price_per_w : float or ndarray, shape (n_cells,)
        e_j [utility per W of transmit power, per unit share of the band].
    alpha : float
        α-fair utility.
    tol : float
        Relative tolerance of the masters and of the certificate: status ``"optimal"``
        when a valid bound certifies gap ≤ tol.
    gain_tol : float or None
        With search pricing only: stop ("tail_off") when three iterations together
        raised the objective by less than ``gain_tol × Σ_i w_i`` (α = 1: the weighted
        geometric-mean rate by less than a factor e^gain_tol). None: never.
    pricing : {"auto", "exact", "search"}
        ``"auto"``: exact when the enumeration is at most :data:`PRICING_WORK_MAX`.
    stabilization : float
        Weight β ∈ [0, 1) of the stability center in the pricing prices (0: none).
    retire_after : int or None
        Masters in a row without share after which a pattern leaves the set (None: never).
    max_patterns : int or None
        Most patterns in a master; when it is full, the longest idle patterns and then
        the least used make room for new ones. None (default): no cap with exact pricing
        (an optimal mixture can need as many patterns as users + cells, and a cap below
        that makes exact pricing re-add the patterns it pushes out, without end), 40 with
        the search.
    max_iter : int, "auto" or None
        Work budget [column-generation iterations; each is one master solve and one
        pricing round]: status ``"max_iter"`` when it ends the run. ``"auto"``:
        :data:`MAX_ITER_SEARCH` (20) with search pricing — about a minute on the README's
        285-cell network on an idle 2-core machine — and :data:`MAX_ITER_EXACT` (500) with
        exact pricing, which ends on its own (``"optimal"`` or ``"converged"``) long before
        on small networks. None: no budget.
    time_limit_s : float or None
        Wall-clock limit [s] (default None: none). An iteration that would not fit in the
        time left is not started; status ``"time_limit"`` when it ends the run. Unlike
        `max_iter`, the answer then depends on the machine's speed and load.
    progress : bool
        Show a progress bar (iterations against `max_iter`; patterns, objective,
        estimate). It only displays: the answer is the same with or without it.
    callback : callable, optional
        Called after each iteration with its history row; True stops.
    n_candidates, n_interferers : int
        Candidate servers and power-controllable cells per user; see :class:`GainTable`.
    model : RadioModel, optional
    rng : int or numpy.random.Generator, optional
        Shadowing seed (the same as :func:`~cellopt.radio.link_table` gives the same
        full-power rates).
    gains : GainTable, optional
        Precomputed gains (then `n_candidates`, `n_interferers`, `model`, `rng` are unused).
    links_per_pattern : int, None or "auto"
        Links each user keeps per pattern in the master: its fastest ones; None keeps
        every candidate; ``"auto"``: every candidate with exact pricing, else 3.
    cluster_cells : int
        Most cells per cluster of the relaxed bound (1: the interference-free bound).
    **options
        Passed to the convex method.

    Returns
    -------
    Solution
        Of the final master (``x`` on its links, resources = patterns), with ``patterns``
        (dBm), ``pattern_share``, ``cell_power_dbm``, ``energy_w``; the joint
        ``upper_bound`` (on the physical model), ``gap``, ``bound_kind`` ("exact" or
        "relaxed") and ``bound_info`` (``certifies``: "physical model"; ``lumped``:
        whether cells beyond the tables were lumped); the Lagrangian ``estimate`` (of the
        table's model; not a bound: the joint bound with the best pattern the pricing
        found in place of ``max_s V``); and ``history``, one row per iteration:
        ``iteration, n_patterns, objective, estimate, bound, n_new, pricing,
        inner_iterations, inner_time_s, search_time_s, time_s``. ``status``: "optimal" (a
        valid bound certifies gap ≤ tol), "converged" (exact pricing found no improving
        pattern, but the gap is above tol: the masters' tolerance, the links left out of
        them, or the lumped cells), "local_optimum" (the search found no improving
        pattern; not certified), "tail_off", "max_iter", "time_limit" or "stopped".
    """
    t0 = time.perf_counter()
    _check_options(method, gain_tol, bound, pricing, stabilization, retire_after, max_patterns,
                   max_iter, time_limit_s, cluster_cells, alpha, tol)
    if gains is None:
        gains = GainTable.from_network(network, n_candidates=n_candidates,
                                       n_interferers=n_interferers, model=model, rng=rng)
    elif (gains.n_users, gains.n_cells) != (network.n_users, network.n_cells):
        raise ValidationError("gains were built for another network; fix: rebuild them with "
                              "GainTable.from_network(network)")
    space = PatternSpace.from_network(network, levels_db, energy_price_per_w)
    full_cost = float(space.energy_cost(space.full_power())[0])
    total_weight = float(network.user_arrays()["weight"].sum())
    if full_cost > _ENERGY_RATIO_MAX * max(total_weight, 1.0):
        raise ValidationError(
            f"energy_price_per_w makes full power cost {full_cost:.3g} utility per unit share, "
            f"more than {_ENERGY_RATIO_MAX:.0e} × the users' total weight ({total_weight:.3g}): "
            "rounding, not the users, would decide the answer; fix: give the price in "
            "utility per W on the scale of the utilities (a user's log-rate changes by about "
            "0.7 per doubling of its rate)")
    work = space.n_patterns * gains.cell.size
    if bound == "auto":
        bound = "exact" if work <= EXACT_WORK_MAX else "relaxed"
    if bound == "exact" and work > _EXACT_LIMIT:
        raise ValidationError(f"an exact bound would evaluate {space.n_patterns:.3g} patterns × "
                              f"{gains.cell.size} table entries; fix: bound='relaxed' or fewer "
                              "cells or levels")
    exact_pricing = pricing == "exact" or (pricing == "auto" and work <= PRICING_WORK_MAX)
    if pricing == "exact" and work > _EXACT_LIMIT:
        raise ValidationError(f"exact pricing would evaluate {space.n_patterns:.3g} patterns × "
                              f"{gains.cell.size} table entries per iteration; fix: "
                              "pricing='search'")
    if links_per_pattern == "auto":
        links_per_pattern = None if exact_pricing else 2
    if max_patterns is None and not exact_pricing:
        max_patterns = _SEARCH_MAX_PATTERNS
    if max_iter == "auto":
        max_iter = MAX_ITER_EXACT if exact_pricing else MAX_ITER_SEARCH

    run = _ColumnGeneration(network, gains, space, method, alpha, tol, links_per_pattern,
                            exact_pricing, stabilization, options)
    patterns = _PatternSet(space.full_power())
    patterns.add(_distinct(_tier_patterns(network, space), patterns.patterns), max_patterns,
                 None)
    # Column generation gets the time limit but what the relaxed bound and the answer
    # (the best master finished to `tol`, and a margin) need at the end.
    reserve = (_RELAXED_SHARE if bound == "relaxed" else 0.0) + _FINISH_SHARE
    budget = None if time_limit_s is None else time_limit_s * (1.0 - reserve)
    bar = _ProgressBar(max_iter) if progress else None
    history: list[dict[str, Any]] = []
    try:
        while True:
            remaining = None if budget is None else budget - (time.perf_counter() - t0)
            it = run.iterate(patterns, remaining)
            row = dict(iteration=len(history) + 1, n_patterns=len(patterns),
                       objective=run.best.objective, estimate=it["estimate"],
                       bound=run.certified_bound, n_new=0, pricing=it["pricing"],
                       inner_iterations=it["inner_iterations"], inner_time_s=it["inner_time_s"],
                       search_time_s=it["search_time_s"], time_s=time.perf_counter() - t0)
            history.append(row)
            stop = _stop_reason(run, it, history, tol, gain_tol, total_weight, callback, budget,
                                time_limit_s, t0, exact_pricing, max_iter)
            if stop is None:
                row["n_new"] = patterns.add(it["new"], max_patterns, retire_after)
            if bar is not None:
                bar.update(row)
            if stop is not None:
                break
    finally:
        if bar is not None:
            bar.close()
    return run.finish(*stop, bound, history, t0, time_limit_s, cluster_cells)


def _stop_reason(run: _ColumnGeneration, it: dict[str, Any], history: list[dict[str, Any]],
                 tol: float, gain_tol: float | None, total_weight: float,
                 callback: Callable[[dict[str, Any]], bool | None] | None,
                 budget: float | None, time_limit_s: float | None, t0: float,
                 exact_pricing: bool, max_iter: int | None) -> tuple[str, str] | None:
    """(status, message) if column generation stops after this iteration, else None.

    The callback sees every iteration's row; its stop request counts unless the run
    ends here for a reason of its own. Only the time limit reads the clock.
    """
    asked = callback is not None and bool(callback(dict(history[-1])))
    gap = certified_gap(run.best_problem, run.certified_bound, run.best.objective,
                        run.best.utility)
    if gap is not None and gap <= tol:
        return OPTIMAL, f"certified gap {gap:.2e} ≤ tol={tol:g}"
    if not len(it["new"]):
        if exact_pricing:
            return CONVERGED, (f"no pattern improves (exact pricing), but the certified gap "
                               f"is {gap:.2e} > tol={tol:g}")
        return LOCAL_OPTIMUM, "the search finds no improving pattern"
    if asked:
        return STOPPED, "the callback asked to stop"
    # The next iteration is assumed to take as long as this one: stop if it would not fit.
    spent = history[-1]["time_s"] - (history[-2]["time_s"] if len(history) > 1 else 0.0)
    if it["cut_short"] or (budget is not None and time.perf_counter() - t0 + spent > budget):
        return TIME_LIMIT, f"reached time_limit_s={time_limit_s:g}"
    if not exact_pricing and gain_tol is not None and len(history) > 3:
        gained = history[-1]["objective"] - history[-4]["objective"]
        if gained < gain_tol * total_weight:
            return TAIL_OFF, (f"tailing off: three iterations gained {gained:.3g} < gain_tol × "
                              f"Σw = {gain_tol * total_weight:.3g}")
    if max_iter is not None and len(history) >= max_iter:
        return MAX_ITER, f"reached max_iter={max_iter} iterations"
    return None


class _ColumnGeneration:
    """One column-generation run: masters, pricing, bounds and the best answer so far."""

    def __init__(self, network: Network, gains: GainTable, space: PatternSpace, method: str,
                 alpha: float, tol: float, links_per_pattern: int | None, exact_pricing: bool,
                 stabilization: float, options: dict[str, Any]):
        self.network, self.gains, self.space = network, gains, space
        # Bounds hold for the physical model: computed with the lumped background at its
        # lowest (the table itself when nothing is lumped).
        self.bound_gains = bound_gains(gains, space)
        self.method, self.alpha, self.tol = method, alpha, tol
        self.links_per_pattern = links_per_pattern
        self.exact_pricing = exact_pricing
        self.beta = stabilization
        self.options = options
        self.cell_price = network.cell_arrays()["price_per_mbps"]
        # The best master so far: its solution, problem, patterns, prices and estimate.
        self.best: Solution | None = None
        self.best_problem: Problem | None = None
        self.best_patterns: np.ndarray | None = None
        self.best_duals: tuple[np.ndarray, np.ndarray] | None = None
        self.best_tol = tol
        #: The smallest Lagrangian value so far, max_s V replaced by the best pattern known
        #: at those prices (at least the best objective; a bound with exact pricing).
        self.estimate = np.inf
        self.point_values: list[float] = []
        #: With exact pricing: the smallest Lagrangian bound computed (valid for the
        #: physical model: max_s V on `bound_gains`); else None.
        self.certified_bound: float | None = np.inf if exact_pricing else None
        # Stability center: the prices of the smallest Lagrangian value (bound or estimate).
        self.center: tuple[np.ndarray, np.ndarray] | None = None
        self.center_value = np.inf
        self.inner_iterations = 0
        self.last_prices: tuple | None = None  # (patterns, μ, ν) of the last master
        self.hoods: Neighbourhoods | None = None

    # ------------------------------------------------------------------ one iteration
    def iterate(self, pset: _PatternSet, remaining: float | None) -> dict[str, Any]:
        """Solve the master over `pset`, price new patterns; what was found."""
        t_inner = time.perf_counter()
        problem = master_problem(self.gains, self.space, pset.patterns, self.network,
                                 self.alpha, self.links_per_pattern)
        kwargs = dict(self.options)
        if remaining is not None:  # the master gets what is left of the budget
            kwargs["time_limit_s"] = max(remaining, 1.0)
        kwargs.update(self._warm_start(problem, pset.patterns))
        master_tol = self._master_tol()
        sol = solve(problem, method=self.method, tol=master_tol, **kwargs)
        self.inner_iterations += sol.n_iter
        t_search = time.perf_counter()
        pset.record_use(sol.pattern_share)
        lam, nu = master_duals(problem, sol)
        self.last_prices = (pset.patterns.copy(), sol.prices["airtime"], sol.prices["backhaul"])
        is_best = self.best is None or sol.objective > self.best.objective
        if is_best:
            self.best, self.best_problem, self.best_tol = sol, problem, master_tol
            self.best_patterns, self.best_duals = pset.patterns.copy(), (lam, nu)
        coef = self._coef(lam, nu)
        current = float(reduced_values(self.gains, self.space, coef, pset.patterns).max())
        if self.exact_pricing:  # a quarter of tol in rate-equivalent terms (see _EXACT_SHARE)
            margin = _EXACT_SHARE * self.tol * utility_scale(problem, sol.utility)
        else:
            margin = self.tol * max(1.0, abs(sol.objective))
        threshold = current + margin
        self.point_values = []
        found, values, pricing = self._price(lam, nu, pset, threshold)
        # The estimate: the smallest Lagrangian value of the run, with the best pattern
        # known at those prices (the set's or a new one); never below the objective.
        estimate = min(self.point_values)
        self.estimate = max(min(self.estimate, estimate), self.best.objective)
        improving = values > threshold
        new = _distinct(found[improving][np.argsort(-values[improving], kind="stable")],
                        pset.patterns)
        return dict(new=new, estimate=estimate, pricing=pricing,
                    cut_short=sol.status == TIME_LIMIT, inner_iterations=sol.n_iter,
                    inner_time_s=t_search - t_inner, search_time_s=time.perf_counter() - t_search)

    def _master_tol(self) -> float:
        """Masters solved only as far as pricing needs: to a twentieth of the relative gap
        of the best estimate (at most 1e-2), `tol` once that is small; with exact pricing
        always to a quarter of `tol` (its bound certifies the masters)."""
        if self.exact_pricing:
            return _EXACT_SHARE * self.tol
        if self.best is None or not np.isfinite(self.estimate):
            return self.tol
        gap = certified_gap(self.best_problem, self.estimate, self.best.objective,
                            self.best.utility)
        return float(np.clip(0.05 * (np.inf if gap is None else gap), self.tol, 1e-2))

    def _coef(self, lam: np.ndarray, nu: np.ndarray) -> np.ndarray:
        return link_coefficients(self.gains, lam, self.cell_price + nu)

    def _price(self, lam: np.ndarray, nu: np.ndarray, pset: _PatternSet, threshold: float
               ) -> tuple[np.ndarray, np.ndarray, str]:
        """Candidate patterns, their reduced values at the master's prices, and how found.

        Pricing points: the stabilized prices ``β center + (1 − β) master`` (Wentges),
        then the master's own. Exact pricing stops at the first point whose patterns
        improve at the master's prices. The search prices at both: the union of their
        patterns joins the master (about twice the columns per master solve), and each
        point gives its own Lagrangian value for the estimate; the smallest makes the
        stability center. With exact pricing each point also gives a valid bound: its
        Lagrangian value with ``max_s V`` enumerated on the bound table (the lumped
        background at its lowest, :func:`~cellopt.power.bounds.bound_gains`; the same
        enumeration when nothing is lumped).
        """
        coef = self._coef(lam, nu)
        points = [(lam, nu, "master")]
        if self.beta > 0 and self.center is not None:
            c_lam, c_nu = self.center
            points.insert(0, (self.beta * c_lam + (1 - self.beta) * lam,
                              self.beta * c_nu + (1 - self.beta) * nu, "stabilized"))
        found_all, values_all, names = [], [], []
        for p_lam, p_nu, name in points:  # at most two pricing points
            p_coef = self._coef(p_lam, p_nu)
            if self.exact_pricing:
                found, p_values = top_patterns_exhaustive(self.gains, self.space, p_coef, k=4,
                                                          max_patterns=int(_EXACT_LIMIT))
            else:
                if self.hoods is None:
                    self.hoods = Neighbourhoods(self.gains, self.space, 3)
                # `threshold` holds at the master's prices only: at stabilized ones the
                # neighbourhood search always runs.
                found = search_patterns(self.gains, self.space, p_coef, pset.patterns,
                                        threshold=threshold if name == "master" else np.inf,
                                        hoods=self.hoods)
                p_values = reduced_values(self.gains, self.space, p_coef, found)
            known = float(reduced_values(self.gains, self.space, p_coef, pset.patterns).max())
            best_value = max(known, float(p_values.max()))
            self._lagrangian_value(p_lam, p_nu, best_value, self._bound_value(p_coef, best_value))
            values = p_values if name == "master" else reduced_values(self.gains, self.space,
                                                                      coef, found)
            found_all.append(found)
            values_all.append(values)
            names.append(name)
            if self.exact_pricing and (values > threshold).any():
                break
        kind = "exact" if self.exact_pricing else "search"
        return (np.vstack(found_all), np.concatenate(values_all),
                f"{kind}, {' + '.join(names)}")

    def _bound_value(self, coef: np.ndarray, value: float) -> float | None:
        """With exact pricing, max_s V on the bound table: `value` (the pricing's own
        enumeration) when nothing is lumped, else one more enumeration; else None."""
        if not self.exact_pricing:
            return None
        if self.bound_gains is self.gains:
            return value
        _, top = top_patterns_exhaustive(self.bound_gains, self.space, coef, k=1,
                                         max_patterns=int(_EXACT_LIMIT))
        return float(top[0])

    def _lagrangian_value(self, lam: np.ndarray, nu: np.ndarray, max_value: float,
                          bound_value: float | None = None) -> float:
        """UB(λ, ν) with `max_value` for max_s V (the estimate's value); with
        `bound_value` (max_s V on the bound table), the valid bound at λ, ν too."""
        value = joint_bound(self.gains, self.space, self.best_problem, lam, nu, max_value)
        self.point_values.append(value)
        if bound_value is not None:
            self.certified_bound = min(self.certified_bound, joint_bound(
                self.gains, self.space, self.best_problem, lam, nu, bound_value))
        if value < self.center_value:
            self.center, self.center_value = (lam.copy(), nu.copy()), value
        return value

    def _warm_start(self, problem: Problem, patterns: np.ndarray) -> dict[str, Any]:
        """Prices of the last master on the new pattern set (for dual and alm)."""
        if self.last_prices is None or self.method not in ("dual", "alm"):
            return {}
        old_patterns, mu_old, nu_old = self.last_prices
        lam, nu = self.best_duals
        coef = self._coef(lam, nu)
        same = (patterns[:, None, :] == old_patterns[None, :, :]).all(axis=2)  # (new, old)
        known = same.any(axis=1)
        mu0 = np.zeros((problem.n_cells, len(patterns)))
        mu0[:, known] = mu_old[:, np.argmax(same[known], axis=1)]
        # A new pattern's airtime price: what its best user would pay for it.
        rates = self.gains.rates_mbps(self.space.power_mw(patterns[~known]))
        mu0[:, ~known] = np.stack([cell_best(self.gains, r * coef) for r in rates], axis=1) \
            if len(rates) else mu0[:, ~known]
        return dict(prices0=(mu0, nu_old))

    # ------------------------------------------------------------------ the answer
    def finish(self, status: str, message: str, bound: str | None,
               history: list[dict[str, Any]], t0: float, time_limit_s: float | None,
               cluster_cells: int) -> Solution:
        """The best master's solution with the joint fields, bound and status filled."""
        if self.best_tol > self.tol:  # solved loosely during the run: finish it to `tol`
            left = None if time_limit_s is None else max(
                0.9 * time_limit_s - (time.perf_counter() - t0), 1.0)
            tight = solve(self.best_problem, method=self.method, tol=self.tol,
                          **{**self.options, "time_limit_s": left})
            if tight.objective > self.best.objective:
                self.best = tight
        self.best = _without_small_shares(self.best_problem, self.best, self.tol)
        sol, problem, patterns = self.best, self.best_problem, self.best_patterns
        lam, nu = self.best_duals
        upper, info = None, None
        if bound == "exact":
            if not self.exact_pricing:  # one enumeration at the best master's prices
                _, top = top_patterns_exhaustive(self.bound_gains, self.space,
                                                 self._coef(lam, nu), k=1,
                                                 max_patterns=int(_EXACT_LIMIT))
                self.certified_bound = joint_bound(self.gains, self.space, problem, lam, nu,
                                                   float(top[0]))
            upper = self.certified_bound
            info = dict(kind="exact", patterns_enumerated=self.space.n_patterns)
        elif bound == "relaxed":
            left = None if time_limit_s is None else max(
                0.97 * time_limit_s - (time.perf_counter() - t0), 0.02 * time_limit_s)
            relaxed = relaxed_bound(self.network, self.gains, self.space, self.alpha,
                                    cluster_cells=cluster_cells, tol=self.tol,
                                    time_limit_s=left, prices=(lam, nu))
            upper, info = relaxed["upper_bound"], relaxed["info"]
        gap = certified_gap(problem, upper, sol.objective, sol.utility)
        if status in (CONVERGED, LOCAL_OPTIMUM, TAIL_OFF) and gap is not None \
                and gap <= self.tol:
            status, message = OPTIMAL, f"{message}; the {bound} bound certifies gap {gap:.2e}"
        # The factors by which every rate could still rise: 1 + the rate-equivalent gap.
        info = dict(info or {})
        if upper is not None:  # what the bound certifies, and whether cells were lumped
            info.update(certifies="physical model", lumped=self.bound_gains is not self.gains)
        estimate_gap = certified_gap(problem, self.estimate, sol.objective, sol.utility)
        if estimate_gap is not None:
            info["estimate_factor"] = 1.0 + estimate_gap
        if gap is not None:
            info["bound_factor"] = 1.0 + gap
        p_mw = self.space.power_mw(patterns)
        avg_mw = sol.pattern_share @ p_mw
        with np.errstate(divide="ignore"):
            sol.cell_power_dbm = 10.0 * np.log10(avg_mw)
        sol.method = f"power+{self.method}"
        sol.status = status
        sol.message = f"{message} ({len(patterns)} patterns, master {self.method})"
        sol.upper_bound, sol.gap, sol.bound_kind, sol.bound_info = upper, gap, bound, info
        sol.estimate = float(self.estimate)
        sol.n_iter, sol.wall_s = self.inner_iterations, time.perf_counter() - t0
        sol.history = pd.DataFrame(history)
        sol.patterns = self.space.power_dbm(patterns)
        sol.energy_w = float(avg_mw.sum() * 1e-3)
        return sol


def _without_small_shares(problem: Problem, sol: Solution, tol: float) -> Solution:
    """`sol` with the patterns of less than :data:`_SMALL_SHARE` of the band dropped, if
    that costs less than a tenth of `tol` (relative).

    Interior-point masters leave small positive shares on patterns the optimum does not
    use; a cell switched on there for 0.01 % of the time is not "on" for a planner. The
    kept shares are scaled up to fill the band, and so are the users' shares on them.
    """
    theta = sol.pattern_share
    keep = theta >= _SMALL_SHARE
    if keep.all() or not keep.any():
        return sol
    scale = np.where(keep, 1.0 / theta[keep].sum(), 0.0)
    theta = theta * scale
    x = repair(problem, sol.x * scale[problem.resource], theta)
    pruned = build_solution(problem, x, method=sol.method, status=sol.status,
                            message=sol.message, mu=sol.prices["airtime"].ravel(),
                            nu=sol.prices["backhaul"], n_iter=sol.n_iter, wall_s=sol.wall_s,
                            history=sol.history, upper_bound=sol.upper_bound, theta=theta)
    if pruned.objective >= sol.objective - 0.1 * tol * max(1.0, abs(sol.objective)):
        return pruned
    return sol


def _tier_patterns(network: Network, space: PatternSpace) -> np.ndarray:
    """One pattern per tier (of several): that tier at its lowest level, the rest at full.

    Starting columns beside full power: in a HetNet, muting the macro tier (the
    almost-blank-subframe idea) is worth a share from the first master on.
    """
    tiers = network.cells["tier"].to_numpy()
    names = np.unique(tiers)
    if len(names) < 2:
        return np.zeros((0, space.n_cells), np.int64)
    full = space.full_power()
    low = np.argmin(space.level_dbm, axis=1)
    return np.stack([np.where(tiers == t, low, full) for t in names])


def _distinct(found: np.ndarray, existing: np.ndarray) -> np.ndarray:
    """The rows of `found` not in `existing`, without repeats, in their order."""
    if not len(found):
        return found
    is_new = ~(found[:, None, :] == existing[None, :, :]).all(axis=2).any(axis=1)
    found = found[is_new]
    _, first = np.unique(found, axis=0, return_index=True)
    return found[np.sort(first)]


def _check_options(method: str, gain_tol: Any, bound: Any, pricing: Any, stabilization: Any,
                   retire_after: Any, max_patterns: Any, max_iter: Any, time_limit_s: Any,
                   cluster_cells: Any, alpha: Any, tol: Any) -> None:
    """Every option checked at once; one ValidationError lists what is wrong and the fix."""
    def real(v: Any) -> bool:
        return is_real(v) and not np.isnan(v)

    def whole(v: Any, least: int) -> bool:
        return is_integer(v) and v >= least

    rules = [
        (method in PATTERN_METHODS, f"method={method!r} cannot solve over power patterns; fix: "
                                    f"one of {sorted(PATTERN_METHODS)}"),
        (gain_tol is None or (real(gain_tol) and gain_tol >= 0),
         f"gain_tol={gain_tol!r}; fix: a number ≥ 0 or None"),
        (bound in ("auto", "exact", "relaxed", None),
         f"bound={bound!r}; fix: 'auto', 'exact', 'relaxed' or None"),
        (pricing in ("auto", "exact", "search"), f"pricing={pricing!r}; fix: 'auto', 'exact' or "
                                                 "'search'"),
        (real(stabilization) and 0 <= stabilization < 1,
         f"stabilization={stabilization!r}; fix: a weight in [0, 1)"),
        (retire_after is None or whole(retire_after, 1),
         f"retire_after={retire_after!r}; fix: a whole number ≥ 1 or None"),
        (max_patterns is None or whole(max_patterns, 1),
         f"max_patterns={max_patterns!r}; fix: a whole number ≥ 1 or None"),
        (max_iter is None or max_iter == "auto" or whole(max_iter, 1),
         f"max_iter={max_iter!r}; fix: a whole number of iterations ≥ 1, 'auto' or None"),
        (time_limit_s is None or (real(time_limit_s) and time_limit_s >= 0),
         f"time_limit_s={time_limit_s!r}; fix: seconds ≥ 0, or None"),
        (whole(cluster_cells, 1), f"cluster_cells={cluster_cells!r}; fix: a whole number ≥ 1"),
        (real(alpha) and np.isfinite(alpha) and alpha >= 0,
         f"alpha={alpha!r}; fix: a fairness exponent ≥ 0 (1: proportional fair)"),
        (real(tol) and np.isfinite(tol) and tol > 0, f"tol={tol!r}; fix: a rate-equivalent gap "
                                                     "> 0, e.g. 1e-4"),
    ]
    problems = [fix for ok, fix in rules if not ok]
    if problems:
        raise ValidationError(problems)


class _ProgressBar:
    """A tqdm bar of the iterations against `max_iter`, with the run's numbers.

    Display only: nothing of the run depends on it (tqdm's own refresh timing included).
    """

    def __init__(self, max_iter: int | None):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=max_iter, unit="it", desc="solve_power", leave=False,
                        bar_format="{desc} {n}/{total_fmt} it |{bar:20}| {elapsed} {postfix}")

    def update(self, row: dict[str, Any]) -> None:
        self.bar.n = row["iteration"]
        self.bar.set_postfix(patterns=row["n_patterns"], objective=f"{row['objective']:.6g}",
                             estimate=f"{row['estimate']:.6g}", refresh=True)

    def close(self) -> None:
        self.bar.close()
