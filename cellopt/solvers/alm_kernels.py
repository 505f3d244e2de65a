"""Per-link loops of the ``alm`` method: compiled kernels and their numpy forms.

Each function here has a numba kernel (:func:`cellopt.jit.kernel`, compiled on first use)
and a numpy form that computes the same thing with vectorized calls; the public
function takes the kernel when :func:`cellopt.jit.compiled` is True and the numpy form
otherwise. The tests hold the two equal to rounding on random inputs.

- :func:`schur_dense` — the dense Schur matrix ``M = I/σ + Wᵀ D⁻¹ W − Σ_i β_i t_i t_iᵀ``
  of the semismooth Newton system (``t_i = Wᵀ D⁻¹ R_i``): a sum over the free links of
  each user, at most two rows per link (its airtime group, its capped cell). In numpy
  it takes a dozen sparse constructions; the kernel writes it in one pass.
- :func:`flows` — user rates, group airtime and cell traffic of shares x in one pass
  (three ``np.bincount`` calls in numpy).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cellopt import jit

__all__ = ["flows", "link_terms", "schur_dense", "schur_dense_numpy"]


@jit.kernel
def _schur_dense_kernel(m, inv_sigma, user, rg, rc, rho, rate, inv_d, beta):  # pragma: no cover
    out = np.zeros((m, m))
    for k in range(m):
        out[k, k] = inv_sigma
    n = user.shape[0]
    rows = np.empty(2 * n, np.int64)
    vals = np.empty(2 * n)
    e = 0
    while e < n:
        i = user[e]
        start = e
        while e < n and user[e] == i:
            e += 1
        # Wᵀ D⁻¹ W: each link's own rows, and the t_i entries of its user.
        k = 0
        for a in range(start, e):
            ga, ca, da = rg[a], rc[a], inv_d[a]
            if ga >= 0:
                out[ga, ga] += da
                rows[k] = ga
                vals[k] = rate[a] * da
                k += 1
            if ca >= 0:
                out[ca, ca] += rho[a] * rho[a] * da
                rows[k] = ca
                vals[k] = rho[a] * rate[a] * da
                k += 1
            if ga >= 0 and ca >= 0:
                out[ga, ca] += rho[a] * da
                out[ca, ga] += rho[a] * da
        b = beta[i]
        if b > 0.0:
            for p in range(k):
                for q in range(k):
                    out[rows[p], rows[q]] -= b * vals[p] * vals[q]
    return out


def schur_dense_numpy(m: int, sigma: float, user: np.ndarray, rg: np.ndarray, rc: np.ndarray,
                      rho: np.ndarray, rate: np.ndarray, inv_d: np.ndarray,
                      beta: np.ndarray) -> sp.csr_matrix:
    """:func:`schur_dense` in vectorized numpy / scipy.sparse (sparse, shape (m, m))."""
    in_g, in_c = rg >= 0, rc >= 0
    rows, cols, vals = [np.arange(m)], [np.arange(m)], [np.full(m, 1.0 / sigma)]
    for ra, ma, ca_ in ((rg, in_g, 1.0), (rc, in_c, rho)):
        for rb, mb, cb in ((rg, in_g, 1.0), (rc, in_c, rho)):
            both = ma & mb
            rows.append(ra[both])
            cols.append(rb[both])
            vals.append((np.broadcast_to(ca_, rate.shape) * np.broadcast_to(cb, rate.shape)
                         * inv_d)[both])
    t_rows = np.concatenate([rg[in_g], rc[in_c]])
    t_users = np.concatenate([user[in_g], user[in_c]])
    t_vals = np.concatenate([(rate * inv_d)[in_g], (rho * rate * inv_d)[in_c]])
    corr = beta[t_users] > 0
    T = sp.csr_matrix((t_vals[corr], (t_rows[corr], t_users[corr])), shape=(m, len(beta)))
    TbT = (T @ sp.diags(beta) @ T.T).tocoo()
    rows.append(TbT.row)
    cols.append(TbT.col)
    vals.append(-TbT.data)
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(m, m))


def schur_dense(m: int, sigma: float, user: np.ndarray, rg: np.ndarray, rc: np.ndarray,
                rho: np.ndarray, rate: np.ndarray, inv_d: np.ndarray, beta: np.ndarray
                ) -> np.ndarray | sp.csr_matrix:
    """The Schur matrix ``I/σ + Wᵀ D⁻¹ W − Σ_i β_i t_i t_iᵀ``, shape (m, m).

    Parameters
    ----------
    m : int
        Rows: active airtime groups and active backhaul rows.
    sigma : float
        Penalty σ [utility units].
    user : ndarray of int64, shape (F,)
        User of each free link, sorted (links of a user are consecutive).
    rg, rc : ndarray of int64, shape (F,)
        Row of each free link's airtime group and of its cell's backhaul row, −1 where
        that row is not active.
    rho : ndarray, shape (F,)
        Coefficient of the link in its backhaul row (R_e / C_j).
    rate : ndarray, shape (F,)
        R_e [Mbit/s].
    inv_d : ndarray, shape (F,)
        1 / D_e, the inverse diagonal (proximal weight) [share² per utility unit].
    beta : ndarray, shape (n_users,)
        Sherman–Morrison factor of each user, ≥ 0.

    Returns
    -------
    ndarray (dense, the kernel) or scipy.sparse.csr_matrix (the numpy form)
    """
    if jit.compiled():
        return _schur_dense_kernel(int(m), 1.0 / sigma, user, rg, rc, rho, rate, inv_d, beta)
    return schur_dense_numpy(m, sigma, user, rg, rc, rho, rate, inv_d, beta)


@jit.kernel
def _flows_kernel(user, group, cell, rate, x, n_users, n_groups, n_cells):  # pragma: no cover
    r = np.zeros(n_users)
    air = np.zeros(n_groups)
    traffic = np.zeros(n_cells)
    for e in range(x.shape[0]):
        f = rate[e] * x[e]
        r[user[e]] += f
        air[group[e]] += x[e]
        traffic[cell[e]] += f
    return r, air, traffic


def flows(user: np.ndarray, group: np.ndarray, cell: np.ndarray, rate: np.ndarray,
          x: np.ndarray, n_users: int, n_groups: int, n_cells: int
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """User rates (n_users,) [Mbit/s], airtime per group (n_groups,) [share] and cell
    traffic (n_cells,) [Mbit/s] of shares x (L,): what :func:`~cellopt.solvers.common.loads`
    returns, in one pass over the links."""
    if jit.compiled():
        return _flows_kernel(user, group, cell, rate, np.ascontiguousarray(x, float),
                             int(n_users), int(n_groups), int(n_cells))
    flow = rate * x
    return (np.bincount(user, flow, minlength=n_users),
            np.bincount(group, x, minlength=n_groups),
            np.bincount(cell, flow, minlength=n_cells))


@jit.kernel
def _link_terms_kernel(user, group, cell, rate, rho, cost, a_user, h_user, s_g, s_c, inv_cap,
                       sigma):  # pragma: no cover
    n = rate.shape[0]
    grad = np.empty(n)
    diag = np.empty(n)
    for e in range(n):
        u, g, c = user[e], group[e], cell[e]
        grad[e] = rate[e] * (a_user[u] + s_c[c] * inv_cap[c]) + cost[e] + s_g[g]
        d = h_user[u] * rate[e] * rate[e]
        if s_g[g] > 0.0:
            d += sigma
        if s_c[c] > 0.0:
            d += sigma * rho[e] * rho[e]
        diag[e] = d
    return grad, diag


def link_terms(user: np.ndarray, group: np.ndarray, cell: np.ndarray, rate: np.ndarray,
               rho: np.ndarray, cost: np.ndarray, a_user: np.ndarray, h_user: np.ndarray,
               s_g: np.ndarray, s_c: np.ndarray, inv_cap: np.ndarray, sigma: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and generalized-Hessian diagonal of the augmented Lagrangian, per link.

    ``grad_e = R_e (a_i + s_c,j / C_j) + c_e + s_g`` and
    ``diag_e = h_i R_e² + σ (1[s_g > 0] + 1[s_c,j > 0] ρ_e²)`` for link e of user i, cell j,
    group g.

    Parameters
    ----------
    user, group, cell : ndarray of int64, shape (L,)
    rate : ndarray, shape (L,)
        R_e [Mbit/s].
    rho : ndarray, shape (L,)
        R_e / C_j, the link's coefficient in its cell's scaled backhaul row (0: no row).
    cost : ndarray, shape (L,)
        c_j R_e, the price paid per unit share [utility units].
    a_user : ndarray, shape (n_users,)
        ``−w U'(r) + s_d / scale_d`` per user [utility per Mbit/s].
    h_user : ndarray, shape (n_users,)
        Curvature of the user's terms along its rate [utility per (Mbit/s)²].
    s_g : ndarray, shape (n_groups,)
        Airtime penalty prices max(0, μ + σ excess) [utility units].
    s_c : ndarray, shape (n_cells,)
        Scaled backhaul penalty prices (0 where no row).
    inv_cap : ndarray, shape (n_cells,)
        1 / C_j (0 where no row) [1 / (Mbit/s)].
    sigma : float
        Penalty σ [utility units].

    Returns
    -------
    (ndarray (L,), ndarray (L,))
    """
    if jit.compiled():
        return _link_terms_kernel(user, group, cell, rate, rho, cost, a_user, h_user, s_g, s_c,
                                  inv_cap, float(sigma))
    grad = rate * (a_user[user] + (s_c * inv_cap)[cell]) + cost + s_g[group]
    diag = h_user[user] * rate * rate + sigma * ((s_g > 0)[group] + (s_c > 0)[cell] * rho * rho)
    return grad, diag
