"""The method registry behind :func:`cellopt.solve`."""

from __future__ import annotations

from collections.abc import Callable

from cellopt.problem import Problem
from cellopt.solution import Solution

__all__ = ["BLOCK_METHODS", "METHODS", "PATTERN_METHODS", "register"]

#: name -> function(problem, *, tol, max_iter, time_limit_s, callback, **options) -> Solution
METHODS: dict[str, Callable[..., Solution]] = {}
#: Methods that also solve problems whose resources are power patterns with free shares.
PATTERN_METHODS: set[str] = set()
#: Methods that also solve problems with several pattern-share blocks (``Problem.share_block``).
BLOCK_METHODS: set[str] = set()


def register(name: str, *, patterns: bool = False, share_blocks: bool = False
             ) -> Callable[[Callable[..., Solution]], Callable[..., Solution]]:
    """Decorator: make a solver available as ``solve(problem, method=name)``.

    `patterns`: the method handles free pattern shares (``Problem.pattern_cost``);
    `share_blocks`: also several share blocks (``Problem.share_block``).
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
    except KeyError:
        raise ValueError(f"unknown method {name!r}; valid methods: {sorted(METHODS)}") from None


def check_problem(problem: Problem) -> None:
    if not isinstance(problem, Problem):
        raise TypeError(f"expected a cellopt.Problem, got {type(problem).__name__}; build one "
                        "with Problem.from_network(...) or Problem.from_links(...)")
