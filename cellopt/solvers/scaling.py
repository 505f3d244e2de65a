"""Solve at a scale where weights and rates are of order one, and report in the caller's units.

The association problem keeps its optimal shares x when rates are divided by a scale s
and weights by a scale ω: ``w U(s ρ) = ω s^(1−α) · w' U(ρ) + w U(s)`` with ``ρ = r / s``
and ``w' = w / ω``, so the objective only changes by a positive factor
``κ = ω s^(1−α)`` and a constant. Prices follow (``c' = c s / κ``, ``E' = E / κ``,
``μ = κ μ'``, ``ν = κ ν' / s``). The solvers therefore see weights and rates near 1,
where weights of 1e300 or rates of 1e-310 are ordinary numbers and the utility of
large α keeps its precision; the answer is mapped back exactly (s and ω are powers of
two). The rate-equivalent gap is unit-free and is kept as the solver computed it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from cellopt.checks import callback_stop
from cellopt.errors import ValidationError, describe_rows
from cellopt.problem import Problem, utility
from cellopt.solution import Solution
from cellopt.solvers.common import user_min

__all__ = ["Scale", "to_solver_units"]

#: Smallest link rate relative to the rate scale: 1/R and prices per Mbit/s stay finite.
_SMALLEST_RATE = 1e-250

#: History columns that hold objective values (mapped back like the objective).
_VALUE_COLUMNS = ("objective", "upper_bound", "smoothed_bound", "estimate")


def to_solver_units(problem: Problem) -> tuple[Scale, Problem]:
    """The problem's :class:`Scale` and the problem in solver units.

    Raises
    ------
    ValidationError
        For what floating point cannot hold: a link rate below :data:`_SMALLEST_RATE` of
        the scale (prices per Mbit/s overflow), a user whose utility overflows even at its
        best rate (e.g. 1e-100 Mbit/s at α = 5), units in which the objective overflows,
        and prices that overflow.
    """
    best = -user_min(problem, -problem.rate_mbps)  # each user's best link rate, −inf: none
    users = np.flatnonzero(np.isfinite(best))
    scale = Scale(rate_mbps=_power_of_two(best[users]), weight=_power_of_two(problem.weight),
                  alpha=problem.alpha, total_weight=float(problem.weight.sum()))
    if not (np.isfinite(scale.factor) and scale.factor > 0 and np.isfinite(scale.shift)):
        raise ValidationError(
            f"at alpha={problem.alpha:g}, rates of about {scale.rate_mbps:.3g} Mbit/s and "
            f"weights of about {scale.weight:.3g} give utilities beyond the floating-point "
            "range; fix: give rates in units near the typical rate (the answer does not "
            "depend on them), or a smaller alpha")
    scaled = scale.problem(problem)
    tiny = np.flatnonzero(scaled.rate_mbps < _SMALLEST_RATE)
    if len(tiny):
        raise ValidationError(
            f"links {describe_rows(scaled.link_index[tiny])} have rates "
            f"{problem.rate_mbps[tiny[:10]].tolist()} Mbit/s, below "
            f"{_SMALLEST_RATE:g} × the median best rate ({scale.rate_mbps:g} Mbit/s), where "
            "prices per Mbit/s overflow; fix: set these rates to 0 (such links carry nothing)")
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        value = scaled.weight[users] * utility(best[users] / scale.rate_mbps, scaled.alpha)
    bad = np.flatnonzero(~np.isfinite(value))
    if len(bad):
        raise ValidationError(
            f"users {describe_rows(users[bad])} have best link rates "
            f"{best[users[bad[:10]]].tolist()} Mbit/s, whose utility overflows at "
            f"alpha={scaled.alpha:g} even with the whole band; fix: drop these links or users "
            "(no real link carries so little), or use a smaller alpha")
    return scale, scaled


def _rescale(values: np.ndarray, factor: float, name: str) -> np.ndarray:
    """Prices or costs in solver units; 0 stays 0, and a positive one must stay finite."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.where(values == 0, 0.0, values * factor)
    bad = np.flatnonzero(np.isnan(out) | (np.isinf(out) & np.isfinite(values)))
    if len(bad):
        raise ValidationError(
            f"{name} at rows {bad[:10].tolist()} ({values.ravel()[bad[:10]].tolist()}) exceed "
            "the floating-point range against the utilities of these rates at this alpha "
            "(payments would dwarf every utility); fix: give prices on the scale of the "
            "utilities, or a smaller alpha")
    return out


def _power_of_two(values: np.ndarray) -> float:
    """The power of two nearest the median: a scale that outliers do not move and that
    divides exactly (1 for no values)."""
    if not len(values):
        return 1.0
    return float(2.0 ** np.round(np.log2(np.median(values))))


@dataclasses.dataclass(frozen=True)
class Scale:
    """The rate scale s [Mbit/s] and weight scale ω of one problem, and the maps between units.

    Attributes
    ----------
    rate_mbps : float
        s, the power of two nearest the median of the users' best link rates.
    weight : float
        ω, the power of two nearest the median weight.
    alpha : float
    total_weight : float
        Σ w in the caller's units.
    """

    rate_mbps: float
    weight: float
    alpha: float
    total_weight: float

    @property
    def factor(self) -> float:
        """κ = ω s^(1−α): objective values in the caller's units per solver unit."""
        with np.errstate(over="ignore", under="ignore"):
            return float(self.weight * np.float64(self.rate_mbps) ** (1.0 - self.alpha))

    @property
    def shift(self) -> float:
        """Σ w U(s), the constant between the two objectives."""
        with np.errstate(over="ignore"):
            return self.total_weight * float(utility(self.rate_mbps, self.alpha))

    def value(self, v: float | None) -> float | None:
        """An objective or bound in the caller's units."""
        return None if v is None else float(self.factor * v + self.shift)

    def problem(self, problem: Problem) -> Problem:
        """The problem in solver units."""
        s, k = self.rate_mbps, self.factor
        changes: dict[str, Any] = dict(
            rate_mbps=problem.rate_mbps / s, demand_mbps=problem.demand_mbps / s,
            backhaul_mbps=problem.backhaul_mbps / s, weight=problem.weight / self.weight,
            price_per_mbps=_rescale(problem.price_per_mbps, s / k, "price_per_mbps"))
        if problem.pattern_cost is not None:
            changes["pattern_cost"] = _rescale(problem.pattern_cost, 1.0 / k, "pattern_cost")
        return problem.replace(**changes)

    def options(self, options: dict[str, Any]) -> dict[str, Any]:
        """Method options in solver units (warm-start prices)."""
        if options.get("prices0") is None:
            return options
        mu, nu = options["prices0"]
        k = self.factor
        return {**options, "prices0": (np.asarray(mu, float) / k,
                                       np.asarray(nu, float) * (self.rate_mbps / k))}

    def callback(self, callback: Callable[[dict[str, Any]], bool | None] | None
                 ) -> Callable[[dict[str, Any]], bool | None] | None:
        """The caller's callback, seeing rows in the caller's units."""
        if callback is None:
            return None

        def mapped(row: dict[str, Any]) -> bool | None:
            row = dict(row)
            for key in _VALUE_COLUMNS:
                if row.get(key) is not None and np.isfinite(row[key]):
                    row[key] = self.value(row[key])
            return callback_stop(callback(row))

        return mapped

    def solution(self, sol: Solution) -> Solution:
        """A solution of the scaled problem in the caller's units (x, θ and the gap unchanged)."""
        s, k = self.rate_mbps, self.factor
        with np.errstate(invalid="ignore", over="ignore"):  # inf bounds and prices stay inf
            history = sol.history.copy()
            for col in _VALUE_COLUMNS:
                if col in history:
                    history[col] = k * history[col].astype(float) + self.shift
            utility_value = float(k * sol.utility + self.shift)
            cost, energy = float(k * sol.cost), float(k * sol.energy_cost)
            return dataclasses.replace(
                sol, utility=utility_value, cost=cost, energy_cost=energy,
                objective=utility_value - cost - energy, upper_bound=self.value(sol.upper_bound),
                history=history, user_rate_mbps=sol.user_rate_mbps * s,
                cell_traffic_mbps=sol.cell_traffic_mbps * s,
                prices={"airtime": sol.prices["airtime"] * k,
                        "backhaul": sol.prices["backhaul"] * (k / s)},
                cell_payment=None if sol.cell_payment is None else sol.cell_payment * k)
