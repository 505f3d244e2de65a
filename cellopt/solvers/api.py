"""The front door of the solvers: :func:`solve` checks a call and dispatches it to a method.

The methods themselves register in :mod:`cellopt.solvers.registry` when their modules are
imported (:mod:`cellopt.solvers.methods`, which ``import cellopt.solvers`` runs).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from cellopt.errors import ValidationError
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.arguments import check_arguments, check_problem
from cellopt.solvers.common import one_blas_thread
from cellopt.solvers.registry import default_method, method_info, methods_with
from cellopt.solvers.result import apply_status_rule, build_solution
from cellopt.solvers.scaling import to_solver_units
from cellopt.solvers.single import round_to_single
from cellopt.status import OPTIMAL

__all__ = ["nothing_to_allocate", "solve"]


def solve(
    problem: Problem,
    method: str | None = None,
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
    method : str, optional
        One of :data:`~cellopt.solvers.registry.METHODS`: ``"dual"``, ``"alm"``,
        ``"dual_dask"`` (``dual`` on a Dask cluster, docs/distributed.md), ``"ipm"``,
        ``"reference"``, ``"max_rsrp"``, ``"max_sinr"``, ``"range_expansion"``,
        ``"cell_offsets"``, ``"load_aware"``, ``"random"``. What each can do and its
        options: :func:`method_info`, :func:`~cellopt.solvers.registry.method_table`.
        None (default): the fastest certified method for the problem's features,
        :func:`~cellopt.solvers.registry.default_method` — ``"dual"`` for fixed
        resources, ``"ipm"`` with backhaul caps or power patterns.
    tol : float
        Target rate-equivalent gap: status ``"optimal"`` certifies that no feasible
        allocation beats this one by more than scaling every user's rate by ``1 + tol``
        (at the same payments; :func:`~cellopt.solvers.certificate.certified_gap`).
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
        Its status follows one rule (:func:`~cellopt.solvers.result.apply_status_rule`):
        ``"optimal"`` only when the reported ``upper_bound`` is finite and certifies
        ``gap ≤ tol`` (``gap`` is recomputed from the reported bound and objective; a
        method's unconfirmed claim becomes ``"max_iter"``), and an objective of −inf or
        NaN is always ``"failed"``, the message saying why. A problem without links
        (nobody can be served) is answered by every method alike: every user at rate 0,
        objective ``Σ w U(0)`` (0 without users), status ``"optimal"`` with gap 0.

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
    if method is None:
        method, _ = default_method(problem)
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
        sol = apply_status_rule(problem, nothing_to_allocate(problem, method), tol)
        return dataclasses.replace(sol, network_fingerprint=problem.network_fingerprint)
    scale, scaled = to_solver_units(problem)
    kwargs = dict(tol=float(tol), max_iter=max_iter, time_limit_s=time_limit_s,
                  callback=scale.callback(callback))
    # One BLAS thread for the whole solve: the solvers' vectors and dense Schur matrices
    # are small enough that a multithreaded OpenBLAS spends its time waking its threads
    # (a 14k-entry dot product: 1 µs with warm threads, 2–12 ms after they slept).
    with one_blas_thread():
        sol = fn(scaled, **kwargs, **scale.options(options))
        if single_association:
            sol = round_to_single(scaled, sol, **kwargs)
    # The one status rule (apply_status_rule), on what the caller is given: "optimal"
    # only where the reported upper bound certifies gap ≤ tol, and a −inf or NaN objective
    # (α ≥ 1 and a user at rate 0) is "failed", whatever the method's own verdict.
    sol = apply_status_rule(problem, scale.solution(sol), tol)
    return dataclasses.replace(sol, network_fingerprint=problem.network_fingerprint)


def nothing_to_allocate(problem: Problem, method: str) -> Solution:
    """The answer to a problem without links: every user at rate 0, certified optimal.

    The objective is ``Σ w U(0)`` (finite only for α < 1, where users without links are
    allowed; 0 without users) minus, with free pattern shares, the cheapest pattern's
    energy cost in every block, which is also the dual bound at zero prices.
    """
    t0 = time.perf_counter()
    theta = None
    if problem.free_shares:
        cost = problem.block_cost
        theta = (cost == cost.min(axis=1, keepdims=True)).astype(float)
        theta /= theta.sum(axis=1, keepdims=True)
        theta = theta[0] if problem.share_block is None else theta
    sol = build_solution(
        problem, np.zeros(0), method=method, status=OPTIMAL,
        message="no links: nothing to allocate, every user gets rate 0", mu=None, nu=None,
        n_iter=0, wall_s=time.perf_counter() - t0, theta=theta)
    sol.history = pd.DataFrame([dict(iteration=0, objective=sol.objective,
                                     upper_bound=sol.upper_bound, gap=sol.gap)])
    return sol
