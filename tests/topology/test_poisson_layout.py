"""Tests of the random multi-tier layout (topology.poisson_layout) and the single-slope loss."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from helpers.checks import raises

from cellopt.errors import ResourceLimitError, ValidationError
from cellopt.network import cells_frame, users_frame
from cellopt.radio import RadioModel, coupling_db, link_table, thermal_noise_dbm
from cellopt.radio.pathloss import FRIIS_1M_2GHZ_DB, SingleSlope, free_space
from cellopt.topology import DEFAULT_ORIGIN_LONLAT, drop_users, poisson_layout, synthetic_crs
from cellopt.topology.poisson import poisson_layout_nbytes

#: 20 log10(2000) − 27.55, written out: free space at 1 m and 2000 MHz [dB].
L0_DB = 38.47059991327963
THREE_TIERS = {"macro": {"density_per_km2": 2.0}, "pico": {"density_per_km2": 5.0},
               "femto": {"density_per_km2": 10.0}}
SLOPES = {"macro": SingleSlope(3.5), "pico": SingleSlope(4.0), "femto": SingleSlope(4.0)}
NO_SHADOWING = {"macro": 0.0, "pico": 0.0, "femto": 0.0}


def xy_of(frame: pd.DataFrame) -> np.ndarray:
    return np.column_stack([frame.geometry.x.to_numpy(), frame.geometry.y.to_numpy()])


def with_cells_and_users(net, cells_xy, tiers, powers, users_xy):
    """`net` (its region, wraparound and CRS) with the given omni 0 dBi cells and outdoor users."""
    cells = cells_frame(cells_xy[:, 0], cells_xy[:, 1], crs=net.crs, tier=np.array(tiers),
                        tx_power_dbm=np.array(powers, float), antenna_gain_dbi=0.0)
    users = users_frame(users_xy[:, 0], users_xy[:, 1], crs=net.crs)
    return net.replace(cells=cells, users=users).validate()


# ---------------------------------------------------------------------- single slope
def test_reference_loss_is_free_space_at_1m_and_2ghz():
    assert FRIIS_1M_2GHZ_DB == pytest.approx(L0_DB, abs=1e-12)
    assert FRIIS_1M_2GHZ_DB == pytest.approx(float(free_space(1.0, 2000.0)), abs=1e-12)


def test_single_slope_matches_hand_values():
    loss = SingleSlope(3.5)
    np.testing.assert_allclose(loss(np.array([1.0, 100.0, 1000.0])),
                               [L0_DB, L0_DB + 70.0, L0_DB + 105.0], rtol=0, atol=1e-9)
    assert loss(np.full((2, 3), 10.0)).shape == (2, 3)
    # 120 dB at 10 m, exponent 4: at 1 km, 120 + 40 log10(100) = 200 dB
    other = SingleSlope(4.0, reference_loss_db=120.0, reference_distance_m=10.0)
    assert other(1000.0) == pytest.approx(200.0, abs=1e-9)
    assert other(10.0) == pytest.approx(120.0, abs=1e-12)
    assert SingleSlope(2.0, 0.0, 1.0)(50.0) == pytest.approx(20 * math.log10(50.0), abs=1e-12)


def test_single_slope_pickles_and_compares_by_value():
    loss = SingleSlope(3.5, 40.0, 2.0)
    assert pickle.loads(pickle.dumps(loss)) == loss
    assert SingleSlope(3.5) == SingleSlope(3.5, FRIIS_1M_2GHZ_DB, 1)
    assert isinstance(SingleSlope(4).exponent, float)


@pytest.mark.parametrize(("kwargs", "text"), [
    ({"exponent": 0.0}, "SingleSlope.exponent=0 is outside (0, 10]"),
    ({"exponent": -2.0}, "SingleSlope.exponent=-2"),
    ({"exponent": 10.5}, "SingleSlope.exponent=10.5"),
    ({"exponent": float("nan")}, "SingleSlope.exponent=nan is not finite"),
    ({"exponent": True}, "SingleSlope.exponent=True is a bool"),
    ({"exponent": "3.5"}, "SingleSlope.exponent='3.5' is a str"),
    ({"exponent": 3.5, "reference_loss_db": float("inf")}, "SingleSlope.reference_loss_db=inf"),
    ({"exponent": 3.5, "reference_loss_db": -1.0}, "SingleSlope.reference_loss_db=-1"),
    ({"exponent": 3.5, "reference_distance_m": 0.0}, "SingleSlope.reference_distance_m=0"),
    ({"exponent": 3.5, "reference_distance_m": -1.0}, "SingleSlope.reference_distance_m=-1"),
])
def test_single_slope_refuses_bad_fields(kwargs, text):
    with raises(ValidationError, text) as err:
        SingleSlope(**kwargs)
    assert "; fix: " in str(err.value)


# ---------------------------------------------------------------------- radio on the layout
def test_radio_model_with_single_slope_builds_links_on_a_layout():
    net = drop_users(poisson_layout(THREE_TIERS, rng=3), 200, rng=1)
    table = link_table(net, 4, model=RadioModel(pathloss=SLOPES), rng=5, workers=1)
    assert np.array_equal(np.unique(table.user), np.arange(200))
    assert np.isfinite(table.sinr_db).all() and (table.rate_mbps >= 0).all()


def test_coupling_is_minus_single_slope_loss_with_wrapped_distances():
    net = drop_users(poisson_layout(THREE_TIERS, side_m=1000.0, rng=4), 50, rng=2)
    model = RadioModel(pathloss=SLOPES, shadowing_std_db=NO_SHADOWING, indoor_tiers=())
    gain = coupling_db(net, model=model)
    # torus distance, computed independently of the stored shifts
    offset = xy_of(net.users)[:, None, :] - xy_of(net.cells)[None, :, :]
    offset = (offset + 500.0) % 1000.0 - 500.0
    dmin = np.where(net.cells["tier"] == "macro", 35.0, 10.0)
    distance = np.maximum(np.hypot(offset[..., 0], offset[..., 1]), dmin)
    exponent = np.where(net.cells["tier"] == "macro", 3.5, 4.0)
    np.testing.assert_allclose(gain, -(L0_DB + 10 * exponent * np.log10(distance)), atol=1e-9)


def test_sinr_of_a_tiny_network_matches_hand_computation():
    base = poisson_layout({"macro": {"density_per_km2": 4.0}}, rng=0, wraparound=False)
    x0, y0 = base.region.bounds[:2]
    # macro at 200 m and pico at 100 m from the user, all on one line
    cells = np.array([[x0 + 100.0, y0 + 500.0], [x0 + 400.0, y0 + 500.0]])
    net = with_cells_and_users(base, cells, ["macro", "pico"], [46.0, 30.0],
                               np.array([[x0 + 300.0, y0 + 500.0]]))
    model = RadioModel(pathloss=SLOPES, shadowing_std_db=NO_SHADOWING)
    gain = coupling_db(net, model=model)
    np.testing.assert_allclose(gain, [[-(L0_DB + 35 * math.log10(200.0)),
                                       -(L0_DB + 40 * math.log10(100.0))]], atol=1e-9)
    macro_dbm = 46.0 - (L0_DB + 35 * math.log10(200.0))  # −73.006 dBm
    pico_dbm = 30.0 - (L0_DB + 80.0)  # −88.471 dBm
    noise_dbm = -174.0 + 70.0 + 9.0  # 10 MHz, 9 dB noise figure
    assert float(thermal_noise_dbm(10.0, 9.0)) == pytest.approx(noise_dbm, abs=1e-12)

    def mw(dbm: float) -> float:
        return 10 ** (dbm / 10)

    table = link_table(net, model=model, workers=1)
    sinr = dict(zip(table.cell.tolist(), table.sinr_db.tolist(), strict=True))
    assert sinr[0] == pytest.approx(10 * math.log10(mw(macro_dbm) / (mw(pico_dbm) + mw(noise_dbm))),
                                    abs=1e-9)
    assert sinr[1] == pytest.approx(10 * math.log10(mw(pico_dbm) / (mw(macro_dbm) + mw(noise_dbm))),
                                    abs=1e-9)


def test_wraparound_user_sees_a_cell_across_the_edge():
    base = poisson_layout({"macro": {"density_per_km2": 4.0}}, side_m=2000.0, rng=0)
    x0, y0 = base.region.bounds[:2]
    # the cell 20 m inside the east edge, the user 30 m inside the west edge: 50 m apart
    cell = np.array([[x0 + 1980.0, y0 + 1000.0]])
    user = np.array([[x0 + 30.0, y0 + 1000.0], [x0 + 10.0, y0 + 1990.0]])
    model = RadioModel(pathloss=SLOPES, shadowing_std_db=NO_SHADOWING)
    gain = coupling_db(with_cells_and_users(base, cell, ["macro"], [46.0], user), model=model)
    corner = math.hypot(30.0, 990.0)  # the second user: across the west edge, 990 m north
    np.testing.assert_allclose(gain[:, 0], [-(L0_DB + 35 * math.log10(50.0)),
                                            -(L0_DB + 35 * math.log10(corner))], atol=1e-9)
    flat = base.replace(wrap_shifts_m=None)
    gain = coupling_db(with_cells_and_users(flat, cell, ["macro"], [46.0], user), model=model)
    assert gain[0, 0] == pytest.approx(-(L0_DB + 35 * math.log10(1950.0)), abs=1e-9)


def test_wrap_shifts_are_the_nine_translations_zero_first():
    net = poisson_layout(THREE_TIERS, side_m=1500.0, rng=1)
    shifts = net.wrap_shifts_m
    assert shifts.shape == (9, 2)
    np.testing.assert_array_equal(shifts[0], [0.0, 0.0])
    expected = {(a, b) for a in (-1500.0, 0.0, 1500.0) for b in (-1500.0, 0.0, 1500.0)}
    assert {tuple(s) for s in shifts.tolist()} == expected
    assert poisson_layout(THREE_TIERS, side_m=1500.0, wraparound=False, rng=1).wrap_shifts_m is None


# ---------------------------------------------------------------------- layout
@pytest.mark.slow
def test_mean_counts_are_density_times_area():
    draws = 200
    counts = np.array([
        poisson_layout(THREE_TIERS, side_m=2000.0, rng=seed).cells["tier"].value_counts()
        .reindex(["macro", "pico", "femto"], fill_value=0).to_numpy()
        for seed in range(draws)
    ])
    mean = np.array([2.0, 5.0, 10.0]) * 4.0  # per km² × 4 km²
    standard_error = np.sqrt(mean / draws)
    assert (np.abs(counts.mean(axis=0) - mean) < 4 * standard_error).all(), counts.mean(axis=0)
    # a Poisson count: variance ≈ mean (within 30 % over 200 draws)
    np.testing.assert_allclose(counts.var(axis=0, ddof=1), mean, rtol=0.3)


def test_tiers_get_their_defaults_and_overrides():
    net = poisson_layout({"macro": {"density_per_km2": 3.0},
                          "pico": {"density_per_km2": 10.0, "tx_power_dbm": 35.0},
                          "femto": {"density_per_km2": 20.0, "owner": "third_party",
                                    "antenna_gain_dbi": 2.0, "height_m": 3.0}}, rng=2)
    cells = net.cells
    by_tier = cells.groupby("tier")
    expected = {"macro": (46.0, 25.0, 0.0, "operator"), "pico": (35.0, 10.0, 0.0, "operator"),
                "femto": (20.0, 3.0, 2.0, "third_party")}
    assert set(by_tier.groups) == set(expected)
    for tier, (power, height, gain, owner) in expected.items():
        rows = cells[cells["tier"] == tier]
        assert (rows["tx_power_dbm"] == power).all() and (rows["height_m"] == height).all()
        assert (rows["antenna_gain_dbi"] == gain).all() and (rows["owner"] == owner).all()
        assert rows["azimuth_deg"].isna().all()
    # cells come in the order macro, pico, femto with ids 0..n-1
    assert list(pd.unique(cells["tier"])) == ["macro", "pico", "femto"]
    np.testing.assert_array_equal(cells["cell_id"], np.arange(len(cells)))
    assert net.bandwidth_mhz == 10.0 and net.n_users == 0


def test_three_sector_sites_share_a_site_id_and_take_the_sector_gain():
    net = poisson_layout({"macro": {"density_per_km2": 4.0, "sectors": 3},
                          "pico": {"density_per_km2": 10.0, "sectors": 3},
                          "femto": {"density_per_km2": 10.0}}, rng=6)
    cells = net.cells
    macro, pico = cells[cells["tier"] == "macro"], cells[cells["tier"] == "pico"]
    assert len(macro) % 3 == 0 and len(pico) % 3 == 0
    assert (macro["antenna_gain_dbi"] == 14.0).all() and (pico["antenna_gain_dbi"] == 0.0).all()
    for rows in (macro, pico):
        per_site = rows.groupby("site_id")
        assert (per_site.size() == 3).all()
        azimuths = np.sort(rows["azimuth_deg"].to_numpy().reshape(-1, 3), axis=1)
        assert (azimuths == [30.0, 150.0, 270.0]).all()  # rows of one site are consecutive
        xy = xy_of(rows).reshape(-1, 3, 2)
        site = rows["site_id"].to_numpy().reshape(-1, 3)
        assert (xy == xy[:, :1]).all() and (site == site[:, :1]).all()


def test_site_ids_are_distinct_across_tiers():
    net = poisson_layout(THREE_TIERS, rng=7)
    cells = net.cells
    omni = cells["azimuth_deg"].isna()
    assert cells["site_id"].is_unique and omni.all()
    assert net.cell_arrays()["site"].max() + 1 == len(cells)
    sector = poisson_layout({**THREE_TIERS, "macro": {"density_per_km2": 2.0, "sectors": 3}}, rng=7)
    sites = sector.cells.groupby("site_id")["tier"].agg(["nunique", "size"])
    assert (sites["nunique"] == 1).all()
    assert len(sites) == (sector.cells["tier"] != "macro").sum() + (sector.cells["tier"] == "macro").sum() / 3


def test_positions_lie_in_the_centred_square():
    net = poisson_layout(THREE_TIERS, side_m=1200.0, rng=8)
    x0, y0, x1, y1 = net.region.bounds
    assert (x1 - x0, y1 - y0) == (1200.0, 1200.0) and net.area_km2 == pytest.approx(1.44)
    # centred on the false origin of synthetic layouts, as hex_grid's centre site
    assert ((x0 + x1) / 2, (y0 + y1) / 2) == (500_000.0, 1_000_000.0)
    assert net.crs == synthetic_crs(DEFAULT_ORIGIN_LONLAT)  # Munich by default
    xy = xy_of(net.cells)
    assert ((xy >= [x0, y0]) & (xy <= [x1, y1])).all()
    users = drop_users(net, 100, rng=0).users
    assert ((xy_of(users) >= [x0, y0]) & (xy_of(users) <= [x1, y1])).all()


def test_same_seed_same_layout_other_seed_other_layout():
    a = poisson_layout(THREE_TIERS, rng=11)
    b = poisson_layout(THREE_TIERS, rng=np.random.default_rng(11))
    pd.testing.assert_frame_equal(pd.DataFrame(a.cells), pd.DataFrame(b.cells))
    # the order of the tiers given does not change the draws
    c = poisson_layout(dict(reversed(list(THREE_TIERS.items()))), rng=11)
    pd.testing.assert_frame_equal(pd.DataFrame(a.cells), pd.DataFrame(c.cells))
    d = poisson_layout(THREE_TIERS, rng=12)
    assert len(d.cells) != len(a.cells) or not np.array_equal(xy_of(d.cells), xy_of(a.cells))


def test_a_tier_without_cells_is_fine():
    # mean 1e-6 femtocells: the draw gives none (with probability 1 − 1e-6)
    net = poisson_layout({"macro": {"density_per_km2": 4.0}, "femto": {"density_per_km2": 2.5e-7}},
                         rng=0)
    assert set(net.cells["tier"]) == {"macro"}


def test_memory_estimate_grows_with_the_count():
    assert poisson_layout_nbytes(0) == 0.0
    assert poisson_layout_nbytes(2000) == 2 * poisson_layout_nbytes(1000) > 0
    assert poisson_layout_nbytes(math.inf) == math.inf


# ---------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "text"), [
    ({"tiers": {"macro": {"density_per_km2": 0.0}}},
     "tiers['macro'].density_per_km2=0 is outside (0, inf]"),
    ({"tiers": {"pico": {"density_per_km2": -3.0}}}, "tiers['pico'].density_per_km2=-3"),
    ({"tiers": {"femto": {"density_per_km2": float("nan")}}},
     "tiers['femto'].density_per_km2=nan is not finite"),
    ({"tiers": {"macro": {"density_per_km2": float("inf")}}}, "tiers['macro'].density_per_km2=inf"),
    ({"tiers": {"macro": {"density_per_km2": "4"}}}, "tiers['macro'].density_per_km2='4' is a str"),
    ({"tiers": {"macro": {"tx_power_dbm": 46.0}}}, "tiers['macro'] has no density_per_km2"),
    ({"tiers": {"relay": {"density_per_km2": 1.0}}}, "unknown tiers ['relay']"),
    ({"tiers": {"macro": {"density_per_km2": 1.0, "power_dbm": 46.0}}},
     "tiers['macro'] has unknown keys ['power_dbm']"),
    ({"tiers": {"macro": {"density_per_km2": 1.0, "sectors": 2}}}, "tiers['macro'].sectors=2"),
    ({"tiers": {"macro": {"density_per_km2": 1.0, "sectors": True}}}, "tiers['macro'].sectors=True"),
    ({"tiers": {"macro": {"density_per_km2": 1.0, "owner": "me"}}}, "tiers['macro'].owner='me'"),
    ({"tiers": {"macro": {"density_per_km2": 1.0, "height_m": -1.0}}}, "tiers['macro'].height_m=-1"),
    ({"tiers": {"macro": {"density_per_km2": 1.0, "tx_power_dbm": 500.0}}},
     "tiers['macro'].tx_power_dbm=500"),
    ({"tiers": {"macro": 4.0}}, "tiers['macro'] is a float"),
    ({"tiers": {}}, "tiers is empty"),
    ({"tiers": [("macro", {"density_per_km2": 1.0})]}, "tiers is a list"),
    ({"tiers": THREE_TIERS, "side_m": 0.0}, "side_m=0 is outside (0, inf]"),
    ({"tiers": THREE_TIERS, "side_m": -100.0}, "side_m=-100"),
    ({"tiers": THREE_TIERS, "side_m": float("nan")}, "side_m=nan"),
    ({"tiers": THREE_TIERS, "side_m": "2 km"}, "side_m='2 km' is a str"),
    ({"tiers": THREE_TIERS, "wraparound": "yes"}, "wraparound='yes'"),
    ({"tiers": THREE_TIERS, "bandwidth_mhz": 0.0}, "bandwidth_mhz=0"),
    ({"tiers": THREE_TIERS, "crs": "EPSG:nope"}, "crs='EPSG:nope'"),
    ({"tiers": THREE_TIERS, "rng": 1.5}, "rng=1.5"),
])
def test_bad_input_is_refused_with_the_key_and_a_fix(kwargs, text):
    with raises(ValidationError, text) as err:
        poisson_layout(**kwargs)
    assert "; fix: " in str(err.value)


def test_a_draw_without_any_cell_is_refused():
    with raises(ValidationError, "poisson_layout drew no cell") as err:
        poisson_layout({"macro": {"density_per_km2": 1e-9}}, side_m=100.0, rng=0)
    assert "fix: raise a tier's density_per_km2 or side_m" in str(err.value)


@pytest.mark.parametrize("density", [1e12, 1e300])
def test_absurd_density_is_refused_before_drawing(density):
    with raises(ResourceLimitError, "poisson_layout: about"):
        poisson_layout({"pico": {"density_per_km2": density}}, rng=0)


def test_unusual_value_warns_at_the_caller():
    with pytest.warns(UserWarning, match=r"tiers\['macro'\]\.tx_power_dbm=70") as record:
        poisson_layout({"macro": {"density_per_km2": 4.0, "tx_power_dbm": 70.0}}, rng=0)
    assert record[0].filename == __file__


def test_tier_table_power_checked_against_its_tier():
    """20 dBm is a usual power (a femto's) but not a macro's: 20 W typed as dBm."""
    with pytest.warns(UserWarning, match=r"tiers\['macro'\]\.tx_power_dbm=20 dBm is outside the "
                      r"usual range \[33, 60\] dBm of macro cells"):
        poisson_layout({"macro": {"density_per_km2": 4.0, "tx_power_dbm": 20.0}}, rng=0)
    poisson_layout({"femto": {"density_per_km2": 4.0, "tx_power_dbm": 20.0}}, rng=0)  # no warning
