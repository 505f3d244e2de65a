"""Power patterns: free pattern shares in the convex methods, and solve_power vs exhaustive oracles."""

import itertools

import numpy as np
import pytest
from helpers.problems import random_cells_network

import cellopt
from cellopt import Problem, ValidationError, solve
from cellopt.power import ColumnGenerationOptions, GainTable, PatternSpace, PowerProblem, master_problem
from cellopt.power.bounds import relaxed_bound
from cellopt.power.column_generation import _PatternSet
from cellopt.power.patterns import (
    best_pattern_exhaustive,
    enumerate_patterns,
    link_coefficients,
    local_search,
    reduced_values,
)
from cellopt.power.search import Neighbourhoods, neighbourhood_search
from cellopt.solvers.certificate import certified_gap, dual_bound

LEVELS = [0.0, -10.0, None]


def random_pattern_problem(seed, n_users=30, n_cells=5, n_patterns=4, alpha=1.0, caps=False):
    rng = np.random.default_rng(seed)
    shape = (n_users, n_cells, n_patterns)
    u, c, k = (np.broadcast_to(a, shape).ravel() for a in np.ix_(
        np.arange(n_users), np.arange(n_cells), np.arange(n_patterns)))
    rate = rng.lognormal(1.0, 1.0, u.size) * (rng.random(u.size) < 0.6)
    backhaul = np.where(rng.random(n_cells) < 0.4, rng.uniform(1, 20, n_cells), np.inf) \
        if caps else None
    return Problem.from_links(u, c, rate, n_users=n_users, n_cells=n_cells, resource=k,
                              n_resources=n_patterns, alpha=alpha, backhaul_mbps=backhaul,
                              pattern_cost=rng.uniform(0, 3, n_patterns))


@pytest.mark.parametrize("method", ["alm", "dual", "ipm"])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0])
def test_free_shares_match_reference(seed, alpha, method):
    p = random_pattern_problem(seed, alpha=alpha, caps=seed % 2 == 1)
    ref = solve(p, "reference", tol=1e-7)
    sol = solve(p, method, tol=1e-6)
    assert ref.status == sol.status == "optimal"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-5, abs=1e-5)
    assert sol.upper_bound >= ref.objective - 1e-6 * max(1, abs(ref.objective))
    for each in (sol, ref):
        theta = each.pattern_share
        assert theta.shape == (p.n_resources,) and theta.min() >= 0
        assert theta.sum() == pytest.approx(1.0)
        # Airtime of every (cell, pattern) within that pattern's share.
        assert (each.cell_airtime <= theta[None, :] + 1e-9).all()
        assert each.energy_cost == pytest.approx(theta @ p.pattern_cost)
        assert each.objective == pytest.approx(each.utility - each.cost - each.energy_cost)


def test_free_shares_hand_solved():
    """One user, one cell, two patterns: rates 1 and 4, energy costs 0 and 1 (log utility).

    With θ on pattern 2, r = 1 + 3θ and the objective log(1 + 3θ) − θ peaks at
    θ = 2/3 (derivative 3 / (1 + 3θ) = 1): r = 3, objective log 3 − 2/3. The dual: μ on
    the two groups, max_k(μ_k − E_k) + max_r [log r − π r]; μ = (1/3, 4/3) prices both
    links at 1/3 per Mbit/s, g = 1/3 + log 3 − 1 = log 3 − 2/3.
    """
    p = Problem.from_links([0, 0], [0, 0], [1.0, 4.0], n_users=1, n_cells=1,
                           resource=[0, 1], n_resources=2, pattern_cost=[0.0, 1.0])
    expected = np.log(3.0) - 2.0 / 3.0
    assert dual_bound(p, np.array([1 / 3, 4 / 3])) == pytest.approx(expected)
    for method in ("alm", "dual", "ipm", "reference"):
        sol = solve(p, method, tol=1e-8)
        assert sol.objective == pytest.approx(expected, abs=1e-6)
        assert sol.pattern_share == pytest.approx([1 / 3, 2 / 3], abs=1e-3)
        assert sol.user_rate_mbps[0] == pytest.approx(3.0, abs=1e-4)


def test_fixed_power_methods_refuse_free_shares():
    p = random_pattern_problem(0)
    with pytest.raises(ValueError, match="power-pattern"):
        solve(p, "max_rsrp")
    with pytest.raises(ValidationError, match="pattern_cost"):
        Problem.from_links([0], [0], [1.0], n_users=1, n_cells=1, pattern_cost=[-1.0])


def block_problem(seed, n_users=30, n_cells=6, n_patterns=4, alpha=1.0):
    """Three share blocks (cells 0–1, 2–4, 5) with their own pattern shares; two patterns
    are absent from some block (cost inf, no links)."""
    rng = np.random.default_rng(seed)
    shape = (n_users, n_cells, n_patterns)
    u, c, k = (np.broadcast_to(a, shape).ravel() for a in np.ix_(
        np.arange(n_users), np.arange(n_cells), np.arange(n_patterns)))
    block = np.array([0, 0, 1, 1, 1, 2])
    cost = rng.uniform(0, 3, (3, n_patterns))
    cost[2, 3] = cost[0, 0] = np.inf
    rate = rng.lognormal(1.0, 1.0, u.size) * (rng.random(u.size) < 0.6)
    rate = np.where(np.isfinite(cost[block[c], k]), rate, 0.0)
    return Problem.from_links(u, c, rate, n_users=n_users, n_cells=n_cells, resource=k,
                              n_resources=n_patterns, alpha=alpha, pattern_cost=cost,
                              share_block=block)


@pytest.mark.parametrize("method", ["dual", "ipm"])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_share_blocks_match_reference(seed, alpha, method):
    p = block_problem(seed, alpha=alpha)
    ref = solve(p, "reference", tol=1e-7)
    sol = solve(p, method, tol=1e-6)
    assert ref.status == sol.status == "optimal"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-5, abs=1e-5)
    theta = sol.pattern_share
    assert theta.shape == (3, p.n_resources)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    assert theta[2, 3] == theta[0, 0] == 0.0
    cap = theta[p.cell_block]  # (n_cells, n_resources)
    assert (sol.cell_airtime <= cap + 1e-9).all()


def test_share_blocks_hand_solved():
    """Two cells in their own blocks, one user each, patterns of rates (1, 4) and costs
    (0, 1): each block is the one-cell problem of test_free_shares_hand_solved."""
    p = Problem.from_links([0, 0, 1, 1], [0, 0, 1, 1], [1.0, 4.0, 1.0, 4.0], n_users=2,
                           n_cells=2, resource=[0, 1, 0, 1], n_resources=2,
                           pattern_cost=[[0.0, 1.0], [0.0, 1.0]], share_block=[0, 1])
    expected = 2 * (np.log(3.0) - 2.0 / 3.0)
    assert dual_bound(p, np.array([1 / 3, 4 / 3, 1 / 3, 4 / 3])) == pytest.approx(expected)
    for method in ("dual", "ipm", "reference"):
        sol = solve(p, method, tol=1e-8)
        assert sol.objective == pytest.approx(expected, abs=1e-6)
        # The objective is flat in θ at the optimum: shares are good to ~√gap.
        np.testing.assert_allclose(sol.pattern_share, [[1 / 3, 2 / 3]] * 2, atol=1e-3)


def test_share_blocks_validated():
    with pytest.raises(ValidationError, match="share_block outside"):
        Problem.from_links([0], [0], [1.0], n_users=1, n_cells=1, pattern_cost=[[0.0]],
                           share_block=[1])
    with pytest.raises(ValidationError, match="one row per block"):
        Problem.from_links([0], [0], [1.0], n_users=1, n_cells=1, pattern_cost=[0.0],
                           share_block=[0])
    with pytest.raises(ValidationError, match="does not have"):
        Problem.from_links([0], [0], [1.0], n_users=1, n_cells=1, pattern_cost=[[np.inf, 0.0]],
                           share_block=[0], n_resources=2)
    with pytest.raises(ValidationError, match="at least one finite"):
        Problem.from_links([0], [0], [1.0], n_users=1, n_cells=1, pattern_cost=[[np.inf]],
                           share_block=[0])
    with pytest.raises(ValueError, match="share blocks"):
        solve(block_problem(0), "alm")


small_network = random_cells_network


def power_problem(net, levels=LEVELS, price=0.0, alpha=1.0):
    """The PowerProblem of `net` with the shadowing seed of these tests."""
    return PowerProblem.from_network(net, levels_db=levels, energy_price_per_w=price, alpha=alpha, rng=1)


def global_optimum(net, energy_price):
    """The joint optimum over every pattern, by the reference solver (the oracle)."""
    gains = GainTable.from_network(net, rng=1)
    space = PatternSpace.from_network(net, LEVELS, energy_price)
    every = np.array(list(itertools.product(range(3), repeat=net.n_cells)))
    return solve(master_problem(gains, space, every, net), "reference", tol=1e-8)


@pytest.mark.parametrize("seed", range(20))
def test_solve_power_against_exhaustive_optimum(seed):
    rng = np.random.default_rng(100 + seed)
    n_cells = int(rng.integers(2, 7))
    net = small_network(seed, n_cells=n_cells, n_users=int(rng.integers(8, 25)))
    price = float(rng.choice([0.0, 0.02, 0.1]))
    best = global_optimum(net, price)
    assert best.status == "optimal"
    scale = max(1.0, abs(best.objective))
    problem = power_problem(net, price=price)
    search = cellopt.solve_power(problem, progress=False, options=ColumnGenerationOptions(
        bound=None, pricing="search", links_per_pattern=None))
    exact = cellopt.solve_power(problem, progress=False, options=ColumnGenerationOptions(bound="exact"))
    # Search pricing: feasible (never above the optimum), within 1 %, not certified.
    assert search.objective <= best.objective + 1e-6 * scale
    assert search.objective >= best.objective - 0.01 * scale
    assert search.upper_bound is None and search.bound_kind is None
    assert search.status in ("local_optimum", "tail_off")
    # Default settings (exact pricing on small networks) and the exact bound: certified.
    assert exact.status == "optimal", exact.message
    assert exact.bound_kind == "exact"
    assert exact.objective <= best.objective + 1e-6 * scale
    assert exact.objective >= best.objective - 1e-3 * scale
    assert exact.upper_bound >= best.objective - 1e-6 * scale
    assert exact.upper_bound <= best.objective + 1e-3 * scale
    # The estimate is no bound, but never below the master's objective.
    # No pattern is kept at a negligible share (below 0.1 % of the band).
    for sol in (search, exact):
        assert sol.power.estimate >= sol.objective - 1e-6 * scale
        assert sol.power.bound_info is None or sol.power.bound_info["estimate_factor"] >= 1 - 1e-9
        share = sol.pattern_share
        assert ((share == 0) | (share >= 1e-3)).all(), share
        assert share.sum() == pytest.approx(1.0)
    # Reported powers and energy are consistent with the shares.
    p_mw = 10.0 ** (exact.power.patterns / 10.0)
    assert exact.power.energy_w == pytest.approx(float((exact.pattern_share @ p_mw).sum()) * 1e-3)
    assert exact.power.patterns.shape == (len(exact.pattern_share), n_cells)


def test_an_estimate_on_a_spent_budget_is_not_presented_as_converged():
    """11 cells, search pricing stopped by max_iter while the optimum lies 5.6 % higher (as
    a rate factor). The estimate used to be the smallest Lagrangian value of the run, from
    an early iteration's prices with few patterns known, clamped to the objective: it read
    exactly 1.0, "nothing left to gain". Now every point's value is re-scored against every
    pattern the run has known (at least the answer, by weak duality), and the estimate says
    which iteration's prices it comes from."""
    net = small_network(0, n_cells=11, n_users=60)
    levels, price = [0.0, None], 0.3
    problem = PowerProblem.from_network(net, levels_db=levels, energy_price_per_w=price, rng=1)
    sol = cellopt.solve_power(problem, max_iter=6, progress=False,
                              options=ColumnGenerationOptions(pricing="search"))
    # The oracle: exact pricing over the 2,048 patterns, certified to 1e-7.
    oracle = cellopt.solve_power(problem, tol=1e-7, max_iter=None, progress=False,
                                 options=ColumnGenerationOptions(pricing="exact", bound="exact",
                                                                 stabilization=0.0,
                                                                 retire_after=None))
    assert oracle.status == "optimal"
    true_factor = 1.0 + certified_gap(sol.power.master, oracle.objective, sol.objective,
                                      sol.utility)
    assert sol.status == "max_iter" and len(sol.history) == 6
    assert true_factor > 1.05  # the run is far from converged
    info = sol.power.bound_info
    assert info["estimate_factor"] > 1.0 + 1e-3, info
    assert sol.power.estimate >= sol.objective
    assert 1 <= info["estimate_iteration"] <= 6
    # The patterns known are some of all: the estimate stays below the exact bound.
    assert sol.bound_kind == "exact" and info["estimate_factor"] <= info["bound_factor"] + 1e-9
    stop = cellopt.power.explain_stop(sol)
    assert "has not converged" in stop and "estimate factor 1," not in stop
    assert f"at iteration {info['estimate_iteration']}'s prices" in stop


def family_member(k):
    """Network k of the family of benchmarks/bench_power_small.py (the same draws): 4–9
    cells, 2 or 3 levels, 25–200 users, α ∈ {0.5, 1, 2}, energy price in [0, 1] per W."""
    rng = np.random.default_rng(900 + k)
    n_cells = int(rng.integers(4, 10))
    levels = [0.0, None] if rng.choice([2, 3]) == 2 else LEVELS
    n_users = int(rng.integers(25, 201))
    alpha = float(rng.choice([0.5, 1.0, 2.0]))
    price = float(rng.uniform(0, 1))
    return small_network(k, n_cells=n_cells, n_users=n_users), levels, alpha, price


# Fast members: 7 cells × 2 levels, 113 users, α = 0.5; 8 × 2, 170 users, α = 2 (its
# optimal mixture has more than 40 patterns: with the former cap of 40 patterns exact
# pricing re-added the patterns the cap pushed out, and the run stalled); 9 × 2, 80 users;
# 5 × 2, 86 users; 5 × 3, 37 users, energy price 0.99 per W; 4 × 2, 108 users, α = 2.
@pytest.mark.parametrize("k", [0, 2, 4, 13, 25, 30])
@pytest.mark.slow
def test_small_networks_are_solved_exactly_with_the_defaults(k):
    net, levels, alpha, price = family_member(k)
    gains = GainTable.from_network(net, rng=1)
    space = PatternSpace.from_network(net, levels, price)
    every = enumerate_patterns(space, 0, int(space.n_patterns))
    full = master_problem(gains, space, every, net, alpha)
    best = solve(full, "ipm", tol=1e-9)  # the optimum over every pattern
    assert best.status == "optimal"
    sol = cellopt.solve_power(power_problem(net, levels, price, alpha), progress=False)
    tol, scale = 1e-4, max(1.0, abs(best.objective))
    assert sol.status == "optimal", sol.message
    assert sol.bound_kind == "exact" and sol.gap <= tol
    assert sol.objective <= best.objective + 1e-6 * scale
    assert sol.upper_bound >= best.objective - 1e-6 * scale
    # Within tol of the optimum, as a rate factor (like the gap).
    assert certified_gap(full, best.objective, sol.objective, sol.utility) <= tol
    if k == 2:
        assert (sol.pattern_share > 0).sum() > 40


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("price", [0.0, 0.05])
@pytest.mark.parametrize("cluster_cells", [1, 2, 3])
def test_relaxed_bound_is_valid(seed, price, cluster_cells):
    """The cluster relaxation, prices optimized, is at or above the exhaustive optimum."""
    net = small_network(seed, n_cells=5, n_users=20)
    best = global_optimum(net, price)
    gains = GainTable.from_network(net, rng=1)
    space = PatternSpace.from_network(net, LEVELS, price)
    out = relaxed_bound(net, gains, space, cluster_cells=cluster_cells)
    assert out["upper_bound"] >= best.objective - 1e-6 * max(1.0, abs(best.objective))
    assert out["info"]["kind"] == "relaxed" and out["info"]["cluster_cells"] <= cluster_cells
    # With one cluster of every cell the relaxation is the joint problem itself.
    if cluster_cells >= net.n_cells:
        assert out["upper_bound"] <= best.objective + 1e-3 * max(1.0, abs(best.objective))


def test_relaxed_bound_with_one_cluster_is_exact():
    net = small_network(2, n_cells=4, n_users=20)
    best = global_optimum(net, 0.05)
    gains = GainTable.from_network(net, rng=1)
    space = PatternSpace.from_network(net, LEVELS, 0.05)
    out = relaxed_bound(net, gains, space, cluster_cells=4, tol=1e-7)
    assert out["info"]["n_clusters"] == 1
    assert out["upper_bound"] == pytest.approx(best.objective, rel=1e-5)


def test_solve_power_relaxed_bound():
    net = small_network(3, n_cells=4)
    best = global_optimum(net, 0.05)
    # With search pricing the relaxed bound is the only one computed (with exact pricing
    # the exact one is too, and the tighter of the two is reported).
    sol = cellopt.solve_power(power_problem(net, price=0.05), progress=False,
                              options=ColumnGenerationOptions(bound="relaxed", pricing="search"))
    assert sol.bound_kind == "relaxed" and sol.power.bound_kind == "relaxed"
    assert sol.power.bound_info["relaxation"] in ("interference-free", "clusters", "decomposition")
    assert sol.upper_bound >= best.objective - 1e-9
    assert sol.power.bound_info["bound_factor"] == pytest.approx(
        np.exp((sol.upper_bound - sol.objective) / net.n_users))


@pytest.mark.parametrize("seed", range(4))
def test_neighbourhood_gains_are_exact(seed):
    """Every level combination of every cluster, evaluated against the whole pattern."""
    net = small_network(seed, n_cells=9, n_users=40, size_m=900.0)
    gains = GainTable.from_network(net, rng=1, n_candidates=3, n_interferers=6)
    space = PatternSpace.from_network(net, LEVELS, 0.05)
    rng = np.random.default_rng(seed)
    coef = link_coefficients(gains, rng.uniform(0.1, 2.0, net.n_users), np.zeros(net.n_cells))
    hoods = Neighbourhoods(gains, space, 3)
    pattern = rng.integers(0, 3, net.n_cells)
    gain, _, _ = hoods.gains_of_configs(coef, pattern)
    base = reduced_values(gains, space, coef, pattern)[0]
    cfg = hoods.cfg
    clusters = np.repeat(np.arange(cfg.n_clusters), cfg.k_max)
    configs = np.tile(np.arange(cfg.k_max), cfg.n_clusters)
    ok = cfg.valid.ravel()
    trials = np.stack([hoods.apply(pattern, clusters[i:i + 1], configs[i:i + 1])
                       for i in np.flatnonzero(ok)])
    true = reduced_values(gains, space, coef, trials) - base
    # Exact unless a cell's four best users are all affected (then an underestimate).
    assert (gain.ravel()[ok] <= true + 1e-9 * max(1.0, abs(base))).all()
    np.testing.assert_allclose(gain.ravel()[ok], true, atol=1e-9 * max(1.0, abs(base)))
    pat, value = neighbourhood_search(gains, space, coef, pattern, hoods=hoods)
    assert value >= base and value == pytest.approx(reduced_values(gains, space, coef, pat)[0])


def test_retired_patterns_leave_the_set():
    pset = _PatternSet(np.zeros(3, np.int64))
    pset.add(np.array([[1, 0, 0], [0, 1, 0]]), max_patterns=10, retire_after=2)
    pset.record_use(np.array([0.5, 0.5, 0.0]))
    pset.record_use(np.array([0.5, 0.5, 0.0]))
    pset.add(np.array([[0, 0, 1]]), max_patterns=10, retire_after=2)
    assert pset.patterns.tolist() == [[0, 0, 0], [1, 0, 0], [0, 0, 1]]
    # A full set makes room: the idle pattern first, then the least used.
    pset.record_use(np.array([0.3, 0.7, 0.0]))
    pset.add(np.array([[1, 1, 1], [2, 2, 2]]), max_patterns=3, retire_after=None)
    assert pset.patterns.tolist() == [[1, 0, 0], [1, 1, 1], [2, 2, 2]]
    # Without a cap (exact pricing's default) nothing in use ever leaves.
    pset.record_use(np.array([0.2, 0.3, 0.5]))
    pset.add(np.array([[2, 1, 0], [0, 1, 2]]), max_patterns=None, retire_after=1)
    assert len(pset) == 5


def test_links_left_out_of_the_master_can_stop_it_short_of_the_bound():
    """With one link per user and pattern the master can miss the exact optimum: exact
    pricing then stops ("converged" or "optimal"), and says which."""
    net = small_network(6, n_cells=5, n_users=30)
    sol = cellopt.solve_power(power_problem(net), tol=1e-6, progress=False,
                              options=ColumnGenerationOptions(bound="exact", links_per_pattern=1))
    assert sol.status in ("optimal", "converged")
    assert (sol.gap <= 1e-6) == (sol.status == "optimal")


def test_full_power_only_equals_fixed_power_solve():
    """One level per cell: solve_power is the fixed-power association problem."""
    net = small_network(4, n_cells=5, n_users=30)
    sol = cellopt.solve_power(power_problem(net, [0.0]), tol=1e-6, progress=False,
                              options=ColumnGenerationOptions(links_per_pattern=None))
    links = cellopt.radio.link_table(net, n_candidates=8, rng=1)
    fixed = solve(Problem.from_network(net, links), "reference", tol=1e-8)
    assert len(sol.power.patterns) == 1
    assert sol.objective == pytest.approx(fixed.objective, abs=1e-4)


def test_local_search_never_worse_than_start_and_exhaustive_is_best():
    net = small_network(5, n_cells=5)
    gains = GainTable.from_network(net, rng=1)
    space = PatternSpace.from_network(net, LEVELS, 0.02)
    rng = np.random.default_rng(0)
    coef = link_coefficients(gains, rng.uniform(0.1, 2.0, net.n_users), np.zeros(net.n_cells))
    _, best_value = best_pattern_exhaustive(gains, space, coef)
    for start in rng.integers(0, 3, (5, net.n_cells)):
        pattern, value, _ = local_search(gains, space, coef, start)
        assert value >= reduced_values(gains, space, coef, start)[0] - 1e-12
        assert value == pytest.approx(reduced_values(gains, space, coef, pattern)[0])
        assert value <= best_value + 1e-9


def test_bad_power_inputs_are_named():
    net = small_network(0)  # macro and pico cells
    with pytest.raises(ValidationError, match="levels_db"):
        PowerProblem.from_network(net, levels_db=[3.0])
    with pytest.raises(ValidationError, match="levels_db is empty"):
        PowerProblem.from_network(net, levels_db=[])
    with pytest.raises(ValidationError, match=r"levels_db\['pico'\]"):
        PowerProblem.from_network(net, levels_db={"macro": [0.0], "pico": [0.0, 2.0]})
    with pytest.raises(ValidationError, match=r"tiers \['femto'\], which the network lacks; fix"):
        PowerProblem.from_network(net, levels_db={"macro": [0.0], "pico": [0.0], "femto": [0.0]})
    with pytest.raises(ValidationError, match="energy_price_per_w"):
        PowerProblem.from_network(net, levels_db=LEVELS, energy_price_per_w=-1.0)
    with pytest.raises(ValidationError, match="alpha"):
        PowerProblem.from_network(net, levels_db=LEVELS, alpha=-1.0)
    problem = power_problem(net)
    for field, value in [("bound", "tight"), ("gain_tol", -1.0), ("pricing", "greedy"),
                         ("stabilization", 1.0), ("retire_after", 0), ("max_patterns", 0),
                         ("cluster_cells", 0), ("links_per_pattern", 0)]:
        with pytest.raises(ValidationError, match=field):
            ColumnGenerationOptions(**{field: value})
    with pytest.raises(ValueError, match="cannot solve over power patterns"):
        cellopt.solve_power(problem, method="max_rsrp")
    with pytest.raises(ValueError, match="time_limit_s"):
        cellopt.solve_power(problem, time_limit_s=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        cellopt.solve_power(problem, max_iter=0)
    with pytest.raises(ValidationError, match="ColumnGenerationOptions"):
        cellopt.solve_power(problem, options={"bound": "exact"})
    big = small_network(0, n_cells=25)  # 3^25 patterns: too many to enumerate
    with pytest.raises(ValidationError, match="bound='relaxed'"):
        cellopt.solve_power(power_problem(big), options=ColumnGenerationOptions(bound="exact"))


def test_a_network_in_place_of_the_power_problem_names_the_call_to_write():
    net = small_network(1, n_cells=4, n_users=20)
    for call in (lambda: cellopt.solve_power(net, LEVELS, energy_price_per_w=0.05, rng=1),
                 lambda: cellopt.solve_power(net),
                 lambda: cellopt.solve_power(problem=net),
                 lambda: cellopt.solve_power(network=net, levels_db=LEVELS)):
        with pytest.raises(ValidationError, match=r"takes a PowerProblem, not a Network; fix: .*"
                           r"solve_power\(PowerProblem\.from_drop\(drop, levels_db=.*"
                           r"options=ColumnGenerationOptions\(.*PowerProblem\.from_network"):
            call()


def test_power_problem_from_drop_matches_the_link_table():
    """from_drop takes the link table's model, seed and candidates, and α from the drop."""
    net = small_network(2, n_cells=4, n_users=20)
    links = cellopt.radio.link_table(net, n_candidates=8, rng=1)
    drop = cellopt.Drop.from_network(net, links, alpha=2.0)
    problem = PowerProblem.from_drop(drop, levels_db=LEVELS, energy_price_per_w=0.05)
    again = power_problem(net, price=0.05, alpha=2.0)
    assert problem.alpha == 2.0 and problem.n_users == net.n_users and problem.n_cells == net.n_cells
    np.testing.assert_array_equal(problem.gains.gain_mw_per_mw, again.gains.gain_mw_per_mw)
    np.testing.assert_array_equal(problem.space.level_dbm, again.space.level_dbm)
    assert PowerProblem.from_drop(drop, alpha=1.0).alpha == 1.0


def test_the_answer_is_a_new_solution_with_a_power_record():
    net = small_network(1, n_cells=4, n_users=20)
    sol = cellopt.solve_power(power_problem(net, price=0.05), progress=False)
    power = sol.power
    assert isinstance(power, cellopt.power.PowerResult)
    assert sol.bound_kind == power.bound_kind and sol.history is power.history
    for name in ("patterns", "cell_power_dbm", "energy_w", "bound_info", "estimate"):
        assert not hasattr(sol, name)  # the power record is in one place: sol.power
    assert set(power.bound_info) >= {"bound_factor", "estimate_factor", "kind"}
    assert sol.pattern_share is power.pattern_share and len(power.patterns) == len(power.pattern_share)
    with pytest.raises(AttributeError):
        power.energy_w = 0.0  # frozen


@pytest.mark.slow
def test_tail_off_stop_is_a_prefix_of_the_full_run():
    net = small_network(8, n_cells=10, n_users=60, size_m=900.0)
    problem = power_problem(net)
    full = cellopt.solve_power(problem, progress=False,
                               options=ColumnGenerationOptions(gain_tol=None, bound=None))
    tail = cellopt.solve_power(problem, progress=False,
                               options=ColumnGenerationOptions(gain_tol=0.02, bound=None))
    n = len(tail.history)
    assert full.status == "local_optimum" and tail.status == "tail_off"
    assert n < len(full.history)
    assert "tailing off" in tail.message
    assert f"stopped after {n} of at most 20 iterations" in tail.power.stop
    assert "tail_off: tailing off: the last three iterations gained" in tail.power.stop
    np.testing.assert_allclose(tail.history["objective"], full.history["objective"][:n])
    gained = tail.history["objective"].to_numpy()[3:] - tail.history["objective"].to_numpy()[:-3]
    assert gained[-1] < 0.02 * net.n_users and (gained[:-1] >= 0.02 * net.n_users).all()
    for sol in (full, tail):
        assert len(np.unique(sol.power.patterns, axis=0)) == len(sol.power.patterns)
        assert (sol.history["pricing"].str.startswith("search")).all()


def test_progress_bar_and_callback():
    net = small_network(1, n_cells=4, n_users=20)
    rows = []
    problem = power_problem(net)
    sol = cellopt.solve_power(problem, progress=True, callback=rows.append)
    assert len(rows) == len(sol.history) and rows[0]["iteration"] == 1
    stopped = cellopt.solve_power(problem, progress=False, callback=lambda row: True)
    assert stopped.status in ("stopped", "optimal") and len(stopped.history) == 1


def test_progress_reaches_every_phase_and_the_stop_is_explained():
    """A progress callable sees column generation, the finish and both relaxed bounds, in
    that order, each counted to its end; the answer is the same as without it, and says
    in words what stopped column generation."""
    net = small_network(3, n_cells=6, n_users=40)
    problem = power_problem(net, price=0.05)
    options = ColumnGenerationOptions(bound="relaxed", pricing="search", cluster_cells=2,
                                      scope_cells=2)
    events = []
    sol = cellopt.solve_power(problem, max_iter=3, progress=events.append, options=options)
    quiet = cellopt.solve_power(problem, max_iter=3, progress=False, options=options)
    assert sol.objective == quiet.objective and sol.upper_bound == quiet.upper_bound
    phases = list(dict.fromkeys(e["phase"] for e in events))
    assert phases == ["column generation", "finishing the answer", "relaxed bound",
                      "decomposition bound"]
    by_phase = {p: [e for e in events if e["phase"] == p] for p in phases}
    assert [e["step"] for e in by_phase["column generation"]] == list(range(len(sol.history) + 1))
    assert by_phase["relaxed bound"][-1]["step"] >= 1
    last = by_phase["decomposition bound"][-1]
    assert last["step"] == last["total"] == 900 and "bound" in last
    stop = cellopt.power.explain_stop(sol)
    assert stop == sol.power.stop
    n = len(sol.history)
    assert stop.startswith(f"column generation stopped after {n} of at most 3 iterations")
    if sol.status == "max_iter":
        assert "the work budget is spent" in stop
    assert "bound factor" in stop and "estimate factor" in stop
    assert cellopt.power.explain_stop(cellopt.solve(problem.master(problem.space.full_power()[None]),
                                                    "ipm")) == ""


# --- eICIC / almost-blank subframes -------------------------------------------------------

def test_abs_without_muting_or_bias_is_max_rsrp():
    net = small_network(5, n_cells=5, n_users=30)
    sol = cellopt.power.solve_abs(net, bias_db=0.0, muted_share=0.0, rng=1)
    links = cellopt.radio.link_table(net, n_candidates=8, rng=1)
    base = solve(Problem.from_network(net, links), "max_rsrp")
    assert sol.objective == pytest.approx(base.objective, abs=1e-6)
    assert sol.pattern_share.tolist() == [1.0]


@pytest.mark.parametrize("seed", range(3))
def test_abs_is_a_fixed_share_case_of_patterns(seed):
    """Every ABS grid point is feasible for the free-share problem over its two patterns."""
    net = small_network(seed, n_cells=6, n_users=24)
    gains = GainTable.from_network(net, rng=1)
    grid = cellopt.power.abs_grid(net, gains=gains)
    assert len(grid) == 16
    space = PatternSpace.from_network(net, {"macro": [0.0, None], "pico": [0.0]})
    macro = (net.cells["tier"] == "macro").to_numpy()
    both = np.stack([np.zeros(net.n_cells, int), macro.astype(int)])
    free = solve(master_problem(gains, space, both, net), "reference", tol=1e-8)
    assert grid["objective"].max() <= free.objective + 1e-6 * max(1.0, abs(free.objective))
    assert (grid["objective"] <= grid["upper_bound"] + 1e-6).all()


def test_abs_shares_powers_and_energy():
    net = small_network(7, n_cells=6, n_users=24)
    beta = 0.25
    sol = cellopt.power.solve_abs(net, bias_db=6.0, muted_share=beta, rng=1)
    macro = (net.cells["tier"] == "macro").to_numpy()
    p_w = 10.0 ** (net.cells["tx_power_dbm"].to_numpy() / 10.0) * 1e-3
    assert sol.pattern_share == pytest.approx([1 - beta, beta])
    assert np.isneginf(sol.power.patterns[1, macro]).all()
    assert sol.power.pattern_share is sol.pattern_share and sol.power.bound_kind is None
    assert len(sol.power.master.rate_mbps) == len(sol.x)  # the ABS problem x is over
    assert sol.power.energy_w == pytest.approx(p_w.sum() - beta * p_w[macro].sum())
    # Macro cells carry nothing in the muted pattern; every cell's airtime fits.
    assert sol.cell_airtime.shape == (net.n_cells, 2)
    assert (sol.cell_airtime[macro, 1] == 0).all()
    assert (sol.cell_airtime <= 1 + 1e-9).all()
    with pytest.raises(ValidationError, match="muted_share"):
        cellopt.power.solve_abs(net, muted_share=1.0, rng=1)


def test_work_budget_stops_the_run_and_is_a_prefix_of_a_longer_run():
    """max_iter counts iterations, not seconds: a run cut at 3 iterations is the first 3
    of a longer one, whatever the machine's load, and says why it stopped."""
    net = small_network(8, n_cells=10, n_users=60, size_m=900.0)
    problem, options = power_problem(net), ColumnGenerationOptions(gain_tol=None, bound=None)
    short = cellopt.solve_power(problem, max_iter=3, progress=False, options=options)
    longer = cellopt.solve_power(problem, max_iter=5, progress=False, options=options)
    assert short.status == "max_iter" and "max_iter=3" in short.message
    assert len(short.history) == 3 and len(longer.history) > 3
    cols = ["objective", "estimate", "n_patterns"]
    np.testing.assert_array_equal(short.history[cols], longer.history[cols][:3])


def test_time_limit_stops_after_the_solve_in_progress():
    net = small_network(8, n_cells=10, n_users=60, size_m=900.0)
    sol = cellopt.solve_power(power_problem(net), time_limit_s=1e-9, progress=False,
                              options=ColumnGenerationOptions(bound="relaxed"))
    # The first master: full power and one pattern per tier at its lowest level.
    assert sol.status == "time_limit" and len(sol.history) == 1
    assert len(sol.power.patterns) == sol.history["n_patterns"].iloc[0] == 3
    assert sol.upper_bound >= sol.objective  # the bound is still computed and valid

