"""alm specifics: warm starts and the Newton direction against a dense solve."""

import numpy as np

import cellopt
from cellopt.solvers import alm


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


def test_newton_direction_solves_the_regularized_system():
    p = _problem(1)
    lag = alm._Lagrangian(p)
    rng = np.random.default_rng(2)
    x = rng.uniform(0.01, 0.3, p.n_links)
    y = (rng.uniform(0, 5, p.n_groups), rng.uniform(0, 1, p.n_cells) * lag.row_masks[1],
         np.zeros(p.n_users))
    sigma = 3.0
    grad, _, r, s = lag.gradient(x, None, y, sigma)
    free = rng.uniform(size=p.n_links) < 0.8
    d, _ = lag.newton_direction(x, grad, r, s, sigma, free)
    # Dense Hessian by central differences of the (analytic) gradient, on the free links.
    f = np.flatnonzero(free)
    eye = np.eye(p.n_links)
    hess = np.array([(lag.gradient(x + 1e-7 * eye[i], None, y, sigma)[0]
                      - lag.gradient(x - 1e-7 * eye[i], None, y, sigma)[0]) / 2e-7 for i in f])[:, f]
    regularized = hess + alm._REG * np.diag(np.diag(hess) + sigma * 1e-3)
    expected = np.linalg.solve(regularized, -grad[f])
    # Agreement to finite-difference accuracy.
    assert np.allclose(d, expected, rtol=1e-3, atol=1e-5 * np.abs(expected).max())
