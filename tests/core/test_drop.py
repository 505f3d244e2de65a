"""The one bridge from a network to a problem and back to tables: ``cellopt.Drop``.

- Users without a usable link are left out of the problem and come back at rate 0, with
  no serving cell, whichever way the drop is made; ``Problem.from_network`` refuses them
  (α ≥ 1) and names the drop as the fix.
- ``Drop.frames`` gives the network's columns and then exactly the declared result
  columns, and docs/conventions.md shows the declaration.
- What is built from a drop later (load coupling, power gains) reads the model, seed and
  candidates its link table was made with: it agrees with the table by construction.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from helpers import ROOT, problems

import cellopt
from cellopt import Drop, radio, topology
from cellopt.drop import CELL_RESULT_COLUMNS, USER_RESULT_COLUMNS, result_columns_markdown
from cellopt.load_coupling import LoadCoupling
from cellopt.power import PowerProblem
from cellopt.power.gains import GainTable
from cellopt.study.tables import RESULT_TABLES

CONVENTIONS = ROOT / "docs" / "conventions.md"


@pytest.fixture(scope="module")
def outage_drop() -> Drop:
    """A 7-site grid with 60 users, 3 of them 30 km away: those have no usable link."""
    return problems.outage_drop()


def test_outage_users_are_left_out_and_reported_at_rate_zero(outage_drop):
    drop = outage_drop
    assert (~drop.solvable).sum() == 3 and not drop.solvable[-3:].any()
    assert drop.problem.n_users == drop.network.n_users - 3
    sol = drop.solve("dual")
    assert sol.status == "optimal"
    users, cells = drop.frames(sol)
    assert (len(users), len(cells)) == (drop.network.n_users, drop.network.n_cells)
    out = users.iloc[-3:]
    assert (out["rate_mbps"] == 0).all() and not out["usable"].any()
    assert out["serving_cell_id"].isna().all() and (out["serving_tier"] == "none").all()
    assert out["sinr_db"].isna().all() and (out["n_serving_cells"] == 0).all()
    np.testing.assert_array_equal(users["rate_mbps"].to_numpy(), drop.per_user(sol.user_rate_mbps))
    assert cells["n_users"].sum() == users["serving_cell_id"].notna().sum()


def test_problem_from_network_refuses_outage_users_and_names_the_drop(outage_drop):
    with pytest.raises(cellopt.ValidationError, match=r"Drop\.from_network"):
        cellopt.Problem.from_network(outage_drop.network, outage_drop.links)
    # α < 1: utility stays finite, so every user is kept (and reported at rate 0 in the drop too)
    p = cellopt.Problem.from_network(outage_drop.network, outage_drop.links, alpha=0.5)
    assert p.n_users == outage_drop.network.n_users


def test_frames_add_exactly_the_declared_columns(outage_drop):
    drop = outage_drop
    users, cells = drop.frames(drop.solve("max_rsrp"))
    assert list(users.columns) == [*drop.network.users.columns, *(c.name for c in USER_RESULT_COLUMNS)]
    assert list(cells.columns) == [*drop.network.cells.columns, *(c.name for c in CELL_RESULT_COLUMNS)]


def test_the_docs_show_the_declared_result_columns():
    text = CONVENTIONS.read_text(encoding="utf-8")
    shown = re.search(r"<!-- result-columns:begin -->\n(.*?)\n<!-- result-columns:end -->", text, re.S)
    assert shown, "docs/conventions.md lost its result-columns markers"
    assert shown.group(1) == result_columns_markdown(RESULT_TABLES), (
        "docs/conventions.md's result table is stale; paste "
        "cellopt.drop.result_columns_markdown(cellopt.study.tables.RESULT_TABLES)")


def small_drop(rng: int = 3) -> Drop:
    net = topology.drop_users(topology.hex_grid(n_rings=1), 80, rng=1)
    return Drop.from_network(net, radio.link_table(net, n_candidates=4, rng=rng))


@pytest.mark.parametrize("seed", [3, np.random.default_rng(5)], ids=["int", "generator"])
def test_load_coupling_from_a_drop_equals_the_coupling_built_with_the_tables_seed(seed):
    net = topology.drop_users(topology.hex_grid(n_rings=1), 80, rng=1)
    links = radio.link_table(net, n_candidates=4, rng=seed)
    drop = Drop.from_network(net, links)
    coupled = LoadCoupling.from_drop(drop, n_interferers=10)
    by_hand = LoadCoupling.from_network(net, drop.problem, user_rows=np.flatnonzero(drop.solvable),
                                        n_candidates=4, n_interferers=10, rng=links.shadowing_seed)
    np.testing.assert_array_equal(coupled.signal_mw, by_hand.signal_mw)
    np.testing.assert_array_equal(coupled.gains.gain_mw_per_mw, by_hand.gains.gain_mw_per_mw)
    # at full load the coupling gives back the link table's rates
    np.testing.assert_allclose(coupled.rates_mbps(np.ones(net.n_cells)), drop.problem.rate_mbps,
                               rtol=1e-9)


def test_power_gains_from_a_drop_use_the_tables_model_and_seed():
    drop = small_drop()
    gains = GainTable.from_drop(drop, n_interferers=8)
    again = GainTable.from_network(drop.network, n_candidates=4, n_interferers=8, rng=3)
    np.testing.assert_array_equal(gains.gain_mw_per_mw, again.gain_mw_per_mw)
    np.testing.assert_array_equal(gains.cell, again.cell)


def test_a_hand_made_link_table_cannot_couple():
    drop = small_drop()
    bare = Drop.from_network(drop.network, drop.links.__class__(
        **{**{f: getattr(drop.links, f) for f in ("user", "cell", "resource", "rsrp_dbm", "sinr_db",
                                                  "rate_mbps", "n_users", "n_cells", "resource_mhz")}}))
    for build in (LoadCoupling.from_drop, GainTable.from_drop):
        with pytest.raises(cellopt.ValidationError, match="records no radio model"):
            build(bare)


def test_objects_of_another_network_are_refused_where_they_meet():
    """Two networks of the same cells with as many users, dropped elsewhere: the counts,
    all that was compared before, match. Each object records the network it was built on
    (Network.fingerprint: cell and user ids and positions) and is refused with the other,
    naming both objects and the fix."""
    drop_a = small_drop()
    net_b = topology.drop_users(topology.hex_grid(n_rings=1), 80, rng=2)
    assert (net_b.n_users, net_b.n_cells) == (drop_a.network.n_users, drop_a.network.n_cells)
    assert net_b.fingerprint.cells == drop_a.network.fingerprint.cells
    assert net_b.fingerprint.users != drop_a.network.fingerprint.users
    links_b = radio.link_table(net_b, n_candidates=4, rng=3)
    users_differ = "describe different networks: their users (ids and positions) differ"
    with pytest.raises(cellopt.ValidationError, match=f"the drop's link table and its network "
                                                      f"{re.escape(users_differ)}"):
        Drop.from_network(drop_a.network, links_b)
    with pytest.raises(cellopt.ValidationError, match=re.escape(
            f"the link table (links) and the network {users_differ}")):
        cellopt.Problem.from_network(drop_a.network, links_b)
    gains_b = GainTable.from_network(net_b, rng=3)
    with pytest.raises(cellopt.ValidationError, match=re.escape(
            f"the gain table (gains) and the network {users_differ}")):
        PowerProblem.from_network(drop_a.network, gains=gains_b)
    with pytest.raises(cellopt.ValidationError, match=re.escape(
            f"the gain table (gains) and the network {users_differ}")):
        cellopt.power.abs_grid(drop_a.network, gains=gains_b)
    drop_b = Drop.from_network(net_b, links_b)
    with pytest.raises(cellopt.ValidationError, match=re.escape(
            f"the drop's coupling and its network (the users with a usable link) {users_differ}")):
        dataclasses.replace(drop_b, coupling=LoadCoupling.from_drop(drop_a))
    with pytest.raises(cellopt.ValidationError, match=re.escape(
            f"the gain table and the drop's link table {users_differ}")):
        GainTable.from_network(drop_a.network, n_candidates=4, rng=3).check_links(
            links_b, "the drop's link table")
    # The same network rebuilt (a copy of its tables) is the same network.
    copy = drop_a.network.replace(cells=drop_a.network.cells.copy(),
                                  users=drop_a.network.users.copy())
    assert copy.fingerprint == drop_a.network.fingerprint
    Drop.from_network(copy, drop_a.links)
    PowerProblem.from_network(copy, gains=GainTable.from_network(drop_a.network, rng=3))
