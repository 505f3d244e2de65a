"""Per-cell offsets a live network takes, fitted to the optimum and judged as a rule.

A live LTE or NR network does not take a fractional association: each user picks a cell
by the strongest reference signal plus a per-cell offset (the cell individual offset of
the A3/A4/A5 events and the idle-mode q-OffsetCell), on the Q-OffsetRange value set of
TS 36.331 / TS 38.331 (:data:`Q_OFFSET_RANGE`). This module fits such offsets
(:func:`cell_offsets`), the best offset per tier for comparison (:func:`tier_offsets`),
and evaluates a set of offsets as the rule it induces on a drop, with its certified gap
to the drop's bound (:func:`evaluate`). docs/deploy.md describes the method and what it
keeps of the optimizer's gain on users it was not fitted to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from cellopt.checks import check_count, check_number
from cellopt.deploy.rule import RuleDrops, cells_fingerprint, same_cells
from cellopt.drop import Drop
from cellopt.errors import ValidationError, describe_rows
from cellopt.network import TIERS
from cellopt.solution import Solution
from cellopt.solvers.certificate import certified_gap
from cellopt.solvers.registry import default_method

__all__ = ["DEFAULT_MAX_ROUNDS", "DEFAULT_PENALTY_PER_DB", "Q_OFFSET_RANGE", "cell_offsets",
           "check_values", "evaluate", "offsets_array", "offsets_series", "tier_offsets",
           "tier_offsets_array"]

#: The Q-OffsetRange value set of TS 36.331 and TS 38.331 [dB]: the values a cell
#: individual offset (cellIndividualOffset) and the idle-mode q-OffsetCell may take.
Q_OFFSET_RANGE: tuple[float, ...] = (
    -24.0, -22.0, -20.0, -18.0, -16.0, -14.0, -12.0, -10.0, -8.0, -6.0, -5.0, -4.0, -3.0,
    -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0,
    22.0, 24.0)
#: Rate-equivalent gain each dB of a cell's offset away from its tier's bias must buy,
#: divided by √T on T training drops: a move is taken only when it raises the training
#: users' weighted geometric-mean rate (α = 1; the rate-equivalent factor at other α) by
#: more than a factor e^(penalty × dB moved / √T). The bar falls as the noise of a mean
#: over T drops does. Chosen on two networks' held-out drops (docs/deploy.md).
DEFAULT_PENALTY_PER_DB = 1e-4
#: Work budget of the search: rounds of moves (each round evaluates every single-cell
#: move on every training drop, then applies a set of them).
DEFAULT_MAX_ROUNDS = 100
#: Passes of the disjoint-move selection per round.
_SELECTION_PASSES = 16


# ============================================================================ value set
def check_values(values_db: Any) -> np.ndarray:
    """The value set as a sorted array of distinct finite offsets [dB].

    Raises
    ------
    ValidationError
        For an empty set, a value that is not a finite number, or a repeated value.
    """
    fix = ("give the offsets a cell may take, in dB: finite numbers, each once, e.g. "
           "cellopt.deploy.Q_OFFSET_RANGE (TS 36.331 Q-OffsetRange)")
    if isinstance(values_db, (str, bytes, Mapping)) or np.ndim(values_db) != 1:
        raise ValidationError(f"values_db={values_db!r}; fix: {fix}")
    values = [check_number(v, f"values_db[{k}]", unit="dB", fix=fix) for k, v in enumerate(values_db)]
    if not values:
        raise ValidationError(f"values_db is empty; fix: {fix}")
    array = np.asarray(values, float)
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise ValidationError(f"values_db repeats {repeated}; fix: {fix}")
    return np.sort(array)


def offsets_array(drop: Drop, offsets: pd.Series | Mapping[Any, float], *,
                  values_db: Any = Q_OFFSET_RANGE, name: str = "offsets") -> np.ndarray:
    """Offsets given per cell id as an array in the drop's cell order [dB].

    Parameters
    ----------
    drop : Drop
    offsets : pandas.Series or mapping
        Offset [dB] per ``cell_id`` of every cell of the drop's network (the output of
        :func:`cell_offsets`, or ``cell_config.csv``'s ``offset_db`` by ``cell_id``).
    values_db : sequence of float
        The value set every offset must belong to.
    name : str
        How messages name `offsets`.

    Returns
    -------
    ndarray, shape (n_cells,)

    Raises
    ------
    ValidationError
        For offsets of cells the drop does not have (a configuration fitted on another
        network), cells without an offset, ids given twice, and offsets that are not in
        the value set; each message names the cells and the fix.
    """
    values = check_values(values_db)
    if isinstance(offsets, Mapping):
        offsets = pd.Series(dict(offsets), dtype=float)
    if not isinstance(offsets, pd.Series):
        raise ValidationError(f"{name} is a {type(offsets).__name__}; fix: give a pandas Series "
                              "of offsets [dB] indexed by cell_id (cellopt.deploy.cell_offsets)")
    ids = drop.network.cells["cell_id"].to_numpy()
    fitted_on = offsets.attrs.get("cells")
    if fitted_on is not None and fitted_on != cells_fingerprint(drop):
        raise ValidationError(
            f"{name} were fitted on another network: their cells (ids, positions, tiers) are not "
            "the drop's, though the ids may match; fix: fit the offsets on drops of this "
            "network's cells (the same cell_seed), or drop offsets.attrs['cells'] to apply them "
            "by cell_id alone")
    index = offsets.index
    twice = index[index.duplicated()].unique()
    if len(twice):
        raise ValidationError(f"{name} gives cells {list(twice[:10])} more than once; fix: one "
                              "offset per cell_id")
    unknown = index[~index.isin(ids)]
    if len(unknown):
        raise ValidationError(
            f"{name} has offsets for {len(unknown)} cell(s) the drop does not have (cell_id "
            f"{list(unknown[:10])}{' …' if len(unknown) > 10 else ''}): a configuration fitted on "
            "another network; fix: fit the offsets on drops of this network's cells")
    missing = np.flatnonzero(~pd.Index(ids).isin(index))
    if len(missing):
        raise ValidationError(f"{name} has no offset for cells {describe_rows(missing, ids)}; fix: "
                              "give one offset per cell_id of the network")
    array = offsets.reindex(ids).to_numpy(dtype=float)
    outside = np.flatnonzero(~np.isin(array, values))
    if len(outside):
        raise ValidationError(
            f"{name}: offsets {sorted(set(array[outside].tolist()))[:10]} of cells "
            f"{describe_rows(outside, ids)} are not in the value set; fix: use values of "
            f"values_db ({values.min():g} to {values.max():g} dB, TS 36.331 Q-OffsetRange by "
            "default), or pass the value set they come from as values_db")
    return array


def tier_offsets_array(tiers: Any, by_tier: Mapping[str, float]) -> np.ndarray:
    """Each cell's offset under one offset per tier [dB], shape (n_cells,).

    Parameters
    ----------
    tiers : array_like of str, shape (n_cells,)
        Each cell's tier name.
    by_tier : mapping of str to float
        Offset [dB] per tier name (:func:`tier_offsets`); NaN for a tier it lacks.
    """
    return pd.Series(np.asarray(tiers)).map(dict(by_tier)).to_numpy(float)


def offsets_series(drop: Drop, offsets_db: np.ndarray) -> pd.Series:
    """Offsets in the drop's cell order as a Series indexed by ``cell_id`` [dB]."""
    ids = drop.network.cells["cell_id"]
    return pd.Series(np.asarray(offsets_db, float), index=pd.Index(ids.to_numpy(), name="cell_id"),
                     name="offset_db")


# ============================================================================ evaluation
def evaluate(drop: Drop, offsets: pd.Series | Mapping[Any, float], *,
             values_db: Any = Q_OFFSET_RANGE, bound: float | Solution | None = None,
             **options: Any) -> Solution:
    """The rule a set of offsets induces on a drop, with its certified gap to the drop's bound.

    Each user is served by the cell of largest RSRP + offset among its links (ties to the
    lower cell row), and each cell shares its airtime as the α-fair optimum for that
    association (equal shares at α = 1 under full buffer; the in-cell optimum with
    demands and prices), scaled down to a backhaul cap it would exceed: the baseline
    :func:`cellopt.solvers.baselines.cell_offsets`.

    Parameters
    ----------
    drop : Drop
    offsets : pandas.Series or mapping
        Offset [dB] per ``cell_id`` (:func:`cell_offsets`, :func:`tier_offsets`).
    values_db : sequence of float
        The value set the offsets must belong to (default :data:`Q_OFFSET_RANGE`).
    bound : float or Solution, optional
        The drop's upper bound: a number, or a solution of ``drop.problem`` whose
        ``upper_bound`` it is (the optimizer's). Default: the drop is solved with its
        fastest certified method (:meth:`Drop.solve`) for it.
    **options
        Passed to the baseline (``inner_method``, ``inner_options``, ``tol``).

    Returns
    -------
    Solution
        Method ``"cell_offsets"``, status ``"solved"``; ``upper_bound`` the drop's bound
        and ``gap`` the rule's certified rate-equivalent gap to it.

    Raises
    ------
    ValidationError
        For offsets that do not fit the drop or the value set (:func:`offsets_array`), and
        a `bound` solution of another problem or network (:meth:`Drop.check_solution
        <cellopt.drop.Drop.check_solution>`: other counts, or other cell or user ids and
        positions).
    """
    if not isinstance(drop, Drop):
        raise ValidationError(f"drop is a {type(drop).__name__}; fix: give a cellopt Drop")
    array = offsets_array(drop, offsets, values_db=values_db)
    upper = _bound(drop, bound)
    sol = drop.solve("cell_offsets", offsets_db=array, **options)
    gap = certified_gap(drop.problem, upper, sol.objective, sol.utility)
    return dataclasses.replace(sol, upper_bound=upper, gap=gap, bound_kind="problem")


def _bound(drop: Drop, bound: float | Solution | None) -> float:
    """The drop's upper bound as a number (solving the drop when none is given)."""
    if bound is None:
        bound = drop.solve(default_method(drop.problem)[0])
    if isinstance(bound, Solution):
        drop.check_solution(bound, "bound")
        if bound.power is not None:
            raise ValidationError(f"bound is a power solution ({bound.method}): its upper bound is "
                                  "of the joint power problem, not of the drop's problem at fixed "
                                  "power that the offsets are judged on; fix: pass the "
                                  "optimizer's solution of drop.problem (drop.solve()), or a number")
        if len(bound.user_rate_mbps) != drop.problem.n_users:
            raise ValidationError("bound is a solution of another problem; fix: pass the "
                                  "optimizer's solution of this drop's problem, or its upper_bound")
        if bound.upper_bound is None:
            raise ValidationError(f"bound: the {bound.method!r} solution has no upper bound; fix: "
                                  "pass the solution of a certified method (dual, ipm, alm, "
                                  "reference)")
        bound = bound.upper_bound
    return check_number(bound, "bound", allow_inf=False,
                        fix="give the drop's upper bound, a finite number, or its optimizer's Solution")


# ============================================================================ per tier
def tier_offsets(drops: Drop | Sequence[Drop], *, values_db: Any = Q_OFFSET_RANGE
                 ) -> dict[str, float]:
    """The best offset per tier on the training drops: Ye's per-tier bias, searched properly.

    Every combination of the value set over the tiers present is scored by the rule's
    objective summed over `drops` (exhaustively: the first tier present in
    :data:`cellopt.network.TIERS` order is held at the value nearest 0 dB, since a common
    shift of every offset changes nothing; at most two tiers vary). Ties go to the
    combination nearest 0 dB.

    Parameters
    ----------
    drops : Drop or sequence of Drop
        Drops of the same cells (the training drops).
    values_db : sequence of float
        The value set (default :data:`Q_OFFSET_RANGE`).

    Returns
    -------
    dict of str to float
        Offset [dB] of each tier present, by tier name.
    """
    drops = [drops] if isinstance(drops, Drop) else list(drops)
    values = check_values(values_db)
    rule = RuleDrops.from_drops(drops)
    return _tier_search(rule, values)


def _tier_search(rule: RuleDrops, values: np.ndarray) -> dict[str, float]:
    tier = np.zeros(rule.n_cells, np.int64) if rule.cell_tier is None else rule.cell_tier
    present = sorted(set(tier.tolist()))
    anchor = values[np.argmin(np.abs(values))]
    free = present[1:]
    best = np.full(len(TIERS), anchor)
    narrow = rule.tier_restricted()
    if free:
        grids = np.meshgrid(*[values] * len(free), indexing="ij")
        combos = np.stack([g.ravel() for g in grids], axis=1)  # (n_combos, n_free)
        table = np.full((len(combos), len(TIERS)), anchor)
        table[:, free] = combos
        # one batch per value of the first free tier: (n_values ** (n_free - 1)) vectors each
        batch = len(values) ** (len(free) - 1)
        score = np.concatenate([narrow.objectives(table[k:k + batch][:, tier]).sum(axis=1)
                                for k in range(0, len(table), batch)])
        top = np.flatnonzero(score >= score.max() - 1e-12 * max(1.0, abs(score.max())))
        pick = top[np.argmin(np.abs(combos[top]).sum(axis=1))]
        best = table[pick]
    return {TIERS[t]: float(best[t]) for t in present}


# ============================================================================ per cell
def cell_offsets(drop: Drop, solution: Solution | None = None, *, drops: Sequence[Drop] = (),
                 values_db: Any = Q_OFFSET_RANGE, penalty_per_db: float = DEFAULT_PENALTY_PER_DB,
                 max_rounds: int = DEFAULT_MAX_ROUNDS) -> pd.Series:
    """One offset per cell, from the value set, fitted to the training drops.

    The fit maximizes the rule's objective (:func:`evaluate`) summed over the training
    drops — `drop` and `drops`, the same cells with other users and shadowing, a sample of
    the users the configuration will serve — less a penalty on each cell's distance from
    its tier's bias:

    1. Start from the best per-tier bias on the training drops (:func:`tier_offsets`),
       or, with `solution`, from the optimizer's airtime prices (Ye's rate bias: at α = 1
       a user prefers the cell of largest R_ij / μ_j, so a cell's offset is raised by
       ``−5 log10 μ_j`` relative to its tier's median price, then rounded to the value
       set) if that scores higher.
    2. Coordinate ascent over the value set, all cells at once: each round evaluates
       every single-cell move on every training drop exactly (:meth:`RuleDrops.move_gains`),
       takes a set of improving moves greedy by gain — those none of whose changed cells
       is another's cell, else those whose changed cells are disjoint, else the best move
       alone: the first set whose exact combined objective gains at least the best move's
       — and recomputes the gains of the cells near those that moved. The objective rises
       every round; the search stops when no move
       gains more than its penalty, or after `max_rounds` rounds (a work budget: the
       same input gives the same offsets on any machine).

    The penalty, ``penalty_per_db × Σ_d S_d / √T`` per dB away from the tier's bias (S_d
    the utility scale of drop d, Σ w at α = 1; T training drops), keeps the offsets of
    cells whose users give no consistent reason near the per-tier bias: per-cell offsets
    fitted without it follow the training users' shadowing and lose on new users
    (docs/deploy.md).

    Parameters
    ----------
    drop : Drop
        A drop of the network (typically the one `solution` solves).
    solution : Solution, optional
        The optimizer's solution of ``drop.problem``: its airtime prices give the second
        start.
    drops : sequence of Drop
        More training drops of the same cells (new users and shadowing:
        ``Scenario.build(seed, cell_seed=...)``).
    values_db : sequence of float
        The value set (default :data:`Q_OFFSET_RANGE`).
    penalty_per_db : float
        ≥ 0, see above (default :data:`DEFAULT_PENALTY_PER_DB`).
    max_rounds : int
        Work budget [rounds] (default :data:`DEFAULT_MAX_ROUNDS`).

    Returns
    -------
    pandas.Series
        ``offset_db`` indexed by ``cell_id``, in the network's cell order. Its ``attrs``
        record the fit: ``cells`` (the fingerprint of the cells fitted on,
        :func:`~cellopt.deploy.rule.cells_fingerprint`: :func:`evaluate` refuses a drop of
        other cells with the same ids), ``tier_offsets_db`` (the best per-tier bias), ``start``
        (``"tier"`` or ``"prices"``), ``rounds``, ``status`` (``"converged"`` or
        ``"max_rounds"``), ``training_drops``, ``training_objective`` (per drop, at the
        fitted offsets) and ``penalty_per_db``.

    Raises
    ------
    ValidationError
        For drops of other cells, a solution of another problem or network
        (:meth:`Drop.check_solution <cellopt.drop.Drop.check_solution>`), an empty or bad
        value set, a negative penalty or a bad budget.
    """
    training = [drop, *drops]
    if not all(isinstance(d, Drop) for d in training):
        raise ValidationError("cell_offsets: drop and drops must be cellopt Drops of the same "
                              "cells; fix: Scenario.build(seed, cell_seed=...) for each")
    if len({id(d) for d in training}) < len(training):
        raise ValidationError("cell_offsets: a drop is given twice (drop is also in drops); fix: "
                              "drops are the training drops other than drop")
    same_cells(training, "cell_offsets")
    values = check_values(values_db)
    penalty = check_number(penalty_per_db, "penalty_per_db", low=0.0,
                           fix=f"a rate-equivalent gain per dB ≥ 0 (default {DEFAULT_PENALTY_PER_DB:g})")
    max_rounds = check_count(max_rounds, "max_rounds", minimum=0,
                             fix=f"a whole number of rounds ≥ 0 (default {DEFAULT_MAX_ROUNDS})")
    if solution is not None:
        drop.check_solution(solution)
    if solution is not None and (not isinstance(solution, Solution)
                                 or solution.prices["airtime"].shape[0] != drop.problem.n_cells
                                 or len(solution.user_rate_mbps) != drop.problem.n_users):
        raise ValidationError("solution is not a solution of drop.problem; fix: pass the "
                              "optimizer's solution of this drop (drop.solve()), or None")
    rule = RuleDrops.from_drops(training)
    tiers = _tier_search(rule, values)
    tier = np.zeros(rule.n_cells, np.int64) if rule.cell_tier is None else rule.cell_tier
    reference = tier_offsets_array(np.asarray(TIERS)[tier], tiers)
    # utility per dB over all drops: penalty × mean scale × √T (= Σ_d S_d × penalty / √T)
    weight = penalty * float(rule.scale(reference).sum()) / np.sqrt(rule.n_drops)
    search = _Search(rule, values, reference, weight)
    start, offsets = "tier", reference
    if solution is not None:
        priced = _price_start(solution, tier, reference, values)
        if search.objective(priced) > search.objective(reference):
            start, offsets = "prices", priced
    offsets, rounds, status = search.run(offsets, max_rounds)
    result = offsets_series(drop, offsets)
    result.attrs.update({
        "cells": cells_fingerprint(drop), "tier_offsets_db": tiers, "start": start,
        "rounds": rounds, "status": status, "training_drops": len(training), "penalty_per_db": penalty,
        "training_objective": rule.objectives(offsets[None, :])[0].tolist()})
    return result


def _price_start(solution: Solution, tier: np.ndarray, reference: np.ndarray,
                 values: np.ndarray) -> np.ndarray:
    """Offsets from the airtime prices: the tier's bias + ``−5 log10 (μ_j / median μ of the
    tier)``, rounded to the nearest value (cells without a price keep the tier's bias)."""
    mu = np.asarray(solution.prices["airtime"], float).mean(axis=1)
    priced = mu > 0
    shift = np.zeros(len(mu))
    for t in np.unique(tier):  # a loop over the (at most three) tiers
        mask = priced & (tier == t)
        if mask.any():
            shift[mask] = -5.0 * np.log10(mu[mask] / np.median(mu[mask]))
    target = reference + shift
    return values[np.abs(values[None, :] - target[:, None]).argmin(axis=1)]


class _Search:
    """The penalized coordinate ascent of :func:`cell_offsets`."""

    def __init__(self, rule: RuleDrops, values: np.ndarray, reference: np.ndarray, weight: float):
        self.rule, self.values, self.reference, self.weight = rule, values, reference, weight

    def objective(self, offsets: np.ndarray) -> float:
        """Σ_d objective − weight · Σ_j |o_j − b_j|."""
        total = float(self.rule.objectives(offsets[None, :]).sum())
        return total - self.weight * float(np.abs(offsets - self.reference).sum())

    def run(self, offsets: np.ndarray, max_rounds: int) -> tuple[np.ndarray, int, str]:
        rule, values = self.rule, self.values
        n_cells = rule.n_cells
        current = self.objective(offsets)
        eps = 1e-12 * max(float(rule.scale(offsets).sum()), 1.0)  # a gain below this is rounding
        distance = np.abs(values[None, :] - self.reference[:, None])
        state = rule.state(offsets)
        moves = rule.move_gains(state, values).sum(axis=2)  # rows kept while still valid
        for rounds in range(max_rounds + 1):
            gain = moves - self.weight * (distance - np.abs(offsets - self.reference)[:, None])
            gain[values[None, :] == offsets[:, None]] = -np.inf
            best = np.argmax(gain, axis=1)
            best_gain = gain[np.arange(n_cells), best]
            cells = np.flatnonzero(best_gain > eps)
            if not len(cells):
                return offsets, rounds, "converged"
            if rounds == max_rounds:
                return offsets, rounds, "max_rounds"
            row, touched = rule.touched(state, cells, values[best[cells]])
            top = cells[np.argmax(best_gain[cells])]
            # the largest sets first: moves whose changed cells hold no other move's cell,
            # then moves whose changed cells are disjoint; the best move alone last
            for taken in (cells[_compatible(best_gain[cells], row, touched, cells)],
                          cells[_disjoint(best_gain[cells], row, touched, n_cells)], top[None]):
                trial = offsets.copy()
                trial[taken] = values[best[taken]]
                value = self.objective(trial)
                if value >= current + best_gain[top] - eps:
                    break
            new_state = rule.state(trial)
            dirty = rule.neighbours(taken, state, new_state)
            moves[dirty] = rule.move_gains(new_state, values, dirty)[dirty].sum(axis=2)
            offsets, current, state = trial, value, new_state
        raise AssertionError("unreachable")


def _compatible(gain: np.ndarray, row: np.ndarray, touched: np.ndarray, cells: np.ndarray
                ) -> np.ndarray:
    """Moves none of whose changed cells is another taken move's cell, greedy by gain.

    Their gains need not add up exactly (two of them may change one cell's users), so
    the caller checks the combined objective. Vectorized passes: a move is taken when it
    ranks first among the remaining moves it conflicts with.

    Returns
    -------
    ndarray of bool, shape (m,)
    """
    m = len(gain)
    rank = _ranks(gain)
    move_of_cell = np.full(int(max(cells.max(initial=0), touched.max(initial=0))) + 1, -1, np.int64)
    move_of_cell[cells] = np.arange(m)
    other = move_of_cell[touched]
    pair = (other >= 0) & (other != row)
    a, b = np.r_[row[pair], other[pair]], np.r_[other[pair], row[pair]]  # both directions
    active = np.ones(m, bool)
    take = np.zeros(m, bool)
    for _ in range(_SELECTION_PASSES):
        if not active.any():
            break
        live = active[a] & active[b]
        rival = np.full(m, m, np.int64)
        np.minimum.at(rival, a[live], rank[b[live]])
        win = active & (rank < rival)
        take |= win
        beaten = np.zeros(m, bool)
        beaten[b[win[a]]] = True
        active &= ~take & ~beaten
    return take


def _disjoint(gain: np.ndarray, row: np.ndarray, touched: np.ndarray, n_cells: int) -> np.ndarray:
    """Moves that touch pairwise disjoint cells, greedy by gain.

    Vectorized passes: a move is taken when it ranks first among the remaining moves at
    every cell it touches; the moves touching a taken cell then drop out.

    Parameters
    ----------
    gain : ndarray, shape (m,)
    row, touched : ndarray of int64
        The cells each move touches, as pairs (move, cell).
    n_cells : int

    Returns
    -------
    ndarray of bool, shape (m,)
    """
    m = len(gain)
    rank = _ranks(gain)
    count = np.bincount(row, minlength=m)
    active = np.ones(m, bool)
    take = np.zeros(m, bool)
    for _ in range(_SELECTION_PASSES):
        live = active[row]
        if not live.any():
            break
        first = np.full(n_cells, m, np.int64)
        np.minimum.at(first, touched[live], rank[row[live]])
        wins = np.bincount(row[live], first[touched[live]] == rank[row[live]], minlength=m)
        win = active & (wins == count)
        take |= win
        used = np.zeros(n_cells, bool)
        used[touched[win[row]]] = True
        active &= ~take & (np.bincount(row, used[touched], minlength=m) == 0)
    return take


def _ranks(gain: np.ndarray) -> np.ndarray:
    """Each move's rank by decreasing gain (0: the best; ties by position)."""
    rank = np.empty(len(gain), np.int64)
    rank[np.argsort(-gain, kind="stable")] = np.arange(len(gain))
    return rank
