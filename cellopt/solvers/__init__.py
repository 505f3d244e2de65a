"""Solvers for the association problem, behind one front door: :func:`solve`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.registry import (
    BLOCK_METHODS,
    METHODS,
    PATTERN_METHODS,
    check_problem,
    get_method,
    register,
)

__all__ = ["BLOCK_METHODS", "METHODS", "PATTERN_METHODS", "register", "solve"]

# Each module registers its methods on import.
from cellopt.solvers import alm, baselines, dual, ipm, reference  # noqa: F401


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

    Parameters
    ----------
    problem : Problem
    method : str
        One of :data:`METHODS`: ``"alm"`` (default), ``"dual"``, ``"reference"``,
        ``"max_rsrp"``, ``"max_sinr"``, ``"range_expansion"``, ``"load_aware"``.
    tol : float
        Target relative gap ``(upper_bound − objective) / max(1, |objective|)``.
    max_iter : int, optional
        Iteration cap (method-specific default).
    time_limit_s : float, optional
        Wall-clock cap [s]; reaching it is a status, not an error.
    callback : callable, optional
        Called once per iteration with a dict (``iteration``, ``objective``,
        ``upper_bound``, ``gap`` and residuals); returning True stops the method
        (status ``"stopped"``).
    single_association : bool
        Serve each user by one cell (``alm``, ``dual``, ``reference``): the fractional
        optimum is rounded and improved locally; the fractional upper bound is kept, so the
        gap is certified against the fractional optimum.
    **options
        Method-specific options (see each method's docstring).

    Returns
    -------
    Solution

    Raises
    ------
    ValueError
        For an unknown method (the message lists the valid ones) or bad options.
    """
    check_problem(problem)
    fn = get_method(method)
    if problem.free_shares and method not in PATTERN_METHODS:
        raise ValueError(f"method {method!r} does not handle free power-pattern shares "
                         f"(Problem.pattern_cost); fix: use one of {sorted(PATTERN_METHODS)}, "
                         "or fix the shares by scaling each pattern's rates by its share")
    if problem.share_block is not None and method not in BLOCK_METHODS:
        raise ValueError(f"method {method!r} does not handle several pattern-share blocks "
                         f"(Problem.share_block); fix: use one of {sorted(BLOCK_METHODS)}")
    if not tol > 0:
        raise ValueError(f"tol={tol}; fix: give a relative gap > 0, e.g. 1e-4")
    kwargs = dict(tol=tol, max_iter=max_iter, time_limit_s=time_limit_s, callback=callback)
    if not single_association:
        return fn(problem, **kwargs, **options)
    if method not in ("alm", "dual", "ipm", "reference"):
        raise ValueError(f"single_association applies to 'alm', 'dual' and 'reference', not "
                         f"{method!r} (the baselines already serve each user by one cell)")
    from cellopt.solvers.single import round_to_single

    return round_to_single(problem, fn(problem, **kwargs, **options), **kwargs)
