"""Third-party femtocells: access prices, offloaded traffic, revenue and backhaul caps."""

import numpy as np
import pytest

import cellopt
from cellopt import Problem, radio, solve, topology
from cellopt.problem import utility_derivative

N_MACRO, N_FEMTO = 3, 6


def offload_problem(seed, n_users=30, alpha=1.0, price=0.0, caps=None):
    """Users with links to 3 operator cells and 6 third-party cells (dense links)."""
    rng = np.random.default_rng(seed)
    n_cells = N_MACRO + N_FEMTO
    u, c = (a.ravel() for a in np.meshgrid(np.arange(n_users), np.arange(n_cells), indexing="ij"))
    femto = c >= N_MACRO
    rate = np.where(femto, rng.lognormal(1.5, 1.0, u.size) * (rng.random(u.size) < 0.3),
                    rng.lognormal(0.5, 0.8, u.size))
    third = np.arange(n_cells) >= N_MACRO
    return Problem.from_links(u, c, rate, n_users=n_users, n_cells=n_cells, alpha=alpha,
                              price_per_mbps=np.where(third, price, 0.0), backhaul_mbps=caps,
                              third_party=third)


def femto_traffic(sol):
    return float(sol.cell_traffic_mbps[N_MACRO:].sum())


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("alpha", [1.0, 2.0])
@pytest.mark.slow
def test_offload_non_increasing_in_price(seed, alpha):
    prices = [0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0]
    sols = [solve(offload_problem(seed, alpha=alpha, price=p), "alm", tol=1e-8) for p in prices]
    traffic = np.array([femto_traffic(s) for s in sols])
    share = np.array([s.offload_share for s in sols])
    scale = traffic[0]
    assert scale > 0
    assert (np.diff(traffic) <= 1e-4 * scale).all(), traffic
    assert (np.diff(share) <= 1e-4).all(), share
    assert traffic[-1] < traffic[0]  # the sweep does move traffic back to the operator
    # Payment is price × femto traffic, and each femtocell's revenue is its share of it.
    for p, s in zip(prices, sols, strict=True):
        assert s.cost == pytest.approx(p * femto_traffic(s), rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(s.cell_payment[N_MACRO:], p * s.cell_traffic_mbps[N_MACRO:])


@pytest.mark.parametrize("seed", range(3))
def test_price_zero_unlimited_caps_is_the_free_femtocell_optimum(seed):
    priced = solve(offload_problem(seed, price=0.0), "alm", tol=1e-8)
    free = offload_problem(seed).replace(price_per_mbps=np.zeros(N_MACRO + N_FEMTO))
    oracle = solve(free, "reference", tol=1e-10)
    assert priced.objective == pytest.approx(oracle.objective, rel=1e-6)
    assert priced.cost == 0.0
    assert priced.offload_share == pytest.approx(oracle.offload_share, abs=1e-3)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_nothing_offloaded_above_the_highest_marginal_utility(seed, alpha):
    """Above max w_i U'(r_i) at the operator-only optimum (over users who have a femtocell
    link), that optimum stays optimal; just below it, offloading starts."""
    p = offload_problem(seed, alpha=alpha)
    operator_only = solve(p.restrict(np.flatnonzero(p.cell < N_MACRO)), "reference", tol=1e-10)
    marginal = p.weight * utility_derivative(operator_only.user_rate_mbps, alpha)
    can_offload = np.zeros(p.n_users, bool)
    can_offload[p.user[p.cell >= N_MACRO]] = True
    threshold = float(marginal[can_offload].max())
    price = 1.01 * threshold
    sol = solve(offload_problem(seed, alpha=alpha, price=price), "alm", tol=1e-8)
    assert femto_traffic(sol) <= 1e-5 * sol.cell_traffic_mbps.sum()
    assert sol.offload_share <= 1e-5
    assert sol.objective == pytest.approx(operator_only.objective, rel=1e-6)
    cheaper = solve(offload_problem(seed, alpha=alpha, price=0.99 * threshold), "alm", tol=1e-8)
    assert femto_traffic(cheaper) > 0


@pytest.mark.parametrize("method", ["alm", "dual", "ipm", "reference"])
def test_caps_respected_by_optimizers(method):
    caps = np.r_[np.full(N_MACRO, np.inf), np.random.default_rng(9).uniform(0.5, 3.0, N_FEMTO)]
    sol = solve(offload_problem(4, price=0.02, caps=caps), method, tol=1e-6)
    use = sol.cell_traffic_mbps[N_MACRO:] / caps[N_MACRO:]
    assert use.max() <= 1 + 1e-6
    assert len(sol.exceeded_backhaul) == 0


@pytest.mark.parametrize("method", ["max_rsrp", "load_aware"])
def test_baselines_over_the_caps_are_flagged(method):
    """Baselines choose ignoring the caps: the cells they overload are named, then scaled."""
    caps = np.r_[np.full(N_MACRO, np.inf), np.full(N_FEMTO, 0.2)]
    p = offload_problem(4, caps=caps)
    sol = solve(p.replace(rsrp_dbm=np.log(p.rate_mbps)), method)  # strongest = fastest
    assert len(sol.exceeded_backhaul) > 0
    assert (sol.exceeded_backhaul >= N_MACRO).all()
    assert "over their backhaul cap" in sol.message
    assert (sol.cell_traffic_mbps <= caps * (1 + 1e-9)).all()  # scaled down to fit


def test_network_owners_reach_the_solution():
    net = topology.hex_grid(n_rings=1)
    net = topology.add_femtocells(net, density_per_km2=20.0, price_per_mbps=0.01,
                                  backhaul_mbps=5.0, rng=1)
    net = topology.drop_users(net, 150, indoor_fraction=0.8, rng=2)
    drop = cellopt.Drop.from_network(net, radio.link_table(net, rng=3))
    third = (net.cells["owner"] == "third_party").to_numpy()
    np.testing.assert_array_equal(drop.problem.third_party, third)
    sol = drop.solve("alm")
    _, cells = drop.frames(sol)
    assert cells["payment"].sum() == pytest.approx(sol.cost)
    assert cells.loc[~third, "payment"].eq(0).all()
    assert sol.offload_share == pytest.approx(
        cells.loc[third, "traffic_mbps"].sum() / cells["traffic_mbps"].sum())
    assert cells.loc[third, "backhaul_use"].max() <= 1 + 1e-6
