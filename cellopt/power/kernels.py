"""Compiled per-link kernels of the power patterns and bounds, each beside its numpy form.

:func:`pattern_sinr` (the SINR of every candidate link under every pattern) and
:func:`cell_max` (each cell's best link value under every pattern) are the inner loops of
pricing and of every master's rates; their kernels give the numpy forms' results bit for
bit (the same sums in the same order: numpy's pairwise summation of a row), so the
answers do not depend on whether numba is there. The decomposition bound
(:func:`cellopt.power.bounds.decomposition_bound`) evaluates, at
every optimizer step, the (smoothed) maximum of every link's bracket over the
``L^scope`` level configurations of its scope; that is most of its work. The kernel
does it in one pass over the links, without the temporaries of the numpy form. Both
forms compute the same thing (the tests hold them equal to rounding on random inputs);
:func:`link_brackets` takes the kernel when :func:`cellopt.jit.compiled` is True.
"""

from __future__ import annotations

import math

import numpy as np

from cellopt import jit

__all__ = ["MOVE_TABLE_MAX", "PAIRWISE_MAX", "cell_max", "cell_max_numpy", "config_sinr",
           "config_sinr_numpy", "link_brackets", "link_brackets_numpy", "move_gains",
           "move_gains_fits", "move_sinr", "move_sinr_numpy", "pattern_sinr",
           "pattern_sinr_numpy", "term_max", "term_max_numpy"]

#: Most entries of the dense (move, cell) and (move, user) tables of :func:`move_gains`;
#: beyond, local search takes its numpy form (sorted keys).
MOVE_TABLE_MAX = 1 << 25

#: Most table entries per user for which :func:`pattern_sinr`'s kernel reproduces numpy's
#: pairwise row sum of a single pattern bit for bit (numpy splits longer rows; the numpy
#: form runs then).
PAIRWISE_MAX = 128


def pattern_sinr(power_mw: np.ndarray, cell: np.ndarray, gain: np.ndarray,
                 background_mw: np.ndarray, noise_mw: float, n_candidates: int) -> np.ndarray:
    """Linear SINR of every candidate link under every pattern, shape (S, U, n_candidates).

    ``rx[s, u, t] = gain[u, t] · power_mw[s, cell[u, t]]``, the total ``Σ_t rx + background
    + noise``, and link (u, c) gets ``rx[s, u, c] / max(total − rx[s, u, c], noise)``
    (:meth:`cellopt.power.GainTable.sinr`).
    """
    if jit.compiled() and (len(power_mw) > 1 or cell.shape[1] <= PAIRWISE_MAX):
        return _sinr_kernel(np.ascontiguousarray(power_mw, np.float64),
                            np.ascontiguousarray(cell, np.int64),
                            np.ascontiguousarray(gain, np.float64),
                            np.ascontiguousarray(background_mw, np.float64), float(noise_mw),
                            int(n_candidates))
    return pattern_sinr_numpy(power_mw, cell, gain, background_mw, noise_mw, n_candidates)


def pattern_sinr_numpy(power_mw: np.ndarray, cell: np.ndarray, gain: np.ndarray,
                       background_mw: np.ndarray, noise_mw: float, n_candidates: int
                       ) -> np.ndarray:
    """:func:`pattern_sinr` with numpy calls."""
    rx = gain[None] * power_mw[:, cell]                                   # (S, U, T)
    total = rx.sum(axis=2) + background_mw + noise_mw
    signal = rx[:, :, :n_candidates]
    return signal / np.maximum(total[:, :, None] - signal, noise_mw)


def cell_max(values: np.ndarray, cell: np.ndarray, n_cells: int) -> np.ndarray:
    """Each cell's largest link value (at least 0) under every pattern, shape (S, n_cells).

    `values` has shape (S, n_links), `cell` the cell of every link, shape (n_links,).
    """
    if jit.compiled():
        return _cell_max_kernel(np.ascontiguousarray(values, np.float64),
                                np.ascontiguousarray(cell, np.int64), int(n_cells))
    return cell_max_numpy(values, cell, n_cells)


def cell_max_numpy(values: np.ndarray, cell: np.ndarray, n_cells: int) -> np.ndarray:
    """:func:`cell_max` with numpy calls."""
    n_s = len(values)
    best = np.zeros((n_s, n_cells))
    rows = np.repeat(np.arange(n_s), len(cell))
    np.maximum.at(best, (rows, np.tile(cell, n_s)), np.ravel(values))
    return best


def config_sinr(total_mw: np.ndarray, power_kbm: np.ndarray, cluster: np.ndarray,
                user: np.ndarray, slot: np.ndarray, in_cluster: np.ndarray, gain: np.ndarray,
                rx_mw: np.ndarray, noise_mw: float) -> np.ndarray:
    """The SINR of every candidate link of (user, cluster) pairs under every config of the
    cluster, the rest of the pattern fixed: shape (K, n_pairs, n_candidates).

    Pair q is user ``user[q]`` and cluster ``cluster[q]``; under config k its total
    received power (noise included) is ``total_mw[k, q]``. A candidate link whose cell is
    in the cluster (``in_cluster[q, c]``) gets the signal ``gain[u, c] ·
    power_kbm[k, cluster[q], slot[q, c]]``, any other keeps ``rx_mw[u, c]``; the SINR is
    ``signal / max(total − signal, noise)``. Bit for bit the numpy form (the same
    operations on every element), which the neighbourhood search
    (``cellopt.power.search.Neighbourhoods.gains_of_configs``) takes without numba.
    """
    if jit.compiled():
        return _config_sinr_kernel(np.ascontiguousarray(total_mw, np.float64),
                                   np.ascontiguousarray(power_kbm, np.float64),
                                   np.ascontiguousarray(cluster, np.int64),
                                   np.ascontiguousarray(user, np.int64),
                                   np.ascontiguousarray(slot, np.int64),
                                   np.ascontiguousarray(in_cluster, np.bool_),
                                   np.ascontiguousarray(gain, np.float64),
                                   np.ascontiguousarray(rx_mw, np.float64), float(noise_mw))
    return config_sinr_numpy(total_mw, power_kbm, cluster, user, slot, in_cluster, gain, rx_mw,
                             noise_mw)


def config_sinr_numpy(total_mw: np.ndarray, power_kbm: np.ndarray, cluster: np.ndarray,
                      user: np.ndarray, slot: np.ndarray, in_cluster: np.ndarray,
                      gain: np.ndarray, rx_mw: np.ndarray, noise_mw: float) -> np.ndarray:
    """:func:`config_sinr` with numpy calls."""
    n_c = slot.shape[1]
    own = power_kbm[:, cluster[:, None], slot]                                # (K, q, c)
    signal = np.where(in_cluster[None], gain[user, :n_c][None] * own, rx_mw[user, :n_c][None])
    return signal / np.maximum(total_mw[:, :, None] - signal, noise_mw)


def term_max(best: np.ndarray, values: np.ndarray, term: np.ndarray) -> None:
    """``best[term[q, c], k] = max(best[term[q, c], k], values[k, q, c])``, in place.

    `best` has shape (n_terms, K), `values` (K, n_pairs, n_candidates) and `term` (n_pairs,
    n_candidates): the (cluster, cell) term each link value feeds. A maximum does not
    depend on the order, so both forms give the same result bit for bit.
    """
    if jit.compiled():
        _term_max_kernel(best, np.ascontiguousarray(values, np.float64),
                         np.ascontiguousarray(term, np.int64))
    else:
        term_max_numpy(best, values, term)


def term_max_numpy(best: np.ndarray, values: np.ndarray, term: np.ndarray) -> None:
    """:func:`term_max` with numpy calls."""
    n_k = values.shape[0]
    np.maximum.at(best, (np.broadcast_to(term[None], values.shape).ravel(),
                         np.repeat(np.arange(n_k), term.size)), values.ravel())


def move_sinr(rx_mw: np.ndarray, total_mw: np.ndarray, user: np.ndarray, column: np.ndarray,
              d_rx_mw: np.ndarray, noise_mw: float) -> np.ndarray:
    """The SINR of every candidate link of the users touched by single-cell moves:
    shape (n_pairs, n_candidates).

    Pair q is user ``user[q]`` when the cell in column ``column[q]`` of its table changes
    its received power by ``d_rx_mw[q]``: the total becomes ``total_mw[u] + d_rx_mw[q]``,
    and the signal of candidate c is ``rx_mw[u, c]``, plus ``d_rx_mw[q]`` when c is the
    moved column. Bit for bit the numpy form (local search's
    ``cellopt.power.patterns._MoveEvaluator.gains_of_moves`` without numba).
    """
    if jit.compiled():
        return _move_sinr_kernel(np.ascontiguousarray(rx_mw, np.float64),
                                 np.ascontiguousarray(total_mw, np.float64),
                                 np.ascontiguousarray(user, np.int64),
                                 np.ascontiguousarray(column, np.int64),
                                 np.ascontiguousarray(d_rx_mw, np.float64), float(noise_mw))
    return move_sinr_numpy(rx_mw, total_mw, user, column, d_rx_mw, noise_mw)


def move_sinr_numpy(rx_mw: np.ndarray, total_mw: np.ndarray, user: np.ndarray,
                    column: np.ndarray, d_rx_mw: np.ndarray, noise_mw: float) -> np.ndarray:
    """:func:`move_sinr` with numpy calls."""
    signal = rx_mw[user].copy()
    own = column < rx_mw.shape[1]
    signal[own, column[own]] += d_rx_mw[own]
    return signal / np.maximum((total_mw[user] + d_rx_mw)[:, None] - signal, noise_mw)


def move_gains_fits(n_moves: int, n_cells: int, n_users: int) -> bool:
    """Whether :func:`move_gains`'s kernel runs (numba there, its dense tables small enough)."""
    return jit.compiled() and max(n_moves * n_cells, n_moves * n_users) <= MOVE_TABLE_MAX


def move_gains(move: np.ndarray, user: np.ndarray, new_value: np.ndarray, cand_cell: np.ndarray,
               top1: np.ndarray, top1_user: np.ndarray, top2: np.ndarray, top2_user: np.ndarray,
               cell_value: np.ndarray, n_moves: int) -> tuple[np.ndarray, np.ndarray]:
    """The value change of every single-cell move of local search, and the (move, cell)
    pairs it touches: the compiled form of the numpy steps of
    ``cellopt.power.patterns._MoveEvaluator.gains_of_moves`` (which remain its fallback),
    bit for bit (the sums in the same order).

    Affected pair p is user ``user[p]`` under move ``move[p]``, its candidate links' new
    values ``new_value[p]``. A touched (move, cell) gets the max of its affected links —
    only those above the cell's second-best value or of its best or second user count —
    and of the cell's best unaffected link (its best unless that user is affected, then
    its second, else 0); the move's gain is the sum of (new − old) over its touched cells,
    in the order of the keys ``move · n_cells + cell``.

    Returns
    -------
    gain : ndarray, shape (n_moves,)
    keys : ndarray of int64
        The touched ``move · n_cells + cell``, increasing.
    """
    return _move_gains_kernel(np.ascontiguousarray(move, np.int64),
                              np.ascontiguousarray(user, np.int64),
                              np.ascontiguousarray(new_value, np.float64),
                              np.ascontiguousarray(cand_cell, np.int64),
                              np.ascontiguousarray(top1, np.float64),
                              np.ascontiguousarray(top1_user, np.int64),
                              np.ascontiguousarray(top2, np.float64),
                              np.ascontiguousarray(top2_user, np.int64),
                              np.ascontiguousarray(cell_value, np.float64), int(n_moves))


def link_brackets(rate: np.ndarray, a: np.ndarray, delta: np.ndarray, slot: np.ndarray,
                  n_levels: int, temperature: float, grad: bool
                  ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Every link's bracket maximized over its scope's configurations.

    The bracket of link e in configuration x (levels ``x_0, …, x_K`` of its scope, its
    own cell first) is ``z_e(x) = a_e R_e(x) + Σ_p δ[slot[e, p], x_p]``; configuration c
    has ``x_p = (c // L^(K−p)) % L``.

    Parameters
    ----------
    rate : ndarray, shape (n_links, L^(K+1))
    a : ndarray, shape (n_links,)
    delta : ndarray, shape (n_pairs, L)
    slot : ndarray of int64, shape (n_links, K+1)
    n_levels : int
        L.
    temperature : float
        0: the max; T > 0: ``T log Σ_x exp(z_e(x) / T)``.
    grad : bool
        With T > 0: also the softmax's expected rate ``Σ_x p_e(x) R_e(x)`` and its
        marginal of each scope position, ``Σ_{x: x_p = l} p_e(x)``.

    Returns
    -------
    value : ndarray, shape (n_links,)
    expected_rate : ndarray, shape (n_links,), or None
    marginal : ndarray, shape (n_links, K+1, L), or None
    """
    if jit.compiled():
        rate = np.ascontiguousarray(rate, np.float64)
        out = _brackets_kernel(rate, np.ascontiguousarray(a, np.float64),
                               np.ascontiguousarray(delta, np.float64),
                               np.ascontiguousarray(slot, np.int64), int(n_levels),
                               float(temperature), bool(grad and temperature > 0))
        value, expected, marginal = out
        if not (grad and temperature > 0):
            return value, None, None
        return value, expected, marginal
    return link_brackets_numpy(rate, a, delta, slot, n_levels, temperature, grad)


def link_brackets_numpy(rate: np.ndarray, a: np.ndarray, delta: np.ndarray, slot: np.ndarray,
                        n_levels: int, temperature: float, grad: bool
                        ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """:func:`link_brackets` with vectorized numpy calls (the fallback and the reference)."""
    n, k1 = slot.shape
    L, T = int(n_levels), float(temperature)
    k = k1 - 1
    shape = (n,) + (L,) * k1
    z = (rate * a[:, None]).reshape(shape)
    d = delta[slot]                                                         # (E, K+1, L)
    for p in range(k1):
        z = z + d[:, p].reshape((n,) + (1,) * p + (L,) + (1,) * (k - p))
    z = z.reshape(n, -1)
    top = z.max(axis=1)
    if T <= 0:
        return top, None, None
    e = np.exp((z - top[:, None]) / T)
    total = e.sum(axis=1)
    value = top + T * np.log(total)
    if not grad:
        return value, None, None
    prob = e / total[:, None]
    expected = np.einsum("ec,ec->e", prob, rate)
    prob = prob.reshape(shape)
    marginal = np.stack([prob.sum(axis=tuple(1 + q for q in range(k1) if q != p))
                         for p in range(k1)], axis=1)                       # (E, K+1, L)
    return value, expected, marginal


#: Terms of a soft maximum below exp(−40) of its largest are left out: adding them
#: changes the sum (≥ 1) by less than its rounding.
_NEGLIGIBLE = -40.0


@jit.kernel
def _brackets_kernel(rate, a, delta, slot, n_levels, temperature, grad):  # pragma: no cover - numba
    n, n_cfg = rate.shape
    k1 = slot.shape[1]
    value = np.empty(n)
    expected = np.zeros(n if grad else 0)
    marginal = np.zeros((n if grad else 0, k1, n_levels))
    digit = np.empty((n_cfg, k1), np.int64)
    for c in range(n_cfg):
        r = c
        for p in range(k1 - 1, -1, -1):
            digit[c, p] = r % n_levels
            r //= n_levels
    z = np.empty(n_cfg)
    d = np.empty((k1, n_levels))
    for e in range(n):
        ae = a[e]
        for p in range(k1):
            for lv in range(n_levels):
                d[p, lv] = delta[slot[e, p], lv]
        top = -np.inf
        for c in range(n_cfg):
            v = rate[e, c] * ae
            for p in range(k1):
                v += d[p, digit[c, p]]
            z[c] = v
            if v > top:
                top = v
        if temperature <= 0.0:
            value[e] = top
            continue
        total = 0.0
        for c in range(n_cfg):
            x = (z[c] - top) / temperature
            w = math.exp(x) if x > _NEGLIGIBLE else 0.0
            z[c] = w
            total += w
        value[e] = top + temperature * math.log(total)
        if grad:
            inv = 1.0 / total
            acc = 0.0
            for c in range(n_cfg):
                if z[c] == 0.0:
                    continue
                pr = z[c] * inv
                acc += pr * rate[e, c]
                for p in range(k1):
                    marginal[e, p, digit[c, p]] += pr
            expected[e] = acc
    return value, expected, marginal


@jit.kernel
def _sinr_kernel(power_mw, cell, gain, background, noise, n_cand):  # pragma: no cover - numba
    n_s = power_mw.shape[0]
    n_u, n_t = cell.shape
    out = np.empty((n_s, n_u, n_cand))
    rx = np.empty(n_t)
    for s in range(n_s):
        for u in range(n_u):
            for t in range(n_t):
                rx[t] = gain[u, t] * power_mw[s, cell[u, t]]
            # numpy's sum of a row: for several patterns numpy lays the patterns out
            # innermost and adds the row in order; for one, the row is contiguous and
            # numpy sums it pairwise (at most 128: eight running sums, then the rest)
            if n_s > 1 or n_t < 8:
                res = 0.0
                for t in range(n_t):
                    res += rx[t]
            else:
                r0, r1, r2, r3 = rx[0], rx[1], rx[2], rx[3]
                r4, r5, r6, r7 = rx[4], rx[5], rx[6], rx[7]
                t = 8
                stop = n_t - n_t % 8
                while t < stop:
                    r0 += rx[t]
                    r1 += rx[t + 1]
                    r2 += rx[t + 2]
                    r3 += rx[t + 3]
                    r4 += rx[t + 4]
                    r5 += rx[t + 5]
                    r6 += rx[t + 6]
                    r7 += rx[t + 7]
                    t += 8
                res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
                while t < n_t:
                    res += rx[t]
                    t += 1
            total = res + background[u] + noise
            for c in range(n_cand):
                den = total - rx[c]
                if den < noise:
                    den = noise
                out[s, u, c] = rx[c] / den
    return out


@jit.kernel
def _cell_max_kernel(values, cell, n_cells):  # pragma: no cover - numba
    n_s, n_l = values.shape
    best = np.zeros((n_s, n_cells))
    for s in range(n_s):
        for k in range(n_l):
            v = values[s, k]
            j = cell[k]
            if v > best[s, j]:
                best[s, j] = v
    return best


@jit.kernel
def _move_gains_kernel(move, user, new_value, cand_cell, top1, top1_user, top2, top2_user,
                       cell_value, n_moves):  # pragma: no cover - numba
    n_pairs, n_cand = new_value.shape
    n_cells = top1.shape[0]
    n_users = cand_cell.shape[0]
    touched = np.zeros(n_moves * n_cells, np.bool_)
    best = np.zeros(n_moves * n_cells)
    affected = np.zeros(n_moves * n_users, np.bool_)
    for p in range(n_pairs):
        m, u = move[p], user[p]
        affected[m * n_users + u] = True
        for c in range(n_cand):
            j = cand_cell[u, c]
            key = m * n_cells + j
            touched[key] = True
            v = new_value[p, c]
            if v > top2[j] or u == top1_user[j] or u == top2_user[j]:
                if v > best[key]:
                    best[key] = v
    gain = np.zeros(n_moves)
    count = 0
    for key in range(n_moves * n_cells):
        if touched[key]:
            count += 1
    keys = np.empty(count, np.int64)
    k = 0
    for key in range(n_moves * n_cells):
        if not touched[key]:
            continue
        keys[k] = key
        k += 1
        m = key // n_cells
        j = key % n_cells
        u1, u2 = top1_user[j], top2_user[j]
        hit1 = u1 >= 0 and affected[m * n_users + u1]
        hit2 = u2 >= 0 and affected[m * n_users + u2]
        if not hit1:
            rest = top1[j]
        elif not hit2:
            rest = top2[j]
        else:
            rest = 0.0
        new = best[key] if best[key] > rest else rest
        gain[m] += new - cell_value[j]
    return gain, keys


@jit.kernel
def _config_sinr_kernel(total, power_kbm, cluster, user, slot, in_cluster, gain, rx,
                        noise):  # pragma: no cover - numba
    n_k, n_q = total.shape
    n_c = slot.shape[1]
    out = np.empty((n_k, n_q, n_c))
    for k in range(n_k):
        for q in range(n_q):
            u, h, t = user[q], cluster[q], total[k, q]
            for c in range(n_c):
                if in_cluster[q, c]:
                    signal = gain[u, c] * power_kbm[k, h, slot[q, c]]
                else:
                    signal = rx[u, c]
                den = t - signal
                if den < noise:
                    den = noise
                out[k, q, c] = signal / den
    return out


@jit.kernel
def _term_max_kernel(best, values, term):  # pragma: no cover - numba
    n_k, n_q, n_c = values.shape
    for k in range(n_k):
        for q in range(n_q):
            for c in range(n_c):
                v = values[k, q, c]
                t = term[q, c]
                if v > best[t, k] or v != v:
                    best[t, k] = v


@jit.kernel
def _move_sinr_kernel(rx, total, user, column, d_rx, noise):  # pragma: no cover - numba
    n_q = user.shape[0]
    n_c = rx.shape[1]
    out = np.empty((n_q, n_c))
    for q in range(n_q):
        u, d = user[q], d_rx[q]
        t = total[u] + d
        for c in range(n_c):
            signal = rx[u, c]
            if c == column[q]:
                signal += d
            den = t - signal
            if den < noise:
                den = noise
            out[q, c] = signal / den
    return out
