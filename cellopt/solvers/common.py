"""Pieces every solver shares: user best responses, the dual bound, loads, repair, results."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import ThreadpoolController

from cellopt.errors import ValidationError
from cellopt.problem import Problem, utility
from cellopt.solution import Solution

__all__ = [
    "best_rate",
    "block_airtime_value",
    "block_shares",
    "block_zero_capacity",
    "build_solution",
    "certified_gap",
    "dual_bound",
    "energy_cost",
    "feasible_shares",
    "group_capacity",
    "link_prices",
    "loads",
    "objective_terms",
    "one_blas_thread",
    "recover_feasible",
    "repair",
    "user_min",
    "user_value",
    "utility_scale",
]


_BLAS = ThreadpoolController()


def one_blas_thread() -> Any:
    """Context manager: one BLAS thread. Multithreaded OpenBLAS factorizes the small dense
    Schur / Newton matrices of the solvers orders of magnitude slower (thread start-up)."""
    return _BLAS.limit(limits=1, user_api="blas")


def best_rate(price: np.ndarray, weight: np.ndarray, alpha: float, cap: np.ndarray) -> np.ndarray:
    """argmax over 0 ≤ r ≤ cap of ``w U_α(r) − π r``, in closed form.

    ``r = min(cap, (w / π)^(1/α))`` for α > 0 (cap where π = 0); for α = 0 (linear),
    cap where w > π, else 0.

    Parameters
    ----------
    price : ndarray, shape (n,)
        π ≥ 0 [utility per Mbit/s].
    weight : ndarray, shape (n,)
    alpha : float
    cap : ndarray, shape (n,)
        r̄ [Mbit/s].
    """
    price = np.asarray(price, float)
    if alpha == 0:
        return np.where(weight > price, cap, 0.0)
    with np.errstate(divide="ignore", over="ignore"):
        return np.minimum(cap, (weight / price) ** (1.0 / alpha))


def user_value(price: np.ndarray, weight: np.ndarray, alpha: float, cap: np.ndarray) -> np.ndarray:
    """max over 0 ≤ r ≤ cap of ``w U_α(r) − π r`` per user (the user's term of g)."""
    r = best_rate(price, weight, alpha, cap)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = weight * utility(r, alpha) - price * r
    # r = 0 only happens for α < 1 (value w U(0)) or a user with nothing to buy (α ≥ 1: −inf).
    return np.where(r > 0, value, weight * utility(0.0, alpha))


def user_min(problem: Problem, values: np.ndarray) -> np.ndarray:
    """Minimum of a per-link quantity over each user's links, shape (n_users,) (inf: none).

    Relies on the problem's links being sorted by user.
    """
    out = np.full(problem.n_users, np.inf)
    if problem.n_links:
        starts = np.flatnonzero(np.r_[True, problem.user[1:] != problem.user[:-1]])
        out[problem.user[starts]] = np.minimum.reduceat(values, starts)
    return out


def link_prices(problem: Problem, mu: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """π_e = μ_jk / R_e + c_j + ν_j, the price per Mbit/s of each link, shape (L,)."""
    mu = np.asarray(mu, float).reshape(-1)
    return mu[problem.group] / problem.rate_mbps + problem.price_per_mbps[problem.cell] \
        + np.asarray(nu, float)[problem.cell]


def feasible_shares(problem: Problem, theta: np.ndarray | None) -> np.ndarray | None:
    """Pattern shares on the simplex of every share block, None for fixed resources.

    Negative entries and patterns a block does not have are set to 0 and each block's
    shares normalized; a block with no usable share gets equal shares.

    Returns
    -------
    ndarray, shape (n_resources,) for one block, (n_blocks, n_resources) with
    ``Problem.share_block``; or None.
    """
    if not problem.free_shares:
        return None
    avail = np.isfinite(problem.block_cost)
    equal = avail / avail.sum(axis=1, keepdims=True)
    if theta is None:
        t = equal
    else:
        t = np.where(avail, np.clip(np.asarray(theta, float).reshape(avail.shape), 0.0, None), 0.0)
        total = t.sum(axis=1, keepdims=True)
        ok = np.isfinite(total) & (total > 0)
        t = np.where(ok, t / np.where(ok, total, 1.0), equal)
    return t[0] if problem.share_block is None else t


def block_shares(problem: Problem, theta: np.ndarray | None) -> np.ndarray:
    """:func:`feasible_shares` as a 2-D array (n_blocks, n_resources)."""
    return np.atleast_2d(feasible_shares(problem, theta))


def group_capacity(problem: Problem, theta: np.ndarray | None) -> np.ndarray | np.floating:
    """Right-hand side of each airtime row: θ_bk of the cell's block for free shares, else 1."""
    if not problem.free_shares:
        return np.float64(1.0)
    return block_shares(problem, theta)[problem.cell_block].ravel()


def energy_cost(problem: Problem, theta: np.ndarray | None) -> float:
    """Σ_bk θ_bk E_bk, the energy cost of the pattern shares (0 for fixed resources)."""
    if not problem.free_shares:
        return 0.0
    cost = problem.block_cost
    return float(np.sum(np.where(np.isfinite(cost), cost, 0.0) * block_shares(problem, theta)))


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


def block_zero_capacity(problem: Problem, mu: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """ν on zero-capacity cells just high enough that no user would buy there.

    A cell with C_j = 0 can carry nothing; in the dual its ν_j C_j term is 0 for any ν_j,
    so a finite ν_j that prices its links above every user's best open link keeps the
    bound exact.
    """
    p = problem
    zero = p.backhaul_mbps <= 0
    if not zero.any() or not p.n_links:
        return nu
    nu = nu.copy()
    nu[zero] = 0.0
    pi = link_prices(p, mu, nu)
    best_open = user_min(p, np.where(zero[p.cell], np.inf, pi))
    # A user with links only to blocked cells (α < 1): price its links out by far.
    fallback = 1e12 * max(float(np.max(pi, initial=0.0)), 1.0)
    target = np.where(np.isfinite(best_open), best_open, fallback)[p.user]
    need = np.where(zero[p.cell], np.maximum(target - pi, 0.0), 0.0)
    top = np.zeros(p.n_cells)
    np.maximum.at(top, p.cell, need)
    nu[zero] = top[zero] * (1.0 + 1e-9) + 1e-12
    return nu


def loads(problem: Problem, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """User rates (n_users,), airtime per group (n_groups,), cell traffic (n_cells,)."""
    flow = problem.rate_mbps * x
    return (np.bincount(problem.user, flow, minlength=problem.n_users),
            np.bincount(problem.group, x, minlength=problem.n_groups),
            np.bincount(problem.cell, flow, minlength=problem.n_cells))


def repair(problem: Problem, x: np.ndarray, theta: np.ndarray | None = None) -> np.ndarray:
    """Scale shares down until every constraint holds: airtime, then backhaul, then demand.

    Each step only lowers shares, so it never breaks the earlier constraints. With free
    pattern shares the airtime of pattern k is held to ``feasible_shares(theta)[k]``.

    Returns
    -------
    ndarray, shape (L,)
        A feasible x.
    """
    x = np.clip(np.asarray(x, float), 0.0, 1.0)
    _, airtime, _ = loads(problem, x)
    capacity = np.broadcast_to(group_capacity(problem, theta), airtime.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = np.where(airtime > capacity, capacity / airtime, 1.0)
    x = x * scale[problem.group]
    _, _, traffic = loads(problem, x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        over = np.where(traffic > problem.backhaul_mbps, problem.backhaul_mbps / traffic, 1.0)
    x = x * over[problem.cell]
    rate, _, _ = loads(problem, x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        over = np.where(rate > problem.demand_mbps, problem.demand_mbps / rate, 1.0)
    return x * over[problem.user]


def recover_feasible(problem: Problem, x: np.ndarray, priced: np.ndarray,
             shares: list[np.ndarray | None]
                     ) -> tuple[np.ndarray, float, np.ndarray | None, float]:
    """A feasible point from implied shares: (x, objective, θ, utility), the best found.

    For each candidate θ of `shares` (None for fixed resources): repair(x), and
    repair(fill(x)), where fill rescales the `priced` groups (mask, shape (n_groups,)) to
    their full capacity (priced groups are saturated at the optimum).
    """
    p = problem
    best = (None, -np.inf, None, -np.inf)
    for theta in shares:
        theta = feasible_shares(p, theta)
        energy = energy_cost(p, theta)
        capacity = np.broadcast_to(group_capacity(p, theta), (p.n_groups,))
        x1 = repair(p, x, theta)
        trials = [x1]
        _, air, _ = loads(p, x1)
        fill = priced & (air > 1e-12) & (air < capacity)
        if fill.any():
            factor = np.ones(p.n_groups)
            factor[fill] = capacity[fill] / air[fill]
            trials.append(repair(p, x1 * factor[p.group], theta))
        for xt in trials:
            util, cost = objective_terms(p, xt)
            if util - cost - energy > best[1]:
                best = (xt, util - cost - energy, theta, util)
    return best


def objective_terms(problem: Problem, x: np.ndarray) -> tuple[float, float]:
    """(utility Σ w U(r), cost Σ c T) of shares x."""
    rate, _, traffic = loads(problem, x)
    with np.errstate(invalid="ignore"):
        util = float(np.sum(problem.weight * utility(rate, problem.alpha)))
    return util, float(np.dot(problem.price_per_mbps, traffic))


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


def build_solution(
    problem: Problem,
    x: np.ndarray,
    *,
    method: str,
    status: str,
    message: str,
    mu: np.ndarray | None,
    nu: np.ndarray | None,
    n_iter: int,
    wall_s: float,
    history: pd.DataFrame | list[dict] | None = None,
    upper_bound: float | None = None,
    exceeded_backhaul: np.ndarray | None = None,
    theta: np.ndarray | None = None,
) -> Solution:
    """Fill every field of a :class:`Solution` from shares and prices.

    `x` must be feasible (pass it through :func:`repair`, with the same `theta` for free
    pattern shares). With prices and no explicit `upper_bound`, the bound is g(μ, ν) at
    those prices.
    """
    rate, airtime, traffic = loads(problem, x)
    util, cost = objective_terms(problem, x)
    theta = feasible_shares(problem, theta)
    energy = energy_cost(problem, theta)
    mu = np.zeros(problem.n_groups) if mu is None else np.maximum(np.asarray(mu, float), 0.0)
    nu = np.zeros(problem.n_cells) if nu is None else np.maximum(np.asarray(nu, float), 0.0)
    nu = np.where(np.isfinite(problem.backhaul_mbps), nu, 0.0)
    if upper_bound is None:
        upper_bound = dual_bound(problem, mu, nu)
    objective = util - cost - energy
    serving = np.full(problem.n_users, -1, dtype=np.int64)
    flow = problem.rate_mbps * x
    per_cell = pd.DataFrame({"u": problem.user, "c": problem.cell, "f": flow})
    per_cell = per_cell.groupby(["u", "c"], sort=False)["f"].sum().reset_index()
    top = per_cell.sort_values(["u", "f"], ascending=[True, False]).drop_duplicates("u")
    top = top[top["f"] > 0]
    serving[top["u"].to_numpy()] = top["c"].to_numpy()
    if history is None:
        history = []
    history = history if isinstance(history, pd.DataFrame) else pd.DataFrame(history)
    offload = None
    if problem.third_party is not None:
        total = traffic.sum()
        offload = float(traffic[problem.third_party].sum() / total) if total > 0 else 0.0
    return Solution(
        status=status, message=message, method=method, utility=util, cost=cost,
        energy_cost=energy, objective=objective, upper_bound=upper_bound,
        gap=certified_gap(problem, upper_bound, objective, util),
        n_iter=int(n_iter), wall_s=float(wall_s), history=history, x=x,
        user_rate_mbps=rate, cell_airtime=airtime.reshape(problem.n_cells, problem.n_resources),
        cell_traffic_mbps=traffic,
        prices={"airtime": mu.reshape(problem.n_cells, problem.n_resources), "backhaul": nu},
        serving_cell=serving,
        exceeded_backhaul=np.zeros(0, np.int64) if exceeded_backhaul is None
        else np.asarray(exceeded_backhaul, np.int64),
        pattern_share=theta, bound_kind=None if upper_bound is None else "problem",
        cell_payment=problem.price_per_mbps * traffic, offload_share=offload,
    )
