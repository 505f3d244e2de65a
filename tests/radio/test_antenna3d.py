"""Tests of cellopt.radio.antenna3d: element pattern, local angles, tilted panels.

Expected values are worked out by hand in each test from the formulas of TR 38.901
Table 7.3-1 (element), §7.1.3 (rotations) and TR 36.873 §7.1.1 (panel weights), written
with literal numbers; the panel is also checked against an explicit element-by-element sum.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from cellopt import ValidationError
from cellopt.radio.antenna import angle_off_boresight_deg
from cellopt.radio.antenna3d import (
    CALIBRATION_PANELS,
    ElementPattern,
    antenna_gain_db,
    element_gain_db,
    local_angles_deg,
    panel_gain_db,
)

# ----------------------------------------------------------------------- element pattern


@pytest.mark.parametrize(
    ("zenith", "azimuth", "expected"),
    [
        # TR 38.901 Table 7.3-1: A_V = −min(12((θ'−90)/65)², 30), A_H = −min(12(φ'/65)², 30),
        # A = 8 − min(−(A_V + A_H), 30)
        (90.0, 0.0, 8.0),                                     # boresight: G_max
        (102.0, 0.0, 8.0 - 12.0 * (12.0 / 65.0) ** 2),        # 12° below: 7.5906
        (155.0, 0.0, 8.0 - 12.0),                             # 65° below: A_V = −12
        (0.0, 0.0, 8.0 - 12.0 * (90.0 / 65.0) ** 2),          # zenith: 23.0 dB < SLA_V
        (90.0, 32.5, 8.0 - 3.0),                              # half the beamwidth: −3 dB
        (90.0, -65.0, 8.0 - 12.0),                            # symmetric in φ'
        (90.0, 120.0, 8.0 - 30.0),                            # 40.9 dB clipped at A_max
        (90.0, 180.0, 8.0 - 30.0),                            # back
        (110.0, 40.0, 8.0 - 12.0 * (20.0 / 65.0) ** 2 - 12.0 * (40.0 / 65.0) ** 2),  # 2.3195
        (150.0, 60.0, 8.0 - 2 * 12.0 * (60.0 / 65.0) ** 2),   # sum 20.45 dB, not clipped
        (170.0, 90.0, 8.0 - 30.0),                            # 18.18 + 23.0 dB clipped at 30
        (90.0, 350.0, 8.0 - 12.0 * (10.0 / 65.0) ** 2),       # 350° is −10°
    ],
)
def test_element_pattern_by_hand(zenith, azimuth, expected):
    assert element_gain_db(zenith, azimuth) == pytest.approx(expected, abs=1e-12)


def test_element_pattern_parameters():
    # SLA_V = 10 dB caps the vertical cut: at the nadir A_V = −min(12(90/65)², 10) = −10
    assert element_gain_db(180.0, 0.0, sla_v_db=10.0) == pytest.approx(8.0 - 10.0)
    # narrower beams and another peak gain: 12(10/20)² = 3 dB, 12(15/30)² = 3 dB
    g = element_gain_db(100.0, 15.0, theta_3db_deg=20.0, phi_3db_deg=30.0, max_gain_dbi=5.0)
    assert g == pytest.approx(5.0 - 6.0)
    # A_max = 20 dB floors the total: 8 − 20 at the back
    assert element_gain_db(90.0, 180.0, a_max_db=20.0) == pytest.approx(-12.0)


def test_element_pattern_broadcasts():
    g = element_gain_db(np.array([[80.0], [90.0], [100.0]]), np.array([0.0, 30.0]))
    assert g.shape == (3, 2) and g.dtype == np.float64
    assert g[1, 0] == 8.0 and g[0, 1] == g[2, 1]  # symmetric about the boresight plane


# ----------------------------------------------------------------------- local angles


def test_east_facing_antenna_tilted_down():
    # user due east of an east-facing antenna, same height: on the boresight azimuth, on
    # the horizon, while the boresight points 10° below it → 10° above boresight: θ' = 80°
    zenith, azimuth = local_angles_deg(100.0, 0.0, 0.0, 90.0, 10.0)
    assert zenith == pytest.approx(80.0) and azimuth == pytest.approx(0.0, abs=1e-12)
    # 100 m away and 100·tan(10°) = 17.63 m lower: on the boresight, θ' = 90°
    zenith, azimuth = local_angles_deg(100.0, 0.0, -100.0 * math.tan(math.radians(10.0)),
                                       90.0, 10.0)
    assert zenith == pytest.approx(90.0) and azimuth == pytest.approx(0.0, abs=1e-12)
    # an up-tilt (negative) of 5° puts the horizon 5° below the boresight: θ' = 95°
    zenith, _ = local_angles_deg(100.0, 0.0, 0.0, 90.0, -5.0)
    assert zenith == pytest.approx(95.0)


def test_azimuth_is_counter_clockwise_from_boresight():
    # north-facing, untilted: a user to the north-west is 45° left (φ' = +45°), one to the
    # north-east 45° right (φ' = −45°); cellopt's compass angle off boresight has the other sign
    _, left = local_angles_deg(-100.0, 100.0, 0.0, 0.0, 0.0)
    _, right = local_angles_deg(100.0, 100.0, 0.0, 0.0, 0.0)
    assert left == pytest.approx(45.0) and right == pytest.approx(-45.0)
    assert right == pytest.approx(-angle_off_boresight_deg(45.0, 0.0))
    # an east-facing antenna sees a user due north 90° to its left
    zenith, azimuth = local_angles_deg(0.0, 50.0, 0.0, 90.0, 0.0)
    assert zenith == pytest.approx(90.0) and azimuth == pytest.approx(90.0)


def test_off_axis_user_of_tilted_antenna():
    # north-facing, tilted β = 30°, user to the north-west at the same height, direction
    # (−1, 1, 0). Rotating by −α (α = 90°): (x1, y1, z1) = (1, 1, 0); by −β about y:
    # x' = cos30·1 − sin30·0 = 0.8660, y' = 1, z' = sin30·1 + cos30·0 = 0.5.
    # θ' = acos(z'/|r|) = acos(0.5/√2) = 69.295°, φ' = atan2(1, 0.8660) = 49.107°
    zenith, azimuth = local_angles_deg(-1.0, 1.0, 0.0, 0.0, 30.0)
    assert zenith == pytest.approx(69.29518894536457, abs=1e-9)
    assert azimuth == pytest.approx(49.10660535086910, abs=1e-9)


def test_user_behind_a_tilted_antenna():
    # the back of a boresight tilted 10° down points 10° up: a user due south of a
    # north-facing antenna at its height is 10° below that axis: θ' = 100°, φ' = −180°
    zenith, azimuth = local_angles_deg(0.0, -100.0, 0.0, 0.0, 10.0)
    assert zenith == pytest.approx(100.0) and azimuth == pytest.approx(-180.0)
    # the range is [−180, 180): straight behind is −180 whatever the sign of a zero offset
    _, azimuth = local_angles_deg(np.array([0.0, -0.0]), -100.0, 0.0, 0.0, 0.0)
    np.testing.assert_array_equal(azimuth, -180.0)


def test_straight_down_tilt():
    # tilted 90°, the boresight points at the nadir: a user right below is on it
    with pytest.warns(UserWarning, match="outside the usual range"):
        zenith, azimuth = local_angles_deg(0.0, 0.0, -30.0, 45.0, 90.0)
    assert zenith == pytest.approx(90.0) and azimuth == pytest.approx(0.0, abs=1e-9)


def test_omni_antenna_has_no_azimuth():
    # NaN bearing: φ' = 0 and θ' = θ − β; user 50 m away horizontally and 50 m below:
    # θ = 135°, β = 10° → θ' = 125°, in every horizontal direction
    zenith, azimuth = local_angles_deg([30.0, -40.0, 0.0], [40.0, -30.0, -50.0], -50.0,
                                       np.nan, 10.0)
    np.testing.assert_allclose(zenith, 125.0)
    np.testing.assert_array_equal(azimuth, 0.0)
    # a user within β of the zenith (θ = 5° < β = 10°): θ − β is clipped to 0°, φ' stays 0
    zenith, azimuth = local_angles_deg(math.sin(math.radians(5.0)), 0.0,
                                       math.cos(math.radians(5.0)), np.nan, 10.0)
    assert zenith == 0.0 and azimuth == 0.0


def test_user_at_the_antenna_is_on_boresight():
    zenith, azimuth = local_angles_deg([0.0, 0.0], 0.0, 0.0, [np.nan, 200.0], 8.0)
    np.testing.assert_array_equal(zenith, 90.0)
    np.testing.assert_array_equal(azimuth, 0.0)


def test_local_angles_broadcast_over_users_and_cells():
    rng = np.random.default_rng(1)
    dx = rng.uniform(-500, 500, (5, 1))
    dy = rng.uniform(-500, 500, (5, 1))
    bearing = np.array([[0.0, 120.0, np.nan]])
    tilt = np.array([[4.0, 8.0, 12.0]])
    zenith, azimuth = local_angles_deg(dx, dy, -23.5, bearing, tilt)
    assert zenith.shape == azimuth.shape == (5, 3)
    for i in range(5):
        for j in range(3):
            z, a = local_angles_deg(float(dx[i, 0]), float(dy[i, 0]), -23.5,
                                    float(bearing[0, j]), float(tilt[0, j]))
            assert zenith[i, j] == pytest.approx(z) and azimuth[i, j] == pytest.approx(a)
    assert np.all((azimuth >= -180.0) & (azimuth < 180.0))


# ----------------------------------------------------------------------- panels


def test_peak_gain_at_the_electrical_tilt():
    # 10 × 1 column, 0.5 λ, 12° electrical tilt (θ_etilt = 102°): at θ' = 102° all
    # weights add in phase: gain = element(102°) + 10 log10(10)
    peak = panel_gain_db(102.0, 0.0, rows=10, columns=1, electrical_tilt_deg=12.0)
    assert peak == pytest.approx(8.0 - 12.0 * (12.0 / 65.0) ** 2 + 10.0, abs=1e-9)
    # the array factor (panel − element) is largest there
    theta = np.linspace(60.0, 140.0, 1601)
    af = (panel_gain_db(theta, 0.0, rows=10, columns=1, electrical_tilt_deg=12.0)
          - element_gain_db(theta, 0.0))
    assert theta[np.argmax(af)] == pytest.approx(102.0, abs=0.05)
    assert af.max() == pytest.approx(10.0, abs=1e-9)


def test_planar_panel_peak():
    # 4 rows × 8 columns, 6° tilt: at (96°, 0°) gain = element(96°) + 10 log10(32)
    g = panel_gain_db(96.0, 0.0, rows=4, columns=8, electrical_tilt_deg=6.0)
    assert g == pytest.approx(8.0 - 12.0 * (6.0 / 65.0) ** 2 + 10.0 * math.log10(32.0))


def test_single_element_ignores_electrical_tilt():
    # K = M = 1: w = 1, the panel is its element whatever the tilt
    theta = np.linspace(0.0, 180.0, 37)[:, None]
    phi = np.linspace(-180.0, 170.0, 36)[None, :]
    np.testing.assert_allclose(
        panel_gain_db(theta, phi, rows=1, columns=1, electrical_tilt_deg=12.0),
        element_gain_db(theta, phi), atol=1e-12)


def test_panel_matches_an_explicit_sum_over_elements():
    # |Σ_{m,n} w_m w_n exp(j2π(m d_V cos θ' + n d_H sin θ' sin φ'))|², with
    # w_m = exp(−j2π m d_V cos(90° + e))/√M and w_n = 1/√N, summed element by element
    rows, columns, d_v, d_h, tilt = 4, 3, 0.7, 0.5, 7.0
    rng = np.random.default_rng(7)
    theta = rng.uniform(0.0, 180.0, 200)
    phi = rng.uniform(-180.0, 180.0, 200)
    t, p = np.radians(theta), np.radians(phi)
    total = np.zeros(200, dtype=complex)
    for m in range(rows):
        w_m = np.exp(-2j * np.pi * m * d_v * np.cos(np.radians(90.0 + tilt))) / np.sqrt(rows)
        for n in range(columns):
            w_n = 1.0 / np.sqrt(columns)
            phase = 2 * np.pi * (m * d_v * np.cos(t) + n * d_h * np.sin(t) * np.sin(p))
            total += w_m * w_n * np.exp(1j * phase)
    expected = element_gain_db(theta, phi) + 10.0 * np.log10(np.abs(total) ** 2)
    got = panel_gain_db(theta, phi, rows=rows, columns=columns, electrical_tilt_deg=tilt,
                        v_spacing_wavelengths=d_v, h_spacing_wavelengths=d_h)
    np.testing.assert_allclose(got, expected, atol=1e-8)


def _half_power_width(gain, peak_deg):
    """Width [deg] between the −3.0103 dB points either side of `peak_deg` of gain(θ)."""
    target = gain(peak_deg) - 10.0 * math.log10(2.0)
    low = brentq(lambda t: gain(t) - target, peak_deg - 20.0, peak_deg)
    high = brentq(lambda t: gain(t) - target, peak_deg, peak_deg + 20.0)
    return high - low


def test_half_power_beamwidth_of_a_ten_element_column():
    # uniform 10-element array at 0.5 λ: the array factor's HPBW is ≈ 0.886 λ/(N d) rad
    # (10.15° in the small-angle form; 10.2° exactly), the element narrows it slightly
    def af(theta):
        return float(panel_gain_db(theta, 0.0, rows=10, columns=1, electrical_tilt_deg=0.0)
                     - element_gain_db(theta, 0.0))

    def total(theta):
        return float(panel_gain_db(theta, 0.0, rows=10, columns=1, electrical_tilt_deg=0.0))

    assert _half_power_width(af, 90.0) == pytest.approx(10.2, abs=0.1)
    assert 10.0 < _half_power_width(total, 90.0) < _half_power_width(af, 90.0)


def test_nulls_and_side_lobe():
    # M = 10, d_V = 0.5 λ, no tilt: ψ = π cos θ'; nulls where 10ψ/2 = kπ: cos θ' = k/5
    null_cos = np.array([-0.4, -0.2, 0.2, 0.4])
    g = panel_gain_db(np.degrees(np.arccos(null_cos)), 0.0, rows=10, columns=1,
                      electrical_tilt_deg=0.0)
    assert np.all(g < -200.0) and np.all(np.isfinite(g))
    # with 12° electrical tilt the first null above the beam is at cos θ' = −sin 12° + 0.2,
    # θ' = 90.45°: just below the horizon
    theta_null = math.degrees(math.acos(-math.sin(math.radians(12.0)) + 0.2))
    assert theta_null == pytest.approx(90.45, abs=0.01)
    assert panel_gain_db(theta_null, 0.0, rows=10, columns=1, electrical_tilt_deg=12.0) < -200
    # first side lobe at cos θ' = 0.3 (10ψ/2 = 1.5π): relative level
    # 1/(100 sin²(0.15π)) = 0.04852 = −13.14 dB
    theta_lobe = math.degrees(math.acos(0.3))
    side = (panel_gain_db(theta_lobe, 0.0, rows=10, columns=1, electrical_tilt_deg=0.0)
            - element_gain_db(theta_lobe, 0.0) - 10.0)
    assert side == pytest.approx(10.0 * math.log10(1.0 / (100.0 * math.sin(0.15 * math.pi) ** 2)))
    # horizontal nulls of 8 columns at 0.5 λ on the horizon: sin φ' = k/4, φ' = 14.48°
    g = panel_gain_db(90.0, math.degrees(math.asin(0.25)), rows=1, columns=8,
                      electrical_tilt_deg=0.0)
    assert g < -200.0


def test_panel_per_link_shapes_without_loops():
    theta = np.array([[95.0], [100.0], [110.0]])
    rows = np.array([[1, 10, 4]])
    columns = np.array([[1, 1, 2]])
    tilt = np.array([[0.0, 12.0, 6.0]])
    got = panel_gain_db(theta, 10.0, rows=rows, columns=columns, electrical_tilt_deg=tilt)
    assert got.shape == (3, 3)
    for i in range(3):
        for j in range(3):
            one = panel_gain_db(float(theta[i, 0]), 10.0, rows=int(rows[0, j]),
                                columns=int(columns[0, j]), electrical_tilt_deg=float(tilt[0, j]))
            assert got[i, j] == pytest.approx(float(one), abs=1e-12)


def test_antenna_gain_chains_the_two_steps():
    rng = np.random.default_rng(3)
    n = 50
    dx, dy = rng.uniform(-400, 400, n), rng.uniform(-400, 400, n)
    dz = rng.uniform(-30, 5, n)
    bearing = np.where(rng.random(n) < 0.2, np.nan, rng.uniform(0, 360, n))
    mech, elec = rng.uniform(0, 10, n), rng.uniform(0, 12, n)
    rows = rng.choice([1, 8, 10], n)
    columns = rng.choice([1, 2], n)
    got = antenna_gain_db(dx, dy, dz, bearing, mech, elec, rows, columns)
    zenith, azimuth = local_angles_deg(dx, dy, dz, bearing, mech)
    expected = panel_gain_db(zenith, azimuth, rows=rows, columns=columns,
                             electrical_tilt_deg=elec)
    assert got.shape == (n,)
    np.testing.assert_array_equal(got, expected)


def test_mechanical_and_electrical_tilt_add_on_the_boresight_azimuth():
    # 6° mechanical + 6° electrical: the beam points 12° below the horizon, where the
    # array factor adds in phase: gain = element at 6° off the panel's normal + 10 dB
    d = 100.0
    g = antenna_gain_db(d, 0.0, -d * math.tan(math.radians(12.0)), 90.0, 6.0, 6.0, 10, 1)
    assert g == pytest.approx(8.0 - 12.0 * (6.0 / 65.0) ** 2 + 10.0, abs=1e-9)


def test_calibration_panels():
    k10 = CALIBRATION_PANELS["tr36873_k10"]
    assert (k10.rows, k10.columns, k10.electrical_tilt_deg, k10.mechanical_tilt_deg,
            k10.v_spacing_wavelengths) == (10, 1, 12.0, 0.0, 0.5)
    assert CALIBRATION_PANELS["tr38901_indoor"].electrical_tilt_deg == 20.0
    # K = M = 10 toward a user 12° below the horizon on the boresight: 18 dBi less the
    # element's 12(12/65)² = 0.409 dB
    d = 200.0
    g = antenna_gain_db(d, 0.0, -d * math.tan(math.radians(12.0)), 90.0,
                        k10.mechanical_tilt_deg, k10.electrical_tilt_deg, k10.rows, k10.columns)
    assert g == pytest.approx(18.0 - 12.0 * (12.0 / 65.0) ** 2, abs=1e-9)
    # K = M = 1 on the horizon: the element's 8 dBi
    k1 = CALIBRATION_PANELS["tr36873_k1"]
    g = antenna_gain_db(d, 0.0, 0.0, 90.0, k1.mechanical_tilt_deg, k1.electrical_tilt_deg,
                        k1.rows, k1.columns)
    assert g == pytest.approx(8.0)


def test_scalars_give_float64_scalars():
    g = antenna_gain_db(100.0, 0.0, -20.0, 90.0, 0.0, 12.0, 10, 1)
    assert np.ndim(g) == 0 and isinstance(g, np.floating) and np.asarray(g).dtype == np.float64
    zenith, azimuth = local_angles_deg(100.0, 0.0, -20.0, 90.0, 0.0)
    assert np.ndim(zenith) == np.ndim(azimuth) == 0


# ----------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mechanical_tilt_deg": 95.0},
         r"mechanical_tilt_deg=95 deg is outside .*give the downtilt"),
        ({"mechanical_tilt_deg": np.array([5.0, np.nan])},
         r"mechanical_tilt_deg has 1 value.*index 1.*give the downtilt"),
        ({"electrical_tilt_deg": [0.0, -100.0, 120.0]},
         r"electrical_tilt_deg has 2 value.*index 1 = -100"),
        ({"electrical_tilt_deg": "12"}, r"electrical_tilt_deg='12' is a str"),
        ({"rows": 0}, r"rows=0 is below 1; fix: give the number of antenna element rows"),
        ({"rows": 2.0}, r"rows=2.0 is a float, not an int.*\(e\.g\. rows=2\)"),
        ({"rows": True}, r"rows=True is a boolean"),
        ({"rows": np.array([10.0, 1.0])}, r"rows has dtype float64, not an integer type"),
        ({"columns": np.array([1, 0, 2])}, r"columns has 1 value\(s\) below 1 .*index 1"),
        ({"columns": "3"}, r"columns='3' is a str"),
        ({"bearing_deg": np.array([0.0, np.inf])}, r"bearing_deg has 1 value.*or NaN for an omni"),
        ({"bearing_deg": "north"}, r"bearing_deg='north' is a str"),
        ({"dx_m": [1.0, np.nan]}, r"dx_m has 1 value.*in metres"),
        ({"v_spacing_wavelengths": 0.0}, r"v_spacing_wavelengths=0.0 is not a finite spacing"),
        ({"h_spacing_wavelengths": None}, r"h_spacing_wavelengths=None is a NoneType"),
    ],
)
def test_bad_input_is_refused_with_the_fix(kwargs, match):
    args = {"dx_m": 100.0, "dy_m": 0.0, "dz_m": -20.0, "bearing_deg": 90.0,
            "mechanical_tilt_deg": 2.0, "electrical_tilt_deg": 8.0, "rows": 10, "columns": 1}
    args.update(kwargs)
    with pytest.raises(ValidationError, match=match):
        antenna_gain_db(**args)


def test_bad_angles_and_patterns_are_refused():
    with pytest.raises(ValidationError, match=r"zenith_deg has 1 value.*\[0, 180\]"):
        element_gain_db([90.0, 181.0], 0.0)
    with pytest.raises(ValidationError, match=r"azimuth_deg has dtype"):
        panel_gain_db(90.0, ["a"], rows=1, columns=1, electrical_tilt_deg=0.0)
    with pytest.raises(ValidationError, match=r"theta_3db_deg=0 deg is outside"):
        ElementPattern(theta_3db_deg=0.0)
    with pytest.raises(ValidationError, match=r"a_max_db=-1 dB is outside"):
        element_gain_db(90.0, 0.0, a_max_db=-1.0)


def test_unusual_tilts_warn_at_the_caller():
    with pytest.warns(UserWarning, match=r"mechanical_tilt_deg=-30 deg is outside the usual") as w:
        local_angles_deg(100.0, 0.0, 0.0, 90.0, -30.0)
    assert w[0].filename == __file__
    with pytest.warns(UserWarning, match=r"electrical_tilt_deg has values outside the usual") as w:
        antenna_gain_db(100.0, 0.0, 0.0, 90.0, 0.0, np.array([10.0, 50.0]), 10, 1)
    assert w[0].filename == __file__
