"""Upper bounds on the joint power and association problem.

The Lagrangian bound at user rate prices λ ≥ 0 and backhaul prices ν ≥ 0 is

    UB(λ, ν) = Σ_i max_{0≤r≤r̂_i} [w_i U(r) − λ_i r] + Σ_j ν_j C_j + max_s V(s),

valid for *any* λ, ν (:func:`joint_bound`). Column generation evaluates it at the
master's prices; ``max_s V(s)`` is exact by enumeration on small networks. At scale,
``max_s V(s)`` is replaced by the value of a relaxation, and — the point of this module —
the prices are optimized *for that relaxation*: :func:`relaxed_bound` solves the convex
relaxed problem in which every cluster of cells chooses its own power patterns (all
combinations of its cells' levels), each link keeps the interference from its own
cluster at the cluster's levels and counts every other cell of its table at that cell's
lowest level (0 when it may be off). Any joint solution maps to a feasible solution of
the relaxation with the same utility and energy (a cluster's pattern share is the total
share of the global patterns that restrict to it; rates only rise when interference
falls), so its optimum — and the dual bound of any of its solves — bounds the joint
optimum. With one cell per cluster this is the interference-free bound; larger clusters
keep the interference between the cells of a site and the small cells it covers.

:func:`decomposition_bound` keeps the interference between *every* cell and its users'
strongest interferers instead: ``max_s V(s)`` is bounded by dual decomposition — each
cell's term sees every link's strongest cells exactly (the rest at their lowest), and
multipliers δ on the cells' levels couple the terms — and (λ, ν, δ) minimize that bound
together (smoothed, L-BFGS-B, a fixed number of iterations). Valid at any (λ, ν, δ).

All these bounds are bounds on the *physical model*, in which every cell interferes at its
pattern's power — not only on the gain table's model, which lumps the cells beyond each
user's `n_interferers` strongest into a background at full power. They are computed on
:func:`bound_gains`, the table with that background at its lowest (each lumped cell at
its lowest level, 0 when it may be off): its rates are at least the physical ones in
every pattern, while the answers keep the background at full power, so objective ≤
physical optimum ≤ bound. The gap then includes the truncation's looseness.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import minimize

from cellopt.network import Network
from cellopt.power.clusters import ClusterConfigs, cluster_cells_by_coupling
from cellopt.power.gains import GainTable
from cellopt.power.kernels import link_brackets
from cellopt.power.patterns import PatternSpace, link_coefficients
from cellopt.power.problem import PowerProblem
from cellopt.problem import Problem
from cellopt.solvers.api import solve
from cellopt.solvers.certificate import utility_scale
from cellopt.solvers.common import best_rate, link_prices, one_blas_thread, user_min, user_value

__all__ = ["bound_gains", "decomposition_bound", "joint_bound", "relaxed_bound"]

def bound_gains(gains: GainTable, space: PatternSpace) -> GainTable:
    """The gain table for bounds: the lumped background at its lowest in `space`.

    Each cell beyond a user's table counts at its lowest allowed level (0 when it may be
    off; :meth:`GainTable.background_floor_mw`). Every rate of every pattern is then at
    least its rate in the physical model (every cell at its pattern's power), so
    ``max_s V(s)`` on this table, and any relaxation of it, bounds the physical
    problem. `gains` itself when nothing is lumped.
    """
    return gains.optimistic(space.level_dbm.min(axis=1))


def joint_bound(gains: GainTable, space: PatternSpace, problem: Problem, lam: np.ndarray,
                nu: np.ndarray, max_value: float) -> float:
    """The Lagrangian bound UB(λ, ν) with `max_value` for ``max_s V(s)`` (or a bound on it).

    ``r̂_i`` caps the user's rate in any pattern: its demand, or the sum of its
    candidates' interference-free rates at their highest level. A bound on the physical
    model when `max_value` bounds ``max_s V(s)`` there (e.g. computed on
    :func:`bound_gains`).

    Parameters
    ----------
    gains : GainTable
    space : PatternSpace
    problem : Problem
        Any problem of the network (weights, α, demands, backhaul caps are read).
    lam : ndarray, shape (n_users,)
        λ ≥ 0 [utility per Mbit/s].
    nu : ndarray, shape (n_cells,)
        ν ≥ 0 [utility per Mbit/s] (ignored on cells without a cap).
    max_value : float
    """
    top_mw = 10.0 ** (space.level_dbm.max(axis=1) / 10.0)
    cap = np.minimum(problem.demand_mbps, gains.isolated_rates_mbps(top_mw).sum(axis=1))
    users = user_value(lam, problem.weight, problem.alpha, cap)
    capped = np.isfinite(problem.backhaul_mbps)
    return float(users.sum() + (nu[capped] * problem.backhaul_mbps[capped]).sum() + max_value)


class _Relaxation:
    """Rates of every candidate link under every level combination of its cell's cluster."""

    def __init__(self, gains: GainTable, space: PatternSpace, cluster: np.ndarray):
        self.gains, self.space, self.cluster = gains, space, cluster
        cfg = ClusterConfigs(space, cluster)
        self.n_clusters, self.m, self.slot = cfg.n_clusters, cfg.m, cfg.slot
        self.members, self.n_configs, self.k_max = cfg.members, cfg.n_configs, cfg.k_max
        self.power_mw, self.valid, self.energy = cfg.power_mw, cfg.valid, cfg.energy
        slot = self.slot
        # Links: every (user, candidate) with its cluster, own slot, in-cluster gains and
        # the rest of its table at the lowest levels.
        n_c = gains.n_candidates
        cand = gains.cell[:, :n_c]
        self.user = np.repeat(np.arange(gains.n_users), n_c)
        self.cell = cand.ravel()
        self.blk = cluster[self.cell]
        table_cluster = cluster[gains.cell]                                    # (U, n_int)
        same = table_cluster[:, None, :] == cluster[cand][:, :, None]          # (U, n_c, n_int)
        is_self = gains.cell[:, None, :] == cand[:, :, None]
        p_low = 10.0 ** (space.level_dbm.min(axis=1) / 10.0)
        low_rx = gains.gain_mw_per_mw * p_low[gains.cell]                      # (U, n_int)
        outside = np.where(same, 0.0, low_rx[:, None, :]).sum(axis=2)          # (U, n_c)
        # The lumped cells at their lowest: the relaxation bounds the physical model.
        floor_mw = gains.background_floor_mw(space.level_dbm.min(axis=1))
        self.base_mw = (outside + floor_mw[:, None] + gains.noise_mw).ravel()
        G = np.zeros((len(self.user), self.m))
        inside = same & ~is_self
        u_i, c_i, t_i = np.nonzero(inside)
        np.add.at(G, (u_i * n_c + c_i, slot[gains.cell[u_i, t_i]]),
                  gains.gain_mw_per_mw[u_i, t_i])
        self.G = G
        self.own_gain = gains.gain_mw_per_mw[:, :n_c].ravel()
        self.own_slot = slot[self.cell]

    def rates(self, links: np.ndarray, configs: np.ndarray) -> np.ndarray:
        """Rates [Mbit/s] of `links` (indices, shape (n,)) under configs of their cluster,
        shape (n,) or (n, K): every link under K configs."""
        b = self.blk[links]
        if configs.ndim == 1:
            powers = self.power_mw[b, :, configs]                               # (n, m)
            signal = self.own_gain[links] * powers[np.arange(len(links)), self.own_slot[links]]
            interference = self.base_mw[links] + (self.G[links] * powers).sum(axis=1)
        else:
            powers = np.moveaxis(self.power_mw[b[:, None], :, configs], 1, 2)   # (n, m, K)
            own = powers[np.arange(len(links)), self.own_slot[links]]           # (n, K)
            signal = self.own_gain[links][:, None] * own
            interference = self.base_mw[links][:, None] + np.einsum("nm,nmk->nk",
                                                                    self.G[links], powers)
        return self.gains.bandwidth_mhz * self.gains.efficiency(signal / interference)

    def config_values(self, coef: np.ndarray, chunk: int = 1 << 21) -> np.ndarray:
        """V_b(k) = Σ_{j∈b} max_i a_ij R_ij(k) − E_b(k) of every (cluster, config), (B, K)."""
        a = np.ravel(coef)
        best = np.zeros((self.gains.n_cells, self.k_max))
        active = np.flatnonzero(a > 0)
        step = max(1, chunk // self.k_max)
        all_k = np.broadcast_to(np.arange(self.k_max), (step, self.k_max))
        for start in range(0, len(active), step):  # chunks of links bound the memory
            links = active[start:start + step]
            k = np.minimum(all_k[:len(links)], self.n_configs[self.blk[links]][:, None] - 1)
            value = self.rates(links, k) * a[links][:, None]
            np.maximum.at(best, self.cell[links], value)
        per_cluster = np.zeros((self.n_clusters, self.k_max))
        np.add.at(per_cluster, self.cluster, best)
        return per_cluster - self.energy

    def master(self, arrays: PowerProblem, in_set: np.ndarray, alpha: float) -> Problem:
        """The relaxed problem over the configs `in_set` (mask (B, K)) of every cluster;
        the users' and cells' parameters from `arrays`."""
        n_set = in_set.sum(axis=1)
        k_set = int(n_set.max())
        blk, config = np.nonzero(in_set)                   # row-major: each cluster in order
        local = np.arange(len(blk)) - np.r_[0, np.cumsum(n_set)[:-1]][blk]
        chosen = np.zeros((self.n_clusters, k_set), np.int64)
        chosen[blk, local] = config
        cost = np.full((self.n_clusters, k_set), np.inf)
        cost[blk, local] = self.energy[blk, config]
        links = np.repeat(np.arange(len(self.user)), k_set)
        res = np.tile(np.arange(k_set), len(self.user))
        ok = res < n_set[self.blk[links]]
        links, res = links[ok], res[ok]
        rate = self.rates(links, chosen[self.blk[links], res])
        return Problem.from_links(
            self.user[links], self.cell[links], rate, n_users=self.gains.n_users,
            n_cells=self.gains.n_cells, resource=res, n_resources=k_set, weight=arrays.weight,
            alpha=alpha, demand_mbps=arrays.demand_mbps, backhaul_mbps=arrays.backhaul_mbps,
            price_per_mbps=arrays.price_per_mbps, pattern_cost=cost, share_block=self.cluster)


@one_blas_thread()  # L-BFGS-B is ~10x slower on multithreaded BLAS on a busy machine
def relaxed_bound(network: Network | PowerProblem, gains: GainTable, space: PatternSpace,
                  alpha: float = 1.0, *, cluster_cells: int = 5, tol: float = 1e-4,
                  time_limit_s: float | None = None,
                  prices: tuple[np.ndarray, np.ndarray] | None = None, method: str = "ipm",
                  max_rounds: int = 50, progress: Callable[..., Any] | None = None
                  ) -> dict[str, Any]:
    """A valid upper bound on the joint problem: the cluster relaxation, prices optimized.

    Valid for the physical model (every cell at its pattern's power): the cells lumped
    beyond each user's table count at their lowest level (module docstring).

    Column generation on the relaxed problem (see the module docstring): every cluster
    starts with its best configurations at `prices` (e.g. the joint master's) and full
    power; each round solves the relaxed master with `method` and adds, per cluster, the
    configurations that beat its current best at the new prices (found by enumerating all
    of the cluster's configurations: pricing is exact). Every round's Lagrangian bound
    ``Σ_i φ_i(λ_i) + Σ_j ν_j C_j + Σ_b max_k V_b(k)`` is valid; the smallest is returned.
    Clusters with few configurations (one cell: 3 levels) have all of them from the start,
    and the relaxation is then solved in one round.

    Parameters
    ----------
    network : Network or PowerProblem
        Where the users' weights and demands and the cells' backhaul caps and prices come
        from (read once; a PowerProblem's own arrays).
    gains, space : GainTable, PatternSpace
    alpha : float
        α-fair utility.
    cluster_cells : int
        Most cells per cluster (:func:`cluster_cells_by_coupling`); 1 = interference-free.
    tol : float
        Relative tolerance of the relaxed masters and of the relaxation's own gap.
    time_limit_s : float, optional
    prices : (λ, ν), optional
        Starting user and backhaul prices.
    method : str
        Convex method for the relaxed masters (one that handles share blocks).
    max_rounds : int
    progress : callable, optional
        Called after every round as ``progress(rounds_done, relaxation=..., bound=...)``
        (display only).

    Returns
    -------
    dict
        ``upper_bound`` (float) and ``info``: ``kind`` ("relaxed"), ``relaxation``
        ("clusters"), ``cluster_cells`` (most cells per cluster), ``n_clusters``,
        ``rounds``, ``relaxed_objective`` (the relaxation's best feasible value, a lower
        bound on its optimum), ``relaxation_gap``, ``time_s``.
    """
    t0 = time.perf_counter()
    arrays = network if isinstance(network, PowerProblem) else PowerProblem.from_parts(
        network, gains, space, alpha)
    # The interference-free relaxation first (one round, a fraction of a second); then,
    # with the time left, the clusters, started from its prices. The better bound wins.
    done = [0]

    def report(relaxation: str, bound: float) -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], relaxation=relaxation, bound=f"{bound:.6g}")

    out = _solve_relaxation(arrays, gains, space, alpha, 1, tol, None, prices, method,
                            max_rounds, report)
    if cluster_cells > 1:
        left = None if time_limit_s is None else time_limit_s - (time.perf_counter() - t0)
        if left is None or left > 0:
            clustered = _solve_relaxation(arrays, gains, space, alpha, cluster_cells, tol,
                                          left, out.pop("prices"), method, max_rounds, report)
            if clustered["upper_bound"] < out["upper_bound"]:
                out = clustered
    out.pop("prices", None)
    out["info"]["time_s"] = time.perf_counter() - t0
    return out


def _solve_relaxation(arrays: PowerProblem, gains: GainTable, space: PatternSpace, alpha: float,
                      cluster_cells: int, tol: float, time_limit_s: float | None,
                      prices: tuple[np.ndarray, np.ndarray] | None, method: str,
                      max_rounds: int, report: Callable[[str, float], None] | None = None
                      ) -> dict[str, Any]:
    """Column generation on one cluster relaxation: its best bound and last prices."""
    t0 = time.perf_counter()
    cluster = cluster_cells_by_coupling(gains, cluster_cells)
    rel = _Relaxation(gains, space, cluster)
    cell_price = arrays.price_per_mbps
    small = rel.n_configs <= 8
    if prices is None:
        start_values = np.where(rel.valid, -rel.energy, -np.inf)
    else:
        lam, nu = prices
        start_values = rel.config_values(link_coefficients(gains, lam, cell_price + nu))
    full = np.argmax(np.where(rel.valid, rel.power_mw.sum(axis=1), -np.inf), axis=1)
    rows = np.arange(rel.n_clusters)[:, None]
    in_set = np.zeros(rel.valid.shape, bool)
    in_set[np.arange(rel.n_clusters), full] = True
    in_set[rows, np.argsort(-start_values, axis=1, kind="stable")[:, :4]] = True
    in_set |= small[:, None]
    in_set &= rel.valid
    best_bound, best_obj, rounds, best_prices = np.inf, -np.inf, 0, prices
    while rounds < max_rounds:
        rounds += 1
        problem = rel.master(arrays, in_set, alpha)
        left = None if time_limit_s is None else max(time_limit_s - (time.perf_counter() - t0),
                                                     1.0)
        sol = solve(problem, method=method, tol=tol, time_limit_s=left)
        best_obj = max(best_obj, sol.objective)
        nu = np.where(np.isfinite(problem.backhaul_mbps), sol.prices["backhaul"], 0.0)
        lam = user_min(problem, link_prices(problem, sol.prices["airtime"], nu))
        lam = np.where(np.isfinite(lam), lam, 0.0)
        values = rel.config_values(link_coefficients(gains, lam, cell_price + nu))
        bound = joint_bound(gains, space, problem, lam, nu, float(values.max(axis=1).sum()))
        if bound < best_bound:
            best_bound, best_prices = bound, (lam, nu)
        if report is not None:
            report("interference-free" if rel.m == 1 else f"clusters of {rel.m}", best_bound)
        current = np.where(in_set, values, -np.inf).max(axis=1)
        scale = utility_scale(problem, sol.utility)  # objective change per rate factor
        margin = tol * scale / rel.n_clusters
        improve = (values > (current + margin)[:, None]) & rel.valid
        out_of_time = time_limit_s is not None and time.perf_counter() - t0 > time_limit_s
        if not improve.any() or out_of_time or (best_bound - best_obj) <= tol * scale:
            break
        order = np.argsort(-np.where(improve, values, -np.inf), axis=1, kind="stable")[:, :2]
        in_set[rows, order] |= improve[rows, order]
    info = dict(kind="relaxed", relaxation="interference-free" if rel.m == 1 else "clusters",
                cluster_cells=int(rel.m), n_clusters=int(rel.n_clusters), rounds=rounds,
                relaxed_objective=best_obj, relaxation_gap=float(best_bound - best_obj))
    return dict(upper_bound=float(best_bound), info=info, prices=best_prices)


# ---------------------------------------------------------------------- decomposition bound
#: Most (link × scope configuration) rates :func:`decomposition_bound` keeps in memory
#: (8 bytes each, a few arrays of the size during an evaluation); the scope shrinks to fit.
DECOMPOSITION_MAX_ENTRIES = 8_000_000


class _ScopedFactors:
    """``max_s V(s)`` split by serving cell, every link seeing its strongest interferers exactly.

    On the bound table (lumped background at its lowest), cell j's term of V is
    ``F_j(s) = max_{e ∈ links(j)} a_e R_e(s)``. Each link e = (i, j) keeps the levels of its
    *scope* exactly — its own cell and the `n_scope` − 1 strongest other cells of user i's
    table — and counts the rest of the table at its lowest level, so its rate only rises:
    ``R_e(s) ≤ R_e(x)``, x the scope's levels in s. With multipliers δ_j(l, k) for every
    factor j, every cell l in the scope of one of j's links and every level k, for any s

        V(s) ≤ Σ_j [F_j(x) + Σ_{l ∈ S_j} δ_j(l, s_l)] + Σ_l [−e_l p_l(s_l) − Σ_{j ∋ l} δ_j(l, s_l)],

    (the δ cancel), and maximizing every bracket on its own gives the dual-decomposition
    bound ``B(a, δ) ≥ max_s V(s)`` of :meth:`evaluate` — valid for *any* δ, and by
    :func:`joint_bound` a joint bound for any prices. In factor j, a link's bracket is
    maximized over its scope's ``L^n_scope`` configurations and each other cell of S_j
    separately. With a temperature T > 0 every max is replaced by the larger
    ``T log Σ exp(·/T)`` (smooth, still a bound) for the optimizer.

    Parameters
    ----------
    gains : GainTable
        The bound table (:func:`bound_gains`).
    space : PatternSpace
    n_scope : int
        Cells per link scope (its own and n_scope − 1 interferers), ≥ 1.
    """

    def __init__(self, gains: GainTable, space: PatternSpace, n_scope: int):
        L = space.n_levels
        n_users, n_int = gains.cell.shape
        n_c = gains.n_candidates
        k = max(0, min(int(n_scope) - 1, n_int - 1))  # interferers in a scope
        self.L, self.K = L, k
        p = 10.0 ** (space.level_dbm / 10.0)                                   # (C, L)
        p_low = p.min(axis=1)
        u = np.repeat(np.arange(n_users), n_c)
        c = np.tile(np.arange(n_c), n_users)
        j = gains.cell[u, c]
        order = np.argsort(j, kind="stable")                                   # by factor
        u, c, j = u[order], c[order], j[order]
        n_links = len(u)
        cols = np.broadcast_to(np.arange(n_int), (n_links, n_int))
        others = cols[cols != c[:, None]].reshape(n_links, n_int - 1)          # strongest first
        rows = u[:, None]
        inter = others[:, :k]
        rest = others[:, k:]
        cell = np.column_stack([j, gains.cell[rows, inter]])                   # (E, K+1)
        gain = np.column_stack([gains.gain_mw_per_mw[u, c], gains.gain_mw_per_mw[rows, inter]])
        base = gains.noise_mw + gains.background_mw[u] + (
            gains.gain_mw_per_mw[rows, rest] * p_low[gains.cell[rows, rest]]).sum(axis=1)
        n_cfg = L ** (k + 1)
        digit = (np.arange(n_cfg)[:, None] // (L ** np.arange(k, -1, -1))[None]) % L  # x_0 first
        self.rate = np.empty((n_links, n_cfg))
        step = max(1, (1 << 22) // (n_cfg * (k + 1)))
        for start in range(0, n_links, step):  # chunks bound the memory
            part = slice(start, start + step)
            rx = gain[part][:, :, None] * p[cell[part][:, :, None], digit.T[None]]  # (e, K+1, cfg)
            interference = base[part][:, None] + rx[:, 1:].sum(axis=1)
            self.rate[part] = gains.bandwidth_mhz * gains.efficiency(
                rx[:, 0] / np.maximum(interference, gains.noise_mw))
        self.user, self.column, self.cell, self.n_links = u, c, j, n_links
        self.starts = np.flatnonzero(np.r_[True, j[1:] != j[:-1]]) if n_links else np.zeros(0, int)
        self.factor = np.repeat(np.arange(len(self.starts)), np.diff(np.r_[self.starts, n_links]))
        key = j[:, None] * gains.n_cells + cell
        pairs, inverse = np.unique(key, return_inverse=True)
        self.slot = inverse.reshape(n_links, k + 1)                             # pair of each scope cell
        self.pair_cell = pairs % gains.n_cells
        self.pair_factor = np.searchsorted(j[self.starts], pairs // gains.n_cells)
        self.n_pairs = len(pairs)
        self.n_cells = gains.n_cells
        self.energy = p * 1e-3 * space.energy_price_per_w[:, None]             # (C, L)

    def evaluate(self, a: np.ndarray, delta: np.ndarray, temperature: float = 0.0,
                 grad: bool = False) -> float | tuple[float, np.ndarray, np.ndarray]:
        """The bound B(a, δ) on ``max_s V(s)``; with `grad`, its gradient in a and δ.

        Parameters
        ----------
        a : ndarray, shape (n_links,)
            a_e ≥ 0 of every link, in the factors' link order (``self.user``,
            ``self.column``: its candidate column, ``self.cell``).
        delta : ndarray, shape (n_pairs, L)
            δ of every (factor, scope cell) pair and level.
        temperature : float
            0: the max; T > 0: the smooth bound (gradient only then).
        """
        k, L, T = self.K, self.L, temperature
        link_max, expected, marginal = link_brackets(self.rate, a, delta, self.slot, L, T, grad)
        d_max, d_prob = _soft_max(delta, T)
        per_factor = np.bincount(self.pair_factor, d_max, minlength=len(self.starts))
        link = link_max - d_max[self.slot].sum(axis=1) + per_factor[self.factor]
        unary = -self.energy - np.stack(
            [np.bincount(self.pair_cell, delta[:, q], minlength=self.n_cells) for q in range(L)],
            axis=1)
        u_max, u_prob = _soft_max(unary, T)
        if not len(self.starts):
            return float(u_max.sum()) if not grad else (float(u_max.sum()), np.zeros(0),
                                                         -u_prob[self.pair_cell])
        f_max = np.maximum.reduceat(link, self.starts)
        if T > 0:
            e = np.exp((link - f_max[self.factor]) / T)
            total = np.add.reduceat(e, self.starts)
            f_max = f_max + T * np.log(total)
            weight = e / total[self.factor]
        value = float(f_max.sum() + u_max.sum())
        if not grad:
            return value
        g_a = weight * expected
        g_d = np.zeros(self.n_pairs * L)
        for p in range(k + 1):  # the marginal of each scope position
            contrib = weight[:, None] * (marginal[:, p] - d_prob[self.slot[:, p]])
            g_d += np.bincount((self.slot[:, p][:, None] * L + np.arange(L)).ravel(),
                               contrib.ravel(), minlength=self.n_pairs * L)
        g_d = g_d.reshape(self.n_pairs, L) + d_prob - u_prob[self.pair_cell]
        return value, g_a, g_d


def _soft_max(x: np.ndarray, temperature: float) -> tuple[np.ndarray, np.ndarray | None]:
    """Row-wise max (T = 0) or ``T log Σ exp(x/T)`` and its softmax weights (T > 0)."""
    top = x.max(axis=1)
    if temperature <= 0:
        return top, None
    e = np.exp((x - top[:, None]) / temperature)
    total = e.sum(axis=1)
    return top + temperature * np.log(total), e / total[:, None]


def _iteration_callback(progress: Callable[..., Any], offset: int, stage: str,
                        bound: float) -> Callable[[Any], None]:
    """scipy's per-iteration callback, reporting to `progress` (display only)."""
    count = [offset]

    def each(intermediate_result: Any) -> None:  # scipy passes the state by this name
        count[0] += 1
        progress(count[0], stage=stage, smooth=f"{intermediate_result.fun:.6g}",
                 bound=f"{bound:.6g}")
    return each


@one_blas_thread()  # L-BFGS-B is ~10x slower on multithreaded BLAS on a busy machine
def decomposition_bound(network: Network | PowerProblem, gains: GainTable, space: PatternSpace,
                        alpha: float = 1.0, *, scope_cells: int = 4,
                        prices: tuple[np.ndarray, np.ndarray] | None = None,
                        max_iter: int = 300,
                        temperatures: tuple[float, ...] = (0.015, 0.005, 0.0017),
                        baseline: dict[str, Any] | None = None,
                        progress: Callable[..., Any] | None = None) -> dict[str, Any]:
    """A valid upper bound on the joint problem by dual decomposition of ``max_s V(s)``.

    Valid for the physical model (every cell at its pattern's power): the bound is
    :func:`joint_bound` at prices (λ, ν) with ``max_s V(s)`` replaced by the
    dual-decomposition bound of :class:`_ScopedFactors` on :func:`bound_gains` (each
    cell's term keeps every link's `scope_cells` strongest cells exactly, the rest of
    its table and the lumped background at their lowest; multipliers δ make the cells'
    levels agree between terms). Valid at *any* (λ, ν ≥ 0, δ); unlike the cluster
    relaxation (:func:`relaxed_bound`), every cell's strongest interferers count, not
    only those of its own cluster.

    (λ, ν, δ) minimize the bound: L-BFGS-B (scipy) on its smooth version at each of
    `temperatures` in turn (relative to the mean per-cell value ``Σ_i λ_i r_i / n_cells``
    at the starting prices), `max_iter` iterations each, started from `prices` and δ = 0
    (log λ, ν ≥ 0 and δ are the variables). The bound (the max, not the smooth value)
    is evaluated at the end of every stage; the smallest is returned. Only iteration
    counts stop it: the same input gives the same bound.

    Parameters
    ----------
    network : Network or PowerProblem
        Where the users' weights and demands and the cells' backhaul caps and prices come
        from (a PowerProblem's own arrays).
    gains, space : GainTable, PatternSpace
    alpha : float
        α-fair utility.
    scope_cells : int
        Cells each link sees exactly (its own and the strongest others of its user's
        table); lowered until (links × levels^scope) ≤ :data:`DECOMPOSITION_MAX_ENTRIES`.
    prices : (λ, ν), optional
        Starting user prices, shape (n_users,), and backhaul prices, shape (n_cells,)
        [utility per Mbit/s], e.g. the joint master's; default: the interference-free
        relaxation's optimal prices.
    max_iter : int
        L-BFGS-B iterations per temperature.
    temperatures : tuple of float
        Smoothing temperatures, relative (see above), decreasing.
    baseline : dict, optional
        Another bound's result (e.g. :func:`relaxed_bound`'s): returned instead if smaller.
    progress : callable, optional
        Called after every optimizer iteration as ``progress(iterations_done,
        temperature=..., bound=...)`` (display only).

    Returns
    -------
    dict
        ``upper_bound`` (float) and ``info``: ``kind`` ("relaxed"), ``relaxation``
        ("decomposition"), ``scope_cells``, ``n_factors``, ``iterations``,
        ``evaluations``, ``time_s`` (and ``baseline_bound`` with a baseline); a smaller
        baseline comes back as it is, with ``decomposition_bound`` added to its info.
    """
    t0 = time.perf_counter()
    arrays = network if isinstance(network, PowerProblem) else PowerProblem.from_parts(
        network, gains, space, alpha)
    if prices is None:
        prices = _solve_relaxation(arrays, gains, space, alpha, 1, 1e-4, None, None, "ipm",
                                   1)["prices"]
    n_scope = max(1, int(scope_cells))
    n_links = gains.n_users * gains.n_candidates
    while n_scope > 1 and n_links * space.n_levels ** n_scope > DECOMPOSITION_MAX_ENTRIES:
        n_scope -= 1
    factors = _ScopedFactors(bound_gains(gains, space), space, n_scope)
    n_users = gains.n_users
    lam, nu = (np.asarray(v, float) for v in prices)
    positive = lam[lam > 0]
    floor = 1e-6 * positive.max() if len(positive) else 1.0
    lam0 = np.where(np.isfinite(lam) & (lam > floor), lam, floor)
    capped = np.flatnonzero(np.isfinite(arrays.backhaul_mbps))
    cap_mbps = arrays.backhaul_mbps[capped]
    top_mw = 10.0 ** (space.level_dbm.max(axis=1) / 10.0)
    rate_cap = np.minimum(arrays.demand_mbps, gains.isolated_rates_mbps(top_mw).sum(axis=1))
    weight, cell_price = arrays.weight, arrays.price_per_mbps
    n_cap, n_delta = len(capped), factors.n_pairs * factors.L
    scale = float((lam0 * best_rate(lam0, weight, alpha, rate_cap)).sum()) / max(
        len(factors.starts), 1)

    def prices_of(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lam_z = lam0 * np.exp(z[:n_users])
        nu_z = np.zeros(gains.n_cells)
        nu_z[capped] = z[n_users:n_users + n_cap]
        return lam_z, nu_z, z[n_users + n_cap:].reshape(factors.n_pairs, factors.L)

    def smooth(z: np.ndarray, temperature: float) -> tuple[float, np.ndarray]:
        lam_z, nu_z, delta = prices_of(z)
        raw = lam_z[factors.user] - (cell_price + nu_z)[factors.cell]
        value, g_a, g_d = factors.evaluate(np.maximum(raw, 0.0), delta, temperature, grad=True)
        g_a = np.where(raw > 0, g_a, 0.0)
        users = user_value(lam_z, weight, alpha, rate_cap).sum()
        g_lam = np.bincount(factors.user, g_a, minlength=n_users) \
            - best_rate(lam_z, weight, alpha, rate_cap)
        g_nu = cap_mbps - np.bincount(factors.cell, g_a, minlength=gains.n_cells)[capped]
        total = float(value + users + (nu_z[capped] * cap_mbps).sum())
        return total, np.concatenate([g_lam * lam_z, g_nu, g_d.ravel()])

    def exact(z: np.ndarray) -> float:
        lam_z, nu_z, delta = prices_of(z)
        a = np.maximum(lam_z[factors.user] - (cell_price + nu_z)[factors.cell], 0.0)
        return joint_bound(gains, space, arrays, lam_z, nu_z, factors.evaluate(a, delta))

    z = np.concatenate([np.zeros(n_users), np.maximum(np.nan_to_num(nu[capped]), 0.0),
                        np.zeros(n_delta)])
    limits = [(-30.0, 30.0)] * n_users + [(0.0, None)] * n_cap + [(None, None)] * n_delta
    best, iterations, evaluations = exact(z), 0, 0
    for stage, t in enumerate(temperatures):  # a few stages, each a fixed number of iterations
        each = None if progress is None else _iteration_callback(
            progress, stage * int(max_iter), f"{stage + 1}/{len(temperatures)}", best)
        res = minimize(smooth, z, args=(t * scale,), jac=True, method="L-BFGS-B", bounds=limits,
                       options=dict(maxiter=int(max_iter), maxcor=20), callback=each)
        z, nit, nfev = res.x, res.nit, res.nfev
        iterations, evaluations = iterations + nit, evaluations + nfev
        best = min(best, exact(z))
        if progress is not None:  # the stage's end, with its exact bound
            progress((stage + 1) * int(max_iter), stage=f"{stage + 1}/{len(temperatures)}",
                     bound=f"{best:.6g}")
    info = dict(kind="relaxed", relaxation="decomposition", scope_cells=factors.K + 1,
                n_factors=len(factors.starts), iterations=iterations, evaluations=evaluations,
                time_s=time.perf_counter() - t0)
    if baseline is not None:
        if baseline["upper_bound"] <= best:
            return dict(upper_bound=baseline["upper_bound"],
                        info={**baseline["info"], "decomposition_bound": best})
        info["baseline_bound"] = baseline["upper_bound"]
    return dict(upper_bound=float(best), info=info)

