"""An independent oracle for the rate-equivalent gap: the factor c found by a scalar solve."""

from __future__ import annotations

import numpy as np
import scipy.optimize


def utility_sum(rate: np.ndarray, weight: np.ndarray, alpha: float) -> float:
    """Σ w U_α(r) with U_α(r) = (r^(1−α) − 1)/(1−α), log r at α = 1 (written out again)."""
    rate = np.asarray(rate, float)
    with np.errstate(divide="ignore"):
        if alpha == 1:
            return float(np.sum(weight * np.log(rate)))
        # r^(1−α) − 1 as expm1((1−α) log r): no cancellation when α is near 1
        return float(np.sum(weight * np.expm1((1 - alpha) * np.log(rate)) / (1 - alpha)))


def rate_factor(rate: np.ndarray, weight: np.ndarray, alpha: float, paid: float,
                upper_bound: float) -> float:
    """The c with Σ w U(c r) − paid = upper_bound, by bisection on c (inf if none)."""
    def excess(log_c: float) -> float:
        return utility_sum(np.exp(log_c) * rate, weight, alpha) - paid - upper_bound

    if excess(0.0) >= 0:
        return 1.0
    hi = 1e-3
    while excess(hi) < 0:
        hi *= 2
        if hi > 700:
            return np.inf
    return float(np.exp(scipy.optimize.brentq(excess, 0.0, hi, xtol=1e-15, rtol=1e-13)))


def gap_of(sol, problem) -> float:
    """The oracle's c − 1 for a Solution of `problem`."""
    paid = sol.cost + sol.energy_cost
    return rate_factor(sol.user_rate_mbps, problem.weight, problem.alpha, paid,
                       sol.upper_bound) - 1.0


def true_gap(sol, problem, optimum: float) -> float:
    """c − 1 of `sol` against a known optimum (e.g. the cvxpy reference's objective)."""
    paid = sol.cost + sol.energy_cost
    return rate_factor(sol.user_rate_mbps, problem.weight, problem.alpha, paid, optimum) - 1.0
