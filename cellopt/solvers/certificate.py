"""The certificate of every method: the dual bound g(μ, ν) and the rate-equivalent gap.

:func:`dual_bound` is an upper bound on the optimum at any prices μ, ν ≥ 0
(docs/model.md); :func:`certified_gap` turns the distance between such a bound and a
feasible objective into the factor by which every user's rate would have to grow to
close it (:func:`utility_scale` converts utility into that factor).
"""

from __future__ import annotations

import numpy as np

from cellopt.errors import ValidationError
from cellopt.problem import Problem
from cellopt.solvers.common import link_prices, user_min, user_value

__all__ = ["block_airtime_value", "certified_gap", "dual_bound", "utility_scale"]


def block_airtime_value(problem: Problem, mu: np.ndarray) -> np.ndarray:
    """Σ_{j∈b} μ_jk − E_bk for every (block, pattern), shape (n_blocks, n_resources) (−inf: absent)."""
    per = np.zeros(problem.block_cost.shape)
    np.add.at(per, problem.cell_block, np.asarray(mu, float).reshape(problem.n_cells, -1))
    return per - problem.block_cost


def dual_bound(problem: Problem, mu: np.ndarray, nu: np.ndarray | None = None) -> float:
    """The dual function g(μ, ν) (docs/model.md): an upper bound on the optimum for any μ, ν ≥ 0.

    ``g = Σ μ_jk + Σ ν_j C_j + Σ_i max_{0≤r≤r̄_i} [w_i U(r) − π_i* r]`` with
    ``π_i* = min_{e∋i} (μ_jk / R_e + c_j + ν_j)`` and ``r̄_i = min(d_i, Σ_{e∋i} R_e)``.
    With free pattern shares the airtime term ``Σ μ_jk`` becomes
    ``max_k (Σ_j μ_jk − E_k)``: the band goes to the pattern whose airtime is worth most
    (one such term per share block, summed).

    Parameters
    ----------
    problem : Problem
    mu : ndarray, shape (n_cells, n_resources) or (n_groups,)
        Airtime prices ≥ 0.
    nu : ndarray, shape (n_cells,), optional
        Backhaul prices ≥ 0 [utility per Mbit/s]; ignored (taken as 0) on cells without a
        cap, where any positive price would only loosen the bound. Default 0.

    Returns
    -------
    float
    """
    mu = np.asarray(mu, float).reshape(-1)
    nu = np.zeros(problem.n_cells) if nu is None else np.asarray(nu, float)
    if mu.shape != (problem.n_groups,) or nu.shape != (problem.n_cells,):
        raise ValidationError(f"prices have shapes {mu.shape}, {nu.shape}; expected "
                         f"({problem.n_groups},) and ({problem.n_cells},)")
    if (mu < 0).any() or (nu < 0).any() or np.isnan(mu).any() or np.isnan(nu).any():
        raise ValidationError("prices must be ≥ 0 (and not NaN)")
    capped = np.isfinite(problem.backhaul_mbps)
    nu = np.where(capped, nu, 0.0)
    pi = user_min(problem, link_prices(problem, mu, nu))
    # Users without links (allowed for α < 1) contribute max_r≤0 = w U(0).
    value = user_value(np.where(np.isfinite(pi), pi, 0.0), problem.weight, problem.alpha,
                       problem.rate_cap_mbps)
    if problem.free_shares:
        airtime = float(block_airtime_value(problem, mu).max(axis=1).sum())
    else:
        airtime = float(mu.sum())
    return float(airtime + (nu[capped] * problem.backhaul_mbps[capped]).sum() + value.sum())


def utility_scale(problem: Problem, util: float) -> float:
    """S = Σ_i w_i r_i^(1−α), the derivative of Σ_i w_i U(c r_i) in c at c = 1.

    It converts a utility difference into a rate factor: Σ w (= S) for α = 1, else
    Σ w + (1−α) Σ w U(r) from the utility `util` of the same rates (exact for the
    form of :func:`~cellopt.problem.utility`).
    """
    total = float(problem.weight.sum())
    return total if problem.alpha == 1 else total + (1.0 - problem.alpha) * util


def certified_gap(problem: Problem, upper_bound: float | None, objective: float,
                  util: float) -> float | None:
    """The rate-equivalent gap c − 1 between an upper bound and a feasible objective.

    c is the factor by which every user's rate would have to grow, at the same payments
    and energy cost, for the objective to reach `upper_bound`:
    ``Σ w U(c r) − cost = upper_bound``. No allocation gives everyone more than c times
    these rates. For α = 1, ``c = exp((UB − obj) / Σ w)``; otherwise
    ``c^(1−α) = 1 + (1−α)(UB − obj) / S`` (:func:`utility_scale`), inf where no factor
    reaches the bound. The same number means the same at every α and every scale of
    weights and rates.

    Parameters
    ----------
    problem : Problem
    upper_bound : float or None
    objective : float
        Σ w U(r) − cost − energy cost of a feasible point.
    util : float
        Its utility part Σ w U(r).

    Returns
    -------
    float or None
        None without a bound or for a −inf objective (some user at rate 0 with α ≥ 1).
    """
    if upper_bound is None or np.isnan(upper_bound) or not np.isfinite(objective):
        return None
    delta = float(upper_bound - objective)
    if delta == 0.0 or problem.n_users == 0:
        return 0.0 if delta <= 0 else np.inf
    scale = utility_scale(problem, util)
    if not scale > 0:  # every user at rate 0 (α < 1): no factor helps
        return np.inf if delta > 0 else 0.0
    alpha = problem.alpha
    if alpha == 1:
        log_c = delta / scale
    else:
        t = (1.0 - alpha) * delta / scale
        if t <= -1.0:
            return np.inf
        log_c = np.log1p(t) / (1.0 - alpha)
    with np.errstate(over="ignore"):
        return float(np.expm1(log_c))
