"""Dual decomposition over the prices, with primal recovery.

The dual function of the association problem (docs/model.md),

    g(μ, ν) = Σ_g μ_g + Σ_j ν_j C_j + Σ_i φ_i(π_i*),   π_i* = min_{e∋i} π_e,
    π_e = μ_g / R_e + c_j + ν_j,   φ_i(π) = max_{0≤r≤r̄_i} [w_i U(r) − π r],

is an upper bound on the optimum for every μ, ν ≥ 0 (one μ per airtime group
``g = cell·K + resource``, one ν per cell with a finite backhaul cap). This method
minimizes it and recovers feasible shares from the prices.

Design, and why
---------------
*Smoothing.* g is non-smooth: each user buys only at its cheapest link, so g has a kink
wherever a user is indifferent between links — exactly where the optimum sits (the
users split between cells or resources are the ones that balance the load). A
subgradient method needs ~1/ε² steps for a gap ε. Instead the minimum is replaced by
the scale-free soft-min, the power mean

    m_τ = (Σ_e π_e^{−1/τ})^{−τ} ≤ min_e π_e,

computed in logs with a log-sum-exp over each user's links. φ_i is convex and
decreasing and m_τ concave in π (π affine in the prices), so
``g_τ = Σμ + ΣνC + Σφ(m_τ)`` is convex, smooth, and ≥ g. Its gradient is the airtime /
backhaul residual of the *implied shares*

    x_e(τ) = r_i · p_e · (m_τ / π_e) / R_e,     p_e = π_e^{−1/τ} / Σ_{e'∋i} π_{e'}^{−1/τ}

(r_i = best rate at m_τ): ∂g_τ/∂μ_g = 1 − Σ_{e∈g} x_e, ∂g_τ/∂ν_j = C_j − Σ_{e∈j} R_e x_e.
The power mean (not an additive soft-min) is used because prices differ by orders of
magnitude between users (π ~ w/r): a *relative* temperature τ means the same for every
user and needs no problem-dependent scale. For α = 0, where φ itself is piecewise
linear, φ is smoothed too (a softplus at the same relative temperature).

*Optimizer: projected Newton, not L-BFGS-B.* An L-BFGS-B version (the first one
written) solved most instances but stalled on ~10 % of random instances with backhaul
caps and several resources at a 1e-5 gap: there a capped cell's groups have μ = 0 at
the optimum, every resource of the cell has the same price for a user, and the split
between resources — which decides feasibility of the recovered shares — hangs on price
differences of relative size τ, i.e. on curvature ~1/τ that a quasi-Newton memory does
not capture. The Hessian of g_τ, however, is cheap and exact here: per user it is a
diagonal plus a rank-one matrix in link space,

    ∇²_π [φ(m_τ)] = r (1+1/τ) diag(a/π) + (h − r (1+1/τ)/m) a aᵀ,   a = ∂m/∂π = p m/π,

(h = −r'(m) ≥ 0), mapped to prices by the sparse Jacobian ∂π/∂(μ, ν). Assembled with
two sparse products (links whose weight p_e < 1e-14 are left out) it is a sparse
(groups + caps)² matrix whose off-diagonal entries come only from users that are
(nearly) split; it is factorized densely (Cholesky, Jacobi-scaled, single-threaded BLAS)
up to 2500 prices and with a sparse LU beyond. Projected Newton (Bertsekas): prices
with a positive gradient at their lower bound are held there, the rest take the Newton
step, and an Armijo search runs along the projection arc; near the minimizer this
converges quadratically at any τ, so the smoothing can be driven as low as the
certificate needs. Far from it the quadratic model is good only for relative price
changes of order τ (the users' soft choices change by a factor e per relative change τ),
so the search tries, in turn: the Newton step with each price clipped (to at most 3×
growth and 3/4 of the way to its bound), the unclipped Newton step, and a diagonally
scaled gradient step. Prices on which g_τ is locally linear (no curvature, e.g. a group
nobody buys from) are moved geometrically (halved toward the bound, or doubled) instead.

*Cold start.* The equal-share prices can be off by 10× or more (a small cell that the
best-rate rule leaves nearly empty attracts many users at the optimum). Before the first
Newton step, up to three multiplicative adjustments ``μ ← μ·(airtime/capacity)^α``
(factor clipped to [1/4, 4]) are kept while they lower g_τ: one evaluation each, no
Hessian.

*Directions along which g_τ is linear.* A user held at its demand buys the same rate
whatever its price (until the price reaches its marginal utility there), so g_τ has no
curvature along the prices of groups whose buyers are all held at their demand — not
only in single prices ("flat", above) but jointly: every price scaled together when all
users are at their demand, the case of light traffic. Newton steps then crawl (the
curvature of the other directions sets their length). Two geometric searches cover
these: after every step the flat prices alone (×2, ×4, ×16, ×256, or halving their
distance to the bound, while g_τ falls), and after a step shorter than 1 % of the
Newton step, or none, all prices scaled together the same way.

*Nearly collinear prices.* A capped cell's ν and its groups' μ enter the same links'
prices; when they hardly differ in effect the Newton step moves them hugely in
opposite directions. When the plain step would move a price more than 1000× its size,
Levenberg–Marquardt steps (λ = 1 and 10 times the diagonal added, in the Jacobi-scaled
system) are tried before it.

Continuation: τ = 0.05 first; after a converged stage τ ×= 0.3·tol/gap clipped to
[0.2, 0.3] (×0.5 after a stage that stalled), warm-started. A stage is converged when
the airtime / backhaul residual of the implied shares, in objective units, is below
max(0.1·tol·|objective|, 0.5·(g_τ − g)): more accuracy than the stage's own smoothing
error buys nothing.
Why few stages suffice: at the minimizer of g_τ the implied shares are feasible and
leave a duality gap ``Σ_i w_i (U(r_i) − U(κ_i r_i))`` with ``κ_i = m_τ E_p[1/π] ≤ 1``
— essentially zero for a user with one clearly cheapest link, ≈ w_i τ log 2 for a user
split between two; only the O(#groups) split users pay.

*Scaling and zero prices.* Prices are optimized in units of their "equal-share" value
(each user on its best-rate link, groups shared equally: μ_g = Σ_{i∈g} (w_i U'(r_i) −
c_j)⁺ r_i; ν_j in units of the typical link price of cell j). π_e = 0 (μ_g = 0 on a
cell with no price c_j) would make log π singular, so on such groups μ_g is bounded
below by δ_g = 1e-4·min(tol, 0.01)·(unit of μ_g) instead of 0: this is a tighter constraint on the
prices, so the certificate stays exact, and it costs at most δ_g of bound per group.
Cells with backhaul C_j = 0 carry nothing: their links are left out (x = 0) and their ν_j
is set, at the end, just high enough that no user would buy there, so g over the whole
problem equals g over the rest.

*Primal recovery.* At every accepted iterate the implied shares x(τ) are made feasible
by :func:`~cellopt.solvers.common.repair` (overloaded groups, capped cells and demands
scaled down), and by a "fill" variant that first rescales every priced group (μ_g > 0)
to airtime exactly 1 (priced groups are saturated at the optimum); the better is kept.
With finite demands a third candidate serves the users within 10 % of their demand
exactly at it and shares each group's remaining airtime among the others
(:func:`~cellopt.solvers.common.demand_first`): smoothed shares leave a user split
between links a few % short, which repair then cuts further, and at α ≥ 1 that costs
more than the tolerance.

*Polish.* When a stage ends uncertified although the bound is within its smoothing
error of the optimum and the stage barely moved the feasible objective, the problem
restricted to every user's links within a relative max(10τ, 10⁻³) of its cheapest price
(and the links of groups at their floor δ_g) is solved by ``ipm`` (at most three times
per run): at the optimal prices every link in use is among the cheapest, but which of
the tied users go where — the split that balances the cells — is what smoothed shares
get only approximately, and users held at their demand cannot absorb the rest.

*Compiled kernels.* The passes over links — the soft-min and the implied shares, the
Hessian (assembled row by row straight into CSR), the recovery candidates — run as numba
kernels (:mod:`cellopt.solvers.kernels`) when :func:`cellopt.jit.compiled` is True; the
numpy forms here and in :mod:`cellopt.solvers.common` are the reference the tests hold
them to and the fallback (``CELLOPT_JIT=0``, or numba not importable). See
docs/model.md, "Compiled kernels".

The best feasible x and the best (lowest) exact bound seen — at every evaluation,
line-search trials included — are kept separately: any prices give a bound and any
feasible x a lower bound, and the reported gap is the rate-equivalent
:func:`~cellopt.solvers.certificate.certified_gap` of those two; its bound is always the
exact, unsmoothed g at the returned prices.

Iterations, history, stopping
-----------------------------
One iteration = one projected Newton step; its line search needs one evaluation of g_τ
most of the time (more far from the minimizer; ``n_eval`` counts them). An evaluation is
one round of users best-responding to prices and cells aggregating airtime and traffic,
plus the exact bound. Row 0 of ``history`` is the starting point, then one row per
iteration (iteration, stage, tau, objective, upper_bound, gap — of the best so far —,
smoothed_bound = g_τ at the current prices, grad_norm = largest projected gradient
component, newton_decrement, step = line-search step, n_eval, time_s); each row is
passed to ``callback``. Status "optimal" when the certified gap ≤ tol; otherwise
"max_iter" (default 500 iterations), "time_limit", "stopped" (callback returned True), or
"failed" if no descent step exists at the smallest temperature (never seen in tests).

Behaviour
---------
On the solver benchmark family (``benchmarks/bench_solvers.py``, 22 networks of 15,000 to
10⁶ links): 1–22 Newton steps. Small random instances with caps, prices and demands
(tests): median 15 steps, 2 of 800 stop at max_iter at tol 1e-4 with a gap just above
it. Limits: below tol ≈ 1e-6 the last stages run at τ ~ 1e-6, where Newton steps get
short; an occasional instance then ends at max_iter with a gap just above tol (the bound
is still valid, the status honest). Times against the ``reference``, measured with a
stated command and load, are in docs/model.md ("Measured performance"), not here.

Distributed by design — and what is global here
-----------------------------------------------
The O(L) work is local: each user needs only the prices of its own links (its soft-min,
best response and its small diagonal-plus-rank-one curvature block), each cell only what
its own users request (its airtime / backhaul residual = its gradient component, and
its rows of the Hessian, which couple it only to cells that share a split user). Global
in this variant: the Newton linear solve (a (groups + caps)-sized system: a coordinator,
or a distributed linear solver such as a few Jacobi / CG sweeps between neighbouring
cells), the line search (it needs the total g_τ), the continuation schedule and the
certificate (total bound and objective). A fully local variant would replace the
Newton step by per-cell diagonal-Newton price steps ``μ_g ← max(δ_g, μ_g − ∂_g g / ∂²_gg g)``
at the cost of many more iterations.

The code follows that split: :func:`newton_prices` is the coordinator's loop, and it
sees the users only through a :class:`DualModel` (evaluate g_τ, its Hessian, recover a
feasible point). ``dual`` runs it on :class:`SmoothedDual`, every user in this process;
``dual_dask`` (:mod:`cellopt.solvers.dask_dual`) on users held by Dask workers, with the
same loop.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from cellopt import jit
from cellopt.checks import check_count, check_number
from cellopt.errors import ValidationError
from cellopt.problem import Problem, utility, utility_derivative
from cellopt.solution import Solution
from cellopt.solvers import kernels
from cellopt.solvers.certificate import certified_gap, dual_bound, utility_scale
from cellopt.solvers.common import (
    block_zero_capacity,
    recover_feasible,
    refuse_users_behind_closed_backhaul,
    user_value,
)
from cellopt.solvers.ipm import solve_ipm
from cellopt.solvers.linalg import SymmetricSystem, share_curvature
from cellopt.solvers.registry import check_arguments, check_problem, check_warm_start, register
from cellopt.solvers.result import build_solution
from cellopt.status import FAILED, MAX_ITER, OPTIMAL, STOPPED, TIME_LIMIT

__all__ = ["DualModel", "DualPoint", "NewtonResult", "Recovered", "SmoothedDual", "newton_prices",
           "solve_dual"]

#: Below this α, ``dual``'s smoothed model uses the linear utility (α = 0): an α of 1e-12
#: took 126 Newton steps against 16 at α = 0, with the same answer to 1e-9.
LINEAR_ALPHA = 1e-8
#: A backhaul cap whose equal-share price exceeds the airtime share's link price by this
#: factor is priced in its own units (far below what the airtime could carry).
_CAP_BINDS = 100.0
_CLIP_FLOOR = 1e-3       # growth limit 3·max(y, this) for prices with a positive floor
_ACTIVE_WEIGHT = 1e-14   # links with soft-min weight p_e below this are left out of the Hessian
_DAMPING = (1.0, 10.0)   # Levenberg–Marquardt damping of the fallback Newton steps
_HUGE_REACH = 1e3        # ... tried before the plain Newton step when it moves a price this far
_SHORT_STEP = 1e-2       # after a shorter Newton step, every price is scaled too
_BACKTRACK = (0.3, 0.5)   # a rejected step t is followed by one in [0.3 t, 0.5 t] (_backtrack)
_MAX_POLISH = 3          # restricted solves (SmoothedDual.polish) per run, at most
_ADJUST_STEPS = 3        # multiplicative price adjustments before Newton, from a cold start
# The Newton systems are small (groups + caps): multithreaded BLAS only adds overhead, and
# on a loaded machine OpenBLAS's spinning threads made a 400 × 400 Cholesky take 0.35 s
# instead of 2 ms. The factorizations run single-threaded.


class DualPoint:
    """One evaluation of the smoothed dual at scaled prices y.

    What :func:`newton_prices` reads: ``y``, ``mu``, ``nu`` (prices), ``g_tau``, ``bound``
    (exact g), ``grad`` (of g_τ in y). The rest is per-link / per-user state a model keeps
    for its Hessian and its recovery (``air``: airtime per group, ``traffic``: per capped
    cell, ``smooth`` / ``exact``: Σ_users φ at m_τ / at π*, of the implied shares).
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
    """What :func:`newton_prices` needs of the smoothed dual: the single-process
    :class:`SmoothedDual`, or a model whose users live elsewhere (``dual_dask``).

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


@register("dual", kind="optimizer", single_association=True, patterns=True, share_blocks=True,
          warm_start=("prices0",))
def solve_dual(
    problem: Problem,
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
    tau0: float = 0.05,
    tau_min: float = 1e-9,
    stage_maxiter: int = 60,
    stage_accuracy: float = 0.5,
    prices0: tuple[np.ndarray, np.ndarray] | None = None,
) -> Solution:
    """Dual decomposition: projected Newton on the smoothed dual g_τ, continuation in τ.

    See the module docstring for the method. The reported ``upper_bound`` is the exact
    g(μ, ν) at the returned prices and ``objective`` that of the returned,
    feasible shares.

    Parameters
    ----------
    problem : Problem
    tol : float
        Target certified rate-equivalent gap (:func:`~cellopt.solvers.certificate.certified_gap`).
    max_iter : int, optional
        Cap on Newton steps (= iterations; default 500).
    time_limit_s : float, optional
    callback : callable, optional
        Called after every iteration with the history row (a dict); True stops.
    tau0 : float
        First relative smoothing temperature (later ones follow from the gap).
    tau_min : float
        Smallest temperature.
    stage_maxiter : int
        Newton steps per continuation stage.
    stage_accuracy : float
        A stage ends when the residual of the implied shares (objective units) is below
        ``max(0.1·tol·|objective|, stage_accuracy·(g_τ − g))``.
    prices0 : (ndarray (n_cells, n_resources), ndarray (n_cells,)), optional
        Warm-start prices, finite and ≥ 0 (e.g. ``sol.prices`` of a previous solve).

    Returns
    -------
    Solution
        ``history`` columns: iteration, stage, tau, objective, upper_bound, gap,
        smoothed_bound, grad_norm, newton_decrement, step, n_eval, time_s.
    """
    t0 = time.perf_counter()
    p = problem
    check_problem(p)
    check_arguments("dual", tol=tol, max_iter=max_iter, time_limit_s=time_limit_s,
                    callback=callback, single_association=False,
                    options=dict(tau0=tau0, tau_min=tau_min, stage_maxiter=stage_maxiter,
                                 stage_accuracy=stage_accuracy, prices0=prices0))
    check_temperatures(tau0, tau_min)
    stage_maxiter = check_stages(stage_maxiter, stage_accuracy)
    _, prices0, _ = check_warm_start(p, prices0=prices0)
    model = SmoothedDual(p, tol)
    y = start_prices(model, p, prices0)
    res = newton_prices(model, p, y, t0=t0, tol=tol, max_iter=max_iter, time_limit_s=time_limit_s,
                        callback=callback, tau0=tau0, tau_min=tau_min, stage_maxiter=stage_maxiter,
                        stage_accuracy=stage_accuracy,
                        adjust_steps=_ADJUST_STEPS if prices0 is None else 0)
    mu = res.mu
    nu = np.zeros(p.n_cells)
    nu[model.capped] = res.nu
    nu = block_zero_capacity(p, mu, nu)
    bound = dual_bound(p, mu, nu)       # the certificate: the exact, unsmoothed g
    status, message = final_status(p, res, bound, tol)
    return build_solution(
        p, res.x, method="dual", status=status, message=message, mu=mu, nu=nu,
        upper_bound=bound, n_iter=res.n_iter, wall_s=time.perf_counter() - t0,
        history=res.history, theta=res.theta)


def check_temperatures(tau0: float, tau_min: float) -> None:
    """Refuse temperatures that are not real numbers, finite and > 0, or with
    ``tau_min > tau0`` (ValidationError)."""
    for name, value in (("tau0", tau0), ("tau_min", tau_min)):
        check_number(value, name, fix="give temperatures > 0 (tau0=0.05, tau_min=1e-9)")
    if not (tau0 > 0 and tau_min > 0):
        raise ValidationError(f"tau0={tau0}, tau_min={tau_min}; fix: give temperatures > 0")
    if tau_min > tau0:
        raise ValidationError(f"tau_min={tau_min:g} is above tau0={tau0:g}; fix: give "
                              "tau_min ≤ tau0 (the temperature only falls)")


def check_stages(stage_maxiter: int, stage_accuracy: float) -> int:
    """`stage_maxiter` checked (a whole number ≥ 1) and `stage_accuracy` (finite, > 0).

    Returns
    -------
    int
        `stage_maxiter`.
    """
    stage_accuracy = check_number(stage_accuracy, "stage_accuracy", low=0.0, low_open=True,
                                  fix="give a share > 0 of the smoothing gap, e.g. 0.5")
    return check_count(stage_maxiter, "stage_maxiter", minimum=1,
                       fix="give a whole number of Newton steps ≥ 1 per stage, e.g. 60")


def start_prices(model: DualModel, problem: Problem,
                 prices0: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """The starting point in scaled prices, shape (n,): `prices0` (μ of shape
    (n_cells, n_resources), ν of shape (n_cells,)) in the model's units, or every group
    at its equal-share price (y = 1) and ν = 0; held to the lower bounds."""
    p, G, lb = problem, model.G, model.lb
    if prices0 is not None:
        mu0 = np.asarray(prices0[0], float).reshape(-1)
        nu0 = np.asarray(prices0[1], float)
        if mu0.shape != (G,) or nu0.shape != (p.n_cells,):
            raise ValidationError(f"prices0 have shapes {mu0.shape}, {nu0.shape}; fix: give "
                             f"({p.n_cells}, {p.n_resources}) and ({p.n_cells},)")
        return np.maximum(np.r_[mu0, nu0[model.capped]] / model.s, lb)
    return np.maximum(np.r_[np.ones(G), np.zeros(len(model.capped))], lb)


def final_status(problem: Problem, res: NewtonResult, bound: float, tol: float) -> tuple[str, str]:
    """(status, message) of a run whose certificate, recomputed at the returned prices, is
    `bound`: "optimal" is kept only if that certificate still gives a gap ≤ tol."""
    final_gap = certified_gap(problem, bound, res.objective, res.utility)
    if res.status == OPTIMAL and (final_gap is None or final_gap > tol):
        return MAX_ITER, f"the recomputed certificate gives gap {final_gap} > tol={tol:g}"
    return res.status, res.message


@dataclasses.dataclass
class NewtonResult:
    """What :func:`newton_prices` found.

    Attributes
    ----------
    status, message : str
        "optimal" (certified gap ≤ tol), "max_iter", "time_limit", "stopped" or "failed".
    n_iter : int
        Newton steps taken.
    history : list of dict
        One row per iteration (row 0: the start).
    bound : float
        The lowest exact bound g seen (at `mu`, `nu`).
    mu : ndarray, shape (n_groups,)
    nu : ndarray, shape (n_caps,)
        Prices of the capped cells (``model.capped``).
    objective, utility : float
        Of the best feasible point.
    x : any
        The best feasible point as the model's :meth:`DualModel.recover` returned it.
    theta : ndarray or None
    """

    status: str
    message: str
    n_iter: int
    history: list[dict[str, Any]]
    bound: float
    mu: np.ndarray
    nu: np.ndarray
    objective: float
    utility: float
    x: Any
    theta: np.ndarray | None


def newton_prices(
    model: DualModel,
    problem: Problem,
    y: np.ndarray,
    *,
    t0: float,
    tol: float,
    max_iter: int | None,
    time_limit_s: float | None,
    callback: Callable[[dict[str, Any]], bool | None] | None,
    tau0: float,
    tau_min: float,
    stage_maxiter: int,
    stage_accuracy: float,
    adjust_steps: int = 0,
) -> NewtonResult:
    """Projected Newton on g_τ with continuation in τ, from scaled prices `y` (the loop of
    :func:`solve_dual`, for any :class:`DualModel`).

    `problem` is used only for the certificate's scale (``certified_gap``) and its α. The
    options are those of :func:`solve_dual`; `t0` is the ``time.perf_counter()`` the
    time limit and the history's ``time_s`` count from. Extra history columns come from
    ``model.row_extra()``. `adjust_steps`: at most this many multiplicative price
    adjustments (:func:`_adjust_prices`) before the first Newton step, for a cold start.
    """
    p = problem
    max_iter = 500 if max_iter is None else int(max_iter)
    lb = model.lb

    best: dict[str, Any] = dict(bound=np.inf, mu=None, nu=None, obj=-np.inf, x=None, theta=None,
                                util=-np.inf)

    def evaluate(yv: np.ndarray, tau: float) -> DualPoint:
        """g_τ and the exact bound at y (every evaluation, line-search trials included)."""
        pt = model.evaluate(yv, tau)
        if pt.bound < best["bound"]:
            best.update(bound=pt.bound, mu=pt.mu.copy(), nu=pt.nu.copy())
        return pt

    def recover(pt: DualPoint) -> None:
        """Feasible shares from the implied ones (at accepted iterates only: it costs more
        than an evaluation, and rejected trial points are the worse ones)."""
        rec = model.recover(pt)
        if rec.objective > best["obj"]:
            best.update(obj=rec.objective, x=rec.x, theta=rec.theta, util=rec.utility)
            model.commit(rec)

    def gap_now() -> float:  # the certified gap of the best bound and the best x so far
        gap = certified_gap(p, best["bound"], best["obj"], best["util"])
        return np.inf if gap is None else gap

    history: list[dict[str, Any]] = []

    def record(n_iter: int, stage: int, tau: float, pt: DualPoint, decrement: float, step: float,
               n_eval: int) -> tuple[float, float, bool]:
        """Append a history row, call the callback; (gap, residual, stop requested)."""
        proj = np.where((pt.y - lb <= 0) & (pt.grad > 0), 0.0, pt.grad)
        gap = gap_now()
        row = dict(iteration=n_iter, stage=stage, tau=tau, objective=best["obj"],
                   upper_bound=best["bound"], gap=gap, smoothed_bound=pt.g_tau,
                   grad_norm=float(np.abs(proj).max(initial=0.0)), newton_decrement=decrement,
                   step=step, n_eval=n_eval, time_s=time.perf_counter() - t0,
                   **model.row_extra())
        history.append(row)
        stop = callback is not None and bool(callback(dict(row)))
        return gap, float(np.abs(proj).sum()), stop

    tau = float(tau0)
    pt = evaluate(y, tau)
    n_eval = 1
    if adjust_steps:
        pt, evals = _adjust_prices(evaluate, model, pt, tau, p.alpha, adjust_steps)
        y, n_eval = pt.y, n_eval + evals
    recover(pt)
    n_iter, stage, stage_steps, n_polish = 0, 1, 0, 0
    stage_obj = best["obj"]
    gap, _, stop = record(0, stage, tau, pt, np.nan, 0.0, n_eval)
    status, message = MAX_ITER, ""
    while True:
        if gap <= tol:
            status, message = OPTIMAL, f"certified gap {gap:.2e} ≤ tol={tol:g}"
            break
        if stop:
            status, message = STOPPED, f"the callback asked to stop (gap {gap:.2e})"
            break
        if n_iter >= max_iter:
            status = MAX_ITER
            message = f"reached max_iter={max_iter} before gap ≤ tol={tol:g} (gap {gap:.2e})"
            break
        if time_limit_s is not None and time.perf_counter() - t0 > time_limit_s:
            status = TIME_LIMIT
            message = f"reached time_limit_s={time_limit_s:g} (gap {gap:.2e})"
            break
        # ---- one projected Newton step at temperature τ, Armijo search on the projection arc
        H = model.hessian(pt, tau) if model.n_links else SymmetricSystem(sp.csr_array((model.n, model.n)))
        pt_new, step, decrement = None, 0.0, 0.0
        flat_move, candidates = _directions(H, pt.grad, y, lb, model.fixed, pt.g_tau)
        for d in candidates:
            decrement = float(-pt.grad @ d)
            if decrement <= 0:
                continue
            pt_new, step, evals = _line_search(evaluate, pt, d, lb, tau)
            n_eval += evals
            if pt_new is not None:
                break
        if pt_new is not None:
            model.retain(pt_new)      # the searches below may not beat it
        if flat_move.any():
            pt_flat, evals = _geometric_search(evaluate, model, pt if pt_new is None else pt_new,
                                               flat_move, lb, tau)
            n_eval += evals
            pt_new = pt_flat or pt_new
        if pt_new is None or step < _SHORT_STEP:
            # Every price scaled together: g_τ is linear along that direction while the
            # users it touches are all held at their demand (no curvature: Newton steps
            # stall there, with prices 100× below their level).
            base = pt if pt_new is None else pt_new
            slope = float(base.grad @ (base.y - lb))
            move = np.where(model.fixed, 0.0, base.y - lb) * (-np.sign(slope))
            if move.any():
                pt_scaled, evals = _geometric_search(evaluate, model, base, move, lb, tau)
                n_eval += evals
                pt_new = pt_scaled or pt_new
        n_iter += 1
        stage_steps += 1
        ls_failed = pt_new is None
        if not ls_failed:
            y, pt = pt_new.y, pt_new
            recover(pt)
        gap, residual, stop = record(n_iter, stage, tau, pt, decrement,
                                     0.0 if ls_failed else step, n_eval)
        # ---- end of a stage: the implied shares are feasible to within the tolerance
        # The objective change worth a rate factor tol: tol × S (certified_gap's scale).
        scale = utility_scale(p, best["util"]) if np.isfinite(best["util"]) \
            else max(1.0, abs(pt.g_tau))
        # Path following: solving a stage more accurately than its own smoothing error
        # (g_τ − g at the current prices) is wasted work; the last stage needs 0.1 tol.
        target = max(0.1 * tol * scale, stage_accuracy * (pt.g_tau - pt.bound))
        converged = residual <= target or decrement <= 1e-15 * scale
        done = converged or ls_failed or stage_steps >= stage_maxiter
        if ls_failed and tau <= tau_min and gap > tol:
            status = FAILED
            message = (f"no descent step at the smallest temperature τ={tau:g}; certified gap "
                       f"{gap:.2e} > tol={tol:g}")
            break
        # Polish when the primal side holds the gap up: the bound is within about the
        # smoothing error g_τ − g of the optimum (min g_τ ≤ optimum + that error), and the
        # stage moved the best feasible objective by less than a tenth of the gap.
        width = max(best["bound"] - best["obj"], 1e-300)
        primal_stuck = (gap * (pt.g_tau - pt.bound) / width <= 0.5 * tol
                        and best["obj"] - stage_obj < 0.1 * width)
        if done and gap > tol and primal_stuck and n_polish < _MAX_POLISH \
                and hasattr(model, "polish"):
            n_polish += 1
            left = None if time_limit_s is None else time_limit_s - (time.perf_counter() - t0)
            rec = model.polish(pt, tau, tol, left) if left is None or left > 0 else None
            if rec is not None and rec.objective > best["obj"]:
                best.update(obj=rec.objective, x=rec.x, theta=rec.theta, util=rec.utility)
                model.commit(rec)
                gap = gap_now()
                if gap <= tol:
                    continue
        if done and gap > tol and tau > tau_min:
            # After a converged stage the gap is mostly smoothing (∝ τ): cut τ by 3–5×
            # (larger cuts made the next stage's Newton steps short); after a stage that
            # stalled, only by 2×.
            factor = float(np.clip(0.3 * tol / gap, 0.2, 0.3)) if converged else 0.5
            tau = max(tau * factor, tau_min)
            stage += 1
            stage_steps = 0
            stage_obj = best["obj"]
            pt = evaluate(y, tau)
            recover(pt)
            n_eval += 1
            gap = gap_now()

    return NewtonResult(status=status, message=message, n_iter=n_iter, history=history,
                        bound=best["bound"], mu=best["mu"], nu=best["nu"], objective=best["obj"],
                        utility=best["util"], x=best["x"], theta=best["theta"])


def _adjust_prices(evaluate: Callable[[np.ndarray, float], DualPoint], model: DualModel,
                   pt: DualPoint, tau: float, alpha: float, steps: int) -> tuple[DualPoint, int]:
    """Multiplicative price adjustment (tâtonnement) from a cold start: (point, evaluations).

    A group whose users all stay put and are below their demand has airtime ∝ μ^(−1/α),
    so ``μ ← μ · (airtime / capacity)^α`` would clear it in one step. Users do move, so
    the factor is clipped to [1/4, 4] before the power (α below 1/4 counts as 1/4) and a
    step is kept only while it lowers g_τ. Each step costs one evaluation and no Hessian;
    from the equal-share start, where prices can be off by 10× or more, a few of them
    replace Newton steps that the 3×-growth clip would have spent on the way.
    """
    G = len(pt.air)
    exponent = max(alpha, 0.25)
    movable = ~model.fixed[:G]
    n = 0
    for _ in range(steps):
        capacity = pt.air + pt.grad[:G] / model.s[:G]     # 1 (or the pattern share)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(capacity > 0, pt.air / capacity, 1.0)
        factor = np.clip(ratio, 0.25, 4.0) ** exponent
        y = pt.y.copy()
        y[:G] = np.where(movable, np.maximum(model.lb[:G], y[:G] * factor), y[:G])
        trial = evaluate(y, tau)
        n += 1
        if not trial.g_tau < pt.g_tau:
            break
        pt = trial
        model.retain(pt)
    return pt, n


def _directions(H: SymmetricSystem, grad: np.ndarray, y: np.ndarray, lb: np.ndarray,
                fixed: np.ndarray, value: float) -> tuple[np.ndarray, Iterator[np.ndarray]]:
    """(the flat prices' move, search directions to try in turn): clipped projected Newton,
    damped (Levenberg–Marquardt) Newton, projected Newton, and a diagonally scaled
    projected gradient (the safeguard).

    Projected Newton (Bertsekas): prices with positive gradient within ε of their bound go
    to the bound. "Flat" prices — a diagonal Newton step more than 1000× their size, e.g.
    a group nobody buys from, where g_τ is linear — are not put in the Newton system: they
    move halfway to their bound (or double, for a negative gradient), a geometric search
    for the kink. The rest take the Newton step on the free prices. Clipped: no price
    (not held at its bound) moves more than 3/4 of the way to its bound (all the way if it
    is below 1 % of its unit) or grows by more than 3·max(y, 1) (3·max(y, 1e-3) for
    prices with a positive floor, near which g_τ is scale-free) in one step. The
    quadratic model of g_τ is good only while the
    users' soft choices change little, i.e. for relative price changes of order τ; far
    from the minimizer the Newton step overshoots wildly in a few prices, and clipping
    them (rather than shortening the whole step) lets the others move. A clipped step
    need not be a descent direction; the caller then tries the next one. `fixed` prices
    (groups without links) do not move. With a low-rank part (large pattern-share
    blocks), prices without curvature of their own count as flat, and the free system is
    solved by Woodbury. The flat prices' move alone (zero elsewhere) is returned too, for
    :func:`_geometric_search`.
    """
    hdiag = H.sparse.diagonal()
    full_diag = H.diagonal()
    size = np.maximum(y, 1.0)
    with np.errstate(over="ignore"):  # inf: no curvature, the step is capped by `size` below
        newton1 = np.abs(grad) / np.maximum(hdiag, 1e-300)
    width = float(np.max(np.abs(y - np.maximum(lb, y - np.minimum(newton1, size) * np.sign(grad))),
                         initial=0.0))
    active = ((y - lb <= min(1e-3, width)) & (grad > 0)) | fixed
    flat = ~active & ((newton1 > 1e3 * size) | (hdiag <= 1e-30 * float(hdiag.max(initial=0.0))))
    d = np.zeros_like(y)
    d[active] = lb[active] - y[active]
    # Growth is multiplicative for prices with a positive floor (groups of unpriced cells,
    # where g_τ is scale-free near 0), additive from 1e-3 of the unit for the others.
    grow = np.maximum(y, np.where(lb > 0, lb, 1e-3))
    # A flat price whose move by its own size would change g_τ by less than 1e-12 of it
    # stays put: its gradient is round-off (with patterns: a pattern nobody uses), and
    # doubling it could make that pattern the most valuable one.
    negligible = np.abs(grad) * np.maximum(y, 1.0) <= 1e-12 * max(1.0, abs(value))
    d[flat] = np.where(negligible[flat], 0.0,
                       np.where(grad[flat] > 0, 0.5 * (lb[flat] - y[flat]), grow[flat]))
    flat_move = np.where(flat, d, 0.0)
    free = np.flatnonzero(~active & ~flat)
    system = H.restricted(free, hdiag) if len(free) else None
    if system is not None:
        d[free] = -system.solve(grad[free])
    return flat_move, _candidates(d, grad, y, lb, fixed, active, free, system, full_diag, grow)


def _candidates(d: np.ndarray, grad: np.ndarray, y: np.ndarray, lb: np.ndarray,
                fixed: np.ndarray, active: np.ndarray, free: np.ndarray,
                system: Any, full_diag: np.ndarray, grow: np.ndarray) -> Iterator[np.ndarray]:
    """The directions of :func:`_directions`, computed only as far as they are tried."""
    down = np.where(y < 1e-2, 1.0, 0.75) * np.maximum(y - lb, 0.0)
    up = 3.0 * np.maximum(y, np.where(lb > 0, _CLIP_FLOOR, 1.0))

    def clipped(step: np.ndarray) -> np.ndarray:
        return np.where(active, step, np.clip(step, -down, up))

    yield clipped(d)
    # Levenberg–Marquardt: nearly collinear prices (a capped cell's ν and its groups' μ,
    # which enter the same links' prices) give the Newton step huge opposite moves along
    # the near-null direction; clipping them can leave no descent, and the unclipped step
    # then advances by ~1e-12 (the line search starts at a step that moves no price by
    # more than 4× its size). For such a step the damped ones (λ·diag(H) added, bent
    # toward the scaled gradient) are tried first; otherwise after it, since damping also
    # shortens the long moves that prices of users held at their demand need.
    reach = float(np.max(np.abs(np.maximum(lb, y + d) - y) / np.maximum(y, 1.0), initial=0.0))
    if reach <= _HUGE_REACH:
        yield d
    for damping in _DAMPING:
        if system is not None:
            damped = d.copy()
            damped[free] = -system.solve(grad[free], damping=damping)
            yield clipped(damped)
    if reach > _HUGE_REACH:
        yield d
    target = np.maximum(lb, y - grad / np.maximum(full_diag,
                                                   1e-300 + 1e-12 * full_diag.max(initial=0)))
    yield np.where(fixed, 0.0, np.clip(target - y, -0.5 * np.maximum(y - lb, 0.0), grow))


def _geometric_search(evaluate: Callable[[np.ndarray, float], DualPoint], model: DualModel,
                      pt: DualPoint, move: np.ndarray, lb: np.ndarray, tau: float
                      ) -> tuple[DualPoint | None, int]:
    """Prices moved geometrically along the signs of `move`, as far as g_τ keeps falling:
    (better point or None, evaluations).

    Prices with ``move > 0`` grow by ``move·(f − 1)`` (doubling when `move` is the price),
    those with ``move < 0`` go to ``lb + (y − lb)/f``, for f = 2, 4, 16, 256 in turn; the
    best point is kept while g_τ falls. For directions along which g_τ is linear up to a
    kink, where a Newton step has no curvature to size it: the flat prices (nobody buys
    at them, or everybody who does is held at its demand), whose move as part of a Newton
    step is sized by the other prices, and every price scaled together.
    """
    grow = move > 0
    y0 = pt.y
    best, n = None, 0
    for k in (1, 2, 4, 8):
        factor = 2.0 ** k
        y = y0.copy()
        y[grow] = y0[grow] + move[grow] * (factor - 1.0)
        shrink = move < 0
        y[shrink] = lb[shrink] + (y0[shrink] - lb[shrink]) / factor
        trial = evaluate(y, tau)
        n += 1
        if not trial.g_tau < (pt.g_tau if best is None else best.g_tau):
            break
        best = trial
        model.retain(best)
    return best, n


def _line_search(evaluate: Callable[[np.ndarray, float], DualPoint], pt: DualPoint, d: np.ndarray,
                 lb: np.ndarray, tau: float) -> tuple[DualPoint | None, float, int]:
    """Armijo search along the projection arc y(t) = max(lb, y + t d): (point, t, evaluations).

    The first trial step changes no price by more than 4× its size (in the optimizer's
    units, at least 1): far from the minimizer, where the local curvature says little,
    this saves the evaluations of many halvings. A rejected step t is followed by the
    minimizer of the quadratic through g_τ(0), its slope and g_τ(t), kept within
    [0.3 t, t/2] (:func:`_backtrack`), which takes fewer trials than halving when the
    acceptable step is short. At the limit of floating point (a predicted decrease below
    1e-13 |g_τ|) a step that does not increase g_τ is accepted.
    """
    f0, y, grad = pt.g_tau, pt.y, pt.grad
    reach = float(np.max(np.abs(np.maximum(lb, y + d) - y) / np.maximum(y, 1.0), initial=0.0))
    step = min(1.0, 4.0 / reach) if reach > 0 else 1.0
    floor = 1e-13 * max(1.0, abs(f0))
    for n in range(1, 41):
        y_try = np.maximum(lb, y + step * d)
        pt_try = evaluate(y_try, tau)
        predicted = float(grad @ (y_try - y))
        if pt_try.g_tau <= f0 + 1e-4 * predicted or (
                abs(predicted) <= floor and pt_try.g_tau <= f0 + 10 * floor):
            return pt_try, step, n
        step = _backtrack(step, predicted, pt_try.g_tau - f0)
    return None, 0.0, 40


def _backtrack(step: float, predicted: float, change: float) -> float:
    """The next trial step after `step` was rejected: the minimizer of the quadratic q(t)
    with q(0) = 0, q'(0) = predicted / step and q(step) = change, within [0.3, 0.5]·step
    (step/2 when the model has no minimizer, e.g. g_τ was not finite there)."""
    curvature = change - predicted          # q(step) − the linear model, > 0 for a minimizer
    if predicted < 0 and np.isfinite(change) and curvature > 0:
        return step * float(np.clip(-predicted / (2.0 * curvature), *_BACKTRACK))
    return 0.5 * step
