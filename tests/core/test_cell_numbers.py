"""Per-cell numbers that mean something: best-RSRP share, mean SINR, the price of airtime,
and overload with demand, each checked against a direct computation."""

from __future__ import annotations

import numpy as np
import pytest

from cellopt.study.scenario import load_scenario


@pytest.fixture(scope="module")
def full_buffer():
    drop = load_scenario("hetnet").with_overrides(users={"n": 300}).build(1)
    sol = drop.solve("dual")
    return drop, sol, *drop.frames(sol)


def test_best_rsrp_share_counts_each_users_strongest_cell(full_buffer):
    drop, _, _, cells = full_buffer
    best = drop.links.best_by("rsrp_dbm")
    expected = np.bincount(best[best >= 0], minlength=drop.network.n_cells) / (best >= 0).sum()
    np.testing.assert_allclose(cells["best_rsrp_share"], expected)
    assert cells["best_rsrp_share"].sum() == pytest.approx(1.0)


def test_mean_sinr_is_over_the_users_each_cell_serves(full_buffer):
    _, _, users, cells = full_buffer
    served = users[users["sinr_db"].notna() & users["serving_cell_id"].notna()]
    by_cell = served.groupby("serving_cell_id")["sinr_db"].mean()
    got = cells.set_index("cell_id")["mean_sinr_db"]
    np.testing.assert_allclose(got.loc[by_cell.index], by_cell.to_numpy())
    assert got.drop(by_cell.index).isna().all()  # cells serving nobody: null


def test_full_buffer_prices_are_the_duals_and_overload_is_null(full_buffer):
    _, sol, _, cells = full_buffer
    np.testing.assert_allclose(cells["airtime_price"], sol.prices["airtime"][:, 0])
    # proportional fairness, full buffer: a cell's price is the weight it serves (Σ w_i)
    busy = cells["n_users"] > 0
    assert (cells.loc[busy, "airtime_price"] > 0).all()
    assert cells.loc[busy, "overload"].isna().all()  # full buffer: no demand to overload


def test_overload_with_demand_is_the_needed_share_beyond_one():
    drop = load_scenario("hetnet").with_overrides(users={"n": 400, "demand_mbps": 3.0}).build(2)
    sol = drop.solve("max_rsrp")
    users, cells = drop.frames(sol)
    # by hand: each user needs demand / (its serving link's full-band peak rate)
    links = drop.links
    need = {}
    for row in users.itertuples():
        if row.serving_cell_id is None or row.serving_cell_id is np.nan or not row.usable:
            continue
        cell = int(np.flatnonzero(drop.network.cells["cell_id"].to_numpy() == row.serving_cell_id)[0])
        rate = links.rate_mbps[(links.user == row.Index) & (links.cell == cell)].max()
        need[cell] = need.get(cell, 0.0) + 3.0 / rate
    expected = np.zeros(drop.network.n_cells)
    for cell, total in need.items():
        expected[cell] = max(total - 1.0, 0.0)
    np.testing.assert_allclose(cells["overload"], expected, rtol=1e-9, atol=1e-12)
    assert (cells["overload"] > 0).any()  # 3 Mbit/s each overloads some cells (can fail)
