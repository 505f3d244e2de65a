"""The method registry behind :func:`cellopt.solve`, and the checks every call passes."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from cellopt.errors import ValidationError
from cellopt.network import is_integer, is_real
from cellopt.problem import Problem
from cellopt.solution import Solution

__all__ = ["BLOCK_METHODS", "METHODS", "PATTERN_METHODS", "method_options", "register"]

#: name -> function(problem, *, tol, max_iter, time_limit_s, callback, **options) -> Solution
METHODS: dict[str, Callable[..., Solution]] = {}
#: Methods that also solve problems whose resources are power patterns with free shares.
PATTERN_METHODS: set[str] = set()
#: Methods that also solve problems with several pattern-share blocks (``Problem.share_block``).
BLOCK_METHODS: set[str] = set()

#: Arguments :func:`cellopt.solve` takes itself for every method.
_COMMON = ("tol", "max_iter", "time_limit_s", "callback")


def register(name: str, *, patterns: bool = False, share_blocks: bool = False
             ) -> Callable[[Callable[..., Solution]], Callable[..., Solution]]:
    """Decorator: make a solver available as ``solve(problem, method=name)``.

    `patterns`: the method handles free pattern shares (``Problem.pattern_cost``);
    `share_blocks`: also several share blocks (``Problem.share_block``). The method's
    options are the keyword arguments of its signature beyond those :func:`cellopt.solve`
    passes to every method.
    """

    def deco(fn: Callable[..., Solution]) -> Callable[..., Solution]:
        METHODS[name] = fn
        if patterns:
            PATTERN_METHODS.add(name)
        if share_blocks:
            BLOCK_METHODS.add(name)
        return fn

    return deco


def get_method(name: str) -> Callable[..., Solution]:
    try:
        return METHODS[name]
    except (KeyError, TypeError):
        raise ValidationError(f"unknown method {name!r}; fix: use one of {sorted(METHODS)}"
                              ) from None


def method_options(name: str) -> list[str]:
    """The method-specific options of a registered method, sorted."""
    params = inspect.signature(get_method(name)).parameters.values()
    return sorted(p.name for p in params
                  if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in _COMMON)


def check_problem(problem: Problem) -> None:
    if not isinstance(problem, Problem):
        raise ValidationError(f"expected a cellopt.Problem, got {type(problem).__name__}; fix: "
                              "build one with Problem.from_network(...) or Problem.from_links(...)")


def check_arguments(method: str, fn: Callable[..., Solution], *, tol: Any, max_iter: Any,
                    time_limit_s: Any, callback: Any, single_association: Any,
                    options: dict[str, Any]) -> None:
    """Refuse bad common arguments and options the method does not have, all at once."""
    problems = []
    if not (is_real(tol) and np.isfinite(tol) and tol > 0):
        problems.append(f"tol={tol!r}; fix: give a rate-equivalent gap > 0, e.g. 1e-4")
    if max_iter is not None and not (is_integer(max_iter) and max_iter >= 0):
        problems.append(f"max_iter={max_iter!r}; fix: give an integer ≥ 0, or None for the "
                        "method's default")
    if time_limit_s is not None and not (is_real(time_limit_s) and time_limit_s >= 0):
        problems.append(f"time_limit_s={time_limit_s!r}; fix: give seconds ≥ 0, or None for no "
                        "limit")
    if callback is not None and not callable(callback):
        problems.append(f"callback={callback!r} is not callable; fix: give a function of one "
                        "dict, or None")
    if not isinstance(single_association, (bool, np.bool_)):
        problems.append(f"single_association={single_association!r}; fix: give True or False")
    valid = method_options(method)
    unknown = sorted(set(options) - set(valid))
    if unknown:
        problems.append(f"unknown option(s) {unknown} for method {method!r}; fix: use its "
                        f"options {valid} (see its docstring)")
    if problems:
        raise ValidationError(problems)


def nothing_to_allocate(problem: Problem, method: str) -> Solution:
    """The answer to a problem without links: every user at rate 0, certified optimal.

    The objective is ``Σ w U(0)`` (finite only for α < 1, where users without links are
    allowed; 0 without users) minus, with free pattern shares, the cheapest pattern's
    energy cost in every block, which is also the dual bound at zero prices.
    """
    from cellopt.solvers.common import build_solution

    t0 = time.perf_counter()
    theta = None
    if problem.free_shares:
        cost = problem.block_cost
        theta = (cost == cost.min(axis=1, keepdims=True)).astype(float)
        theta /= theta.sum(axis=1, keepdims=True)
        theta = theta[0] if problem.share_block is None else theta
    sol = build_solution(
        problem, np.zeros(0), method=method, status="optimal",
        message="no links: nothing to allocate, every user gets rate 0", mu=None, nu=None,
        n_iter=0, wall_s=time.perf_counter() - t0, theta=theta)
    sol.history = pd.DataFrame([dict(iteration=0, objective=sol.objective,
                                     upper_bound=sol.upper_bound, gap=sol.gap)])
    return sol
