"""Load-coupled interference: a two-cell case solved by hand, and random networks."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.checks import assert_feasible

import cellopt.load_coupling as lc
from cellopt import Problem, radio, solve, topology
from cellopt.errors import ValidationError
from cellopt.load_coupling import LoadCoupling, solve_load_coupled
from cellopt.power.gains import GainTable
from cellopt.radio.spectral import shannon
from cellopt.solvers.certificate import certified_gap
from cellopt.solvers.result import build_solution


def two_cells(demand_mbps: tuple[float, float]) -> tuple[Problem, LoadCoupling]:
    """Two cells of 1 mW on a 10 MHz band, one user each, noise 1 mW, Shannon rates.

    User 0 hears its cell at 6 mW and cell 1 at 4 mW; user 1 its cell at 30 mW and cell 0
    at 2 mW. The loads solve

        ρ0 = d0 / (10 log2(1 + 6 / (1 + 4 ρ1)))
        ρ1 = d1 / (10 log2(1 + 30 / (1 + 2 ρ0)))

    With d = (10, 10) Mbit/s: ρ = (1/2, 1/4), since then 6 / (1 + 1) = 3 → 20 Mbit/s and
    30 / (1 + 1) = 15 → 40 Mbit/s, and 10 / 20 = 1/2, 10 / 40 = 1/4.
    """
    gains = GainTable(cell=np.array([[0, 1], [1, 0]]), gain_mw_per_mw=np.array([[6.0, 4.0], [30.0, 2.0]]),
                      background_mw=np.zeros(2), n_candidates=1, noise_mw=1.0, bandwidth_mhz=10.0,
                      efficiency=shannon, max_power_dbm=np.zeros(2))
    coupling = LoadCoupling(gains=gains, user=np.array([0, 1]), cell=np.array([0, 1]),
                            signal_mw=np.array([6.0, 30.0]))
    problem = Problem.from_links(np.array([0, 1]), np.array([0, 1]), coupling.rates_mbps(np.ones(2)),
                                 n_users=2, n_cells=2, demand_mbps=np.array(demand_mbps),
                                 rsrp_dbm=np.array([-60.0, -60.0]))
    return problem, coupling


def test_rates_follow_the_neighbours_load():
    _, c = two_cells((10.0, 10.0))
    assert c.rates_mbps(np.array([0.5, 0.25])) == pytest.approx([20.0, 40.0], rel=1e-15)
    # full load: 6 / (1 + 4) and 30 / (1 + 2); a quiet neighbour leaves only noise
    assert c.rates_mbps(np.ones(2)) == pytest.approx(10 * np.log2([1 + 6 / 5, 1 + 30 / 3]))
    assert c.rates_mbps(np.zeros(2)) == pytest.approx(10 * np.log2([7.0, 31.0]))


def test_fixed_point_of_the_hand_case():
    _, c = two_cells((10.0, 10.0))
    fp = c.fixed_point(np.array([10.0, 10.0]))
    assert fp.converged and not fp.overloaded.any()
    assert fp.load == pytest.approx([0.5, 0.25], abs=1e-9)
    assert fp.rate_mbps == pytest.approx([20.0, 40.0], rel=1e-8)
    # monotone from full load: one step lowers both loads, never below the fixed point
    one = c.fixed_point(np.array([10.0, 10.0]), max_iter=1)
    assert not one.converged and (one.load >= fp.load - 1e-12).all() and (one.load < 1).all()


def test_overloaded_cell_is_named():
    # d0 = 30 Mbit/s cannot fit: even at full load of cell 0, its user gets
    # 10 log2(1 + 6 / (1 + 4 ρ1)) < 30 with ρ1 = 10 / (10 log2(1 + 30 / 3)).
    _, c = two_cells((30.0, 10.0))
    fp = c.fixed_point(np.array([30.0, 10.0]))
    rho1 = 10.0 / (10.0 * np.log2(1.0 + 30.0 / 3.0))
    assert fp.converged
    assert fp.overloaded.tolist() == [True, False]
    assert fp.load == pytest.approx([1.0, rho1], rel=1e-9)
    assert fp.required[0] == pytest.approx(30.0 / (10.0 * np.log2(1.0 + 6.0 / (1.0 + 4.0 * rho1))))


@pytest.mark.parametrize("method", ["alm", "reference", "max_rsrp"])
def test_solver_in_the_loop_finds_the_hand_fixed_point(method):
    problem, c = two_cells((10.0, 10.0))
    sol = solve_load_coupled(problem, c, method)
    assert sol.status in ("optimal", "solved")
    assert sol.load_coupling["load"] == pytest.approx([0.5, 0.25], abs=2e-3)
    assert sol.user_rate_mbps == pytest.approx([10.0, 10.0], rel=1e-3)
    assert sol.bound_kind in (None, "fixed_loads")
    assert sol.load_coupling["rounds"] > 1


def test_full_load_rates_equal_the_link_table():
    net = topology.hex_grid(n_rings=1)
    net = topology.add_picos(net, per_sector=2, rng=1)
    net = topology.drop_users(net, 300, rng=2)
    links = radio.link_table(net, n_candidates=4, rng=3)
    problem = Problem.from_network(net, links)
    c = LoadCoupling.from_network(net, problem, n_candidates=4, n_interferers=net.n_cells, rng=3)
    assert c.rates_mbps(np.ones(net.n_cells)) == pytest.approx(problem.rate_mbps, rel=1e-12)
    # fewer interferers: the rest at full load, so never above the exact rates at any load
    load = np.random.default_rng(0).uniform(size=net.n_cells)
    few = LoadCoupling.from_network(net, problem, n_candidates=4, n_interferers=6, rng=3)
    assert (few.rates_mbps(load) <= c.rates_mbps(load) * (1 + 1e-12)).all()


def test_random_network_converges_and_is_feasible():
    net = topology.hex_grid(n_rings=1)
    net = topology.add_picos(net, per_sector=2, rng=4)
    net = topology.drop_users(net, 200, demand_mbps=0.5, rng=5)
    links = radio.link_table(net, n_candidates=4, rng=6)
    problem = Problem.from_network(net, links.select_users(links.users_with_rate()))
    rows = np.flatnonzero(links.users_with_rate())
    c = LoadCoupling.from_network(net, problem, user_rows=rows, n_candidates=4, rng=6)
    sol = solve_load_coupled(problem, c, "alm")
    info = sol.load_coupling
    assert sol.status == "optimal", sol.message
    # an exact operating point: each cell's airtime is the load its rates assume
    assert sol.cell_airtime[:, 0] == pytest.approx(info["load"], abs=1e-8)
    assert info["rate_mbps"] == pytest.approx(c.rates_mbps(info["load"]), rel=1e-12)
    assert_feasible(problem.replace(rate_mbps=info["rate_mbps"]), sol.x, rtol=1e-9)
    # light demand: cells go quiet, and every user gets its demand, up to what the
    # certificate allows: with α = 1 one user's shortfall costs w_i log(d / r_i) ≤ UB − obj
    # = Σw log(1 + gap), so r_i ≥ d (1 + gap)^(−Σw / w_i) (tol bounds the objective, not
    # each user: 1 − 0.9927 for one user of 200 is within tol = 1e-4)
    assert info["load"].max() < 1 and (info["load"] < 0.5).mean() > 0.5
    assert problem.alpha == 1
    floor = 0.5 * (1.0 + sol.gap) ** (-problem.weight.sum() / problem.weight)
    assert np.all(sol.user_rate_mbps >= floor * (1 - 1e-12))
    assert np.all(sol.user_rate_mbps <= 0.5 * (1 + 1e-12))
    # full load is what the solver gives without coupling, unchanged, and no better than
    # the answer beyond tol (round 1 is a full-load solve whose rates differ from the
    # problem's in the last bits, so its answer may differ within tol)
    full = solve(problem, "alm")
    assert np.array_equal(full.x, solve(problem, "alm").x)
    assert full.cell_airtime.max() > info["load"].max()
    assert certified_gap(problem, full.upper_bound, sol.objective, sol.utility) <= 1e-4


def test_a_round_that_loses_to_the_one_before_is_dropped(monkeypatch):
    """An inexact solve may lose a little to the round before (whose traffic fits it):
    the answer is then the better round's, with its bound and its loads."""
    net = topology.hex_grid(n_rings=1)
    net = topology.drop_users(net, 60, demand_mbps=0.5, rng=5)
    links = radio.link_table(net, n_candidates=3, rng=6)
    ok = links.users_with_rate()
    problem = Problem.from_network(net, links.select_users(ok))
    c = LoadCoupling.from_network(net, problem, user_rows=np.flatnonzero(ok), n_candidates=3,
                                  rng=6)
    calls = []

    def worse_later(p, method=None, **options):  # round 2 gives 1 % less to everyone
        sol = solve(p, method=method, **options)
        calls.append(sol)
        if len(calls) == 2:
            sol = build_solution(p, 0.99 * sol.x, method=sol.method, status=sol.status,
                                 message=sol.message, mu=None, nu=None, n_iter=sol.n_iter,
                                 wall_s=0.0, upper_bound=sol.upper_bound)
        return sol

    monkeypatch.setattr(lc, "solve", worse_later)
    sol = solve_load_coupled(problem, c, "dual", load_tol=1e-12)
    info = sol.load_coupling
    assert len(calls) == 2 and info["rounds"] == 2 and info["answer_round"] == 1
    assert "the answer is round 1's" in sol.message
    assert sol.objective == pytest.approx(calls[0].objective, rel=1e-12)
    assert sol.upper_bound == calls[0].upper_bound


@pytest.mark.parametrize("method", ["alm", "max_rsrp"])
def test_coupling_never_loses_to_full_load(method):
    net = topology.hex_grid(n_rings=1)
    net = topology.add_picos(net, per_sector=2, rng=4)
    net = topology.drop_users(net, 200, demand_mbps=2.0, rng=5)
    links = radio.link_table(net, n_candidates=4, rng=6)
    ok = links.users_with_rate()
    problem = Problem.from_network(net, links.select_users(ok))
    c = LoadCoupling.from_network(net, problem, user_rows=np.flatnonzero(ok), n_candidates=4, rng=6)
    sol = solve_load_coupled(problem, c, method)
    info = sol.load_coupling
    assert info["load_change"][-1] <= 1e-3, sol.message  # converges here
    assert sol.objective >= solve(problem, method).objective - 1e-9
    assert sol.cell_airtime[:, 0] == pytest.approx(info["load"], abs=1e-8)
    if sol.upper_bound is not None:
        assert sol.objective <= sol.upper_bound + 1e-9


def test_bad_arguments_are_named():
    problem, c = two_cells((10.0, 10.0))
    with pytest.raises(ValidationError, match="load must be"):
        c.rates_mbps(np.array([0.5, 1.5]))
    with pytest.raises(ValidationError, match="traffic_mbps"):
        c.fixed_point(np.array([-1.0, 1.0]))
    with pytest.raises(ValidationError, match="max_rounds"):
        solve_load_coupled(problem, c, max_rounds=0)
    other, _ = two_cells((1.0, 1.0))
    with pytest.raises(ValidationError, match="other links"):
        solve_load_coupled(other.restrict([0]), c)
