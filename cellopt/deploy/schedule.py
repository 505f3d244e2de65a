"""A power mixture as a periodic subframe schedule, and the schedule's exact value.

:func:`cellopt.solve_power` answers with a *mixture* of power patterns: each pattern s
holds a real share θ_s of the band. A live network cannot take real shares. LTE
configures interference coordination as a periodic subframe bitmap (the eICIC
almost-blank-subframe pattern of TS 36.423, "ABS Information", is 40 bits in FDD:
:data:`DEFAULT_SUBFRAMES`); NR slot patterns have other periods. This module

- rounds the mixture to whole subframes of a period P (:func:`subframe_schedule`: the
  largest-remainder method on the patterns in use, one contiguous block per pattern,
  the blocks ordered so that every cell's muted subframes form few runs),
- evaluates the schedule exactly (:func:`evaluate_schedule`: the association
  re-optimized with the pattern shares *fixed* at k_s / P), and
- lists the cells whose schedule keeps them off a large share of the time
  (:func:`sleep_candidates`).
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from cellopt.checks import check_array, check_count, check_number
from cellopt.errors import ValidationError, describe_rows
from cellopt.network import Fingerprint, check_same_network
from cellopt.power.problem import PowerProblem
from cellopt.solution import PowerResult, Solution
from cellopt.solvers.api import solve
from cellopt.solvers.certificate import certified_gap
from cellopt.solvers.common import energy_cost, repair
from cellopt.solvers.result import apply_status_rule, build_solution
from cellopt.status import OPTIMAL, SOLVED

__all__ = ["DEFAULT_SUBFRAMES", "MIN_SHARE", "Schedule", "evaluate_schedule", "sleep_candidates",
           "subframe_schedule"]

#: The FDD almost-blank-subframe bitmap period [subframes] (TS 36.423, "ABS Information").
DEFAULT_SUBFRAMES = 40
#: A pattern whose mixture share is below this is "not in use" and gets no subframe.
MIN_SHARE = 1e-3
#: The characters of level indices in :meth:`Schedule.strings` ("-" is off).
_LEVEL_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"
#: Most blocks whose cyclic order is found by enumerating every order (at most 6! = 720
#: orders); beyond it nearest neighbour and 2-opt.
_EXACT_ORDER_MAX = 7
#: Shares within this many subframes of a whole number count as that number (so that
#: 0.3 × 40 is 12 subframes, not 11 and a remainder of almost 1).
_SNAP = 1e-9
#: The bound kinds evaluate_schedule accepts (see Solution.bound_kind).
_BOUND_KINDS = ("problem", "exact", "relaxed")


@dataclasses.dataclass(frozen=True, eq=False)
class Schedule:
    """A periodic power schedule: each cell's level in each of P subframes.

    Each pattern in use holds one contiguous block of ``subframes[k]`` subframes; the
    blocks follow each other in the order of `patterns`, and the sequence repeats with
    period P = Σ subframes. Made by :func:`subframe_schedule`; checked when made.

    Attributes
    ----------
    cell_id : ndarray, shape (n_cells,)
        The network's cell ids, for checks and tables.
    level_dbm : ndarray, shape (n_cells, n_levels)
        The :attr:`PatternSpace.level_dbm <cellopt.power.PatternSpace>` the schedule
        was made for [dBm, −inf = off].
    patterns : ndarray of int64, shape (n_used, n_cells)
        Level indices (into `level_dbm`) of the patterns given subframes, in schedule
        order.
    subframes : ndarray of int64, shape (n_used,)
        Subframes per pattern, each ≥ 1; Σ = P.
    mixture_share : ndarray, shape (n_used,)
        Each pattern's share θ in the mixture the schedule rounds.
    dropped_share : float
        The mixture share of the patterns that got no subframe.
    network_fingerprint : Fingerprint or None
        The :attr:`PowerProblem.network_fingerprint <cellopt.power.PowerProblem>` of the
        problem it was made from; its cells' part must be that of every problem the
        schedule is applied to (any users of those cells). None: not compared.
    """

    cell_id: np.ndarray
    level_dbm: np.ndarray
    patterns: np.ndarray
    subframes: np.ndarray
    mixture_share: np.ndarray
    dropped_share: float
    network_fingerprint: Fingerprint | None = None

    def __post_init__(self) -> None:
        level = check_array(self.level_dbm, "level_dbm", shape=np.shape(self.level_dbm),
                            finite=False, fix="give the PatternSpace.level_dbm of the network "
                            "[dBm], shape (n_cells, n_levels), -inf = off")
        if level.ndim != 2 or level.shape[1] == 0 or np.isnan(level).any() \
                or np.isposinf(level).any():
            raise ValidationError(f"level_dbm has shape {level.shape} or values that are not "
                                  "levels; fix: give the PatternSpace.level_dbm of the network "
                                  "[dBm], shape (n_cells, n_levels), -inf = off")
        n_cells, n_levels = level.shape
        cell_id = np.array(self.cell_id)  # a copy: the record owns its arrays
        if cell_id.shape != (n_cells,):
            raise ValidationError(f"cell_id has shape {cell_id.shape}; fix: give one id per "
                                  f"cell, shape ({n_cells},)")
        n_used = int(np.shape(self.subframes)[0]) if np.ndim(self.subframes) == 1 else -1
        if n_used < 1:
            raise ValidationError(f"subframes has shape {np.shape(self.subframes)}; fix: give "
                                  "the subframes of each pattern, shape (n_used,), n_used ≥ 1")
        subframes = check_array(self.subframes, "subframes", shape=(n_used,), kind="int", low=1,
                                fix="give whole numbers of subframes ≥ 1, one per pattern")
        patterns = check_array(self.patterns, "patterns", shape=(n_used, n_cells), kind="int",
                               low=0, high=n_levels - 1,
                               fix=f"give level indices in [0, {n_levels}), one row per pattern "
                                   f"of subframes and one column per cell: shape ({n_used}, "
                                   f"{n_cells})")
        mixture = check_array(self.mixture_share, "mixture_share", shape=(n_used,), low=0.0,
                              high=1.0, fix="give each pattern's mixture share θ in [0, 1]")
        dropped = check_number(self.dropped_share, "dropped_share", low=0.0, high=1.0,
                               fix="give the mixture share of the dropped patterns, in [0, 1]")
        for name, value in (("cell_id", cell_id), ("level_dbm", level), ("patterns", patterns),
                            ("subframes", subframes), ("mixture_share", mixture)):
            value = value.copy() if value is getattr(self, name) else value
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "dropped_share", dropped)
        if self.network_fingerprint is not None \
                and not isinstance(self.network_fingerprint, Fingerprint):
            raise ValidationError(f"network_fingerprint is a {type(self.network_fingerprint).__name__}; "
                                  "fix: give the problem's network_fingerprint, or None")

    # ------------------------------------------------------------------ derived
    @property
    def n_cells(self) -> int:
        """Number of cells (rows of `level_dbm`)."""
        return int(self.level_dbm.shape[0])

    @property
    def n_subframes(self) -> int:
        """P, the period [subframes]."""
        return int(self.subframes.sum())

    @property
    def share(self) -> np.ndarray:
        """Each pattern's share of the band, ``subframes / P``, shape (n_used,)."""
        return self.subframes / self.n_subframes

    @property
    def subframe_pattern(self) -> np.ndarray:
        """The pattern (row of `patterns`) of each subframe, shape (P,): block by block."""
        return np.repeat(np.arange(len(self.subframes)), self.subframes)

    @property
    def levels(self) -> np.ndarray:
        """Each cell's level index in each subframe, shape (n_cells, P)."""
        return self.patterns[self.subframe_pattern].T

    @property
    def power_dbm(self) -> np.ndarray:
        """Each cell's power in each subframe [dBm, −inf = off], shape (n_cells, P)."""
        return self.level_dbm[np.arange(self.n_cells)[:, None], self.levels]

    @property
    def _pattern_off(self) -> np.ndarray:
        """Whether each cell is off in each pattern, shape (n_used, n_cells)."""
        return np.isneginf(self.level_dbm[np.arange(self.n_cells)[None, :], self.patterns])

    @property
    def share_off(self) -> np.ndarray:
        """Share of the subframes in which each cell is off, shape (n_cells,) (exactly 1
        for a cell that is always off)."""
        return (self.subframes @ self._pattern_off) / self.n_subframes

    @property
    def mean_power_w(self) -> np.ndarray:
        """Each cell's mean transmit power ``Σ_s share_s p_js`` [W], shape (n_cells,)."""
        p_w = 10.0 ** (self.level_dbm[np.arange(self.n_cells)[None, :], self.patterns] / 10.0) * 1e-3
        return self.share @ p_w

    @property
    def energy_saved_w(self) -> np.ndarray:
        """Each cell's full power (its highest level) less its mean power [W], shape
        (n_cells,), ≥ 0: the radiated power the schedule saves against full power in every
        subframe."""
        full_w = 10.0 ** (self.level_dbm.max(axis=1) / 10.0) * 1e-3
        return np.maximum(full_w - self.mean_power_w, 0.0)

    def strings(self) -> np.ndarray:
        """Each cell's schedule as text: one character per subframe.

        The character is the cell's level index (``"0"`` … ``"9"``, then ``"a"`` …
        ``"z"``), ``"-"`` when the cell is off.

        Returns
        -------
        ndarray of str, shape (n_cells,)
            Strings of length P.

        Raises
        ------
        ValidationError
            With more than 36 levels (no character for an index beyond ``"z"``).
        """
        if self.level_dbm.shape[1] > len(_LEVEL_CHARS):
            raise ValidationError(f"level_dbm has {self.level_dbm.shape[1]} levels; fix: strings() "
                                  f"writes at most {len(_LEVEL_CHARS)} levels (0-9, a-z): read "
                                  "Schedule.levels instead")
        chars = np.array(list(_LEVEL_CHARS))[self.levels]
        chars[np.isneginf(self.power_dbm)] = "-"
        chars = np.ascontiguousarray(chars, dtype="<U1")
        return chars.view(f"<U{self.n_subframes}").ravel()

    def off_runs(self) -> np.ndarray:
        """Maximal cyclic runs of off subframes per cell, shape (n_cells,) of int64.

        0 for a cell never off, 1 for a cell always off; a run that wraps from the end
        of the period to its start counts once.
        """
        off = np.isneginf(self.power_dbm)
        starts = (off & ~np.roll(off, 1, axis=1)).sum(axis=1)
        return np.where(off.all(axis=1), 1, starts).astype(np.int64)


# ---------------------------------------------------------------------- rounding
def _largest_remainder(share: np.ndarray, n: int) -> np.ndarray:
    """Whole numbers summing to `n` in proportion to `share` (Hamilton's method).

    ``floor(θ n)`` for each (θ renormalized to Σ = 1), then one more to each of the
    largest remainders; ties go to the larger share, then to the lower index.

    Parameters
    ----------
    share : ndarray, shape (m,)
        Shares ≥ 0 with a positive sum.
    n : int
        The total, ≥ 0.

    Returns
    -------
    ndarray of int64, shape (m,)
        Σ = n; each is the floor or the ceiling of ``θ n``.
    """
    share = np.asarray(share, float)
    quota = share / share.sum() * n
    nearest = np.round(quota)
    quota = np.where(np.abs(quota - nearest) <= _SNAP * max(n, 1), nearest, quota)
    base = np.floor(quota).astype(np.int64)
    remainder = np.round(quota - base, 9)  # equal remainders tie, whatever the rounding
    left = n - int(base.sum())
    order = np.lexsort((np.arange(len(share)), -share, -remainder))
    base[order[:left]] += 1
    return base


# ---------------------------------------------------------------------- ordering
def _hamming(masks: np.ndarray) -> np.ndarray:
    """Cells whose off-state differs between every two patterns, shape (m, m) of int64."""
    on = masks.astype(np.int64)
    return on @ (1 - on).T + (1 - on) @ on.T


def _cycle_cost(dist: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Total distance of cyclic orders, shape (...,) for orders of shape (..., m)."""
    return dist[order, np.roll(order, -1, axis=-1)].sum(axis=-1)


def _order_blocks(masks: np.ndarray, first: int, exact_max: int = _EXACT_ORDER_MAX) -> np.ndarray:
    """A cyclic order of the patterns with few off-state changes between neighbours.

    Minimizes Σ over consecutive patterns (cyclically) of the Hamming distance between
    their off-masks. Up to `exact_max` patterns every order is enumerated (the first
    minimum in lexicographic order); beyond, nearest neighbour from `first`, then 2-opt
    (the best improving segment reversal, until none improves). Deterministic; the
    order starts with `first`.

    Parameters
    ----------
    masks : ndarray of bool, shape (m, n_cells)
        Whether each cell is off in each pattern.
    first : int
        The pattern the order starts with.
    exact_max : int
        Most patterns ordered by enumeration.

    Returns
    -------
    ndarray of int64, shape (m,)
        A permutation of ``range(m)`` with ``order[0] == first``.
    """
    m = len(masks)
    if m <= 2:
        return np.r_[first, np.setdiff1d(np.arange(m), [first])].astype(np.int64)
    dist = _hamming(masks)
    rest = np.setdiff1d(np.arange(m), [first])
    if m <= exact_max:
        tail = np.array(list(itertools.permutations(rest)), np.int64)
        orders = np.column_stack([np.full(len(tail), first), tail])
        return orders[int(np.argmin(_cycle_cost(dist, orders)))]
    # Nearest neighbour (ties to the lower index): a loop over the ≤ P blocks.
    order = np.empty(m, np.int64)
    order[0] = first
    seen = np.zeros(m, bool)
    seen[first] = True
    for k in range(1, m):
        row = np.where(seen, np.iinfo(np.int64).max, dist[order[k - 1]])
        order[k] = int(np.argmin(row))
        seen[order[k]] = True
    # 2-opt: reverse order[i+1 .. j] when that lowers the cost; every distance is an
    # integer, so each move lowers the cost by ≥ 1 and the loop ends.
    upper = np.triu(np.ones((m, m), bool), k=1)
    while True:
        a, b = order, np.roll(order, -1)
        delta = (dist[a[:, None], a[None, :]] + dist[b[:, None], b[None, :]]
                 - dist[a, b][:, None] - dist[a, b][None, :])
        delta = np.where(upper, delta, 0)
        i, j = np.unravel_index(int(np.argmin(delta)), delta.shape)
        if delta[i, j] >= 0:
            return order
        order = np.r_[order[:i + 1], order[i + 1:j + 1][::-1], order[j + 1:]]


# ---------------------------------------------------------------------- checks
def _check_problem(problem: Any) -> PowerProblem:
    if not isinstance(problem, PowerProblem):
        raise ValidationError(f"problem is a {type(problem).__name__}; fix: give the "
                              "cellopt.power.PowerProblem the power solution was solved for")
    return problem


def _check_fits(problem: PowerProblem, schedule: Any) -> Schedule:
    """The schedule, checked to be made for the problem's cells and levels."""
    if not isinstance(schedule, Schedule):
        raise ValidationError(f"schedule is a {type(schedule).__name__}; fix: give a Schedule "
                              "made by subframe_schedule(problem, solution)")
    check_same_network(schedule.network_fingerprint, problem.network_fingerprint,
                       ours_name="the schedule", theirs_name="the problem", cells_only=True,
                       fix="make the schedule with subframe_schedule(problem, solution) from a "
                           "power solution of a problem of these cells")
    level = problem.space.level_dbm
    if schedule.n_cells != problem.n_cells or not np.array_equal(schedule.level_dbm, level):
        raise ValidationError(
            f"schedule has {schedule.n_cells} cells and levels {schedule.level_dbm.shape[1]} per "
            f"cell, the problem {problem.n_cells} and {level.shape[1]}: the schedule was made for "
            "another network or other levels; fix: make it with subframe_schedule(problem, "
            "solution) from this problem's power solution")
    return schedule


def _pattern_levels(problem: PowerProblem, power_dbm: np.ndarray) -> np.ndarray:
    """Level indices of patterns given in dBm, shape (S, n_cells): each cell's first level
    of exactly that power (−inf matches the off level)."""
    level = problem.space.level_dbm
    match = power_dbm[:, :, None] == level[None, :, :]  # (S, n_cells, n_levels)
    found = match.any(axis=2)
    if not found.all():
        s, j = np.nonzero(~found)
        raise ValidationError(
            f"solution.power.patterns: pattern {int(s[0])} gives cell {int(j[0])} "
            f"{power_dbm[s[0], j[0]]} dBm, not one of its levels {level[j[0]].tolist()} "
            f"({len(s)} such entries, in pattern {describe_rows(np.unique(s))}); fix: give a "
            "solution of this power problem (solve_power(problem)), whose patterns use the "
            "problem's levels")
    return np.argmax(match, axis=2).astype(np.int64)


# ---------------------------------------------------------------------- the schedule
def subframe_schedule(problem: PowerProblem, solution: Solution, *,
                      subframes: int = DEFAULT_SUBFRAMES,
                      cell_id: npt.ArrayLike | None = None) -> Schedule:
    """A power mixture rounded to a periodic schedule of `subframes` subframes.

    The patterns in use (mixture share θ ≥ :data:`MIN_SHARE`), their shares renormalized
    to Σ = 1, get whole numbers of subframes by the largest-remainder (Hamilton) method:
    ``floor(θ P)`` each, then one more to each of the largest remainders (ties to the
    larger share, then to the lower pattern index). Patterns left with no subframe are
    dropped. Each kept pattern is one contiguous block of subframes; the blocks are
    ordered (cyclically) to minimize the number of off-state changes between
    neighbouring blocks, summed over the cells, so that every cell's muted subframes
    form few runs: every order is tried for up to 7 blocks, nearest neighbour from the
    largest block and then 2-opt beyond.

    Parameters
    ----------
    problem : PowerProblem
        The problem `solution` answers.
    solution : Solution
        A power solution of `problem` (:func:`cellopt.solve_power`): ``solution.power``
        holds the patterns [dBm] and their shares θ.
    subframes : int
        P, the period [subframes], ≥ the number of patterns in use; default 40, the
        FDD ABS bitmap.
    cell_id : array_like, shape (n_cells,), optional
        The network's cell ids (default ``0 .. n_cells − 1``).

    Returns
    -------
    Schedule

    Raises
    ------
    ValidationError
        For a solution that is not a power solution of `problem`, a pattern with a power
        that is not one of the cell's levels, a bad `subframes`, or fewer subframes than
        patterns in use.
    """
    problem = _check_problem(problem)
    if not isinstance(solution, Solution) or solution.power is None:
        kind = type(solution).__name__ if not isinstance(solution, Solution) \
            else f"Solution of method {solution.method!r} without power patterns"
        raise ValidationError(f"solution is a {kind}; fix: give the power solution of this "
                              "problem, cellopt.solve_power(problem)")
    power = solution.power
    power_dbm = np.asarray(power.patterns, float)
    theta = np.asarray(power.pattern_share, float)
    n_users = len(solution.user_rate_mbps)
    if power_dbm.ndim != 2 or power_dbm.shape[1] != problem.n_cells \
            or theta.shape != (power_dbm.shape[0],) or n_users != problem.n_users:
        raise ValidationError(
            f"solution has patterns of shape {power_dbm.shape} and {n_users} users, the problem "
            f"{problem.n_cells} cells and {problem.n_users} users; fix: give the power solution "
            "of this problem, cellopt.solve_power(problem)")
    check_same_network(power.network_fingerprint, problem.network_fingerprint,
                       ours_name="the power solution", theirs_name="the problem",
                       fix="give the power solution of this problem, cellopt.solve_power(problem)")
    levels = _pattern_levels(problem, power_dbm)
    n_periods = check_count(subframes, "subframes", minimum=1,
                            fix=f"give the schedule period in subframes, a whole number ≥ 1 (the "
                                f"FDD ABS bitmap: {DEFAULT_SUBFRAMES})")
    if cell_id is None:
        cell_id = np.arange(problem.n_cells)
    cell_id = np.asarray(cell_id)
    if cell_id.shape != (problem.n_cells,):
        raise ValidationError(f"cell_id has shape {cell_id.shape}; fix: give the network's cell "
                              f"ids, one per cell: shape ({problem.n_cells},)")
    in_use = np.flatnonzero(theta >= MIN_SHARE)
    if not len(in_use):
        raise ValidationError(f"solution.power.pattern_share has no share ≥ MIN_SHARE = {MIN_SHARE}; "
                              "fix: give a power solution whose shares sum to 1")
    if n_periods < len(in_use):
        raise ValidationError(
            f"subframes={n_periods} is fewer than the {len(in_use)} patterns in use (mixture "
            f"share ≥ {MIN_SHARE}); fix: subframes ≥ {len(in_use)}, or solve the power problem "
            f"with ColumnGenerationOptions(max_patterns={n_periods}) so that fewer patterns "
            "carry the band")
    counts = _largest_remainder(theta[in_use], n_periods)
    kept = in_use[counts > 0]
    counts = counts[counts > 0]
    largest = int(np.lexsort((np.arange(len(kept)), -theta[kept], -counts))[0])
    off = np.isneginf(problem.space.level_dbm[np.arange(problem.n_cells)[None, :], levels[kept]])
    order = _order_blocks(off, largest)
    dropped = np.ones(len(theta), bool)
    dropped[kept] = False
    return Schedule(cell_id=cell_id, level_dbm=problem.space.level_dbm, patterns=levels[kept[order]],
                    subframes=counts[order], mixture_share=theta[kept[order]],
                    dropped_share=float(min(max(theta[dropped].sum(), 0.0), 1.0)),
                    network_fingerprint=problem.network_fingerprint)


# ---------------------------------------------------------------------- its value
def evaluate_schedule(problem: PowerProblem, schedule: Schedule, *, method: str = "ipm",
                      tol: float = 1e-6, upper_bound: float | None = None,
                      bound_kind: str | None = None, **options: Any) -> Solution:
    """The exact objective of a schedule: the association re-optimized at its fixed shares.

    Pattern s of the schedule holds the share ``share_s = k_s / P`` of the band. The
    association problem over the schedule's patterns with those shares fixed is the
    master problem (:meth:`PowerProblem.master`, free shares) with every link's rate
    scaled by its pattern's share and no energy term: a share x_F of pattern s's
    subframes gives ``x_F share_s R``. It is solved by `method`; the answer is reported
    in the master's convention (``x = x_F share_s``, a share of the whole band; airtime
    prices per unit of the whole band ``μ = μ_F / share_s``), with
    ``energy_cost = Σ_s share_s E_s`` and ``objective = utility − cost − energy_cost``.

    Parameters
    ----------
    problem : PowerProblem
        The problem the schedule was made for.
    schedule : Schedule
        From :func:`subframe_schedule`.
    method : str
        Convex method of the fixed-share solve (:func:`cellopt.solve`), default ``"ipm"``.
    tol : float
        Rate-equivalent gap of the fixed-share solve.
    upper_bound : float, optional
        A bound to report instead of the fixed-share problem's own: the joint bound of
        the power run (``power_solution.upper_bound``), which bounds every schedule.
        None (default): the bound of the fixed-share solve [utility], which bounds the
        best association for this schedule (``bound_kind`` ``"problem"``).
    bound_kind : {"exact", "relaxed", "problem"}, optional
        What `upper_bound` bounds (``power_solution.power.bound_kind``); required with
        `upper_bound`, and ``"problem"`` or None without.
    **options
        Passed to :func:`cellopt.solve` (``max_iter``, ``time_limit_s``, the method's
        options).

    Returns
    -------
    Solution
        ``method="schedule"``; status ``"solved"`` when the fixed-share solve ended on
        its own terms (``"failed"`` if the objective is −inf), else its status. ``x``
        (shape (L,), the master's links) are shares of the whole band, ``cell_airtime``
        (n_cells, n_patterns) ≤ ``share``; ``pattern_share`` = ``schedule.share``.
        ``power`` is a :class:`~cellopt.solution.PowerResult` whose ``master`` is the
        master problem over the schedule's patterns (so :meth:`cellopt.Drop.frames`
        works), with ``patterns`` [dBm], ``cell_power_dbm`` (``10 log10 Σ_s share_s
        p_js`` [dBm], −inf when always off), ``energy_w`` [W], ``bound_kind``,
        ``bound_info`` (``kind``, ``subframes``, ``n_patterns``, ``dropped_share``,
        ``fixed_share_bound`` and ``fixed_share_gap``: the fixed-share solve's own
        bound and gap, ``bound_factor``: 1 + gap of the reported bound), ``estimate``
        NaN and an empty ``history``; the Solution's own ``bound_kind`` is the same.
        ``history`` is the fixed-share solve's,
        its ``objective`` and ``upper_bound`` less the energy cost; ``n_iter`` its
        iterations.

    Raises
    ------
    ValidationError
        For a schedule made for another network or other levels, a bad `upper_bound`
        or `bound_kind`, and whatever :func:`cellopt.solve` refuses.
    """
    t0 = time.perf_counter()
    problem = _check_problem(problem)
    schedule = _check_fits(problem, schedule)
    if upper_bound is not None:
        upper_bound = check_number(upper_bound, "upper_bound", allow_inf=True,
                                   fix="give the joint bound of the power run "
                                       "(power_solution.upper_bound), or None")
        if bound_kind not in _BOUND_KINDS:
            raise ValidationError(f"bound_kind={bound_kind!r} with upper_bound; fix: say what "
                                  f"upper_bound bounds, one of {list(_BOUND_KINDS)} "
                                  "(power_solution.power.bound_kind)")
    elif bound_kind not in (None, "problem"):
        raise ValidationError(f"bound_kind={bound_kind!r} without upper_bound; fix: give "
                              "upper_bound too, or leave bound_kind out (the fixed-share "
                              "problem's own bound is of kind 'problem')")
    share = schedule.share
    master = problem.master(schedule.patterns)
    scale = share[master.resource]
    fixed = master.replace(rate_mbps=master.rate_mbps * scale, pattern_cost=None)
    sol_f = solve(fixed, method=method, tol=tol, **options)
    x = repair(master, sol_f.x * scale, share)
    energy = energy_cost(master, share)
    fixed_bound = None if sol_f.upper_bound is None else float(sol_f.upper_bound) - energy
    if upper_bound is None:
        upper, kind = fixed_bound, (None if fixed_bound is None else "problem")
    else:
        upper, kind = float(upper_bound), bound_kind
    mu = (sol_f.prices["airtime"] / share[None, :]).ravel()
    n_patterns, n_sub = len(schedule.subframes), schedule.n_subframes
    if sol_f.success:
        status = SOLVED
        gap_text = "n/a" if sol_f.gap is None else f"{sol_f.gap:.2e}"
        how = "optimal" if sol_f.status == OPTIMAL else f"by {method!r}"
        message = (f"schedule of {n_sub} subframes ({n_patterns} patterns); association {how} "
                   f"for the fixed shares (gap {gap_text} of the fixed-share problem)")
    else:
        status = sol_f.status
        message = (f"schedule of {n_sub} subframes ({n_patterns} patterns); the fixed-share "
                   f"solve ended {sol_f.status!r}: {sol_f.message}")
    history = sol_f.history.copy()  # in the schedule's terms: the energy term included
    for column in ("objective", "upper_bound"):
        if column in history:
            history[column] = history[column] - energy
    sol = build_solution(master, x, method="schedule", status=status, message=message, mu=mu,
                         nu=sol_f.prices["backhaul"], n_iter=sol_f.n_iter, wall_s=0.0,
                         history=history, upper_bound=upper, theta=share)
    # (with no bound, build_solution takes the master's dual bound: reported as none)
    gap = certified_gap(master, upper, sol.objective, sol.utility)
    p_mw = problem.space.power_mw(schedule.patterns)
    avg_mw = share @ p_mw
    with np.errstate(divide="ignore"):
        cell_power_dbm = 10.0 * np.log10(avg_mw)
    info: dict[str, Any] = dict(kind=kind, subframes=n_sub, n_patterns=n_patterns,
                                dropped_share=schedule.dropped_share, fixed_share_bound=fixed_bound,
                                fixed_share_gap=sol_f.gap)
    if gap is not None:
        info["bound_factor"] = 1.0 + gap
    power = PowerResult(patterns=problem.space.power_dbm(schedule.patterns), pattern_share=share,
                        cell_power_dbm=cell_power_dbm, energy_w=float(avg_mw.sum() * 1e-3),
                        bound_kind=kind, bound_info=info, estimate=float("nan"),
                        history=pd.DataFrame(), master=master,
                        network_fingerprint=problem.network_fingerprint)
    sol = dataclasses.replace(sol, upper_bound=upper, gap=gap, bound_kind=kind, pattern_share=share,
                              power=power, wall_s=time.perf_counter() - t0)
    return apply_status_rule(master, sol, tol)


# ---------------------------------------------------------------------- sleep
def sleep_candidates(problem: PowerProblem, schedule: Schedule, *, share_off: float) -> pd.DataFrame:
    """The cells a schedule keeps off at least a share `share_off` of the subframes.

    Parameters
    ----------
    problem : PowerProblem
        The problem the schedule was made for (tiers).
    schedule : Schedule
    share_off : float
        The threshold, in [0, 1]: 0 lists every cell, 1 the cells that are always off.

    Returns
    -------
    DataFrame
        One row per such cell: ``cell`` (row in the network), ``cell_id``, ``tier``,
        ``share_off`` (share of the subframes off), ``energy_saved_w`` (full power minus
        the schedule's mean power [W], ≥ 0: the radiated power saved against every
        subframe at the cell's highest level); sorted by ``energy_saved_w`` descending,
        then ``cell``.

    Raises
    ------
    ValidationError
        For a schedule made for another problem, or `share_off` outside [0, 1].
    """
    problem = _check_problem(problem)
    schedule = _check_fits(problem, schedule)
    threshold = check_number(share_off, "share_off", low=0.0, high=1.0,
                             fix="give a share of the subframes in [0, 1] (1: always off)")
    off = schedule.share_off
    cells = np.flatnonzero(off >= threshold)
    saved = schedule.energy_saved_w
    frame = pd.DataFrame({"cell": cells, "cell_id": schedule.cell_id[cells],
                          "tier": problem.tier_names[cells], "share_off": off[cells],
                          "energy_saved_w": saved[cells]})
    return frame.sort_values(["energy_saved_w", "cell"], ascending=[False, True],
                             kind="stable").reset_index(drop=True)
