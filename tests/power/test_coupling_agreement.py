"""Objects that must agree are compared where they meet.

A load coupling and the link table its problem came from, a gain table and a drop's link
table, a drop's network, link table, problem and coupling: each pair is compared on what
is equal when both come from one network, radio model and shadowing seed (rows, links,
full-load rates and SINRs to round-off), and a mismatch is a ValidationError naming both
and the fix. Also: ``LoadCoupling.fixed_point(hold=...)`` takes a boolean mask only.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cellopt import Drop, Problem, radio, topology
from cellopt.errors import ValidationError
from cellopt.load_coupling import LoadCoupling, solve_load_coupled
from cellopt.power import GainTable, PowerProblem


def network(user_seed: int = 2, n_users: int = 150, n_rings: int = 1):
    net = topology.hex_grid(n_rings=n_rings, wraparound=False)
    net = topology.add_picos(net, per_sector=1, rng=1)
    return topology.drop_users(net, n_users, demand_mbps=1.0, rng=user_seed)


@pytest.fixture(scope="module")
def net():
    return network()


@pytest.fixture(scope="module")
def drop(net):
    return Drop.from_network(net, radio.link_table(net, n_candidates=4, rng=3))


def coupling_of(drop, *, rng, n_interferers=None, net=None):
    net = drop.network if net is None else net
    return LoadCoupling.from_network(
        net, drop.problem, user_rows=np.flatnonzero(drop.solvable), n_candidates=4,
        n_interferers=net.n_cells if n_interferers is None else n_interferers, rng=rng)


# ------------------------------------------------------------ coupling and link table
@pytest.mark.parametrize("seed", [4, 5, 99])
def test_wrong_seed_is_refused_even_when_every_cell_is_followed(drop, seed):
    # Every cell followed: the links' cells are always among the user's kept cells, so
    # the old check (cells present) accepted it and the coupled solve answered "optimal"
    # for another network.
    with pytest.raises(ValidationError) as err:
        coupling_of(drop, rng=seed)
    text = str(err.value)
    assert f"shadowing seed {seed}" in text and "the problem's links disagree" in text
    assert "× apart" in text and text.rstrip().endswith(
        "(LoadCoupling.from_drop(drop) reads them from the drop's table)")
    assert "; fix: build the coupling with the model, shadowing seed (rng)" in text


@pytest.mark.parametrize("n_interferers", [None, 4, 8])
def test_same_seed_is_accepted_and_agrees_at_full_load(drop, n_interferers):
    c = coupling_of(drop, rng=3, n_interferers=n_interferers)
    full = c.rates_mbps(np.ones(c.n_cells))
    np.testing.assert_allclose(full, drop.problem.rate_mbps, rtol=1e-9)
    assert c.gains.shadowing_seed == drop.links.shadowing_seed == 3
    np.testing.assert_array_equal(c.link_rate_mbps, drop.problem.rate_mbps)
    c.check(drop.problem)
    assert solve_load_coupled(drop.problem, c, "ipm", max_rounds=2).load_coupling is not None


def test_from_drop_agrees_by_construction(drop):
    c = LoadCoupling.from_drop(drop, n_interferers=8)
    coupled = dataclasses.replace(drop, coupling=c)
    assert coupled.coupling is c
    np.testing.assert_allclose(c.rates_mbps(np.ones(c.n_cells)), drop.problem.rate_mbps,
                               rtol=1e-9)


def test_coupling_from_another_network_is_refused(drop):
    # Same cells, another drop of users: the coupling's gains are of other users.
    other = network(user_seed=7)
    with pytest.raises(ValidationError, match=r"disagree|not among their"):
        coupling_of(drop, rng=3, net=other)
    # A coupling made for another problem meets this one in the solve and in a drop.
    other_drop = Drop.from_network(other, radio.link_table(other, n_candidates=4, rng=3))
    foreign = LoadCoupling.from_drop(other_drop, n_interferers=8)
    with pytest.raises(ValidationError, match=r"the coupling and the problem describe different "
                                              r"networks: their users"):
        solve_load_coupled(drop.problem, foreign)  # both record their network
    with pytest.raises(ValidationError,
                       match=r"different networks: their users .*fix: build the coupling from this drop"):
        dataclasses.replace(drop, coupling=foreign)


def test_same_links_other_rates_are_refused_at_the_solve(drop):
    # Same links, cells and count, but rates of another table: only the rates tell.
    c = LoadCoupling.from_drop(drop, n_interferers=8)
    scaled = drop.problem.replace(rate_mbps=drop.problem.rate_mbps * 1.5)
    with pytest.raises(ValidationError) as err:
        solve_load_coupled(scaled, c)
    text = str(err.value)
    assert "the problem's links and the coupling (built for, shadowing seed 3) disagree" in text
    assert "1.5× apart" in text and "; fix: build the coupling from this problem" in text


def test_hand_made_coupling_is_compared_on_its_own_full_load_rates():
    from cellopt.power.gains import GainTable as Gains
    from cellopt.radio.spectral import shannon

    gains = Gains(cell=np.array([[0, 1], [1, 0]]), gain_mw_per_mw=np.array([[6.0, 4.0], [30.0, 2.0]]),
                  background_mw=np.zeros(2), n_candidates=1, noise_mw=1.0, bandwidth_mhz=10.0,
                  efficiency=shannon, max_power_dbm=np.zeros(2))
    c = LoadCoupling(gains=gains, user=np.array([0, 1]), cell=np.array([0, 1]),
                     signal_mw=np.array([6.0, 30.0]))
    full = c.rates_mbps(np.ones(2))
    good = Problem.from_links([0, 1], [0, 1], full, n_users=2, n_cells=2,
                              demand_mbps=np.array([10.0, 10.0]))
    c.check(good)
    bad = good.replace(rate_mbps=full * np.array([1.0, 2.0]))
    with pytest.raises(ValidationError, match=r"links rows \[1\] \(1 of 2\)"):
        c.check(bad)


def test_link_table_with_interference_radius():
    # A radius table's rates approximate the far cells by their mean: from_drop accepts
    # it (each coupled full-load SINR ≤ the link's near-only SINR), with the same seed.
    net = network(n_users=120, n_rings=2)  # 57 macro + 57 pico cells: more than 32 nearby
    links = radio.link_table(net, n_candidates=4, rng=3, interference_radius_m=600.0)
    drop = Drop.from_network(net, links)
    c = LoadCoupling.from_drop(drop, n_interferers=16)
    near = links.sinr_db + links.far_field_db
    src = np.flatnonzero(drop.solvable[links.user])[drop.problem.link_index]
    with np.errstate(divide="ignore"):
        coupled_db = 10 * np.log10(c.sinr(np.ones(c.n_cells)))
    assert (coupled_db <= near[src] + 1e-6).all()
    # The far field moved the table's rates off the exact ones: from_network, which has
    # only the problem's rates, compares exactly and refuses the table.
    assert (links.far_field_db > 0.01).mean() > 0.5
    with pytest.raises(ValidationError, match=r"the problem's links disagree"):
        LoadCoupling.from_network(net, drop.problem, user_rows=np.flatnonzero(drop.solvable),
                                  n_candidates=4, n_interferers=16, rng=3)
    # The gain table of the power problem makes the same one-sided check.
    GainTable.from_drop(drop, n_interferers=16)
    # Another seed recorded on the same table is refused, even when every cell is followed.
    wrong = dataclasses.replace(drop, links=dataclasses.replace(links, shadowing_seed=4))
    with pytest.raises(ValidationError, match=r"shadowing seed 4\) and the drop's link table"):
        LoadCoupling.from_drop(wrong, n_interferers=net.n_cells)
    with pytest.raises(ValidationError, match=r"the gain table \(shadowing seed 4\) and the "
                                              r"drop's link table disagree"):
        GainTable.from_drop(wrong, n_interferers=net.n_cells)


# ------------------------------------------------------------ gain table and link table
def test_gain_table_checks_the_link_table(net, drop):
    GainTable.from_network(net, n_candidates=4, rng=3).check_links(drop.links)
    with pytest.raises(ValidationError, match=r"shadowing seed 4, the link table 3; fix: build "):
        GainTable.from_network(net, n_candidates=4, rng=4).check_links(drop.links)
    # Without a recorded seed, the values tell.
    unseeded = dataclasses.replace(GainTable.from_network(net, n_candidates=4, rng=4),
                                   shadowing_seed=None)
    with pytest.raises(ValidationError, match=r"the gain table and the link table disagree"):
        unseeded.check_links(drop.links)
    other = network(n_users=90)
    with pytest.raises(ValidationError, match=r"the gain table has 90 users .* the link table 150"):
        GainTable.from_network(other, n_candidates=4, rng=3).check_links(drop.links)


def test_drop_whose_table_has_other_powers_is_refused_by_the_power_problem(net):
    # A link table at 3 dB below tx_power_dbm describes other full-power rates than the
    # gains recomputed from the network: GainTable.from_drop (and so the power problem
    # and the coupling) refuse it instead of optimizing another network.
    power = net.cells["tx_power_dbm"].to_numpy(float) - 3.0
    low = Drop.from_network(net, radio.link_table(net, n_candidates=4, rng=3, power_dbm=power))
    with pytest.raises(ValidationError, match=r"the gain table \(shadowing seed 3\) and the "
                                              r"drop's link table disagree"):
        PowerProblem.from_drop(low, levels_db=[0.0, None])
    with pytest.raises(ValidationError, match=r"tx_power_dbm"):
        LoadCoupling.from_drop(low)


# ------------------------------------------------------------------ a drop's own parts
def test_drop_parts_must_agree(net, drop):
    other = network(user_seed=7)
    other_links = radio.link_table(other, n_candidates=4, rng=3)
    other_drop = Drop.from_network(other, other_links)
    # Another table of the same network size: its links are not the problem's.
    with pytest.raises(ValidationError, match=r"link table and its network describe different networks"):
        dataclasses.replace(drop, links=other_links)
    with pytest.raises(ValidationError, match=r"the drop's problem and its network .* describe "
                                              r"different networks"):
        dataclasses.replace(drop, problem=other_drop.problem)
    with pytest.raises(ValidationError, match=r"link table has 150 users .* its network 90"):
        dataclasses.replace(drop, network=network(n_users=90))
    with pytest.raises(ValidationError, match=r"solvable has dtype int64"):
        dataclasses.replace(drop, solvable=drop.solvable.astype(np.int64))


# ------------------------------------------------------------------ fixed_point(hold=)
def test_fixed_point_hold_is_a_boolean_mask(drop):
    c = LoadCoupling.from_drop(drop, n_interferers=8)
    traffic = np.full(drop.problem.n_links, 0.01)
    start = np.full(c.n_cells, 0.5)
    with pytest.raises(ValidationError) as err:
        c.fixed_point(traffic, start=start, hold=np.array([0, 1]))  # indices, not a mask
    assert "hold has dtype int64 and shape (2,)" in str(err.value)
    assert f"fix: give a boolean array of shape ({c.n_cells},)" in str(err.value)
    with pytest.raises(ValidationError, match=r"hold has dtype bool and shape \(3,\)"):
        c.fixed_point(traffic, start=start, hold=np.ones(3, bool))  # was an IndexError
    mask = np.zeros(c.n_cells, bool)
    mask[[0, 1]] = True
    fp = c.fixed_point(traffic, start=start, hold=mask)
    assert (fp.load[mask] == 0.5).all() and (fp.load[~mask] < 0.5).all()
