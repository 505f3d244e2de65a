"""Every [radio] key of a scenario file is used or refused, whatever the propagation model."""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pytest

from cellopt import ValidationError
from cellopt.radio import link_table
from cellopt.study.builders import LINK_KEYS, radio_model
from cellopt.study.scenario import load_scenario
from cellopt.study.schema import SECTION_KEYS

NETWORK = """
methods = ["max_rsrp"]

[network]
builder = "hex_grid"
n_rings = 1

[picos]
per_sector = 1
height_m = 25.0  # above UMa's environment height: every outdoor tier may follow UMa

[femtocells]
density_per_km2 = 20.0

[users]
n = 60
indoor_fraction = 0.5

[seeds]
base = 5
"""

#: A value of each [radio] key that should change the links, and the keys it needs
#: beside it (compared with and without the key, both with these).
SAMPLES = {
    "noise_figure_db": (20.0, {}),
    "wall_loss_db": (5.0, {}),
    "theta_3db_deg": (40.0, {}),
    "max_attenuation_db": (10.0, {}),
    "spectral_efficiency": ("shannon", {}),
    "n_candidates": (2, {}),
    "site_correlation": (0.0, {}),
    "decorrelation_m": (50.0, {}),
    "min_distance_m": ({"macro": 150.0, "pico": 60.0, "femto": 60.0}, {}),
    "propagation": ("umi", {}),  # with frequency_ghz, below
    "frequency_ghz": (2.5, {}),
    "user_height_m": (4.5, {}),
    "indoor_floors": (False, {}),
    "high_loss_fraction": (1.0, {}),
    "los": ("los", {}),
    "shadowing": (False, {}),
    "spatially_correlated": (False, {}),
    "max_indoor_distance_m": (2.0, {}),
    "antenna": ("tr38901", {}),
    "rat": ("nr", {}),
    "subcarrier_spacing_khz": (30.0, {"rat": "nr"}),
    "window_db": (3.0, {}),
    "indoor_tiers": ([], {}),
    "building_radius_m": (300.0, {}),
    "shadowing_std_db": (3.0, {}),
    "pathloss_exponent": (3.0, {}),
    "pathloss_reference_db": (50.0, {"pathloss_exponent": {"femto": 3.5}}),
    "interference_radius_m": (300.0, {}),
    "far_field": (False, {"interference_radius_m": 300.0}),
}
#: Keys this test cannot give a value without files (tests/radio/test_raster_model.py).
NEEDS_FILES = {"path_loss": "planner predictions (GeoTIFFs), tests/radio/test_raster_model.py"}

#: Propagation choices: the distance laws, one 3GPP scenario for every outdoor tier, one
#: per tier, and the scenarios whose options differ (RMa, InH, TR 36.873).
CHOICES = {
    "distance law": {},
    "uma": {"propagation": "uma", "frequency_ghz": 3.5},
    "per tier": {"propagation": {"macro": "uma", "pico": "umi"}, "frequency_ghz": 3.5},
    "rma": {"propagation": "rma", "frequency_ghz": 3.5},
    "inh_open": {"propagation": "inh_open", "frequency_ghz": 3.5},
    "3d_umi": {"propagation": "3d_umi", "frequency_ghz": 3.5},
}


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    path = tmp_path_factory.mktemp("keys") / "s.toml"
    path.write_text(textwrap.dedent(NETWORK))
    return load_scenario(path).build().network


def _links(network, section):
    """The link table of `network` under the [radio] `section`, as comparable arrays."""
    with warnings.catch_warnings():  # this test is about keys, not about validity ranges
        warnings.filterwarnings("ignore", message=".* is specified for ", category=UserWarning)
        model = radio_model(section)
        table = link_table(network, model=model, rng=3,
                           **{k: v for k, v in section.items() if k in LINK_KEYS})
    return [table.user, table.cell, table.rsrp_dbm, table.sinr_db, table.rate_mbps]


def _same(a, b):
    return all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_every_radio_key_has_a_sample():
    assert set(SAMPLES) | set(NEEDS_FILES) == set(SECTION_KEYS["radio"]), \
        "a new [radio] key: add a value that changes the links to SAMPLES"


@pytest.mark.parametrize("choice", list(CHOICES))
def test_every_radio_key_is_used_or_refused(network, choice):
    ignored = []
    for key, (value, context) in SAMPLES.items():
        base = {**CHOICES[choice], **context}
        if key in base:
            continue  # the choice itself
        given = {key: value, **({"frequency_ghz": 3.5} if key == "propagation" else {})}
        try:
            with_key = _links(network, {**base, **given})
        except ValidationError:
            continue  # refused, with a fix
        if _same(with_key, _links(network, base)):  # the base itself is never refused
            ignored.append(key)
    assert not ignored, f"[radio] keys read but without effect under {choice}: {ignored}"


def test_a_3gpp_model_refuses_the_single_slope_keys():
    section = {"propagation": "uma", "frequency_ghz": 3.5}
    with pytest.raises(ValidationError, match=r"pathloss_exponent .* tiers \['macro', 'pico'\].*"
                                              r"fix: remove pathloss_exponent"):
        radio_model({**section, "pathloss_exponent": 3.5})
    with pytest.raises(ValidationError, match=r"pathloss_reference_db .* no pathloss_exponent"):
        radio_model({**section, "pathloss_reference_db": 40.0})
    # a tier without a 3GPP model may still have one
    model = radio_model({**section, "pathloss_exponent": {"femto": 3.5}})
    assert model.pathloss["femto"].exponent == 3.5


def test_shadowing_std_db_overrides_the_3gpp_sigma(network):
    section = {"propagation": "uma", "frequency_ghz": 3.5}
    none = _links(network, {**section, "shadowing": False})
    zero = _links(network, {**section, "shadowing_std_db": {"macro": 0.0, "pico": 0.0}})
    standard = _links(network, section)
    assert _same(zero, none) and not _same(zero, standard)
    assert radio_model({**section, "shadowing_std_db": {"macro": 2.0}}).pathloss["macro"] \
        .shadowing_std_db == 2.0
    assert radio_model({**section, "shadowing_std_db": {"macro": 2.0}}).pathloss["pico"] \
        .shadowing_std_db is None  # the standard's σ
    with pytest.raises(ValidationError, match="shadowing=False"):
        radio_model({**section, "shadowing": False, "shadowing_std_db": 4.0})


def test_a_3gpp_model_without_frequency_names_the_key():
    for name in ("uma", "rma", "inh_open", "3d_uma"):
        with pytest.raises(ValidationError, match=r"frequency_ghz.*fix: add e\.g\. frequency_ghz"):
            radio_model({"propagation": name})


def test_options_no_scenario_uses_are_refused():
    with pytest.raises(ValidationError, match=r"\['high_loss_fraction'\] is not used .*3d_uma"):
        radio_model({"propagation": "3d_uma", "frequency_ghz": 2.0, "high_loss_fraction": 0.2})
    with pytest.raises(ValidationError, match=r"\['indoor_floors'\] is not used .*rma"):
        radio_model({"propagation": "rma", "frequency_ghz": 2.0, "indoor_floors": False})
    # used by one tier's scenario: given to that tier only
    model = radio_model({"propagation": {"macro": "rma", "pico": "umi"}, "frequency_ghz": 2.0,
                         "indoor_floors": False})
    assert model.pathloss["pico"].indoor_floors is False
    assert model.pathloss["macro"].indoor_floors is True
