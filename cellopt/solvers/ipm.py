"""Primal-dual interior-point method with structured Newton systems (method ``ipm``).

The association problem — maximize ``Σ_i w_i U_α(r_i) − Σ_j c_j T_j − Σ_k θ_k E_k`` over
shares ``x ≥ 0`` (and free pattern shares ``θ ≥ 0``, ``Σ θ = 1`` in every share block)
subject to airtime ``Σ_{e∈g} x_e ≤ θ_g`` (or 1), backhaul ``T_j ≤ C_j`` and demand
``r_i ≤ d_i`` — is solved by Mehrotra's predictor–corrector on its KKT conditions, with
the utility handled as a convex nonlinear objective (its Hessian is one rank-one block
per user).

Why an interior point here
--------------------------
With power patterns nearly every user time-shares between patterns, so the optimum is
highly degenerate: thousands of near-ties between each user's links. Dual smoothing
(``dual``) then needs temperatures so low that its Newton steps get short, and active-
set Newton steps in the primal (``alm``) make large compensating moves along the ties.
An interior point follows the central path and needs a few dozen Newton steps whatever
the degeneracy.

Newton systems
--------------
Every step eliminates, in closed form, the bounds (diagonal), the demand rows (one
rank-one term per user) and each user's utility curvature (Sherman–Morrison per user,
all users at once), and is left with the rows: airtime of every group, backhaul of every
capped cell. That matrix, ``A Q⁻¹ Aᵀ + Ω``, couples two rows only where one user has
links in both; the pattern-share simplex of each block adds a low-rank term
(``P (D⁻¹ − D⁻¹1 1ᵀD⁻¹/1ᵀD⁻¹1) Pᵀ``, Woodbury for large blocks, see
:mod:`cellopt.solvers.linalg`). The same factorization serves the predictor and the
corrector.

Certificate
-----------
Every iteration repairs the current shares into a feasible point
(:func:`~cellopt.solvers.common.repair`) and evaluates the dual function g(μ, ν) of the
whole problem at the current row multipliers; the best of each is kept, and the method
stops when their rate-equivalent gap is at most ``tol``: the status is certified by the same
bound as every other method, not by the interior point's own residuals.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from cellopt.problem import Problem, utility_derivative
from cellopt.solution import Solution
from cellopt.solvers.arguments import check_arguments, check_problem
from cellopt.solvers.certificate import certified_gap, dual_bound
from cellopt.solvers.common import (
    block_zero_capacity,
    feasible_shares,
    one_blas_thread,
    recover_feasible,
    refuse_users_behind_closed_backhaul,
)
from cellopt.solvers.linalg import SymmetricSystem, share_curvature
from cellopt.solvers.registry import register
from cellopt.solvers.result import build_solution
from cellopt.status import FAILED, MAX_ITER, OPTIMAL, STOPPED, TIME_LIMIT

__all__ = ["solve_ipm"]

_STEP_TO_BOUNDARY = 0.99   # fraction of the way to the nearest bound a step may go
_MIN_STEP = 1e-10          # a step this short, twice in a row, ends the method ("failed")
_WEAK_COUPLING = 1e-6      # user couplings below this share of a row's diagonal: preconditioner only
_CG_MAX = 50               # most conjugate-gradient steps per Newton solve
_USERS_ROUTE_MAX = 4000    # Woodbury over the users (dense users × users) up to this many


class _Structure:
    """The problem as the interior point sees it: kept links, rows, shares, scales."""

    def __init__(self, problem: Problem):
        p = self.p = problem
        open_cell = p.backhaul_mbps > 0
        self.keep = np.flatnonzero(open_cell[p.cell])  # zero-capacity cells carry nothing
        user = p.user[self.keep]
        self.users, self.u = np.unique(user, return_inverse=True)
        refuse_users_behind_closed_backhaul(p)
        self.R = p.rate_mbps[self.keep]
        cell = p.cell[self.keep]
        self.L, self.U = len(self.R), len(self.users)
        self.alpha = p.alpha
        self.w = p.weight[self.users]
        self.kappa = p.price_per_mbps[cell] * self.R
        # Rows: airtime of every group with links, then backhaul of every capped cell
        # (scaled: T_j / C_j ≤ 1).
        self.groups, self.row = np.unique(p.group[self.keep], return_inverse=True)
        self.n_air = len(self.groups)
        capped = np.isfinite(p.backhaul_mbps[cell])
        self.cap_cells, cap_row = np.unique(cell[capped], return_inverse=True)
        self.cap_links = np.flatnonzero(capped)
        self.rho = self.R[capped] / p.backhaul_mbps[cell[capped]]
        self.cap_row = self.n_air + cap_row
        self.M = self.n_air + len(self.cap_cells)
        self.A = sp.csr_array(
            (np.r_[np.ones(self.L), self.rho],
             (np.r_[self.row, self.cap_row], np.r_[np.arange(self.L), self.cap_links])),
            shape=(self.M, self.L))
        # Demand rows r_i / d_i ≤ 1, folded into each user's curvature.
        demand = p.demand_mbps[self.users]
        self.dem = np.flatnonzero(np.isfinite(demand))
        self.inv_d = np.zeros(self.U)
        self.inv_d[self.dem] = 1.0 / demand[self.dem]
        # Pattern shares: one column per available (block, pattern); airtime rows of the
        # patterns carry −θ.
        self.free = p.free_shares
        if self.free:
            n_k = p.n_resources
            cost = p.block_cost
            avail = np.flatnonzero(np.isfinite(cost).ravel())
            column = np.full(cost.size, -1)
            column[avail] = np.arange(len(avail))
            g = self.groups
            self.row_col = column[p.cell_block[g // n_k] * n_k + g % n_k]
            self.col_block = avail // n_k
            self.n_blocks = cost.shape[0]
            self.E = cost.ravel()[avail]
            self.T = len(avail)
        else:
            self.T, self.n_blocks = 0, 0
        self.b = np.r_[np.zeros(self.n_air) if self.free else np.ones(self.n_air),
                       np.ones(len(self.cap_cells))]

    # ------------------------------------------------------------------ operators
    def Ax(self, x: np.ndarray) -> np.ndarray:
        return self.A @ x

    def ATy(self, y: np.ndarray) -> np.ndarray:
        return self.A.T @ y

    def P_theta(self, theta: np.ndarray) -> np.ndarray:
        """θ of every row (airtime rows of free patterns; 0 elsewhere), shape (M,)."""
        out = np.zeros(self.M)
        if self.free:
            out[:self.n_air] = theta[self.row_col]
        return out

    def PT_y(self, y: np.ndarray) -> np.ndarray:
        return np.bincount(self.row_col, y[:self.n_air], minlength=self.T)

    def block_sum(self, v: np.ndarray) -> np.ndarray:
        return np.bincount(self.col_block, v, minlength=self.n_blocks)

    def user_sum(self, v: np.ndarray) -> np.ndarray:
        return np.bincount(self.u, v, minlength=self.U)


class _State:
    """Primal x, s, s_d, θ and dual z, y, y_d, zt, η; all in the scaled objective."""

    def __init__(self, **kw: np.ndarray):
        self.__dict__.update(kw)

    def pairs(self) -> list[tuple[str, str]]:
        return [("x", "z"), ("s", "y"), ("sd", "yd"), ("theta", "zt")]

    def copy(self) -> _State:
        return _State(**{k: v.copy() for k, v in self.__dict__.items()})


@register("ipm", kind="optimizer", single_association=True, patterns=True, share_blocks=True)
def solve_ipm(
    problem: Problem,
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
) -> Solution:
    """Primal-dual interior point (Mehrotra predictor–corrector), certified by g(μ, ν).

    See the module docstring for the method.

    Parameters
    ----------
    problem : Problem
    tol : float
        Target certified rate-equivalent gap (:func:`~cellopt.solvers.certificate.certified_gap`).
    max_iter : int, optional
        Interior-point iterations (default 200).
    time_limit_s : float, optional
    callback : callable, optional
        Called after every iteration with the history row (a dict); True stops.

    Returns
    -------
    Solution
        ``history`` columns: iteration, objective, upper_bound, gap (of the best feasible
        point and the best bound so far), complementarity (mean of the products x·z,
        s·y, ..., scaled objective), primal_residual, dual_residual, step, time_s.
    """
    t0 = time.perf_counter()
    p = problem
    check_problem(p)
    check_arguments("ipm", tol=tol, max_iter=max_iter, time_limit_s=time_limit_s,
                    callback=callback, single_association=False, options={})
    max_iter = 200 if max_iter is None else int(max_iter)
    st = _Structure(p)
    best: dict[str, Any] = dict(bound=np.inf, mu=np.zeros(p.n_groups), nu=np.zeros(p.n_cells),
                                obj=-np.inf, x=np.zeros(p.n_links), theta=feasible_shares(p, None),
                                util=-np.inf)
    history: list[dict[str, Any]] = []
    if st.L == 0:  # nothing to allocate: x = () is optimal (users without links, α < 1)
        _certify(p, st, None, 1.0, best)
        status, message = OPTIMAL, "no links, nothing to solve"
        return _finish(p, best, status, message, 0, t0, history, tol)

    scale = _objective_scale(st)
    v = _initial_point(st, scale)
    status, message = MAX_ITER, f"reached max_iter={max_iter} before gap ≤ tol={tol:g}"
    short_steps = 0
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        res = _residuals(st, v, scale)
        newton = _NewtonSystem(st, v, res)
        # Predictor (affine scaling), then Mehrotra's corrector with centring σ = (μ_aff/μ)³.
        comp = {k: getattr(v, a) * getattr(v, b) for k, (a, b) in zip("xsdt", v.pairs(),
                                                                       strict=True)}
        d_aff = newton.direction(comp)
        step_aff = _max_step(v, d_aff)
        mu = _complementarity(v)
        mu_aff = _complementarity(v, d_aff, step_aff)
        sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
        for k, (a, b) in zip("xsdt", v.pairs(), strict=True):
            comp[k] = comp[k] + d_aff[a] * d_aff[b] - sigma * mu
        d = newton.direction(comp)
        step = _STEP_TO_BOUNDARY * _max_step(v, d)
        step = min(step, 1.0)
        for key in d:
            setattr(v, key, getattr(v, key) + step * d[key])
        _certify(p, st, v, scale, best)
        gap = certified_gap(p, best["bound"], best["obj"], best["util"])
        gap = np.inf if gap is None else gap
        row = dict(iteration=n_iter, objective=best["obj"], upper_bound=best["bound"], gap=gap,
                   complementarity=_complementarity(v), primal_residual=res["primal_norm"],
                   dual_residual=res["dual_norm"], step=step, time_s=time.perf_counter() - t0)
        history.append(row)
        if gap <= tol:
            status, message = OPTIMAL, f"certified gap {gap:.2e} ≤ tol={tol:g}"
            break
        if callback is not None and callback(dict(row)):
            status, message = STOPPED, f"the callback asked to stop (gap {gap:.2e})"
            break
        if time_limit_s is not None and time.perf_counter() - t0 > time_limit_s:
            status, message = TIME_LIMIT, f"reached time_limit_s={time_limit_s:g} (gap {gap:.2e})"
            break
        short_steps = short_steps + 1 if step < _MIN_STEP else 0
        if short_steps >= 2:
            status = FAILED
            message = f"the interior point stalled (steps < {_MIN_STEP:g}); certified gap {gap:.2e}"
            break
    return _finish(p, best, status, message, n_iter, t0, history, tol)


# ---------------------------------------------------------------------- pieces
def _objective_scale(st: _Structure) -> float:
    """A typical value of w_i U'(r_i) r_i (= w_i for log): the objective is divided by it so
    that multipliers are of order one."""
    r = np.maximum(st.user_sum(st.R) / 4.0, 1e-12)  # a rough rate per user
    value = st.w * utility_derivative(r, st.alpha) * r
    return float(max(np.median(value), 1e-300))


def _user_terms(st: _Structure, x: np.ndarray, scale: float) -> tuple[np.ndarray, ...]:
    """Rates, −U'(r) w / scale (gradient in r) and its derivative h ≥ 0, per user."""
    r = st.user_sum(st.R * x)
    with np.errstate(divide="ignore", over="ignore"):
        marg = st.w * utility_derivative(r, st.alpha) / scale
        h = st.alpha * marg / r if st.alpha > 0 else np.zeros(st.U)
    return r, -marg, np.where(np.isfinite(h), h, 0.0)


def _initial_point(st: _Structure, scale: float) -> _State:
    """Half of every row's capacity spread over its links, prices at the equal-share value."""
    theta = np.ones(st.T) / st.block_sum(np.ones(st.T))[st.col_block] if st.free else np.zeros(0)
    cap = st.P_theta(theta)[:st.n_air] if st.free else np.ones(st.n_air)
    per_row = np.bincount(st.row, minlength=st.n_air)
    x = 0.5 * cap[st.row] / per_row[st.row]
    # Users with a demand start at most at half of it (rows r_i / d_i ≤ 1 are scale-free).
    r = st.user_sum(st.R * x)
    x *= np.minimum(1.0, 0.5 / np.maximum(r * st.inv_d, 1e-300))[st.u]
    ax = st.Ax(x)
    s = np.maximum(st.b + st.P_theta(theta) - ax, 0.5 * np.maximum(st.b + st.P_theta(theta), 1.0))
    r, grad_r, _ = _user_terms(st, x, scale)
    value = np.maximum(-grad_r[st.u] * st.R - st.kappa / scale, 0.0)   # per unit share
    y_air = np.bincount(st.row, value * x, minlength=st.n_air) / np.maximum(ax[:st.n_air], 1e-300)
    typical = float(np.median(y_air[y_air > 0])) if (y_air > 0).any() else 1.0
    floor = 1e-2 * typical
    y = np.r_[np.maximum(y_air, floor), np.full(st.M - st.n_air, floor)]
    sd = np.maximum(1.0 - r[st.dem] * st.inv_d[st.dem], 0.5)
    yd = np.full(len(st.dem), floor)
    z = grad_r[st.u] * st.R + st.kappa / scale + st.ATy(y)
    z = np.maximum(z, floor * np.maximum(st.R / np.maximum(r[st.u], 1e-300), 1e-3))
    zt = np.zeros(0)
    eta = np.zeros(0)
    if st.free:
        net = st.PT_y(y) - st.E / scale                     # value of each share column
        top = np.full(st.n_blocks, -np.inf)
        np.maximum.at(top, st.col_block, net)
        eta = top + floor
        zt = eta[st.col_block] - net
    return _balance(_State(x=x, z=z, s=s, y=y, sd=sd, yd=yd, theta=theta, zt=zt, eta=eta))


def _balance(v: _State) -> _State:
    """Raise the dual of every pair whose product is below half the mean product.

    The cold start's products differ by orders of magnitude between shares, slacks and
    pattern shares; the first centring steps would otherwise be spent evening them out
    (steps of 1e-2 and less, measured); this costs a little dual residual instead.
    """
    mu = _complementarity(v)
    for a, b in v.pairs():  # four kinds of pairs
        va, vb = getattr(v, a), getattr(v, b)
        if len(va):
            setattr(v, b, np.maximum(vb, 0.5 * mu / va))
    return v


def _residuals(st: _Structure, v: _State, scale: float) -> dict[str, Any]:
    r, grad_r, h = _user_terms(st, v.x, scale)
    dem_y = np.zeros(st.U)
    dem_y[st.dem] = v.yd
    r_x = st.R * (grad_r + dem_y * st.inv_d)[st.u] + st.kappa / scale + st.ATy(v.y) - v.z
    r_p = st.Ax(v.x) - st.P_theta(v.theta) + v.s - st.b
    r_d = r[st.dem] * st.inv_d[st.dem] + v.sd - 1.0
    out = dict(r_x=r_x, r_p=r_p, r_d=r_d, h=h)
    norms = [np.abs(r_p).max(initial=0.0), np.abs(r_d).max(initial=0.0)]
    dual = [np.abs(r_x).max(initial=0.0)]
    if st.free:
        out["r_t"] = st.E / scale - st.PT_y(v.y) + v.eta[st.col_block] - v.zt
        out["r_b"] = st.block_sum(v.theta) - 1.0
        norms.append(np.abs(out["r_b"]).max(initial=0.0))
        dual.append(np.abs(out["r_t"]).max(initial=0.0))
    out["primal_norm"], out["dual_norm"] = float(max(norms)), float(max(dual))
    return out


class _NewtonSystem:
    """The reduced Newton system of one iteration, factorized once for both directions.

    ``N = A Q⁻¹ Aᵀ + Ω (+ the share curvature)`` is applied exactly, as operators, and
    solved by conjugate gradients preconditioned with the factorization of an
    approximation Ñ that leaves out the weak couplings: a link whose user term
    ``β_i (R_e / D_e)²`` is below 1e-6 of its row's diagonal (a link the interior point
    is driving to zero) couples nothing in Ñ. Ñ stays positive definite (a principal
    part of each user's positive definite block), and near the optimum, where each user
    keeps a few links, it is far sparser than N.
    """

    def __init__(self, st: _Structure, v: _State, res: dict[str, Any]):
        self.st, self.v, self.res = st, v, res
        self.D = v.z / v.x
        self.omega = v.s / v.y
        # Per-user curvature: the utility's, plus the demand row's (y_d / s_d) / d².
        h = res["h"].copy()
        h[st.dem] += (v.yd / v.sd) * st.inv_d[st.dem] ** 2
        self.h = h
        rd = st.R / self.D
        self.beta = h / (1.0 + h * st.user_sum(st.R * rd))
        N0 = _outer_rows(st, 1.0 / self.D) + sp.diags_array(self.omega)   # A D⁻¹ Aᵀ + Ω
        self.curvature = None
        if st.free:
            self.Dt = v.zt / v.theta
            rows = np.arange(st.n_air)
            self.curvature = share_curvature(st.M, rows, st.row_col, st.col_block,
                                             1.0 / self.Dt, np.ones(st.M))
        self.N0 = N0
        strong = self.beta[st.u] * rd * rd >= _WEAK_COUPLING * N0.diagonal()[st.row]
        # Route: Woodbury over the users when there are far more rows (patterns × cells)
        # than users, else the rows' system with the strong couplings.
        n_users = int((self.beta > 0).sum())
        explicit = self.curvature is not None and self.curvature[0].nnz > 0
        if not explicit and 0 < n_users <= _USERS_ROUTE_MAX and 2 * n_users < st.M:
            self.solver = _UsersRoute(self, N0, rd)
            return
        Tm = _rows_by_users(st, np.flatnonzero(strong), rd, st.u, st.U)
        approx = SymmetricSystem(N0 - Tm @ sp.diags_array(self.beta) @ Tm.T)
        if self.curvature is not None:
            approx.add(self.curvature)
        self.solver = approx.restricted(np.arange(st.M), approx.diagonal())

    def apply(self, vec: np.ndarray) -> np.ndarray:
        """N vec, exactly."""
        st = self.st
        out = st.Ax(self.q_inv(st.ATy(vec))) + self.omega * vec
        if self.curvature is not None:
            explicit, U, C, _ = self.curvature
            out = out + explicit @ vec
            if U is not None:
                out = out + U @ (C @ (U.T @ vec))
        return out

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """N⁻¹ rhs by preconditioned conjugate gradients (relative residual 1e-10)."""
        x = self.solver.solve(rhs)
        r = rhs - self.apply(x)
        target = 1e-10 * float(np.linalg.norm(rhs))
        if np.linalg.norm(r) <= target:
            return x
        z = self.solver.solve(r)
        d = z.copy()
        rz = float(r @ z)
        for _ in range(_CG_MAX):
            nd = self.apply(d)
            step = rz / float(d @ nd)
            x = x + step * d
            r = r - step * nd
            if np.linalg.norm(r) <= target:
                break
            z = self.solver.solve(r)
            rz_new = float(r @ z)
            d = z + (rz_new / rz) * d
            rz = rz_new
        return x

    def q_inv(self, vec: np.ndarray) -> np.ndarray:
        """Q⁻¹ vec with Q = diag(D) + h_i R_i R_iᵀ per user (Sherman–Morrison)."""
        st = self.st
        q = vec / self.D
        return q - (st.R / self.D) * (self.beta * st.user_sum(st.R * q))[st.u]

    def direction(self, comp: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Newton direction for complementarity right-hand sides `comp` (x·z − target, ...)."""
        st, v, res = self.st, self.v, self.res
        rc_x, rc_s, rc_d, rc_t = comp["x"], comp["s"], comp["d"], comp["t"]
        # Demand rows folded into x: A_dᵀ (y_d/s_d)(r_d − rc_d/y_d).
        fold = np.zeros(st.U)
        fold[st.dem] = (v.yd / v.sd) * (res["r_d"] - rc_d / v.yd) * st.inv_d[st.dem]
        rho_x = -res["r_x"] - rc_x / v.x - st.R * fold[st.u]
        rho_p = -res["r_p"] + rc_s / v.y
        rhs = st.Ax(self.q_inv(rho_x)) - rho_p
        if st.free:
            rho_t = -res["r_t"] - rc_t / v.theta
            inv_dt = 1.0 / self.Dt
            s_b = st.block_sum(inv_dt)
            corr = (st.block_sum(inv_dt * rho_t) + res["r_b"]) / s_b
            rhs = rhs - st.P_theta(inv_dt * rho_t) + st.P_theta(inv_dt * corr[st.col_block])
        dy = self.solve(rhs)
        out = dict(y=dy)
        if st.free:
            d_eta = (st.block_sum(inv_dt * rho_t) + st.block_sum(inv_dt * st.PT_y(dy))
                     + res["r_b"]) / s_b
            d_theta = inv_dt * (rho_t + st.PT_y(dy) - d_eta[st.col_block])
            out.update(eta=d_eta, theta=d_theta, zt=(-rc_t - v.zt * d_theta) / v.theta)
        else:
            out.update(eta=np.zeros(0), theta=np.zeros(0), zt=np.zeros(0))
        dx = self.q_inv(rho_x - st.ATy(dy))
        out["x"] = dx
        out["z"] = (-rc_x - v.z * dx) / v.x
        out["s"] = (-rc_s - v.s * dy) / v.y
        a_dx = st.user_sum(st.R * dx)[st.dem] * st.inv_d[st.dem]
        d_yd = (v.yd / v.sd) * (a_dx + res["r_d"] - rc_d / v.yd)
        out["yd"] = d_yd
        out["sd"] = (-rc_d - v.sd * d_yd) / v.yd
        return out


def _outer_rows(st: _Structure, weight: np.ndarray) -> sp.csr_array:
    """``A diag(weight) Aᵀ`` (rows × rows) without a sparse product: diagonal on the airtime
    rows, plus each capped cell's backhaul row and its cross terms."""
    diag = np.bincount(st.row, weight, minlength=st.M)
    rows, cols, vals = [np.arange(st.M)], [np.arange(st.M)], [diag]
    if len(st.cap_links):
        w = weight[st.cap_links]
        diag[st.n_air:] = np.bincount(st.cap_row - st.n_air, st.rho ** 2 * w,
                                      minlength=st.M - st.n_air)
        cross_r, cross_c = st.row[st.cap_links], st.cap_row
        rows += [cross_r, cross_c]
        cols += [cross_c, cross_r]
        vals += [st.rho * w, st.rho * w]
    return sp.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                        shape=(st.M, st.M))


def _rows_by_users(st: _Structure, links: np.ndarray, rd: np.ndarray, column: np.ndarray,
                   n_columns: int) -> sp.csr_array:
    """T = A diag(R/D) E on `links`: the rows × users matrix of the users' links (E maps
    each link to its user's column `column[link]`)."""
    cap_pos = np.full(st.L, -1)
    cap_pos[st.cap_links] = np.arange(len(st.cap_links))
    capped = links[cap_pos[links] >= 0]
    rows = np.r_[st.row[links], st.cap_row[cap_pos[capped]]]
    cols = np.r_[column[links], column[capped]]
    vals = np.r_[rd[links], st.rho[cap_pos[capped]] * rd[capped]]
    return sp.csr_array((vals, (rows, cols)), shape=(st.M, n_columns))


class _UsersRoute:
    """N⁻¹ by Woodbury over the users: for many rows (patterns × cells) and few users.

    ``N = Δ − T β Tᵀ`` with Δ = A D⁻¹ Aᵀ + Ω — diagonal on airtime rows, plus one arrow
    per capped cell (its groups and its backhaul row), inverted in closed form — and T
    the rows × users matrix of the users' links. Then ``N⁻¹ = Δ⁻¹ + Δ⁻¹ T K⁻¹ Tᵀ Δ⁻¹``
    with ``K = β⁻¹ − Tᵀ Δ⁻¹ T``, users × users, positive definite (a Schur complement of a
    positive definite matrix), factorized densely. The share curvature ``U C Uᵀ`` of one
    large block joins by a second Woodbury step.
    """

    def __init__(self, system: _NewtonSystem, N0: sp.sparray, rd: np.ndarray):
        st = system.st
        self.M = st.M
        active = np.flatnonzero(system.beta > 0)
        local = np.full(st.U, -1)
        local[active] = np.arange(len(active))
        link = np.flatnonzero(local[st.u] >= 0)
        T = _rows_by_users(st, link, rd, local[st.u], len(active))
        diag = N0.diagonal()
        self.inv_d = np.where(np.arange(st.M) < st.n_air, 1.0 / diag, 0.0)
        # Capped cells: w_j = [−v/d on the cell's airtime rows; 1 on its backhaul row].
        self.W = None
        if st.M > st.n_air:
            cap = sp.csr_array(N0[st.n_air:])              # backhaul rows of N0
            cap = sp.coo_array(cap)
            on_air = cap.col < st.n_air
            v_rows, v_cols, v_vals = cap.row[on_air], cap.col[on_air], cap.data[on_air]
            sigma = diag[st.n_air:] - np.bincount(v_rows, v_vals ** 2 / diag[v_cols],
                                                  minlength=st.M - st.n_air)
            self.W = sp.csr_array(
                (np.r_[-v_vals / diag[v_cols], np.ones(st.M - st.n_air)],
                 (np.r_[v_cols, np.arange(st.n_air, st.M)],
                  np.r_[v_rows, np.arange(st.M - st.n_air)])), shape=(st.M, st.M - st.n_air))
            self.inv_sigma = 1.0 / sigma
        dT = sp.diags_array(self.inv_d) @ T                 # Δ⁻¹ T, sparse (rows × users)
        if self.W is not None:
            dT = dT + self.W @ sp.diags_array(self.inv_sigma) @ (self.W.T @ T)
        self.dT = sp.csr_array(dT)
        K = (T.T @ self.dT).toarray()
        np.negative(K, out=K)                                # K = β⁻¹ − Tᵀ Δ⁻¹ T
        K[np.diag_indices_from(K)] += 1.0 / system.beta[active]
        with one_blas_thread():
            self.K = scipy.linalg.cho_factor(K, check_finite=False)
        self.low_rank = None
        if system.curvature is not None and system.curvature[1] is not None:
            U, C = system.curvature[1].toarray(), system.curvature[2]
            nu = self.n_inv(U)
            with one_blas_thread():
                cap_m = np.eye(len(C)) + C @ (U.T @ nu)
                self.low_rank = (U, C, nu, scipy.linalg.lu_factor(cap_m))

    def delta_inv(self, X: np.ndarray) -> np.ndarray:
        out = X * (self.inv_d if X.ndim == 1 else self.inv_d[:, None])
        if self.W is not None:
            wx = self.W.T @ X
            out = out + self.W @ (wx * (self.inv_sigma if X.ndim == 1 else self.inv_sigma[:, None]))
        return out

    def n_inv(self, X: np.ndarray) -> np.ndarray:
        dx = self.delta_inv(X)
        with one_blas_thread():
            return dx + self.dT @ scipy.linalg.cho_solve(self.K, self.dT.T @ X, check_finite=False)

    def solve(self, b: np.ndarray) -> np.ndarray:
        out = self.n_inv(b)
        if self.low_rank is not None:
            U, C, nu, cap_lu = self.low_rank
            with one_blas_thread():
                out = out - nu @ scipy.linalg.lu_solve(cap_lu, C @ (U.T @ out))
        return out


def _max_step(v: _State, d: dict[str, np.ndarray]) -> float:
    """Largest step in [0, ∞) keeping every positive variable positive."""
    step = np.inf
    for a, b in v.pairs():
        for key in (a, b):
            val, dv = getattr(v, key), d[key]
            neg = dv < 0
            if neg.any():
                step = min(step, float(np.min(-val[neg] / dv[neg])))
    return step


def _complementarity(v: _State, d: dict[str, np.ndarray] | None = None, step: float = 0.0
                     ) -> float:
    """Mean of the complementarity products, at v + min(step, 1)·d if d is given."""
    total, count = 0.0, 0
    t = min(step, 1.0)
    for a, b in v.pairs():
        va, vb = getattr(v, a), getattr(v, b)
        if d is not None:
            va, vb = va + t * d[a], vb + t * d[b]
        total += float(va @ vb)
        count += len(va)
    return total / max(count, 1)


def _certify(p: Problem, st: _Structure, v: _State | None, scale: float,
             best: dict[str, Any]) -> None:
    """Keep the best feasible point (repaired shares) and the best bound g(μ, ν) so far."""
    x = np.zeros(p.n_links)
    mu = np.zeros(p.n_groups)
    nu = np.zeros(p.n_cells)
    theta = None
    if v is not None:
        x[st.keep] = v.x
        theta = feasible_shares(p, _full_shares(p, st, v.theta)) if st.free else None
        mu[st.groups] = np.maximum(v.y[:st.n_air], 0.0) * scale
        nu[st.cap_cells] = np.maximum(v.y[st.n_air:], 0.0) * scale \
            / p.backhaul_mbps[st.cap_cells]
    else:
        theta = feasible_shares(p, None)
    priced = np.zeros(p.n_groups, bool)
    priced[st.groups] = mu[st.groups] > 1e-9 * max(float(mu.max(initial=0.0)), 1e-300)
    x_feas, obj, theta, util = recover_feasible(p, x, priced, [theta])
    if obj > best["obj"]:
        best.update(obj=obj, x=x_feas, theta=theta, util=util)
    nu = block_zero_capacity(p, mu, nu)
    bound = dual_bound(p, mu, nu)
    if bound < best["bound"]:
        best.update(bound=bound, mu=mu, nu=nu)


def _full_shares(p: Problem, st: _Structure, theta: np.ndarray) -> np.ndarray:
    full = np.zeros(p.block_cost.size)
    full[np.isfinite(p.block_cost).ravel()] = np.maximum(theta, 0.0)
    return full.reshape(p.block_cost.shape)


def _finish(p: Problem, best: dict[str, Any], status: str, message: str, n_iter: int,
            t0: float, history: list[dict[str, Any]], tol: float) -> Solution:
    bound = dual_bound(p, best["mu"], best["nu"])
    gap = certified_gap(p, bound, best["obj"], best["util"])
    if status == OPTIMAL and (gap is None or gap > tol):
        status, message = MAX_ITER, f"the recomputed certificate gives gap {gap} > tol={tol:g}"
    return build_solution(p, best["x"], method="ipm", status=status, message=message,
                          mu=best["mu"], nu=best["nu"], upper_bound=bound, n_iter=n_iter,
                          wall_s=time.perf_counter() - t0, history=history, theta=best["theta"])
