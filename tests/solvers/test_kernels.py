"""The compiled kernels of ``dual`` (cellopt/solvers/kernels.py) against their numpy forms.

Each kernel must equal the numpy computation it replaces to rounding on random inputs of
several shapes, empty ones included, and ``dual`` must give the same certified answer
(within tol) with the kernels on and off (``CELLOPT_JIT=0``).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from helpers.problems import random_problem

from cellopt import Problem, jit
from cellopt.solvers import common, kernels, solve
from cellopt.solvers.certificate import certified_gap
from cellopt.solvers.dual_model import _ACTIVE_WEIGHT, SmoothedDual

pytestmark = pytest.mark.skipif(not jit.compiled(), reason="numba not importable")

RTOL = 1e-12
# Seeds of the "drawn" family (caps, prices and demands drawn; α = (0.5, 1, 2)[seed % 3]),
# then α = 0 (linear utility, the softplus-smoothed φ) on some of them.
SEEDS = (0, 1, 2, 5, 13, 31)
CASES = [(s, None) for s in SEEDS] + [(3, 0.0), (4, 0.0)]


def _problem(seed: int, alpha: float | None) -> Problem:
    p = random_problem(seed, "drawn")
    return p if alpha is None else p.replace(alpha=alpha)


def _close(got, want, name: str, rtol: float = RTOL) -> None:
    """Equal to rounding: `rtol` (1e-12), and an absolute 1e-15 of the largest entry
    (weights below exp(−37), which the kernel sets to 0, change no user's total)."""
    got, want = np.asarray(got, float), np.asarray(want, float)
    assert got.shape == want.shape, name
    scale = float(np.max(np.abs(want[np.isfinite(want)]), initial=0.0))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-15 * scale, err_msg=name)


def _soft_min_rtol(pi: np.ndarray, tau: float) -> float:
    """The rounding of the soft-min weights exp(−log π / τ): one ulp of log π (numpy's
    SIMD log and the C library's may differ by one) is amplified by 1/τ."""
    return max(RTOL, 4e-16 * float(np.max(np.abs(np.log(pi)), initial=1.0)) / tau)


def _random_prices(model: SmoothedDual, rng: np.random.Generator) -> np.ndarray:
    """Scaled prices around the equal-share start, some at their bound."""
    y = rng.lognormal(0.0, 1.0, model.n)
    y[rng.random(model.n) < 0.2] = 0.0
    return np.maximum(y, model.lb)


@pytest.mark.parametrize("seed,alpha", CASES)
@pytest.mark.parametrize("tau", [0.05, 1e-3, 1e-6])
def test_users_pass_equals_numpy(seed, alpha, tau):
    model = SmoothedDual(_problem(seed, alpha), 1e-4)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        mu, nu = model.prices(_random_prices(model, rng))
        got = list(model._users_compiled(mu, nu, tau))
        want = model._users_numpy(mu, nu, tau)
        assert got[2] is None        # a = ∂m/∂π: the Hessian kernel takes share · m / π
        got[2] = got[1] * got[4][model.seg] / got[0]
        names = ("pi", "share", "a", "x", "m", "r", "h", "smooth", "exact", "air", "traffic")
        rtol = _soft_min_rtol(want[0], tau)
        for name, g, w in zip(names, got, want, strict=True):
            _close(g, w, name, RTOL if name in ("pi", "exact") else rtol)


@pytest.mark.parametrize("seed,alpha", CASES)
@pytest.mark.parametrize("tau", [0.05, 1e-3])
def test_hessian_equals_numpy(seed, alpha, tau, monkeypatch):
    model = SmoothedDual(_problem(seed, alpha), 1e-4)
    rng = np.random.default_rng(100 + seed)
    monkeypatch.setenv(jit.ENV_SWITCH, "0")
    pt = model.evaluate(_random_prices(model, rng), tau)      # numpy inputs for both
    want = model._hessian_numpy(pt, tau).toarray()
    data, indices, indptr = kernels.hessian_csr(
        pt.share, pt.pi, pt.r, pt.m, pt.h, model.starts, model.g, model.R,
        model.link_cap, model.s, model.G, model.n, tau, _ACTIVE_WEIGHT)
    assert indptr.shape == (model.n + 1,) and indptr[-1] == len(data) == len(indices)
    for row in range(model.n):   # no duplicate column in a row
        cols = indices[indptr[row]:indptr[row + 1]]
        assert len(np.unique(cols)) == len(cols)
    got = sp.csr_array((data, indices, indptr), shape=(model.n, model.n)).toarray()
    # Entries are sums of terms of both signs (a split user's rank-one term cancels part
    # of its links' diagonal): rounding is relative to the sum of the terms' magnitudes.
    bound = RTOL * _hessian_magnitude(model, pt, tau) + 1e-300
    assert np.all(np.abs(got - want) <= bound), np.max(np.abs(got - want) / bound)
    assert np.all(np.abs(got - got.T) <= bound)


def _hessian_magnitude(model: SmoothedDual, pt, tau: float) -> np.ndarray:
    """Σ over the Hessian's terms of their absolute values, shape (n, n)."""
    idx = np.flatnonzero(pt.share > _ACTIVE_WEIGHT)
    seg = model.seg[idx]
    share, pi = pt.share[idx], pt.pi[idx]
    r, m, h = pt.r[seg], pt.m[seg], pt.h[seg]
    k = 1.0 + 1.0 / tau
    a = share * m / pi
    coef = h - r * k / m
    split = np.bincount(seg, minlength=len(model.starts))[seg] > 1
    diag = np.abs(h * a * a) + np.abs(r * k * (a / pi) * (1.0 - share)) \
        + np.where(split, np.abs(coef) * a * a, 0.0)
    rows = np.arange(len(idx))
    capl = model.link_cap[idx]
    withcap = capl >= 0
    J = sp.csr_array((np.r_[model.s[model.g[idx]] / model.R[idx],
                            model.s[model.G + capl[withcap]]],
                      (np.r_[rows, rows[withcap]], np.r_[model.g[idx], model.G + capl[withcap]])),
                     shape=(len(idx), model.n))
    M = J.T @ sp.diags_array(diag) @ J
    users = sp.csr_array((np.where(split, a, 0.0), (seg, rows)),
                         shape=(len(model.starts), len(idx)))
    B = users @ J
    cu = np.zeros(len(model.starts))
    cu[seg] = np.abs(coef)
    return (M + B.T @ sp.diags_array(cu) @ B).toarray()


def _random_shares(p: Problem, rng: np.random.Generator) -> np.ndarray:
    """Shares around a feasible scale, some negative or above 1 (repair clips them)."""
    x = rng.uniform(-0.2, 1.2, p.n_links) * rng.lognormal(-1.0, 1.0, p.n_links)
    x[rng.random(p.n_links) < 0.2] = 0.0
    return x


@pytest.mark.parametrize("seed,alpha", CASES)
def test_recovery_kernels_equal_numpy(seed, alpha):
    p = _problem(seed, alpha)
    rng = np.random.default_rng(200 + seed)
    with_backhaul = bool(np.isfinite(p.backhaul_mbps).any())
    with_demand = bool(np.isfinite(p.demand_mbps).any())
    with_price = bool(np.any(p.price_per_mbps))
    ones = np.ones(p.n_groups)
    capacity = rng.uniform(0.2, 1.0, p.n_groups)
    for _ in range(3):
        x = _random_shares(p, rng)
        for cap in (ones, capacity):
            got = kernels.repair(x, p.group, p.cell, p.user, p.rate_mbps, cap, p.backhaul_mbps,
                                 p.demand_mbps, with_backhaul, with_demand)
            # common.repair with capacity 1 (fixed resources); the general capacity by
            # hand, as repair does it with pattern shares.
            if cap is ones:
                _close(got, common.repair(p, x), "repair")
            got_first = kernels.demand_first(x, p.group, p.user, p.rate_mbps, cap, p.demand_mbps)
            _close(got_first, common.demand_first(p, x, cap), "demand_first")
        xf = common.repair(p, x)
        util, cost = kernels.objective_terms(xf, p.cell, p.user, p.rate_mbps, p.weight,
                                             p.alpha, p.price_per_mbps, with_price)
        want_util, want_cost = common.objective_terms(p, xf)
        _close(util, want_util, "utility")
        _close(cost, want_cost, "cost")
        priced = rng.random(p.n_groups) < 0.6
        got = kernels.recover_feasible(p, x, priced, [None])
        want = common.recover_feasible(p, x, priced, [None])
        _close(got[0], want[0], "recovered x")
        _close(got[1], want[1], "objective")
        _close(got[3], want[3], "utility")


def test_empty_inputs():
    empty_i, empty_f = np.zeros(0, np.int64), np.zeros(0)
    mu, nu = np.array([1.0, 2.0]), np.array([0.5])
    pi, weight, pmin, zmax, total = kernels.soft_min_weights(
        mu, nu, empty_i, empty_f, empty_f, empty_i, empty_i, 0.01)
    assert all(len(v) == 0 for v in (pi, weight, pmin, zmax, total))
    share, x, air, traffic = kernels.implied_flows(
        empty_f, empty_f, empty_f, empty_f, empty_f, empty_f, empty_i, empty_i, empty_i, 2, 1)
    assert len(share) == len(x) == 0
    np.testing.assert_array_equal(air, [0.0, 0.0])
    np.testing.assert_array_equal(traffic, [0.0])
    data, indices, indptr = kernels.hessian_csr(
        empty_f, empty_f, empty_f, empty_f, empty_f, empty_i, empty_i, empty_f,
        empty_i, np.ones(3), 2, 3, 0.01, _ACTIVE_WEIGHT)
    assert len(data) == len(indices) == 0 and np.all(indptr == 0) and len(indptr) == 4
    out = kernels.repair(empty_f, empty_i, empty_i, empty_i, empty_f, np.ones(2),
                         np.full(1, 3.0), np.full(1, 2.0), True, True)
    assert len(out) == 0
    util, cost = kernels.objective_terms(empty_f, empty_i, empty_i, empty_f, np.ones(2), 0.5,
                                         np.zeros(1), False)
    assert util == pytest.approx(2 * -1.0 / 0.5) and cost == 0.0


def test_single_links_and_ties():
    # one link per user (the soft-min is that price) and users with exactly tied links
    user = np.array([0, 1, 1, 2, 2, 2])
    cell = np.array([0, 0, 1, 0, 1, 2])
    rate = np.array([3.0, 2.0, 2.0, 1.0, 4.0, 4.0])
    p = Problem.from_links(user, cell, rate, n_users=3, n_cells=3, alpha=1.0,
                           backhaul_mbps=np.array([np.inf, 5.0, np.inf]))
    model = SmoothedDual(p, 1e-4)
    y = np.ones(model.n)
    for tau in (0.05, 1e-4):
        mu, nu = model.prices(y)
        want = model._users_numpy(mu, nu, tau)
        rtol = _soft_min_rtol(want[0], tau)
        got = model._users_compiled(mu, nu, tau)
        for k, name in ((0, "pi"), (1, "share"), (3, "x"), (4, "m")):
            _close(got[k], want[k], name, rtol)


@pytest.mark.parametrize("seed", [0, 1, 2, 7, 11])
def test_dual_same_answer_with_kernels_off(seed, monkeypatch):
    p = random_problem(seed, "drawn")
    tol = 1e-4
    on = solve(p, method="dual", tol=tol)
    monkeypatch.setenv(jit.ENV_SWITCH, "0")
    off = solve(p, method="dual", tol=tol)
    assert on.status == off.status
    if on.status == "optimal":
        # each one's feasible point within tol of the other's bound
        for a, b in ((on, off), (off, on)):
            gap = certified_gap(p, a.upper_bound, b.objective, b.utility)
            assert gap is not None and gap <= tol * (1 + 1e-9)
