"""How :func:`~cellopt.power.solve_power` runs: its column-generation options and the checks
of its arguments.

:class:`ColumnGenerationOptions` holds the bound, pricing and pattern-set settings; the
work limits below decide what their ``"auto"`` values choose. Every bad option or
argument is listed in one :class:`~cellopt.ValidationError`, each with its fix.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from cellopt.checks import is_integer, is_real
from cellopt.errors import ValidationError
from cellopt.solvers.registry import PATTERN_METHODS

__all__ = ["EXACT_WORK_MAX", "PRICING_WORK_MAX", "ColumnGenerationOptions"]

#: Most (patterns × users × table entries) that bound="auto" still enumerates exactly for
#: the final bound; an explicit bound="exact" is allowed up to 10× more.
EXACT_WORK_MAX = 3e8
#: Most (patterns × users × table entries) that pricing="auto" enumerates at every
#: iteration.
PRICING_WORK_MAX = 3e7
_EXACT_LIMIT = 10 * EXACT_WORK_MAX


@dataclasses.dataclass(frozen=True)
class ColumnGenerationOptions:
    """How :func:`~cellopt.power.solve_power` runs column generation: bound, pricing and set management.

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
        interference at their lowest level (:func:`~cellopt.power.bounds.relaxed_bound`;
        valid for any size); None: no bound is computed at the end. ``"auto"`` (default): exact when the
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
        (progress is None or isinstance(progress, (bool, np.bool_)) or callable(progress),
         f"progress={progress!r}; fix: True (a bar per phase), False (nothing), None (bars at a "
         "terminal) or a function that receives every event as a dict"),
    ])
