"""Augmented-Lagrangian method with a semismooth Newton inner solver (method ``alm``).

The coupling constraints — airtime per (cell, resource), backhaul per cell, demand per
user — are priced by multipliers y and a quadratic penalty σ (the augmented Lagrangian
L_σ); ``x ≥ 0`` stays a hard bound. Outer iteration k (a proximal method of
multipliers, Rockafellar 1976):

1. minimize, inexactly, ``Φ_k(x) = L_σ(x; y_k) + ½ Σ_e τ_e (x_e − x_k,e)²`` over x ≥ 0;
2. ``y ← max(0, y + σ (a(x) − 1))`` — prices rise where a cell is overloaded;
3. evaluate the dual function g(μ, ν) at the new prices (an upper bound for any prices
   ≥ 0) and the objective of the best feasible point recovered from x
   (:func:`~cellopt.solvers.common.recover_feasible`); stop when their rate-equivalent
   gap is at most ``tol``;
4. raise σ ×4 when the violation did not fall 4× (and the inner solve reached its
   target), and ask the next inner solve for a residual η_{k+1} ≤ min(0.2 η_k,
   violation_k) × the price scale: inexact early, exact as the violation vanishes.

The proximal term τ_e = 1e-2 h_i R_e² + 1e-3 × the price scale (h_i the user's utility
curvature) makes Φ_k strongly convex: without it the Newton matrix is singular along
every tie (a user indifferent between two links, two users sharing a cell), and the
regularized steps of the former projected-Newton loop were cut by the line search to
1e-4 of their length, fifty times per outer iteration. τ does not grow with σ: a weight
that did would freeze x as the penalty rises.

Semismooth Newton (the inner solver). Φ_k is C¹ with a semismooth gradient (the
penalty is a squared plus-function). Each step solves for the natural residual
``x − Π_{≥0}(x − ∇Φ / diag H)``: links where it equals x (``x_e H_ee ≤ ∂Φ/∂x_e``, at
zero or heading there) are set to zero and leave the system — so links whose share is
driven to zero drop out and users stop being spread over all their candidate cells —
and the free links move by the generalized Hessian restricted to them, with the rows
whose plus-function is positive counted as active. A backtracking (Armijo) search on
Φ_k along the projection arc takes the step; a user whose rate the step would cut by
more than 75 % has its own step shortened (the utility's curvature grows like
r^(−α−1)). The certificate is unaffected by which links are zero: the bound depends on
the prices only, and the feasible side is repaired from x.

The Newton matrix on the free links is

    H = D + Σ_i h_i R_i R_iᵀ + σ Σ_{active groups g} 1_g 1_gᵀ + σ Σ_{active cells j} ρ_j ρ_jᵀ

— the proximal diagonal D = τ, one rank-one block per user (its utility curvature, and
its demand row when active) and one per active cell constraint. The user blocks are
inverted in closed form (Sherman–Morrison, all users at once); what remains is a Schur
complement in the cell dimension, of size (active groups + active backhaul caps),
whose off-diagonal entries come only from users with free links in several cells. It is
assembled by a compiled kernel (:mod:`cellopt.solvers.alm_kernels`) and factorized
densely up to 2,500 rows, and with a sparse LU beyond.

Rows are scaled to read in shares: airtime as is, backhaul divided by the cap, demand
by the user's fastest link rate (divided by a small demand, the demand rows' curvature
would be orders larger than the airtime rows' and every step that moves a rate would be
cut short). The method starts from the prices and shares of ``dual`` run to a gap of 3e-3,
with each demand-bound user's multiplier set to the marginal utility its price does not
pay for.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse.linalg as spla

from cellopt.checks import check_count, check_number
from cellopt.errors import ValidationError
from cellopt.problem import Problem, utility, utility_derivative
from cellopt.solution import Solution
from cellopt.solvers.alm_kernels import flows, link_terms, schur_dense, schur_dense_numpy
from cellopt.solvers.arguments import check_arguments, check_problem, check_warm_start
from cellopt.solvers.certificate import certified_gap, dual_bound
from cellopt.solvers.common import (
    block_zero_capacity,
    feasible_shares,
    group_capacity,
    link_prices,
    loads,
    one_blas_thread,
    recover_feasible,
    repair,
    user_min,
)
from cellopt.solvers.dual import solve_dual
from cellopt.solvers.registry import register
from cellopt.solvers.result import build_solution
from cellopt.status import MAX_ITER, OPTIMAL, STOPPED, TIME_LIMIT

__all__ = ["solve_alm"]

_DENSE_SCHUR_MAX = 2500  # Schur sizes up to this are factorized densely
_WARM_TOL = 3e-3         # gap of the `dual` warm start
_PROX = 1e-2             # proximal weight, relative to each variable's own curvature
_PROX_FLOOR = 1e-3       # ... plus this × the price scale
_DEMAND_SCALE = 1e-2     # the price scale is at least this × the mean demand multiplier
_SIGMA0 = 3.0            # first penalty, relative to the price scale
_SIGMA_MAX = 1e6         # largest penalty, relative to the price scale
_SIGMA_UP = 4.0          # penalty factor when the violation did not fall enough
_VIOLATION_DROP = 0.25   # ... i.e. by this factor
_RATE_KEEP = 0.75        # a Newton step lowers a user's rate by at most this fraction
_ETA0 = 1.0              # first inner residual, relative to the price scale
_ETA_DROP = 0.2          # each later one at most this × the previous
_ETA_VIOLATION = 1.0     # ... and at most this × the outer violation


class _Lagrangian:
    """The augmented Lagrangian of a problem, its gradient and its Newton system."""

    def __init__(self, problem: Problem):
        p = problem
        self.p = p
        self.R = p.rate_mbps
        self.g = p.group
        self.w = p.weight
        self.alpha = p.alpha
        # Zero-capacity cells need no row: their links are pinned at zero.
        self.capped = np.flatnonzero(np.isfinite(p.backhaul_mbps) & (p.backhaul_mbps > 0))
        self.has_demand = np.isfinite(p.demand_mbps)
        # Backhaul and demand rows are divided by their bound, so that all rows read
        # "excess ≤ 0" in comparable units — but never by less than 1 % of the median link
        # rate: a demand of 1e-13 Mbit/s must not turn into coefficients of 1e14.
        floor = 1e-2 * float(np.median(self.R)) if len(self.R) else 1.0
        self.inv_cap = np.zeros(p.n_cells)
        self.inv_cap[self.capped] = 1.0 / np.maximum(p.backhaul_mbps[self.capped], floor)
        # Demand rows are divided by the user's fastest link rate instead: the row then reads
        # in shares of that link, like an airtime row, and its penalty's curvature σ R_e²/R̄²
        # stays ≤ σ (divided by a small demand it would be orders larger than the airtime
        # rows', and every projected step that moves a rate would be cut to nothing).
        fastest = np.zeros(p.n_users)
        np.maximum.at(fastest, p.user, self.R)
        self.inv_demand = np.where(self.has_demand & (fastest > 0),
                                   1.0 / np.maximum(fastest, floor), 0.0)
        self.link_cost = p.price_per_mbps[p.cell] * self.R
        self.rho = self.R * self.inv_cap[p.cell]  # coefficient in the scaled backhaul row
        self._no_curvature = np.zeros(p.n_users)
        self.has_link = np.bincount(p.user, minlength=p.n_users) > 0
        capped_mask = np.zeros(p.n_cells, bool)
        capped_mask[self.capped] = True
        #: Which rows exist: every airtime group, capped cells, users with a demand.
        self.row_masks = (np.ones(p.n_groups, bool), capped_mask, self.has_demand)
        #: Free pattern shares θ (docs/model.md, "Power patterns"): airtime rows read
        #: air − θ_k ≤ 0, and Σ θ = 1 is one more (equality) row with multiplier η.
        self.free = p.free_shares
        self.energy = p.pattern_cost
        self.group_pattern = np.tile(np.arange(p.n_resources), p.n_cells)

    # --- values -----------------------------------------------------------------
    def rows(self, x: np.ndarray, theta: np.ndarray | None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Rates, and the scaled excess of each row: airtime − θ (or 1), (T − C)/C, (r − d)/d."""
        p = self.p
        r, air, traffic = flows(p.user, p.group, p.cell, self.R, x, p.n_users, p.n_groups,
                                p.n_cells)
        with np.errstate(invalid="ignore"):
            bh = np.where(self.inv_cap > 0, (traffic - self.p.backhaul_mbps) * self.inv_cap, 0.0)
            dm = np.where(self.has_demand, (r - self.p.demand_mbps) * self.inv_demand, 0.0)
        return r, air - (theta[self.group_pattern] if self.free else 1.0), bh, dm

    def value(self, x: np.ndarray, theta: np.ndarray | None, y: tuple, sigma: float) -> float:
        r, air, bh, dm = self.rows(x, theta)
        # U'(0) = inf for α > 0: the optimum gives every user with a link a positive rate.
        if self.alpha > 0 and (r[self.has_link] <= 0).any():
            return np.inf
        f = -np.sum(self.w * utility(r, self.alpha)) + np.dot(self.link_cost, x)
        for mult, use, mask in zip(y[:3], (air, bh, dm), self.row_masks, strict=True):
            s = np.maximum(mult + sigma * use, 0.0)[mask]
            f += np.sum(s * s - mult[mask] ** 2) / (2.0 * sigma)
        if self.free:
            h = theta.sum() - 1.0
            f += np.dot(self.energy, theta) + y[3] * h + 0.5 * sigma * h * h
        return float(f)

    def gradient(self, x: np.ndarray, theta: np.ndarray | None, y: tuple, sigma: float,
                 with_diag: bool = False):
        """Gradients in x and θ, the rates and the per-row penalty prices s = max(0, y + σ
        excess); with `with_diag`, also the generalized-Hessian diagonal of :meth:`curvature`."""
        r, air, bh, dm = self.rows(x, theta)
        mu, nu, lam = y[:3]
        s_g = np.maximum(mu + sigma * air, 0.0)
        s_c = np.where(self.row_masks[1], np.maximum(nu + sigma * bh, 0.0), 0.0)
        s_d = np.where(self.has_demand, np.maximum(lam + sigma * dm, 0.0), 0.0)
        a_user = -self.w * utility_derivative(r, self.alpha) + s_d * self.inv_demand
        h = self.user_curvature(r, s_d, sigma) if with_diag else self._no_curvature
        p = self.p
        grad, diag = link_terms(p.user, self.g, p.cell, self.R, self.rho, self.link_cost,
                                a_user, h, s_g, s_c, self.inv_cap, sigma)
        grad_theta = None
        diag_theta = None
        if self.free:
            per_pattern = s_g.reshape(p.n_cells, p.n_resources).sum(axis=0)
            grad_theta = self.energy - per_pattern + (y[3] + sigma * (theta.sum() - 1.0))
            active = (s_g > 0).reshape(p.n_cells, p.n_resources).sum(axis=0)
            diag_theta = sigma * (1.0 + active)
        if with_diag:
            return grad, grad_theta, r, (s_g, s_c, s_d), (diag, diag_theta)
        return grad, grad_theta, r, (s_g, s_c, s_d)

    def curvature(self, r: np.ndarray, s: tuple[np.ndarray, ...], sigma: float
                  ) -> tuple[np.ndarray, np.ndarray | None]:
        """Diagonal of the generalized Hessian: per link, shape (L,), and per pattern share.

        ``h_i R_e² + σ (1[airtime row active] + 1[backhaul row active] ρ_e²)`` with h_i the
        user's curvature (utility and active demand row); for a free pattern share k,
        ``σ (1 + its active airtime rows)``.
        """
        p = self.p
        s_g, s_c, s_d = s
        h = self.user_curvature(r, s_d, sigma)
        diag = h[p.user] * self.R * self.R + sigma * ((s_g > 0)[self.g]
                                                      + (s_c > 0)[p.cell] * self.rho * self.rho)
        diag_theta = None
        if self.free:
            active = (s_g > 0).reshape(p.n_cells, p.n_resources).sum(axis=0)
            diag_theta = sigma * (1.0 + active)
        return diag, diag_theta

    def user_curvature(self, r: np.ndarray, s_d: np.ndarray, sigma: float) -> np.ndarray:
        """h_i, shape (n_users,): curvature of −w U(r) plus the active demand penalty."""
        h = np.zeros(self.p.n_users)
        if self.alpha > 0:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                h = self.w * self.alpha * np.where(r > 0, r ** (-self.alpha - 1.0), 0.0)
        return h + sigma * (s_d > 0) * self.inv_demand ** 2

    # --- Newton direction -------------------------------------------------------
    def newton_direction(
        self, grad: np.ndarray, r: np.ndarray, s: tuple[np.ndarray, ...], sigma: float,
        free: np.ndarray, tau: np.ndarray, grad_theta: np.ndarray | None = None,
        free_theta: np.ndarray | None = None, tau_theta: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Solve H_FF d_F = −grad_F by Sherman–Morrison per user and a Schur complement.

        With free pattern shares, the free θ join the system: an active airtime row of
        pattern k has coefficient −1 on θ_k, and Σ θ = 1 is an equality row. With P the
        map from the active airtime rows to their patterns, eliminating x leaves the
        small system ``(σ 11ᵀ + D_θ + Pᵀ M⁻¹ P) d_θ = −grad_θ + Pᵀ z`` (M the Schur
        matrix, z = M⁻¹ Wᵀ B⁻¹(−grad_x)), and then ``d_x = B⁻¹(−grad_x − W (z − M⁻¹ P d_θ))``.
        Returns (d_x on the free links, d_θ on the free patterns or None).
        """
        p = self.p
        s_g, s_c, s_d = s
        f = np.flatnonzero(free)
        R, u, g, c = self.R[f], p.user[f], self.g[f], p.cell[f]
        # Per-user curvature of −w U(r) plus the active demand penalty (rank one in R_i).
        h = self.user_curvature(r, s_d, sigma)
        act_g = s_g > 0
        act_c = s_c > 0
        rho = R * self.inv_cap[c]  # coefficient of the link in its cell's scaled backhaul row
        D = tau[f]  # the proximal term: every link's own curvature, > 0

        # B = D + Σ_i h_i R_i R_iᵀ;  B⁻¹ v = v/D − (R/D) β_i Σ_{e∈i} R_e v_e / D_e.
        a = np.bincount(u, R * R / D, minlength=p.n_users)
        with np.errstate(divide="ignore"):
            beta = np.where(h > 0, 1.0 / (1.0 / h + a), 0.0)

        def b_inv(v: np.ndarray) -> np.ndarray:
            q = v / D
            return q - (R / D) * (beta * np.bincount(u, R * q, minlength=p.n_users))[u]

        # Rows of W: active groups, then active capped cells.
        row_g = np.full(p.n_groups, -1)
        row_g[act_g] = np.arange(act_g.sum())
        row_c = np.full(p.n_cells, -1)
        row_c[act_c] = act_g.sum() + np.arange(act_c.sum())
        m = int(act_g.sum() + act_c.sum())
        rhs_u = b_inv(-grad[f])
        ft = None
        if self.free:
            ft = np.flatnonzero(free_theta)
            # P: active airtime rows of the free patterns → their pattern column.
            act_rows = np.flatnonzero(act_g)
            col = np.full(p.n_resources, -1)
            col[ft] = np.arange(len(ft))
            p_cols = col[self.group_pattern[act_rows]]
            keep = p_cols >= 0
            P = np.zeros((m, len(ft)))
            P[row_g[act_rows[keep]], p_cols[keep]] = 1.0
            d_reg = tau_theta[ft]
        if m == 0:
            if not self.free:
                return rhs_u, None
            S = sigma * np.ones((len(ft), len(ft))) + np.diag(d_reg)
            return rhs_u, np.linalg.solve(S, -grad_theta[ft])
        rg, rc = row_g[g], row_c[c]
        in_g, in_c = rg >= 0, rc >= 0

        def w_t(v: np.ndarray) -> np.ndarray:  # Wᵀ v
            return (np.bincount(rg[in_g], v[in_g], minlength=m).astype(float)
                    + np.bincount(rc[in_c], (rho * v)[in_c], minlength=m))

        def w_times(z: np.ndarray) -> np.ndarray:  # W z
            out = np.where(in_g, z[np.maximum(rg, 0)], 0.0)
            return out + np.where(in_c, rho * z[np.maximum(rc, 0)], 0.0)

        # M = I/σ + Wᵀ D⁻¹ W − Σ_i β_i t_i t_iᵀ with t_i = Wᵀ D⁻¹ R_i.
        if m <= _DENSE_SCHUR_MAX:
            M = schur_dense(m, sigma, u, rg, rc, rho, R, 1.0 / D, beta)
        else:
            M = schur_dense_numpy(m, sigma, u, rg, rc, rho, R, 1.0 / D, beta)
        rhs = w_t(rhs_u)
        if self.free:
            rhs = np.column_stack([rhs, P])
        if m <= _DENSE_SCHUR_MAX:
            with one_blas_thread():
                M = M if isinstance(M, np.ndarray) else M.toarray()
                z = scipy.linalg.cho_solve(scipy.linalg.cho_factor(M, check_finite=False),
                                           rhs, check_finite=False)
        else:
            z = spla.splu(M.tocsc(), permc_spec="MMD_AT_PLUS_A").solve(rhs)
        if not self.free:
            return rhs_u - b_inv(w_times(z)), None
        z, Y = z[:, 0], z[:, 1:]
        with one_blas_thread():
            S = sigma * np.ones((len(ft), len(ft))) + np.diag(d_reg) + P.T @ Y
            d_theta = scipy.linalg.solve(S, -grad_theta[ft] + P.T @ z, assume_a="sym",
                                         check_finite=False)
        return rhs_u - b_inv(w_times(z - Y @ d_theta)), d_theta


def _initial_point(problem: Problem, theta: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Each user on its best-rate link, groups shared equally; equal-share prices."""
    p = problem
    order = np.lexsort((-p.rate_mbps, p.user))
    first = np.r_[True, p.user[order][1:] != p.user[order][:-1]]
    best = order[first]
    x = np.zeros(p.n_links)
    count = np.bincount(p.group[best], minlength=p.n_groups)
    capacity = np.broadcast_to(group_capacity(p, theta), (p.n_groups,))
    x[best] = capacity[p.group[best]] / count[p.group[best]]
    x = repair(p, x, theta)  # within backhaul caps and demands too
    r, _, _ = loads(p, x)
    marginal = p.weight * utility_derivative(np.maximum(r, 1e-300), p.alpha)
    mu = np.bincount(p.group, x * p.rate_mbps * marginal[p.user], minlength=p.n_groups)
    return x, mu


@register("alm", kind="optimizer", single_association=True, patterns=True,
          warm_start=("x0", "prices0", "theta0"))
def solve_alm(
    problem: Problem,
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
    sigma0: float | None = None,
    inner_steps: int = 50,
    inner_tol: float = 1e-9,
    x0: np.ndarray | None = None,
    prices0: tuple[np.ndarray, np.ndarray] | None = None,
    theta0: np.ndarray | None = None,
    warm_start: str | None = "dual",
) -> Solution:
    """Augmented-Lagrangian method with semismooth Newton inner steps.

    Parameters
    ----------
    problem : Problem
    tol : float
        Target certified rate-equivalent gap (:func:`~cellopt.solvers.certificate.certified_gap`).
    max_iter : int, optional
        Outer iterations (default 200).
    time_limit_s : float, optional
    callback : callable, optional
        Called after each outer iteration with a dict of the history row; True stops.
    sigma0 : float, optional
        Initial penalty [utility units]; default 10 × the mean equal-share airtime price.
    inner_steps : int
        Most semismooth Newton steps per outer iteration.
    inner_tol : float
        Floor of the inexact inner stop η_k (× the price scale), which shrinks with the violation.
    x0 : ndarray, shape (L,), optional
        Warm start for the shares (finite, ≥ 0).
    prices0 : (ndarray (n_cells, n_resources), ndarray (n_cells,)), optional
        Warm start for the airtime and backhaul prices (finite, ≥ 0; e.g. ``sol.prices``
        of a previous solve).
    theta0 : ndarray, shape (n_resources,), optional
        Warm start for free pattern shares (default equal shares); shape (n_blocks,
        n_resources) with share blocks. Only for problems with free pattern shares.
    warm_start : {"dual", None}
        Without `x0` and `prices0`: ``"dual"`` (default) starts from the prices, shares
        and pattern shares of the ``dual`` method run to a loose gap (3e-3, or `tol` if
        looser); the multiplier updates then start next to the optimal prices. None
        starts cold: each user on its fastest link, equal-share prices.

    Returns
    -------
    Solution
        ``history`` columns: iteration, objective, upper_bound, gap, sigma,
        max_violation, newton_steps, inner_residual (relative to the price scale), time_s.
    """
    t0 = time.perf_counter()
    p = problem
    check_problem(p)
    check_arguments("alm", tol=tol, max_iter=max_iter, time_limit_s=time_limit_s,
                    callback=callback, single_association=False,
                    options=dict(sigma0=sigma0, inner_steps=inner_steps, inner_tol=inner_tol,
                                 x0=x0, prices0=prices0, theta0=theta0))
    if sigma0 is not None:
        sigma0 = check_number(sigma0, "sigma0", low=0.0, low_open=True,
                              fix="give a penalty > 0 in utility units, or None (10 × the mean "
                                  "equal-share airtime price)")
    inner_steps = check_count(inner_steps, "inner_steps", minimum=1,
                              fix="give a whole number of Newton steps ≥ 1, e.g. 50")
    inner_tol = check_number(inner_tol, "inner_tol", low=0.0, low_open=True,
                             fix="give a tolerance > 0, e.g. 1e-9")
    x0, prices0, theta0 = check_warm_start(p, x0=x0, prices0=prices0, theta0=theta0)
    max_iter = 200 if max_iter is None else int(max_iter)
    if isinstance(warm_start, (bool, np.bool_)) or warm_start not in ("dual", None):
        raise ValidationError(f"warm_start={warm_start!r}; fix: 'dual' or None")
    said = ""
    # The certificate pairs the best feasible point and the lowest bound found so far
    # (each valid on its own): (objective, x, θ, utility) and (bound, μ, ν).
    best_primal: tuple | None = None
    best_bound: tuple | None = None
    if warm_start == "dual" and x0 is None and prices0 is None and p.n_links:
        warm = solve_dual(p, tol=max(tol, _WARM_TOL), time_limit_s=time_limit_s)
        x0, prices0 = warm.x, (warm.prices["airtime"], warm.prices["backhaul"])
        theta0 = warm.pattern_share if theta0 is None else theta0
        said = f"warm-started from dual prices (gap {warm.gap:.1e}, {warm.n_iter} steps); "
        # Its feasible point and its bound are candidates of the certificate too.
        best_primal = (warm.objective, warm.x, warm.pattern_share, warm.utility)
        best_bound = (warm.upper_bound, warm.prices["airtime"].reshape(-1),
                      warm.prices["backhaul"])
    lag = _Lagrangian(p)
    theta = feasible_shares(p, theta0)
    if x0 is not None and prices0 is not None:
        x, mu = np.clip(np.asarray(x0, float), 0.0, None), None
    else:
        x, mu = _initial_point(p, theta)
    nu_hat = np.zeros(p.n_cells)
    if x0 is not None:
        x = np.clip(np.asarray(x0, float), 0.0, None)
    if prices0 is not None:
        mu = np.asarray(prices0[0], float).reshape(-1).copy()  # (checked: finite, ≥ 0)
        with np.errstate(divide="ignore", invalid="ignore"):  # backhaul rows scaled by inv_cap
            nu_hat = np.where(lag.inv_cap > 0, np.asarray(prices0[1], float) / lag.inv_cap, 0.0)
    # Zero-capacity cells can carry nothing: pin their links at zero.
    blocked = (p.backhaul_mbps <= 0)[p.cell]
    x[blocked] = 0.0
    # U'(0) = inf for α > 0: start every user with a link at a positive rate.
    r, _, _ = loads(p, x)
    if p.alpha > 0 and (r[lag.has_link] <= 0).any():
        x = np.maximum(x, 1e-6 * (~blocked))
    # Demand multipliers: the marginal utility a user's price does not pay for (the dual
    # bound has no demand price: r̄ caps the user's best response instead), per unit of the
    # scaled row. Zero for users below their demand at these prices.
    lam_hat = np.zeros(p.n_users)
    if lag.has_demand.any():
        r, _, _ = loads(p, x)
        cheapest = user_min(p, link_prices(p, mu, nu_hat * lag.inv_cap))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            gain = p.weight * utility_derivative(np.maximum(r, 1e-300), p.alpha) - cheapest
            lam_hat = np.where(lag.has_demand & np.isfinite(gain) & (gain > 0),
                               gain / np.where(lag.has_demand, lag.inv_demand, 1.0), 0.0)
    y: tuple = (mu, nu_hat, lam_hat)
    if lag.free:  # η of Σ θ = 1: at the optimum, the best pattern's net airtime value
        y += (float(np.max(mu.reshape(p.n_cells, -1).sum(axis=0) - p.pattern_cost)),)
    # The price scale: the mean positive airtime price — but with most users held at their
    # demand the airtime prices can be ~0 while the demand multipliers carry the prices,
    # so never below a fraction of their mean (both in share units).
    lam_pos = lam_hat[lam_hat > 0]
    scale = max(float(np.mean(mu[mu > 0])) if (mu > 0).any() else 0.0,
                _DEMAND_SCALE * float(np.mean(lam_pos)) if len(lam_pos) else 0.0)
    scale = scale if scale > 0 else 1.0
    sigma = float(sigma0) if sigma0 is not None else _SIGMA0 * scale
    sigma_first = sigma

    history: list[dict[str, Any]] = []
    status, message = MAX_ITER, f"reached max_iter={max_iter} before gap ≤ tol={tol:g}"
    prev_violation = np.inf
    eta = _ETA0 * scale
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        # The proximal term of this outer iteration: centre the current point, weight a
        # fraction of each variable's own curvature (fixed during the inner solve).
        # The weight follows the utility's curvature, not σ: a weight that grew with σ
        # would freeze x as the penalty rises.
        r, _, _ = loads(p, x)
        h = lag.user_curvature(r, np.zeros(p.n_users), 0.0)
        tau = _PROX * h[p.user] * lag.R * lag.R + _PROX_FLOOR * scale
        tau_theta = np.full(p.n_resources, _PROX_FLOOR * scale) if lag.free else None
        centre = (x.copy(), None if theta is None else theta.copy())
        steps, residual = _ssn_inner(lag, x, theta, y, sigma, blocked, centre,
                                     (tau, tau_theta), eta, inner_steps)
        _, *excess = lag.rows(x, theta)
        violation = max(float(np.max(np.where(mk, e, 0.0), initial=0.0))
                        for e, mk in zip(excess, lag.row_masks, strict=True))
        new_y = tuple(np.where(mk, np.maximum(mult + sigma * e, 0.0), 0.0)
                      for mult, e, mk in zip(y[:3], excess, lag.row_masks, strict=True))
        if lag.free:
            h = float(theta.sum() - 1.0)
            violation = max(violation, abs(h))
            new_y += (y[3] + sigma * h,)
        y = new_y
        mu_k, nu_k = y[0], y[1] * lag.inv_cap
        nu_k = block_zero_capacity(p, mu_k, nu_k)
        bound = dual_bound(p, mu_k, nu_k)
        # The feasible side: the shares repaired, or with the saturated (priced) groups
        # filled, or demand-bound users served first — the best of these.
        x_feas, objective, theta_feas, util = recover_feasible(p, x, mu_k > 0, [theta])
        if best_primal is None or objective > best_primal[0]:
            best_primal = (objective, x_feas, theta_feas, util)
        if best_bound is None or bound < best_bound[0]:
            best_bound = (bound, mu_k.copy(), nu_k.copy())
        gap = certified_gap(p, best_bound[0], best_primal[0], best_primal[3])
        row = dict(iteration=n_iter, objective=best_primal[0], upper_bound=best_bound[0], gap=gap,
                   sigma=sigma, max_violation=violation, newton_steps=steps,
                   inner_residual=residual / scale, time_s=time.perf_counter() - t0)
        history.append(row)
        if callback is not None and callback(dict(row)):
            status, message = STOPPED, "the callback asked to stop"
            break
        if gap is not None and gap <= tol:
            status, message = OPTIMAL, f"certified gap {gap:.2e} ≤ tol={tol:g}"
            break
        if time_limit_s is not None and time.perf_counter() - t0 > time_limit_s:
            status, message = TIME_LIMIT, f"reached time_limit_s={time_limit_s:g}"
            break
        # The penalty rises when the violation did not fall enough; the next inner solve
        # is asked for a residual that shrinks with the violation (inexact ALM).
        # An inner solve that ran out of steps had a penalty too stiff for its start:
        # lower it back (never below its first value).
        if residual <= eta and violation > _VIOLATION_DROP * prev_violation:
            sigma = min(sigma * _SIGMA_UP, _SIGMA_MAX * scale)
        elif residual > eta and steps >= inner_steps:
            sigma = max(sigma / _SIGMA_UP, sigma_first)
        prev_violation = violation
        eta = max(inner_tol, min(_ETA_DROP * eta / scale, _ETA_VIOLATION * violation)) * scale
    if best_primal is None:  # max_iter=0: the starting point, repaired
        theta_feas = feasible_shares(p, theta)
        best_primal = (None, repair(p, x, theta_feas), theta_feas, None)
    if best_bound is None:  # ... and the bound at its prices
        nu0 = block_zero_capacity(p, y[0], y[1] * lag.inv_cap)
        best_bound = (dual_bound(p, y[0], nu0), y[0], nu0)
    _, x_best, theta_best, _ = best_primal
    bound_best, mu_best, nu_best = best_bound
    return build_solution(
        p, x_best, method="alm", status=status, message=said + message, mu=mu_best, nu=nu_best,
        upper_bound=bound_best, n_iter=n_iter, wall_s=time.perf_counter() - t0, history=history,
        theta=theta_best)


def _ssn_inner(lag: _Lagrangian, x: np.ndarray, theta: np.ndarray | None, y: tuple,
               sigma: float, blocked: np.ndarray, centre: tuple, tau: tuple, eta: float,
               max_steps: int) -> tuple[int, float]:
    """Semismooth Newton on the proximal augmented Lagrangian over x ≥ 0 (in place).

    Minimizes ``Φ(x, θ) = L_σ(x, θ; y) + ½ Σ_e τ_e (x_e − x̄_e)² + ½ Σ_k τ_k (θ_k − θ̄_k)²``
    until the largest entry of its minimal-norm subgradient (``|∂Φ/∂x_e|`` on a positive
    share, ``max(0, −∂Φ/∂x_e)`` on a zero one) is at most `eta`, or `max_steps` steps.
    Each step is a Newton step on the natural residual ``x − Π(x − ∇Φ / diag H)``: links
    where that residual is x itself (``x_e diag_e ≤ ∂Φ/∂x_e``: at zero, or heading there)
    are set to zero, the others move by the generalized Hessian restricted to them, and
    an Armijo search along the projection arc on Φ takes the step.

    Parameters
    ----------
    lag : _Lagrangian
    x : ndarray, shape (L,)
        Shares, updated in place.
    theta : ndarray, shape (n_resources,), or None
        Free pattern shares, updated in place.
    y : tuple
        Multipliers (airtime (n_groups,), scaled backhaul (n_cells,), scaled demand
        (n_users,)[, η of Σ θ = 1]).
    sigma : float
        Penalty [utility units].
    blocked : ndarray of bool, shape (L,)
        Links pinned at zero.
    centre : (ndarray (L,), ndarray or None)
        x̄ and θ̄.
    tau : (ndarray (L,), ndarray or None)
        Proximal weights τ > 0 [utility units per share²].
    eta : float
        Residual to reach [utility units per share].
    max_steps : int

    Returns
    -------
    (int, float)
        Newton steps taken and the final residual.
    """
    xc, thc = centre
    tx, tt = tau
    steps = 0

    def merit(xv: np.ndarray, tv: np.ndarray | None) -> float:
        f = lag.value(xv, tv, y, sigma) + 0.5 * float(np.dot(tx, (xv - xc) ** 2))
        if lag.free:
            f += 0.5 * float(np.dot(tt, (tv - thc) ** 2))
        return f

    f0 = merit(x, theta)
    while True:
        grad, grad_theta, r, s, (diag, diag_theta) = lag.gradient(x, theta, y, sigma,
                                                                  with_diag=True)
        grad += tx * (x - xc)
        res = np.where(x > 0, np.abs(grad), np.maximum(-grad, 0.0))
        res[blocked] = 0.0
        residual = float(np.max(res, initial=0.0))
        if lag.free:
            grad_theta = grad_theta + tt * (theta - thc)
            residual = max(residual, float(np.max(np.where(
                theta > 0, np.abs(grad_theta), np.maximum(-grad_theta, 0.0)), initial=0.0)))
        if residual <= eta or steps >= max_steps:
            return steps, residual
        steps += 1
        diag += tx
        active = blocked | (x * diag <= grad)
        free = ~active
        d_theta = None
        free_theta = None
        if lag.free:
            diag_theta = diag_theta + tt
            free_theta = theta * diag_theta > grad_theta
        d = np.where(active, -x, 0.0)
        if lag.free:
            d_theta = np.where(free_theta, 0.0, -theta)
        if free.any() or (lag.free and free_theta.any()):
            d_free, d_theta_free = lag.newton_direction(grad, r, s, sigma, free, tx, grad_theta,
                                                        free_theta, tt)
            d[free] = d_free
            if lag.free:
                d_theta[free_theta] = d_theta_free
        if lag.alpha > 0:
            # The utility's curvature grows like r^(−α−1) as a rate falls: a Newton step
            # that takes a user's rate below a fraction of its current value has left
            # the region where its model holds. Shorten that user's step alone, so that
            # one such user does not cut the step of all the others.
            dr = np.bincount(lag.p.user, lag.R * np.maximum(d, -x), minlength=lag.p.n_users)
            with np.errstate(divide="ignore", invalid="ignore"):
                cut = np.where(dr < 0, np.minimum(1.0, _RATE_KEEP * r / -dr), 1.0)
            d *= np.where(np.isfinite(cut), cut, 1.0)[lag.p.user]
        step = 1.0
        for _ in range(40):
            trial = np.maximum(x + step * d, 0.0)
            trial[blocked] = 0.0
            decrease = float(np.dot(grad, trial - x))
            trial_theta = None
            if lag.free:
                trial_theta = np.maximum(theta + step * d_theta, 0.0)
                decrease += float(np.dot(grad_theta, trial_theta - theta))
            f1 = merit(trial, trial_theta)
            if np.isfinite(f1) and f1 <= f0 + 1e-4 * min(decrease, 0.0):
                break
            step *= _backtrack(f0, f1, decrease)
        else:
            return steps, residual  # no decrease left at working precision
        x[:] = trial
        if lag.free:
            theta[:] = trial_theta
        if f1 >= f0:
            return steps, residual
        f0 = f1


def _backtrack(f0: float, f1: float, decrease: float) -> float:
    """Factor for the next trial step, from the quadratic through f0, the slope and f1.

    Far from the solution the Newton step can be orders of magnitude too long (the
    quadratic model does not see the bounds and kinks it crosses); the interpolated
    minimizer finds the right length in one or two trials where halving takes ten.
    """
    excess = f1 - f0 - decrease
    if not (np.isfinite(f1) and decrease < 0 and excess > 0):
        return 0.1 if not np.isfinite(f1) else 0.5
    return float(np.clip(-decrease / (2.0 * excess), 1e-3, 0.5))
