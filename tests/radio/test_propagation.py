"""The 3GPP 3-D models inside the radio model: hand-computed links, the per-user and
per-site draws, the link table's paths, and scenario files that set them."""

from __future__ import annotations

import math
import textwrap
import warnings

import numpy as np
import pytest

from cellopt import ValidationError, radio
from cellopt.network import Network, cells_frame, users_frame
from cellopt.radio import RadioModel, ThreeGPP, coupling_db, link_table, tr36814_pico, tr38901
from cellopt.study.scenario import load_scenario
from cellopt.topology import drop_users, hex_grid

X0, Y0 = 500_000.0, 1_000_000.0  # false origin of the synthetic CRS
CRS = "EPSG:32631"


def model_3gpp(scenario: str, frequency_ghz: float = 3.5, **options) -> RadioModel:
    """Macros follow `scenario`; the other tiers keep TR 36.814 (unused here)."""
    antenna = options.pop("antenna", "tr36814")
    return RadioModel(pathloss={"macro": ThreeGPP(scenario, frequency_ghz, **options),
                                "pico": tr36814_pico, "femto": tr36814_pico},
                      antenna=antenna, site_correlation=0.0)


def one_cell(user_xy, *, height_m=10.0, azimuth_deg=np.nan, indoor=False, **antenna) -> Network:
    cells = cells_frame([X0], [Y0], crs=CRS, tier="macro", tx_power_dbm=40.0,
                        antenna_gain_dbi=8.0, azimuth_deg=azimuth_deg, height_m=height_m,
                        **antenna)
    xy = np.asarray(user_xy, float)
    users = users_frame(X0 + xy[:, 0], Y0 + xy[:, 1], crs=CRS, indoor=indoor)
    return Network(cells=cells, users=users, bandwidth_mhz=20.0).validate()


# ------------------------------------------------------------------ hand-computed links
def test_umi_los_link_by_hand():
    net = one_cell([(100.0, 0.0), (300.0, 0.0)])
    gain = coupling_db(net, model=model_3gpp("umi", los="los", shadowing=False), rng=1)
    # TR 38.901 Table 7.4.1-1, UMi LOS: d'_BP = 4 (10 − 1)(1.5 − 1) 3.5e9 / 3e8 = 210 m
    d3_near = math.hypot(100.0, 8.5)
    near = 32.4 + 21 * math.log10(d3_near) + 20 * math.log10(3.5)
    d3_far = math.hypot(300.0, 8.5)  # beyond the breakpoint: PL2
    far = (32.4 + 40 * math.log10(d3_far) + 20 * math.log10(3.5)
           - 9.5 * math.log10(210.0**2 + (10.0 - 1.5) ** 2))
    np.testing.assert_allclose(gain[:, 0], [8.0 - near, 8.0 - far], rtol=0, atol=1e-9)


def test_uma_nlos_link_by_hand():
    net = one_cell([(0.0, 400.0)], height_m=25.0)
    gain = coupling_db(net, model=model_3gpp("uma", 6.0, los="nlos", shadowing=False), rng=1)
    d3 = math.hypot(400.0, 23.5)
    # TR 38.901 Table 7.4.1-1, UMa NLOS: max(PL_LOS, PL'_NLOS); PL'_NLOS here
    nlos = 13.54 + 39.08 * math.log10(d3) + 20 * math.log10(6.0) - 0.6 * (1.5 - 1.5)
    assert gain[0, 0] == pytest.approx(8.0 - nlos, abs=1e-9)
    los = tr38901.pathloss_db("uma", 400.0, d3, 25.0, 1.5, 6.0, True)
    assert nlos > los  # the NLOS branch is the one the max picks


def umi_by_hand(d2d: float, h_bs: float = 10.0, h_ut: float = 1.5, f: float = 3.5) -> tuple:
    """TR 38.901 Table 7.4.1-1 UMi-Street Canyon LOS and NLOS losses, Table 7.4.2-1 p_LOS."""
    d3 = math.hypot(d2d, h_bs - h_ut)
    d_bp = 4 * (h_bs - 1) * (h_ut - 1) * f * 1e9 / 3e8
    if d2d <= d_bp:
        los = 32.4 + 21 * math.log10(d3) + 20 * math.log10(f)
    else:
        los = (32.4 + 40 * math.log10(d3) + 20 * math.log10(f)
               - 9.5 * math.log10(d_bp**2 + (h_bs - h_ut) ** 2))
    nlos = max(los, 35.3 * math.log10(d3) + 22.4 + 21.3 * math.log10(f) - 0.3 * (h_ut - 1.5))
    p = 1.0 if d2d <= 18 else 18 / d2d + math.exp(-d2d / 36) * (1 - 18 / d2d)
    return los, nlos, p


def test_expected_los_mode_is_the_mean_received_power_by_hand():
    net = one_cell([(100.0, 0.0), (300.0, 0.0)])
    gain = coupling_db(net, model=model_3gpp("umi", los="expected", shadowing=False), rng=1)
    for row, d in enumerate((100.0, 300.0)):
        los, nlos, p = umi_by_hand(d)
        loss = -10 * math.log10(p * 10 ** (-los / 10) + (1 - p) * 10 ** (-nlos / 10))
        assert gain[row, 0] == pytest.approx(8.0 - loss, abs=1e-9)
        assert los < loss < nlos
    # p = 1 within 18 m: the LOS loss
    near = ThreeGPP("umi", 3.5, los="expected", shadowing=False).expected_loss_db(
        np.array([12.0]), np.array([math.hypot(12.0, 8.5)]), 10.0, 1.5)
    assert near[0] == pytest.approx(umi_by_hand(12.0)[0], abs=1e-9)
    # no random term: another seed gives the same gains
    again = coupling_db(net, model=model_3gpp("umi", los="expected", shadowing=False), rng=99)
    np.testing.assert_array_equal(gain, again)


def test_expected_uma_loss_by_hand_at_street_level():
    net = one_cell([(0.0, 250.0)], height_m=25.0)
    gain = coupling_db(net, model=model_3gpp("uma", 3.5, los="expected", shadowing=False), rng=1)
    d2, d3, f = 250.0, math.hypot(250.0, 23.5), 3.5
    d_bp = 4 * 24 * 0.5 * f * 1e9 / 3e8  # h_E = 1 m below 13 m: 280 m
    assert d2 <= d_bp
    los = 28.0 + 22 * math.log10(d3) + 20 * math.log10(f)
    nlos = max(los, 13.54 + 39.08 * math.log10(d3) + 20 * math.log10(f))
    p = 18 / d2 + math.exp(-d2 / 63) * (1 - 18 / d2)  # C'(1.5 m) = 0
    loss = -10 * math.log10(p * 10 ** (-los / 10) + (1 - p) * 10 ** (-nlos / 10))
    assert gain[0, 0] == pytest.approx(8.0 - loss, abs=1e-9)


def test_expected_uma_loss_of_tall_users_averages_the_effective_height():
    """Above 13 m, h_E is random too: the mean over the pmf equals the mean over the draws
    of uma_effective_height_m on a fine grid of uniforms."""
    model = ThreeGPP("uma", 3.5, user_height_m=19.5, los="expected", shadowing=False)
    d2 = np.array([60.0, 150.0, 400.0])
    d3 = np.hypot(d2, 25.0 - 19.5)
    heights, probs = tr38901.uma_effective_height_pmf(d2, 19.5)
    np.testing.assert_allclose(heights, [1.0, 12.0, 15.0, 18.0])
    np.testing.assert_allclose(probs.sum(axis=0), 1.0, rtol=0, atol=1e-12)
    u = (np.arange(2000) + 0.5) / 2000  # the draws of a grid of uniforms, both ways
    drawn = tr38901.uma_effective_height_m(d2[:, None, None], 19.5, u[None, :, None],
                                           u[None, None, ::50])  # (3, 2000, 40)
    p = tr38901.los_probability("uma", d2, 19.5)[:, None, None]
    power = (p * 10 ** (-tr38901.pathloss_db("uma", d2[:, None, None], d3[:, None, None], 25.0,
                                                19.5, 3.5, True, h_e_m=drawn) / 10)
             + (1 - p) * 10 ** (-tr38901.pathloss_db("uma", d2[:, None, None], d3[:, None, None],
                                                      25.0, 19.5, 3.5, False, h_e_m=drawn) / 10))
    sampled = -10 * np.log10(power.mean(axis=(1, 2)))
    np.testing.assert_allclose(model.expected_loss_db(d2, d3, 25.0, 19.5), sampled, atol=2e-3)
    assert (probs[1:].sum(axis=0) > 0).all()  # beyond 18 m, h_E > 1 m has weight


def test_tilted_panel_gain_is_the_antenna_modules():
    from cellopt.radio.antenna3d import antenna_gain_db

    net = one_cell([(200.0, 10.0), (-50.0, 80.0)], height_m=25.0, azimuth_deg=90.0,
                   tilt_deg=3.0, electrical_tilt_deg=9.0, panel_rows=10, panel_columns=2)
    model = model_3gpp("uma", 3.5, los="los", shadowing=False, antenna="tr38901")
    plain = model_3gpp("uma", 3.5, los="los", shadowing=False, antenna="tr38901")
    omni = one_cell([(200.0, 10.0), (-50.0, 80.0)], height_m=25.0)
    pattern = coupling_db(net, model=model, rng=1)[:, 0] - coupling_db(omni, model=plain,
                                                                        rng=1)[:, 0]
    expected = antenna_gain_db(np.array([200.0, -50.0]), np.array([10.0, 80.0]), 1.5 - 25.0,
                               90.0, 3.0, 9.0, 10, 2) - 8.0
    np.testing.assert_allclose(pattern, expected, rtol=0, atol=1e-9)
    # the beam: a user on the boresight 12° below the horizon gets the panel's peak
    on_beam = one_cell([(23.5 / math.tan(math.radians(12.0)), 0.0)], height_m=25.0,
                       azimuth_deg=90.0, electrical_tilt_deg=12.0, panel_rows=10,
                       panel_columns=1)
    peak = coupling_db(on_beam, model=model, rng=1)[0, 0]
    bare = coupling_db(one_cell([(23.5 / math.tan(math.radians(12.0)), 0.0)], height_m=25.0),
                       model=plain, rng=1)[0, 0]
    assert peak - bare == pytest.approx(10.0, abs=0.5)  # 10 elements: +10 dB, less the element


def test_indoor_user_pays_o2i_loss_on_its_floor():
    net = one_cell([(150.0, 0.0)] * 400, indoor=True)
    model = model_3gpp("umi", 6.0, los="los", shadowing=False)
    gain = coupling_db(net, model=model, rng=5)[:, 0]
    draws = radio.propagation.UserDraws.draw(5, np.ones(400, bool), model.pathloss["macro"])
    h = draws.height_m
    assert set(np.unique(h)) <= {3.0 * k + 1.5 for k in range(8)} and h.max() > 1.5
    d3 = np.hypot(150.0, 10.0 - h)
    basic = tr38901.pathloss_db("umi", 150.0, d3, 10.0, h, 6.0, True)
    # low-loss building at 6 GHz: 5 − 10 log10(0.3·10^(−(2+0.2·6)/10) + 0.7·10^(−(5+4·6)/10))
    low = 5 - 10 * math.log10(0.3 * 10 ** (-(2 + 0.2 * 6) / 10) + 0.7 * 10 ** (-(5 + 4 * 6) / 10))
    # high-loss: 5 − 10 log10(0.7·10^(−(23+0.3·6)/10) + 0.3·10^(−(5+4·6)/10))
    high = 5 - 10 * math.log10(0.7 * 10 ** (-(23 + 0.3 * 6) / 10)
                               + 0.3 * 10 ** (-(5 + 4 * 6) / 10))
    wall = np.where(draws.high_loss, high, low)
    sigma = np.where(draws.high_loss, 6.5, 4.4)
    o2i = wall + 0.5 * draws.indoor_distance_m + sigma * draws.o2i_normal
    np.testing.assert_allclose(gain, 8.0 - basic - o2i, rtol=0, atol=1e-9)
    assert 0.4 < draws.high_loss.mean() < 0.6  # high_loss_fraction 0.5
    assert draws.indoor_distance_m.max() <= 25.0 and draws.indoor_distance_m.mean() < 12.5


# ------------------------------------------------------------------ the random states
def test_los_share_follows_the_probability_and_sectors_share_it():
    net = drop_users(hex_grid(1, 200.0, height_m=10.0), 3000, rng=3)
    model = model_3gpp("umi", 3.5, shadowing=False)
    los_gain = coupling_db(net, model=model_3gpp("umi", 3.5, los="los", shadowing=False), rng=3)
    gain = coupling_db(net, model=model, rng=3)
    pattern = coupling_db(net, model=model_3gpp("umi", 3.5, los="los", shadowing=False), rng=3)
    is_los = np.isclose(gain, los_gain, atol=1e-9)
    by_site = is_los.reshape(net.n_users, 7, 3)
    assert (by_site == by_site[:, :, :1]).all()  # one state per user and site
    assert np.allclose(pattern, los_gain)
    dx, dy = radio.model.CouplingGains(net, model, 3).displacement_m(np.arange(net.n_users))
    d2 = np.hypot(dx, dy)[:, ::3]  # to the nearest wraparound image of each site
    p = tr38901.los_probability("umi", np.maximum(d2, 10.0), 1.5)
    n = p.size
    share, expected = by_site[:, :, 0].mean(), p.mean()
    assert abs(share - expected) < 5 * math.sqrt(expected * (1 - expected) / n)


def test_the_same_seed_gives_the_same_links_whatever_the_blocks():
    net = drop_users(hex_grid(1, 500.0, electrical_tilt_deg=12.0, panel_rows=10),
                     500, indoor_fraction=0.8, rng=4)
    model = RadioModel(pathloss={"macro": ThreeGPP("uma", 6.0), "pico": tr36814_pico,
                                 "femto": tr36814_pico}, antenna="tr38901")
    whole = coupling_db(net, model=model, rng=9)
    part = coupling_db(net, model=model, rng=9, users=np.arange(100, 200))
    np.testing.assert_array_equal(whole[100:200], part)
    assert not np.array_equal(whole, coupling_db(net, model=model, rng=10))


def test_link_table_radius_and_far_field_paths_agree_with_the_dense_one():
    net = drop_users(hex_grid(2, 200.0, height_m=10.0, electrical_tilt_deg=12.0, panel_rows=10,
                              wraparound=False), 600, indoor_fraction=0.8, rng=7)
    model = RadioModel(pathloss={"macro": ThreeGPP("umi", 3.5), "pico": tr36814_pico,
                                 "femto": tr36814_pico}, antenna="tr38901", rat="nr",
                       subcarrier_spacing_khz=30.0)
    dense = link_table(net, model=model, rng=2, n_candidates=4)
    # a radius beyond the layout: every cell exactly, through the pairwise gains
    near = link_table(net, model=model, rng=2, n_candidates=4, interference_radius_m=5000.0)
    np.testing.assert_array_equal(dense.cell, near.cell)
    np.testing.assert_allclose(dense.rsrp_dbm, near.rsrp_dbm, rtol=0, atol=1e-9)
    np.testing.assert_allclose(dense.sinr_db, near.sinr_db, rtol=0, atol=1e-6)
    # a short radius: the near-only SINR (sinr + far_field_db) counts a subset of the
    # interferers, an upper bound on the exact SINR of every link both tables hold
    far = link_table(net, model=model, rng=2, n_candidates=4, interference_radius_m=300.0,
                     far_field=True)
    key = lambda t: t.user * net.n_cells + t.cell  # noqa: E731
    both, i, j = np.intersect1d(key(dense), key(far), return_indices=True)
    assert len(both) > 0.95 * len(dense.cell)
    assert (far.sinr_db[j] + far.far_field_db[j] >= dense.sinr_db[i] - 1e-4).all()  # float32
    assert (far.far_field_db > 0).any()


def test_nr_rsrp_is_per_resource_element():
    net = one_cell([(100.0, 0.0)])
    plain = model_3gpp("umi", 3.5, los="los", shadowing=False)
    lte = link_table(net, model=plain, rng=1, n_candidates=1)
    nr = link_table(net, model=RadioModel(pathloss=plain.pathloss, rat="nr",
                                          subcarrier_spacing_khz=30.0, site_correlation=0.0),
                    rng=1, n_candidates=1)
    gain = coupling_db(net, model=plain, rng=1)[0, 0]
    # LTE 20 MHz: 100 RB; NR 20 MHz at 30 kHz: 51 RB (TS 38.101-1 Table 5.3.2-1)
    assert lte.rsrp_dbm[0] == pytest.approx(40.0 - 10 * math.log10(1200) + gain, abs=1e-9)
    assert nr.rsrp_dbm[0] == pytest.approx(40.0 - 10 * math.log10(612) + gain, abs=1e-9)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kwargs, match", [
    ({"scenario": "umx", "frequency_ghz": 3.5}, "not a 3GPP scenario"),
    ({"scenario": "uma", "frequency_ghz": 3.5e9}, "3.5 GHz, not 3.5e9 Hz"),
    ({"scenario": "uma", "frequency_ghz": 3.5, "user_height_m": 0.0}, "user_height_m"),
    ({"scenario": "uma", "frequency_ghz": 3.5, "los": "maybe"}, "los"),
    ({"scenario": "uma", "frequency_ghz": 3.5, "los": "expected"}, "shadowing=False"),
    ({"scenario": "uma", "frequency_ghz": 3.5, "high_loss_fraction": 1.5}, "high_loss_fraction"),
])
def test_bad_three_gpp_models_are_refused(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        ThreeGPP(**kwargs)


def test_bad_radio_models_are_refused():
    with pytest.raises(ValidationError, match="subcarrier_spacing_khz=45"):
        RadioModel(rat="nr", subcarrier_spacing_khz=45.0)
    with pytest.raises(ValidationError, match="use one of 15 kHz"):
        RadioModel(rat="lte", subcarrier_spacing_khz=30.0)
    with pytest.raises(ValidationError, match="antenna"):
        RadioModel(antenna="yagi")
    with pytest.raises(ValidationError, match="indoor_tiers"):
        RadioModel(pathloss={"macro": tr36814_pico, "pico": tr36814_pico,
                             "femto": ThreeGPP("umi", 3.5)})
    with pytest.raises(ValidationError, match="tilt_deg"):
        hex_grid(1, electrical_tilt_deg=120.0)
    with pytest.raises(ValidationError, match="height_m is 1 m or less"):
        coupling_db(one_cell([(50.0, 0.0)], height_m=0.5), model=model_3gpp("umi"), rng=1)
    net = one_cell([(1.0, 1.0)])
    net.cells["panel_rows"] = 2.5
    with pytest.raises(ValidationError, match="panel_rows is not a whole number"):
        net.validate()


def scenario_file(tmp_path, radio_lines: str):
    text = textwrap.dedent("""\
        name = "t"
        [network]
        builder = "hex_grid"
        n_rings = 1
        [users]
        n = 20
        [radio]
        """) + textwrap.dedent(radio_lines)
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("lines, match", [
    ('propagation = "umx"\nfrequency_ghz = 3.5\n', "umx"),
    ('propagation = "uma"\nfrequency_ghz = 3.5e9\n', "frequency_ghz"),
    ('frequency_ghz = 3.5\n', "gives no 'propagation'"),
    ('propagation = { marco = "uma" }\nfrequency_ghz = 3.5\n', "unknown tiers"),
    ('rat = "nr"\nsubcarrier_spacing_khz = 45.0\n', "not a NR numerology"),
    ('antenna = "yagi"\n', "antenna"),
    ('propagation = "umi"\nfrequency_ghz = 3.5\nlos = "expected"\n', "shadowing=False"),
])
def test_bad_scenario_keys_name_the_key_and_the_fix(tmp_path, lines, match):
    with pytest.raises(ValidationError, match=match):
        load_scenario(scenario_file(tmp_path, lines)).build(1)


def test_shipped_3gpp_scenarios_build():
    for name in ("nr_uma_calibration", "nr_umi_calibration", "nr_inh_calibration",
                 "lte3d_uma_calibration", "lte3d_umi_calibration", "nr_hetnet"):
        drop = load_scenario(name).build(1)
        assert drop.problem.n_users > 0
        assert np.isfinite(drop.links.sinr_db).all()


def test_antenna_columns_the_2d_pattern_cannot_use_warn():
    net = drop_users(hex_grid(1, electrical_tilt_deg=12.0, panel_rows=10), 5, rng=1)
    with pytest.warns(UserWarning, match=r"\['electrical_tilt_deg', 'panel_rows'\] are not used"):
        coupling_db(net, rng=1)
    plain = drop_users(hex_grid(1), 5, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        coupling_db(plain, rng=1)  # no antenna columns: nothing to say


# ------------------------------------------------------------------ shadowing in space
def test_spatial_field_is_standard_normal_and_decorrelates_at_the_distance():
    from cellopt.radio.shadowing import spatial_normal_hash

    rng = np.random.default_rng(1)
    n = 100_000
    x, y = X0 + rng.uniform(0, 5e4, n), Y0 + rng.uniform(0, 5e4, n)
    z = spatial_normal_hash(3, x, y, 7, 50.0)
    assert abs(z.mean()) < 5 / math.sqrt(n) * 3  # neighbours correlate: looser than iid
    assert abs(z.std() - 1.0) < 0.02
    angle = rng.uniform(0, 2 * np.pi, n)
    corr = {}
    for d in (10.0, 50.0, 100.0, 150.0):
        moved = spatial_normal_hash(3, x + d * np.cos(angle), y + d * np.sin(angle), 7, 50.0)
        corr[d] = np.corrcoef(z, moved)[0, 1]
    assert corr[10.0] > 0.9
    assert abs(corr[50.0] - math.exp(-1)) < 0.03  # e^−1 at the decorrelation distance
    assert corr[100.0] < 0.05 and abs(corr[150.0]) < 0.02
    other_site = spatial_normal_hash(3, x, y, 8, 50.0)
    assert abs(np.corrcoef(z, other_site)[0, 1]) < 0.02


def test_neighbours_share_shadowing_in_3gpp_models_and_with_a_decorrelation_distance():
    # 20 × 15 users 150 m apart, within UMi's 5 km, around a cell at UMi's 10 m
    pairs = [(100.0 + 150.0 * (k % 20), 100.0 + 150.0 * (k // 20)) for k in range(300)]
    near = [(px + 2.0, py) for px, py in pairs]  # each user's neighbour 2 m away
    net = one_cell(pairs + near, height_m=10.0)
    n = len(pairs)
    for model in (model_3gpp("umi", 3.5, los="nlos"),  # UMi NLOS: 13 m
                  RadioModel(decorrelation_m=50.0, site_correlation=0.5)):
        quiet = (model_3gpp("umi", 3.5, los="nlos", shadowing=False)
                 if isinstance(model.pathloss["macro"], ThreeGPP)
                 else RadioModel(shadowing_std_db=dict.fromkeys(("macro", "pico", "femto"), 0.0)))
        s = coupling_db(net, model=quiet, rng=2)[:, 0] - coupling_db(net, model=model, rng=2)[:, 0]
        assert np.corrcoef(s[:n], s[n:])[0, 1] > 0.8
        assert abs(np.corrcoef(s[:n - 1], s[1:n])[0, 1]) < 0.2  # 150 m apart: independent
    independent = model_3gpp("umi", 3.5, los="nlos", spatially_correlated=False)
    quiet = model_3gpp("umi", 3.5, los="nlos", shadowing=False)
    s = coupling_db(net, model=quiet, rng=2)[:, 0] - coupling_db(net, model=independent, rng=2)[:, 0]
    assert abs(np.corrcoef(s[:n], s[n:])[0, 1]) < 0.2


def test_cell_files_carry_the_3d_antenna_columns(tmp_path):
    from cellopt.topology import read_cells

    path = tmp_path / "cells.csv"
    path.write_text("lon,lat,azimuth_deg,tilt_deg,electrical_tilt_deg,panel_rows,panel_columns\n"
                    "-122.40,37.79,0,4,6,8,2\n-122.41,37.785,120,2,8,8,1\n")
    c = read_cells(path).cell_arrays()
    np.testing.assert_array_equal(c["tilt_deg"], [4.0, 2.0])
    np.testing.assert_array_equal(c["electrical_tilt_deg"], [6.0, 8.0])
    np.testing.assert_array_equal(c["panel_rows"], [8, 8])
    np.testing.assert_array_equal(c["panel_columns"], [2, 1])
    path.write_text("lon,lat,azimuth_deg,tilt_deg\n-122.40,37.79,0,95\n")
    with pytest.raises(ValidationError, match="tilt_deg is infinite or outside"):
        read_cells(path)


# ------------------------------------------------------------------ validity of the models
def test_a_ut_at_the_environment_height_is_refused_on_every_path():
    """UMa with h_UT = h_E = 1 m: the LOS breakpoint 4 (h_BS − h_E)(h_UT − h_E) f_c / c is
    0, every LOS link would fall on the far slope (11–24 dB too weak at 100–500 m)."""
    match = r"h_ut_m=1 m is at or below the effective environment height h_E = 1 m.*breakpoint"
    with pytest.raises(ValidationError, match=match):  # scalar
        tr38901.pathloss_db("uma", 200.0, 200.0, 25.0, 1.0, 3.5, True)
    with pytest.raises(ValidationError, match="1 of 2 links"):  # arrays, as the links give them
        tr38901.pathloss_db("uma", np.array([200.0, 300.0]), np.array([200.0, 300.0]), 25.0,
                            np.array([1.5, 1.0]), 3.5, True)
    for scenario in ("uma", "umi", "3d_uma", "3d_umi"):
        with pytest.raises(ValidationError, match=r"ThreeGPP\.user_height_m=1 m is at or below"):
            ThreeGPP(scenario, 3.5, user_height_m=1.0)  # the link table's and coverage's model
    # no breakpoint subtracts h_E in RMa and InH
    assert ThreeGPP("rma", 3.5, user_height_m=1.0).user_height_m == 1.0
    assert ThreeGPP("inh_open", 3.5, user_height_m=1.0).user_height_m == 1.0


def test_cells_below_the_uma_environment_height_are_refused():
    # an indoor user on a high floor draws h_E up to 21 m: a 10 m cell is below it
    net = one_cell([(100.0, 0.0), (200.0, 0.0)], height_m=10.0, indoor=True)
    with pytest.raises(ValidationError, match=r"cells rows \[0\] follow 'uma' .* at or below 21 m"):
        coupling_db(net, model=model_3gpp("uma"), rng=1)
    outdoor = one_cell([(100.0, 0.0), (200.0, 0.0)], height_m=25.0)
    assert np.isfinite(coupling_db(outdoor, model=model_3gpp("uma"), rng=1)).all()


def test_a_frequency_outside_the_scenario_warns_naming_its_range():
    with pytest.warns(UserWarning, match=r"RMa is specified for 0\.5–30 GHz \(TR 38\.901 Table "
                                         r"7\.4\.1-1\); got frequency_ghz=50 GHz") as record:
        ThreeGPP("rma", 50.0)
    assert len(record) == 1 and record[0].filename == __file__
    with pytest.warns(UserWarning, match=r"RMa is specified for 0\.5–30 GHz"):
        tr38901.pathloss_db("rma", 100.0, 100.0, 35.0, 1.5, 50.0, True)
    with pytest.warns(UserWarning, match=r"3D-UMa is specified for 2–6 GHz \(TR 36\.873"):
        ThreeGPP("3d_uma", 28.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ThreeGPP("uma", 50.0)  # TR 38.901 UMa: 0.5–100 GHz


def test_links_beyond_the_scenario_warn_once_per_link_table(monkeypatch):
    from cellopt.radio import links as links_module

    # InH on a 500 m grid: most users are beyond InH's 150 m
    xy = [(x, y) for x in np.arange(0.0, 501.0, 50.0) for y in np.arange(0.0, 501.0, 50.0)]
    net = one_cell(xy, height_m=3.0)
    monkeypatch.setattr(links_module, "BLOCK_ELEMENTS", 8)  # many blocks, one warning
    with pytest.warns(UserWarning) as record:
        link_table(net, model=model_3gpp("inh_open", user_height_m=1.0, shadowing=False), rng=1,
                   workers=1)
    inh = [str(w.message) for w in record if "InH-Office" in str(w.message)]
    d = np.hypot(*np.asarray(xy).T)
    assert len(inh) == 1, inh
    assert (f"InH-Office is specified for 1 m ≤ d_3D ≤ 150 m (TR 38.901 Table 7.4.1-1); "
            f"{int((np.maximum(d, 10.0) > 150.0).sum())} of {len(xy)} user–cell pairs are outside"
            in inh[0])


def test_every_scenario_declares_its_validity():
    assert set(tr38901.VALIDITY) == set(tr38901.SCENARIOS)
    for v in tr38901.VALIDITY.values():
        assert v.frequency_ghz[0] < v.frequency_ghz[1] and v.distance_m[0] < v.distance_m[1]


def test_a_three_gpp_model_without_frequency_is_refused():
    with pytest.raises(ValidationError, match=r"ThreeGPP.frequency_ghz is missing.*fix: give it "
                                              r"in GHz"):
        ThreeGPP("uma")
    with pytest.raises(ValidationError, match=r"\['high_loss_fraction'\] is not used by scenario "
                                              r"'3d_uma'"):
        ThreeGPP("3d_uma", 2.0, high_loss_fraction=0.2)
    with pytest.raises(ValidationError, match="shadowing=False turns off"):
        ThreeGPP("uma", 3.5, shadowing=False, shadowing_std_db=6.0)
