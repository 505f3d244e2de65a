"""Clusters of cells and the level combinations of each: for relaxed bounds and searches."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cellopt.power.gains import GainTable
from cellopt.power.patterns import PatternSpace

__all__ = ["ClusterConfigs", "cluster_cells_by_coupling"]


def cluster_cells_by_coupling(gains: GainTable, max_cells: int) -> np.ndarray:
    """A partition of the cells into clusters of at most `max_cells`, along the coupling.

    The coupling of cells j and l is the interference each brings to the other's users,
    relative to their signal (``Σ_{i served by j} g_il p_l / g_ij p_j`` + the converse,
    at full power; served = strongest candidate). Clusters grow by heavy-edge matching:
    every round, each cluster proposes to the neighbour it is most coupled with among
    those it can merge with, and mutual proposals merge.

    Returns
    -------
    ndarray of int64, shape (n_cells,)
        Cluster of every cell, numbered 0, 1, ...
    """
    n = gains.n_cells
    label = np.arange(n)
    if max_cells <= 1 or n <= 1:
        return label
    p_mw = 10.0 ** (gains.max_power_dbm / 10.0)
    rx = gains.gain_mw_per_mw * p_mw[gains.cell]                   # (U, n_interferers)
    serving = gains.cell[:, 0]
    ratio = rx[:, 1:] / rx[:, :1]
    W = sp.coo_array((ratio.ravel(), (np.repeat(serving, ratio.shape[1]),
                                      gains.cell[:, 1:].ravel())), shape=(n, n)).tocsr()
    W = W + W.T
    for _ in range(64):  # each round at least halves the clusters that can still merge
        size = np.bincount(label, minlength=n)
        C = sp.csr_array((np.ones(n), (np.arange(n), label)), shape=(n, n))
        Wc = sp.coo_array(C.T @ W @ C)
        ok = (Wc.row != Wc.col) & (size[Wc.row] + size[Wc.col] <= max_cells) & (Wc.data > 0)
        r, c, w = Wc.row[ok], Wc.col[ok], Wc.data[ok]
        if not len(r):
            break
        order = np.lexsort((-w, r))
        first = order[np.r_[True, r[order][1:] != r[order][:-1]]]
        choice = np.full(n, -1)
        choice[r[first]] = c[first]
        mutual = np.flatnonzero((choice >= 0) & (choice[np.maximum(choice, 0)] == np.arange(n)))
        lead = mutual[mutual < choice[mutual]]
        if not len(lead):
            break
        merge_to = np.arange(n)
        merge_to[choice[lead]] = lead
        label = merge_to[label]
    return np.unique(label, return_inverse=True)[1]


class ClusterConfigs:
    """Every combination of the levels of the cells of every cluster.

    Attributes
    ----------
    n_clusters, m : int
        Number of clusters and most cells in one.
    members : ndarray of int64, shape (n_clusters, m)
        Cells of each cluster, −1 for an empty slot.
    slot : ndarray of int64, shape (n_cells,)
        Position of each cell in its cluster.
    n_configs : ndarray of int64, shape (n_clusters,)
        Level combinations of each cluster (configs k ≥ n_configs[b] do not exist).
    k_max : int
    level : ndarray of int64, shape (n_clusters, m, k_max)
        Level index of each slot in each config (mixed radix over the distinct levels).
    power_mw : ndarray, shape (n_clusters, m, k_max)
        Transmit power of each slot [mW] (0 for empty slots and "off").
    valid : ndarray of bool, shape (n_clusters, k_max)
    energy : ndarray, shape (n_clusters, k_max)
        Energy cost of each config [utility per unit share] (inf where not valid).
    """

    def __init__(self, space: PatternSpace, cluster: np.ndarray):
        n_cells = space.n_cells
        self.n_clusters = int(cluster.max()) + 1
        order = np.argsort(cluster, kind="stable")
        size = np.bincount(cluster, minlength=self.n_clusters)
        self.m = int(size.max())
        start = np.r_[0, np.cumsum(size)[:-1]]
        self.slot = np.empty(n_cells, np.int64)
        self.slot[order] = np.arange(n_cells) - start[cluster[order]]
        self.members = np.full((self.n_clusters, self.m), -1)
        self.members[cluster, self.slot] = np.arange(n_cells)
        levels = [np.unique(row, return_index=True)[1] for row in space.level_dbm]
        n_lv = np.array([len(v) for v in levels])
        width = int(n_lv.max())
        table = np.stack([np.r_[v, np.zeros(width - len(v), np.int64)] for v in levels])
        present = self.members >= 0
        cell = np.maximum(self.members, 0)
        radix = np.where(present, n_lv[cell], 1)                           # (B, m)
        self.n_configs = radix.prod(axis=1)
        self.k_max = int(self.n_configs.max())
        place = np.concatenate([np.ones((self.n_clusters, 1), np.int64),
                                np.cumprod(radix, axis=1)[:, :-1]], axis=1)
        k = np.arange(self.k_max)
        digit = (k[None, None, :] // place[:, :, None]) % radix[:, :, None]  # (B, m, K)
        self.level = table[cell[:, :, None], digit]
        p = 10.0 ** (space.level_dbm[cell[:, :, None], self.level] / 10.0)
        self.power_mw = np.where(present[:, :, None], p, 0.0)
        self.valid = k[None, :] < self.n_configs[:, None]
        price = np.where(present, space.energy_price_per_w[cell], 0.0)
        energy = (self.power_mw * 1e-3 * price[:, :, None]).sum(axis=1)
        self.energy = np.where(self.valid, energy, np.inf)
