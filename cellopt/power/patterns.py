"""Power patterns: allowed levels, the reduced value of a pattern, and the search for good ones.

A pattern gives every cell one of its allowed power levels. At user marginal utilities
λ_i and backhaul prices ν_j the *reduced value* of pattern s is

    V(s) = Σ_j max_{i ∈ cand(j)} a_ij R_ij(s) − E_s,    a_ij = (λ_i − c_j − ν_j)⁺,

what one unit of band spent on s is worth; column generation adds the pattern of highest
V. :func:`local_search` finds good patterns by moving one cell's level at a time, all
cells at once: every single-cell move is evaluated exactly from the sparse gains, and a
set of improving moves that touch disjoint cells (so their gains add up exactly) is
applied per round. :func:`best_pattern_exhaustive` enumerates every pattern (small
networks) and :func:`relaxed_value_bound` bounds ``max_s V(s)`` for any network.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from cellopt.checks import as_float_array, check_array, check_count, is_real
from cellopt.errors import ValidationError
from cellopt.network import TIERS, Fingerprint, Network
from cellopt.power.gains import GainTable
from cellopt.power.kernels import cell_max, move_gains, move_gains_fits, move_sinr

__all__ = [
    "LEVEL_USUAL_MIN_DB",
    "PatternSpace",
    "UnusualLevelWarning",
    "best_pattern_exhaustive",
    "check_coef",
    "check_patterns",
    "check_start",
    "enumerate_patterns",
    "level_offsets_db",
    "local_search",
    "reduced_values",
    "relaxed_value_bound",
    "top_patterns_exhaustive",
]

Levels = Sequence[float | None] | Mapping[str, Sequence[float | None]]


@dataclasses.dataclass(frozen=True, eq=False)
class PatternSpace:
    """The allowed power levels of every cell and the energy price.

    Attributes
    ----------
    level_dbm : ndarray, shape (n_cells, n_levels)
        Power of each level of each cell [dBm]; −inf = off. Level 0 is the cell's
        full power when allowed. Cells with fewer levels repeat their last one.
    energy_price_per_w : ndarray, shape (n_cells,)
        e_j [utility per W per unit share of the band].
    network_fingerprint : Fingerprint or None
        The :attr:`~cellopt.network.Network.fingerprint` of the network whose cells'
        powers it was made from (:meth:`from_network`; its cells are what counts);
        :meth:`PowerProblem.from_parts <cellopt.power.PowerProblem.from_parts>` refuses
        a space of other cells. None for a space made by hand.
    """

    level_dbm: np.ndarray
    energy_price_per_w: np.ndarray
    network_fingerprint: Fingerprint | None = None

    @classmethod
    def from_network(cls, network: Network, levels_db: Levels,
                     energy_price_per_w: float | np.ndarray = 0.0) -> PatternSpace:
        """Levels relative to each cell's ``tx_power_dbm``.

        Parameters
        ----------
        network : Network
        levels_db : sequence of float or None, or mapping tier -> sequence
            Offsets [dB] from the cell's maximum power (≤ 0), None = off; one list for
            every cell, or one per tier (``{"macro": [0, None], "pico": [0, -10]}``).
        energy_price_per_w : float or ndarray, shape (n_cells,)
            Price of transmit power [utility per W], per unit share of the band.
        """
        if not isinstance(network, Network):
            raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt "
                                  "Network")
        tiers = network.cells["tier"].to_numpy()
        if isinstance(levels_db, Mapping):
            unknown = sorted(set(levels_db) - set(TIERS))
            missing = sorted(set(tiers) - set(levels_db))
            if unknown or missing:
                raise ValidationError(f"levels_db per tier: unknown tiers {unknown}, missing "
                                      f"tiers {missing}; fix: give a list for each tier of "
                                      f"the network ({sorted(set(tiers))})")
            per_tier = {t: level_offsets_db(levels_db[t], f"levels_db[{t!r}]") for t in levels_db}
        else:
            offsets = level_offsets_db(levels_db, "levels_db")
            per_tier = {t: offsets for t in TIERS}
        width = max(len(v) for v in per_tier.values())
        padded = {t: np.r_[v, np.repeat(v[-1:], width - len(v))] for t, v in per_tier.items()}
        offset = np.stack([padded[t] for t in tiers]) if len(tiers) else np.zeros((0, width))
        p_max = network.cells["tx_power_dbm"].to_numpy(float)
        fix = (f"give one price ≥ 0 [utility per W], or one per cell, shape ({network.n_cells},)")
        price = as_float_array(energy_price_per_w, "energy_price_per_w", fix=fix)
        if price.shape not in ((), (network.n_cells,)):
            raise ValidationError(f"energy_price_per_w has shape {price.shape}; fix: {fix}")
        price = np.broadcast_to(price, (network.n_cells,)).copy()
        bad = np.flatnonzero(~(np.isfinite(price) & (price >= 0)))
        if len(bad):
            raise ValidationError(f"energy_price_per_w invalid for cells {bad[:10].tolist()} "
                                  f"(values {price[bad][:10].tolist()}); fix: give prices ≥ 0 "
                                  "in utility per W")
        return cls(level_dbm=p_max[:, None] + offset, energy_price_per_w=price,
                   network_fingerprint=network.fingerprint)

    @property
    def n_cells(self) -> int:
        return self.level_dbm.shape[0]

    @property
    def n_levels(self) -> int:
        return self.level_dbm.shape[1]

    @property
    def n_patterns(self) -> float:
        """Number of distinct patterns (product of distinct levels per cell; inf beyond
        the float range, e.g. 3 levels on more than 646 cells)."""
        distinct = [len(np.unique(row)) for row in self.level_dbm]
        with np.errstate(over="ignore"):
            return float(np.prod(np.asarray(distinct, float)))

    def power_dbm(self, patterns: np.ndarray) -> np.ndarray:
        """Powers [dBm] of level-index patterns, shape (S, n_cells)."""
        patterns = check_patterns(self, patterns)
        return self.level_dbm[np.arange(self.n_cells)[None, :], patterns]

    def power_mw(self, patterns: np.ndarray) -> np.ndarray:
        return 10.0 ** (self.power_dbm(patterns) / 10.0)

    def energy_cost(self, patterns: np.ndarray) -> np.ndarray:
        """E_s = Σ_j e_j p_js [utility per unit share], shape (S,)."""
        return (self.power_mw(patterns) * 1e-3) @ self.energy_price_per_w

    def full_power(self) -> np.ndarray:
        """The pattern with every cell at its highest level, shape (n_cells,)."""
        return np.argmax(self.level_dbm, axis=1)


#: Lowest level offset [dB] below a cell's ``tx_power_dbm`` that is usual: −50 dB is
#: 10⁵ times weaker than full power (a 46 dBm macro at −4 dBm, less than a phone
#: transmits), off in all but name. A lower level is legal but warns (an absolute power
#: in dBm, or a factor in dB counted twice, given as an offset).
LEVEL_USUAL_MIN_DB = -50.0


class UnusualLevelWarning(UserWarning):
    """A power level far below full power (:data:`LEVEL_USUAL_MIN_DB`): legal, but
    likely a unit slip."""


def unusual_levels(levels: Sequence[float | None]) -> list[float]:
    """The levels of a (well-typed) list that are on but below :data:`LEVEL_USUAL_MIN_DB`."""
    return [float(v) for v in levels
            if v is not None and np.isfinite(float(v)) and float(v) < LEVEL_USUAL_MIN_DB]


def unusual_levels_message(name: str, low: Sequence[float]) -> str:
    """The warning for levels `low` of key `name` below :data:`LEVEL_USUAL_MIN_DB`."""
    return (f"{name} holds {', '.join(f'{v:g}' for v in low)} dB, below the usual range "
            f"[{LEVEL_USUAL_MIN_DB:g}, 0] dB of power levels (cellopt's: {-LEVEL_USUAL_MIN_DB:g} dB "
            "below full power the cell is off in all but name); legal, but check the unit: "
            "levels are offsets in dB from each cell's tx_power_dbm, not powers in dBm; fix: "
            "e.g. -10 for a tenth of full power, or \"off\" (None in Python) for off")


def level_offsets_db(levels: Sequence[float | None], name: str, *, warn: bool = True) -> np.ndarray:
    """A level list checked and sorted: offsets ≤ 0 dB from full power, highest first.

    Parameters
    ----------
    levels : sequence of float or None
        Offsets [dB] from each cell's ``tx_power_dbm``; None (or −inf) = off.
    name : str
        The key named in the error.
    warn : bool
        Warn (:class:`UnusualLevelWarning`) about a level on but below
        :data:`LEVEL_USUAL_MIN_DB`.

    Returns
    -------
    ndarray, shape (n_levels,)
        [dB], −inf for off.

    Raises
    ------
    ValidationError
        For an empty list, a level above 0 dB, NaN, a value that is not a number (or
        None), a level given twice (off twice included: None and −inf), or a list whose
        only level is off.
    """
    fix = ("give a list of offsets ≤ 0 dB from the cell's maximum power, None means off, "
           "e.g. [0, -10, None]")
    if isinstance(levels, (str, bytes, Mapping)) or not isinstance(levels, Iterable):
        raise ValidationError(f"{name}={levels!r}; fix: {fix}")
    levels = list(levels)
    wrong = [v for v in levels if v is not None and not is_real(v)]
    if wrong:  # "0" or True would be read as a number
        word = (" (\"off\" is the scenario file's word for it; in Python write None)"
                if isinstance(wrong[0], str) and wrong[0].strip().lower() == "off" else "")
        raise ValidationError(f"{name}={levels!r} holds {wrong[0]!r} ({type(wrong[0]).__name__}), "
                              f"not a number or None; fix: {fix}{word}")
    try:
        values = [-np.inf if v is None else float(v) for v in levels]
    except OverflowError:
        raise ValidationError(f"{name} holds an integer beyond the floating-point range; fix: "
                              f"{fix}") from None
    if not values:
        raise ValidationError(f"{name} is empty; fix: give at least one level, e.g. [0, -10, None]")
    arr = np.array(values)
    if np.isnan(arr).any() or (arr > 0).any():
        raise ValidationError(f"{name}={list(levels)}: levels are offsets ≤ 0 dB from the cell's "
                              "maximum power (None means off); fix: e.g. [0, -10, None]")
    if np.isneginf(arr).all():  # else every user of these cells would be blamed for no link
        raise ValidationError(f"{name}={list(levels)} has no level that is on: these cells would "
                              "be off all the time (None means off); fix: give at least one "
                              "offset ≤ 0 dB besides None, e.g. [0, None], or leave the cells "
                              "out of the network")
    distinct, count = np.unique(arr, return_counts=True)
    if (count > 1).any():
        def word(v: float) -> str:
            return '"off"' if np.isneginf(v) else f"{v:g}"
        given, twice = ", ".join(word(v) for v in arr), ", ".join(word(v) for v in distinct[count > 1])
        once = ", ".join(word(v) for v in distinct[::-1])
        raise ValidationError(f"{name}=[{given}] gives {twice} more than once (off: \"off\" in a "
                              "scenario file, None or -inf in Python); a repeated level only "
                              f"multiplies the patterns to price; fix: give each level once, e.g. [{once}]")
    low = unusual_levels(levels)
    if warn and low:
        warnings.warn(unusual_levels_message(name, low), UnusualLevelWarning, stacklevel=3)
    return np.sort(arr)[::-1]


# ---------------------------------------------------------------------- argument checks
def check_patterns(space: PatternSpace, patterns: Any, name: str = "patterns") -> np.ndarray:
    """Level-index patterns checked against `space`, as int64 of shape (S, n_cells).

    Raises
    ------
    ValidationError
        Not integers, not ``n_cells`` levels per pattern, or a level index outside
        ``[0, n_levels)``.
    """
    arr = np.atleast_2d(np.asarray(patterns) if not isinstance(patterns, (str, bytes))
                        else np.asarray([patterns]))
    fix = (f"give level indices in [0, {space.n_levels}) of the pattern space, one per cell: "
           f"shape (n_patterns, {space.n_cells}) or ({space.n_cells},)")
    if arr.ndim != 2:
        raise ValidationError(f"{name} has shape {arr.shape}; fix: {fix}")
    return check_array(arr, name, shape=(arr.shape[0], space.n_cells), kind="int", low=0,
                       high=space.n_levels - 1, fix=fix, copy=False)


def check_coef(gains: GainTable, coef: Any) -> np.ndarray:
    """Link coefficients a_ij checked: shape (n_users, n_candidates), ≥ 0, no NaN (+inf
    allowed), as float64."""
    return check_array(coef, "coef", shape=(gains.n_users, gains.n_candidates), finite=False,
                       low=0.0, copy=False,
                       fix="give a_ij = (λ_i − c_j − ν_j)⁺ ≥ 0 per candidate link, e.g. from "
                           "link_coefficients(gains, marginal, cell_price)")


# ---------------------------------------------------------------------- reduced values
def link_coefficients(gains: GainTable, marginal: np.ndarray, cell_price: np.ndarray) -> np.ndarray:
    """a_ij = (λ_i − c_j − ν_j)⁺ for every candidate link, shape (n_users, n_candidates).

    Parameters
    ----------
    marginal : ndarray, shape (n_users,)
        λ_i = w_i U'(r_i) [utility per Mbit/s].
    cell_price : ndarray, shape (n_cells,)
        c_j + ν_j [utility per Mbit/s].
    """
    cand = gains.cell[:, :gains.n_candidates]
    return np.maximum(marginal[:, None] - cell_price[cand], 0.0)


def cell_best(gains: GainTable, values: np.ndarray) -> np.ndarray:
    """max over each cell's candidate links of a per-link quantity (≥ 0), shape (n_cells,).

    `values` has shape (n_users, n_candidates), aligned with the candidate columns.
    """
    return cell_max(np.ravel(values)[None], gains.cell[:, :gains.n_candidates].ravel(),
                    gains.n_cells)[0]


def reduced_values(gains: GainTable, space: PatternSpace, coef: np.ndarray,
                   patterns: np.ndarray, chunk: int | None = None) -> np.ndarray:
    """V(s) of each level-index pattern, shape (S,).

    Evaluated `chunk` patterns at a time (default: about 2^22 link values per chunk).
    """
    patterns = check_patterns(space, patterns)
    coef = check_coef(gains, coef)
    n = gains.n_users * gains.cell.shape[1]
    if chunk is not None:
        chunk = check_count(chunk, "chunk", minimum=1, fix="give patterns per chunk ≥ 1, or None")
    chunk = chunk or max(1, (1 << 22) // max(n, 1))
    cand = gains.cell[:, :gains.n_candidates].ravel()
    out = np.empty(len(patterns))
    for start in range(0, len(patterns), chunk):  # chunks of patterns bound the memory
        part = patterns[start:start + chunk]
        value = gains.rates_mbps(space.power_mw(part)) * coef[None]  # (S, U, n)
        best = cell_max(value.reshape(len(part), -1), cand, gains.n_cells)
        out[start:start + chunk] = best.sum(axis=1) - space.energy_cost(part)
    return out


def enumerate_patterns(space: PatternSpace, start: int, stop: int) -> np.ndarray:
    """Patterns number `start` to `stop` − 1 of the space, in mixed radix, shape (n, n_cells).

    Pattern number n has, for cell j, the ``(n // Π_{l<j} m_l) % m_j``-th of its m_j
    distinct levels.
    """
    fix = "give pattern numbers 0 ≤ start ≤ stop ≤ space.n_patterns"
    start = check_count(start, "start", fix=fix)
    stop = check_count(stop, "stop", minimum=start, fix=fix)
    if stop > space.n_patterns:
        raise ValidationError(f"stop={stop} is above the {space.n_patterns:.0f} patterns of the "
                              f"space; fix: {fix}")
    distinct = [np.unique(row, return_index=True)[1] for row in space.level_dbm]
    radix = np.array([len(d) for d in distinct], np.int64)
    place = np.r_[1, np.cumprod(radix)[:-1]]
    digits = (np.arange(start, stop, dtype=np.int64)[:, None] // place[None]) % radix[None]
    width = max(len(d) for d in distinct)
    table = np.stack([np.r_[d, np.zeros(width - len(d), np.int64)] for d in distinct])
    return table[np.arange(space.n_cells)[None], digits]


def top_patterns_exhaustive(gains: GainTable, space: PatternSpace, coef: np.ndarray, k: int = 1,
                            max_patterns: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """The `k` patterns of highest V, by enumerating every pattern, and their values.

    Returns
    -------
    patterns : ndarray of int64, shape (k, n_cells)
        Best first.
    values : ndarray, shape (k,)

    Raises
    ------
    ValidationError
        If there are more than `max_patterns` patterns.
    """
    k = check_count(k, "k", minimum=1, fix="give the number of patterns wanted, ≥ 1")
    max_patterns = check_count(max_patterns, "max_patterns", minimum=1,
                               fix="give the most patterns to enumerate, a whole number ≥ 1")
    coef = check_coef(gains, coef)
    count = space.n_patterns
    if count > max_patterns:
        raise ValidationError(f"{count:.3g} patterns to enumerate (> {max_patterns}); fix: "
                              "bound='relaxed' for this network, or fewer cells or levels")
    block = max(256, (1 << 22) // max(gains.cell.size, 1))
    best_p = np.zeros((0, space.n_cells), np.int64)
    best_v = np.zeros(0)
    for start in range(0, int(count), block):  # blocks of patterns bound the memory
        pats = enumerate_patterns(space, start, min(start + block, int(count)))
        vals = reduced_values(gains, space, coef, pats)
        best_p, best_v = np.vstack([best_p, pats]), np.r_[best_v, vals]
        if len(best_v) > k:
            keep = np.argpartition(-best_v, k - 1)[:k]
            best_p, best_v = best_p[keep], best_v[keep]
    order = np.argsort(-best_v, kind="stable")
    return best_p[order], best_v[order]


def best_pattern_exhaustive(gains: GainTable, space: PatternSpace, coef: np.ndarray,
                            max_patterns: int = 1_000_000) -> tuple[np.ndarray, float]:
    """The pattern of highest V by enumerating all of them, and its value."""
    pats, vals = top_patterns_exhaustive(gains, space, coef, 1, max_patterns)
    return pats[0], float(vals[0])


def relaxed_value_bound(gains: GainTable, space: PatternSpace, coef: np.ndarray) -> float:
    """An upper bound on max_s V(s) for any network: every cell alone, no interference.

    Rates only fall when other cells transmit, so each cell's term is at most its value
    with the interference-free rates at its own level; the maximum over patterns then
    separates by cell: ``Σ_j max_l [max_i a_ij R̂_ij(l) − e_j p_jl]``.
    """
    total = np.full(space.n_cells, -np.inf)
    for level in range(space.n_levels):  # a handful of levels
        p_mw = 10.0 ** (space.level_dbm[:, level] / 10.0)
        best = cell_best(gains, gains.isolated_rates_mbps(p_mw) * coef)
        total = np.maximum(total, best - space.energy_price_per_w * p_mw * 1e-3)
    return float(total.sum())


# ---------------------------------------------------------------------- local search
class _MoveEvaluator:
    """Exact gains of every single-cell level change from a pattern, from the sparse gains."""

    def __init__(self, gains: GainTable, space: PatternSpace, coef: np.ndarray):
        self.g, self.space, self.coef = gains, space, coef
        n_users, n_int = gains.cell.shape
        self.n_cand = gains.n_candidates
        # Where each cell appears in the users' tables: (user, column) of every entry.
        self.occ_user = np.repeat(np.arange(n_users), n_int)
        self.occ_col = np.tile(np.arange(n_int), n_users)
        self.occ_cell = gains.cell.ravel()
        self.cand_cell = gains.cell[:, :self.n_cand]
        self.level_mw = 10.0 ** (space.level_dbm / 10.0)                  # (n_cells, L)

    def gains_of_moves(self, pattern: np.ndarray) -> tuple[np.ndarray, ...]:
        """(move cell, move level, gain, touched-cell pairs) for every move away from `pattern`."""
        g, space = self.g, self.space
        n_cells, n_levels = space.n_cells, space.n_levels
        p_mw = space.power_mw(pattern)[0]
        rx = g.gain_mw_per_mw * p_mw[g.cell]
        total = rx.sum(axis=1) + g.background_mw + g.noise_mw
        value = self.link_values(rx[:, :self.n_cand], total, self.coef)  # (U, n)
        cell_value = cell_best(g, value)
        top1, top1_user, top2, top2_user = self._top_two(value)

        # Every (occurrence of a cell in a user's table) × (other level of that cell).
        levels = np.arange(n_levels)
        occ_lv = np.repeat(levels[None], len(self.occ_cell), axis=0)
        keep = occ_lv != pattern[self.occ_cell][:, None]
        o = np.repeat(np.arange(len(self.occ_cell)), n_levels)[keep.ravel()]
        lv = occ_lv.ravel()[keep.ravel()]
        u, col, j_move = self.occ_user[o], self.occ_col[o], self.occ_cell[o]
        move = j_move * n_levels + lv
        d_rx = g.gain_mw_per_mw[u, col] * (self.level_mw[j_move, lv] - p_mw[j_move])
        sinr = move_sinr(rx[:, :self.n_cand], total, u, col, d_rx, g.noise_mw)
        new_value = g.bandwidth_mhz * g.efficiency(sinr) * self.coef[u]       # (pairs, n)

        # New value of each touched (move, cell): max of the affected links and of the
        # cell's best unaffected link — its top link unless that user is affected, then
        # its second, and 0 if both are (an underestimate: a gain is never overstated).
        # Affected links below the cell's second-best value, of users who are neither its
        # best nor its second, cannot raise the maximum: they only mark the cell touched.
        n_moves = n_cells * n_levels
        if move_gains_fits(n_moves, n_cells, g.n_users):  # the same in one compiled pass
            gain, touched = move_gains(move, u, new_value, self.cand_cell, top1, top1_user,
                                       top2, top2_user, cell_value, n_moves)
            return self._finish_moves(pattern, p_mw, gain, touched)
        t_cell = self.cand_cell[u].ravel()
        t_move = np.repeat(move, self.n_cand)
        t_user = np.repeat(u, self.n_cand)
        t_value = new_value.ravel()
        touched = _KeySet(t_move * n_cells + t_cell, n_moves * n_cells)
        matters = (t_value > top2[t_cell]) | (t_user == top1_user[t_cell]) \
            | (t_user == top2_user[t_cell])
        keys = touched.keys
        best_aff = touched.max_of(t_move[matters] * n_cells + t_cell[matters], t_value[matters])
        k_move, k_cell = keys // n_cells, keys % n_cells
        affected = _KeySet(move * g.n_users + u, n_moves * g.n_users)
        hit1 = affected.contains(k_move * g.n_users + top1_user[k_cell])
        hit2 = affected.contains(k_move * g.n_users + top2_user[k_cell])
        rest = np.where(~hit1, top1[k_cell], np.where(~hit2, top2[k_cell], 0.0))
        delta = np.maximum(best_aff, rest) - cell_value[k_cell]
        gain = np.bincount(k_move, delta, minlength=n_moves).astype(float)
        return self._finish_moves(pattern, p_mw, gain, keys)

    def _finish_moves(self, pattern: np.ndarray, p_mw: np.ndarray, gain: np.ndarray,
                      keys: np.ndarray) -> tuple[np.ndarray, ...]:
        """The energy term of every move, and the touched pairs with each move's own cell."""
        space = self.space
        n_cells, n_levels = space.n_cells, space.n_levels
        n_moves = n_cells * n_levels
        cells_all = np.repeat(np.arange(n_cells), n_levels)
        lv_all = np.tile(np.arange(n_levels), n_cells)
        price = space.energy_price_per_w[cells_all] * 1e-3
        gain -= price * (10.0 ** (space.level_dbm[cells_all, lv_all] / 10.0) - p_mw[cells_all])
        gain[lv_all == pattern[cells_all]] = -np.inf  # not a move
        # A move always touches its own cell (the energy term), even without users.
        pairs = _KeySet(np.concatenate([keys, np.arange(n_moves) * n_cells + cells_all]),
                        n_moves * n_cells).keys
        return cells_all, lv_all, gain, pairs

    def link_values(self, signal: np.ndarray, total: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """a_e R_e for candidate received powers (m, n), totals incl. noise (m,), a (m, n)."""
        sinr = signal / np.maximum(total[:, None] - signal, self.g.noise_mw)
        return self.g.bandwidth_mhz * self.g.efficiency(sinr) * coef

    def _top_two(self, value: np.ndarray) -> tuple[np.ndarray, ...]:
        """Best and second-best link value per cell and their users (−1: none)."""
        n_cells = self.space.n_cells
        flat_cell = self.cand_cell.ravel()
        flat_user = np.repeat(np.arange(value.shape[0]), self.n_cand)
        flat = value.ravel()
        order = np.lexsort((-flat, flat_cell))
        c_sorted = flat_cell[order]
        first = np.r_[True, c_sorted[1:] != c_sorted[:-1]]
        top1 = np.zeros(n_cells)
        top1_user = np.full(n_cells, -1)
        top2 = np.zeros(n_cells)
        top2_user = np.full(n_cells, -1)
        top1[c_sorted[first]] = flat[order][first]
        top1_user[c_sorted[first]] = flat_user[order][first]
        second = np.r_[False, ~first[1:] & first[:-1]]
        top2[c_sorted[second]] = flat[order][second]
        top2_user[c_sorted[second]] = flat_user[order][second]
        return top1, top1_user, top2, top2_user


class _KeySet:
    """The distinct integer keys of some entries, in a dense table when the key space is small."""

    DENSE_MAX = 1 << 25

    def __init__(self, key: np.ndarray, size: int):
        self.size = size
        self.mask = None
        if size <= self.DENSE_MAX:
            self.mask = np.zeros(size, bool)
            self.mask[key] = True
            self.keys = np.flatnonzero(self.mask)
        else:
            self.keys = np.unique(key)

    def contains(self, key: np.ndarray) -> np.ndarray:
        """Whether each key (−1 or more: out of range is False) is in the set."""
        inside = (key >= 0) & (key < self.size)
        if self.mask is not None:
            return inside & self.mask[np.where(inside, key, 0)]
        pos = np.clip(np.searchsorted(self.keys, key), 0, max(len(self.keys) - 1, 0))
        return inside & (self.keys[pos] == key) if len(self.keys) else np.zeros(len(key), bool)

    def max_of(self, key: np.ndarray, value: np.ndarray) -> np.ndarray:
        """Per distinct key, the largest value among the entries given for it (0 if none)."""
        if self.size <= self.DENSE_MAX:
            table = np.zeros(self.size)
            np.maximum.at(table, key, value)
            return table[self.keys]
        out = np.zeros(len(self.keys))
        np.maximum.at(out, np.searchsorted(self.keys, key), value)
        return out


def local_search(gains: GainTable, space: PatternSpace, coef: np.ndarray, start: np.ndarray,
                 max_rounds: int = 200) -> tuple[np.ndarray, float, int]:
    """Improve a pattern by single-cell level changes until none helps.

    Each round evaluates every move exactly. The improving moves that are the best at
    every cell they touch (a cell whose reduced-value term the move changes) form a set
    whose gains add up exactly; bolder sets — every cell's best move, or the stronger
    half of them — are tried too, and the round keeps whichever pattern's exact value is
    highest, so every round strictly improves.

    Returns
    -------
    (pattern, value, rounds)
    """
    pattern = check_start(space, start)
    coef = check_coef(gains, coef)
    max_rounds = check_count(max_rounds, "max_rounds", fix="give a whole number of rounds ≥ 0")
    value = float(reduced_values(gains, space, coef, pattern)[0])
    evaluator = _MoveEvaluator(gains, space, coef)
    n_cells = space.n_cells
    rounds = 0
    while rounds < max_rounds:
        rounds += 1
        cell, level, gain, pairs = evaluator.gains_of_moves(pattern)
        scale = max(abs(value), float(np.max(np.abs(gain[np.isfinite(gain)]), initial=0.0)),
                    1e-300)
        improving = gain > 1e-12 * scale
        if not improving.any():
            break
        # Independent set: priority by gain (ties by index); a move wins where it is the
        # best improving move at each of its touched cells.
        priority = np.where(improving, gain, -np.inf)
        rank = np.argsort(np.argsort(priority, kind="stable"), kind="stable").astype(float)
        p_move, p_cell = pairs // n_cells, pairs % n_cells
        best_at_cell = np.full(n_cells, -1.0)
        np.maximum.at(best_at_cell, p_cell, np.where(improving[p_move], rank[p_move], -1.0))
        wins = np.ones(len(gain), bool)
        np.logical_and.at(wins, p_move, best_at_cell[p_cell] == rank[p_move])
        safe = np.flatnonzero(wins & improving)
        # Bolder: each moving cell's best move, all of them or the stronger half.
        by_cell = np.full(n_cells, -np.inf)
        np.maximum.at(by_cell, cell, priority)
        own_best = np.flatnonzero(improving & (priority == by_cell[cell]))
        own_best = own_best[np.unique(cell[own_best], return_index=True)[1]]
        strong = own_best[gain[own_best] >= np.median(gain[own_best])]
        trials = np.repeat(pattern[None], 3, axis=0)
        for t, chosen in enumerate((safe, own_best, strong)):  # three candidate patterns
            trials[t, cell[chosen]] = level[chosen]
        values = reduced_values(gains, space, coef, trials)
        k = int(np.argmax(values))
        if not values[k] > value:
            break
        pattern, value = trials[k], float(values[k])
    return pattern, value, rounds


def check_start(space: PatternSpace, start: Any) -> np.ndarray:
    """A starting pattern: level indices, shape (n_cells,), as a new int64 array."""
    pattern = check_patterns(space, start, "start")
    if pattern.shape[0] != 1 or np.ndim(start) != 1:
        raise ValidationError(f"start has shape {np.shape(start)}; fix: give one pattern, shape "
                              f"({space.n_cells},)")
    return pattern[0].copy()
