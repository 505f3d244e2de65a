"""COST-231 Hata (cellopt.radio.cost231) against values computed by hand, its stated ranges,
and the model in the link table.

Each expected loss is the formula written out with literal numbers (f in MHz, heights in
metres, d in km), every term evaluated by hand to six decimals:

    L = 46.3 + 33.9 log10 f − 13.82 log10 h_b − a(h_m) + (44.9 − 6.55 log10 h_b) log10 d + C_M,
    a(h_m) = (1.1 log10 f − 0.7) h_m − (1.56 log10 f − 0.8).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cellopt import ValidationError, radio
from cellopt.network import Network, cells_frame, users_frame
from cellopt.radio import Cost231Hata, RadioModel, coupling_db, tr36814_pico
from cellopt.radio.cost231 import VALIDITY, cost231_hata_db

X0, Y0 = 500_000.0, 1_000_000.0  # false origin of the synthetic CRS
CRS = "EPSG:32631"
ABS = 1e-5  # dB: the hand values are rounded to six decimals


# --------------------------------------------------------------------------- by hand


def test_urban_at_1800_mhz_and_one_km():
    # f = 1800 MHz, h_b = 30 m, h_m = 1.5 m, d = 1 km, metropolitan centre (C_M = 3 dB):
    # log10 1800 = 3.255273, log10 30 = 1.477121, log10 1 = 0
    # 33.9 · 3.255273 = 110.353738;  13.82 · 1.477121 = 20.413816
    # a(1.5) = (1.1 · 3.255273 − 0.7) · 1.5 − (1.56 · 3.255273 − 0.8)
    #        = 2.880800 · 1.5 − 4.278225 = 4.321200 − 4.278225 = 0.042975
    # L = 46.3 + 110.353738 − 20.413816 − 0.042975 + 0 + 3 = 139.196947
    assert float(cost231_hata_db(1000.0, 30.0, 1.5, 1.8)) == pytest.approx(139.196947, abs=ABS)


def test_suburban_at_2000_mhz_and_five_km():
    # f = 2000 MHz, h_b = 50 m, h_m = 1.5 m, d = 5 km, suburban centre (C_M = 0 dB):
    # log10 2000 = 3.301030, log10 50 = 1.698970, log10 5 = 0.698970
    # 33.9 · 3.301030 = 111.904917;  13.82 · 1.698970 = 23.479765
    # a(1.5) = (1.1 · 3.301030 − 0.7) · 1.5 − (1.56 · 3.301030 − 0.8)
    #        = 2.931133 · 1.5 − 4.349607 = 4.3966995 − 4.3496068 = 0.0470927
    # (44.9 − 6.55 · 1.698970) · 0.698970 = 33.771746 · 0.698970 = 23.605438
    # L = 46.3 + 111.904917 − 23.479765 − 0.047093 + 23.605438 + 0 = 158.283497
    loss = cost231_hata_db(5000.0, 50.0, 1.5, 2.0, "suburban")
    assert float(loss) == pytest.approx(158.283496, abs=ABS)


def test_urban_at_the_far_corner_of_the_ranges():
    # f = 1500 MHz, h_b = 100 m, h_m = 10 m, d = 20 km, C_M = 3 dB:
    # log10 1500 = 3.1760913, log10 100 = 2, log10 20 = 1.3010300
    # a(10) = (1.1 · 3.1760913 − 0.7) · 10 − (1.56 · 3.1760913 − 0.8)
    #       = 27.9370038 − 4.1547024 = 23.7823014
    # L = 46.3 + 33.9 · 3.1760913 − 13.82 · 2 − 23.782301 + (44.9 − 13.1) · 1.301030 + 3
    #   = 46.3 + 107.669494 − 27.64 − 23.782301 + 41.372754 + 3 = 146.919947
    assert float(cost231_hata_db(20_000.0, 100.0, 10.0, 1.5)) == pytest.approx(146.919946, abs=ABS)


def test_urban_is_suburban_plus_3_db_and_broadcasts():
    d = np.array([[1000.0], [2500.0], [9000.0]])  # users (3, 1) against cells (1, 2)
    h_b = np.array([[30.0, 60.0]])
    urban = cost231_hata_db(d, h_b, 1.5, 1.8)
    assert urban.shape == (3, 2)
    np.testing.assert_allclose(urban - cost231_hata_db(d, h_b, 1.5, 1.8, "suburban"), 3.0,
                               rtol=0, atol=1e-12)
    for i in range(3):
        for j in range(2):
            assert urban[i, j] == float(cost231_hata_db(d[i, 0], h_b[0, j], 1.5, 1.8))
    # a decade of distance adds 44.9 − 6.55 log10 h_b: 44.9 − 6.55 · 1.477121 = 35.224856 dB
    step = cost231_hata_db(10_000.0, 30.0, 1.5, 1.8) - cost231_hata_db(1000.0, 30.0, 1.5, 1.8)
    assert float(step) == pytest.approx(35.224856, abs=ABS)


# --------------------------------------------------------------------------- ranges


def test_undefined_values_are_refused():
    for bad in (0.0, -5.0, np.nan, np.inf):
        with pytest.raises(ValidationError, match=r"d_2D is not a finite number > 0"):
            cost231_hata_db(np.array([1000.0, bad]), 30.0, 1.5, 1.8)
    with pytest.raises(ValidationError, match=r"cell_height_m is not a finite number > 0"):
        cost231_hata_db(1000.0, 0.0, 1.5, 1.8)
    with pytest.raises(ValidationError, match=r"user_height_m is not a finite number > 0"):
        cost231_hata_db(1000.0, 30.0, -1.5, 1.8)
    with pytest.raises(ValidationError, match=r"frequency_ghz"):
        cost231_hata_db(1000.0, 30.0, 1.5, 0.0)
    with pytest.raises(ValidationError, match=r"frequency_ghz"):
        cost231_hata_db(1000.0, 30.0, 1.5, "1.8")
    with pytest.raises(ValidationError, match=r"distance_m.*cannot be read as numbers"):
        cost231_hata_db(np.array(["1000"]), 30.0, 1.5, 1.8)
    with pytest.raises(ValidationError, match=r"do not broadcast"):
        cost231_hata_db(np.ones(3) * 1000.0, np.ones(2) * 30.0, 1.5, 1.8)
    with pytest.raises(ValidationError, match=r"environment='rural'.*'urban', 'suburban'"):
        cost231_hata_db(1000.0, 30.0, 1.5, 1.8, "rural")


@pytest.mark.parametrize("args, match", [
    ((1000.0, 30.0, 1.5, 0.9), r"specified for 1\.5–2 GHz .*got frequency_ghz=0\.9 GHz"),
    ((np.array([500.0, 2000.0]), 30.0, 1.5, 1.8),
     r"1000 m ≤ d_2D ≤ 20000 m .*1 of 2 links are outside \(500 m\)"),
    ((2000.0, 25.0, 1.5, 1.8), r"30 m ≤ h_BS ≤ 200 m .*cell_height_m: 1 of 1 links .*\(25 m\)"),
    ((2000.0, 30.0, 15.0, 1.8), r"1 m ≤ h_UT ≤ 10 m .*user_height_m: 1 of 1 links .*\(15 m\)"),
])
def test_outside_the_stated_ranges_warns_and_is_evaluated_as_written(args, match):
    with pytest.warns(UserWarning, match=match) as caught:
        loss = cost231_hata_db(*args)
    assert len(caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(loss, cost231_hata_db(*args, warn=False))  # not clamped
    # 500 m is evaluated at log10 0.5 = −0.301030: 139.196948 − 35.224856 · 0.301030
    # = 139.196948 − 10.603738 = 128.593210 (a decade is 35.224856 dB at h_b = 30 m)
    near = cost231_hata_db(500.0, 30.0, 1.5, 1.8, warn=False)
    assert float(near) == pytest.approx(128.593210, abs=ABS)


def test_the_validity_is_the_reports():
    assert VALIDITY.frequency_ghz == (1.5, 2.0) and VALIDITY.distance_m == (1000.0, 20_000.0)
    assert VALIDITY.h_bs_m == (30.0, 200.0) and VALIDITY.h_ut_m == (1.0, 10.0)


# --------------------------------------------------------------------------- the model


def one_cell(user_xy, *, height_m=30.0) -> Network:
    cells = cells_frame([X0], [Y0], crs=CRS, tier="macro", tx_power_dbm=43.0,
                        antenna_gain_dbi=8.0, height_m=height_m)
    xy = np.asarray(user_xy, float)
    users = users_frame(X0 + xy[:, 0], Y0 + xy[:, 1], crs=CRS)
    return Network(cells=cells, users=users, bandwidth_mhz=10.0).validate()


def hata_model(**options) -> RadioModel:
    """Macros follow COST-231 Hata at 1.8 GHz, no shadowing (the radio model's)."""
    return RadioModel(pathloss={"macro": Cost231Hata(1.8, **options), "pico": tr36814_pico,
                                "femto": tr36814_pico},
                      shadowing_std_db={"macro": 0.0, "pico": 0.0, "femto": 0.0})


def test_the_model_is_a_propagation_and_checks_what_it_is_given():
    assert isinstance(Cost231Hata(1.8), radio.Propagation)
    with pytest.raises(ValidationError, match=r"frequency_ghz is missing"):
        Cost231Hata()
    with pytest.raises(ValidationError, match=r"Cost231Hata.environment='dense'"):
        Cost231Hata(1.8, "dense")
    with pytest.raises(ValidationError, match=r"Cost231Hata.user_height_m"):
        Cost231Hata(1.8, user_height_m=0.0)
    with pytest.warns(UserWarning, match=r"specified for 1\.5–2 GHz .*frequency_ghz=3\.5 GHz"):
        Cost231Hata(3.5)
    with pytest.warns(UserWarning, match=r"Cost231Hata.user_height_m: 1 of 1 users .*\(12 m\)"):
        Cost231Hata(1.8, user_height_m=12.0)


def test_a_link_is_the_formula_by_hand():
    """An omni cell of 8 dBi at 30 m, users at 1 km and 3 km: coupling gain 8 − L."""
    net = one_cell([(1000.0, 0.0), (0.0, 3000.0)])
    gain = coupling_db(net, model=hata_model(), rng=1)
    # 1 km: L = 139.196947 (test_urban_at_1800_mhz_and_one_km); 3 km adds
    # 35.224856 · log10 3 = 35.224856 · 0.477121 = 16.806527: L = 156.003474
    np.testing.assert_allclose(gain[:, 0], [8.0 - 139.196947, 8.0 - 156.003474], rtol=0,
                               atol=ABS)
    suburban = coupling_db(net, model=hata_model(environment="suburban"), rng=1)
    np.testing.assert_allclose(suburban - gain, 3.0, rtol=0, atol=1e-9)


def test_binding_warns_once_about_cells_and_distances_outside_the_ranges():
    """Cells at 25 m and users at 400 m: each range warns once, when the model is bound;
    the links themselves are quiet."""
    net = one_cell([(400.0, 0.0), (2000.0, 0.0), (0.0, 5000.0)], height_m=25.0)
    with pytest.warns(UserWarning) as caught:
        links = radio.link_table(net, model=hata_model(), rng=1)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2, messages
    assert "30 m ≤ h_BS ≤ 200 m" in messages[0] and "the cells' height_m: 1 of 1 cells" in messages[0]
    assert "1000 m ≤ d_2D ≤ 20000 m" in messages[1] and "1 of 3 user–cell pairs" in messages[1]
    assert len(links) == 3


def test_the_far_field_uses_the_median_height_of_its_cells():
    net = one_cell([(2000.0, 0.0)], height_m=45.0)
    model = hata_model()
    hata = model.pathloss["macro"]
    bound = hata.bind(net, np.array([0]), model)
    assert hata.far_field_height_m is None and bound.far_field_height_m == 45.0
    d = np.array([1500.0, 8000.0])
    np.testing.assert_array_equal(bound.mean_loss_db(d), cost231_hata_db(d, 45.0, 1.5, 1.8))
    np.testing.assert_array_equal(hata.mean_loss_db(d), cost231_hata_db(d, 30.0, 1.5, 1.8))
    fixed = Cost231Hata(1.8, far_field_height_m=60.0)
    assert fixed.bind(net, np.array([0]), model) is fixed


def test_pixels_beyond_the_range_are_counted_like_users():
    net = one_cell([(2000.0, 0.0)])
    model = hata_model()
    pixels = np.array([[X0 + 100.0, Y0], [X0 + 25_000.0, Y0], [X0, Y0 + 3000.0]])
    with pytest.warns(UserWarning, match=r"1000 m ≤ d_2D ≤ 20000 m .*2 of 3 pixel–cell pairs are outside"):
        model.pathloss["macro"].warn_distances(net, np.array([0]), model, pixels,
                                               "pixel–cell pairs")
