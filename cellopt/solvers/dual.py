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
numpy forms in :mod:`cellopt.solvers.dual_model` and :mod:`cellopt.solvers.common` are
the reference the tests hold them to and the fallback (``CELLOPT_JIT=0``, or numba not
importable). See docs/model.md, "Compiled kernels".

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

The code follows that split: :func:`~cellopt.solvers.dual_newton.newton_prices` is the
coordinator's loop, and it sees the users only through a
:class:`~cellopt.solvers.dual_model.DualModel` (evaluate g_τ, its Hessian, recover a
feasible point). ``dual`` runs it on :class:`~cellopt.solvers.dual_model.SmoothedDual`,
every user in this process; ``dual_dask`` (:mod:`cellopt.solvers.dask_dual`) on users
held by Dask workers, with the same loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.arguments import check_arguments, check_problem, check_warm_start
from cellopt.solvers.certificate import dual_bound
from cellopt.solvers.common import block_zero_capacity
from cellopt.solvers.dual_model import SmoothedDual
from cellopt.solvers.dual_newton import (
    check_stages,
    check_temperatures,
    final_status,
    newton_prices,
    start_prices,
)
from cellopt.solvers.registry import register
from cellopt.solvers.result import build_solution

__all__ = ["solve_dual"]

_ADJUST_STEPS = 3        # multiplicative price adjustments before Newton, from a cold start


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
