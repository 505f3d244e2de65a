"""Joint power, association and bandwidth: column generation over power patterns.

Start from full power; solve the association problem over the current patterns with free
shares θ (the *master*); from its prices, search for the pattern of highest reduced value
(*pricing*); add the improving ones; repeat. The stops, the statuses and the bounds are
described in :func:`solve_power`; docs/model.md ("Power patterns") has the mathematics.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd

from cellopt.checks import callback_stop, is_integer, is_real
from cellopt.errors import ValidationError
from cellopt.network import Network
from cellopt.power.bounds import bound_gains, decomposition_bound, joint_bound, relaxed_bound
from cellopt.power.gains import GainTable
from cellopt.power.kernels import cell_max
from cellopt.power.patterns import (
    PatternSpace,
    cell_best,
    link_coefficients,
    reduced_values,
    top_patterns_exhaustive,
)
from cellopt.power.problem import PowerProblem
from cellopt.power.search import Neighbourhoods, search_patterns
from cellopt.problem import Problem
from cellopt.solution import PowerResult, Solution
from cellopt.solvers.api import solve
from cellopt.solvers.certificate import certified_gap, utility_scale
from cellopt.solvers.common import link_prices, one_blas_thread, repair, user_min
from cellopt.solvers.registry import PATTERN_METHODS
from cellopt.solvers.result import apply_status_rule, build_solution
from cellopt.status import CONVERGED, LOCAL_OPTIMUM, MAX_ITER, OPTIMAL, STOPPED, TAIL_OFF, TIME_LIMIT

__all__ = ["EXACT_WORK_MAX", "MAX_ITER_EXACT", "MAX_ITER_SEARCH", "PRICING_WORK_MAX",
           "ColumnGenerationOptions", "Progress", "explain_stop", "master_duals",
           "master_problem", "solve_power"]

#: Most (patterns × users × table entries) that bound="auto" still enumerates exactly for
#: the final bound; an explicit bound="exact" is allowed up to 10× more.
EXACT_WORK_MAX = 3e8
#: Most (patterns × users × table entries) that pricing="auto" enumerates at every
#: iteration.
PRICING_WORK_MAX = 3e7
_EXACT_LIMIT = 10 * EXACT_WORK_MAX
#: Most patterns in a master with search pricing when `max_patterns` is None (with exact
#: pricing there is no cap: see solve_power).
_SEARCH_MAX_PATTERNS = 40
#: The work budget of max_iter="auto" [column-generation iterations]: with search pricing
#: (the README's call and its time, measured, are in the README) ...
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
#: Optimizer iterations per temperature of the decomposition bound (three temperatures).
_DECOMPOSITION_ITER = 300


def master_problem(gains: GainTable, space: PatternSpace, patterns: np.ndarray,
                   network: Network, alpha: float = 1.0,
                   links_per_pattern: int | None = None) -> Problem:
    """The association problem over a fixed pattern set, with free pattern shares.

    :meth:`PowerProblem.master` of ``PowerProblem.from_parts(network, gains, space,
    alpha)``: resource k is pattern ``patterns[k]``; the input row of link (pattern k,
    user i, candidate c) is ``(k · n_users + i) · n_candidates + c``. With
    `links_per_pattern`, each user keeps only its fastest links in each pattern.
    """
    return PowerProblem.from_parts(network, gains, space, alpha).master(patterns, links_per_pattern)


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


@dataclasses.dataclass(frozen=True)
class ColumnGenerationOptions:
    """How :func:`solve_power` runs column generation: bound, pricing and set management.

    Every field has the default ``solve_power`` uses without options; the record checks
    itself when made (one :class:`~cellopt.ValidationError` lists every bad field and
    its fix).

    Attributes
    ----------
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
        None: no bound is computed at the end. ``"auto"`` (default): exact when the
        enumeration is at most :data:`EXACT_WORK_MAX` (patterns × users × table entries),
        else relaxed. Exact pricing computes the exact bound at every pricing point
        whatever this says; the answer reports the tightest bound computed (the smaller of
        that one and the bound asked for), and ``Solution.power.bound_kind`` and
        ``bound_info`` say which it is (``bound_info["bounds"]``: every one computed, when
        there were two).
    gain_tol : float or None
        With search pricing only: stop ("tail_off") when three iterations together
        raised the objective by less than ``gain_tol × Σ_i w_i`` (α = 1: the weighted
        geometric-mean rate by less than a factor e^gain_tol). Default 1e-3; None: never.
    pricing : {"auto", "exact", "search"}
        ``"auto"`` (default): exact when the enumeration is at most
        :data:`PRICING_WORK_MAX`.
    stabilization : float
        Weight β ∈ [0, 1) of the stability center in the pricing prices (default 0.5;
        0: none).
    retire_after : int or None
        Masters in a row without share after which a pattern leaves the set (default 5;
        None: never).
    max_patterns : int or None
        Most patterns in a master; when it is full, the longest idle patterns and then
        the least used make room for new ones. None (default): no cap with exact pricing
        (an optimal mixture can need as many patterns as users + cells, and a cap below
        that makes exact pricing re-add the patterns it pushes out, without end), 40 with
        the search.
    links_per_pattern : int, None or "auto"
        Links each user keeps per pattern in the master: its fastest ones; None keeps
        every candidate; ``"auto"`` (default): every candidate with exact pricing, else 2.
    cluster_cells : int
        Most cells per cluster of the relaxed bound (default 3; 1: the interference-free
        bound).
    scope_cells : int or None
        With the relaxed bound and no time limit: also the decomposition bound
        (:func:`~cellopt.power.bounds.decomposition_bound`), in which every link sees
        this many of its user's strongest cells exactly (default 4; docs/model.md gives
        its share of the README call's time), and the smaller of the two is reported.
        None: the cluster relaxation only.
    master_options : mapping
        Passed to the convex method of the masters (e.g. ``{"max_iter": 200}``).
    """

    bound: str | None = "auto"
    gain_tol: float | None = 1e-3
    pricing: str = "auto"
    stabilization: float = 0.5
    retire_after: int | None = 5
    max_patterns: int | None = None
    links_per_pattern: int | str | None = "auto"
    cluster_cells: int = 3
    scope_cells: int | None = 4
    master_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.master_options, Mapping):
            raise ValidationError(f"master_options={self.master_options!r}; fix: a mapping of "
                                  "options for the masters' convex method, e.g. {}")
        object.__setattr__(self, "master_options", dict(self.master_options))
        _check_options(self)


_F = TypeVar("_F", bound=Callable[..., Solution])


class _UnknownArgument(ValidationError, TypeError):
    """An unknown keyword of :func:`solve_power` (a TypeError too, as Python raises)."""


def _checks_arguments(new: _F) -> _F:
    """`new` (its signature and docstring), refusing a Network in place of the
    :class:`PowerProblem` and unknown keywords (naming the call to write instead)."""
    accepted = [name for name in inspect.signature(new).parameters if name != "problem"]

    @functools.wraps(new)
    def solve_power(*args: Any, **kwargs: Any) -> Solution:
        first = args[0] if args else kwargs.get("problem", kwargs.get("network"))
        if isinstance(first, Network):
            raise ValidationError(
                "solve_power takes a PowerProblem, not a Network; fix: build the problem first, "
                "solve_power(PowerProblem.from_drop(drop, levels_db=[0, -10, None], "
                "energy_price_per_w=...), method, tol=..., max_iter=..., "
                "options=ColumnGenerationOptions(bound=..., ...)) (without a drop: "
                "PowerProblem.from_network(network, levels_db=..., rng=...))")
        unknown = [k for k in kwargs if k not in accepted and k != "problem"]
        if unknown:
            fields = {f.name for f in dataclasses.fields(ColumnGenerationOptions)}
            moved = [k for k in unknown if k in fields]
            fix = (f"give {', '.join(moved)} in options=ColumnGenerationOptions("
                   + ", ".join(f"{k}={kwargs[k]!r}" for k in moved) + ")" if moved else
                   f"use the arguments of solve_power: {accepted}")
            raise _UnknownArgument(f"solve_power got unknown argument(s) {unknown}; fix: {fix}"
                                   + ("" if len(moved) == len(unknown) else
                                      f" (its arguments: {accepted})"))
        return new(*args, **kwargs)
    return cast(_F, solve_power)


@_checks_arguments
def solve_power(
    problem: PowerProblem,
    method: str = "ipm",
    *,
    tol: float = 1e-4,
    max_iter: int | str | None = "auto",
    time_limit_s: float | None = None,
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
    progress: bool | Callable[[dict[str, Any]], Any] = True,
    options: ColumnGenerationOptions | None = None,
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
    problem : PowerProblem
        The network's arrays, gains, levels, energy prices and α
        (:meth:`PowerProblem.from_drop`, :meth:`PowerProblem.from_network`).
    method : str
        Convex method for the master: one of :data:`cellopt.solvers.PATTERN_METHODS`
        (``"ipm"``, the fastest, by default; ``"dual"``, ``"alm"``, ``"reference"``).
    tol : float
        Relative tolerance of the masters and of the certificate: status ``"optimal"``
        when a valid bound certifies gap ≤ tol.
    max_iter : int, "auto" or None
        Work budget [column-generation iterations; each is one master solve and one
        pricing round]: status ``"max_iter"`` when it ends the run. ``"auto"``:
        :data:`MAX_ITER_SEARCH` (20) with search pricing (the README's call and its
        measured time are in the README) and :data:`MAX_ITER_EXACT` (500) with
        exact pricing, which ends on its own (``"optimal"`` or ``"converged"``) long before
        on small networks. None: no budget.
    time_limit_s : float or None
        Wall-clock limit [s] (default None: none). An iteration that would not fit in the
        time left is not started; status ``"time_limit"`` when it ends the run. Unlike
        `max_iter`, the answer then depends on the machine's speed and load.
    callback : callable, optional
        Called after each iteration with its history row; True stops.
    progress : bool or callable
        Show the progress of every phase (default True): a tqdm bar per phase —
        column generation (iterations against `max_iter`; patterns, objective, estimate),
        finishing the answer, and the relaxed and decomposition bounds (rounds and
        optimizer iterations, with the bound so far). A callable instead receives every
        event as a dict (:class:`Progress`: ``phase``, ``step``, ``total`` and the phase's
        numbers). It only displays: the answer is the same with or without it.
    options : ColumnGenerationOptions, optional
        Bound, pricing, stabilization, pattern-set management, the relaxed bound's
        clusters and the masters' own options (default: ``ColumnGenerationOptions()``).

    Returns
    -------
    Solution
        A new solution (the final master's ``x`` on its links, resources = patterns) with
        the joint ``upper_bound`` (on the physical model: the tightest of the bounds
        computed, see ``ColumnGenerationOptions.bound``; None when none was) and ``gap``,
        and ``power``, a :class:`PowerResult`: ``patterns`` (dBm), ``pattern_share``,
        ``cell_power_dbm``, ``energy_w``, ``bound_kind`` ("exact" or "relaxed": which
        bound ``upper_bound`` is), ``bound_info``
        (``certifies``: "physical model"; ``lumped``: whether cells beyond the tables
        were lumped; ``bound_factor``, ``estimate_factor``, and ``estimate_iteration``:
        the iteration whose prices the estimate is taken at), the Lagrangian
        ``estimate`` (of the table's model: the joint bound with the best pattern the
        pricing knows in place of ``max_s V``; with exact pricing the smallest such value
        of the run, a bound, and with the search the smallest over the run's pricing
        points with every pattern known by the end, at least the answer and not a bound;
        docs/model.md, "Bounds, and an estimate beside them")
        and the column-generation ``history``, one
        row per iteration: ``iteration, n_patterns, objective, estimate, bound, n_new,
        pricing, inner_iterations, inner_time_s, search_time_s, time_s``; and ``stop``,
        what stopped column generation and what the bound then said, in words
        (:func:`explain_stop`). The solution's own ``pattern_share``, ``bound_kind`` and
        ``history`` are the same; the rest of the power record is in ``power`` only.
        ``status`` follows the rule of every solve
        (:func:`~cellopt.solvers.result.apply_status_rule`): "optimal" only when the
        reported ``upper_bound`` certifies gap ≤ tol, "failed" for a −inf or NaN
        objective; otherwise "converged" (exact pricing found no improving pattern, or its
        bound certified tol during the run but not the finished answer, and the reported
        gap is above tol: the masters' tolerance, the links left out of them, or the
        lumped cells),
        "local_optimum" (the search found no improving pattern; not certified),
        "tail_off", "max_iter", "time_limit" or "stopped".

    Raises
    ------
    ValidationError
        For a Network in place of the `problem` (the error names the call to write), a
        bad `method`, `tol`, `max_iter`, `time_limit_s` (> 0 if given), `callback` (a
        callable or None) or `progress` (a bool or a callable), all listed in one error,
        for an unknown keyword (a column-generation option given here names the
        ``options=ColumnGenerationOptions(...)`` to write), and for an exact bound or
        exact pricing over too many patterns.
    """
    return _solve(problem, method, tol, max_iter, time_limit_s, callback, progress, options,
                  time.perf_counter())


def _solve(problem: PowerProblem, method: str, tol: float, max_iter: int | str | None,
           time_limit_s: float | None, callback: Callable[[dict[str, Any]], bool | None] | None,
           progress: bool | Callable[[dict[str, Any]], Any],
           options: ColumnGenerationOptions | None, t0: float) -> Solution:
    """Column generation on `problem` (see :func:`solve_power`); `t0` starts its clock.

    All of it on one BLAS thread, like every solve: the answer then does not depend on
    the thread count, and scipy's optimizers on large vectors are far faster so on a busy
    machine."""
    with one_blas_thread():
        return _column_generation(problem, method, tol, max_iter, time_limit_s, callback,
                                  progress, options, t0)


def _column_generation(problem: PowerProblem, method: str, tol: float,
                       max_iter: int | str | None, time_limit_s: float | None,
                       callback: Callable[[dict[str, Any]], bool | None] | None,
                       progress: bool | Callable[[dict[str, Any]], Any],
                       options: ColumnGenerationOptions | None, t0: float) -> Solution:
    """The body of :func:`_solve`."""
    if not isinstance(problem, PowerProblem):
        raise ValidationError(f"solve_power got a {type(problem).__name__}; fix: pass a "
                              "PowerProblem, e.g. PowerProblem.from_drop(drop, levels_db=[0, -10, "
                              "None])")
    if options is None:
        options = ColumnGenerationOptions()
    elif not isinstance(options, ColumnGenerationOptions):
        raise ValidationError(f"options={options!r}; fix: a ColumnGenerationOptions(...) record "
                              "(the convex method's own options go in its master_options)")
    _check_run(method, tol, max_iter, time_limit_s, callback, progress)
    gains, space = problem.gains, problem.space
    bound, max_patterns = options.bound, options.max_patterns
    work = space.n_patterns * gains.cell.size
    if bound == "auto":
        bound = "exact" if work <= EXACT_WORK_MAX else "relaxed"
    if bound == "exact" and work > _EXACT_LIMIT:
        raise ValidationError(f"an exact bound would evaluate {space.n_patterns:.3g} patterns × "
                              f"{gains.cell.size} table entries; fix: bound='relaxed' or fewer "
                              "cells or levels")
    exact_pricing = options.pricing == "exact" or (options.pricing == "auto"
                                                   and work <= PRICING_WORK_MAX)
    if options.pricing == "exact" and work > _EXACT_LIMIT:
        raise ValidationError(f"exact pricing would evaluate {space.n_patterns:.3g} patterns × "
                              f"{gains.cell.size} table entries per iteration; fix: "
                              "pricing='search'")
    links_per_pattern = options.links_per_pattern
    if links_per_pattern == "auto":
        links_per_pattern = None if exact_pricing else 2
    if max_patterns is None and not exact_pricing:
        max_patterns = _SEARCH_MAX_PATTERNS
    if max_iter == "auto":
        max_iter = MAX_ITER_EXACT if exact_pricing else MAX_ITER_SEARCH
    total_weight = float(problem.weight.sum())

    run = _ColumnGeneration(problem, method, tol, links_per_pattern, exact_pricing,
                            options.stabilization, dict(options.master_options))
    patterns = _PatternSet(space.full_power())
    patterns.add(_distinct(_tier_patterns(problem), patterns.patterns), max_patterns, None)
    # Column generation gets the time limit but what the relaxed bound and the answer
    # (the best master finished to `tol`, and a margin) need at the end.
    reserve = (_RELAXED_SHARE if bound == "relaxed" else 0.0) + _FINISH_SHARE
    budget = None if time_limit_s is None else time_limit_s * (1.0 - reserve)
    bar = Progress(progress)
    bar.phase("column generation", max_iter, "it")
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
            stop = _stop_reason(run, it, history, tol, options.gain_tol, total_weight, callback,
                                budget, time_limit_s, t0, exact_pricing, max_iter)
            if stop is None:
                row["n_new"] = patterns.add(it["new"], max_patterns, options.retire_after)
            bar.step(row["iteration"], patterns=row["n_patterns"],
                     objective=f"{row['objective']:.6g}", estimate=f"{row['estimate']:.6g}")
            if stop is not None:
                break
        return run.finish(*stop, bound, history, t0, time_limit_s, options, bar, max_iter)
    finally:
        bar.close()


def _stop_reason(run: _ColumnGeneration, it: dict[str, Any], history: list[dict[str, Any]],
                 tol: float, gain_tol: float | None, total_weight: float,
                 callback: Callable[[dict[str, Any]], bool | None] | None,
                 budget: float | None, time_limit_s: float | None, t0: float,
                 exact_pricing: bool, max_iter: int | None) -> tuple[str, str] | None:
    """(status, message) if column generation stops after this iteration, else None.

    The callback sees every iteration's row; its stop request counts unless the run
    ends here for a reason of its own. Only the time limit reads the clock.
    """
    asked = callback is not None and callback_stop(callback(dict(history[-1])))
    gap = certified_gap(run.best_problem, run.certified_bound, run.best.objective,
                        run.best.utility)
    if gap is not None and gap <= tol:
        return OPTIMAL, (f"certified gap {gap:.2e} ≤ tol={tol:g}: the bound certifies the "
                         "answer, nothing left to gain")
    if not len(it["new"]):
        if exact_pricing:
            return CONVERGED, (f"no pattern improves (exact pricing: every pattern enumerated "
                               f"at the master's prices), but the certified gap is {gap:.2e} > "
                               f"tol={tol:g}")
        return LOCAL_OPTIMUM, ("the search finds no improving pattern: no new pattern would "
                               "raise the objective at the master's prices (a local optimum "
                               "of the search, not certified)")
    if asked:
        return STOPPED, "the callback asked to stop"
    # The next iteration is assumed to take as long as this one: stop if it would not fit.
    spent = history[-1]["time_s"] - (history[-2]["time_s"] if len(history) > 1 else 0.0)
    if it["cut_short"] or (budget is not None and time.perf_counter() - t0 + spent > budget):
        return TIME_LIMIT, (f"reached time_limit_s={time_limit_s:g}: the next iteration would "
                            "not fit in the time left")
    if not exact_pricing and gain_tol is not None and len(history) > 3:
        gained = history[-1]["objective"] - history[-4]["objective"]
        if gained < gain_tol * total_weight:
            return TAIL_OFF, (f"tailing off: the last three iterations gained {gained:.3g} in "
                              f"all, less than gain_tol × Σw = {gain_tol * total_weight:.3g} "
                              f"(gain_tol={gain_tol:g}), so more patterns were not worth "
                              "their time")
    if max_iter is not None and len(history) >= max_iter:
        return MAX_ITER, (f"reached max_iter={max_iter} iterations: the work budget is spent, "
                          "column generation has not converged (the estimate factor says about "
                          "how much the patterns found so far could still add; patterns not "
                          "yet found may add more)")
    return None


def explain_stop(sol: Solution) -> str:
    """Why column generation stopped, in words, from a :func:`solve_power` answer.

    E.g. "column generation stopped after 10 of at most 20 iterations (241 master
    iterations), tail_off: tailing off: the last three iterations gained 1.08 in all, ...;
    then the relaxed bound (decomposition): bound factor 2.29, estimate factor 1.05".
    An empty string for a solution without a power part.
    """
    return "" if sol.power is None else sol.power.stop


class _ColumnGeneration:
    """One column-generation run: masters, pricing, bounds and the best answer so far."""

    def __init__(self, problem: PowerProblem, method: str, tol: float,
                 links_per_pattern: int | None, exact_pricing: bool, stabilization: float,
                 options: dict[str, Any]):
        self.problem, self.gains, self.space = problem, problem.gains, problem.space
        gains, space = self.gains, self.space
        # Bounds hold for the physical model: computed with the lumped background at its
        # lowest (the table itself when nothing is lumped).
        self.bound_gains = bound_gains(gains, space)
        self.method, self.alpha, self.tol = method, problem.alpha, tol
        self.links_per_pattern = links_per_pattern
        self.exact_pricing = exact_pricing
        self.beta = stabilization
        self.options = options
        self.cell_price = problem.price_per_mbps
        # The best master so far: its solution, problem, patterns, prices and estimate.
        self.best: Solution | None = None
        self.best_problem: Problem | None = None
        self.best_patterns: np.ndarray | None = None
        self.best_duals: tuple[np.ndarray, np.ndarray] | None = None
        self.best_tol = tol
        #: The smallest Lagrangian value so far, max_s V replaced by the best pattern known
        #: at those prices (at least the best objective; a bound with exact pricing). It
        #: steers the masters' tolerance; what is reported is :meth:`reported_estimate`.
        self.estimate = np.inf
        self.point_values: list[float] = []
        self.n_iterations = 0
        #: The iteration of the smallest Lagrangian value (before the clamp to the objective).
        self.smallest_value, self.smallest_iteration = np.inf, 0
        #: With the search: every pricing point (λ, ν, iteration) and every pattern the run
        #: has known (the sets and the search's finds), for :meth:`reported_estimate`.
        self.price_points: list[tuple[np.ndarray, np.ndarray, int]] = []
        self.known_patterns: list[np.ndarray] = []
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
        self.n_iterations += 1
        problem = self.problem.master(pset.patterns, self.links_per_pattern)
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
        # The running estimate: the smallest Lagrangian value of the run, with the best
        # pattern known at those prices (the set's or a new one); never below the objective.
        estimate = min(self.point_values)
        if estimate < self.smallest_value:
            self.smallest_value, self.smallest_iteration = estimate, self.n_iterations
        self.estimate = max(min(self.estimate, estimate), self.best.objective)
        improving = values > threshold
        new = _distinct(found[improving][np.argsort(-values[improving], kind="stable")],
                        pset.patterns)
        return dict(new=new, estimate=estimate, pricing=pricing,
                    cut_short=sol.status == TIME_LIMIT, inner_iterations=sol.n_iter,
                    inner_time_s=t_search - t_inner, search_time_s=time.perf_counter() - t_search)

    def reported_estimate(self) -> tuple[float, int]:
        """The estimate the answer reports, and the iteration whose prices it is taken at.

        With exact pricing, the smallest Lagrangian value of the run: every one is a bound
        (on the table's model), so the smallest is the best of them. With the search, the
        smallest over every pricing point of the run of its Lagrangian value with
        ``max_s V`` taken over *every* pattern the run has known (the sets' and the
        search's finds, re-scored at that point's prices): each is at least the optimum
        over those patterns by weak duality, so at least the answer, and above it by
        what the patterns found add. Not a bound: patterns the search has not found may
        add more. (The running minimum, which steers the masters' tolerance, scores an
        early point only against the few patterns known then, and so falls below the
        answer.) The patterns' rates are computed once; each point costs a product and a
        maximum per cell.
        """
        if self.exact_pricing or not self.price_points:
            return float(self.estimate), int(self.smallest_iteration)
        patterns = np.unique(np.vstack(self.known_patterns), axis=0)
        rates = self.gains.rates_mbps(self.space.power_mw(patterns))       # (S, U, n)
        cand = self.gains.cell[:, :self.gains.n_candidates].ravel()
        energy = self.space.energy_cost(patterns)
        values = []
        for lam, nu, _ in self.price_points:  # two pricing points per iteration
            best = cell_max((rates * self._coef(lam, nu)[None]).reshape(len(patterns), -1),
                            cand, self.gains.n_cells)
            top = float((best.sum(axis=1) - energy).max())
            values.append(joint_bound(self.gains, self.space, self.best_problem, lam, nu, top))
        k = int(np.argmin(values))
        return float(values[k]), int(self.price_points[k][2])

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
                self.price_points.append((p_lam.copy(), p_nu.copy(), self.n_iterations))
                self.known_patterns += [found, pset.patterns.copy()]
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
               options: ColumnGenerationOptions, progress: Progress,
               max_iter: int | None) -> Solution:
        """A new solution: the best master's allocation, with the joint bound, the status
        and the :class:`PowerResult` (the masters' solutions are left as they are)."""
        progress.phase("finishing the answer", 1)
        if self.best_tol > self.tol:  # solved loosely during the run: finish it to `tol`
            left = None if time_limit_s is None else max(
                0.9 * time_limit_s - (time.perf_counter() - t0), 1.0)
            tight = solve(self.best_problem, method=self.method, tol=self.tol,
                          **{**self.options, "time_limit_s": left})
            if tight.objective > self.best.objective:
                self.best = tight
        self.best = _without_small_shares(self.best_problem, self.best, self.tol)
        progress.step(1, objective=f"{self.best.objective:.6g}")
        sol, problem, patterns = self.best, self.best_problem, self.best_patterns
        lam, nu = self.best_duals
        if bound == "exact" and not self.exact_pricing:  # one enumeration at the best prices
            _, top = top_patterns_exhaustive(self.bound_gains, self.space, self._coef(lam, nu),
                                             k=1, max_patterns=int(_EXACT_LIMIT))
            self.certified_bound = joint_bound(self.gains, self.space, problem, lam, nu,
                                               float(top[0]))
        # Every valid bound computed, by kind: the exact (enumerated) one that exact pricing
        # computes at every pricing point, whatever `bound` asks for, and the relaxed one.
        bounds: dict[str, float] = {}
        infos: dict[str, dict[str, Any]] = {}
        if self.certified_bound is not None and np.isfinite(self.certified_bound):
            bounds["exact"] = float(self.certified_bound)
            infos["exact"] = dict(kind="exact", patterns_enumerated=self.space.n_patterns)
        if bound == "relaxed":
            left = None if time_limit_s is None else max(
                0.97 * time_limit_s - (time.perf_counter() - t0), 0.02 * time_limit_s)
            progress.phase("relaxed bound", None, "round")
            relaxed = relaxed_bound(self.problem, self.gains, self.space, self.alpha,
                                    cluster_cells=options.cluster_cells, tol=self.tol,
                                    time_limit_s=left, prices=(lam, nu), progress=progress.step)
            if time_limit_s is None and options.scope_cells is not None:  # work-bounded
                progress.phase("decomposition bound", 3 * _DECOMPOSITION_ITER, "it")
                relaxed = decomposition_bound(self.problem, self.gains, self.space, self.alpha,
                                              scope_cells=options.scope_cells, prices=(lam, nu),
                                              baseline=relaxed, max_iter=_DECOMPOSITION_ITER,
                                              progress=progress.step)
            bounds["relaxed"], infos["relaxed"] = float(relaxed["upper_bound"]), relaxed["info"]
        # The reported bound is the tightest of them (each is valid for the physical model).
        kind = min(bounds, key=bounds.__getitem__) if bounds else None
        upper = None if kind is None else bounds[kind]
        info = None if kind is None else dict(infos[kind])
        if len(bounds) > 1:
            info["bounds"] = dict(bounds)
        gap = certified_gap(problem, upper, sol.objective, sol.utility)
        stopped_by, why = status, message
        if status in (CONVERGED, LOCAL_OPTIMUM, TAIL_OFF) and gap is not None \
                and gap <= self.tol:
            status, message = OPTIMAL, f"{message}; the {kind} bound certifies gap {gap:.2e}"
        # The factors by which every rate could still rise: 1 + the rate-equivalent gap.
        info = dict(info or {})
        if upper is not None:  # what the bound certifies, and whether cells were lumped
            info.update(certifies="physical model", lumped=self.bound_gains is not self.gains)
        # Both estimates are at least what the finished master reaches (see
        # reported_estimate); the clamp only absorbs the masters' round-off.
        estimate, estimate_iteration = self.reported_estimate()
        estimate = max(estimate, sol.objective)
        estimate_gap = certified_gap(problem, estimate, sol.objective, sol.utility)
        if estimate_gap is not None:
            info["estimate_factor"] = 1.0 + estimate_gap
            info["estimate_iteration"] = estimate_iteration
        if gap is not None:
            info["bound_factor"] = 1.0 + gap
        p_mw = self.space.power_mw(patterns)
        avg_mw = sol.pattern_share @ p_mw
        with np.errstate(divide="ignore"):
            cell_power_dbm = 10.0 * np.log10(avg_mw)
        frame = pd.DataFrame(history)
        power = PowerResult(patterns=self.space.power_dbm(patterns),
                            pattern_share=sol.pattern_share, cell_power_dbm=cell_power_dbm,
                            energy_w=float(avg_mw.sum() * 1e-3), bound_kind=kind, bound_info=info,
                            estimate=float(estimate), history=frame, master=problem,
                            network_fingerprint=self.problem.network_fingerprint)
        out = dataclasses.replace(
            sol, method=f"power+{self.method}", status=status,
            message=f"{message} ({len(patterns)} patterns, master {self.method})",
            upper_bound=upper, gap=gap, n_iter=self.inner_iterations,
            wall_s=time.perf_counter() - t0, history=frame, bound_kind=power.bound_kind,
            power=power, network_fingerprint=self.problem.network_fingerprint)
        # The one status rule: "optimal" only where the reported bound certifies tol (a
        # run that stopped on its certificate and lost it when its best master was
        # finished is "converged"); a −inf or NaN objective is "failed".
        out = apply_status_rule(problem, out, self.tol, uncertified=CONVERGED)
        stop = _stop_text(stopped_by, why, len(history), max_iter, self.inner_iterations,
                          kind, info, out.status)
        power = dataclasses.replace(power, stop=stop)
        return dataclasses.replace(out, power=power)


def _stop_text(stopped_by: str, why: str, n_iter: int, max_iter: int | None, inner: int,
               kind: str | None, info: dict[str, Any], final: str) -> str:
    """Why column generation stopped and what the bounds then said, in words."""
    budget = "" if max_iter is None else f" of at most {max_iter}"
    text = (f"column generation stopped after {n_iter}{budget} iterations ({inner} master "
            f"iterations), {stopped_by}: {why}")
    if kind is None:
        text += "; no bound computed"
    else:
        what = f"{kind} bound" + (f" ({info['relaxation']})" if "relaxation" in info else "")
        text += f"; then the {what}: bound factor {_factor_text(info.get('bound_factor', np.inf))}"
    if "estimate_factor" in info:
        text += (f", estimate factor {_factor_text(info['estimate_factor'])} (at iteration "
                 f"{info['estimate_iteration']}'s prices)")
    if final != stopped_by:
        text += f"; status {final}"
    return text


def _factor_text(factor: float) -> str:
    """A factor ≥ 1 in words that never round a shortfall away: 1.0417, or 1 + 3.2e-05
    when it is within 1e-3 of 1 (".4g" would print 1, which reads as nothing left)."""
    return f"{factor:.4g}" if not 1.0 < factor < 1.001 else f"1 + {factor - 1.0:.2g}"


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


def _tier_patterns(problem: PowerProblem) -> np.ndarray:
    """One pattern per tier (of several): that tier at its lowest level, the rest at full.

    Starting columns beside full power: in a HetNet, muting the macro tier (the
    almost-blank-subframe idea) is worth a share from the first master on.
    """
    space = problem.space
    tiers = problem.tier_names
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


def _real(v: Any) -> bool:
    return is_real(v) and not np.isnan(v)


def _whole(v: Any, least: int) -> bool:
    return is_integer(v) and v >= least


def _raise_if(rules: list[tuple[bool, str]]) -> None:
    """One ValidationError listing the fix of every rule that fails."""
    problems = [fix for ok, fix in rules if not ok]
    if problems:
        raise ValidationError(problems)


def _check_options(o: ColumnGenerationOptions) -> None:
    """Every field of a ColumnGenerationOptions checked at once."""
    lpp = o.links_per_pattern
    _raise_if([
        (o.gain_tol is None or (_real(o.gain_tol) and o.gain_tol >= 0),
         f"gain_tol={o.gain_tol!r}; fix: a number ≥ 0 or None"),
        (o.bound in ("auto", "exact", "relaxed", None),
         f"bound={o.bound!r}; fix: 'auto', 'exact', 'relaxed' or None"),
        (o.pricing in ("auto", "exact", "search"),
         f"pricing={o.pricing!r}; fix: 'auto', 'exact' or 'search'"),
        (_real(o.stabilization) and 0 <= o.stabilization < 1,
         f"stabilization={o.stabilization!r}; fix: a weight in [0, 1)"),
        (o.retire_after is None or _whole(o.retire_after, 1),
         f"retire_after={o.retire_after!r}; fix: a whole number ≥ 1 or None"),
        (o.max_patterns is None or _whole(o.max_patterns, 1),
         f"max_patterns={o.max_patterns!r}; fix: a whole number ≥ 1 or None"),
        (lpp is None or lpp == "auto" or _whole(lpp, 1),
         f"links_per_pattern={lpp!r}; fix: a whole number ≥ 1, 'auto' or None"),
        (_whole(o.cluster_cells, 1), f"cluster_cells={o.cluster_cells!r}; fix: a whole number ≥ 1"),
        (o.scope_cells is None or _whole(o.scope_cells, 1),
         f"scope_cells={o.scope_cells!r}; fix: a whole number ≥ 1, or None"),
    ])


def _check_run(method: Any, tol: Any, max_iter: Any, time_limit_s: Any, callback: Any,
               progress: Any) -> None:
    """solve_power's own arguments checked at once: one ValidationError lists every bad
    one and its fix."""
    _raise_if([
        (isinstance(method, str) and method in PATTERN_METHODS,
         f"method={method!r} cannot solve over power patterns; fix: "
         f"one of {sorted(PATTERN_METHODS)}"),
        (_real(tol) and np.isfinite(tol) and tol > 0, f"tol={tol!r}; fix: a rate-equivalent gap "
                                                      "> 0, e.g. 1e-4"),
        (max_iter is None or max_iter == "auto" or _whole(max_iter, 1),
         f"max_iter={max_iter!r}; fix: a whole number of iterations ≥ 1, 'auto' or None"),
        (time_limit_s is None or (_real(time_limit_s) and time_limit_s > 0),
         f"time_limit_s={time_limit_s!r}; fix: seconds > 0, or None (no limit)"),
        (callback is None or callable(callback),
         f"callback={callback!r}; fix: a function of the iteration's history row (a dict) "
         "that returns True to stop, or None"),
        (isinstance(progress, (bool, np.bool_)) or callable(progress),
         f"progress={progress!r}; fix: True (a bar per phase), False (nothing) or a function "
         "that receives every event as a dict"),
    ])


class Progress:
    """What :func:`solve_power` shows of every phase while it runs.

    Phases, in order: ``"column generation"`` (one step per iteration, against
    `max_iter`), ``"finishing the answer"`` (the best master solved to `tol`), and with a
    relaxed bound ``"relaxed bound"`` (one step per round of each cluster relaxation) and
    ``"decomposition bound"`` (one step per optimizer iteration, against their budget).
    `show` True draws a tqdm bar per phase on stderr; a callable receives every event as
    a dict: ``phase``, ``step`` (0 when the phase starts), ``total`` (None: unknown) and
    the phase's numbers; False shows nothing. Display only: nothing of the run depends on
    it (tqdm's own refresh timing included).
    """

    def __init__(self, show: bool | Callable[[dict[str, Any]], Any]):
        self.sink = show if callable(show) else None
        self.draw = bool(show) and self.sink is None
        self.bar: Any = None
        self.name: str | None = None
        self.total: int | None = None

    def phase(self, name: str, total: int | None, unit: str = "step") -> None:
        """Start phase `name` of `total` steps (None: unknown)."""
        self._close_bar()
        self.name, self.total = name, total
        if self.draw:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit=unit, desc=f"solve_power: {name}", leave=False,
                            bar_format="{desc} {n}/{total_fmt} " + unit
                                       + " |{bar:20}| {elapsed} {postfix}")
        self._emit(0, {})

    def step(self, done: int, **info: Any) -> None:
        """`done` steps of the current phase are finished; `info`: numbers to show."""
        if self.bar is not None:
            self.bar.n = done
            self.bar.set_postfix(**info, refresh=True)
        self._emit(done, info)

    def _emit(self, done: int, info: dict[str, Any]) -> None:
        if self.sink is not None:
            self.sink(dict(phase=self.name, step=done, total=self.total, **info))

    def _close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def close(self) -> None:
        self._close_bar()
