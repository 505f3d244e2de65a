"""Tests of cellopt.radio.tr38901 against values computed by hand from the standards.

Each expected value is the formula of the cited table written out with literal numbers
(f_c in GHz, distances in metres), not a call of the module. Sources: TR 38.901 v16/v17
Tables 7.4.1-1, 7.4.2-1, 7.4.3-1/2/3, 7.2-1, 7.5-6; TR 36.873 v12 Tables 7.2-1, 7.2-2,
7.3-6.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from cellopt import ValidationError
from cellopt.radio.tr38901 import (
    SCENARIOS,
    breakpoint_distance_m,
    decorrelation_distance_m,
    indoor_distance_m,
    indoor_floor_height_m,
    los_probability,
    o2i_loss_db,
    pathloss_db,
    shadow_std_db,
    uma_effective_height_m,
)

log10 = math.log10
ABS = 1e-9  # dB


def pl(scenario, d2d, h_bs, h_ut, fc, los, **kw):
    """Path loss of one link with d_3D from the geometry."""
    d3d = math.hypot(d2d, h_bs - h_ut)
    return float(pathloss_db(scenario, d2d, d3d, h_bs, h_ut, fc, los, **kw))


# --------------------------------------------------------------------------- UMa (38.901)


def test_uma_los_before_breakpoint():
    # d'_BP = 4 (25 − 1)(1.5 − 1) 3.5e9 / 3e8 = 560 m > 100 m: PL1 (Table 7.4.1-1, UMa LOS)
    d3d = math.hypot(100.0, 23.5)
    expected = 28.0 + 22 * log10(d3d) + 20 * log10(3.5)
    assert pl("uma", 100.0, 25.0, 1.5, 3.5, True) == pytest.approx(expected, abs=ABS)


def test_uma_los_after_breakpoint():
    # d'_BP = 560 m < 1000 m: PL2 (Table 7.4.1-1, UMa LOS)
    d3d = math.hypot(1000.0, 23.5)
    expected = 28.0 + 40 * log10(d3d) + 20 * log10(3.5) - 9 * log10(560.0**2 + 23.5**2)
    assert pl("uma", 1000.0, 25.0, 1.5, 3.5, True) == pytest.approx(expected, abs=ABS)


def test_uma_breakpoint_distance():
    # Table 7.4.1-1 note 1: d'_BP = 4 h'_BS h'_UT f_c / c
    assert float(breakpoint_distance_m("uma", 25.0, 1.5, 3.5)) == pytest.approx(560.0)
    assert float(breakpoint_distance_m("uma", 25.0, 19.5, 2.0, h_e_m=12.0)) == pytest.approx(
        4 * 13.0 * 7.5 * 2e9 / 3e8)
    # RMa note 5: d_BP = 2π h_BS h_UT f_c / c
    assert float(breakpoint_distance_m("rma", 35.0, 1.5, 3.5)) == pytest.approx(
        2 * math.pi * 35.0 * 1.5 * 3.5e9 / 3e8)


def test_uma_effective_height_moves_the_breakpoint():
    # f_c = 2 GHz, h_UT = 19.5 m, d_2D = 3000 m. h_E = 1: d'_BP = 4·24·18.5·2e9/3e8 = 11840 m
    # (PL1); h_E = 12: d'_BP = 4·13·7.5·2e9/3e8 = 2600 m (PL2).
    d3d = math.hypot(3000.0, 5.5)
    pl1 = 28.0 + 22 * log10(d3d) + 20 * log10(2.0)
    pl2 = 28.0 + 40 * log10(d3d) + 20 * log10(2.0) - 9 * log10(2600.0**2 + 5.5**2)
    assert pl("uma", 3000.0, 25.0, 19.5, 2.0, True) == pytest.approx(pl1, abs=ABS)
    assert pl("uma", 3000.0, 25.0, 19.5, 2.0, True, h_e_m=12.0) == pytest.approx(pl2, abs=ABS)


def test_uma_nlos():
    # Table 7.4.1-1, UMa NLOS: PL'= 13.54 + 39.08 log10 d3D + 20 log10 fc − 0.6 (hUT − 1.5);
    # 300 m < d'_BP = 4·24·9.5·3.5e9/3e8 = 10640 m, so PL_LOS is PL1
    d3d = math.hypot(300.0, 25.0 - 10.5)
    nlos = 13.54 + 39.08 * log10(d3d) + 20 * log10(3.5) - 0.6 * (10.5 - 1.5)
    los = 28.0 + 22 * log10(d3d) + 20 * log10(3.5)
    assert nlos > los
    assert pl("uma", 300.0, 25.0, 10.5, 3.5, False) == pytest.approx(nlos, abs=ABS)


# --------------------------------------------------------------------------- UMi (38.901)


def test_umi_los_before_and_after_breakpoint():
    # d'_BP = 4 (10 − 1)(1.5 − 1) 3.5e9/3e8 = 210 m (Table 7.4.1-1, UMi-Street Canyon LOS)
    d3d = math.hypot(100.0, 8.5)
    assert pl("umi", 100.0, 10.0, 1.5, 3.5, True) == pytest.approx(
        32.4 + 21 * log10(d3d) + 20 * log10(3.5), abs=ABS)
    d3d = math.hypot(500.0, 8.5)
    assert pl("umi", 500.0, 10.0, 1.5, 3.5, True) == pytest.approx(
        32.4 + 40 * log10(d3d) + 20 * log10(3.5) - 9.5 * log10(210.0**2 + 8.5**2), abs=ABS)


def test_umi_nlos():
    # Table 7.4.1-1, UMi NLOS: PL' = 35.3 log10 d3D + 22.4 + 21.3 log10 fc − 0.3 (hUT − 1.5)
    d3d = math.hypot(200.0, 10.0 - 4.5)
    expected = 35.3 * log10(d3d) + 22.4 + 21.3 * log10(28.0) - 0.3 * (4.5 - 1.5)
    assert pl("umi", 200.0, 10.0, 4.5, 28.0, False) == pytest.approx(expected, abs=ABS)


# --------------------------------------------------------------------------- RMa (38.901)

RMA_BP = 2 * math.pi * 35.0 * 1.5 * 3.5e9 / 3e8  # note 5: 3848.45 m at 3.5 GHz


def rma_pl1(d3d):
    # Table 7.4.1-1, RMa PL1 with h = 5 m: 0.03·5^1.72 = 0.478 < 10, 0.044·5^1.72 = 0.701 < 14.77
    return (20 * log10(40 * math.pi * d3d * 3.5 / 3) + 0.03 * 5.0**1.72 * log10(d3d)
            - 0.044 * 5.0**1.72 + 0.002 * log10(5.0) * d3d)


def test_rma_los_before_breakpoint():
    d3d = math.hypot(1000.0, 33.5)
    assert pl("rma", 1000.0, 35.0, 1.5, 3.5, True) == pytest.approx(rma_pl1(d3d), abs=ABS)


def test_rma_los_after_breakpoint():
    # PL2 = PL1(d_BP) + 40 log10(d3D / d_BP)
    d3d = math.hypot(6000.0, 33.5)
    expected = rma_pl1(RMA_BP) + 40 * log10(d3d / RMA_BP)
    assert pl("rma", 6000.0, 35.0, 1.5, 3.5, True) == pytest.approx(expected, abs=ABS)


def test_rma_nlos():
    # Table 7.4.1-1, RMa NLOS with W = 20 m, h = 5 m, hBS = 35 m, hUT = 1.5 m
    d3d = math.hypot(1000.0, 33.5)
    expected = (161.04 - 7.1 * log10(20.0) + 7.5 * log10(5.0)
                - (24.37 - 3.7 * (5.0 / 35.0) ** 2) * log10(35.0)
                + (43.42 - 3.1 * log10(35.0)) * (log10(d3d) - 3)
                + 20 * log10(3.5) - (3.2 * log10(11.75 * 1.5) ** 2 - 4.97))
    assert expected > rma_pl1(d3d)
    assert pl("rma", 1000.0, 35.0, 1.5, 3.5, False) == pytest.approx(expected, abs=ABS)


def test_rma_street_and_building_parameters_are_used():
    d3d = math.hypot(1000.0, 33.5)
    expected = (161.04 - 7.1 * log10(40.0) + 7.5 * log10(10.0)
                - (24.37 - 3.7 * (10.0 / 35.0) ** 2) * log10(35.0)
                + (43.42 - 3.1 * log10(35.0)) * (log10(d3d) - 3)
                + 20 * log10(3.5) - (3.2 * log10(11.75 * 1.5) ** 2 - 4.97))
    got = pl("rma", 1000.0, 35.0, 1.5, 3.5, False, rma_h_building_m=10.0, rma_w_street_m=40.0)
    assert got == pytest.approx(expected, abs=ABS)


# --------------------------------------------------------------------------- InH (38.901)


@pytest.mark.parametrize("scenario", ["inh_mixed", "inh_open"])
def test_inh_office(scenario):
    # Table 7.4.1-1, InH-Office: LOS 32.4 + 17.3 log10 d3D + 20 log10 fc;
    # NLOS' 38.3 log10 d3D + 17.30 + 24.9 log10 fc
    d3d = 20.0
    los = 32.4 + 17.3 * log10(20.0) + 20 * log10(3.5)
    nlos = 38.3 * log10(20.0) + 17.30 + 24.9 * log10(3.5)
    assert float(pathloss_db(scenario, 19.9, d3d, 3.0, 1.0, 3.5, True)) == pytest.approx(los)
    assert float(pathloss_db(scenario, 19.9, d3d, 3.0, 1.0, 3.5, False)) == pytest.approx(nlos)


def test_inh_nlos_takes_the_los_loss_where_it_is_larger():
    # at d3D = 1 m: PL_LOS = 32.4 + 20 log10 3.5 = 43.28 > PL' = 17.30 + 24.9 log10 3.5 = 30.85
    los = 32.4 + 17.3 * log10(1.0) + 20 * log10(3.5)
    assert 17.30 + 24.9 * log10(3.5) < los
    assert float(pathloss_db("inh_mixed", 0.5, 1.0, 3.0, 1.0, 3.5, False)) == pytest.approx(los)


# --------------------------------------------------------------------------- 3D-UMa, 3D-UMi


def test_3d_uma_los_before_and_after_breakpoint():
    # TR 36.873 Table 7.2-1; d'_BP = 4 (25 − 1)(1.5 − 1) 2e9/3e8 = 320 m
    d3d = math.hypot(200.0, 23.5)
    assert pl("3d_uma", 200.0, 25.0, 1.5, 2.0, True) == pytest.approx(
        22.0 * log10(d3d) + 28.0 + 20 * log10(2.0), abs=ABS)
    d3d = math.hypot(1000.0, 23.5)
    assert pl("3d_uma", 1000.0, 25.0, 1.5, 2.0, True) == pytest.approx(
        40 * log10(d3d) + 28.0 + 20 * log10(2.0) - 9 * log10(320.0**2 + 23.5**2), abs=ABS)


def test_3d_uma_nlos():
    # TR 36.873 Table 7.2-1, 3D-UMa NLOS with W = h = 20 m, hBS = 25 m, hUT = 4.5 m
    d3d = math.hypot(500.0, 20.5)
    expected = (161.04 - 7.1 * log10(20.0) + 7.5 * log10(20.0)
                - (24.37 - 3.7 * (20.0 / 25.0) ** 2) * log10(25.0)
                + (43.42 - 3.1 * log10(25.0)) * (log10(d3d) - 3) + 20 * log10(2.0)
                - (3.2 * log10(17.625) ** 2 - 4.97) - 0.6 * (4.5 - 1.5))
    assert pl("3d_uma", 500.0, 25.0, 4.5, 2.0, False) == pytest.approx(expected, abs=ABS)


def test_3d_umi_los_before_and_after_breakpoint():
    # TR 36.873 Table 7.2-1; d'_BP = 4 (10 − 1)(1.5 − 1) 2e9/3e8 = 120 m
    d3d = math.hypot(100.0, 8.5)
    assert pl("3d_umi", 100.0, 10.0, 1.5, 2.0, True) == pytest.approx(
        22.0 * log10(d3d) + 28.0 + 20 * log10(2.0), abs=ABS)
    d3d = math.hypot(500.0, 8.5)
    assert pl("3d_umi", 500.0, 10.0, 1.5, 2.0, True) == pytest.approx(
        40 * log10(d3d) + 28.0 + 20 * log10(2.0) - 9 * log10(120.0**2 + 8.5**2), abs=ABS)


def test_3d_umi_nlos():
    # TR 36.873 Table 7.2-1, 3D-UMi NLOS (hexagonal): 36.7 log10 d3D + 22.7 + 26 log10 fc
    # − 0.3 (hUT − 1.5)
    d3d = math.hypot(300.0, 10.0 - 7.5)
    expected = 36.7 * log10(d3d) + 22.7 + 26 * log10(2.0) - 0.3 * (7.5 - 1.5)
    assert pl("3d_umi", 300.0, 10.0, 7.5, 2.0, False) == pytest.approx(expected, abs=ABS)


# --------------------------------------------------------------------------- NLOS ≥ LOS

HEIGHTS = {"uma": 25.0, "umi": 10.0, "rma": 35.0, "inh_mixed": 3.0, "inh_open": 3.0,
           "3d_uma": 25.0, "3d_umi": 10.0}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_nlos_is_never_below_los_and_above_somewhere(scenario):
    d2d = np.geomspace(10.0, 5000.0, 400)[:, None]
    h_ut = np.array([[1.5, 4.5, 10.5]]) if scenario != "inh_mixed" else np.array([[1.0]])
    h_bs = HEIGHTS[scenario]
    d3d = np.hypot(d2d, h_bs - h_ut)
    for fc in (0.8, 3.5, 28.0):
        # the formulas' shape beyond their ranges (RMa h_UT ≤ 10 m, InH 150 m): no warning
        los = pathloss_db(scenario, d2d, d3d, h_bs, h_ut, fc, True, warn=False)
        nlos = pathloss_db(scenario, d2d, d3d, h_bs, h_ut, fc, False, warn=False)
        assert np.all(nlos >= los)
        assert np.any(nlos > los + 1.0)


# --------------------------------------------------------------------------- LOS probability


def test_los_probability_by_hand():
    # Table 7.4.2-1
    cases = [
        ("rma", 5.0, 1.5, 1.0),
        ("rma", 500.0, 1.5, math.exp(-(500.0 - 10.0) / 1000.0)),
        ("umi", 18.0, 1.5, 1.0),
        ("umi", 50.0, 1.5, 18 / 50 + math.exp(-50 / 36) * (1 - 18 / 50)),
        ("uma", 100.0, 1.5, 18 / 100 + math.exp(-100 / 63) * (1 - 18 / 100)),
        ("uma", 100.0, 18.0, (18 / 100 + math.exp(-100 / 63) * (1 - 18 / 100))
         * (1 + ((18.0 - 13) / 10) ** 1.5 * 5 / 4 * (100 / 100) ** 3 * math.exp(-100 / 150))),
        ("inh_mixed", 1.0, 1.0, 1.0),
        ("inh_mixed", 3.0, 1.0, math.exp(-(3.0 - 1.2) / 4.7)),
        ("inh_mixed", 10.0, 1.0, math.exp(-(10.0 - 6.5) / 32.6) * 0.32),
        ("inh_open", 4.0, 1.0, 1.0),
        ("inh_open", 20.0, 1.0, math.exp(-(20.0 - 5) / 70.8)),
        ("inh_open", 100.0, 1.0, math.exp(-(100.0 - 49) / 211.7) * 0.54),
    ]
    for scenario, d, h_ut, expected in cases:
        assert float(los_probability(scenario, d, h_ut)) == pytest.approx(expected), scenario


def test_36873_los_probability_written_as_in_table_7_2_2():
    # TR 36.873 Table 7.2-2 forms, which must equal 38.901's UMi and UMa
    for d in (5.0, 18.0, 40.0, 250.0, 1200.0):
        umi = min(18 / d, 1) * (1 - math.exp(-d / 36)) + math.exp(-d / 36)
        assert float(los_probability("3d_umi", d)) == pytest.approx(umi)
        assert float(los_probability("umi", d)) == pytest.approx(umi)
        for h_ut in (1.5, 12.0, 16.5, 22.5):
            g = 1.25e-6 * d**3 * math.exp(-d / 150) if d > 18 else 0.0
            c = ((h_ut - 13) / 10) ** 1.5 * g if h_ut >= 13 else 0.0
            uma = (min(18 / d, 1) * (1 - math.exp(-d / 63)) + math.exp(-d / 63)) * (1 + c)
            assert float(los_probability("3d_uma", d, h_ut)) == pytest.approx(uma)
            assert float(los_probability("uma", d, h_ut)) == pytest.approx(uma)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_los_probability_is_a_probability_and_decreases(scenario):
    d = np.linspace(0.5, 5000.0, 20001)
    for h_ut in (1.5, 13.0, 22.5, 23.0):
        p = los_probability(scenario, d, h_ut)
        assert np.all((p >= 0.0) & (p <= 1.0))
        rises = d[1:][np.diff(p) > 1e-12]
        if scenario == "inh_open":
            # Table 7.4.2-1 pieces meet with a step: exp(−44/70.8) = 0.537 < 0.54 at 49 m
            assert rises.tolist() == [d[d > 49.0][0]]
        elif h_ut <= 13.0 or scenario not in ("uma", "3d_uma"):
            assert rises.size == 0
        assert p[-1] < 0.5


def test_uma_los_probability_is_clipped_to_one_past_18_m():
    # Table 7.4.2-1 at hUT = 22.5 m, d2D = 18.25 m gives 1.0028 > 1 as written
    d = 18.25
    raw = ((18 / d + math.exp(-d / 63) * (1 - 18 / d))
           * (1 + ((22.5 - 13) / 10) ** 1.5 * 5 / 4 * (d / 100) ** 3 * math.exp(-d / 150)))
    assert raw > 1.002
    assert float(los_probability("uma", d, 22.5)) == 1.0


# --------------------------------------------------------------------------- shadowing


def test_shadow_std():
    # 38.901 Table 7.4.1-1 (LOS, NLOS), Table 7.5-6 (O2I); 36.873 Table 7.3-6
    expected = {"uma": (4, 6, 7), "umi": (4, 7.82, 7), "inh_mixed": (3, 8.03, None),
                "inh_open": (3, 8.03, None), "3d_uma": (4, 6, 7), "3d_umi": (3, 4, 7)}
    for scenario, (s_los, s_nlos, s_o2i) in expected.items():
        assert float(shadow_std_db(scenario, True)) == s_los
        assert float(shadow_std_db(scenario, False)) == s_nlos
        if s_o2i is not None:
            assert float(shadow_std_db(scenario, False, o2i=True)) == s_o2i
    assert float(shadow_std_db("rma", False)) == 8.0
    assert float(shadow_std_db("rma", True, o2i=True)) == 8.0


def test_rma_los_shadow_std_follows_the_breakpoint():
    # d_BP = 2π·35·1.5·3.5e9/3e8 = 3848 m: σ = 4 dB before, 6 dB after
    d = np.array([100.0, 3800.0, 3900.0, 8000.0])
    got = shadow_std_db("rma", True, 3.5, d2d_m=d, h_bs_m=35.0, h_ut_m=1.5)
    assert got.tolist() == [4.0, 4.0, 6.0, 6.0]
    los = np.array([True, False, True, False])
    assert shadow_std_db("rma", los, 3.5, d2d_m=d).tolist() == [4.0, 8.0, 6.0, 8.0]


def test_decorrelation_distance():
    # 38.901 Table 7.5-6 parts 1-2 (SF); 36.873 Table 7.3-6
    expected = {"uma": (37, 50, 7), "umi": (10, 13, 7), "rma": (37, 120, 120),
                "inh_mixed": (10, 6, None), "inh_open": (10, 6, None),
                "3d_uma": (37, 50, 7), "3d_umi": (10, 13, 7)}
    for scenario, (c_los, c_nlos, c_o2i) in expected.items():
        assert float(decorrelation_distance_m(scenario, True)) == c_los
        assert float(decorrelation_distance_m(scenario, False)) == c_nlos
        if c_o2i is not None:
            assert float(decorrelation_distance_m(scenario, True, o2i=True)) == c_o2i
    los = np.array([True, False, True])
    o2i = np.array([False, False, True])
    assert decorrelation_distance_m("uma", los, o2i=o2i).tolist() == [37.0, 50.0, 7.0]


# --------------------------------------------------------------------------- O2I


def test_o2i_low_and_high_loss_by_hand():
    # 38.901 Tables 7.4.3-1 and 7.4.3-2 at 3.5 GHz, d_2D-in = 10 m, z = 1
    l_glass, l_irr, l_concrete = 2 + 0.2 * 3.5, 23 + 0.3 * 3.5, 5 + 4 * 3.5
    low = (5 - 10 * log10(0.3 * 10 ** (-l_glass / 10) + 0.7 * 10 ** (-l_concrete / 10))
           + 0.5 * 10.0 + 4.4 * 1.0)
    high = (5 - 10 * log10(0.7 * 10 ** (-l_irr / 10) + 0.3 * 10 ** (-l_concrete / 10))
            + 0.5 * 10.0 + 6.5 * 1.0)
    assert float(o2i_loss_db("low", 3.5, 10.0, 1.0)) == pytest.approx(low)
    assert float(o2i_loss_db("high", 3.5, 10.0, 1.0)) == pytest.approx(high)
    assert float(o2i_loss_db("low", 3.5, 10.0, 0.0)) == pytest.approx(low - 4.4)
    assert float(o2i_loss_db("high", 3.5, 10.0, -2.0)) == pytest.approx(high - 6.5 * 3)


def test_o2i_36873():
    # 36.873 Table 7.2-1 / 38.901 Table 7.4.3-3: 20 dB + 0.5 d_2D-in, σ_P = 0
    got = o2i_loss_db("36873", 2.0, np.array([0.0, 10.0, 25.0]), np.array([1.0, -3.0, 2.0]))
    assert got.tolist() == [20.0, 25.0, 32.5]


def test_indoor_distance():
    # 38.901 §7.4.3.1: min of two uniforms × 25 m; RMa 10 m; 36.873: one uniform × 25 m
    u1, u2 = np.array([0.2, 0.9, 0.5]), np.array([0.6, 0.1, 0.5])
    assert indoor_distance_m(u1, u2).tolist() == pytest.approx([5.0, 2.5, 12.5])
    assert indoor_distance_m(u1, u2, max_m=10.0).tolist() == pytest.approx([2.0, 1.0, 5.0])
    assert indoor_distance_m(u1).tolist() == pytest.approx([5.0, 22.5, 12.5])


# --------------------------------------------------------------------------- drop


def test_indoor_floor_height():
    # 38.901 Table 7.2-1: hUT = 3 (nfl − 1) + 1.5, Nfl ~ U{4..8}, nfl ~ U{1..Nfl}
    cases = [(0.0, 0.0, 1.5),      # N = 4, n = 1
             (0.0, 0.99, 10.5),    # N = 4, n = 1 + floor(3.96) = 4
             (0.5, 0.5, 10.5),     # N = 4 + floor(2.5) = 6, n = 1 + 3 = 4
             (0.99, 0.99, 22.5),   # N = 8, n = 8
             (0.99, 0.5, 13.5)]    # N = 8, n = 5
    for u_n, u_k, h in cases:
        assert float(indoor_floor_height_m(u_n, u_k)) == h
    u = np.random.default_rng(1).random((2, 100_000))
    h = indoor_floor_height_m(u[0], u[1])
    assert set(np.unique(h)) == {1.5 + 3 * k for k in range(8)}
    # P(nfl = 1) = mean over N of 1/N = (1/4 + 1/5 + 1/6 + 1/7 + 1/8)/5
    assert np.mean(h == 1.5) == pytest.approx((1/4 + 1/5 + 1/6 + 1/7 + 1/8) / 5, abs=0.005)


def test_uma_effective_height():
    # 38.901 Table 7.4.1-1 note 1 at d2D = 100 m, hUT = 22.5 m:
    # C = ((22.5 − 13)/10)^1.5 · (5/4)(100/100)^3 exp(−100/150), P(hE = 1) = 1/(1 + C)
    c = ((22.5 - 13) / 10) ** 1.5 * 5 / 4 * math.exp(-100 / 150)
    p1 = 1 / (1 + c)
    assert float(uma_effective_height_m(100.0, 22.5, p1 - 0.01, 0.7)) == 1.0
    # otherwise uniform on {12, 15, 18, 21}
    for u_h, h_e in ((0.0, 12.0), (0.3, 15.0), (0.6, 18.0), (0.99, 21.0)):
        assert float(uma_effective_height_m(100.0, 22.5, p1 + 0.01, u_h)) == h_e
    # hUT = 16.5 m: set {12, 15}
    assert float(uma_effective_height_m(100.0, 16.5, 0.999, 0.6)) == 15.0
    # no choice when C = 0: d2D ≤ 18 m or hUT < 13 m
    assert float(uma_effective_height_m(18.0, 22.5, 0.999, 0.99)) == 1.0
    assert float(uma_effective_height_m(100.0, 12.9, 0.999, 0.99)) == 1.0
    # 13 ≤ hUT < 13.5: C > 0 but the set is empty; 12 m
    assert float(uma_effective_height_m(100.0, 13.2, 0.9999999, 0.5)) == 12.0


def test_uma_effective_height_frequency():
    d2d = 300.0
    c = ((19.5 - 13) / 10) ** 1.5 * 5 / 4 * (300 / 100) ** 3 * math.exp(-300 / 150)
    u = np.random.default_rng(2).random((2, 200_000))
    h_e = uma_effective_height_m(d2d, 19.5, u[0], u[1])
    assert np.mean(h_e == 1.0) == pytest.approx(1 / (1 + c), abs=0.005)
    assert set(np.unique(h_e)) == {1.0, 12.0, 15.0, 18.0}


# --------------------------------------------------------------------------- vectorization


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_pathloss_broadcasts_and_matches_scalar_calls(scenario):
    rng = np.random.default_rng(3)
    h_bs = HEIGHTS[scenario]
    d2d = rng.uniform(10.0, 2000.0, (5, 1))
    h_ut = np.array([[1.5, 7.5, 13.5]])
    d3d = np.hypot(d2d, h_bs - h_ut)
    los = rng.random((5, 3)) < 0.5
    got = pathloss_db(scenario, d2d, d3d, h_bs, h_ut, 3.5, los, warn=False)
    assert got.shape == (5, 3)
    for i in range(5):
        for j in range(3):
            one = pathloss_db(scenario, float(d2d[i, 0]), float(d3d[i, j]), h_bs,
                              float(h_ut[0, j]), 3.5, bool(los[i, j]), warn=False)
            assert float(one) == pytest.approx(got[i, j], abs=1e-12)


def test_shapes_of_the_other_functions():
    d2d = np.linspace(10.0, 1000.0, 7)[:, None]
    h_ut = np.array([[1.5, 22.5]])
    assert los_probability("uma", d2d, h_ut).shape == (7, 2)
    assert los_probability("rma", d2d, h_ut).shape == (7, 2)
    assert uma_effective_height_m(d2d, h_ut, np.full((7, 2), 0.5), 0.5).shape == (7, 2)
    assert indoor_floor_height_m(np.zeros(4)[:, None], np.zeros(3)).shape == (4, 3)
    assert o2i_loss_db("low", 3.5, np.zeros((4, 1)), np.zeros(3)).shape == (4, 3)
    assert shadow_std_db("uma", np.array([True, False]), o2i=np.zeros((3, 1), bool)).shape == (3, 2)
    # InH ignores d2D in the formula but keeps its shape
    for los in (True, False, np.ones((2, 3), bool)):
        got = pathloss_db("inh_open", np.full((2, 3), 5.0), 5.0, 3.0, 1.0, 3.5, los)
        assert got.shape == (2, 3)
    # per-link h_E array for UMa
    h_e = np.array([1.0, 12.0])
    got = pathloss_db("uma", 3000.0, math.hypot(3000.0, 5.5), 25.0, 19.5, 2.0, True, h_e_m=h_e)
    assert got.shape == (2,) and got[1] > got[0]


# --------------------------------------------------------------------------- bad input


def test_unknown_scenario_names_the_valid_ones():
    for call in (lambda: pathloss_db("UMa", 100.0, 100.0, 25.0, 1.5, 3.5, True),
                 lambda: los_probability("suburban", 100.0),
                 lambda: shadow_std_db("inh", True),
                 lambda: decorrelation_distance_m(None, True)):
        with pytest.raises(ValidationError) as err:
            call()
        assert "'uma'" in str(err.value) and "'3d_umi'" in str(err.value)


def test_bad_frequency():
    with pytest.raises(ValidationError, match="frequency_ghz"):
        pathloss_db("uma", 100.0, 100.0, 25.0, 1.5, 3.5e9, True)  # Hz, not GHz
    with pytest.raises(ValidationError, match="frequency_ghz"):
        pathloss_db("uma", 100.0, 100.0, 25.0, 1.5, 0.0, True)
    with pytest.raises(ValidationError, match="frequency_ghz"):
        o2i_loss_db("low", "3.5", 10.0, 0.0)
    with pytest.warns(UserWarning, match="frequency_ghz") as record:
        pathloss_db("uma", 100.0, 100.0, 25.0, 1.5, 200.0, True)
    assert record[0].filename == __file__  # the warning points at the caller
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pathloss_db("uma", 100.0, 100.0, 25.0, 1.5, 3.5, True)


def test_bad_heights_and_arrays():
    with pytest.raises(ValidationError, match="h_ut_m"):
        pathloss_db("uma", 100.0, 100.0, 25.0, -1.5, 3.5, True)
    with pytest.raises(ValidationError, match="h_bs_m"):
        pathloss_db("uma", 100.0, 100.0, float("nan"), 1.5, 3.5, True)
    with pytest.raises(ValidationError, match="d2d_m"):
        pathloss_db("uma", np.array(["100"]), 100.0, 25.0, 1.5, 3.5, True)
    with pytest.raises(ValidationError, match="los"):
        pathloss_db("uma", 100.0, 100.0, 25.0, 1.5, 3.5, np.array([1, 0]))
    with pytest.raises(ValidationError, match="broadcast"):
        pathloss_db("uma", np.ones(3) * 100, np.ones(4) * 100, 25.0, 1.5, 3.5, True)
    with pytest.raises(ValidationError, match="h_e_m"):
        pathloss_db("umi", 100.0, 100.0, 10.0, 1.5, 3.5, True, h_e_m=12.0)
    with pytest.raises(ValidationError, match="h_e_m"):
        pathloss_db("uma", 100.0, 100.0, 25.0, 1.5, 3.5, True, h_e_m=12.0)  # above h_UT
    with pytest.raises(ValidationError, match="rma_"):
        pathloss_db("uma", 100.0, 100.0, 25.0, 1.5, 3.5, True, rma_w_street_m=30.0)
    with pytest.raises(ValidationError, match="rma_h_building_m"):
        pathloss_db("rma", 100.0, 100.0, 35.0, 1.5, 3.5, True, rma_h_building_m=0.0)


def test_bad_input_of_the_other_functions():
    with pytest.raises(ValidationError, match="model"):
        o2i_loss_db("medium", 3.5, 10.0, 0.0)
    with pytest.raises(ValidationError, match="frequency_ghz and d2d_m"):
        shadow_std_db("rma", True)
    with pytest.raises(ValidationError, match="O2I"):
        shadow_std_db("inh_open", False, o2i=True)
    with pytest.raises(ValidationError, match="O2I"):
        decorrelation_distance_m("inh_mixed", True, o2i=True)
    with pytest.raises(ValidationError, match="max_m"):
        indoor_distance_m(0.5, 0.5, max_m=-1.0)
    with pytest.raises(ValidationError, match="u_choice"):
        uma_effective_height_m(100.0, 22.5, np.array([None]), 0.5)
    with pytest.raises(ValidationError, match="breakpoint"):
        breakpoint_distance_m("inh_open", 3.0, 1.0, 3.5)
