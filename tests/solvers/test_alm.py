"""alm specifics: warm starts, the semismooth Newton solver against independent oracles,
the compiled kernels against their numpy forms."""

import numpy as np
import pytest
import scipy.optimize
from helpers.checks import assert_feasible
from helpers.gap_oracle import true_gap
from helpers.problems import one_cell

import cellopt
from cellopt import jit
from cellopt.solvers import alm, alm_kernels
from cellopt.solvers.common import objective_terms, repair


def _problem(seed: int = 0) -> cellopt.Problem:
    rng = np.random.default_rng(seed)
    n_users, n_cells = 60, 6
    user = np.repeat(np.arange(n_users), 3)
    cell = np.concatenate([rng.choice(n_cells, 3, replace=False) for _ in range(n_users)])
    rate = rng.lognormal(np.log(5.0), 1.0, len(user))
    caps = np.where(np.arange(n_cells) < 2, 20.0, np.inf)
    return cellopt.Problem.from_links(user, cell, rate, n_users=n_users, n_cells=n_cells,
                                      backhaul_mbps=caps)


def test_warm_start_from_a_solution_certifies_at_once():
    p = _problem()
    cold = cellopt.solve(p, method="alm", tol=1e-6)
    warm = cellopt.solve(p, method="alm", tol=1e-6, x0=cold.x,
                         prices0=(cold.prices["airtime"], cold.prices["backhaul"]))
    assert cold.status == warm.status == "optimal"
    assert warm.n_iter <= 2 < cold.n_iter
    # Both within a rate factor 1 + 1e-6 of the optimum: log-utilities within 1e-6 Σ w.
    assert abs(warm.objective - cold.objective) <= 1e-6 * p.weight.sum()


def test_newton_direction_solves_the_proximal_system():
    p = _problem(1)
    lag = alm._Lagrangian(p)
    rng = np.random.default_rng(2)
    x = rng.uniform(0.01, 0.3, p.n_links)
    y = (rng.uniform(0, 5, p.n_groups), rng.uniform(0, 1, p.n_cells) * lag.row_masks[1],
         np.zeros(p.n_users))
    sigma = 3.0
    grad, _, r, s = lag.gradient(x, None, y, sigma)
    free = rng.uniform(size=p.n_links) < 0.8
    tau = rng.uniform(1e-3, 1e-1, p.n_links)
    d, _ = lag.newton_direction(grad, r, s, sigma, free, tau)
    # Dense Hessian by central differences of the (analytic) gradient, on the free links.
    f = np.flatnonzero(free)
    eye = np.eye(p.n_links)
    hess = np.array([(lag.gradient(x + 1e-7 * eye[i], None, y, sigma)[0]
                      - lag.gradient(x - 1e-7 * eye[i], None, y, sigma)[0]) / 2e-7 for i in f])[:, f]
    expected = np.linalg.solve(hess + np.diag(tau[f]), -grad[f])
    # Agreement to finite-difference accuracy.
    assert np.allclose(d, expected, rtol=1e-3, atol=1e-5 * np.abs(expected).max())
    # Its diagonal is what curvature() reports (the active-set test uses it).
    diag, _ = lag.curvature(r, s, sigma)
    assert np.allclose(np.diag(hess), diag[f], rtol=1e-4, atol=1e-6 * diag.max())


# ---------------------------------------------------------------- the semismooth Newton solver
def _drawn_problem(seed: int, **options) -> cellopt.Problem:
    from helpers.problems import random_problem

    return random_problem(seed, "drawn", **options)


@pytest.mark.parametrize("seed", range(8))
def test_matches_the_reference_on_random_instances(seed):
    # Unequal weights, α cycling through (0.5, 1, 2), backhaul caps, prices and demands.
    p = _drawn_problem(seed)
    rng = np.random.default_rng(100 + seed)
    p = p.replace(weight=rng.lognormal(0.0, 0.7, p.n_users))
    ref = cellopt.solve(p, method="reference", tol=1e-8)
    sol = cellopt.solve(p, method="alm", tol=1e-5)
    assert sol.status == "optimal", sol.message
    assert_feasible(p, sol.x)
    # The certificate is honest: the reference optimum is below the bound, and the
    # objective is within tol (as a rate factor) of it.
    assert sol.upper_bound >= ref.objective - 1e-7 * max(1.0, abs(ref.objective))
    assert true_gap(sol, p, ref.objective) <= 1e-5 + 1e-9


def test_hand_solvable_weighted_one_cell():
    # One cell shared by log-utility users: x_i = w_i / Σ w, U = Σ w_i log(R_i w_i / Σ w).
    rates = np.array([2.0, 5.0, 10.0, 40.0])
    weight = np.array([1.0, 2.0, 0.5, 1.5])
    p = one_cell(rates, weight=weight)
    sol = cellopt.solve(p, method="alm", tol=1e-7)
    assert sol.status == "optimal", sol.message
    share = weight / weight.sum()
    assert np.allclose(sol.x, share, atol=1e-5)
    optimum = float(np.sum(weight * np.log(rates * share)))
    assert sol.objective <= optimum + 1e-9
    assert optimum <= sol.upper_bound + 1e-9
    assert sol.upper_bound - optimum <= 1e-6 * weight.sum()


def test_hand_solvable_demand_and_two_cells():
    # User 0 wants 1 Mbit/s of a 10 Mbit/s link (share 0.1); user 1 takes the rest of
    # cell 0 and all of cell 1, where it is alone: r_1 = 0.9 · 4 + 6.
    p = cellopt.Problem.from_links([0, 1, 1], [0, 0, 1], [10.0, 4.0, 6.0], n_users=2,
                                   n_cells=2, demand_mbps=[1.0, np.inf])
    sol = cellopt.solve(p, method="alm", tol=1e-7)
    assert sol.status == "optimal", sol.message
    assert np.allclose(sol.x, [0.1, 0.9, 1.0], atol=1e-5)
    assert np.isclose(sol.objective, np.log(1.0) + np.log(0.9 * 4.0 + 6.0), atol=1e-5)


@pytest.mark.parametrize("seed", range(3))
def test_no_feasible_point_beats_the_bound(seed):
    p = _drawn_problem(seed)
    sol = cellopt.solve(p, method="alm", tol=1e-4)
    rng = np.random.default_rng(seed)
    for _ in range(50):
        x = repair(p, sol.x * rng.uniform(0.0, 2.0, p.n_links) + rng.uniform(0, 0.2, p.n_links))
        util, cost = objective_terms(p, x)
        assert util - cost <= sol.upper_bound + 1e-9 * max(1.0, abs(sol.upper_bound))


def test_zero_links_leave_the_active_set():
    # At the optimum of a strictly concave problem at most (users + active rows) links
    # carry traffic; the semismooth Newton steps set the others exactly to zero, so users
    # are not spread thinly over every candidate cell.
    p = _problem(3)
    sol = cellopt.solve(p, method="alm", tol=1e-6)
    positive = np.count_nonzero(sol.x > 0)
    assert positive <= p.n_users + p.n_groups + p.n_cells
    assert np.count_nonzero((sol.x > 0) & (sol.x < 1e-9)) == 0


def test_deterministic():
    p = _drawn_problem(4)
    a = cellopt.solve(p, method="alm", tol=1e-5)
    b = cellopt.solve(p, method="alm", tol=1e-5)
    assert np.array_equal(a.x, b.x) and a.upper_bound == b.upper_bound


def test_inner_solver_matches_lbfgsb_on_a_subproblem():
    # The proximal augmented-Lagrangian subproblem of one outer iteration, solved by the
    # semismooth Newton steps and, independently, by scipy's L-BFGS-B on the same merit.
    p = _drawn_problem(5, alpha=1.0)
    lag = alm._Lagrangian(p)
    rng = np.random.default_rng(7)
    x0 = repair(p, rng.uniform(0.05, 0.5, p.n_links))
    y = (rng.uniform(0.5, 5.0, p.n_groups), rng.uniform(0, 1, p.n_cells) * lag.row_masks[1],
         rng.uniform(0, 1, p.n_users) * lag.has_demand)
    sigma = 3.0
    tau = np.full(p.n_links, 0.1)
    blocked = np.zeros(p.n_links, bool)
    x = x0.copy()
    steps, residual = alm._ssn_inner(lag, x, None, y, sigma, blocked, (x0, None), (tau, None),
                                     1e-8, 100)
    # (at 1e-8 the merit's rounding, not the method, may end the steps)
    assert residual <= 1e-6 and steps < 100

    def merit(v):
        grad = lag.gradient(v, None, y, sigma)[0] + tau * (v - x0)
        return lag.value(v, None, y, sigma) + 0.5 * np.dot(tau, (v - x0) ** 2), grad

    ref = scipy.optimize.minimize(merit, x0, jac=True, method="L-BFGS-B",
                                  bounds=[(0, None)] * p.n_links,
                                  options=dict(ftol=1e-15, gtol=1e-12, maxiter=20000))
    assert merit(x)[0] <= ref.fun + 1e-9 * abs(ref.fun)
    assert np.allclose(x, ref.x, atol=1e-4)


# ---------------------------------------------------------------------------- kernels
def test_kernels_equal_their_numpy_forms(monkeypatch):
    rng = np.random.default_rng(0)
    n, n_users, m = 4000, 700, 80
    user = np.sort(rng.integers(0, n_users, n))
    rg = rng.integers(-1, m // 2, n)
    rc = np.where(rng.random(n) < 0.5, -1, m // 2 + rng.integers(0, m // 2, n))
    rho, rate, inv_d = rng.random(n), 10 * rng.random(n), rng.random(n)
    beta = np.where(rng.random(n_users) < 0.8, rng.random(n_users), 0.0)
    compiled = alm_kernels.schur_dense(m, 3.0, user, rg, rc, rho, rate, inv_d, beta)
    plain = alm_kernels.schur_dense_numpy(m, 3.0, user, rg, rc, rho, rate, inv_d, beta)
    assert np.allclose(compiled, plain.toarray(), rtol=1e-12, atol=1e-12 * np.abs(compiled).max())
    group, cell = rng.integers(0, 50, n), rng.integers(0, 30, n)
    x = rng.random(n)
    got = alm_kernels.flows(user, group, cell, rate, x, n_users, 50, 30)
    flow = rate * x
    want = (np.bincount(user, flow, minlength=n_users), np.bincount(group, x, minlength=50),
            np.bincount(cell, flow, minlength=30))
    for a, b in zip(got, want, strict=True):
        assert np.allclose(a, b, rtol=1e-13, atol=1e-12)
    rho, cost = rng.random(n), rng.random(n)
    a_user, h_user = rng.normal(size=n_users), rng.random(n_users)
    s_g = np.where(rng.random(50) < 0.5, rng.random(50), 0.0)
    s_c = np.where(rng.random(30) < 0.5, rng.random(30), 0.0)
    inv_cap = rng.random(30)
    args = (user, group, cell, rate, rho, cost, a_user, h_user, s_g, s_c, inv_cap, 3.0)
    got = alm_kernels.link_terms(*args)
    monkeypatch.setenv(jit.ENV_SWITCH, "0")
    want = alm_kernels.link_terms(*args)
    for a, b in zip(got, want, strict=True):
        assert np.allclose(a, b, rtol=1e-13, atol=1e-12)


def test_numpy_forms_give_the_same_solution(monkeypatch):
    p = _drawn_problem(6)
    compiled = cellopt.solve(p, method="alm", tol=1e-6)
    monkeypatch.setenv(jit.ENV_SWITCH, "0")
    plain = cellopt.solve(p, method="alm", tol=1e-6)
    assert compiled.status == plain.status == "optimal"
    assert abs(compiled.objective - plain.objective) <= 1e-6 * p.weight.sum()
