"""Compiled per-link kernels of the ``dual`` solver (numba, see :mod:`cellopt.jit`).

Each kernel is one pass over the user-sorted links of a computation that the numpy form
does in some 10 to 40 vectorized calls; on networks of 10⁴–10⁵ links the calls' overhead,
not the arithmetic, is what those cost. The numpy forms stay where they were and remain
the reference (the tests hold each kernel equal to its numpy form to rounding) and the
fallback when :func:`cellopt.jit.compiled` is False:

- :func:`soft_min_weights` and :func:`implied_flows`: the soft-min over each user's links
  and the implied shares — the per-link part of
  :meth:`cellopt.solvers.dual_model.SmoothedDual.evaluate` (its per-user part, φ at the
  soft-min and at the cheapest price, stays vectorized numpy: a few calls on arrays of
  one entry per user, whose transcendental functions numpy evaluates with SIMD; numpy
  form of the whole: ``SmoothedDual._users_numpy``);
- :func:`hessian_csr`: the Hessian of the smoothed users' term in scaled prices, as CSR —
  :meth:`~cellopt.solvers.dual_model.SmoothedDual.hessian` (``SmoothedDual._hessian_numpy``);
- :func:`repair`, :func:`demand_first`, :func:`objective_terms`, the three candidates of
  one pattern-share vector (:func:`recover_candidates`) and :func:`recover_feasible`:
  the primal recovery of :mod:`cellopt.solvers.common` (same names there).

Nothing here imports numba: a kernel compiles on its first call. The kernels are written
with ``error_model="numpy"`` (division by zero gives inf / nan, as numpy does).
"""

from __future__ import annotations

import math

import numpy as np

from cellopt import jit
from cellopt.problem import Problem
from cellopt.solvers.common import energy_cost, feasible_shares, group_capacity

__all__ = ["demand_first", "hessian_csr", "implied_flows", "objective_terms",
           "recover_candidates", "recover_feasible", "repair", "soft_min_weights"]


#: A link whose soft-min weight exp(−(log π_e − log π_min)/τ) is below exp(−37) < 2⁻⁵³
#: (a price above exp(37 τ) × its user's cheapest) gets weight 0: added to the user's
#: total, which is ≥ 1 (its cheapest link weighs 1), it would not change a bit of it.
_NEGLIGIBLE_EXPONENT = 37.0


@jit.kernel(error_model="numpy")
def soft_min_weights(mu, nu, group, rate, price, link_cap, starts, tau):
    """Link prices and the unnormalized soft-min weights of each user's links.

    Parameters
    ----------
    mu : ndarray, shape (G,)
        Airtime prices μ_g [utility per unit airtime].
    nu : ndarray, shape (K,)
        Backhaul prices ν of the capped cells [utility per Mbit/s].
    group, link_cap : ndarray of int64, shape (L,)
        Each link's group, and its cell's index among the capped cells (−1: no cap).
    rate, price : ndarray, shape (L,)
        R_e [Mbit/s] and c_j of the link's cell [utility per Mbit/s].
    starts : ndarray of int64, shape (U,)
        First link of each user with links (links sorted by user).
    tau : float
        Relative temperature τ > 0.

    Returns
    -------
    pi : ndarray, shape (L,)
        π_e = μ_g / R_e + c_j + ν_j, at least 1e-300 [utility per Mbit/s].
    weight : ndarray, shape (L,)
        exp(z_e − z_max) with z = −log π / τ: 1 at the user's cheapest link, 0 where it
        is below exp(−37) (it would not change the user's total).
    pmin : ndarray, shape (U,)
        min_e π_e per user.
    zmax : ndarray, shape (U,)
        −log(pmin) / τ.
    total : ndarray, shape (U,)
        Σ_e weight_e per user (≥ 1).
    """
    n_links = rate.shape[0]
    n_users = starts.shape[0]
    pi = np.empty(n_links)
    weight = np.empty(n_links)
    pmin = np.empty(n_users)
    zmax = np.empty(n_users)
    total = np.empty(n_users)
    far = math.exp(_NEGLIGIBLE_EXPONENT * tau)
    for u in range(n_users):
        lo = starts[u]
        hi = starts[u + 1] if u + 1 < n_users else n_links
        low = math.inf
        for e in range(lo, hi):
            j = link_cap[e]
            p = max(mu[group[e]] / rate[e] + price[e] + (nu[j] if j >= 0 else 0.0), 1e-300)
            pi[e] = p
            if p < low:
                low = p
        z0 = -math.log(low) / tau
        limit = low * far
        tot = 0.0
        for e in range(lo, hi):
            if pi[e] > limit:
                w = 0.0
            else:
                w = math.exp(-math.log(pi[e]) / tau - z0)
            weight[e] = w
            tot += w
        pmin[u] = low
        zmax[u] = z0
        total[u] = tot
    return pi, weight, pmin, zmax, total


@jit.kernel(error_model="numpy")
def implied_flows(weight, total, m, r, pi, rate, group, link_cap, starts, n_groups, n_caps):
    """The soft-min shares, the implied shares and their airtime and traffic.

    Parameters
    ----------
    weight : ndarray, shape (L,)
        Unnormalized weights of :func:`soft_min_weights`; overwritten with the shares
        (one array of L entries less to allocate: a fresh one costs its page faults).
    total, m, r : ndarray, shape (U,)
        Per user: Σ weight, the soft-min m_τ [utility per Mbit/s] and the rate r_i it
        buys [Mbit/s].
    pi, rate : ndarray, shape (L,)
        π_e and R_e [Mbit/s].
    group, link_cap : ndarray of int64, shape (L,)
    starts : ndarray of int64, shape (U,)
    n_groups, n_caps : int

    Returns
    -------
    share : ndarray, shape (L,)
        p_e = weight_e / total (the `weight` array).
    x : ndarray, shape (L,)
        x_e = r_i a_e / R_e with ∂m/∂π_e = a_e = p_e m / π_e.
    air : ndarray, shape (n_groups,)
        Σ_{e∈g} x_e.
    traffic : ndarray, shape (n_caps,)
        Σ_{e∈j} R_e x_e per capped cell [Mbit/s].
    """
    n_links = rate.shape[0]
    n_users = starts.shape[0]
    share = weight
    x = np.empty(n_links)
    air = np.zeros(n_groups)
    traffic = np.zeros(n_caps)
    for u in range(n_users):
        lo = starts[u]
        hi = starts[u + 1] if u + 1 < n_users else n_links
        for e in range(lo, hi):
            p_e = weight[e] / total[u]
            share[e] = p_e
            flow = r[u] * (p_e * (m[u] / pi[e]))
            x[e] = flow / rate[e]
            air[group[e]] += x[e]
            j = link_cap[e]
            if j >= 0:
                traffic[j] += flow
    return share, x, air, traffic


@jit.kernel(error_model="numpy")
def hessian_csr(share, pi, r, m, h, starts, group, rate, link_cap, s, n_groups, n, tau,
                active_weight):
    """The Hessian of Σ_i φ_i(m_τ) in scaled prices y, as CSR arrays of an (n, n) matrix.

    ``Σ_users Jᵀ [r(1+1/τ) diag(a/π) + (h − r(1+1/τ)/m) a aᵀ] J`` over the links whose
    weight p_e exceeds `active_weight`; J = ∂π/∂y has s_g / R_e at the link's group and
    s_{G+k} at its capped cell's ν (k = ``link_cap``). The link-space diagonal is taken as
    ``h a² + r k (a/π)(1 − p)`` (minus the rank-one coefficient's share for users with
    several active links: no cancellation). Written as ``D + Fᵀ diag(w) F`` — D the terms
    of links without a cap (diagonal), a row of F per active link with a cap (its two
    entries of J, weight: that link's diagonal) and per user with several active links
    (``aᵀ J``, weight: the rank-one coefficient) — and multiplied out row by row with a
    dense accumulator (Gustavson), in O(Σ_rows nnz²) time and O(nnz(H)) memory.

    Parameters
    ----------
    share, pi : ndarray, shape (L,)
        p_e and π_e of :func:`implied_flows` and :func:`soft_min_weights`
        (∂m/∂π_e = a_e = p_e m / π_e).
    r, m, h : ndarray, shape (U,)
        Per user with links.
    starts : ndarray of int64, shape (U,)
    group, link_cap : ndarray of int64, shape (L,)
    rate : ndarray, shape (L,)
        R_e [Mbit/s].
    s : ndarray, shape (n,)
        Price units.
    n_groups, n : int
        G and the number of prices n = G + K.
    tau, active_weight : float

    Returns
    -------
    data : ndarray, shape (nnz,)
    indices : ndarray of int64, shape (nnz,)
    indptr : ndarray of int64, shape (n + 1,)
        CSR without duplicates; the column indices within a row are not sorted.
    """
    n_links = rate.shape[0]
    n_users = starts.shape[0]
    k = 1.0 + 1.0 / tau
    # ---- F's size
    n_rows = 0
    nnz_f = 0
    for u in range(n_users):
        lo = starts[u]
        hi = starts[u + 1] if u + 1 < n_users else n_links
        na = 0
        nc = 0
        for e in range(lo, hi):
            if share[e] > active_weight:
                na += 1
                if link_cap[e] >= 0:
                    nc += 1
        n_rows += nc                 # an F row per capped link; the others: the diagonal
        nnz_f += 2 * nc
        if na > 1:
            n_rows += 1
            nnz_f += na + nc
    f_ptr = np.zeros(n_rows + 1, np.int64)
    f_col = np.empty(nnz_f, np.int64)
    f_val = np.empty(nnz_f)
    weight = np.empty(n_rows)
    dg = np.zeros(n)             # the uncapped links' terms, all on the diagonal
    # ---- F, row by row
    row = 0
    q = 0
    for u in range(n_users):
        lo = starts[u]
        hi = starts[u + 1] if u + 1 < n_users else n_links
        na = 0
        for e in range(lo, hi):
            if share[e] > active_weight:
                na += 1
        if na == 0:
            continue
        split = na > 1
        coef = h[u] - r[u] * k / m[u]
        for e in range(lo, hi):
            if not share[e] > active_weight:
                continue
            ae = share[e] * (m[u] / pi[e])
            diag = h[u] * ae * ae + r[u] * k * (ae / pi[e]) * (1.0 - share[e])
            if split:
                diag = diag - coef * ae * ae
            d_grp = s[group[e]] / rate[e]
            if link_cap[e] < 0:
                dg[group[e]] += diag * d_grp * d_grp
                continue
            weight[row] = diag
            f_col[q] = group[e]
            f_val[q] = d_grp
            f_col[q + 1] = n_groups + link_cap[e]
            f_val[q + 1] = s[n_groups + link_cap[e]]
            q += 2
            row += 1
            f_ptr[row] = q
        if split:
            weight[row] = coef
            for e in range(lo, hi):
                if not share[e] > active_weight:
                    continue
                ae = share[e] * (m[u] / pi[e])
                f_col[q] = group[e]
                f_val[q] = ae * (s[group[e]] / rate[e])
                q += 1
                if link_cap[e] >= 0:
                    f_col[q] = n_groups + link_cap[e]
                    f_val[q] = ae * s[n_groups + link_cap[e]]
                    q += 1
            row += 1
            f_ptr[row] = q
    # ---- Fᵀ (by column), each entry scaled by its row's weight
    c_ptr = np.zeros(n + 1, np.int64)
    for i in range(nnz_f):
        c_ptr[f_col[i] + 1] += 1
    for i in range(n):
        c_ptr[i + 1] += c_ptr[i]
    c_row = np.empty(nnz_f, np.int64)
    c_val = np.empty(nnz_f)
    fill = c_ptr[:-1].copy()
    for rr in range(n_rows):
        for i in range(f_ptr[rr], f_ptr[rr + 1]):
            j = f_col[i]
            c_row[fill[j]] = rr
            c_val[fill[j]] = f_val[i] * weight[rr]
            fill[j] += 1
    # ---- H = Fᵀ W F, row i = Σ_{rows r ∋ i} w_r F[r, i] F[r, :]
    acc = np.zeros(n)
    mark = np.full(n, -1, np.int64)
    touched = np.empty(n, np.int64)
    capacity = 4 * nnz_f + n
    data = np.empty(capacity)
    indices = np.empty(capacity, np.int64)
    indptr = np.zeros(n + 1, np.int64)
    nnz = 0
    for i in range(n):
        nt = 0
        if dg[i] != 0.0:
            mark[i] = i
            acc[i] = dg[i]
            touched[0] = i
            nt = 1
        for kk in range(c_ptr[i], c_ptr[i + 1]):
            rr = c_row[kk]
            f = c_val[kk]
            for qq in range(f_ptr[rr], f_ptr[rr + 1]):
                j = f_col[qq]
                if mark[j] != i:
                    mark[j] = i
                    acc[j] = 0.0
                    touched[nt] = j
                    nt += 1
                acc[j] += f * f_val[qq]
        if nnz + nt > capacity:
            capacity = 2 * (nnz + nt)
            grown = np.empty(capacity)
            grown[:nnz] = data[:nnz]
            data = grown
            grown_i = np.empty(capacity, np.int64)
            grown_i[:nnz] = indices[:nnz]
            indices = grown_i
        for t in range(nt):
            indices[nnz + t] = touched[t]
            data[nnz + t] = acc[touched[t]]
        nnz += nt
        indptr[i + 1] = nnz
    return data[:nnz].copy(), indices[:nnz].copy(), indptr


@jit.kernel(error_model="numpy")
def repair(x, group, cell, user, rate, capacity, backhaul, demand, with_backhaul, with_demand):
    """Shares scaled down until airtime, then backhaul, then demand hold (common.repair).

    Parameters
    ----------
    x : ndarray, shape (L,)
        Shares (clipped to [0, 1] first).
    group, cell, user : ndarray of int64, shape (L,)
    rate : ndarray, shape (L,)
        R_e [Mbit/s].
    capacity : ndarray, shape (G,)
        Airtime of each group (1, or its pattern share).
    backhaul : ndarray, shape (n_cells,)
        C_j [Mbit/s] (inf: no cap).
    demand : ndarray, shape (n_users,)
        d_i [Mbit/s] (inf: elastic).
    with_backhaul, with_demand : bool
        Whether some cap / some demand is finite (the step is skipped otherwise).

    Returns
    -------
    ndarray, shape (L,)
    """
    n_links = x.shape[0]
    out = np.empty(n_links)
    for e in range(n_links):
        out[e] = min(max(x[e], 0.0), 1.0)
    _scale_to_limits(out, group, np.ones(n_links), capacity)
    if with_backhaul:
        _scale_to_limits(out, cell, rate, backhaul)
    if with_demand:
        _scale_to_limits(out, user, rate, demand)
    return out


@jit.kernel(error_model="numpy")
def _scale_to_limits(out, index, coefficient, limit):  # pragma: no cover - numba
    """Scale `out` in place so that each sum Σ_{e: index[e]=k} coefficient[e] out[e] ≤ limit[k].

    Every entry of a row over its limit is multiplied by limit / sum, the others by 1.
    """
    total = np.zeros(limit.shape[0])
    for e in range(out.shape[0]):
        total[index[e]] += coefficient[e] * out[e]
    for k in range(total.shape[0]):
        total[k] = limit[k] / total[k] if total[k] > limit[k] else 1.0
    for e in range(out.shape[0]):
        out[e] = out[e] * total[index[e]]


@jit.kernel(error_model="numpy")
def demand_first(x, group, user, rate, capacity, demand):
    """Users near their demand served at it first, the rest rescaled (common.demand_first).

    Parameters
    ----------
    x : ndarray, shape (L,)
    group, user : ndarray of int64, shape (L,)
    rate : ndarray, shape (L,)
        R_e [Mbit/s].
    capacity : ndarray, shape (G,)
    demand : ndarray, shape (n_users,)
        d_i [Mbit/s] (inf: elastic).

    Returns
    -------
    ndarray, shape (L,)
        Not yet feasible (see :func:`repair`).
    """
    n_links = x.shape[0]
    out = np.empty(n_links)
    got = np.zeros(demand.shape[0])
    for e in range(n_links):
        v = min(max(x[e], 0.0), 1.0)
        out[e] = v
        got[user[e]] += rate[e] * v
    factor_u = np.ones(demand.shape[0])
    near = np.zeros(demand.shape[0], np.bool_)
    for i in range(demand.shape[0]):
        d = demand[i]
        if math.isfinite(d) and got[i] >= 0.9 * d and got[i] > 0:
            near[i] = True
            factor_u[i] = d / got[i]
    air_served = np.zeros(capacity.shape[0])
    air_rest = np.zeros(capacity.shape[0])
    for e in range(n_links):
        if near[user[e]]:
            out[e] = out[e] * factor_u[user[e]]
            air_served[group[e]] += out[e]
        else:
            air_rest[group[e]] += out[e]
    for g in range(capacity.shape[0]):
        if air_rest[g] > 1e-12:
            air_rest[g] = max(capacity[g] - air_served[g], 0.0) / air_rest[g]
        else:
            air_rest[g] = 1.0
    for e in range(n_links):
        if not near[user[e]]:
            out[e] = out[e] * air_rest[group[e]]
    return out


@jit.kernel(error_model="numpy")
def objective_terms(x, cell, user, rate, weight, alpha, price, with_price):
    """(utility Σ_i w_i U(r_i), cost Σ_j c_j T_j) of shares x (common.objective_terms).

    Parameters
    ----------
    x : ndarray, shape (L,)
    cell, user : ndarray of int64, shape (L,)
    rate : ndarray, shape (L,)
        R_e [Mbit/s].
    weight : ndarray, shape (n_users,)
    alpha : float
    price : ndarray, shape (n_cells,)
        c_j [utility per Mbit/s].
    with_price : bool
        Whether some c_j ≠ 0 (cost 0 otherwise).

    Returns
    -------
    (float, float)
    """
    got = np.zeros(weight.shape[0])
    traffic = np.zeros(price.shape[0])
    for e in range(x.shape[0]):
        flow = rate[e] * x[e]
        got[user[e]] += flow
        if with_price:
            traffic[cell[e]] += flow
    util = 0.0
    for i in range(weight.shape[0]):
        rv = got[i]
        if rv > 0:
            if alpha == 1.0:
                u = math.log(rv)
            elif alpha == 0.0:
                u = rv - 1.0
            else:
                u = math.expm1((1.0 - alpha) * math.log(rv)) / (1.0 - alpha)
        elif rv == 0:
            u = -math.inf if alpha >= 1.0 else -1.0 / (1.0 - alpha)
        else:
            u = math.nan
        util += weight[i] * u
    cost = 0.0
    if with_price:
        for j in range(price.shape[0]):
            cost += price[j] * traffic[j]
    return util, cost


@jit.kernel(error_model="numpy")
def recover_candidates(x, priced, capacity, group, cell, user, rate, backhaul, demand, weight,
                       alpha, price, with_backhaul, with_demand, with_price):
    """The best of repair(x), repair(fill(x)) and, with demands, repair(demand_first(x)).

    fill rescales the `priced` groups whose airtime is in (1e-12, capacity) to their
    capacity (common.recover_feasible, for one candidate of the pattern shares).

    Parameters
    ----------
    x : ndarray, shape (L,)
        Implied shares.
    priced : ndarray of bool, shape (G,)
    capacity : ndarray, shape (G,)
    group, cell, user : ndarray of int64, shape (L,)
    rate : ndarray, shape (L,)
        R_e [Mbit/s].
    backhaul, price : ndarray, shape (n_cells,)
        C_j [Mbit/s] and c_j [utility per Mbit/s].
    demand, weight : ndarray, shape (n_users,)
        d_i [Mbit/s] and w_i.
    alpha : float
    with_backhaul, with_demand, with_price : bool
        Whether some cap / demand is finite, some price ≠ 0.

    Returns
    -------
    x : ndarray, shape (L,)
        The best candidate (feasible).
    utility, cost : float
        Its Σ w U(r) and Σ c T.
    """
    best = repair(x, group, cell, user, rate, capacity, backhaul, demand, with_backhaul,
                  with_demand)
    util, cost = objective_terms(best, cell, user, rate, weight, alpha, price, with_price)
    air = np.zeros(capacity.shape[0])
    for e in range(best.shape[0]):
        air[group[e]] += best[e]
    factor = np.ones(capacity.shape[0])
    fill = False
    for g in range(capacity.shape[0]):
        if priced[g] and air[g] > 1e-12 and air[g] < capacity[g]:
            factor[g] = capacity[g] / air[g]
            fill = True
    if fill:
        scaled = np.empty(best.shape[0])
        for e in range(best.shape[0]):
            scaled[e] = best[e] * factor[group[e]]
        trial = repair(scaled, group, cell, user, rate, capacity, backhaul, demand,
                       with_backhaul, with_demand)
        u2, c2 = objective_terms(trial, cell, user, rate, weight, alpha, price, with_price)
        if u2 - c2 > util - cost:
            best, util, cost = trial, u2, c2
    if with_demand:
        first = demand_first(x, group, user, rate, capacity, demand)
        trial = repair(first, group, cell, user, rate, capacity, backhaul, demand,
                       with_backhaul, with_demand)
        u2, c2 = objective_terms(trial, cell, user, rate, weight, alpha, price, with_price)
        if u2 - c2 > util - cost:
            best, util, cost = trial, u2, c2
    return best, util, cost


def recover_feasible(problem: Problem, x: np.ndarray, priced: np.ndarray,
                     shares: list[np.ndarray | None]
                     ) -> tuple[np.ndarray, float, np.ndarray | None, float]:
    """:func:`cellopt.solvers.common.recover_feasible` on the kernels: (x, objective, θ,
    utility), the best of repair(x), repair(fill(x)) and, with finite demands,
    repair(demand_first(x)) for each θ of `shares` (:func:`recover_candidates`).

    Parameters
    ----------
    problem : Problem
    x : ndarray, shape (L,)
        Implied shares.
    priced : ndarray of bool, shape (n_groups,)
        Groups filled to their capacity before repair.
    shares : list of (ndarray or None)
        Candidate pattern shares (None for fixed resources).
    """
    p = problem
    best: tuple = (None, -np.inf, None, -np.inf)
    flags = (bool(np.isfinite(p.backhaul_mbps).any()), bool(np.isfinite(p.demand_mbps).any()),
             bool(np.any(p.price_per_mbps)))
    x = np.asarray(x, float)
    priced = np.asarray(priced, bool)
    for theta in shares:
        theta = feasible_shares(p, theta)
        energy = energy_cost(p, theta)
        capacity = np.ascontiguousarray(
            np.broadcast_to(group_capacity(p, theta), (p.n_groups,)), dtype=float)
        xt, util, cost = recover_candidates(x, priced, capacity, p.group, p.cell, p.user,
                                            p.rate_mbps, p.backhaul_mbps, p.demand_mbps,
                                            p.weight, p.alpha, p.price_per_mbps, *flags)
        if util - cost - energy > best[1]:
            best = (xt, util - cost - energy, theta, util)
    return best
