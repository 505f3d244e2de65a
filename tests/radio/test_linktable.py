"""Tests of the sparse link table (cellopt.radio.links.link_table and cellopt.LinkTable)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from cellopt import LinkTable, ValidationError, radio
from cellopt.network import Network, cells_frame, users_frame
from cellopt.radio import RadioModel, link_table, resource_power_dbm, thermal_noise_dbm
from cellopt.radio import links as links_module
from cellopt.topology import add_picos, drop_users, hex_grid

NO_SHADOWING = RadioModel(shadowing_std_db={"macro": 0.0, "pico": 0.0, "femto": 0.0})
FIELDS = ("user", "cell", "resource", "rsrp_dbm", "sinr_db", "rate_mbps")


@pytest.fixture(scope="module")
def hetnet() -> Network:
    """hex_grid(2) with 4 picos per sector (285 cells) and 300 users, 2/3 clustered, half indoor."""
    net = add_picos(hex_grid(2), per_sector=4, rng=1)
    return drop_users(net, 300, clustered_fraction=2 / 3, indoor_fraction=0.5, rng=2)


def assert_tables_equal(a: LinkTable, b: LinkTable) -> None:
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)
    assert (a.n_users, a.n_cells) == (b.n_users, b.n_cells)
    np.testing.assert_array_equal(a.resource_mhz, b.resource_mhz)


def per_user(lt: LinkTable) -> np.ndarray:
    return np.bincount(lt.user, minlength=lt.n_users)


# ---------------------------------------------------------------------- association
@pytest.mark.parametrize("model", [NO_SHADOWING, RadioModel()], ids=["no-shadowing", "shadowing"])
def test_equal_powers_max_rsrp_is_max_sinr(hetnet, model):
    cells = hetnet.cells.copy().assign(tx_power_dbm=40.0, antenna_gain_dbi=10.0)
    net = hetnet.replace(cells=cells)
    lt = link_table(net, n_candidates=net.n_cells, model=model, rng=3)
    assert len(lt) == net.n_users * net.n_cells
    best_rsrp, best_sinr = lt.best_by("rsrp_dbm"), lt.best_by("sinr_db")
    np.testing.assert_array_equal(best_rsrp, best_sinr)
    # not a trivial check: picos and macros both serve users
    tiers = net.cells["tier"].to_numpy()[best_rsrp]
    assert {"macro", "pico"} <= set(tiers)
    assert hetnet.cells["tx_power_dbm"].nunique() == 2  # the fixture is left as it was


def test_max_rsrp_differs_from_max_sinr_when_powers_differ_from_the_rsrp_powers(hetnet):
    # RSRP is measured at tx_power_dbm; with macros transmitting 20 dB less for the SINR,
    # the best-RSRP cell is no longer always the best-SINR cell.
    power = hetnet.cells["tx_power_dbm"].to_numpy() - np.where(hetnet.cells["tier"] == "macro", 20.0, 0.0)
    lt = link_table(hetnet, n_candidates=hetnet.n_cells, power_dbm=power, rng=3)
    assert (lt.best_by("rsrp_dbm") != lt.best_by("sinr_db")).any()


# ---------------------------------------------------------------------- reproducibility
def test_block_size_does_not_change_the_results(hetnet, monkeypatch):
    default = link_table(hetnet, rng=5, workers=1)
    monkeypatch.setattr(links_module, "BLOCK_ELEMENTS", 1000)  # one user per block
    small = link_table(hetnet, rng=5, workers=1)
    assert_tables_equal(default, small)


def test_workers_do_not_change_the_results(hetnet, monkeypatch):
    monkeypatch.setattr(links_module, "BLOCK_ELEMENTS", 20_000)  # several blocks
    one = link_table(hetnet, rng=5, workers=1)
    two = link_table(hetnet, rng=5, workers=2)
    assert_tables_equal(one, two)


def test_block_size_does_not_change_candidates_or_rsrp(hetnet, monkeypatch):
    default = link_table(hetnet, rng=5, workers=1)
    monkeypatch.setattr(links_module, "BLOCK_ELEMENTS", 1000)
    small = link_table(hetnet, rng=5, workers=2)
    for f in ("user", "cell", "resource", "rsrp_dbm"):
        np.testing.assert_array_equal(getattr(default, f), getattr(small, f), err_msg=f)
    np.testing.assert_allclose(small.sinr_db, default.sinr_db, rtol=0, atol=1e-9)


def test_same_rng_same_table_different_rng_different_shadowing(hetnet):
    a = link_table(hetnet, rng=7)
    assert_tables_equal(a, link_table(hetnet, rng=7))
    assert_tables_equal(link_table(hetnet, rng=np.random.default_rng(7)),
                        link_table(hetnet, rng=np.random.default_rng(7)))
    b = link_table(hetnet, rng=8)
    assert not np.array_equal(a.rsrp_dbm, b.rsrp_dbm)
    # the same network without shadowing does not depend on the seed
    assert_tables_equal(link_table(hetnet, model=NO_SHADOWING, rng=7),
                        link_table(hetnet, model=NO_SHADOWING, rng=8))


# ---------------------------------------------------------------------- candidates
@pytest.mark.parametrize("n_candidates", [1, 5, 8])
def test_candidate_count_and_order(hetnet, n_candidates):
    net = hetnet.replace(resource_mhz=[2.5, 2.5, 5.0])
    lt = link_table(net, n_candidates=n_candidates, rng=9)
    k = net.n_resources
    assert len(lt) == net.n_users * n_candidates * k
    np.testing.assert_array_equal(per_user(lt), n_candidates * k)
    assert np.all(np.diff(lt.user) >= 0)
    # per user: resources 0..K-1 for each cell, cells by decreasing RSRP
    np.testing.assert_array_equal(lt.resource, np.tile(np.arange(k), net.n_users * n_candidates))
    rsrp = lt.rsrp_dbm.reshape(net.n_users, n_candidates, k)
    cell = lt.cell.reshape(net.n_users, n_candidates, k)
    assert np.all(rsrp == rsrp[:, :, :1]) and np.all(cell == cell[:, :, :1])
    assert np.all(np.diff(rsrp[:, :, 0], axis=1) <= 0)
    for row in cell[:, :, 0]:
        assert len(set(row)) == n_candidates


def test_candidates_are_the_strongest_cells(hetnet):
    n = 6
    lt = link_table(hetnet, n_candidates=n, rng=10)
    assert hetnet.bandwidth_mhz == 10.0  # LTE: 600 subcarriers carry the RSRP
    offset = hetnet.cells["tx_power_dbm"].to_numpy() - 10 * np.log10(600)
    rsrp = radio.coupling_db(hetnet, rng=10) + offset
    top = np.argsort(-rsrp, axis=1)[:, :n]
    np.testing.assert_array_equal(lt.cell.reshape(-1, n), top)
    np.testing.assert_allclose(lt.rsrp_dbm.reshape(-1, n), np.take_along_axis(rsrp, top, axis=1),
                               rtol=0, atol=1e-9)


def test_more_candidates_than_cells():
    cells = cells_frame([0.0, 1000.0], [0.0, 0.0], crs="EPSG:32631", tier="macro",
                        tx_power_dbm=46.0, antenna_gain_dbi=14.0)
    users = users_frame([100.0, 400.0, 900.0], [10.0, 0.0, -10.0], crs="EPSG:32631")
    lt = link_table(Network(cells=cells, users=users), n_candidates=8, rng=0)
    np.testing.assert_array_equal(per_user(lt), [2, 2, 2])


def test_zero_window_keeps_only_the_best_cell(hetnet):
    full = link_table(hetnet, n_candidates=8, rng=11)
    lt = link_table(hetnet, n_candidates=8, window_db=0.0, rng=11)
    np.testing.assert_array_equal(per_user(lt), 1)  # continuous positions: no ties
    np.testing.assert_array_equal(lt.cell, full.best_by("rsrp_dbm"))


@pytest.mark.parametrize("window", [3.0, 10.0])
def test_window_keeps_cells_within_the_window(hetnet, window):
    full = link_table(hetnet, n_candidates=8, rng=11)
    lt = link_table(hetnet, n_candidates=8, window_db=window, rng=11)
    best = full.rsrp_dbm.reshape(-1, 8)[:, 0]
    expected = full.rsrp_dbm >= best[full.user] - window
    np.testing.assert_array_equal(lt.cell, full.cell[expected])
    np.testing.assert_array_equal(lt.user, full.user[expected])
    np.testing.assert_array_equal(lt.sinr_db, full.sinr_db[expected])
    assert 1 < len(lt) / hetnet.n_users < 8  # some but not all candidates are dropped
    assert np.all(per_user(lt) >= 1)


# ---------------------------------------------------------------------- resources and power
def test_resources_have_the_same_sinr_and_proportional_rates(hetnet):
    one = link_table(hetnet, n_candidates=4, rng=12)
    widths = np.array([2.5, 2.5, 5.0])
    three = link_table(hetnet.replace(resource_mhz=widths), n_candidates=4, rng=12)
    assert len(three) == 3 * len(one)
    sinr = three.sinr_db.reshape(-1, 3)
    rate = three.rate_mbps.reshape(-1, 3)
    for k in range(3):
        np.testing.assert_allclose(sinr[:, k], one.sinr_db, rtol=0, atol=1e-9)
        np.testing.assert_allclose(rate[:, k], one.rate_mbps * widths[k] / 10.0, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rate.sum(axis=1), one.rate_mbps, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(three.cell[::3], one.cell)
    np.testing.assert_array_equal(three.rsrp_dbm[::3], one.rsrp_dbm)
    assert one.rate_mbps.max() <= 4.4 * 10.0 + 1e-12
    np.testing.assert_array_equal(one.rate_mbps[one.sinr_db < -10.0], 0.0)


def test_a_cell_off_on_one_resource(hetnet):
    net = hetnet.replace(resource_mhz=[2.5, 2.5, 5.0])
    base = link_table(net, n_candidates=4, rng=13)
    off = int(np.bincount(base.best_by("rsrp_dbm")).argmax())  # the cell serving most users
    power = resource_power_dbm(net)
    assert power.shape == (net.n_cells, 3)
    np.testing.assert_allclose(power[:, 0], net.cells["tx_power_dbm"] + 10 * np.log10(0.25))
    power[off, 1] = -np.inf
    lt = link_table(net, n_candidates=4, power_dbm=power, rng=13)
    np.testing.assert_array_equal(lt.cell, base.cell)  # candidates follow RSRP, not power
    np.testing.assert_array_equal(lt.rsrp_dbm, base.rsrp_dbm)
    mine = (lt.cell == off) & (lt.resource == 1)
    assert mine.any()
    assert np.all(lt.sinr_db[mine] == -np.inf)
    np.testing.assert_array_equal(lt.rate_mbps[mine], 0.0)
    others = (lt.cell != off) & (lt.resource == 1)
    assert np.all(lt.sinr_db[others] >= base.sinr_db[others] - 1e-12)
    assert np.any(lt.sinr_db[others] > base.sinr_db[others] + 1.0)
    np.testing.assert_allclose(lt.sinr_db[lt.resource != 1], base.sinr_db[lt.resource != 1],
                               rtol=0, atol=1e-9)


def test_power_per_cell_is_spread_over_the_band(hetnet):
    net = hetnet.replace(resource_mhz=[2.5, 7.5])
    total = net.cells["tx_power_dbm"].to_numpy() - 3.0
    a = link_table(net, power_dbm=total, rng=14)
    b = link_table(net, power_dbm=resource_power_dbm(net, total), rng=14)
    np.testing.assert_array_equal(a.sinr_db, b.sinr_db)
    np.testing.assert_allclose(resource_power_dbm(net, total)[:, 1] - resource_power_dbm(net, total)[:, 0],
                               10 * np.log10(3.0))


@pytest.mark.parametrize("shape", [(285, 2), (284,), (285, 3, 1), ()])
def test_wrong_power_shape_raises(hetnet, shape):
    net = hetnet.replace(resource_mhz=[2.5, 2.5, 5.0])
    with pytest.raises(ValidationError, match="power_dbm has shape"):
        link_table(net, power_dbm=np.full(shape, 30.0), rng=0)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("per_resource", [True, False], ids=["(C,K)", "(C,)"])
def test_nan_or_inf_power_raises(hetnet, bad, per_resource):
    net = hetnet.replace(resource_mhz=[5.0, 5.0])
    power = resource_power_dbm(net) if per_resource else net.cells["tx_power_dbm"].to_numpy(float, copy=True)
    power[3] = bad
    with pytest.raises(ValidationError, match="power_dbm"):
        link_table(net, power_dbm=power, rng=0)


# ---------------------------------------------------------------------- interference
@pytest.mark.parametrize("model", [NO_SHADOWING, RadioModel()], ids=["no-shadowing", "shadowing"])
def test_interference_counts_every_cell(hetnet, model):
    net = hetnet.replace(resource_mhz=[4.0, 6.0])
    lt = link_table(net, n_candidates=1, model=model, rng=15)
    gain = radio.coupling_db(net, model=model, rng=15)
    dense = radio.sinr_db(gain, resource_power_dbm(net), thermal_noise_dbm(net.resource_mhz))
    assert dense.shape == (net.n_users, net.n_cells, 2)
    np.testing.assert_allclose(lt.sinr_db, dense[lt.user, lt.cell, lt.resource], rtol=0, atol=1e-9)
    # counting only the candidates (none besides the server) would give SNR, far higher
    snr = gain[lt.user, lt.cell] + resource_power_dbm(net)[lt.cell, lt.resource] - thermal_noise_dbm(
        net.resource_mhz)[lt.resource]
    assert np.all(lt.sinr_db < snr)
    assert np.median(snr - lt.sinr_db) > 3.0


# ---------------------------------------------------------------------- the LinkTable object
def test_link_table_object(hetnet):
    lt = link_table(hetnet, n_candidates=3, rng=16)
    assert len(lt) == 900 and lt.n_users == 300 and lt.n_cells == 285 and lt.n_resources == 1
    for f in FIELDS:
        assert getattr(lt, f).shape == (900,)
    for f in ("user", "cell", "resource"):
        assert getattr(lt, f).dtype == np.int64
    assert lt.nbytes == 900 * 8 * 6
    frame = lt.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == [*LinkTable.COLUMNS, "coupling_loss_db"] and len(frame) == 900
    np.testing.assert_array_equal(frame["sinr_db"], lt.sinr_db)
    power = hetnet.cells["tx_power_dbm"].to_numpy()[lt.cell]
    np.testing.assert_allclose(frame["coupling_loss_db"], power - lt.rsrp_dbm
                               - lt.model.rsrp_offset_db(hetnet.bandwidth_mhz), atol=1e-9)
    assert "900 links" in repr(lt)
    np.testing.assert_array_equal(lt.best_by(), lt.cell[::3])
    best_rate = lt.best_by("rate_mbps")
    rates = lt.rate_mbps.reshape(-1, 3)
    np.testing.assert_array_equal(rates[np.arange(300), np.argmax(rates, axis=1)],
                                  rates.max(axis=1))
    assert np.isin(best_rate, lt.cell.reshape(-1, 3)).all()


def test_best_by_without_links_is_minus_one():
    lt = LinkTable(user=np.array([0, 0, 2]), cell=np.array([4, 5, 1]), resource=np.zeros(3, np.int64),
                   rsrp_dbm=np.array([-90.0, -80.0, -70.0]), sinr_db=np.array([5.0, 1.0, 0.0]),
                   rate_mbps=np.array([1.0, 2.0, 3.0]), n_users=4, n_cells=6, resource_mhz=np.array([10.0]))
    np.testing.assert_array_equal(lt.best_by("rsrp_dbm"), [5, -1, 1, -1])
    np.testing.assert_array_equal(lt.best_by("sinr_db"), [4, -1, 1, -1])


def test_no_users_gives_an_empty_table():
    net = hex_grid(1)
    lt = link_table(net, rng=0)
    assert len(lt) == 0 and lt.n_users == 0 and lt.n_cells == 21
    assert lt.user.dtype == np.int64 and lt.sinr_db.shape == (0,)
    assert lt.best_by().shape == (0,)
    assert len(lt.to_frame()) == 0


def test_no_cells_raises():
    cells = cells_frame(np.empty(0), np.empty(0), crs="EPSG:32631", tier="macro", tx_power_dbm=46.0,
                        antenna_gain_dbi=14.0)
    users = users_frame([0.0], [0.0], crs="EPSG:32631")
    with pytest.raises(ValidationError, match="no cells"):
        link_table(Network(cells=cells, users=users), rng=0)


@pytest.mark.parametrize("kwargs", [{"n_candidates": 0}, {"n_candidates": -2}, {"n_candidates": 1.5},
                                    {"window_db": -1.0}, {"window_db": np.nan}, {"rng": -1}])
def test_bad_arguments_raise(hetnet, kwargs):
    with pytest.raises(ValidationError):
        link_table(hetnet, **{"rng": 0, **kwargs})


def test_link_table_validates_the_network(hetnet):
    users = hetnet.users.copy()
    users.loc[users.index[4], "weight"] = -1.0
    with pytest.raises(ValidationError, match="weight"):
        link_table(hetnet.replace(users=users), rng=0)


# ---------------------------------------------------------------------- memory
def test_memory_grows_with_links_not_with_users_times_cells(monkeypatch):
    net = drop_users(add_picos(hex_grid(2), rng=0), 3000, clustered_fraction=2 / 3, rng=0)
    assert net.n_cells == 285
    dense_bytes = net.n_users * net.n_cells * 8  # one float64 users × cells array
    monkeypatch.setattr(links_module, "BLOCK_ELEMENTS", 1 << 15)
    tracemalloc.start()
    try:
        lt = link_table(net, n_candidates=2, rng=0, workers=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(lt) == 2 * net.n_users
    assert peak < dense_bytes / 4, (peak, dense_bytes)


def test_the_memory_estimate_bounds_the_measured_peak(hetnet):
    tracemalloc.start()
    try:
        lt = link_table(hetnet, rng=0, workers=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    need = links_module.link_table_nbytes(hetnet.n_users, hetnet.n_cells, 1, 8, 7, workers=2)
    assert len(lt) == 8 * hetnet.n_users and peak < need


# ---------------------------------------------------------------------- consistency
def test_every_table_passes_its_own_check_and_stays_sorted(hetnet):
    lt = link_table(hetnet, rng=1, window_db=6.0)
    assert lt.validate() is lt
    sub = lt.select_users(np.arange(hetnet.n_users) % 3 == 0)
    assert sub.validate() is sub and sub.n_users == 100


def test_outage_users_keep_rate_zero_links_and_are_left_out():
    # three cells at one point, 4 km from the users and at -30 dBm: nobody reaches -10 dB
    cells = cells_frame(np.full(3, 500_000.0), np.full(3, 1_000_000.0), crs="EPSG:32631", tier="pico",
                        tx_power_dbm=-30.0, antenna_gain_dbi=0.0)
    users = users_frame(np.full(4, 504_000.0), 1_000_000.0 + np.arange(4.0), crs="EPSG:32631")
    lt = link_table(Network(cells=cells, users=users), rng=0)
    assert len(lt) == 12 and (lt.rate_mbps == 0).all() and np.isfinite(lt.sinr_db).all()
    assert not lt.users_with_rate().any() and lt.select_users(lt.users_with_rate()).n_users == 0
