"""Joint power, association and bandwidth: column generation over power patterns.

Start from full power; solve the association problem over the current patterns with free
shares θ (the *master*); from its prices, search for the pattern of highest reduced value
(*pricing*); add the improving ones; repeat. The stops, the statuses and the bounds are
described in :func:`solve_power`; docs/model.md ("Power patterns") has the mathematics.
The run itself is in :mod:`cellopt.power.column_generation`, its options and argument
checks in :mod:`cellopt.power.options`, what it shows while it runs in
:mod:`cellopt.power.progress`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np

from cellopt.checks import callback_stop
from cellopt.errors import ValidationError
from cellopt.network import Network
from cellopt.power.column_generation import _ColumnGeneration, _distinct, _PatternSet
from cellopt.power.gains import GainTable
from cellopt.power.options import (
    _EXACT_LIMIT,
    EXACT_WORK_MAX,
    PRICING_WORK_MAX,
    ColumnGenerationOptions,
    _check_run,
)
from cellopt.power.patterns import PatternSpace
from cellopt.power.problem import PowerProblem
from cellopt.power.progress import Progress
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.certificate import certified_gap
from cellopt.solvers.common import one_blas_thread
from cellopt.status import CONVERGED, LOCAL_OPTIMUM, MAX_ITER, OPTIMAL, STOPPED, TAIL_OFF, TIME_LIMIT

__all__ = ["MAX_ITER_EXACT", "MAX_ITER_SEARCH", "explain_stop", "master_problem", "solve_power"]

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
    progress: bool | Callable[[dict[str, Any]], Any] | None = None,
    options: ColumnGenerationOptions | None = None,
) -> Solution:
    """Optimize transmit powers jointly with association and bandwidth.

    Column generation over power patterns. Each iteration solves the master (the
    association problem over the current patterns, shares free) with the convex
    `method`, reads the users' rate prices λ and the backhaul prices ν from its duals
    (:func:`~cellopt.power.column_generation.master_duals`), and prices new patterns:
    their reduced value ``V(s) = Σ_j max_i (λ_i − c_j − ν_j)⁺ R_ij(s) − E_s`` must beat
    the best pattern of the set. Pricing is exact (every pattern enumerated) when the pattern space is small,
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
    progress : bool, callable or None
        Show the progress of every phase: a tqdm bar per phase —
        column generation (iterations against `max_iter`; patterns, objective, estimate),
        finishing the answer, and the relaxed and decomposition bounds (rounds and
        optimizer iterations, with the bound so far). A callable instead receives every
        event as a dict (:class:`Progress`: ``phase``, ``step``, ``total`` and the phase's
        numbers). None (default): bars when standard error is a terminal
        (:mod:`cellopt.progress`). It only displays: the answer is the same with or without it.
    options : ColumnGenerationOptions, optional
        Bound, pricing, stabilization, pattern-set management, the relaxed bound's
        clusters and the masters' own options (default: ``ColumnGenerationOptions()``).

    Returns
    -------
    Solution
        A new solution (the final master's ``x`` on its links, resources = patterns) with
        the joint ``upper_bound`` (on the physical model: the tightest of the bounds
        computed, see ``ColumnGenerationOptions.bound``; None when none was) and ``gap``,
        and ``power``, a :class:`~cellopt.solution.PowerResult`: ``patterns`` (dBm),
        ``pattern_share``, ``cell_power_dbm``, ``energy_w``, ``bound_kind`` ("exact" or
        "relaxed": which bound ``upper_bound`` is), ``bound_info``
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
