"""The smoothed dual of the association problem, every user in this process.

:class:`SmoothedDual` evaluates g_τ (the dual function with each user's minimum price
replaced by the power-mean soft-min at relative temperature τ), its gradient (the airtime
and backhaul residuals of the implied shares), its Hessian (per user a diagonal plus a
rank-one matrix in link space, assembled as a sparse matrix over the prices) and the
exact bound g at the same prices, and recovers feasible shares from the implied ones.
:class:`DualModel` is what the Newton loop
(:func:`~cellopt.solvers.dual_newton.newton_prices`) needs of any such model;
``dual_dask`` (:mod:`cellopt.solvers.dask_dual`) implements it with the users on Dask
workers. The method, and why it is built this way: the module docstring of
:mod:`cellopt.solvers.dual`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from cellopt import jit
from cellopt.problem import Problem, utility, utility_derivative
from cellopt.solvers import kernels
from cellopt.solvers.common import recover_feasible, refuse_users_behind_closed_backhaul, user_value
from cellopt.solvers.ipm import solve_ipm
from cellopt.solvers.linalg import SymmetricSystem, share_curvature

__all__ = ["LINEAR_ALPHA", "DualModel", "DualPoint", "Recovered", "SmoothedDual"]

#: Below this α, ``dual``'s smoothed model uses the linear utility (α = 0): an α of 1e-12
#: took 126 Newton steps against 16 at α = 0, with the same answer to 1e-9.
LINEAR_ALPHA = 1e-8
#: A backhaul cap whose equal-share price exceeds the airtime share's link price by this
#: factor is priced in its own units (far below what the airtime could carry).
_CAP_BINDS = 100.0
_ACTIVE_WEIGHT = 1e-14   # links with soft-min weight p_e below this are left out of the Hessian


class DualPoint:
    """One evaluation of the smoothed dual at scaled prices y.

    What :func:`~cellopt.solvers.dual_newton.newton_prices` reads: ``y``, ``mu``, ``nu``
    (prices), ``g_tau``, ``bound`` (exact g), ``grad`` (of g_τ in y). The rest is per-link
    / per-user state a model keeps for its Hessian and its recovery (``air``: airtime per
    group, ``traffic``: per capped cell, ``smooth`` / ``exact``: Σ_users φ at m_τ / at π*,
    of the implied shares).
    """

    __slots__ = ("_air", "_grad", "_share", "_traffic", "_x", "a", "bound", "exact", "g_tau",
                 "h", "key", "m", "mu", "nu", "pending", "pi", "q", "r", "smooth", "y")

    def __init__(self) -> None:
        # A model may leave the implied flows (share, x, air, traffic, grad) to a function
        # of the point, run when one of them is first read: a line-search trial that is
        # rejected needs only g_τ and the bound.
        self.pending: Callable[[DualPoint], None] | None = None

    def _complete(self) -> None:
        finish, self.pending = self.pending, None
        if finish is not None:
            finish(self)


def _lazy(name: str) -> property:
    slot = "_" + name

    def get(pt: DualPoint) -> Any:
        if pt.pending is not None:
            pt._complete()
        return getattr(pt, slot)

    def put(pt: DualPoint, value: Any) -> None:
        setattr(pt, slot, value)

    return property(get, put)


for _name in ("air", "grad", "share", "traffic", "x"):
    setattr(DualPoint, _name, _lazy(_name))
del _name


@dataclasses.dataclass
class Recovered:
    """A feasible point recovered from the implied shares at one point.

    Attributes
    ----------
    x : any
        The shares (ndarray, shape (L,)) or a model's handle to them.
    objective : float
        Σ w U(r) − cost − energy cost.
    theta : ndarray or None
        Pattern shares (free shares only).
    utility : float
        Σ w U(r).
    """

    x: Any
    objective: float
    theta: np.ndarray | None
    utility: float


class DualModel(Protocol):
    """What :func:`~cellopt.solvers.dual_newton.newton_prices` needs of the smoothed dual:
    the single-process :class:`SmoothedDual`, or a model whose users live elsewhere
    (``dual_dask``).

    Attributes: ``G`` (groups), ``n`` (prices: groups + capped cells), ``s`` (price units,
    shape (n,)), ``lb`` (lower bounds in those units, shape (n,)), ``fixed`` (prices that
    never move, bool, shape (n,)), ``capped`` (cells with a price ν, shape (n_caps,)),
    ``n_links`` (links that can carry traffic). Optional: ``polish(pt, tau, tol,
    time_limit_s)``, a feasible point from a restricted solve
    (:meth:`SmoothedDual.polish`), or None.
    """

    G: int
    n: int
    s: np.ndarray
    lb: np.ndarray
    fixed: np.ndarray
    capped: np.ndarray
    n_links: int

    def evaluate(self, y: np.ndarray, tau: float) -> DualPoint:
        """g_τ, its gradient and the exact bound at scaled prices y."""

    def hessian(self, pt: DualPoint, tau: float) -> SymmetricSystem:
        """∇²_y g_τ at an evaluated point."""

    def recover(self, pt: DualPoint) -> Recovered:
        """A feasible point from the implied shares at pt (the better of repair and fill)."""

    def retain(self, pt: DualPoint) -> None:
        """pt's Hessian or recovery may be asked for after later evaluations (a model that
        holds the per-link state elsewhere keeps pt's)."""

    def commit(self, rec: Recovered) -> None:
        """`rec` is the best feasible point so far (a model that holds x elsewhere keeps it)."""

    def row_extra(self) -> dict[str, Any]:
        """Extra history columns of the current iteration (e.g. bytes moved), {} if none."""


class SmoothedDual:
    """g_τ, its gradient and Hessian in scaled prices y, vectorized over user-sorted links.

    Variables: y = (μ_g / s_g for every group, ν_j / s_j for every cell with a finite
    positive cap). Links of zero-capacity cells are left out.

    Parameters
    ----------
    problem : Problem
    tol : float
        Target gap (sets the floors δ_g of the prices of unpriced cells).
    units : (ndarray, ndarray), optional
        Price units s and lower bounds lb, both shape (n,), instead of computing them from
        `problem` (a part of a larger problem uses the whole problem's).
    """

    def __init__(self, problem: Problem, tol: float,
                 units: tuple[np.ndarray, np.ndarray] | None = None):
        p = problem
        self.p = p
        self.G = p.n_groups
        blocked = p.backhaul_mbps <= 0
        keep = ~blocked[p.cell]
        self.keep = np.flatnonzero(keep)
        self.R = p.rate_mbps[keep]
        self.g = p.group[keep]
        self.cell = p.cell[keep]
        user = p.user[keep]
        self.c = p.price_per_mbps[self.cell]
        # Below LINEAR_ALPHA the conjugate's curvature (1/α) stalls Newton; the smoothed
        # model takes α = 0 there (its utility within α·|log r| of the problem's); the
        # certificate (dual_bound) and the objectives stay at the problem's own α.
        self.alpha = 0.0 if p.alpha < LINEAR_ALPHA else p.alpha
        self.capped = np.flatnonzero(np.isfinite(p.backhaul_mbps) & ~blocked)
        self.C = p.backhaul_mbps[self.capped]
        cap_index = np.full(p.n_cells, -1, np.int64)
        cap_index[self.capped] = np.arange(len(self.capped))
        self.link_cap = cap_index[self.cell]
        self.capped_links = np.flatnonzero(self.link_cap >= 0)
        self.n_links = len(self.R)
        self.n = self.G + len(self.capped)
        if self.n_links:
            new = np.r_[True, user[1:] != user[:-1]]
            self.starts = np.flatnonzero(new)
            self.seg = np.cumsum(new) - 1
        else:
            self.starts = np.zeros(0, np.int64)
            self.seg = np.zeros(0, np.int64)
        self.users = user[self.starts]
        self.wu = p.weight[self.users]
        self.capu = p.rate_cap_mbps[self.users]  # r̄ of the whole problem (dual_bound's)
        # Users without links keep w U(0) (finite for α < 1) in the objective and the bound.
        linkless = np.ones(p.n_users, bool)
        linkless[self.users] = False
        self.linkless_value = float(np.sum(p.weight[linkless] * utility(0.0, p.alpha)))
        refuse_users_behind_closed_backhaul(p)
        self.s, self.lb = self._scales(tol) if units is None else units
        # Groups without links have μ = 0 for good: nobody buys there.
        self.fixed = np.r_[np.bincount(self.g, minlength=self.G) == 0,
                           np.zeros(len(self.capped), bool)]
        self.free = p.free_shares
        if self.free:
            self._init_shares()

    def _init_shares(self) -> None:
        """Share columns (available (block, pattern) pairs) and the soft-max scale per block.

        The airtime term ``Σ_b max_k (Σ_{j∈b} μ_jk − E_bk)`` is smoothed by a log-sum-exp
        at temperature τ·T_b, T_b the largest equal-share value of a pattern of block b:
        the same relative temperature as the users' soft-min.
        """
        p = self.p
        n_k = p.n_resources
        cost = p.block_cost
        avail = np.flatnonzero(np.isfinite(cost).ravel())
        column = np.full(cost.size, -1)
        column[avail] = np.arange(len(avail))
        groups = np.arange(self.G)
        self.group_share = column[p.cell_block[groups // n_k] * n_k + groups % n_k]
        self.share_cost = cost.ravel()[avail]
        self.share_block = avail // n_k
        self.n_blocks = cost.shape[0]
        mu_unit = np.where(self.fixed[:self.G], 0.0, self.s[:self.G])
        ok = self.group_share >= 0
        value = np.bincount(self.group_share[ok], mu_unit[ok], minlength=len(avail))
        top = np.zeros(self.n_blocks)
        np.maximum.at(top, self.share_block, value)
        self.T = np.maximum(top, 1e-12 * max(float(top.max(initial=0.0)), 1e-300))

    def _scales(self, tol: float) -> tuple[np.ndarray, np.ndarray]:
        """Equal-share price units s and lower bounds lb (in units of s)."""
        G = self.G
        mu_scale = np.zeros(G)
        if self.n_links:
            # Each user on its best link (per pattern of every block, with free shares:
            # each pattern priced as if it had the whole band, so that their values match).
            if self.p.free_shares:
                n_k = self.p.n_resources
                key = (self.seg * self.p.n_blocks + self.p.cell_block[self.cell]) * n_k \
                    + self.g % n_k
                order = np.lexsort((-self.R, key))
                best = order[np.r_[True, key[order][1:] != key[order][:-1]]]
            else:  # the first of each user's fastest links (links are sorted by user)
                top = np.maximum.reduceat(self.R, self.starts)
                best = np.flatnonzero(self.R == top[self.seg])
                best = best[np.r_[True, self.seg[best][1:] != self.seg[best][:-1]]]
            gb = self.g[best]
            count = np.bincount(gb, minlength=G)
            r = np.maximum(np.minimum(self.capu[self.seg[best]], self.R[best] / count[gb]),
                           1e-300)
            marg = self.wu[self.seg[best]] * utility_derivative(r, self.alpha)
            mu_scale = np.bincount(gb, np.maximum(marg - self.c[best], 0.0) * r, minlength=G)
        pos = mu_scale[mu_scale > 0]
        typical = float(np.median(pos)) if len(pos) else 1.0
        mu_scale = np.maximum(mu_scale, 0.01 * typical)
        nu_scale = np.ones(len(self.capped))
        if len(self.capped):
            link_price = mu_scale[self.g] / self.R + self.c
            tot = np.bincount(self.cell, link_price, minlength=self.p.n_cells)
            cnt = np.bincount(self.cell, minlength=self.p.n_cells)
            fallback = float(np.median(link_price))
            per_cell = np.where(cnt > 0, tot / np.maximum(cnt, 1), fallback)
            nu_scale = np.maximum(per_cell[self.capped], 1e-6 * fallback)
            if len(best):
                # A cap far below what the airtime carries prices the cell's traffic at its
                # users' marginal utility at an equal share of the cap, not at the link
                # price of an airtime share: in those units ν starts within reach.
                pair = np.unique(self.seg[best] * self.p.n_cells + self.cell[best])
                pair_user, pair_cell = pair // self.p.n_cells, pair % self.p.n_cells
                n_at = np.bincount(pair_cell, minlength=self.p.n_cells)
                cap = np.full(self.p.n_cells, np.inf)
                cap[self.capped] = self.C
                r_cap = np.maximum(np.minimum(self.capu[pair_user],
                                              cap[pair_cell] / n_at[pair_cell]), 1e-300)
                marg_cap = np.maximum(self.wu[pair_user] * utility_derivative(r_cap, self.alpha)
                                      - self.p.price_per_mbps[pair_cell], 0.0)
                at_cap = np.bincount(pair_cell, marg_cap, minlength=self.p.n_cells) \
                    / np.maximum(n_at, 1)
                at_cap = at_cap[self.capped]
                nu_scale = np.where(at_cap > _CAP_BINDS * nu_scale, at_cap, nu_scale)
        # Groups whose links could be free (c_j = 0): μ_g ≥ δ_g keeps every π_e > 0.
        free = np.zeros(G, bool)
        if self.n_links:
            free[self.g[self.c <= 0]] = True
        lb = np.r_[np.where(free, 1e-4 * min(tol, 1e-2), 0.0), np.zeros(len(self.capped))]
        return np.r_[mu_scale, nu_scale], lb

    # ----------------------------------------------------------------- evaluation
    def prices(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v = y * self.s
        return v[:self.G], v[self.G:]

    def _phi(self, m: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """φ_i(m_i), r_i = −φ_i'(m_i) and h_i = φ_i''(m_i) for the users with links."""
        w, cap, alpha = self.wu, self.capu, self.alpha
        if alpha == 0:
            # φ(π) = r̄ (w − π)⁺ − w (U(r) = r − 1), the max smoothed by a softplus at
            # relative temperature τ (≥ φ).
            t = (1.0 - m / w) / tau
            sig = expit(t)
            return (cap * w * tau * np.logaddexp(0.0, t) - w, cap * sig,
                    cap * sig * (1 - sig) / (w * tau))
        with np.errstate(over="ignore", divide="ignore"):
            free_rate = (w / m) ** (1.0 / alpha)
        r = np.minimum(cap, free_rate)
        value = user_value(m, w, alpha, cap)
        h = np.where(free_rate < cap, r / (alpha * m), 0.0)
        return value, r, h

    def evaluate(self, y: np.ndarray, tau: float) -> DualPoint:
        """g_τ, the exact bound g and ∇_y g_τ at scaled prices y, shape (n,).

        On the kernels the implied flows (and so the gradient) are computed when first
        read (``DualPoint.pending``): not at all at a rejected line-search trial.
        """
        pt = DualPoint()
        pt.y = y
        mu, nu = self.prices(y)
        pt.mu, pt.nu = mu, nu
        nu_term = float(nu @ self.C)
        air_smooth, air_exact, capacity = self._airtime_term(pt, mu, tau)
        if jit.compiled():
            pi, weight, total, pt.m, pt.r, pt.h, smooth, exact = self._soft_min(mu, nu, tau)
            pt.pi, pt.a = pi, None

            def flows(point: DualPoint) -> None:
                share, x, air, traffic = self._flows(weight, total, point.m, point.r, pi)
                point.share, point.x = share, x
                self._finish(point, capacity, air, traffic)

            pt.pending = flows
        else:
            (pt.pi, pt.share, pt.a, pt.x, pt.m, pt.r, pt.h, smooth, exact, air,
             traffic) = self._users_numpy(mu, nu, tau)
            self._finish(pt, capacity, air, traffic)
        pt.smooth, pt.exact = smooth, exact
        pt.g_tau = air_smooth + nu_term + smooth + self.linkless_value
        pt.bound = air_exact + nu_term + exact + self.linkless_value
        return pt

    def _finish(self, pt: DualPoint, capacity: np.ndarray | float, air: np.ndarray,
                traffic: np.ndarray) -> None:
        """The gradient from the airtime per group and the traffic per capped cell."""
        pt.air, pt.traffic = air, traffic
        pt.grad = np.r_[capacity - air, self.C - traffic] * self.s

    def _users_compiled(self, mu: np.ndarray, nu: np.ndarray, tau: float) -> tuple:
        """:meth:`_users_numpy` on the kernels: the per-link passes compiled
        (:func:`~cellopt.solvers.kernels.soft_min_weights`,
        :func:`~cellopt.solvers.kernels.implied_flows`), φ per user in numpy; ``a`` is
        None (:meth:`hessian` derives it from the shares). :meth:`evaluate` runs the two
        halves separately, the second only when the flows are read."""
        pi, weight, total, m, r, h, smooth, exact = self._soft_min(mu, nu, tau)
        share, x, air, traffic = self._flows(weight, total, m, r, pi)
        # a = ∂m/∂π is left to the Hessian kernel (share · m / π): one array less
        return pi, share, None, x, m, r, h, smooth, exact, air, traffic

    def _soft_min(self, mu: np.ndarray, nu: np.ndarray, tau: float) -> tuple:
        """Link prices, soft-min weights and sums, (m, r, h) per user, Σ φ smoothed and
        exact: what g_τ and the bound need (compiled)."""
        pi, weight, pmin, zmax, total = kernels.soft_min_weights(
            mu, nu, self.g, self.R, self.c, self.link_cap, self.starts, float(tau))
        if self.n_links:
            m = np.exp(-tau * (zmax + np.log(total)))
            value, r, h = self._phi(m, tau)
            exact = float(user_value(pmin, self.wu, self.alpha, self.capu).sum())
            smooth = float(value.sum())
        else:
            m = r = h = np.zeros(0)
            exact = smooth = 0.0
        return pi, weight, total, m, r, h, smooth, exact

    def _flows(self, weight: np.ndarray, total: np.ndarray, m: np.ndarray, r: np.ndarray,
               pi: np.ndarray) -> tuple:
        """(share, x, air, traffic): the implied flows (compiled), the gradient's part."""
        return kernels.implied_flows(weight, total, m, r, pi, self.R, self.g, self.link_cap,
                                     self.starts, self.G, len(self.capped))

    def _users_numpy(self, mu: np.ndarray, nu: np.ndarray, tau: float) -> tuple:
        """The users' part of :meth:`evaluate` in numpy (the reference, and the fallback of
        :meth:`_users_compiled`, which returns the same tuple).

        Parameters
        ----------
        mu : ndarray, shape (G,)
        nu : ndarray, shape (K,)
        tau : float

        Returns
        -------
        (pi, share, a, x) : ndarray, shape (L,) each
        (m, r, h) : ndarray, shape (U,) each (users with links)
        smooth, exact : float
            Σ φ at m_τ and at the cheapest price.
        air : ndarray, shape (G,)
        traffic : ndarray, shape (K,)
        """
        nu_link = np.zeros(self.n_links)
        nu_link[self.capped_links] = nu[self.link_cap[self.capped_links]]
        pi = np.maximum(mu[self.g] / self.R + self.c + nu_link, 1e-300)
        if self.n_links:
            log_pi = np.log(pi)
            z = -log_pi / tau
            zmax = np.maximum.reduceat(z, self.starts)
            ez = np.exp(z - zmax[self.seg])
            total = np.add.reduceat(ez, self.starts)
            log_m = -tau * (zmax + np.log(total))
            m = np.exp(log_m)
            value, r, h = self._phi(m, tau)
            share = ez / total[self.seg]
            a = share * np.exp(log_m[self.seg] - log_pi)         # ∂m/∂π_e = p_e m / π_e
            flow = r[self.seg] * a                                # R_e x_e
            pi_star = np.minimum.reduceat(pi, self.starts)
            exact = float(user_value(pi_star, self.wu, self.alpha, self.capu).sum())
            smooth = float(value.sum())
        else:
            share = a = flow = np.zeros(0)
            m = r = h = np.zeros(0)
            exact = smooth = 0.0
        x = flow / self.R
        air = np.bincount(self.g, x, minlength=self.G)
        traffic = np.bincount(self.link_cap[self.capped_links], flow[self.capped_links],
                              minlength=len(self.capped))
        return pi, share, a, x, m, r, h, smooth, exact, air, traffic

    def _airtime_term(self, pt: DualPoint, mu: np.ndarray, tau: float
                      ) -> tuple[float, float, np.ndarray | float]:
        """(smoothed, exact) airtime term of g and its gradient in μ (each group's capacity).

        Fixed resources: Σ μ, gradient 1. Free shares: per block the log-sum-exp
        ``T log Σ_k exp((S_bk − E_bk)/T) ≥ max_k (S_bk − E_bk)``; its gradient in μ_jk is
        the soft-max weight q_bk of the cell's block — the implied pattern share.
        """
        pt.q = None
        if not self.free:
            total = float(mu.sum())
            return total, total, 1.0
        ok = self.group_share >= 0
        value = np.bincount(self.group_share[ok], mu[ok], minlength=len(self.share_cost)) \
            - self.share_cost
        top = np.full(self.n_blocks, -np.inf)
        np.maximum.at(top, self.share_block, value)
        temp = tau * self.T
        ez = np.exp((value - top[self.share_block]) / temp[self.share_block])
        total = np.bincount(self.share_block, ez, minlength=self.n_blocks)
        q = ez / total[self.share_block]
        pt.q = q
        smooth = float(np.sum(top + temp * np.log(total)))
        return smooth, float(top.sum()), np.where(ok, q[np.maximum(self.group_share, 0)], 0.0)

    def implied_shares(self, pt: DualPoint) -> list[np.ndarray]:
        """Pattern shares to recover a feasible point with: the soft-max weights, and the
        largest airtime per (block, pattern) the implied shares use."""
        n_k = self.p.n_resources
        full_q = np.zeros(self.p.block_cost.size)
        full_q[np.isfinite(self.p.block_cost).ravel()] = pt.q
        air = np.bincount(self.g, pt.x, minlength=self.G)
        used = np.zeros(self.p.block_cost.size)
        cell_k = self.p.cell_block[np.arange(self.G) // n_k] * n_k + np.arange(self.G) % n_k
        np.maximum.at(used, cell_k, air)
        return [full_q.reshape(self.p.block_cost.shape), used.reshape(self.p.block_cost.shape)]

    def recover(self, pt: DualPoint) -> Recovered:
        """Feasible shares from the implied ones at pt: :func:`recover_feasible` with the
        groups whose price is positive counted as priced (groups at their floor δ_g > 0
        too: filling them tested better)."""
        p = self.p
        x_full = np.zeros(p.n_links)
        x_full[self.keep] = pt.x
        shares = self.implied_shares(pt) if self.free else [None]
        recover = kernels.recover_feasible if jit.compiled() else recover_feasible
        x_feas, obj, theta, util = recover(p, x_full, pt.y[:self.G] > 0, shares)
        return Recovered(x=x_feas, objective=obj, theta=theta, utility=util)

    def at_floor(self, pt: DualPoint) -> np.ndarray:
        """Groups whose price is within 2× of its positive floor δ_g, shape (G,): free at
        the optimum, where every price comparison between them is meaningless."""
        y, lb = pt.y[:self.G], self.lb[:self.G]
        return (lb > 0) & (y <= 2.0 * lb)

    def polish(self, pt: DualPoint, tau: float, tol: float,
               time_limit_s: float | None = None) -> Recovered | None:
        """The optimal shares on the links each user finds (nearly) cheapest at pt.

        At the optimal prices every link a user uses is one of its cheapest; which split
        of the users that tie balances the cells is what recovery from smoothed shares
        gets only approximately (a user held at its demand cannot absorb a cell's excess).
        Here the problem restricted to each user's links within a relative 10·τ (at least
        1e-3) of its cheapest price is solved by ``ipm`` (within `time_limit_s`, if given):
        a feasible point of the whole problem, optimal if those links hold the optimal ones.
        """
        if not self.n_links:
            return None
        cheapest = np.minimum.reduceat(pt.pi, self.starts)[self.seg]
        near = (pt.pi <= cheapest * (1.0 + max(10.0 * tau, 1e-3))) | self.at_floor(pt)[self.g]
        sub = self.p.restrict(self.keep[near])
        sol = solve_ipm(sub, tol=0.1 * tol, time_limit_s=time_limit_s)
        if not np.isfinite(sol.objective):
            return None
        x = np.zeros(self.p.n_links)
        x[self.keep[near]] = sol.x
        return Recovered(x=x, objective=sol.objective, theta=sol.pattern_share,
                         utility=sol.utility)

    def retain(self, pt: DualPoint) -> None:
        """Nothing to do: pt holds its own state."""

    def commit(self, rec: Recovered) -> None:
        """Nothing to do: the shares are already here."""

    def row_extra(self) -> dict[str, Any]:
        """No extra history columns."""
        return {}

    def hessian(self, pt: DualPoint, tau: float) -> SymmetricSystem:
        """∇²_y g_τ at pt: Σ_users Jᵀ [r(1+1/τ) diag(a/π) + (h − r(1+1/τ)/m) a aᵀ] J."""
        if jit.compiled():
            data, indices, indptr = kernels.hessian_csr(
                pt.share, pt.pi, pt.r, pt.m, pt.h, self.starts, self.g, self.R,
                self.link_cap, self.s, self.G, self.n, float(tau), _ACTIVE_WEIGHT)
            H = sp.csr_array((data, indices, indptr), shape=(self.n, self.n))
        else:
            H = self._hessian_numpy(pt, tau)
        hess = SymmetricSystem(H)
        if self.free:
            self._add_airtime_hessian(hess, pt, tau)
        return hess

    def _hessian_numpy(self, pt: DualPoint, tau: float) -> sp.csr_array:
        """The users' part of :meth:`hessian` in numpy, shape (n, n) (the reference, and the
        fallback of :func:`cellopt.solvers.kernels.hessian_csr`)."""
        idx = np.flatnonzero(pt.share > _ACTIVE_WEIGHT)
        seg = self.seg[idx]
        k = 1.0 + 1.0 / tau
        pi, share = pt.pi[idx], pt.share[idx]
        r, m, h = pt.r[seg], pt.m[seg], pt.h[seg]
        # a = ∂m/∂π (None from the compiled evaluation: p m / π)
        a = pt.a[idx] if pt.a is not None else share * (m / pi)
        # ∂π_e/∂y: s_g / R_e at the link's group and s_j at its cell's cap price.
        grp = self.g[idx]
        d_grp = self.s[grp] / self.R[idx]
        capl = self.link_cap[idx]
        withcap = np.flatnonzero(capl >= 0)
        cap = self.G + capl[withcap]
        d_cap = self.s[cap]
        # Link-space diagonal E_e = D_e + c_i a_e² computed without cancellation:
        # h a² + r (1+1/τ) (a/π)(1 − p); the off-diagonal rank-one part only for split users.
        diag = h * a * a + r * k * (a / pi) * (1.0 - share)
        n_active = np.bincount(seg, minlength=len(self.starts))
        split = n_active[seg] > 1
        coef = h - r * k / m                                        # c_i (per active link)
        diag = diag - np.where(split, coef * a * a, 0.0)
        # Σ_e E_e (∂π_e/∂y)(∂π_e/∂y)ᵀ: a diagonal, plus group–cap terms for capped links.
        gw, dw, ew = grp[withcap], d_grp[withcap], diag[withcap]
        H = sp.coo_array((np.r_[diag * d_grp * d_grp, ew * dw * d_cap, ew * dw * d_cap,
                                ew * d_cap * d_cap],
                          (np.r_[grp, gw, cap, cap], np.r_[grp, cap, gw, cap])),
                         shape=(self.n, self.n)).tocsr()
        if split.any():
            # Σ_split users c_i b_i b_iᵀ, b_i = Σ_e a_e ∂π_e/∂y: B has a row per split user.
            sl = np.flatnonzero(split)
            row = np.cumsum(np.r_[True, seg[sl][1:] != seg[sl][:-1]]) - 1
            wc = np.flatnonzero(split[withcap])
            B = sp.coo_array((np.r_[a[sl] * d_grp[sl], a[withcap[wc]] * d_cap[wc]],
                              (np.r_[row, row[np.searchsorted(sl, withcap[wc])]],
                               np.r_[grp[sl], cap[wc]])),
                             shape=(int(row[-1]) + 1, self.n)).tocsr()
            cu = coef[sl][np.r_[True, row[1:] != row[:-1]]]          # one c_i per split user
            scaled = sp.csr_array((B.data * np.repeat(cu, np.diff(B.indptr)), B.indices,
                                   B.indptr), shape=B.shape)
            H = H + B.T @ scaled
        return sp.csr_array(H)

    def _add_airtime_hessian(self, hess: SymmetricSystem, pt: DualPoint, tau: float) -> None:
        """The curvature of the smoothed airtime term, in y.

        Per block b: ``P_bᵀ (diag(q_b) − q_b q_bᵀ) P_b / (τ T_b)`` with P_b mapping groups
        to their pattern (scaled by s); see :func:`~cellopt.solvers.linalg.share_curvature`.
        """
        groups = np.flatnonzero((self.group_share >= 0) & ~self.fixed[:self.G])
        weight = pt.q / (tau * self.T[self.share_block])  # Σ over a block = 1 / (τ T_b)
        hess.add(share_curvature(self.n, groups, self.group_share[groups], self.share_block,
                                 weight, self.s))
