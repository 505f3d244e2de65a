"""Solvers for the association problem, behind one front door: :func:`solve`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cellopt.errors import ValidationError, describe_rows
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.registry import (
    BLOCK_METHODS,
    METHOD_INFO,
    METHODS,
    PATTERN_METHODS,
    MethodInfo,
    OptionInfo,
    check_arguments,
    check_problem,
    method_info,
    method_options,
    method_table,
    methods_with,
    nothing_to_allocate,
    register,
)
from cellopt.solvers.scaling import to_solver_units

__all__ = [
    "BLOCK_METHODS", "METHODS", "METHOD_INFO", "PATTERN_METHODS", "MethodInfo", "OptionInfo",
    "method_info", "method_options", "method_table", "methods_with", "register", "solve",
]

# Each module registers its methods on import.
from cellopt.solvers import alm, baselines, dask_dual, dual, ipm, reference  # noqa: F401


def solve(
    problem: Problem,
    method: str = "alm",
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
    single_association: bool = False,
    **options: Any,
) -> Solution:
    """Solve an association problem with one of the registered methods.

    Every method works on the problem rescaled to weights and rates of order one
    (:class:`~cellopt.solvers.scaling.Scale`) and reports in the problem's units.

    Parameters
    ----------
    problem : Problem
    method : str
        One of :data:`METHODS`: ``"alm"`` (default), ``"dual"``, ``"dual_dask"``
        (``dual`` on a Dask cluster, docs/distributed.md), ``"ipm"``, ``"reference"``,
        ``"max_rsrp"``, ``"max_sinr"``, ``"range_expansion"``, ``"load_aware"``. What each
        can do and its options: :func:`method_info`, :func:`method_table`.
    tol : float
        Target rate-equivalent gap: status ``"optimal"`` certifies that no feasible
        allocation beats this one by more than scaling every user's rate by ``1 + tol``
        (at the same payments; :func:`~cellopt.solvers.common.certified_gap`).
    max_iter : int, optional
        Iteration cap ≥ 0 (method-specific default); 0 returns the method's starting
        point, certified as far as it goes.
    time_limit_s : float, optional
        Wall-clock cap [s] ≥ 0; reaching it is a status, not an error.
    callback : callable, optional
        Called once per iteration with a dict (``iteration``, ``objective``,
        ``upper_bound``, ``gap`` and residuals); returning True stops the method
        (status ``"stopped"``).
    single_association : bool
        Serve each user by one cell (the methods that declare it,
        ``method_info(method).single_association``: ``alm``, ``dual``, ``ipm``,
        ``reference``): the fractional optimum is rounded and improved locally; the
        fractional upper bound is kept, so the gap is certified against the fractional
        optimum.
    **options
        Method-specific options (``method_info(method).options``; see each method's
        docstring). Float, int and bool options are checked for their type.

    Returns
    -------
    Solution
        A problem without links (nobody can be served) is answered by every method alike:
        every user at rate 0, objective ``Σ w U(0)`` (0 without users), status
        ``"optimal"`` with gap 0.

    Raises
    ------
    ValidationError
        For an unknown method or option (the message lists the valid ones), an option of
        the wrong type, a bad value of `tol`, `max_iter`, `time_limit_s`, `callback` or
        `single_association`, ``single_association=True`` for a method that does not
        declare it, or free pattern shares (several share blocks) for a method that does
        not handle them.
    """
    check_problem(problem)
    info = method_info(method)
    fn = info.function
    check_arguments(method, fn, tol=tol, max_iter=max_iter, time_limit_s=time_limit_s,
                    callback=callback, single_association=single_association, options=options)
    if problem.free_shares and not info.patterns:
        raise ValidationError(
            f"method {method!r} does not handle free power-pattern shares "
            f"(Problem.pattern_cost); fix: use one of {methods_with('patterns')}, or fix the "
            "shares by scaling each pattern's rates by its share")
    if problem.share_block is not None and not info.share_blocks:
        raise ValidationError(f"method {method!r} does not handle several pattern-share blocks "
                              f"(Problem.share_block); fix: use one of {methods_with('share_blocks')}")
    if problem.n_links == 0:
        return nothing_to_allocate(problem, method)
    scale, scaled = to_solver_units(problem)
    kwargs = dict(tol=float(tol), max_iter=max_iter, time_limit_s=time_limit_s,
                  callback=scale.callback(callback))
    sol = fn(scaled, **kwargs, **scale.options(options))
    if single_association:
        from cellopt.solvers.single import round_to_single

        sol = round_to_single(scaled, sol, **kwargs)
    sol = scale.solution(sol)
    if not np.isfinite(sol.objective):
        # α ≥ 1 and some user at rate 0: not an answer, whatever the method's own verdict
        # (a limit or a stop still says why it ended).
        starved = np.flatnonzero(sol.user_rate_mbps <= 0)
        if sol.success:
            sol.status = "failed"
        sol.message += (f"; the objective is {sol.objective}: users {describe_rows(starved)} get "
                        f"rate 0, whose utility is −inf at alpha={problem.alpha:g}")
    return sol
