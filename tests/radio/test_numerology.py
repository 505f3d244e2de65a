"""Tests of cellopt.radio.numerology: the N_RB tables, subcarriers, RSRP offset, numerology.

Expected values are typed by hand from the standards, not computed from the module:
TS 36.101 Table 5.6-1 (LTE), TS 38.101-1 Table 5.3.2-1 (NR FR1, Release 17), TS 38.101-2
Tables 5.3.2-1 and 5.3.3-1 (NR FR2), TS 38.211 Tables 4.2-1 and 4.3.2-1 (numerology).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from cellopt.errors import ValidationError
from cellopt.radio import numerology as nm
from cellopt.radio.numerology import (
    LTE_N_RB,
    NR_FR1_N_RB,
    NR_FR2_N_RB,
    numerology,
    prb_count,
    rsrp_offset_db,
    subcarriers,
)


def refused(call, *args, **kwargs) -> str:
    """The message of the ValidationError `call(*args, **kwargs)` raises."""
    with pytest.raises(ValidationError) as info:
        call(*args, **kwargs)
    return str(info.value)


# ------------------------------------------------------------------ table entries
@pytest.mark.parametrize(("bandwidth_mhz", "scs_khz", "fr", "n_rb"), [
    # TS 38.101-1 Table 5.3.2-1 (FR1)
    (5, 15, None, 25),
    (20, 15, None, 106),
    (35, 15, None, 188),
    (50, 15, None, 270),
    (5, 30, None, 11),
    (40, 30, None, 106),
    (45, 30, None, 119),
    (70, 30, None, 189),
    (100, 30, None, 273),
    (10, 60, None, 11),
    (35, 60, None, 44),
    (90, 60, None, 121),
    (50, 60, "fr1", 65),
    (100, 60, "fr1", 135),
    # TS 38.101-2 Table 5.3.2-1 (FR2)
    (50, 60, "fr2", 66),
    (100, 60, "fr2", 132),
    (200, 60, None, 264),
    (50, 120, None, 32),
    (100, 120, None, 66),
    (200, 120, None, 132),
    (400, 120, None, 264),
])
def test_nr_table_entries(bandwidth_mhz, scs_khz, fr, n_rb):
    assert prb_count(bandwidth_mhz, scs_khz, rat="nr", fr=fr) == n_rb


@pytest.mark.parametrize(("bandwidth_mhz", "n_rb"),
                         [(1.4, 6), (3, 15), (5, 25), (10, 50), (15, 75), (20, 100)])
def test_lte_table_entries(bandwidth_mhz, n_rb):
    assert prb_count(bandwidth_mhz, rat="lte") == n_rb
    assert prb_count(bandwidth_mhz, 15, rat="lte") == n_rb


# TS 38.101-1 Table 5.3.2-1 row by row, as printed (0 for N/A); columns 5, 10, 15, 20, 25,
# 30, 35, 40, 45, 50, 60, 70, 80, 90, 100 MHz.
FR1_ROWS = {
    15: [25, 52, 79, 106, 133, 160, 188, 216, 242, 270, 0, 0, 0, 0, 0],
    30: [11, 24, 38, 51, 65, 78, 92, 106, 119, 133, 162, 189, 217, 245, 273],
    60: [0, 11, 18, 24, 31, 38, 44, 51, 58, 65, 79, 93, 107, 121, 135],
}


@pytest.mark.parametrize("scs", [15, 30, 60])
def test_every_fr1_entry(scs):
    columns = [5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90, 100]
    for bw, expected in zip(columns, FR1_ROWS[scs], strict=True):
        if expected:
            assert prb_count(bw, scs, fr="fr1") == expected, bw
        else:
            assert "N/A" in refused(prb_count, bw, scs, fr="fr1"), bw


def test_fr1_columns_and_na_entries_are_those_of_the_standard():
    columns = [5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90, 100]
    assert sorted(NR_FR1_N_RB) == [15, 30, 60]
    for scs, row in NR_FR1_N_RB.items():
        assert sorted(row) == columns, scs
    na = {(scs, bw) for scs, row in NR_FR1_N_RB.items() for bw, n in row.items() if n is None}
    assert na == {(15, 60), (15, 70), (15, 80), (15, 90), (15, 100), (60, 5)}


def test_fr2_columns_and_na_entries_are_those_of_the_standard():
    assert sorted(NR_FR2_N_RB) == [60, 120]
    for scs, row in NR_FR2_N_RB.items():
        assert sorted(row) == [50, 100, 200, 400], scs
    na = {(scs, bw) for scs, row in NR_FR2_N_RB.items() for bw, n in row.items() if n is None}
    assert na == {(60, 400)}


# TS 38.101-2 Table 5.3.3-1: minimum guard band [kHz] per channel bandwidth and SCS; its
# NOTE gives it as (BW · 1000 − N_RB · SCS · 12) / 2 − SCS / 2, so N_RB must reproduce it.
FR2_MIN_GUARDBAND_KHZ = {60: {50: 1210, 100: 2450, 200: 4930},
                         120: {50: 1900, 100: 2420, 200: 4900, 400: 9860}}


@pytest.mark.parametrize("scs", [60, 120])
def test_fr2_n_rb_reproduces_the_minimum_guard_bands(scs):
    for bw, guard_khz in FR2_MIN_GUARDBAND_KHZ[scs].items():
        n_rb = prb_count(bw, scs, fr="fr2")
        assert (bw * 1000 - n_rb * scs * 12) / 2 - scs / 2 == guard_khz, bw


def test_fr1_15khz_50mhz_guard_band_is_692_5_khz():
    # TS 38.101-1 Table 5.3.3-1 entry (15 kHz, 50 MHz)
    n_rb = prb_count(50, 15)
    assert (50 * 1000 - n_rb * 15 * 12) / 2 - 15 / 2 == 692.5


def test_every_carrier_fits_its_channel_and_grows_with_bandwidth():
    tables = [("lte", 15, LTE_N_RB)] + [
        (fr, scs, row) for fr, table in (("fr1", NR_FR1_N_RB), ("fr2", NR_FR2_N_RB))
        for scs, row in table.items()]
    for name, scs, row in tables:
        entries = sorted((bw, n) for bw, n in row.items() if n is not None)
        for bw, n in entries:
            assert 12 * n * scs < bw * 1000, (name, scs, bw)  # guard band > 0
            assert n <= 275, (name, scs, bw)  # TS 38.331 maxNrofPhysicalResourceBlocks
        counts = [n for _, n in entries]
        assert counts == sorted(counts) and len(set(counts)) == len(counts), (name, scs)


def test_wider_spacing_has_fewer_resource_blocks_in_the_same_channel():
    assert prb_count(50, 15) > prb_count(50, 30) > prb_count(50, 60, fr="fr1")
    assert prb_count(100, 60, fr="fr2") > prb_count(100, 120)


def test_numpy_scalars_and_floats_are_accepted_and_an_int_returned():
    n = prb_count(np.float64(100.0), np.int64(30))
    assert n == 273 and type(n) is int
    assert prb_count(10.0, 15.0, rat="lte") == 50
    assert prb_count(1.4 + 1e-12, rat="lte") == 6


def test_rat_and_fr_are_case_insensitive():
    assert prb_count(10, rat="LTE") == 50
    assert prb_count(100, 60, rat="NR", fr="FR2") == 132


# ------------------------------------------------- subcarriers and the RSRP offset
def test_lte_10_mhz_has_600_subcarriers_and_a_27_78_db_offset():
    assert subcarriers(10, rat="lte") == 600
    assert rsrp_offset_db(10, rat="lte") == pytest.approx(27.7815, abs=1e-4)


def test_rsrp_offset_counts_the_transmission_bandwidth_not_the_channel():
    # W / 15 kHz = 666.7 subcarriers, 28.24 dB: 0.46 dB more than the 600 that exist
    w_over_scs_db = 10 * math.log10(10e6 / 15e3)
    assert w_over_scs_db == pytest.approx(28.2391, abs=1e-4)
    assert w_over_scs_db - rsrp_offset_db(10, rat="lte") == pytest.approx(0.4576, abs=1e-4)


@pytest.mark.parametrize(("args", "kwargs", "n_sc", "offset_db"), [
    ((20,), {"rat": "lte"}, 1200, 30.7918),
    ((1.4,), {"rat": "lte"}, 72, 18.5733),
    ((100, 30), {}, 3276, 35.1534),
    ((20, 15), {}, 1272, 31.0449),
    ((400, 120), {}, 3168, 35.0079),
    ((100, 60), {"fr": "fr1"}, 1620, 32.0952),
])
def test_subcarriers_and_offsets(args, kwargs, n_sc, offset_db):
    assert subcarriers(*args, **kwargs) == n_sc
    assert rsrp_offset_db(*args, **kwargs) == pytest.approx(offset_db, abs=1e-4)


# ------------------------------------------------------------------- numerology
@pytest.mark.parametrize(("scs", "mu", "slots", "slot_ms"),
                         [(15, 0, 1, 1.0), (30, 1, 2, 0.5), (60, 2, 4, 0.25), (120, 3, 8, 0.125)])
def test_numerology(scs, mu, slots, slot_ms):
    n = numerology(scs)
    assert (n.mu, n.subcarrier_spacing_khz, n.slots_per_subframe) == (mu, scs, slots)
    assert n.slot_ms == slot_ms and n.symbols_per_slot == 14


@pytest.mark.parametrize("scs", [7.5, 45, 240, 480, 0, -15])
def test_numerology_refuses_other_spacings(scs):
    assert "fix: use one of 15, 30, 60, 120" in refused(numerology, scs)


# ----------------------------------------------------------------------- errors
@pytest.mark.parametrize(("bandwidth_mhz", "scs", "table", "valid"), [
    (60, 15, "TS 38.101-1", "5, 10, 15, 20, 25, 30, 35, 40, 45, 50 MHz"),
    (100, 15, "TS 38.101-1", "5, 10, 15, 20, 25, 30, 35, 40, 45, 50 MHz"),
    (5, 60, "TS 38.101-1", "10, 15, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90, 100 MHz (FR1)"),
    (400, 60, "TS 38.101-2", "50, 100, 200 MHz (FR2)"),
])
def test_na_pairs_are_refused_with_the_valid_bandwidths(bandwidth_mhz, scs, table, valid):
    message = refused(prb_count, bandwidth_mhz, scs)
    assert f"bandwidth_mhz={bandwidth_mhz} at subcarrier_spacing_khz={scs} is N/A in {table}" \
        in message
    assert f"fix: at {scs} kHz use one of" in message and valid in message


def test_na_pair_names_the_spacings_that_have_the_bandwidth():
    assert "for 60 MHz, use 30 or 60 kHz (FR1)" in refused(prb_count, 60, 15)
    assert "for 5 MHz, use 15 or 30 kHz (FR1)" in refused(prb_count, 5, 60)
    assert "for 400 MHz, use 120 kHz (FR2)" in refused(prb_count, 400, 60)


def test_unknown_spacing_is_refused_with_the_nr_numerologies():
    assert refused(prb_count, 10, 45) == ("subcarrier_spacing_khz=45 is not an NR numerology; "
                                          "fix: use one of 15, 30, 60, 120")
    assert "SS/PBCH" in refused(prb_count, 100, 240)
    assert "give kHz, not Hz: subcarrier_spacing_khz=30" in refused(prb_count, 100, 30_000)


@pytest.mark.parametrize(("bandwidth_mhz", "scs", "rat", "nearest"), [
    (12, 15, "nr", "nearest: 10, 15 MHz"),
    (2, 30, "nr", "nearest: 5 MHz"),
    (150, 30, "nr", "nearest: 100 MHz"),
    (300, 120, "nr", "nearest: 200, 400 MHz"),
    (12, 15, "lte", "nearest: 10, 15 MHz"),
    (1.5, 15, "lte", "nearest: 1.4, 3 MHz"),
])
def test_unknown_bandwidth_is_refused_with_the_nearest(bandwidth_mhz, scs, rat, nearest):
    message = refused(prb_count, bandwidth_mhz, scs, rat=rat)
    assert message.startswith(f"bandwidth_mhz={bandwidth_mhz} is not an ")
    assert nearest in message


def test_unknown_bandwidth_lists_the_valid_ones_of_its_spacing():
    message = refused(prb_count, 12, 15)
    assert "use one of 5, 10, 15, 20, 25, 30, 35, 40, 45, 50 MHz" in message
    assert "use one of 50, 100, 200, 400 MHz" in refused(prb_count, 300, 120)
    assert "1.4, 3, 5, 10, 15, 20 MHz" in refused(prb_count, 12, rat="lte")


def test_release_18_3_mhz_is_explained():
    assert "Release 18" in refused(prb_count, 3, 15)
    assert "Release 18" not in refused(prb_count, 3, 30)


def test_bandwidth_of_another_range_names_the_spacings_that_have_it():
    message = refused(prb_count, 200, 30)
    assert "for 200 MHz, use 60 or 120 kHz (FR2)" in message


@pytest.mark.parametrize(("value", "scs", "rat", "fix"), [
    (1e7, 15, "nr", "give MHz, not Hz: bandwidth_mhz=10 for 1e+07 Hz"),
    (1e8, 30, "nr", "give MHz, not Hz: bandwidth_mhz=100 for 1e+08 Hz"),
    (4e8, 120, "nr", "give MHz, not Hz: bandwidth_mhz=400 for 4e+08 Hz"),
    (1e7, 15, "lte", "give MHz, not Hz: bandwidth_mhz=10 for 1e+07 Hz"),
    (1.4e6, 15, "lte", "give MHz, not Hz: bandwidth_mhz=1.4 for 1.4e+06 Hz"),
    (20_000, 15, "nr", "give MHz, not kHz: bandwidth_mhz=20 for 20000 kHz"),
    (3.3e9, 30, "nr", "give MHz (10 MHz = 1e7 Hz)"),
])
def test_bandwidth_in_hz_gets_a_give_mhz_hint(value, scs, rat, fix):
    assert fix in refused(prb_count, value, scs, rat=rat)


def test_lte_at_30_khz_is_refused():
    message = refused(prb_count, 10, 30, rat="lte")
    assert message.startswith("subcarrier_spacing_khz=30 is not an LTE subcarrier spacing")
    assert "fix: use 15" in message and "rat='nr'" in message


@pytest.mark.parametrize(("bandwidth_mhz", "fr1", "fr2"), [(50, 65, 66), (100, 135, 132)])
def test_60_khz_in_both_ranges_needs_fr(bandwidth_mhz, fr1, fr2):
    message = refused(prb_count, bandwidth_mhz, 60)
    assert f"FR1: {fr1} PRB" in message and f"FR2: {fr2} PRB" in message
    assert "fix: pass fr='fr1'" in message and "fr='fr2'" in message


def test_fr_restricts_the_lookup_to_its_table():
    assert "fr='fr2'" in refused(prb_count, 100, 120, fr="fr1")
    assert "fr='fr1'" in refused(prb_count, 20, 15, fr="fr2")
    message = refused(prb_count, 200, 60, fr="fr1")
    assert "TS 38.101-1" in message and "TS 38.101-2" not in message
    assert "nearest: 100 MHz" in message


@pytest.mark.parametrize(("kwargs", "start"), [
    ({"rat": "5g"}, "rat='5g' is not known"),
    ({"rat": None}, "rat=None is not known"),
    ({"fr": "fr3"}, "fr='fr3' is not known"),
    ({"fr": 1}, "fr=1 is not known"),
    ({"rat": "lte", "fr": "fr1"}, "fr='fr1' is given with rat='lte'"),
])
def test_bad_rat_or_fr_is_refused(kwargs, start):
    assert refused(prb_count, 10, 15, **kwargs).startswith(start)


@pytest.mark.parametrize("value", ["10", True, None, [10], math.nan, math.inf, -10, 0, 10**400])
def test_bandwidth_that_is_not_a_positive_number_is_refused(value):
    message = refused(prb_count, value, 15)
    assert message.startswith("bandwidth_mhz=") and "fix: give the channel bandwidth in MHz" \
        in message


@pytest.mark.parametrize("value", ["30", False, None, math.nan, -math.inf, 10**400])
def test_spacing_that_is_not_a_number_is_refused(value):
    message = refused(prb_count, 10, value)
    assert message.startswith("subcarrier_spacing_khz=") and "fix:" in message


@pytest.mark.parametrize("call", [subcarriers, rsrp_offset_db])
@pytest.mark.parametrize(("args", "kwargs"), [
    ((60, 15), {}), ((10, 45), {}), ((1e7, 15), {}), ((10, 30), {"rat": "lte"}),
    ((100, 60), {}),
])
def test_subcarriers_and_offset_refuse_what_prb_count_refuses(call, args, kwargs):
    assert refused(call, *args, **kwargs) == refused(prb_count, *args, **kwargs)


def test_errors_are_value_errors_naming_the_argument_and_the_fix():
    for args, kwargs, name in [((60, 15), {}, "bandwidth_mhz"),
                               ((10, 45), {}, "subcarrier_spacing_khz"),
                               ((1e7,), {}, "bandwidth_mhz"), ((10,), {"rat": "x"}, "rat")]:
        with pytest.raises(ValueError, match=re.escape(name)) as info:
            prb_count(*args, **kwargs)
        assert "; fix: " in str(info.value)


def test_all_lists_the_public_names():
    assert sorted(nm.__all__) == sorted(
        ["LTE_N_RB", "NR_FR1_N_RB", "NR_FR2_N_RB", "NR_SUBCARRIER_SPACINGS_KHZ",
         "SUBCARRIERS_PER_RB", "Numerology", "numerology", "prb_count", "rsrp_offset_db",
         "subcarriers"])
    assert all(hasattr(nm, name) for name in nm.__all__)
