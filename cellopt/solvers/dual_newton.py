"""The coordinator of ``dual`` and ``dual_dask``: projected Newton on the smoothed dual.

:func:`newton_prices` minimizes g_τ over the prices with continuation in τ, for any
:class:`~cellopt.solvers.dual_model.DualModel`: at every step the model's Hessian gives
the search directions (clipped, damped and plain projected Newton, a scaled gradient;
:func:`_directions`), an Armijo search runs along the projection arc, geometric searches
move the prices along which g_τ is linear, and the best exact bound and the best
feasible point seen are kept for the certificate. Also here: the checks of the loop's
options (:func:`check_temperatures`, :func:`check_stages`), its starting point
(:func:`start_prices`) and the final status (:func:`final_status`). The method, and why
it is built this way: the module docstring of :mod:`cellopt.solvers.dual`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from cellopt.checks import check_count, check_number
from cellopt.errors import ValidationError
from cellopt.problem import Problem
from cellopt.solvers.certificate import certified_gap, utility_scale
from cellopt.solvers.dual_model import DualModel, DualPoint
from cellopt.solvers.linalg import SymmetricSystem
from cellopt.status import FAILED, MAX_ITER, OPTIMAL, STOPPED, TIME_LIMIT

__all__ = ["NewtonResult", "check_stages", "check_temperatures", "final_status", "newton_prices",
           "start_prices"]

_CLIP_FLOOR = 1e-3       # growth limit 3·max(y, this) for prices with a positive floor
_DAMPING = (1.0, 10.0)   # Levenberg–Marquardt damping of the fallback Newton steps
_HUGE_REACH = 1e3        # ... tried before the plain Newton step when it moves a price this far
_SHORT_STEP = 1e-2       # after a shorter Newton step, every price is scaled too
_BACKTRACK = (0.3, 0.5)   # a rejected step t is followed by one in [0.3 t, 0.5 t] (_backtrack)
_MAX_POLISH = 3          # restricted solves (SmoothedDual.polish) per run, at most
# The Newton systems are small (groups + caps): multithreaded BLAS only adds overhead, and
# on a loaded machine OpenBLAS's spinning threads made a 400 × 400 Cholesky take 0.35 s
# instead of 2 ms. The factorizations run single-threaded.


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
    :func:`~cellopt.solvers.dual.solve_dual`, for any :class:`DualModel`).

    `problem` is used only for the certificate's scale (``certified_gap``) and its α. The
    options are those of :func:`~cellopt.solvers.dual.solve_dual`; `t0` is the
    ``time.perf_counter()`` the time limit and the history's ``time_s`` count from. Extra
    history columns come from ``model.row_extra()``. `adjust_steps`: at most this many
    multiplicative price adjustments (:func:`_adjust_prices`) before the first Newton step,
    for a cold start.
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
