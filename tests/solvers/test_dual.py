"""Tests of the ``dual`` method (cellopt/solvers/dual.py) against a conic oracle.

The oracle is the ``reference`` method (cvxpy + Clarabel at tight tolerances) when it is
registered, else a small cvxpy model in this file. Every instance is seeded.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers.checks import assert_feasible
from helpers.gap_oracle import gap_of, true_gap
from helpers.problems import ALPHAS, one_cell, random_problem

import cellopt
from cellopt.solvers import METHODS, solve
from cellopt.solvers.certificate import dual_bound

HISTORY_COLUMNS = {"iteration", "stage", "tau", "objective", "upper_bound", "gap",
                   "smoothed_bound", "grad_norm", "time_s"}


# ----------------------------------------------------------------------------- oracle
def _cvxpy_optimum(p: cellopt.Problem) -> float:
    """Fallback oracle while the ``reference`` method is not registered."""
    import cvxpy as cp
    import scipy.sparse as sp

    cols = np.arange(p.n_links)
    a_user = sp.csr_array((p.rate_mbps, (p.user, cols)), shape=(p.n_users, p.n_links))
    a_group = sp.csr_array((np.ones(p.n_links), (p.group, cols)), shape=(p.n_groups, p.n_links))
    a_cell = sp.csr_array((p.rate_mbps, (p.cell, cols)), shape=(p.n_cells, p.n_links))
    x = cp.Variable(p.n_links, nonneg=True)
    r = a_user @ x
    if p.alpha == 1:
        util = p.weight @ cp.log(r)
    elif p.alpha == 0:
        util = p.weight @ r - p.weight.sum()
    else:  # U(r) = (r^(1−α) − 1) / (1−α)
        util = (p.weight @ cp.power(r, 1 - p.alpha) - p.weight.sum()) / (1 - p.alpha)
    cons = [a_group @ x <= 1]
    capped = np.flatnonzero(np.isfinite(p.backhaul_mbps))
    if len(capped):
        cons.append((a_cell @ x)[capped] <= p.backhaul_mbps[capped])
    limited = np.flatnonzero(np.isfinite(p.demand_mbps))
    if len(limited):
        cons.append(r[limited] <= p.demand_mbps[limited])
    prob = cp.Problem(cp.Maximize(util - p.price_per_mbps @ (a_cell @ x)), cons)
    with warnings.catch_warnings():  # "may be inaccurate" at these tolerances is fine here
        warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return float(prob.value)


def oracle_optimum(p: cellopt.Problem) -> float:
    """The optimum to ~1e-9: objective of a certified reference solution."""
    if "reference" in METHODS:
        ref = solve(p, method="reference", tol=1e-8)
        assert ref.status == "optimal", ref.message
        return ref.objective
    return _cvxpy_optimum(p)


# ----------------------------------------------------------------------------- accuracy
SEEDS = range(24)


@pytest.fixture(scope="module")
def solved() -> dict[int, tuple[cellopt.Problem, cellopt.Solution, float]]:
    out = {}
    for seed in SEEDS:
        # A few instances without caps / prices / demands, the rest with all three.
        p = random_problem(seed, "drawn", caps=seed % 4 != 1, prices=seed % 4 != 2,
                           demands=seed % 4 != 3)
        out[seed] = (p, solve(p, method="dual", tol=1e-5), oracle_optimum(p))
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_matches_oracle(solved, seed):
    p, sol, opt = solved[seed]
    scale = max(1.0, abs(opt))
    assert sol.status == "optimal", sol.message
    assert sol.gap <= 1e-4
    assert true_gap(sol, p, opt) <= min(1e-5, sol.gap) + 1e-9
    assert sol.upper_bound >= opt - 1e-9 * scale
    assert_feasible(p, sol.x)


@pytest.mark.parametrize("seed", SEEDS)
def test_certificate_is_the_dual_function_at_the_returned_prices(solved, seed):
    p, sol, _ = solved[seed]
    assert sol.upper_bound == pytest.approx(
        dual_bound(p, sol.prices["airtime"], sol.prices["backhaul"]), rel=1e-12, abs=1e-12)
    assert sol.gap == pytest.approx(gap_of(sol, p), rel=1e-6, abs=1e-12)
    assert (sol.prices["airtime"] >= 0).all() and (sol.prices["backhaul"] >= 0).all()
    assert (sol.prices["backhaul"][~np.isfinite(p.backhaul_mbps)] == 0).all()


def test_instances_cover_the_hard_cases(solved):
    """The accuracy tests above include binding caps, priced cells, binding demands and
    every α (otherwise they would not test what they claim)."""
    binding_cap = binding_demand = priced = 0
    for p, sol, _ in solved.values():
        capped = np.isfinite(p.backhaul_mbps)
        binding_cap += int((sol.cell_traffic_mbps[capped]
                            >= p.backhaul_mbps[capped] * (1 - 1e-6)).sum())
        binding_demand += int((sol.user_rate_mbps >= p.demand_mbps * (1 - 1e-6)).sum())
        priced += int((p.price_per_mbps > 0).sum())
    assert binding_cap >= 10 and binding_demand >= 10 and priced >= 10
    assert {p.alpha for p, _, _ in solved.values()} == set(ALPHAS)


def test_history_and_fields(solved):
    p, sol, _ = solved[0]
    h = sol.history
    assert HISTORY_COLUMNS <= set(h.columns)
    assert len(h) == sol.n_iter + 1                     # iteration 0 is the start
    assert h["iteration"].tolist() == list(range(sol.n_iter + 1))
    assert (np.diff(h["upper_bound"]) <= 0).all()       # best bound so far
    assert (np.diff(h["objective"]) >= 0).all()         # best feasible objective so far
    assert sol.method == "dual" and sol.wall_s > 0
    assert sol.cell_airtime.shape == (p.n_cells, p.n_resources)
    assert sol.serving_cell.shape == (p.n_users,)


# ----------------------------------------------------------------------------- by hand
@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_one_cell_log_utility_equal_shares(n):
    """max Σ log(R_i x_i), Σ x_i ≤ 1: x_i = 1/n, and the airtime price is μ = n."""
    rates = np.linspace(1.0, 9.0, n)
    p = one_cell(rates)
    sol = solve(p, method="dual", tol=1e-9)
    assert sol.status == "optimal"
    np.testing.assert_allclose(sol.x, 1.0 / n, rtol=1e-6)
    assert sol.prices["airtime"][0, 0] == pytest.approx(n, rel=1e-6)
    assert sol.objective == pytest.approx(np.log(rates / n).sum(), abs=1e-8 * n)


def test_smoothed_bound_is_an_upper_bound():
    """g_τ ≥ g ≥ optimum at every iterate (the smoothing never claims a better bound)."""
    p = random_problem(3, "drawn")
    sol = solve(p, method="dual", tol=1e-6)
    opt = oracle_optimum(p)
    assert (sol.history["smoothed_bound"] >= opt - 1e-9 * max(1.0, abs(opt))).all()


# ----------------------------------------------------------------------------- statuses
def test_callback_can_stop():
    p = random_problem(5, "drawn")
    rows = []

    def cb(row):
        rows.append(row)
        return row["iteration"] >= 2

    sol = solve(p, method="dual", tol=1e-8, callback=cb)
    assert sol.status == "stopped"
    assert sol.n_iter == 2 and len(rows) == 3
    assert HISTORY_COLUMNS <= set(rows[-1])
    assert_feasible(p, sol.x)
    assert sol.upper_bound >= oracle_optimum(p) - 1e-9 * max(1.0, abs(sol.objective))


def test_max_iter_one_fills_every_field():
    p = random_problem(6, "drawn")
    sol = solve(p, method="dual", tol=1e-8, max_iter=1)
    assert sol.status == "max_iter"
    assert sol.n_iter == 1
    for field in ("message", "utility", "cost", "objective", "upper_bound", "gap",
                  "history", "x", "user_rate_mbps", "cell_airtime", "cell_traffic_mbps",
                  "prices", "serving_cell", "exceeded_backhaul"):
        assert getattr(sol, field) is not None, field
    assert np.isfinite([sol.objective, sol.upper_bound, sol.gap]).all()
    assert sol.gap > 1e-8
    assert_feasible(p, sol.x)
    assert len(sol.history) == 2


def test_time_limit():
    sol = solve(random_problem(7, "drawn"), method="dual", tol=1e-12, time_limit_s=0.0)
    assert sol.status == "time_limit"
    assert sol.upper_bound >= sol.objective


# ----------------------------------------------------------------------------- edge cases
def test_linear_utility():
    p = random_problem(8, "drawn", alpha=0.0)
    sol = solve(p, method="dual", tol=1e-6)
    opt = oracle_optimum(p)
    assert sol.status == "optimal"
    assert abs(sol.objective - opt) <= 1e-6 * max(1.0, abs(opt))
    assert_feasible(p, sol.x)


def test_zero_capacity_cell_and_user_without_links():
    """A cell with backhaul 0 carries nothing (its ν prices it out); a user without links
    (allowed for α < 1) gets rate 0."""
    base = random_problem(9, "drawn", alpha=0.5)
    cap = base.backhaul_mbps.copy()
    cap[0] = 0.0
    p = cellopt.Problem.from_links(
        base.user, base.cell, base.rate_mbps, n_users=base.n_users + 1, n_cells=base.n_cells,
        resource=base.resource, n_resources=base.n_resources, alpha=0.5,
        demand_mbps=np.r_[base.demand_mbps, np.inf], backhaul_mbps=cap,
        price_per_mbps=base.price_per_mbps)
    sol = solve(p, method="dual", tol=1e-6)
    assert sol.status == "optimal", sol.message
    assert sol.cell_traffic_mbps[0] == 0 and sol.user_rate_mbps[-1] == 0
    assert_feasible(p, sol.x)
    assert sol.upper_bound == pytest.approx(
        dual_bound(p, sol.prices["airtime"], sol.prices["backhaul"]), rel=1e-12, abs=1e-12)
    opt = _cvxpy_optimum(p)
    assert sol.upper_bound >= opt - 1e-8 * max(1.0, abs(opt))
    assert abs(sol.objective - opt) <= 1e-6 * max(1.0, abs(opt))


def test_users_only_on_zero_capacity_cells_with_log_utility_is_an_input_error():
    p = cellopt.Problem.from_links(np.array([0, 1]), np.array([0, 1]), np.array([1.0, 2.0]),
                                   n_users=2, n_cells=2, backhaul_mbps=[0.0, np.inf])
    with pytest.raises(cellopt.ValidationError, match="backhaul_mbps = 0"):
        solve(p, method="dual")


def test_warm_start_from_prices():
    p = random_problem(10, "drawn")
    cold = solve(p, method="dual", tol=1e-6)
    warm = solve(p, method="dual", tol=1e-6,
                 prices0=(cold.prices["airtime"], cold.prices["backhaul"]))
    assert warm.status == "optimal"
    assert warm.n_iter <= cold.n_iter


# ----------------------------------------------------------------------------- demands
def test_demand_first_serves_users_near_their_demand_then_shares_the_rest():
    """One cell, three users: two within 10 % of their demand are raised to it exactly,
    the third gets the remaining airtime; by hand: demands 2 and 3 Mbit/s at 10 and 20
    Mbit/s take airtime 0.2 + 0.15, so the third user's share goes to 0.65."""
    from cellopt.solvers.common import demand_first
    p = cellopt.Problem.from_links(np.array([0, 1, 2]), np.array([0, 0, 0]),
                                   np.array([10.0, 20.0, 5.0]), n_users=3, n_cells=1,
                                   demand_mbps=np.array([2.0, 3.0, np.inf]))
    x = np.array([0.19, 0.14, 0.3])               # rates 1.9 (95 %), 2.8 (93 %), 1.5
    out = demand_first(p, x, np.ones(1))
    np.testing.assert_allclose(out, [0.2, 0.15, 0.65], rtol=1e-12)
    # A user below 90 % of its demand is scaled with the rest, not raised to it.
    low = demand_first(p, np.array([0.17, 0.14, 0.3]), np.ones(1))   # 1.7 = 85 %
    np.testing.assert_allclose(low[1], 0.15, rtol=1e-12)
    np.testing.assert_allclose(low[[0, 2]], np.array([0.17, 0.3]) * 0.85 / 0.47, rtol=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 2.0])
@pytest.mark.slow
def test_light_traffic_statuses_tell_the_truth_with_correlated_shadowing(alpha):
    """The same family with TR 36.814's shadowing correlated 0.5 between sites: of 100
    drops ``dual`` stops at max_iter on 1 (α = 1) and 2 (α = 2), all with the primal side
    stuck below a bound that is already tight (docs/model.md). Every solve of the first
    30 is either certified and equal to the oracle, or says ``max_iter`` with a gap that
    is the true one at most (the bound above the optimum, the point feasible)."""
    from cellopt import radio, topology
    uncertified = 0
    for seed in range(30):
        net = topology.drop_users(topology.hex_grid(n_rings=1), 40, rng=seed)
        demand = np.random.default_rng(1000 + seed).uniform(0.2, 4.0, 40)
        p = cellopt.Problem.from_network(net, radio.link_table(net, rng=seed), alpha=alpha,
                                         demand_mbps=demand)
        sol = solve(p, method="dual", tol=1e-4)
        assert_feasible(p, sol.x)
        best = oracle_optimum(p)
        assert sol.upper_bound >= best - 1e-9 * max(1.0, abs(best))
        assert sol.objective <= best + 1e-9 * max(1.0, abs(best))
        if sol.status == "optimal":
            assert true_gap(sol, p, best) <= 1e-4 * (1 + 1e-6), seed
        else:
            assert sol.status == "max_iter" and sol.gap > 1e-4, (seed, sol.status)
            uncertified += 1
    assert uncertified <= {1.0: 1, 2.0: 2}[alpha]  # seeds 15; 13 and 15


@pytest.mark.parametrize("alpha", [1.0, 2.0])
@pytest.mark.slow
def test_small_drops_with_demands_are_certified(alpha):
    """Light traffic, where most users are held at their demand and ``dual``'s Newton steps
    used to crawl (4 of 100 such drops at α = 1 and 2 of 100 at α = 2 stopped at
    max_iter): 30 drops of 40 users on hex_grid(1), demands uniform in [0.2, 4] Mbit/s,
    each certified and equal to the oracle's optimum within the tolerance. The drops are
    those the regression was found on: shadowing independent between sites."""
    from cellopt import radio, topology
    independent = radio.RadioModel(site_correlation=0.0)
    for seed in range(30):
        net = topology.drop_users(topology.hex_grid(n_rings=1), 40, rng=seed)
        demand = np.random.default_rng(1000 + seed).uniform(0.2, 4.0, 40)
        p = cellopt.Problem.from_network(net, radio.link_table(net, rng=seed, model=independent),
                                         alpha=alpha, demand_mbps=demand)
        sol = solve(p, method="dual", tol=1e-4)
        assert sol.status == "optimal", (seed, sol.message)
        assert_feasible(p, sol.x)
        best = oracle_optimum(p)
        assert sol.upper_bound >= best - 1e-9 * max(1.0, abs(best))
        assert true_gap(sol, p, best) <= 1e-4 * (1 + 1e-6), seed
