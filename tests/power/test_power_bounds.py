"""solve_power's bounds hold for the physical model, not only for the truncated gain table.

A gain table keeps each user's `n_interferers` strongest cells and lumps the rest into a
background at full power. The answers use that (conservative) table; the bounds must
bound the optimum of the *physical model*, in which every cell interferes at its
pattern's power. The oracle here is that optimum on networks with more cells than
`n_interferers`: column generation on the untruncated table with every pattern priced
(exhaustive enumeration), to a gap of 1e-7.
"""

import dataclasses
import functools

import numpy as np
import pytest
from helpers.problems import random_cells_network

import cellopt
from cellopt import solve
from cellopt.power import ColumnGenerationOptions, GainTable, PatternSpace, PowerProblem, master_problem
from cellopt.power.bounds import (
    _ScopedFactors,
    bound_gains,
    decomposition_bound,
    joint_bound,
    relaxed_bound,
)
from cellopt.power.column_generation import master_duals
from cellopt.power.patterns import enumerate_patterns, link_coefficients, reduced_values

N_CANDIDATES = 3


def network(seed, n_cells, n_users):
    return random_cells_network(seed, n_cells, n_users, size_m=900.0)


def case(seed):
    """9–11 cells, 20–40 users, n_interferers 4–7, α ∈ {0.5, 1, 2}, two levels."""
    rng = np.random.default_rng(1000 + seed)
    n_cells = int(rng.integers(9, 12))
    n_users = int(rng.integers(20, 41))
    n_interferers = int(rng.integers(4, 8))
    alpha = float(rng.choice([0.5, 1.0, 2.0]))
    levels = [[0.0, None], [0.0, -10.0]][int(rng.integers(2))]
    price = float(rng.choice([0.0, 0.05]))
    return network(seed, n_cells, n_users), n_interferers, alpha, levels, price


def physical_optimum(net, levels, price, alpha):
    """(lower, upper) on the physical optimum, at most 1e-7 apart (relative).

    The table keeps every cell (nothing lumped: the physical model). Column generation
    with every pattern priced: `lower` is the best master's objective (feasible),
    `upper` the smallest Lagrangian value with max_s V over every pattern.
    """
    full = GainTable.from_network(net, n_candidates=N_CANDIDATES, n_interferers=net.n_cells,
                                  rng=1)
    # Every cell in the table: the background is rounding only (exactly 0 physically).
    received = (full.gain_mw_per_mw * 10.0 ** (full.max_power_dbm[full.cell] / 10.0)).sum(axis=1)
    assert (full.background_mw <= 1e-12 * received).all()
    full = dataclasses.replace(full, background_mw=np.zeros(net.n_users))
    space = PatternSpace.from_network(net, levels, price)
    every = enumerate_patterns(space, 0, int(space.n_patterns))
    chosen = [int(np.flatnonzero((every == space.full_power()).all(axis=1))[0])]
    cell_price = net.cell_arrays()["price_per_mbps"]
    lower, upper = -np.inf, np.inf
    for _ in range(200):
        problem = master_problem(full, space, every[chosen], net, alpha)
        sol = solve(problem, "ipm", tol=1e-9)
        lower = max(lower, sol.objective)
        lam, nu = master_duals(problem, sol)
        values = reduced_values(full, space, link_coefficients(full, lam, cell_price + nu), every)
        upper = min(upper, joint_bound(full, space, problem, lam, nu, float(values.max())))
        if upper - lower <= 1e-7 * max(1.0, abs(lower)):
            return lower, upper
        values[chosen] = -np.inf
        chosen += [int(k) for k in np.argsort(-values)[:3] if np.isfinite(values[k])]
    raise AssertionError("the oracle did not converge")


@pytest.mark.parametrize("seed", range(8))
def test_bounds_hold_for_the_physical_model(seed):
    net, n_interferers, alpha, levels, price = case(seed)
    assert net.n_cells > n_interferers  # cells are lumped: the case this test is about
    lower, upper = physical_optimum(net, levels, price, alpha)
    slack = 1e-7 * max(1.0, abs(lower))
    problem = PowerProblem.from_network(net, levels_db=levels, energy_price_per_w=price, alpha=alpha,
                                        rng=1, n_candidates=N_CANDIDATES, n_interferers=n_interferers)
    sol = cellopt.solve_power(problem, progress=False, options=ColumnGenerationOptions(bound="exact"))
    assert sol.bound_kind == "exact"
    # The answer keeps the background at full power: feasible in the physical model.
    assert sol.objective <= upper + slack
    # The exact bound (and so the certificate of "optimal") holds for the physical model.
    assert sol.upper_bound >= lower - slack, (sol.status, sol.upper_bound, lower)
    if sol.status == "optimal":
        assert sol.gap <= 1e-4
    assert sol.power.bound_info["certifies"] == "physical model" and sol.power.bound_info["lumped"]
    # So does the relaxed bound, interference-free and with clusters.
    gains = GainTable.from_network(net, n_candidates=N_CANDIDATES, n_interferers=n_interferers,
                                   rng=1)
    space = PatternSpace.from_network(net, levels, price)
    for cluster_cells in (1, 3):
        out = relaxed_bound(net, gains, space, alpha, cluster_cells=cluster_cells)
        assert out["upper_bound"] >= lower - slack, cluster_cells


def test_background_floor():
    """Per tier, the lumped power at the tier's lowest level; 0 when cells may be off."""
    net = network(3, n_cells=10, n_users=30)
    gains = GainTable.from_network(net, n_candidates=N_CANDIDATES, n_interferers=4, rng=1)
    # background_mw is the total minus the table (rounding relative to the total).
    np.testing.assert_allclose(gains.background_by_group_mw.sum(axis=1), gains.background_mw,
                               rtol=1e-6)
    for levels, factor in (([0.0, -10.0], 0.1), ([0.0, -3.0], 10 ** -0.3), ([0.0, None], 0.0)):
        space = PatternSpace.from_network(net, levels)
        floor = bound_gains(gains, space).background_mw
        np.testing.assert_allclose(floor, factor * gains.background_by_group_mw.sum(axis=1),
                                   rtol=1e-9, atol=1e-30)
    # Levels per tier: each tier's lumped power scales by its own lowest level.
    space = PatternSpace.from_network(net, {"macro": [0.0, -6.0], "pico": [0.0, None]})
    macro = gains.background_by_group_mw[:, 0]  # groups are the tiers, sorted by name
    np.testing.assert_allclose(bound_gains(gains, space).background_mw, 10 ** -0.6 * macro,
                               rtol=1e-9, atol=1e-30)
    # Nothing lumped: the table itself.
    whole = GainTable.from_network(net, n_candidates=N_CANDIDATES, n_interferers=10, rng=1)
    assert bound_gains(whole, space) is whole


# ------------------------------------------------------------ the decomposition bound
def physical_table(net):
    """The table with every cell (the physical model), background exactly 0."""
    full = GainTable.from_network(net, n_candidates=N_CANDIDATES, n_interferers=net.n_cells, rng=1)
    return dataclasses.replace(full, background_mw=np.zeros(net.n_users))


@pytest.mark.parametrize("seed", range(6))
def test_scoped_factors_bound_max_value_at_any_multipliers(seed):
    """B(a, δ) ≥ max_s V(s) of the physical model at random prices and multipliers (and
    the smooth value ≥ B): the decomposition is valid whatever δ, with cells lumped."""
    net, n_interferers, _, levels, price = case(seed)
    rng = np.random.default_rng(seed)
    gains = GainTable.from_network(net, n_candidates=N_CANDIDATES, n_interferers=n_interferers,
                                   rng=1)
    full = physical_table(net)
    assert np.array_equal(full.cell[:, :N_CANDIDATES], gains.cell[:, :N_CANDIDATES])
    space = PatternSpace.from_network(net, levels, 0.5 + 5 * price)
    every = enumerate_patterns(space, 0, int(space.n_patterns))
    for n_scope in (1, 2, 4):
        factors = _ScopedFactors(bound_gains(gains, space), space, n_scope)
        for trial in range(4):
            lam = rng.exponential(0.2, net.n_users)
            coef = link_coefficients(full, lam, np.zeros(net.n_cells))
            exact = float(reduced_values(full, space, coef, every).max())
            a = coef[factors.user, factors.column]
            delta = rng.normal(0.0, [0.0, 0.1, 1.0, 10.0][trial], (factors.n_pairs, factors.L))
            bound = factors.evaluate(a, delta)
            assert bound >= exact - 1e-9 * max(1.0, abs(exact)), (n_scope, trial, bound, exact)
            smooth = factors.evaluate(a, delta, 0.05, grad=True)[0]
            assert smooth >= bound - 1e-9 * max(1.0, abs(bound))


def test_scoped_factors_gradient():
    """The smooth bound's gradient in a and δ against central differences."""
    net, n_interferers, *_ = case(2)
    gains = GainTable.from_network(net, n_candidates=N_CANDIDATES, n_interferers=n_interferers,
                                   rng=1)
    space = PatternSpace.from_network(net, [0.0, -10.0, None], 0.3)
    factors = _ScopedFactors(bound_gains(gains, space), space, 3)
    rng = np.random.default_rng(7)
    a = rng.exponential(0.2, factors.n_links)
    delta = rng.normal(0.0, 0.5, (factors.n_pairs, factors.L))
    _, g_a, g_d = factors.evaluate(a, delta, 0.2, grad=True)
    h = 1e-6
    for e in rng.choice(factors.n_links, 5, replace=False):
        step = np.zeros_like(a)
        step[e] = h
        fd = (factors.evaluate(a + step, delta, 0.2) - factors.evaluate(a - step, delta, 0.2)) / (2 * h)
        assert fd == pytest.approx(g_a[e], rel=1e-5, abs=1e-7)
    for q in rng.choice(delta.size, 8, replace=False):
        step = np.zeros(delta.size)
        step[q] = h
        step = step.reshape(delta.shape)
        fd = (factors.evaluate(a, delta + step, 0.2) - factors.evaluate(a, delta - step, 0.2)) / (2 * h)
        assert fd == pytest.approx(g_d.ravel()[q], rel=1e-5, abs=1e-7)


@functools.cache
def decomposition_case(seed):
    """(problem, gains, space, alpha, physical optimum, a master's duals) of `case(seed)`."""
    net, n_interferers, alpha, levels, price = case(seed)
    lower, _ = physical_optimum(net, levels, price, alpha)
    problem = PowerProblem.from_network(net, levels_db=levels, energy_price_per_w=price, alpha=alpha,
                                        rng=1, n_candidates=N_CANDIDATES, n_interferers=n_interferers)
    gains, space = problem.gains, problem.space
    master = master_problem(gains, space, space.full_power()[None], net, alpha)
    duals = master_duals(master, solve(master, "ipm", tol=1e-6))
    return problem, gains, space, alpha, lower, duals


SCOPES = (1, 2, 4)


@pytest.mark.parametrize(("seed", "scope"), [
    # Every scope on every network; the fast set takes one scope per network, in turn.
    pytest.param(seed, scope, marks=() if scope == SCOPES[seed % 3] else pytest.mark.slow)
    for seed in range(8) for scope in SCOPES])
def test_decomposition_bound_holds_for_the_physical_model(seed, scope):
    """decomposition_bound ≥ the physical optimum (networks with more cells than
    n_interferers), from a master's prices and from none."""
    problem, gains, space, alpha, lower, duals = decomposition_case(seed)
    slack = 1e-7 * max(1.0, abs(lower))
    for prices in (None, duals):
        out = decomposition_bound(problem, gains, space, alpha, scope_cells=scope,
                                  prices=prices, max_iter=60)
        assert out["upper_bound"] >= lower - slack, (scope, out["upper_bound"], lower)
        assert out["info"]["relaxation"] == "decomposition"


def test_decomposition_bound_is_bit_identical_when_repeated():
    problem, gains, space, alpha, _, _ = decomposition_case(0)
    first = decomposition_bound(problem, gains, space, alpha, scope_cells=3, max_iter=40)
    second = decomposition_bound(problem, gains, space, alpha, scope_cells=3, max_iter=40)
    assert first["upper_bound"] == second["upper_bound"]
