"""Pieces every solver shares: user best responses, shares, loads, repair.

The certificate (the dual bound and the gap) is in :mod:`cellopt.solvers.certificate`,
the filling of a :class:`~cellopt.Solution` in :mod:`cellopt.solvers.result`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import numpy as np
import scipy.linalg  # noqa: F401  (loads scipy's own BLAS before the controller below looks)
from threadpoolctl import ThreadpoolController

from cellopt.errors import ValidationError, describe_rows
from cellopt.problem import Problem, utility

__all__ = [
    "best_rate",
    "block_shares",
    "block_zero_capacity",
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
]

#: Every BLAS library loaded when this module is imported: numpy's and scipy's (each
#: wheel bundles its own OpenBLAS). A controller made before scipy's was loaded would
#: leave it multithreaded, and the solvers' results would then depend on import order.
_BLAS = ThreadpoolController()


_INSIDE = threading.local()   # .depth: how many one_blas_thread blocks this thread is in


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Context manager: one BLAS thread. Multithreaded OpenBLAS factorizes the small dense
    Schur / Newton matrices of the solvers orders of magnitude slower (thread start-up).

    Nested blocks (a solver's factorizations inside ``cellopt.solve``'s own block) cost
    nothing: only the outermost one sets and restores the limit (threadpoolctl's
    set-and-restore takes ~0.1 ms, once per Newton step it was a few % of a small solve).
    """
    depth = getattr(_INSIDE, "depth", 0)
    if depth:
        _INSIDE.depth = depth + 1
        try:
            yield
        finally:
            _INSIDE.depth = depth
        return
    with _BLAS.limit(limits=1, user_api="blas"):
        _INSIDE.depth = 1
        try:
            yield
        finally:
            _INSIDE.depth = 0


def refuse_users_behind_closed_backhaul(problem: Problem) -> None:
    """Refuse users whose every link goes to a cell with ``backhaul_mbps = 0`` (α ≥ 1).

    Such a cell carries nothing, so those users get rate 0 and utility −inf at α ≥ 1.

    Raises
    ------
    ValidationError
        Naming the users, the cells and the fix.
    """
    closed = problem.backhaul_mbps <= 0
    if problem.alpha < 1 or not closed.any():
        return
    has_link = np.bincount(problem.user, minlength=problem.n_users) > 0
    has_open = np.bincount(problem.user[~closed[problem.cell]], minlength=problem.n_users) > 0
    stuck = np.flatnonzero(has_link & ~has_open)
    if len(stuck):
        raise ValidationError(
            f"users {describe_rows(stuck)} have links only to cells with backhaul_mbps = 0 "
            f"(cells {describe_rows(np.flatnonzero(closed))}), so their utility is −inf for "
            f"alpha={problem.alpha:g}; fix: give those cells capacity, add candidates, or drop "
            "the users")


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
    p = problem
    x = np.clip(np.asarray(x, float), 0.0, 1.0)
    airtime = np.bincount(p.group, x, minlength=p.n_groups)
    capacity = np.broadcast_to(group_capacity(p, theta), airtime.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = np.where(airtime > capacity, capacity / airtime, 1.0)
    x = x * scale[p.group]
    # Only the constraints the problem has (each sum over the links costs as much as a step).
    if np.isfinite(p.backhaul_mbps).any():
        traffic = np.bincount(p.cell, p.rate_mbps * x, minlength=p.n_cells)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            over = np.where(traffic > p.backhaul_mbps, p.backhaul_mbps / traffic, 1.0)
        x = x * over[p.cell]
    if np.isfinite(p.demand_mbps).any():
        rate = np.bincount(p.user, p.rate_mbps * x, minlength=p.n_users)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            over = np.where(rate > p.demand_mbps, p.demand_mbps / rate, 1.0)
        x = x * over[p.user]
    return x


def recover_feasible(problem: Problem, x: np.ndarray, priced: np.ndarray,
             shares: list[np.ndarray | None]
                     ) -> tuple[np.ndarray, float, np.ndarray | None, float]:
    """A feasible point from implied shares: (x, objective, θ, utility), the best found.

    For each candidate θ of `shares` (None for fixed resources): repair(x),
    repair(fill(x)), where fill rescales the `priced` groups (mask, shape (n_groups,)) to
    their full capacity (priced groups are saturated at the optimum), and with finite
    demands repair(:func:`demand_first` (x)).
    """
    p = problem
    best = (None, -np.inf, None, -np.inf)
    demands = bool(np.isfinite(p.demand_mbps).any())
    for theta in shares:
        theta = feasible_shares(p, theta)
        energy = energy_cost(p, theta)
        capacity = np.broadcast_to(group_capacity(p, theta), (p.n_groups,))
        x1 = repair(p, x, theta)
        air = np.bincount(p.group, x1, minlength=p.n_groups)
        fill = priced & (air > 1e-12) & (air < capacity)
        trials = [x1]
        if fill.any():
            factor = np.ones(p.n_groups)
            factor[fill] = capacity[fill] / air[fill]
            trials.append(repair(p, x1 * factor[p.group], theta))
        if demands:
            trials.append(repair(p, demand_first(p, x, capacity), theta))
        for xt in trials:
            util, cost = objective_terms(p, xt)
            if util - cost - energy > best[1]:
                best = (xt, util - cost - energy, theta, util)
    return best


def demand_first(problem: Problem, x: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Shares that serve the users near their demand first, shape (L,) (not yet feasible).

    Users whose rate under `x` is at least 90 % of their finite demand are scaled to
    exactly it: at the optimum a user whose price is low enough is served at its demand,
    while smoothed shares leave it a few % short (a user split over links gets less than
    its best response), and the loss of a short user is large for α > 1. Each group's
    remaining `capacity` (shape (n_groups,)) is then shared by its other users' shares,
    scaled up or down together.
    """
    p = problem
    x = np.clip(np.asarray(x, float), 0.0, 1.0)
    rate = np.bincount(p.user, p.rate_mbps * x, minlength=p.n_users)
    near = np.isfinite(p.demand_mbps) & (rate >= 0.9 * p.demand_mbps) & (rate > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = x * np.where(near, p.demand_mbps / rate, 1.0)[p.user]
    served = near[p.user]
    air_served = np.bincount(p.group, np.where(served, x, 0.0), minlength=p.n_groups)
    air_rest = np.bincount(p.group, np.where(served, 0.0, x), minlength=p.n_groups)
    factor = np.maximum(capacity - air_served, 0.0) / np.where(air_rest > 1e-12, air_rest, 1.0)
    factor[air_rest <= 1e-12] = 1.0
    return np.where(served, x, x * factor[p.group])


def objective_terms(problem: Problem, x: np.ndarray) -> tuple[float, float]:
    """(utility Σ w U(r), cost Σ c T) of shares x."""
    p = problem
    flow = p.rate_mbps * x
    rate = np.bincount(p.user, flow, minlength=p.n_users)
    with np.errstate(invalid="ignore"):
        util = float(np.sum(p.weight * utility(rate, p.alpha)))
    if not np.any(p.price_per_mbps):
        return util, 0.0
    traffic = np.bincount(p.cell, flow, minlength=p.n_cells)
    return util, float(np.dot(p.price_per_mbps, traffic))
