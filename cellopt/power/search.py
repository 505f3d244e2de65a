"""Pricing at scale: good power patterns by local search and by neighbourhood enumeration.

Single-cell moves (:func:`~cellopt.power.patterns.local_search`) stop where no cell can
change its level alone; coordinated changes — a macro cell muting while the picos it
covers go to full power — need several cells at once. :func:`neighbourhood_search`
enumerates every level combination of small clusters of strongly coupled cells (all
clusters at once, vectorized), each exactly against the rest of the pattern held fixed,
and applies the best non-conflicting ones.
"""

from __future__ import annotations

import numpy as np

from cellopt.checks import check_count, check_number
from cellopt.errors import ValidationError
from cellopt.power.clusters import ClusterConfigs, cluster_cells_by_coupling
from cellopt.power.gains import GainTable
from cellopt.power.kernels import config_sinr, term_max
from cellopt.power.patterns import (
    PatternSpace,
    cell_best,
    check_coef,
    check_patterns,
    check_start,
    local_search,
    reduced_values,
)

__all__ = ["Neighbourhoods", "neighbourhood_search", "search_patterns"]

_PAIR_CHUNK = 1 << 21  # most (user, cluster, candidate, config) values evaluated at once


class Neighbourhoods:
    """Clusters of coupled cells, their level combinations and which users they affect."""

    def __init__(self, gains: GainTable, space: PatternSpace, max_cells: int):
        max_cells = _check_cluster_size(max_cells, "max_cells")
        self.gains, self.space = gains, space
        self.cluster = cluster_cells_by_coupling(gains, max_cells)
        self.cfg = ClusterConfigs(space, self.cluster)
        self.power_kbm = np.ascontiguousarray(np.moveaxis(self.cfg.power_mw, 2, 0))  # (K, B, m)
        n_b = self.cfg.n_clusters
        # (user, cluster) pairs: the clusters with a cell in each user's table.
        entry_cluster = self.cluster[gains.cell]                           # (U, T)
        key = (np.arange(gains.n_users)[:, None] * n_b + entry_cluster).ravel()
        self.pair_key, pair_of_entry = np.unique(key, return_inverse=True)
        self.pu, self.ph = self.pair_key // n_b, self.pair_key % n_b
        G = np.zeros((len(self.pair_key), self.cfg.m))
        np.add.at(G, (pair_of_entry, self.cfg.slot[gains.cell.ravel()]),
                  gains.gain_mw_per_mw.ravel())
        self.G = G                                                          # (P, m)
        # Which (cluster, cell) term each (pair, candidate) value feeds, and where each
        # candidate's cell sits in the pair's cluster (when it is in it).
        n_cells, n_c = gains.n_cells, gains.n_candidates
        cand = gains.cell[:, :n_c]
        keys = (self.ph[:, None] * n_cells + cand[self.pu]).ravel()
        self.keys, key_index = np.unique(keys, return_inverse=True)
        self.term = key_index.reshape(len(self.pu), n_c)                    # (P, n_c)
        self.in_cluster = self.cluster[cand[self.pu]] == self.ph[:, None]  # (P, n_c)
        self.slot = self.cfg.slot[cand[self.pu]]                           # (P, n_c)
        step = max(1, _PAIR_CHUNK // (n_c * self.cfg.k_max))
        self.chunks = [slice(start, start + step)  # chunks of pairs bound the memory
                       for start in range(0, len(self.pu), step)]

    def gains_of_configs(self, coef: np.ndarray, pattern: np.ndarray) -> tuple[np.ndarray, ...]:
        """Exact value change of every config of every cluster, the rest of `pattern` fixed.

        A cell whose best user is affected by the change may lose that user's value; its
        new value is the maximum over the affected users (recomputed) and over the best
        of its four top users the change does not affect (0 if all four are affected —
        an underestimate: a gain is never overstated).

        Returns
        -------
        gain : ndarray, shape (n_clusters, k_max)
            −inf for configs that do not exist; 0 for the current one.
        key_cluster, key_cell : ndarray of int64
            The (cluster, cell) pairs whose term a config of the cluster changes.
        """
        g, cfg = self.gains, self.cfg
        n_c, n_cells, n_b = g.n_candidates, g.n_cells, cfg.n_clusters
        p_cur = self.space.power_mw(pattern)[0]
        rx = g.gain_mw_per_mw * p_cur[g.cell]
        total = rx.sum(axis=1) + g.background_mw + g.noise_mw
        value = _link_values(g, rx[:, :n_c], total[:, None], coef)         # (U, n_c)
        cell_value = cell_best(g, value)
        # Current power of each cluster slot, and the change of each config.
        members = np.maximum(cfg.members, 0)
        cur_slot = np.where(cfg.members >= 0, p_cur[members], 0.0)       # (B, m)
        pu, ph = self.pu, self.ph
        uniq = self.keys
        new_best = np.zeros((len(uniq), cfg.k_max))
        # Configs lead every array below (K, pairs, candidates).
        d_power = self.power_kbm - cur_slot[None]                          # (K, B, m)
        for sl in self.chunks:
            d_total = np.einsum("pm,kpm->kp", self.G[sl], d_power[:, ph[sl]])  # (K, p)
            tot = total[pu[sl]][None, :] + d_total
            sinr = config_sinr(tot, self.power_kbm, ph[sl], pu[sl], self.slot[sl],
                               self.in_cluster[sl], g.gain_mw_per_mw, rx[:, :n_c], g.noise_mw)
            term_max(new_best, g.bandwidth_mhz * g.efficiency(sinr) * coef[pu[sl]][None],
                     self.term[sl])
        key_cluster, key_cell = uniq // n_cells, uniq % n_cells
        # Best unaffected user of each touched (cluster, cell), among the cell's top four.
        top_user, top_value = _top_users(g, value, 4)                      # (n_cells, 4)
        cand_users = top_user[key_cell]
        affected = np.isin(cand_users * n_b + key_cluster[:, None], self.pair_key)
        free_value = np.where(affected | (cand_users < 0), 0.0, top_value[key_cell])
        rest = free_value.max(axis=1)
        delta = np.maximum(new_best, rest[:, None]) - cell_value[key_cell][:, None]
        gain = np.zeros((n_b, cfg.k_max))
        np.add.at(gain, key_cluster, delta)
        current = _current_config(cfg, pattern)
        gain -= cfg.energy - cfg.energy[np.arange(n_b), current][:, None]
        gain[np.arange(n_b), current] = 0.0
        return np.where(cfg.valid, gain, -np.inf), key_cluster, key_cell

    def apply(self, pattern: np.ndarray, clusters: np.ndarray, configs: np.ndarray) -> np.ndarray:
        """`pattern` with the given clusters at the given configs."""
        out = pattern.copy()
        cfg = self.cfg
        members = cfg.members[clusters]                                    # (n, m)
        levels = cfg.level[clusters[:, None], np.arange(cfg.m)[None, :], configs[:, None]]
        ok = members >= 0
        out[members[ok]] = levels[ok]
        return out


def _link_values(g: GainTable, signal: np.ndarray, total: np.ndarray, coef: np.ndarray
                 ) -> np.ndarray:
    sinr = signal / np.maximum(total - signal, g.noise_mw)
    return g.bandwidth_mhz * g.efficiency(sinr) * coef


def _top_users(g: GainTable, value: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` users of highest link value of every cell, and the values (−1, 0: none)."""
    n_c = g.n_candidates
    cell = g.cell[:, :n_c].ravel()
    user = np.repeat(np.arange(g.n_users), n_c)
    val = value.ravel()
    order = np.lexsort((-val, cell))
    c_sorted = cell[order]
    start = np.r_[0, np.flatnonzero(c_sorted[1:] != c_sorted[:-1]) + 1]
    rank = np.arange(len(order)) - np.repeat(start, np.diff(np.r_[start, len(order)]))
    keep = rank < k
    top_user = np.full((g.n_cells, k), -1)
    top_value = np.zeros((g.n_cells, k))
    top_user[c_sorted[keep], rank[keep]] = user[order][keep]
    top_value[c_sorted[keep], rank[keep]] = val[order][keep]
    return top_user, top_value


def _current_config(cfg: ClusterConfigs, pattern: np.ndarray) -> np.ndarray:
    """The config index of each cluster in `pattern`."""
    members = np.maximum(cfg.members, 0)
    level = np.where(cfg.members >= 0, pattern[members], 0)                 # (B, m)
    match = (cfg.level == level[:, :, None]) | (cfg.members[:, :, None] < 0)
    return np.argmax(match.all(axis=1) & cfg.valid, axis=1)


def neighbourhood_search(gains: GainTable, space: PatternSpace, coef: np.ndarray,
                         start: np.ndarray, max_cells: int = 3, max_rounds: int = 4,
                         hoods: Neighbourhoods | None = None) -> tuple[np.ndarray, float]:
    """Improve a pattern by changing whole clusters of coupled cells at once.

    Each round evaluates every level combination of every cluster of at most
    `max_cells` cells exactly (the rest of the pattern fixed); the clusters whose best
    combination improves and that are the best at every cell they touch are changed
    together (their gains add up); bolder sets (every improving cluster) are tried too,
    and the pattern of highest exact value is kept, so every round strictly improves.

    Returns
    -------
    (pattern, value)
    """
    max_cells = _check_cluster_size(max_cells, "max_cells")
    max_rounds = check_count(max_rounds, "max_rounds", fix="give a whole number of rounds ≥ 0")
    _check_hoods(hoods, gains, space)
    pattern = check_start(space, start)
    coef = check_coef(gains, coef)
    hoods = hoods or Neighbourhoods(gains, space, max_cells)
    value = float(reduced_values(gains, space, coef, pattern)[0])
    n_cells = space.n_cells
    for _ in range(max_rounds):  # a handful of rounds
        gain, key_cluster, key_cell = hoods.gains_of_configs(coef, pattern)
        best_k = np.argmax(gain, axis=1)
        best_gain = gain[np.arange(len(gain)), best_k]
        scale = max(abs(value), 1e-300)
        improving = best_gain > 1e-12 * scale
        if not improving.any():
            break
        priority = np.where(improving, best_gain, -np.inf)
        at_cell = np.full(n_cells, -np.inf)
        np.maximum.at(at_cell, key_cell, priority[key_cluster])
        wins = np.ones(len(gain), bool)
        np.logical_and.at(wins, key_cluster, at_cell[key_cell] == priority[key_cluster])
        safe = np.flatnonzero(wins & improving)
        bold = np.flatnonzero(improving)
        single = np.array([int(np.argmax(priority))])
        trials = np.stack([hoods.apply(pattern, c, best_k[c]) for c in (safe, bold, single)])
        values = reduced_values(gains, space, coef, trials)
        k = int(np.argmax(values))
        if not values[k] > value:
            break
        pattern, value = trials[k], float(values[k])
    return pattern, value


def search_patterns(gains: GainTable, space: PatternSpace, coef: np.ndarray,
                    patterns: np.ndarray, threshold: float = -np.inf, max_rounds: int = 6,
                    hood_cells: int = 3, hoods: Neighbourhoods | None = None) -> np.ndarray:
    """Good patterns at link coefficients `coef`: single-cell moves, then neighbourhoods.

    Local search (at most `max_rounds` rounds of single-cell moves) starts from the
    pattern of the set of highest value, the one added last and full power (which, on
    the HetNet benchmark, is the start that most often leads to new columns). If no
    pattern it
    reaches is worth more than `threshold`, :func:`neighbourhood_search` over clusters of
    `hood_cells` coupled cells continues from the best of them (skipped for 1).

    Returns
    -------
    ndarray of int64, shape (n, n_cells)
        The patterns found (distinct).
    """
    patterns = check_patterns(space, patterns)
    coef = check_coef(gains, coef)
    threshold = check_number(threshold, "threshold", allow_inf=True,
                             fix="give a reduced value (a number; -inf: never search "
                                 "neighbourhoods, inf: always)")
    max_rounds = check_count(max_rounds, "max_rounds", fix="give a whole number of rounds ≥ 0")
    hood_cells = _check_cluster_size(hood_cells, "hood_cells")
    _check_hoods(hoods, gains, space)
    if not len(patterns):
        raise ValidationError("patterns is empty; fix: give at least one pattern to start from, "
                              "e.g. space.full_power()")
    values = reduced_values(gains, space, coef, patterns)
    starts = np.unique(np.vstack([patterns[int(np.argmax(values))], patterns[-1],
                                  space.full_power()]), axis=0)
    runs = [local_search(gains, space, coef, s, max_rounds=max_rounds)[:2] for s in starts]
    found = [p for p, _ in runs]
    top, top_value = max(runs, key=lambda run: run[1])
    if hood_cells > 1 and top_value <= threshold:
        found.append(neighbourhood_search(gains, space, coef, top, hood_cells, hoods=hoods)[0])
    return np.unique(np.stack(found), axis=0)


def _check_cluster_size(value: object, name: str) -> int:
    return check_count(value, name, minimum=1, fix="give the most cells of a cluster, a whole "
                       "number ≥ 1 (3 by default; 1 skips the neighbourhoods)")


def _check_hoods(hoods: object, gains: GainTable, space: PatternSpace) -> None:
    if hoods is not None and not (isinstance(hoods, Neighbourhoods)
                                  and hoods.gains.n_users == gains.n_users
                                  and hoods.space.n_cells == space.n_cells):
        raise ValidationError("hoods is not the Neighbourhoods of these gains and pattern space; "
                              "fix: give Neighbourhoods(gains, space, max_cells), or None")
