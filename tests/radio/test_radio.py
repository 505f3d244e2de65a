"""Tests of cellopt.radio: path loss, noise, spectral efficiency, antennas, shadowing, SINR.

Reference values are computed by hand from TR 36.814 (path loss, antenna, noise figure)
and TR 36.942 §A.2 (truncated Shannon). All tests are deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cellopt import ValidationError, radio
from cellopt.network import Network, cells_frame, users_frame
from cellopt.radio import (
    RadioModel,
    angle_off_boresight_deg,
    coupling_db,
    free_space,
    link_table,
    sector_gain_db,
    shannon,
    shannon_gap,
    sinr_db,
    standard_normal_hash,
    thermal_noise_dbm,
    tr36814_macro,
    tr36814_pico,
    tr36942,
)
from cellopt.radio.spectral import SPECTRAL_EFFICIENCY, get_efficiency
from cellopt.topology import add_picos, drop_users, hex_grid

CRS = "EPSG:32631"
X0, Y0 = 500_000.0, 1_000_000.0  # false origin of the synthetic CRS
NO_SHADOWING = {"macro": 0.0, "pico": 0.0, "femto": 0.0}
QUIET = RadioModel(shadowing_std_db=NO_SHADOWING)


def lin(db: float | np.ndarray) -> np.ndarray:
    return 10.0 ** (np.asarray(db, float) / 10.0)


def db(x: float | np.ndarray) -> np.ndarray:
    return 10.0 * np.log10(np.asarray(x, float))


def bearing_point(d_m: float, bearing_deg: float, x0: float = X0, y0: float = Y0) -> tuple[float, float]:
    b = math.radians(bearing_deg)
    return x0 + d_m * math.sin(b), y0 + d_m * math.cos(b)


# ---------------------------------------------------------------------- path loss
def test_macro_pathloss_at_1_km_is_128_1_db():
    assert tr36814_macro(1000.0) == pytest.approx(128.1, abs=1e-12)


def test_macro_pathloss_at_500_m():
    exact = 128.1 + 37.6 * math.log10(0.5)
    assert tr36814_macro(500.0) == pytest.approx(exact, abs=1e-12)
    assert tr36814_macro(500.0) == pytest.approx(116.78, abs=0.01)


def test_macro_pathloss_slope_is_37_6_db_per_decade_and_keeps_shape():
    d = np.array([[50.0, 100.0], [1000.0, 10_000.0]])
    pl = tr36814_macro(d)
    assert pl.shape == d.shape
    assert pl[1, 1] - pl[1, 0] == pytest.approx(37.6, abs=1e-12)
    assert pl[0, 1] - pl[0, 0] == pytest.approx(37.6 * math.log10(2.0), abs=1e-12)


def test_pico_pathloss_at_100_m_is_104_db():
    assert tr36814_pico(100.0) == pytest.approx(104.0, abs=1e-12)
    assert tr36814_pico(1000.0) == pytest.approx(140.7, abs=1e-12)


def test_free_space_at_1_km_and_2_ghz():
    exact = 20 * math.log10(1000.0) + 20 * math.log10(2000.0) - 27.55
    assert free_space(1000.0) == pytest.approx(exact, abs=1e-12)
    assert free_space(1000.0) == pytest.approx(98.47, abs=0.01)  # 60 + 66.02 − 27.55
    # 6 dB per doubling of distance or of frequency
    assert free_space(2000.0) - free_space(1000.0) == pytest.approx(20 * math.log10(2), abs=1e-12)
    assert free_space(1000.0, 4000.0) - free_space(1000.0) == pytest.approx(
        20 * math.log10(2), abs=1e-12
    )


# ---------------------------------------------------------------------- noise
def test_thermal_noise_over_10_mhz_with_9_db_noise_figure():
    assert thermal_noise_dbm(10.0) == pytest.approx(-95.0, abs=1e-12)


def test_thermal_noise_scales_with_bandwidth_and_noise_figure():
    widths = np.array([1.0, 2.5, 10.0, 20.0])
    noise = thermal_noise_dbm(widths)
    assert noise.shape == widths.shape
    np.testing.assert_allclose(noise, -95.0 + 10 * np.log10(widths / 10.0), atol=1e-12)
    assert thermal_noise_dbm(10.0, noise_figure_db=7.0) == pytest.approx(-97.0, abs=1e-12)


# ---------------------------------------------------------------------- spectral efficiency
def test_nr_mcs_tables_are_those_of_ts_38214():
    """Rows typed from TS 38.214 Tables 5.1.3.1-1/-2/-3 (Q_m, R × 1024), and the sizes."""
    from cellopt.radio.spectral import NR_MCS_TABLES
    rows = {"64qam": {0: (2, 120), 9: (2, 679), 10: (4, 340), 16: (4, 658), 17: (6, 438),
                      27: (6, 910), 28: (6, 948)},
            "256qam": {0: (2, 120), 4: (2, 602), 5: (4, 378), 11: (6, 466), 19: (6, 873),
                       20: (8, 682.5), 26: (8, 916.5), 27: (8, 948)},
            "low_se": {0: (2, 30), 5: (2, 99), 14: (2, 602), 15: (4, 340), 21: (6, 438),
                       28: (6, 772)}}
    sizes = {"64qam": 29, "256qam": 28, "low_se": 29}
    for name, expected in rows.items():
        qm, rate = NR_MCS_TABLES[name]
        assert len(qm) == len(rate) == sizes[name]
        for index, (q, r) in expected.items():
            assert (qm[index], rate[index]) == (q, r), (name, index)


def test_nr_mcs_hand_values():
    """By hand: 64QAM MCS 27 (Q_m 6, R 910/1024: 5.33203 bit/s/Hz) is used from
    3 dB + 10 log10(2^5.33203 − 1) = 18.9418 dB, and gives 0.86 × 5.33203 = 4.58555; just
    below, MCS 26 (873/1024: 5.11523 → 4.39910); below MCS 0 (−4.5351 dB) nothing; at 40 dB
    the top MCS 28 (5.55469 → 4.77703), or 256QAM's MCS 27 (7.40625 → 6.36938)."""
    from cellopt.radio.spectral import nr_mcs, nr_mcs_thresholds_db
    at27 = 3.0 + 10 * math.log10(2 ** (6 * 910 / 1024) - 1)
    assert at27 == pytest.approx(18.94184, abs=1e-5)
    assert nr_mcs_thresholds_db("64qam")[27] == pytest.approx(at27, abs=1e-12)
    assert float(nr_mcs(lin(at27))) == pytest.approx(0.86 * 6 * 910 / 1024, abs=1e-12)
    assert float(nr_mcs(lin(at27 - 1e-9))) == pytest.approx(0.86 * 6 * 873 / 1024, abs=1e-12)
    assert float(nr_mcs(lin(-4.6))) == 0.0
    assert float(nr_mcs(lin(-4.5))) == pytest.approx(0.86 * 2 * 120 / 1024, abs=1e-12)
    assert float(nr_mcs(lin(40.0))) == pytest.approx(0.86 * 6 * 948 / 1024, abs=1e-12)
    assert float(nr_mcs(lin(40.0), "256qam")) == pytest.approx(0.86 * 8 * 948 / 1024,
                                                               abs=1e-12)
    # No gap and no overhead: MCS 0 of the low-SE table from 2^(60/1024) − 1 exactly.
    start = 2 ** (2 * 30 / 1024) - 1
    assert float(nr_mcs(start, "low_se", gap_db=0.0, overhead=0.0)) == pytest.approx(
        2 * 30 / 1024, abs=1e-15)
    assert float(nr_mcs(start * (1 - 1e-12), "low_se", gap_db=0.0, overhead=0.0)) == 0.0


def test_nr_mcs_is_non_decreasing_where_modulation_orders_overlap():
    """64QAM MCS 17 (2.5664 bit/s/Hz) carries less than 16QAM MCS 16 (2.5703), so it is
    the one used between their thresholds and MCS 16 above: the mapping never falls."""
    from cellopt.radio.spectral import nr_mcs, nr_mcs_thresholds_db
    sinr = lin(np.linspace(-10.0, 40.0, 20001))
    for table in ("64qam", "256qam", "low_se"):
        eff = nr_mcs(sinr, table, overhead=0.0)
        assert (np.diff(eff) >= 0).all(), table
    t16, t17 = nr_mcs_thresholds_db("64qam")[[16, 17]]
    assert t17 < t16
    between = lin(0.5 * (t16 + t17))
    assert float(nr_mcs(between, overhead=0.0)) == pytest.approx(6 * 438 / 1024, abs=1e-15)
    assert float(nr_mcs(lin(t16), overhead=0.0)) == pytest.approx(4 * 658 / 1024, abs=1e-15)
    assert nr_mcs(sinr[:6].reshape(2, 3), "64qam").shape == (2, 3)
    assert np.isnan(nr_mcs(np.nan))                   # as log2(1 + NaN): not the top MCS


def test_nr_mcs_refuses_bad_options():
    from cellopt.radio.spectral import nr_mcs
    with pytest.raises(ValidationError, match="unknown NR MCS table 'qam64'"):
        nr_mcs(1.0, "qam64")
    with pytest.raises(ValidationError, match="overhead"):
        nr_mcs(1.0, overhead=1.0)


def test_nr_mcs_names_work_in_a_radio_model():
    """The named mappings are a RadioModel's spectral_efficiency (and a scenario's)."""
    model = RadioModel(spectral_efficiency="nr_256qam", shadowing_std_db=NO_SHADOWING)
    assert set(SPECTRAL_EFFICIENCY) >= {"nr_64qam", "nr_256qam", "nr_low_se"}
    eff = get_efficiency(model.spectral_efficiency)
    assert float(eff(lin(40.0))) == pytest.approx(0.86 * 8 * 948 / 1024, abs=1e-12)


def test_tr36942_hand_values():
    assert tr36942(lin(0.0)) == pytest.approx(0.6, abs=1e-12)
    assert round(float(tr36942(lin(10.0))), 4) == 2.0757
    assert tr36942(lin(10.0)) == pytest.approx(0.6 * math.log2(11.0), abs=1e-12)
    assert tr36942(lin(30.0)) == pytest.approx(4.4, abs=1e-12)  # 0.6 log2(1001) = 5.98 → cap
    assert tr36942(lin(-11.0)) == 0.0


def test_tr36942_boundary_at_minus_10_db_is_included():
    at = tr36942(lin(-10.0))
    assert at > 0
    assert at == pytest.approx(0.6 * math.log2(1.1), abs=1e-12)
    assert tr36942(lin(-10.0) * (1 - 1e-9)) == 0.0


def test_tr36942_is_monotone_and_capped():
    g = lin(np.linspace(-20, 40, 601))
    eff = tr36942(g)
    assert eff.shape == g.shape
    assert np.all(np.diff(eff) >= 0)
    assert eff.max() == pytest.approx(4.4)
    assert np.all(eff <= 0.6 * np.log2(1 + g) + 1e-15)


def test_shannon():
    np.testing.assert_allclose(shannon(np.array([0.0, 1.0, 3.0, 15.0])), [0.0, 1.0, 2.0, 4.0])


def test_shannon_gap_zero_gap_is_shannon_and_3_db_gap():
    g = lin(np.linspace(-10, 30, 41))
    np.testing.assert_allclose(shannon_gap(g, gap_db=0.0), shannon(g), rtol=0, atol=1e-12)
    np.testing.assert_allclose(shannon_gap(g, gap_db=3.0), np.log2(1 + g / 10**0.3), atol=1e-12)
    assert np.all(shannon_gap(g, gap_db=3.0) < shannon(g))


def test_shannon_gap_cap():
    assert shannon_gap(1000.0, gap_db=0.0, max_bps_hz=5.0) == 5.0
    assert shannon_gap(1.0, gap_db=0.0, max_bps_hz=5.0) == pytest.approx(1.0)


def test_get_efficiency_names_and_callables():
    for name, func in SPECTRAL_EFFICIENCY.items():
        assert get_efficiency(name) is func

    def mine(g):
        return g

    assert get_efficiency(mine) is mine


def test_get_efficiency_unknown_name_lists_valid_ones():
    with pytest.raises(ValueError, match="nope") as info:
        get_efficiency("nope")
    for name in ("shannon", "shannon_gap", "tr36942"):
        assert name in str(info.value)


# ---------------------------------------------------------------------- antenna
def test_sector_gain_hand_values():
    assert sector_gain_db(0.0) == 0.0
    assert sector_gain_db(35.0) == pytest.approx(-3.0, abs=1e-12)  # 12 · 0.5² = 3
    assert sector_gain_db(70.0) == pytest.approx(-12.0, abs=1e-12)
    # 12 (90/70)² = 19.84 dB: the 25 dB floor is reached only at 70·sqrt(25/12) ≈ 101°
    assert sector_gain_db(90.0) == pytest.approx(-12.0 * (90 / 70) ** 2, abs=1e-12)
    onset = 70.0 * math.sqrt(25.0 / 12.0)
    assert sector_gain_db(onset) == pytest.approx(-25.0, abs=1e-9)
    for angle in (onset + 1, 120.0, 180.0):
        assert sector_gain_db(angle) == -25.0


def test_sector_gain_is_symmetric_and_keeps_shape():
    a = np.linspace(0, 180, 37).reshape(37, 1)
    np.testing.assert_array_equal(sector_gain_db(a), sector_gain_db(-a))
    assert sector_gain_db(a).shape == a.shape
    assert np.all(sector_gain_db(a) <= 0)
    assert sector_gain_db(30.0, theta_3db_deg=60.0, max_attenuation_db=20.0) == pytest.approx(-3.0)


def test_angle_off_boresight_wraps():
    assert angle_off_boresight_deg(350.0, 10.0) == pytest.approx(-20.0)
    assert angle_off_boresight_deg(10.0, 350.0) == pytest.approx(20.0)
    assert angle_off_boresight_deg(90.0, 30.0) == pytest.approx(60.0)
    assert angle_off_boresight_deg(180.0, 0.0) == pytest.approx(-180.0)  # range [−180, 180)
    out = angle_off_boresight_deg(np.arange(-720.0, 720.0, 7.5), 123.0)
    assert np.all((out >= -180) & (out < 180))
    np.testing.assert_allclose(np.cos(np.radians(out)),
                               np.cos(np.radians(np.arange(-720.0, 720.0, 7.5) - 123.0)), atol=1e-12)


# ---------------------------------------------------------------------- shadowing
USERS = np.arange(1000)[:, None]
SITES = np.arange(1000)[None, :]
N = USERS.size * SITES.size


def test_shadowing_is_deterministic_and_broadcasts():
    a = standard_normal_hash(11, USERS[:50], SITES[:, :40])
    b = standard_normal_hash(11, USERS[:50], SITES[:, :40])
    assert a.shape == (50, 40) and a.dtype == np.float64
    np.testing.assert_array_equal(a, b)
    assert standard_normal_hash(11, 17, 23) == a[17, 23]
    # a user's value does not depend on which other users are in the block
    np.testing.assert_array_equal(standard_normal_hash(11, np.array([[17]]), SITES[:, :40])[0], a[17])


def test_shadowing_mean_and_std():
    z = standard_normal_hash(7, USERS, SITES).ravel()
    assert abs(z.mean()) < 5 / math.sqrt(N)
    assert abs(z.std() - 1.0) < 5 / math.sqrt(2 * N)
    assert np.isfinite(z).all()


def test_shadowing_ks_test():
    z = standard_normal_hash(7, USERS, SITES).ravel()
    assert stats.kstest(z, "norm").pvalue > 1e-3


def test_shadowing_different_seeds_are_uncorrelated():
    a = standard_normal_hash(1, USERS, SITES).ravel()
    b = standard_normal_hash(2, USERS, SITES).ravel()
    assert not np.array_equal(a, b)
    assert abs(np.corrcoef(a, b)[0, 1]) < 5 / math.sqrt(N)


def test_shadowing_neighbouring_users_and_sites_are_uncorrelated():
    z = standard_normal_hash(3, USERS, SITES)
    n = z[:, 1:].size
    assert abs(np.corrcoef(z[:, 1:].ravel(), z[:, :-1].ravel())[0, 1]) < 5 / math.sqrt(n)
    assert abs(np.corrcoef(z[1:].ravel(), z[:-1].ravel())[0, 1]) < 5 / math.sqrt(n)


def test_shadowing_has_no_extreme_values_for_seed_0():
    # For N(0, 1), P(|Z| > 6) ≈ 2e-9: among 1e6 samples a value beyond 6 is a ~0.2 % event.
    # Seed 0 is the most common seed (rng=0) and (user 0, site 0) the most common key.
    z = standard_normal_hash(0, USERS, SITES)
    where = tuple(int(i) for i in np.unravel_index(np.abs(z).argmax(), z.shape))
    worst = float(np.abs(z).max())
    # (the largest value the 32-bit Box–Muller can return is sqrt(64 ln 2) ≈ 6.66: a hash of 0)
    assert worst < 6.0, f"|z| = {worst:.3f} at (user, site) = {where}"


# ---------------------------------------------------------------------- a hand-computed SINR
def two_cell_network(user_xy: list[tuple[float, float]], indoor=False) -> Network:
    """Omni macros (46 dBm, 14 dBi) at (0, 0) and (1000, 0) m from the false origin."""
    cells = cells_frame([X0, X0 + 1000.0], [Y0, Y0], crs=CRS, tier="macro", tx_power_dbm=46.0,
                        antenna_gain_dbi=14.0, azimuth_deg=np.nan, height_m=25.0)
    xy = np.asarray(user_xy, float)
    users = users_frame(xy[:, 0], xy[:, 1], crs=CRS, indoor=indoor)
    return Network(cells=cells, users=users, bandwidth_mhz=10.0).validate()


def test_hand_computed_sinr_rsrp_and_rate():
    net = two_cell_network([(X0 + 250.0, Y0)])
    pl1 = 128.1 + 37.6 * math.log10(0.25)
    pl2 = 128.1 + 37.6 * math.log10(0.75)
    rx1, rx2 = 46 + 14 - pl1, 46 + 14 - pl2  # dBm
    noise = -174 + 10 * math.log10(10e6) + 9
    assert noise == pytest.approx(-95.0)
    sinr1 = rx1 - db(lin(rx2) + lin(noise))
    sinr2 = rx2 - db(lin(rx1) + lin(noise))
    # RSRP per resource element: LTE 10 MHz has 50 RB × 12 = 600 subcarriers (TS 36.101
    # Table 5.6-1), RSRP = P − 10 log10(600) + g (TS 36.214 §5.1.1)
    rsrp_off = 46 - 10 * math.log10(600)

    lt = link_table(net, n_candidates=2, model=QUIET)
    np.testing.assert_array_equal(lt.user, [0, 0])
    np.testing.assert_array_equal(lt.cell, [0, 1])
    np.testing.assert_array_equal(lt.resource, [0, 0])
    np.testing.assert_allclose(lt.sinr_db, [sinr1, sinr2], rtol=0, atol=1e-9)
    np.testing.assert_allclose(lt.rsrp_dbm, [rsrp_off + 14 - pl1, rsrp_off + 14 - pl2], rtol=0, atol=1e-9)
    rates = [10.0 * 0.6 * math.log2(1 + lin(sinr1)), 0.0]  # sinr2 ≈ −17.9 dB < −10 dB → 0
    assert sinr2 < -10
    np.testing.assert_allclose(lt.rate_mbps, rates, rtol=0, atol=1e-9)

    g = coupling_db(net, model=QUIET)
    np.testing.assert_allclose(g, [[14 - pl1, 14 - pl2]], rtol=0, atol=1e-9)
    dense = sinr_db(g, np.array([46.0, 46.0]), noise)
    assert dense.shape == (1, 2, 1)
    np.testing.assert_allclose(dense[0, :, 0], lt.sinr_db, rtol=0, atol=1e-9)


def test_shannon_efficiency_in_the_link_table():
    net = two_cell_network([(X0 + 250.0, Y0), (X0 + 600.0, Y0)])
    model = RadioModel(shadowing_std_db=NO_SHADOWING, spectral_efficiency="shannon")
    lt = link_table(net, n_candidates=2, model=model)
    np.testing.assert_allclose(lt.rate_mbps, 10.0 * np.log2(1 + lin(lt.sinr_db)), rtol=1e-12)
    assert np.all(lt.rate_mbps > 0)


def test_indoor_user_loses_exactly_the_wall_loss():
    net = two_cell_network([(X0 + 250.0, Y0), (X0 + 250.0, Y0)], indoor=np.array([False, True]))
    g = coupling_db(net, model=QUIET)
    np.testing.assert_allclose(g[0] - g[1], [20.0, 20.0], rtol=0, atol=1e-12)
    g15 = coupling_db(net, model=RadioModel(shadowing_std_db=NO_SHADOWING, wall_loss_db=15.0))
    np.testing.assert_allclose(g15[0] - g15[1], [15.0, 15.0], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(g15[0], g[0])  # outdoor user unaffected


def test_wall_loss_per_tier():
    net = add_picos(hex_grid(1, wraparound=False), per_sector=1, rng=0)
    pt = net.cells[net.cells["tier"] == "pico"].geometry.iloc[0]
    users = users_frame([pt.x + 30.0, pt.x + 30.0], [pt.y, pt.y], crs=net.crs,
                        indoor=np.array([False, True]))
    net = net.replace(users=users)
    model = RadioModel(shadowing_std_db=NO_SHADOWING,
                       wall_loss_db={"macro": 12.0, "pico": 7.0, "femto": 3.0})
    g = coupling_db(net, model=model)
    expected = np.where(net.cells["tier"].to_numpy() == "macro", 12.0, 7.0)
    np.testing.assert_allclose(g[0] - g[1], expected, rtol=0, atol=1e-12)
    with pytest.raises(ValidationError, match="femto"):
        coupling_db(net, model=RadioModel(wall_loss_db={"macro": 12.0, "pico": 7.0}))


def test_indoor_femtocell_walls_by_hand():
    """A femtocell (20 dBm, 0 dBi) 500 m from an omni macro; its building is the 15 m disc
    around it. Walls crossed: outdoor user 1, indoor user in another building 2, indoor
    user in the femtocell's building 0; to the macro, 1 for indoor users only."""
    cells = cells_frame([X0, X0 + 500.0], [Y0, Y0], crs=CRS, tier=np.array(["macro", "femto"]),
                        tx_power_dbm=np.array([46.0, 20.0]),
                        antenna_gain_dbi=np.array([14.0, 0.0]))
    offsets = [(40.0, False), (40.0, True), (12.0, True), (12.0, False)]
    users = users_frame([X0 + 500.0 + d for d, _ in offsets], [Y0] * 4, crs=CRS,
                        indoor=np.array([i for _, i in offsets]))
    net = Network(cells=cells, users=users).validate()
    g = coupling_db(net, model=QUIET)
    pl_femto = [140.7 + 36.7 * math.log10(d / 1000) for d, _ in offsets]
    np.testing.assert_allclose(g[:, 1], -np.array(pl_femto) - 20.0 * np.array([1, 2, 0, 1]),
                               rtol=0, atol=1e-9)
    pl_macro = [128.1 + 37.6 * math.log10((500 + d) / 1000) for d, _ in offsets]
    np.testing.assert_allclose(g[:, 0], 14 - np.array(pl_macro) - 20.0 * np.array([0, 1, 1, 0]),
                               rtol=0, atol=1e-9)
    # Femtocells treated as outdoor cells: only the users' walls remain.
    outdoor = coupling_db(net, model=RadioModel(shadowing_std_db=NO_SHADOWING, indoor_tiers=()))
    np.testing.assert_allclose(outdoor[:, 1], -np.array(pl_femto) - 20.0 * np.array([0, 1, 1, 0]),
                               rtol=0, atol=1e-9)
    # A larger building takes in the user at 40 m too.
    wide = coupling_db(net, model=RadioModel(shadowing_std_db=NO_SHADOWING, building_radius_m=50))
    assert wide[1, 1] == pytest.approx(-pl_femto[1], abs=1e-9)


@pytest.mark.parametrize("bad", [{"indoor_tiers": ("attic",)}, {"building_radius_m": -1.0},
                                 {"building_radius_m": float("nan")}])
def test_bad_indoor_model(bad):
    with pytest.raises(ValidationError, match=next(iter(bad))):
        RadioModel(**bad)


def test_minimum_distance_applies_per_tier():
    net = two_cell_network([(X0 + 5.0, Y0), (X0 + 35.0, Y0), (X0 + 100.0, Y0)])
    g = coupling_db(net, model=QUIET)
    assert g[0, 0] == pytest.approx(14 - tr36814_macro(35.0), abs=1e-12)
    assert g[0, 0] == g[1, 0]
    assert g[2, 0] == pytest.approx(14 - tr36814_macro(100.0), abs=1e-12)
    model = RadioModel(shadowing_std_db=NO_SHADOWING,
                       min_distance_m={"macro": 50.0, "pico": 10.0, "femto": 10.0})
    assert coupling_db(net, model=model)[1, 0] == pytest.approx(14 - tr36814_macro(50.0), abs=1e-12)


def test_pico_pathloss_and_minimum_distance_in_the_coupling():
    cells = cells_frame([X0], [Y0], crs=CRS, tier="pico", tx_power_dbm=30.0, antenna_gain_dbi=5.0)
    users = users_frame([X0 + 2.0, X0 + 100.0], [Y0, Y0], crs=CRS)
    g = coupling_db(Network(cells=cells, users=users), model=QUIET)
    np.testing.assert_allclose(g[:, 0], [5 - tr36814_pico(10.0), 5 - 104.0], rtol=0, atol=1e-12)


# ---------------------------------------------------------------------- 3-sector antenna in the link
def one_site_users(bearings: list[float], d_m: float = 200.0) -> Network:
    net = hex_grid(n_rings=0, wraparound=False)
    assert net.n_cells == 3 and net.wrap_shifts_m is None
    np.testing.assert_array_equal(net.cells["azimuth_deg"], [30.0, 150.0, 270.0])
    site = net.cells.geometry.iloc[0]
    xy = np.array([bearing_point(d_m, b, site.x, site.y) for b in bearings])
    return net.replace(users=users_frame(xy[:, 0], xy[:, 1], crs=net.crs))


def test_sector_antenna_in_the_coupling():
    net = one_site_users([30.0, 120.0, 210.0, 0.0])
    g = coupling_db(net, model=QUIET)
    full = 14.0 - tr36814_macro(200.0)
    # user on the boresight of sector 0 (30°): full gain; the others are 120° off → floor
    np.testing.assert_allclose(g[0], [full, full - 25.0, full - 25.0], atol=1e-9)
    # user at 120°: 90° off sector 0, 30° off sector 1, 150° off sector 2
    np.testing.assert_allclose(g[1], full + sector_gain_db(np.array([90.0, 30.0, 150.0])), atol=1e-9)
    assert g[1, 0] - full == pytest.approx(-12 * (90 / 70) ** 2, abs=1e-9)
    # user at 210°: behind sector 0 → −25 dB relative
    assert g[2, 0] - full == pytest.approx(-25.0, abs=1e-9)
    # user at 0°: 30° off sector 0, 90° off sector 2 (270° boresight)
    np.testing.assert_allclose(g[3], full + sector_gain_db(np.array([-30.0, 150.0, 90.0])), atol=1e-9)


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
def test_sectors_of_one_site_share_the_shadowing_and_sites_correlate_at_rho(rho):
    net = drop_users(hex_grid(2), 400, rng=5)
    model = RadioModel(site_correlation=rho)
    on = coupling_db(net, model=model, rng=9)
    off = coupling_db(net, model=QUIET, rng=9)
    shadow = off - on  # (U, 57): S of the cell's site (antenna, path loss cancel)
    by_site = shadow.reshape(net.n_users, 19, 3)
    np.testing.assert_allclose(by_site, np.repeat(by_site[:, :, :1], 3, axis=2), atol=1e-9)
    # the site-specific parts b_us = (S − √ρ·σ a_u)/√(1−ρ): independent N(0, 8²) values
    s = by_site[:, :, 0]
    own = s.mean(axis=1, keepdims=True)  # ≈ √ρ σ a_u (+ the mean of 19 site terms)
    pair = (s - own).ravel() / math.sqrt((1 - rho) * 18 / 19)
    assert abs(pair.mean()) < 5 * 8 / math.sqrt(pair.size)
    assert abs(pair.std() - 8.0) < 5 * 8 / math.sqrt(2 * pair.size)
    # marginal σ = 8 dB whatever ρ (sampling error driven by the users' shared terms)
    assert abs(s.std() - 8.0) < 5 * 8 / math.sqrt(2 * net.n_users)
    # between two sites, correlation ρ (TR 36.814: 0.5)
    r = np.corrcoef(s[:, 0], s[:, 1])[0, 1]
    assert abs(r - rho) < 5 / math.sqrt(net.n_users)


def test_pico_shadowing_std_is_10_db():
    net = drop_users(add_picos(hex_grid(1), rng=2), 300, rng=3)
    pico = (net.cells["tier"] == "pico").to_numpy()
    independent = RadioModel(site_correlation=0.0)
    s = (coupling_db(net, model=QUIET, rng=4) - coupling_db(net, model=independent, rng=4))
    s = s[:, pico].ravel()
    assert abs(s.std() - 10.0) < 5 * 10 / math.sqrt(2 * s.size)


def test_same_seed_same_coupling_and_generator_seeds():
    net = drop_users(hex_grid(1), 50, rng=1)
    np.testing.assert_array_equal(coupling_db(net, rng=3), coupling_db(net, rng=3))
    assert not np.array_equal(coupling_db(net, rng=3), coupling_db(net, rng=4))
    np.testing.assert_array_equal(coupling_db(net, rng=np.random.default_rng(8)),
                                  coupling_db(net, rng=np.random.default_rng(8)))
    with pytest.raises(ValidationError):
        coupling_db(net, rng=-1)


def test_coupling_for_a_subset_of_users():
    net = drop_users(hex_grid(1), 30, rng=1)
    full = coupling_db(net, rng=2)
    np.testing.assert_array_equal(coupling_db(net, rng=2, users=np.array([4, 17])), full[[4, 17]])


def test_radio_model_missing_tier_raises():
    net = two_cell_network([(X0 + 250.0, Y0)])
    with pytest.raises(ValidationError, match="pico"):
        coupling_db(net, model=RadioModel(shadowing_std_db={"macro": 0.0, "femto": 0.0}))
    with pytest.raises(ValidationError, match="macro"):
        coupling_db(net, model=RadioModel(pathloss={"pico": tr36814_pico}))


def test_dense_sinr_with_a_cell_off():
    g = np.array([[-80.0, -90.0, -100.0]])
    p = np.array([[40.0], [-np.inf], [40.0]])
    out = sinr_db(g, p, -95.0)
    assert out[0, 1, 0] == -np.inf
    expected = -80 + 40 - db(lin(-100 + 40) + lin(-95.0))
    assert out[0, 0, 0] == pytest.approx(expected, abs=1e-9)
    assert radio.sinr_db(g, p[:, 0], -95.0).shape == (1, 3, 1)


# ---------------------------------------------------------------------- parameter checks
def test_unknown_efficiency_is_a_validation_error():
    with pytest.raises(ValidationError, match="unknown spectral efficiency 'nope'"):
        get_efficiency("nope")
    with pytest.raises(ValidationError, match=r"RadioModel\.spectral_efficiency='nope'"):
        RadioModel(spectral_efficiency="nope")


def test_radio_model_takes_a_lone_indoor_tier_and_scalar_tier_values():
    model = RadioModel(indoor_tiers="femto", shadowing_std_db=6.0, min_distance_m=20.0)
    assert model.indoor_tiers == ("femto",)
    np.testing.assert_array_equal(model.per_tier("shadowing_std_db"), [6.0, 6.0, 6.0])


@pytest.mark.parametrize("fields", [{"noise_figure_db": 1e4}, {"wall_loss_db": {"macro": 20.0, "pico": -1.0}},
                                    {"min_distance_m": 1e-300}, {"shadowing_std_db": np.inf}])
def test_values_that_would_overflow_the_link_table_are_refused(fields):
    with pytest.raises(ValidationError, match=f"RadioModel.{next(iter(fields))}"):
        RadioModel(**fields)


def test_thermal_noise_refuses_nan_and_zero_bandwidth():
    with pytest.raises(ValidationError, match="noise_figure_db=nan"):
        thermal_noise_dbm(10.0, np.nan)
    with pytest.raises(ValidationError, match="bandwidth_mhz"):
        thermal_noise_dbm(np.array([5.0, 0.0]))


def test_free_space_frequency_in_ghz_warns_and_in_hz_raises():
    with pytest.warns(UserWarning, match="frequency_mhz=2 MHz"):
        free_space(1000.0, 2.0)
    with pytest.raises(ValidationError, match="2 GHz = 2000 MHz"):
        free_space(1000.0, 2e9)
