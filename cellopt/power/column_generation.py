"""One column-generation run of :func:`~cellopt.power.solve_power`: masters, pricing,
bounds, and the answer.

:class:`_ColumnGeneration` solves the master over the current pattern set
(:class:`_PatternSet`), reads the users' and backhaul prices from it
(:func:`master_duals`), prices new patterns (exactly, or by the search), keeps the
Lagrangian bounds and estimate, and finishes the best master into the answer with its
bound, status and :class:`~cellopt.solution.PowerResult`.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
import pandas as pd

from cellopt.power.bounds import bound_gains, decomposition_bound, joint_bound, relaxed_bound
from cellopt.power.kernels import cell_max
from cellopt.power.options import _EXACT_LIMIT, ColumnGenerationOptions
from cellopt.power.patterns import cell_best, link_coefficients, reduced_values, top_patterns_exhaustive
from cellopt.power.problem import PowerProblem
from cellopt.power.progress import Progress
from cellopt.power.search import Neighbourhoods, search_patterns
from cellopt.problem import Problem
from cellopt.solution import PowerResult, Solution
from cellopt.solvers.api import solve
from cellopt.solvers.certificate import certified_gap, utility_scale
from cellopt.solvers.common import link_prices, repair, user_min
from cellopt.solvers.result import apply_status_rule, build_solution
from cellopt.status import CONVERGED, LOCAL_OPTIMUM, OPTIMAL, TAIL_OFF, TIME_LIMIT

__all__ = ["master_duals"]

_UNUSED_SHARE = 1e-4  # a pattern with less share of the band than this is unused
#: With exact pricing, the share of `tol` (rate-equivalent) given to the masters and the
#: share by which a new pattern must beat the set: together at most half of `tol`, so
#: that when no pattern improves, the bound certifies the answer.
_EXACT_SHARE = 0.25
_SMALL_SHARE = 1e-3   # ... and is dropped from the answer if that costs (next to) nothing
#: Optimizer iterations per temperature of the decomposition bound (three temperatures).
_DECOMPOSITION_ITER = 300


def master_duals(problem: Problem, sol: Solution) -> tuple[np.ndarray, np.ndarray]:
    """The users' rate prices λ and the backhaul prices ν of a master solution.

    ``λ_i = min_{e∋i} (μ_e / R_e + c_j + ν_j)``, each user's cheapest price at the
    master's airtime prices: then ``(λ_i − c_j − ν_j) R_e ≤ μ_e`` on every master link, so
    the joint bound at (λ, ν) is at most the master's own dual bound plus what patterns
    outside the set add — the certificate of the master carries over.

    Returns
    -------
    lam : ndarray, shape (n_users,) [utility per Mbit/s]
    nu : ndarray, shape (n_cells,) [utility per Mbit/s]
    """
    nu = np.where(np.isfinite(problem.backhaul_mbps), sol.prices["backhaul"], 0.0)
    lam = user_min(problem, link_prices(problem, sol.prices["airtime"], nu))
    return np.where(np.isfinite(lam), lam, 0.0), nu


class _PatternSet:
    """The master's patterns, their last shares, and how many masters in a row each went
    unused."""

    def __init__(self, first: np.ndarray):
        self.patterns = np.atleast_2d(first).astype(np.int64)
        self.idle = np.zeros(1, np.int64)
        self.share = np.ones(1)

    def __len__(self) -> int:
        return len(self.patterns)

    def record_use(self, share: np.ndarray) -> None:
        self.share = np.asarray(share, float)
        self.idle = np.where(self.share > _UNUSED_SHARE, 0, self.idle + 1)

    def _keep(self, keep: np.ndarray) -> None:
        self.patterns, self.idle, self.share = self.patterns[keep], self.idle[keep], self.share[keep]

    def add(self, new: np.ndarray, max_patterns: int | None, retire_after: int | None) -> int:
        """Add `new` patterns, first retiring those idle for `retire_after` masters; when
        the set is full (`max_patterns`; None: never), the longest idle and then the least
        used make room. How many joined."""
        if retire_after is not None:
            self._keep(self.idle < retire_after)
        if max_patterns is None:
            max_patterns = len(self) + len(new)
        new = new[:max_patterns]
        excess = len(self) + len(new) - max_patterns
        if excess > 0:
            order = np.lexsort((self.share, -self.idle))  # longest idle, then least used
            self._keep(np.setdiff1d(np.arange(len(self)), order[:excess]))
        self.patterns = np.vstack([self.patterns, new])
        self.idle = np.r_[self.idle, np.zeros(len(new), np.int64)]
        self.share = np.r_[self.share, np.zeros(len(new))]
        return len(new)


class _ColumnGeneration:
    """One column-generation run: masters, pricing, bounds and the best answer so far."""

    def __init__(self, problem: PowerProblem, method: str, tol: float,
                 links_per_pattern: int | None, exact_pricing: bool, stabilization: float,
                 options: dict[str, Any]):
        self.problem, self.gains, self.space = problem, problem.gains, problem.space
        gains, space = self.gains, self.space
        # Bounds hold for the physical model: computed with the lumped background at its
        # lowest (the table itself when nothing is lumped).
        self.bound_gains = bound_gains(gains, space)
        self.method, self.alpha, self.tol = method, problem.alpha, tol
        self.links_per_pattern = links_per_pattern
        self.exact_pricing = exact_pricing
        self.beta = stabilization
        self.options = options
        self.cell_price = problem.price_per_mbps
        # The best master so far: its solution, problem, patterns, prices and estimate.
        self.best: Solution | None = None
        self.best_problem: Problem | None = None
        self.best_patterns: np.ndarray | None = None
        self.best_duals: tuple[np.ndarray, np.ndarray] | None = None
        self.best_tol = tol
        #: The smallest Lagrangian value so far, max_s V replaced by the best pattern known
        #: at those prices (at least the best objective; a bound with exact pricing). It
        #: steers the masters' tolerance; what is reported is :meth:`reported_estimate`.
        self.estimate = np.inf
        self.point_values: list[float] = []
        self.n_iterations = 0
        #: The iteration of the smallest Lagrangian value (before the clamp to the objective).
        self.smallest_value, self.smallest_iteration = np.inf, 0
        #: With the search: every pricing point (λ, ν, iteration) and every pattern the run
        #: has known (the sets and the search's finds), for :meth:`reported_estimate`.
        self.price_points: list[tuple[np.ndarray, np.ndarray, int]] = []
        self.known_patterns: list[np.ndarray] = []
        #: With exact pricing: the smallest Lagrangian bound computed (valid for the
        #: physical model: max_s V on `bound_gains`); else None.
        self.certified_bound: float | None = np.inf if exact_pricing else None
        # Stability center: the prices of the smallest Lagrangian value (bound or estimate).
        self.center: tuple[np.ndarray, np.ndarray] | None = None
        self.center_value = np.inf
        self.inner_iterations = 0
        self.last_prices: tuple | None = None  # (patterns, μ, ν) of the last master
        self.hoods: Neighbourhoods | None = None

    # ------------------------------------------------------------------ one iteration
    def iterate(self, pset: _PatternSet, remaining: float | None) -> dict[str, Any]:
        """Solve the master over `pset`, price new patterns; what was found."""
        t_inner = time.perf_counter()
        self.n_iterations += 1
        problem = self.problem.master(pset.patterns, self.links_per_pattern)
        kwargs = dict(self.options)
        if remaining is not None:  # the master gets what is left of the budget
            kwargs["time_limit_s"] = max(remaining, 1.0)
        kwargs.update(self._warm_start(problem, pset.patterns))
        master_tol = self._master_tol()
        sol = solve(problem, method=self.method, tol=master_tol, **kwargs)
        self.inner_iterations += sol.n_iter
        t_search = time.perf_counter()
        pset.record_use(sol.pattern_share)
        lam, nu = master_duals(problem, sol)
        self.last_prices = (pset.patterns.copy(), sol.prices["airtime"], sol.prices["backhaul"])
        is_best = self.best is None or sol.objective > self.best.objective
        if is_best:
            self.best, self.best_problem, self.best_tol = sol, problem, master_tol
            self.best_patterns, self.best_duals = pset.patterns.copy(), (lam, nu)
        coef = self._coef(lam, nu)
        current = float(reduced_values(self.gains, self.space, coef, pset.patterns).max())
        if self.exact_pricing:  # a quarter of tol in rate-equivalent terms (see _EXACT_SHARE)
            margin = _EXACT_SHARE * self.tol * utility_scale(problem, sol.utility)
        else:
            margin = self.tol * max(1.0, abs(sol.objective))
        threshold = current + margin
        self.point_values = []
        found, values, pricing = self._price(lam, nu, pset, threshold)
        # The running estimate: the smallest Lagrangian value of the run, with the best
        # pattern known at those prices (the set's or a new one); never below the objective.
        estimate = min(self.point_values)
        if estimate < self.smallest_value:
            self.smallest_value, self.smallest_iteration = estimate, self.n_iterations
        self.estimate = max(min(self.estimate, estimate), self.best.objective)
        improving = values > threshold
        new = _distinct(found[improving][np.argsort(-values[improving], kind="stable")],
                        pset.patterns)
        return dict(new=new, estimate=estimate, pricing=pricing,
                    cut_short=sol.status == TIME_LIMIT, inner_iterations=sol.n_iter,
                    inner_time_s=t_search - t_inner, search_time_s=time.perf_counter() - t_search)

    def reported_estimate(self) -> tuple[float, int]:
        """The estimate the answer reports, and the iteration whose prices it is taken at.

        With exact pricing, the smallest Lagrangian value of the run: every one is a bound
        (on the table's model), so the smallest is the best of them. With the search, the
        smallest over every pricing point of the run of its Lagrangian value with
        ``max_s V`` taken over *every* pattern the run has known (the sets' and the
        search's finds, re-scored at that point's prices): each is at least the optimum
        over those patterns by weak duality, so at least the answer, and above it by
        what the patterns found add. Not a bound: patterns the search has not found may
        add more. (The running minimum, which steers the masters' tolerance, scores an
        early point only against the few patterns known then, and so falls below the
        answer.) The patterns' rates are computed once; each point costs a product and a
        maximum per cell.
        """
        if self.exact_pricing or not self.price_points:
            return float(self.estimate), int(self.smallest_iteration)
        patterns = np.unique(np.vstack(self.known_patterns), axis=0)
        rates = self.gains.rates_mbps(self.space.power_mw(patterns))       # (S, U, n)
        cand = self.gains.cell[:, :self.gains.n_candidates].ravel()
        energy = self.space.energy_cost(patterns)
        values = []
        for lam, nu, _ in self.price_points:  # two pricing points per iteration
            best = cell_max((rates * self._coef(lam, nu)[None]).reshape(len(patterns), -1),
                            cand, self.gains.n_cells)
            top = float((best.sum(axis=1) - energy).max())
            values.append(joint_bound(self.gains, self.space, self.best_problem, lam, nu, top))
        k = int(np.argmin(values))
        return float(values[k]), int(self.price_points[k][2])

    def _master_tol(self) -> float:
        """Masters solved only as far as pricing needs: to a twentieth of the relative gap
        of the best estimate (at most 1e-2), `tol` once that is small; with exact pricing
        always to a quarter of `tol` (its bound certifies the masters)."""
        if self.exact_pricing:
            return _EXACT_SHARE * self.tol
        if self.best is None or not np.isfinite(self.estimate):
            return self.tol
        gap = certified_gap(self.best_problem, self.estimate, self.best.objective,
                            self.best.utility)
        return float(np.clip(0.05 * (np.inf if gap is None else gap), self.tol, 1e-2))

    def _coef(self, lam: np.ndarray, nu: np.ndarray) -> np.ndarray:
        return link_coefficients(self.gains, lam, self.cell_price + nu)

    def _price(self, lam: np.ndarray, nu: np.ndarray, pset: _PatternSet, threshold: float
               ) -> tuple[np.ndarray, np.ndarray, str]:
        """Candidate patterns, their reduced values at the master's prices, and how found.

        Pricing points: the stabilized prices ``β center + (1 − β) master`` (Wentges),
        then the master's own. Exact pricing stops at the first point whose patterns
        improve at the master's prices. The search prices at both: the union of their
        patterns joins the master (about twice the columns per master solve), and each
        point gives its own Lagrangian value for the estimate; the smallest makes the
        stability center. With exact pricing each point also gives a valid bound: its
        Lagrangian value with ``max_s V`` enumerated on the bound table (the lumped
        background at its lowest, :func:`~cellopt.power.bounds.bound_gains`; the same
        enumeration when nothing is lumped).
        """
        coef = self._coef(lam, nu)
        points = [(lam, nu, "master")]
        if self.beta > 0 and self.center is not None:
            c_lam, c_nu = self.center
            points.insert(0, (self.beta * c_lam + (1 - self.beta) * lam,
                              self.beta * c_nu + (1 - self.beta) * nu, "stabilized"))
        found_all, values_all, names = [], [], []
        for p_lam, p_nu, name in points:  # at most two pricing points
            p_coef = self._coef(p_lam, p_nu)
            if self.exact_pricing:
                found, p_values = top_patterns_exhaustive(self.gains, self.space, p_coef, k=4,
                                                          max_patterns=int(_EXACT_LIMIT))
            else:
                if self.hoods is None:
                    self.hoods = Neighbourhoods(self.gains, self.space, 3)
                # `threshold` holds at the master's prices only: at stabilized ones the
                # neighbourhood search always runs.
                found = search_patterns(self.gains, self.space, p_coef, pset.patterns,
                                        threshold=threshold if name == "master" else np.inf,
                                        hoods=self.hoods)
                p_values = reduced_values(self.gains, self.space, p_coef, found)
                self.price_points.append((p_lam.copy(), p_nu.copy(), self.n_iterations))
                self.known_patterns += [found, pset.patterns.copy()]
            known = float(reduced_values(self.gains, self.space, p_coef, pset.patterns).max())
            best_value = max(known, float(p_values.max()))
            self._lagrangian_value(p_lam, p_nu, best_value, self._bound_value(p_coef, best_value))
            values = p_values if name == "master" else reduced_values(self.gains, self.space,
                                                                      coef, found)
            found_all.append(found)
            values_all.append(values)
            names.append(name)
            if self.exact_pricing and (values > threshold).any():
                break
        kind = "exact" if self.exact_pricing else "search"
        return (np.vstack(found_all), np.concatenate(values_all),
                f"{kind}, {' + '.join(names)}")

    def _bound_value(self, coef: np.ndarray, value: float) -> float | None:
        """With exact pricing, max_s V on the bound table: `value` (the pricing's own
        enumeration) when nothing is lumped, else one more enumeration; else None."""
        if not self.exact_pricing:
            return None
        if self.bound_gains is self.gains:
            return value
        _, top = top_patterns_exhaustive(self.bound_gains, self.space, coef, k=1,
                                         max_patterns=int(_EXACT_LIMIT))
        return float(top[0])

    def _lagrangian_value(self, lam: np.ndarray, nu: np.ndarray, max_value: float,
                          bound_value: float | None = None) -> float:
        """UB(λ, ν) with `max_value` for max_s V (the estimate's value); with
        `bound_value` (max_s V on the bound table), the valid bound at λ, ν too."""
        value = joint_bound(self.gains, self.space, self.best_problem, lam, nu, max_value)
        self.point_values.append(value)
        if bound_value is not None:
            self.certified_bound = min(self.certified_bound, joint_bound(
                self.gains, self.space, self.best_problem, lam, nu, bound_value))
        if value < self.center_value:
            self.center, self.center_value = (lam.copy(), nu.copy()), value
        return value

    def _warm_start(self, problem: Problem, patterns: np.ndarray) -> dict[str, Any]:
        """Prices of the last master on the new pattern set (for dual and alm)."""
        if self.last_prices is None or self.method not in ("dual", "alm"):
            return {}
        old_patterns, mu_old, nu_old = self.last_prices
        lam, nu = self.best_duals
        coef = self._coef(lam, nu)
        same = (patterns[:, None, :] == old_patterns[None, :, :]).all(axis=2)  # (new, old)
        known = same.any(axis=1)
        mu0 = np.zeros((problem.n_cells, len(patterns)))
        mu0[:, known] = mu_old[:, np.argmax(same[known], axis=1)]
        # A new pattern's airtime price: what its best user would pay for it.
        rates = self.gains.rates_mbps(self.space.power_mw(patterns[~known]))
        mu0[:, ~known] = np.stack([cell_best(self.gains, r * coef) for r in rates], axis=1) \
            if len(rates) else mu0[:, ~known]
        return dict(prices0=(mu0, nu_old))

    # ------------------------------------------------------------------ the answer
    def finish(self, status: str, message: str, bound: str | None,
               history: list[dict[str, Any]], t0: float, time_limit_s: float | None,
               options: ColumnGenerationOptions, progress: Progress,
               max_iter: int | None) -> Solution:
        """A new solution: the best master's allocation, with the joint bound, the status
        and the :class:`PowerResult` (the masters' solutions are left as they are)."""
        progress.phase("finishing the answer", 1)
        if self.best_tol > self.tol:  # solved loosely during the run: finish it to `tol`
            left = None if time_limit_s is None else max(
                0.9 * time_limit_s - (time.perf_counter() - t0), 1.0)
            tight = solve(self.best_problem, method=self.method, tol=self.tol,
                          **{**self.options, "time_limit_s": left})
            if tight.objective > self.best.objective:
                self.best = tight
        self.best = _without_small_shares(self.best_problem, self.best, self.tol)
        progress.step(1, objective=f"{self.best.objective:.6g}")
        sol, problem, patterns = self.best, self.best_problem, self.best_patterns
        lam, nu = self.best_duals
        if bound == "exact" and not self.exact_pricing:  # one enumeration at the best prices
            _, top = top_patterns_exhaustive(self.bound_gains, self.space, self._coef(lam, nu),
                                             k=1, max_patterns=int(_EXACT_LIMIT))
            self.certified_bound = joint_bound(self.gains, self.space, problem, lam, nu,
                                               float(top[0]))
        # Every valid bound computed, by kind: the exact (enumerated) one that exact pricing
        # computes at every pricing point, whatever `bound` asks for, and the relaxed one.
        bounds: dict[str, float] = {}
        infos: dict[str, dict[str, Any]] = {}
        if self.certified_bound is not None and np.isfinite(self.certified_bound):
            bounds["exact"] = float(self.certified_bound)
            infos["exact"] = dict(kind="exact", patterns_enumerated=self.space.n_patterns)
        if bound == "relaxed":
            left = None if time_limit_s is None else max(
                0.97 * time_limit_s - (time.perf_counter() - t0), 0.02 * time_limit_s)
            progress.phase("relaxed bound", None, "round")
            relaxed = relaxed_bound(self.problem, self.gains, self.space, self.alpha,
                                    cluster_cells=options.cluster_cells, tol=self.tol,
                                    time_limit_s=left, prices=(lam, nu), progress=progress.step)
            if time_limit_s is None and options.scope_cells is not None:  # work-bounded
                progress.phase("decomposition bound", 3 * _DECOMPOSITION_ITER, "it")
                relaxed = decomposition_bound(self.problem, self.gains, self.space, self.alpha,
                                              scope_cells=options.scope_cells, prices=(lam, nu),
                                              baseline=relaxed, max_iter=_DECOMPOSITION_ITER,
                                              progress=progress.step)
            bounds["relaxed"], infos["relaxed"] = float(relaxed["upper_bound"]), relaxed["info"]
        # The reported bound is the tightest of them (each is valid for the physical model).
        kind = min(bounds, key=bounds.__getitem__) if bounds else None
        upper = None if kind is None else bounds[kind]
        info = None if kind is None else dict(infos[kind])
        if len(bounds) > 1:
            info["bounds"] = dict(bounds)
        gap = certified_gap(problem, upper, sol.objective, sol.utility)
        stopped_by, why = status, message
        if status in (CONVERGED, LOCAL_OPTIMUM, TAIL_OFF) and gap is not None \
                and gap <= self.tol:
            status, message = OPTIMAL, f"{message}; the {kind} bound certifies gap {gap:.2e}"
        # The factors by which every rate could still rise: 1 + the rate-equivalent gap.
        info = dict(info or {})
        if upper is not None:  # what the bound certifies, and whether cells were lumped
            info.update(certifies="physical model", lumped=self.bound_gains is not self.gains)
        # Both estimates are at least what the finished master reaches (see
        # reported_estimate); the clamp only absorbs the masters' round-off.
        estimate, estimate_iteration = self.reported_estimate()
        estimate = max(estimate, sol.objective)
        estimate_gap = certified_gap(problem, estimate, sol.objective, sol.utility)
        if estimate_gap is not None:
            info["estimate_factor"] = 1.0 + estimate_gap
            info["estimate_iteration"] = estimate_iteration
        if gap is not None:
            info["bound_factor"] = 1.0 + gap
        p_mw = self.space.power_mw(patterns)
        avg_mw = sol.pattern_share @ p_mw
        with np.errstate(divide="ignore"):
            cell_power_dbm = 10.0 * np.log10(avg_mw)
        frame = pd.DataFrame(history)
        power = PowerResult(patterns=self.space.power_dbm(patterns),
                            pattern_share=sol.pattern_share, cell_power_dbm=cell_power_dbm,
                            energy_w=float(avg_mw.sum() * 1e-3), bound_kind=kind, bound_info=info,
                            estimate=float(estimate), history=frame, master=problem,
                            network_fingerprint=self.problem.network_fingerprint)
        out = dataclasses.replace(
            sol, method=f"power+{self.method}", status=status,
            message=f"{message} ({len(patterns)} patterns, master {self.method})",
            upper_bound=upper, gap=gap, n_iter=self.inner_iterations,
            wall_s=time.perf_counter() - t0, history=frame, bound_kind=power.bound_kind,
            power=power, network_fingerprint=self.problem.network_fingerprint)
        # The one status rule: "optimal" only where the reported bound certifies tol (a
        # run that stopped on its certificate and lost it when its best master was
        # finished is "converged"); a −inf or NaN objective is "failed".
        out = apply_status_rule(problem, out, self.tol, uncertified=CONVERGED)
        stop = _stop_text(stopped_by, why, len(history), max_iter, self.inner_iterations,
                          kind, info, out.status)
        power = dataclasses.replace(power, stop=stop)
        return dataclasses.replace(out, power=power)


def _stop_text(stopped_by: str, why: str, n_iter: int, max_iter: int | None, inner: int,
               kind: str | None, info: dict[str, Any], final: str) -> str:
    """Why column generation stopped and what the bounds then said, in words."""
    budget = "" if max_iter is None else f" of at most {max_iter}"
    text = (f"column generation stopped after {n_iter}{budget} iterations ({inner} master "
            f"iterations), {stopped_by}: {why}")
    if kind is None:
        text += "; no bound computed"
    else:
        what = f"{kind} bound" + (f" ({info['relaxation']})" if "relaxation" in info else "")
        text += f"; then the {what}: bound factor {_factor_text(info.get('bound_factor', np.inf))}"
    if "estimate_factor" in info:
        text += (f", estimate factor {_factor_text(info['estimate_factor'])} (at iteration "
                 f"{info['estimate_iteration']}'s prices)")
    if final != stopped_by:
        text += f"; status {final}"
    return text


def _factor_text(factor: float) -> str:
    """A factor ≥ 1 in words that never round a shortfall away: 1.0417, or 1 + 3.2e-05
    when it is within 1e-3 of 1 (".4g" would print 1, which reads as nothing left)."""
    return f"{factor:.4g}" if not 1.0 < factor < 1.001 else f"1 + {factor - 1.0:.2g}"


def _without_small_shares(problem: Problem, sol: Solution, tol: float) -> Solution:
    """`sol` with the patterns of less than :data:`_SMALL_SHARE` of the band dropped, if
    that costs less than a tenth of `tol` (relative).

    Interior-point masters leave small positive shares on patterns the optimum does not
    use; a cell switched on there for 0.01 % of the time is not "on" for a planner. The
    kept shares are scaled up to fill the band, and so are the users' shares on them.
    """
    theta = sol.pattern_share
    keep = theta >= _SMALL_SHARE
    if keep.all() or not keep.any():
        return sol
    scale = np.where(keep, 1.0 / theta[keep].sum(), 0.0)
    theta = theta * scale
    x = repair(problem, sol.x * scale[problem.resource], theta)
    pruned = build_solution(problem, x, method=sol.method, status=sol.status,
                            message=sol.message, mu=sol.prices["airtime"].ravel(),
                            nu=sol.prices["backhaul"], n_iter=sol.n_iter, wall_s=sol.wall_s,
                            history=sol.history, upper_bound=sol.upper_bound, theta=theta)
    if pruned.objective >= sol.objective - 0.1 * tol * max(1.0, abs(sol.objective)):
        return pruned
    return sol


def _distinct(found: np.ndarray, existing: np.ndarray) -> np.ndarray:
    """The rows of `found` not in `existing`, without repeats, in their order."""
    if not len(found):
        return found
    is_new = ~(found[:, None, :] == existing[None, :, :]).all(axis=2).any(axis=1)
    found = found[is_new]
    _, first = np.unique(found, axis=0, return_index=True)
    return found[np.sort(first)]
