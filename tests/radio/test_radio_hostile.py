"""The radio models and NR tables under hostile input: a careless or hostile user's values.

A systematic grid, in the style of tests/cli/test_cli_hostile.py:

- validity edges: for every 3GPP scenario (TR 38.901 UMa, UMi, RMa, InH; TR 36.873 3D-UMa,
  3D-UMi) and every range of :data:`~cellopt.radio.tr38901.VALIDITY` (frequency, BS and UT
  height, 2-D / 3-D distance per LOS state, RMa's building height and street width),
  values just inside, exactly on and just outside each bound, through every path: the
  scalar and the array path loss, the :class:`~cellopt.radio.ThreeGPP` model, the link
  table, the coverage maps and a scenario file. Every path refuses or warns alike, with the
  same words naming the range and the table of the standard;
- unit slips in the ``[radio]`` keys and the builders' powers (MHz as GHz, Hz, cm, W);
- every ``[radio]`` key the radio model refuses is refused when the file is loaded,
  naming the file and the key, never later at build;
- the builders' transmit powers against the tier's usual range;
- the NR tables: spectral-efficiency maps given a SINR in dB, MCS table names, the RSRP
  offset given a bandwidth in Hz.
"""

from __future__ import annotations

import math
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from cellopt import Drop, ValidationError, cli
from cellopt.coverage import coverage_map
from cellopt.network import Network, cells_frame, users_frame
from cellopt.parameters import LIMITS
from cellopt.radio import RadioModel, ThreeGPP, link_table, spectral, tr36814_pico, tr38901
from cellopt.radio.tr38901 import SCENARIOS, VALIDITY
from cellopt.study.scenario import load_scenario
from cellopt.topology import add_femtocells, add_picos, hex_grid, square_grid
from cellopt.topology.hexgrid import synthetic_crs

CRS = synthetic_crs()
X0, Y0 = 500_000.0, 4_000_000.0
#: A relative step "just" inside or outside a bound.
STEP = 1e-6
#: The edges of a range [lo, hi]: (name, value, outside?).
EDGES = ("below", "on_low", "above_low", "below_high", "on_high", "above_high")


def edge_value(lo: float, hi: float, edge: str) -> tuple[float, bool]:
    """The value at `edge` of [lo, hi], and whether it is outside."""
    step = STEP * max(abs(lo), abs(hi), 1.0)
    return {"below": (lo - step, True), "on_low": (lo, False), "above_low": (lo + step, False),
            "below_high": (hi - step, False), "on_high": (hi, False),
            "above_high": (hi + step, True)}[edge]


def caught(fn) -> tuple[str | None, list[str]]:
    """Run `fn`: the refusal's message (None if it ran) and every UserWarning's."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            fn()
            refused = None
        except ValidationError as err:
            refused = str(err)
    return refused, [str(w.message) for w in record if issubclass(w.category, UserWarning)]


def ranged(messages: list[str], needle: str) -> list[str]:
    return [m for m in messages if needle in m]


# ------------------------------------------------------------------ the ranges' words
def frequency_words(scenario: str) -> str:
    v = VALIDITY[scenario]
    return f"{v.name} is specified for {v.frequency_ghz[0]:g}–{v.frequency_ghz[1]:g} GHz ({v.source})"


def height_words(scenario: str, name: str) -> str:
    """What a height warning says of the range: the scenario's, or the catalogue's."""
    v = VALIDITY[scenario]
    who = "BS" if name == "h_bs_m" else "UT"
    stated = getattr(v, name)
    if stated is None:
        return f"{v.name} states no h_{who} range ({v.source})"
    lo, hi = stated
    return f"{v.name} is specified for {lo:g} m ≤ h_{who} ≤ {hi:g} m ({v.source})"


def height_range(scenario: str, name: str) -> tuple[float, float]:
    stated = getattr(VALIDITY[scenario], name)
    if stated is not None:
        return stated
    return LIMITS["height_m" if name == "h_bs_m" else "user_height_m"].usual


def distance_words(scenario: str, los: bool) -> str:
    v = VALIDITY[scenario]
    lo, hi = v.distance_range_m(los)
    return f"{v.name} is specified for {lo:g} m ≤ {v.distance} ≤ {hi:g} m"


def height_refused(scenario: str, value: float) -> bool:
    """A height the formulas cannot evaluate: ≤ 0, or at or below h_E = 1 m where the
    breakpoint subtracts it."""
    return value <= 0 or (VALIDITY[scenario].breakpoint and value <= 1.0)


# ------------------------------------------------------------------ path helpers
def scalar_loss(scenario: str, *, d2d=100.0, h_bs=None, h_ut=None, f=3.5, los=False,
                **extra) -> None:
    h_bs = {"inh_mixed": 3.0, "inh_open": 3.0, "rma": 35.0}.get(scenario, 25.0) \
        if h_bs is None else h_bs
    h_ut = (1.0 if scenario == "rma" or scenario.startswith("inh") else 1.5) \
        if h_ut is None else h_ut
    d3d = np.hypot(d2d, np.subtract(h_bs, h_ut))
    tr38901.pathloss_db(scenario, d2d, d3d, h_bs, h_ut, f, los, **extra)


def in_array(value: float, good: float) -> np.ndarray:
    """`value` among two good values: the array path counts 1 of 3."""
    return np.array([good, value, good])


def one_cell(user_xy, *, height_m: float) -> Network:
    cells = cells_frame([X0], [Y0], crs=CRS, tier="macro", tx_power_dbm=46.0,
                        antenna_gain_dbi=8.0, azimuth_deg=np.nan, height_m=height_m)
    xy = np.asarray(user_xy, float)
    users = users_frame(X0 + xy[:, 0], Y0 + xy[:, 1], crs=CRS, indoor=False)
    return Network(cells=cells, users=users, bandwidth_mhz=20.0).validate()


def model(scenario: str, f: float = 3.5, **options) -> RadioModel:
    return RadioModel(pathloss={"macro": ThreeGPP(scenario, f, shadowing=False, **options),
                                "pico": tr36814_pico, "femto": tr36814_pico},
                      min_distance_m={"macro": 1.0, "pico": 10.0, "femto": 10.0},
                      site_correlation=0.0)


def usual_bs_height(scenario: str) -> float:
    return {"uma": 25.0, "3d_uma": 25.0, "rma": 35.0}.get(scenario, 10.0) \
        if not scenario.startswith("inh") else 3.0


def ut_height(scenario: str) -> float:
    return 1.0 if scenario == "rma" or scenario.startswith("inh") else 1.5


# ================================================================== validity edges
@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_frequency_edges_agree_on_every_path(scenario, edge):
    lo, hi = VALIDITY[scenario].frequency_ghz
    f, outside = edge_value(lo, hi, edge)
    words = frequency_words(scenario)
    scalar = caught(lambda: scalar_loss(scenario, f=f))
    array = caught(lambda: scalar_loss(scenario, d2d=np.array([50.0, 100.0]), f=f))
    made = caught(lambda: ThreeGPP(scenario, f, user_height_m=ut_height(scenario)))
    for refused, messages in (scalar, array, made):
        assert refused is None
        assert len(ranged(messages, words)) == int(outside), messages
        if outside:
            assert f"got frequency_ghz={f:g} GHz" in ranged(messages, words)[0]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_frequency_outside_warns_alike_in_the_link_table_coverage_and_scenario(scenario,
                                                                                tmp_path):
    hi = VALIDITY[scenario].frequency_ghz[1]
    f = hi * (1 + STEP)
    words = frequency_words(scenario)
    net = one_cell([(60.0, 0.0)], height_m=usual_bs_height(scenario))

    def table_and_map():
        drop = Drop.from_network(net, link_table(net, model=model(scenario, f,
                                                                  user_height_m=ut_height(scenario)),
                                                 rng=1, workers=1))
        coverage_map(drop, resolution_m=50.0)

    refused, messages = caught(table_and_map)
    assert refused is None and ranged(messages, words), messages
    path = tmp_path / "f.toml"
    path.write_text(scenario_text(scenario, f=f))
    refused, messages = caught(lambda: load_scenario(path))
    assert refused is None
    assert len(ranged(messages, words)) == 1, messages
    assert ranged(messages, words)[0].startswith(f"{path}: [radio] ")


@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_ut_height_edges_agree_on_every_path(scenario, edge):
    lo, hi = height_range(scenario, "h_ut_m")
    h, outside = edge_value(lo, hi, edge)
    words = height_words(scenario, "h_ut_m")
    refused_expected = height_refused(scenario, h)
    good = ut_height(scenario) if not VALIDITY[scenario].breakpoint else 1.5
    runs = {
        "scalar": caught(lambda: scalar_loss(scenario, h_ut=h)),
        "array": caught(lambda: scalar_loss(scenario, h_ut=in_array(h, good))),
        "ThreeGPP": caught(lambda: ThreeGPP(scenario, 3.5, user_height_m=h)),
    }
    for path, (refused, messages) in runs.items():
        if refused_expected:
            assert refused is not None and "h_E" in refused, (path, refused)
            continue
        assert refused is None, (path, refused)
        assert len(ranged(messages, words)) == int(outside), (path, messages)
    if outside and not refused_expected:  # each path names its argument
        assert "h_ut_m: 1 of 1 links" in ranged(runs["scalar"][1], words)[0]
        assert "h_ut_m: 1 of 3 links" in ranged(runs["array"][1], words)[0]
        assert "ThreeGPP.user_height_m: 1 of 1 users" in ranged(runs["ThreeGPP"][1], words)[0]


@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_bs_height_edges_agree_on_every_path(scenario, edge):
    lo, hi = height_range(scenario, "h_bs_m")
    h, outside = edge_value(lo, hi, edge)
    words = height_words(scenario, "h_bs_m")
    runs = {"scalar": caught(lambda: scalar_loss(scenario, h_bs=h)),
            "array": caught(lambda: scalar_loss(scenario, h_bs=in_array(h, 25.0)))}
    if h > 1.0:  # the link table refuses cells at 1 m or less for every scenario
        net = one_cell([(60.0, 0.0)], height_m=h)
        m = model(scenario, user_height_m=ut_height(scenario))
        runs["link_table"] = caught(lambda: link_table(net, model=m, rng=1, workers=1))
    for path, (refused, messages) in runs.items():
        if height_refused(scenario, h):
            assert refused is not None, path
            continue
        assert refused is None, (path, refused)
        # UMa at a BS height of 10–15 m: h_E reaches the BS (refused in the link table)
        assert len(ranged(messages, words)) == int(outside), (path, messages)
    for path, (refused, messages) in runs.items():
        if outside and refused is None:
            label = {"link_table": "the cells' height_m: 1 of 1 cells"}.get(path, "h_bs_m: 1 of")
            assert label in ranged(messages, words)[0], (path, messages)


@pytest.mark.parametrize("los", [True, False])
@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_distance_edges_agree_on_every_path(scenario, edge, los):
    v = VALIDITY[scenario]
    lo, hi = v.distance_range_m(los)
    d, outside = edge_value(lo, hi, edge)
    words = distance_words(scenario, los)
    h_bs, h_ut = usual_bs_height(scenario), ut_height(scenario)
    if v.distance == "d_3D":  # InH bounds d_3D: the 2-D distance that gives it
        d2d = math.sqrt(max(d * d - (h_bs - h_ut) ** 2, 0.0))
        if d < h_bs - h_ut:  # no 2-D distance gives so short a 3-D one
            d2d = None
    else:
        d2d = d
    if d2d is None:
        refused, messages = caught(lambda: tr38901.pathloss_db(
            scenario, 0.5, d, h_bs, h_ut, 3.5, los))
        assert refused is None and len(ranged(messages, words)) == int(outside), messages
        return
    runs = {"scalar": caught(lambda: scalar_loss(scenario, d2d=d2d, h_bs=h_bs, h_ut=h_ut,
                                                 los=los)),
            "array": caught(lambda: scalar_loss(scenario, d2d=in_array(d2d, 100.0),
                                                h_bs=h_bs, h_ut=h_ut, los=los))}
    for path, (refused, messages) in runs.items():
        assert refused is None, (path, refused)
        assert len(ranged(messages, words)) == int(outside), (path, messages)
    if v.distance == "d_2D" and (v.nlos_distance_m is None or not los):
        # the link table counts the user–cell pairs (at NLOS's range where they differ)
        net = one_cell([(d2d, 0.0)], height_m=h_bs)
        m = model(scenario, user_height_m=h_ut, los="los" if los else "nlos")
        refused, messages = caught(lambda: link_table(net, model=m, rng=1, workers=1))
        assert refused is None
        assert len(ranged(messages, words)) == int(outside), messages


def test_the_link_table_refuses_a_distance_of_zero_as_the_scalar_path_does():
    refused, _ = caught(lambda: tr38901.pathloss_db("umi", 0.0, 9.0, 10.0, 1.5, 3.5, True))
    assert refused is not None and "d_2D is not a finite number > 0" in refused


@pytest.mark.parametrize("name", ["rma_h_building_m", "rma_w_street_m"])
@pytest.mark.parametrize("edge", EDGES)
def test_rma_building_height_and_street_width_edges(name, edge):
    lo, hi = VALIDITY["rma"].building_m
    value, outside = edge_value(lo, hi, edge)
    refused, messages = caught(lambda: scalar_loss("rma", **{name: value}))
    assert refused is None
    words = f"RMa is specified for {lo:g} m ≤ {'h' if 'building' in name else 'W'} ≤ {hi:g} m"
    hits = ranged(messages, words)
    assert len(hits) == int(outside), messages
    if outside:
        assert f"got {name}={value:g} m" in hits[0] and "TR 38.901 Table 7.4.1-1" in hits[0]


@pytest.mark.parametrize("value", [0.0, -5.0, 1001.0, float("nan")])
def test_rma_geometry_the_formulas_cannot_take_is_refused(value):
    refused, _ = caught(lambda: scalar_loss("rma", rma_h_building_m=value))
    assert refused is not None and "rma_h_building_m" in refused and "5–50 m" in refused


def test_a_bs_height_within_rma_but_above_100_m_warns_on_no_path():
    """RMa states 10–150 m: 120 m is no unit slip (it warned as a user height before)."""
    refused, messages = caught(lambda: scalar_loss("rma", h_bs=120.0))
    assert refused is None and messages == []


# ================================================================== scenario files
BASE = """
[network]
builder = "hex_grid"
n_rings = 0
{network}
[users]
n = 6
{users}
[radio]
n_candidates = 2
{radio}
"""


def scenario_text(scenario: str | None = None, *, f: float = 3.5, radio: str = "",
                  network: str = "", users: str = "") -> str:
    lines = radio
    if scenario is not None:
        height = usual_bs_height(scenario)
        network = network or f"height_m = {height}"
        if scenario.startswith("inh"):
            lines += "\nindoor_tiers = []"
        lines += f'\npropagation = "{scenario}"\nfrequency_ghz = {f!r}'
        if scenario == "rma" or scenario.startswith("inh"):
            lines += "\nuser_height_m = 1.0"
    return BASE.format(network=network, users=users, radio=lines)


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_cell_height_outside_the_scenario_warns_at_build_as_in_the_link_table(scenario,
                                                                              tmp_path):
    _, hi = height_range(scenario, "h_bs_m")
    h = hi * (1 + STEP) if hi < 300 else 299.0
    path = write(tmp_path, scenario_text(scenario, network=f"height_m = {h!r}"))
    refused, messages = caught(lambda: load_scenario(path).build())
    words = height_words(scenario, "h_bs_m")
    assert refused is None, refused
    assert len(ranged(messages, words)) == int(h > hi), messages


# Every key the radio model refuses: refused by load_scenario, naming the file and the key.
REFUSED_AT_LOAD = {
    "exponent_with_3gpp": ('propagation = "uma"\nfrequency_ghz = 3.5\npathloss_exponent = 3.5',
                           "pathloss_exponent"),
    "reference_without_exponent": ("pathloss_reference_db = 40", "pathloss_reference_db"),
    "reference_for_other_tiers": ("pathloss_exponent = {femto = 3.5}\n"
                                  "pathloss_reference_db = {macro = 40}", "pathloss_reference_db"),
    "3gpp_option_without_propagation": ("user_height_m = 1.5", "'user_height_m'"),
    "propagation_without_frequency": ('propagation = "uma"', "frequency_ghz"),
    "option_no_scenario_uses": ('propagation = "inh_mixed"\nindoor_tiers = []\n'
                                "frequency_ghz = 3.5\nhigh_loss_fraction = 0.3",
                                "'high_loss_fraction'"),
    "ut_at_the_environment_height": ('propagation = "uma"\nfrequency_ghz = 3.5\n'
                                     "user_height_m = 1.0", "user_height_m=1 m"),
    "sigma_without_shadowing": ('propagation = "uma"\nfrequency_ghz = 3.5\nshadowing = false\n'
                                "shadowing_std_db = 8", "shadowing_std_db=8 dB"),
    "expected_with_shadowing": ('propagation = "uma"\nfrequency_ghz = 3.5\nlos = "expected"',
                                "los='expected'"),
    "nr_spacing": ('rat = "nr"\nsubcarrier_spacing_khz = 45', "subcarrier_spacing_khz=45"),
    "lte_spacing": ("subcarrier_spacing_khz = 30", "subcarrier_spacing_khz=30"),
    "pattern_keys_with_tr38901": ('antenna = "tr38901"\ntheta_3db_deg = 65', "'theta_3db_deg'"),
    "far_field_without_radius": ("far_field = true", "far_field"),
    "decorrelation_unused": ('propagation = {macro = "uma", pico = "umi", femto = "inh_mixed"}\n'
                             "indoor_tiers = []\nfrequency_ghz = 3.5\ndecorrelation_m = 50",
                             "decorrelation_m"),
    "wall_loss_unused": ('propagation = {macro = "uma", pico = "umi", femto = "inh_mixed"}\n'
                         "indoor_tiers = []\nfrequency_ghz = 3.5\nwall_loss_db = 10",
                         "wall_loss_db"),
    "indoor_tier_with_own_loss": ('propagation = {macro = "uma", femto = "inh_mixed"}\n'
                                  'indoor_tiers = ["femto"]\nfrequency_ghz = 3.5',
                                  "indoor_tiers"),
    "frequency_in_mhz": ('propagation = "uma"\nfrequency_ghz = 3500', "frequency_ghz=3500 GHz"),
    "frequency_in_hz": ('propagation = "uma"\nfrequency_ghz = 3.5e9', "frequency_ghz=3.5e+09"),
    "spacing_in_hz": ('rat = "nr"\nsubcarrier_spacing_khz = 30000',
                      "subcarrier_spacing_khz=30000"),
    "spacing_in_mhz": ('rat = "nr"\nsubcarrier_spacing_khz = 0.03',
                       "subcarrier_spacing_khz=0.03"),
    "unknown_mcs_table": ('spectral_efficiency = "nr_1024qam"', "spectral_efficiency"),
    "unknown_scenario": ('propagation = "uma_los"\nfrequency_ghz = 3.5', "propagation"),
    "ut_height_in_km": ('propagation = "umi"\nfrequency_ghz = 3.5\nuser_height_m = 0.0015',
                        "user_height_m=0.0015 m"),
    "minimum_distance_zero": ("min_distance_m = {macro = 0}", "min_distance_m['macro']=0 m"),
    "propagation_for_no_outdoor_tier": ('indoor_tiers = ["macro", "pico", "femto"]\n'
                                        'propagation = "uma"\nfrequency_ghz = 3.5',
                                        "puts every tier indoors"),
    "propagation_empty_table": ("propagation = {}\nfrequency_ghz = 3.5",
                                "the table names no tier"),
    "predictions_that_are_absent": ('path_loss = "nowhere/"', "key 'path_loss' source"),
    "predictions_of_a_tier_that_are_absent": ('path_loss = {pico = "nowhere.tif"}',
                                              "key 'path_loss' tier 'pico' source"),
}


@pytest.mark.parametrize("case", sorted(REFUSED_AT_LOAD))
def test_every_radio_key_the_model_refuses_is_refused_when_the_file_is_loaded(case, tmp_path):
    radio, key = REFUSED_AT_LOAD[case]
    path = write(tmp_path, scenario_text(radio=radio))
    with pytest.raises(ValidationError) as err:
        load_scenario(path)
    text = str(err.value)
    assert text.startswith(f"{path}: [radio] "), text
    assert key in text and "fix:" in text, text
    assert "RadioModel." not in text and "ThreeGPP." not in text  # the file's words


@pytest.mark.parametrize(("radio", "key", "tier"), [
    ('propagation = {macro = "uma", femto = "umi"}\nindoor_tiers = []\nfrequency_ghz = 3.5',
     "propagation", "femto"),
    ("shadowing_std_db = {pico = 6}", "shadowing_std_db", "pico"),
    ("pathloss_exponent = {femto = 3.5}", "pathloss_exponent", "femto"),
    ("min_distance_m = {pico = 5}", "min_distance_m", "pico")])
def test_a_per_tier_radio_value_for_a_tier_the_network_lacks_warns_as_ignored(radio, key, tier,
                                                                              tmp_path):
    path = write(tmp_path, scenario_text(radio=radio))  # macros only
    with pytest.warns(UserWarning) as record:
        load_scenario(path)
    texts = [str(w.message) for w in record]
    assert texts == [f"{path}: [radio] key {key!r} gives tiers [{tier!r}] a value, but the "
                     f"network gets no {tier} cells: it is ignored; fix: remove it, or add "
                     f"{'[picos]' if tier == 'pico' else '[femtocells]'}"], texts


def test_a_per_tier_radio_value_for_a_tier_the_network_gets_is_quiet(tmp_path):
    path = write(tmp_path, scenario_text(radio="shadowing_std_db = {femto = 6}")
                 + "\n[femtocells]\ndensity_per_km2 = 5\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_scenario(path)


@pytest.mark.parametrize("case", ["exponent_with_3gpp", "propagation_without_frequency",
                                  "frequency_in_mhz"])
def test_the_command_line_prints_one_error_line_for_a_bad_radio_key(case, tmp_path, capsys):
    radio, key = REFUSED_AT_LOAD[case]
    path = write(tmp_path, scenario_text(radio=radio))
    assert cli.main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("cellopt: error: ")]
    assert len(lines) == 1 and str(path) in lines[0] and key in lines[0], err
    assert not (tmp_path / "out").exists()


# Keys a careless user gets the unit of wrong, legal but outside the usual range: warned at
# load, once, naming the file and the key (a per-tier key names its tier).
WARNED_AT_LOAD = {
    "ut_height_in_cm": ('propagation = "uma"\nfrequency_ghz = 3.5\nuser_height_m = 150',
                        "user_height_m: 1 of 1 users"),
    "inh_ut_height_in_cm": ('propagation = "inh_open"\nindoor_tiers = []\nfrequency_ghz = 3.5\n'
                            "user_height_m = 100.5", "user_height_m: 1 of 1 users"),
    "frequency_in_thz": ('propagation = "umi"\nfrequency_ghz = 0.0035', "frequency_ghz=0.0035"),
    "noise_figure_linear_large": ("noise_figure_db = 79.4", "noise_figure_db=79.4 dB"),
    "sigma_per_tier": ("shadowing_std_db = {pico = 25}", "shadowing_std_db['pico']=25 dB"),
    "wall_loss": ("wall_loss_db = 100", "wall_loss_db=100 dB"),
    "beamwidth_in_radians": ("theta_3db_deg = 1.22", "theta_3db_deg=1.22 deg"),
    "decorrelation_in_km": ("decorrelation_m = 5000", "decorrelation_m=5000 m"),
}


@pytest.mark.parametrize("case", sorted(WARNED_AT_LOAD))
def test_unit_slips_in_radio_keys_warn_once_at_load_naming_the_file_and_key(case, tmp_path):
    radio, needle = WARNED_AT_LOAD[case]
    path = write(tmp_path, scenario_text(radio=radio))
    refused, messages = caught(lambda: load_scenario(path))
    assert refused is None, refused
    hits = ranged(messages, needle)
    assert len(hits) == 1, messages  # once, though several tiers share the model
    assert hits[0].startswith(f"{path}: [radio] "), hits[0]
    assert "fix:" in hits[0] or "(legal, but check the unit): give" in hits[0], hits[0]


def test_a_build_does_not_repeat_the_warnings_of_the_load(tmp_path):
    path = write(tmp_path, scenario_text(radio="noise_figure_db = 30"))
    with pytest.warns(UserWarning, match="noise_figure_db=30 dB") as record:
        scenario = load_scenario(path)
    assert len(record) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scenario.build()


def test_a_plain_scenario_loads_and_builds_without_a_warning(tmp_path):
    path = write(tmp_path, scenario_text("uma"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_scenario(path).build()


def test_with_overrides_checks_the_radio_keys_again(tmp_path):
    scenario = load_scenario(write(tmp_path, scenario_text("uma")))
    with pytest.raises(ValidationError, match=r"\[radio\] pathloss_exponent sets"):
        scenario.with_overrides(radio={"pathloss_exponent": 3.0})


# ================================================================== builders' tx powers
TIER_BUILDERS = {
    "macro": lambda p: hex_grid(n_rings=0, tx_power_dbm=p),
    "macro (square)": lambda p: square_grid(n_side=1, tx_power_dbm=p),
    "pico": lambda p: add_picos(hex_grid(n_rings=1), per_sector=1, tx_power_dbm=p, rng=1),
    "femto": lambda p: add_femtocells(hex_grid(n_rings=0), density_per_km2=20.0,
                                      tx_power_dbm=p, rng=1),
}


@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("builder", sorted(TIER_BUILDERS))
def test_a_builders_tx_power_is_checked_against_its_tiers_usual_range(builder, edge):
    tier = builder.split()[0]
    lo, hi = LIMITS["tx_power_dbm"].usual_for(tier)
    power, outside = edge_value(lo, hi, edge)
    refused, messages = caught(lambda: TIER_BUILDERS[builder](power))
    assert refused is None
    hits = ranged(messages, f"of {tier} cells")
    assert len(hits) == int(outside), messages
    if outside:
        assert f"tx_power_dbm={power:.6g} dBm is outside the usual range [{lo:g}, {hi:g}] dBm" \
            in hits[0] and "10·log10(P_W) + 30" in hits[0]


@pytest.mark.parametrize(("builder", "power"), [("femto", 46.0), ("macro", 20.0),
                                                ("pico", 0.25), ("femto", 0.1)])
def test_a_power_of_another_tier_or_in_watts_warns_naming_the_tier(builder, power):
    with pytest.warns(UserWarning, match=f"of {builder} cells"):
        TIER_BUILDERS[builder](power)


def test_a_pico_power_in_a_scenario_warns_at_build_naming_the_tier(tmp_path):
    text = scenario_text().replace("n_rings = 0", "n_rings = 1")
    path = write(tmp_path, text + "\n[picos]\nper_sector = 1\ntx_power_dbm = 46\n")
    with pytest.warns(UserWarning, match=r"tx_power_dbm=46 dBm .* of pico cells"):
        load_scenario(path).build()


# ================================================================== NR tables
@pytest.mark.parametrize("name", sorted(spectral.SPECTRAL_EFFICIENCY))
def test_every_spectral_map_refuses_a_sinr_in_db(name):
    efficiency = spectral.get_efficiency(name)
    with pytest.raises(ValidationError, match=r"sinr has 2 negative values \(e.g. -3\).*not dB; "
                                              r"fix: give 10 \*\* \(sinr_db / 10\)"):
        efficiency(np.array([10.0, -3.0, 0.5, -0.1]))


@pytest.mark.parametrize("name", sorted(spectral.SPECTRAL_EFFICIENCY))
@pytest.mark.parametrize("sinr", [np.array(["1.0"]), np.array([None, 1.0], dtype=object)])
def test_every_spectral_map_refuses_a_sinr_that_is_not_numbers(name, sinr):
    with pytest.raises(ValidationError, match="sinr has dtype"):
        spectral.get_efficiency(name)(sinr)


@pytest.mark.parametrize("name", sorted(spectral.SPECTRAL_EFFICIENCY))
def test_every_spectral_map_keeps_nan_zero_and_infinite_sinr(name):
    out = spectral.get_efficiency(name)(np.array([np.nan, 0.0, -0.0, np.inf]))
    assert np.isnan(out[0]) and out[1] == 0 and out[2] == 0 and out[3] > 0


@pytest.mark.parametrize("table", ["nr_64qam", "nr_256qam", "nr_low_se"])
def test_an_mcs_table_given_its_spectral_efficiency_name_says_which_table(table):
    with pytest.raises(ValidationError, match=f"is the spectral_efficiency name of the table "
                                              f"'{table[3:]}'"):
        spectral.nr_mcs(np.ones(2), table)


@pytest.mark.parametrize("table", ["1024qam", "", 64, None, "64QAM"])
def test_an_unknown_mcs_table_is_refused_listing_the_tables(table):
    for call in (lambda: spectral.nr_mcs(np.ones(2), table),
                 lambda: spectral.nr_mcs_thresholds_db(table)):
        with pytest.raises(ValidationError, match=r"use one of \['256qam', '64qam', 'low_se'\]"):
            call()


@pytest.mark.parametrize(("bandwidth", "needle"), [
    (1e7, "outside the possible range"), (-1.0, "outside the possible range"),
    (0.0, "outside the possible range"), (float("nan"), "not finite"),
    ("10", "is a str"), (True, "is a bool")])
def test_the_rsrp_offset_refuses_a_bandwidth_not_in_mhz(bandwidth, needle):
    with pytest.raises(ValidationError, match=f"bandwidth_mhz=.*{needle}.*fix: give the "
                                              "bandwidth in MHz"):
        RadioModel().rsrp_offset_db(bandwidth)


@pytest.mark.parametrize(("rat", "scs", "bandwidth", "needles"), [
    ("lte", 15, 12.0, ["bandwidth_mhz=12 is not an LTE channel bandwidth (TS 36.101 Table 5.6-1)",
                       "nearest: 10, 15 MHz"]),
    ("lte", 15, 10_000.0, ["give MHz, not kHz"]),
    ("nr", 15, 100.0, ["N/A in TS 38.101-1 Table 5.3.2-1", "use 30 or 60 kHz"]),
    ("nr", 120, 20.0, ["TS 38.101-2"]),
    ("nr", 30, 12.0, ["not an NR channel bandwidth"])])
def test_the_rsrp_offset_of_a_bandwidth_off_the_tables_warns_and_counts_every_subcarrier(
        rat, scs, bandwidth, needles):
    with pytest.warns(UserWarning, match="RSRP is measured over every subcarrier") as record:
        offset = RadioModel(rat=rat, subcarrier_spacing_khz=scs).rsrp_offset_db(bandwidth)
    assert offset == pytest.approx(10 * math.log10(bandwidth * 1e3 / scs))
    assert len(record) == 1
    for needle in needles:
        assert needle in str(record[0].message), record[0].message


@pytest.mark.parametrize(("rat", "scs", "bandwidth", "prbs"), [
    ("lte", 15, 1.4, 6), ("lte", 15, 20.0, 100), ("nr", 30, 100.0, 273), ("nr", 15, 5.0, 25),
    ("nr", 120, 400.0, 264), ("nr", 60, 100.0, 135)])
def test_the_rsrp_offset_of_a_table_channel_is_quiet(rat, scs, bandwidth, prbs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        offset = RadioModel(rat=rat, subcarrier_spacing_khz=scs).rsrp_offset_db(bandwidth)
    assert offset == pytest.approx(10 * math.log10(12 * prbs))


def test_a_link_table_on_a_band_off_the_tables_warns_once():
    net = one_cell([(60.0, 0.0), (90.0, 0.0)], height_m=25.0)
    net = Network(cells=net.cells, users=net.users, bandwidth_mhz=12.0).validate()
    with pytest.warns(UserWarning, match="bandwidth_mhz=12 is not an LTE channel") as record:
        link_table(net, rng=1, workers=1)
    assert len(record) == 1


@pytest.mark.parametrize(("radio", "ok"), [
    ('rat = "nr"\nsubcarrier_spacing_khz = 120\nspectral_efficiency = "nr_256qam"', True),
    ('rat = "nr"\nsubcarrier_spacing_khz = 240', False),
    ('rat = "NR"', False), ('rat = "lte"\nspectral_efficiency = "nr_64qam"', True),
    ('spectral_efficiency = "64qam"', False), ("subcarrier_spacing_khz = 15.0", True)])
def test_radio_keys_that_pick_nr_tables_are_checked_at_load(radio, ok, tmp_path):
    path = write(tmp_path, scenario_text(radio=radio))
    refused, messages = caught(lambda: load_scenario(path))
    assert messages == []
    assert (refused is None) == ok, refused
    if not ok:
        assert refused.startswith(f"{path}: [radio] ") and "fix:" in refused


# ================================================================== other keys, at load
@pytest.mark.parametrize(("resolution", "refused"), [(5e-324, True), (1e-9, True),
                                                     (3.9e-5, True), (4.1e-5, False)])
def test_a_coverage_resolution_too_fine_for_any_area_is_refused_when_loaded(resolution, refused,
                                                                           tmp_path):
    path = write(tmp_path, scenario_text() + f"\n[coverage]\nresolution_m = {resolution!r}\n")
    error, messages = caught(lambda: load_scenario(path))
    assert (error is not None) == refused, error
    if refused:
        assert error.startswith(f"{path}: [coverage] resolution_m=") and "too fine for any " \
            "coverage area" in error and "fix: give resolution_m in metres" in error
    else:  # legal, and warned once naming the file
        assert len(messages) == 1 and messages[0].startswith(f"{path}: [coverage] resolution_m")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_coverage_map_beyond_the_scenarios_distances_warns_once_as_the_link_table(scenario):
    """The map's pixels are links too: those beyond the scenario's distance range warn, once
    per map, in the link table's words (the pixel blocks' own tables are quiet)."""
    h_bs = usual_bs_height(scenario)
    net = one_cell([(40.0, 0.0), (60.0, 30.0)], height_m=h_bs)
    m = RadioModel(pathloss={"macro": ThreeGPP(scenario, 3.5, user_height_m=ut_height(scenario),
                                               shadowing=False),
                             "pico": tr36814_pico, "femto": tr36814_pico}, indoor_tiers=())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drop = Drop.from_network(net, link_table(net, model=m, rng=1, workers=1))
    refused, messages = caught(lambda: coverage_map(drop, resolution_m=50.0))
    assert refused is None
    v = VALIDITY[scenario]
    lo, hi = v.distance_range_m(None)
    words = f"{v.name} is specified for {lo:g} m ≤ {v.distance} ≤ {hi:g} m"
    hits = ranged(messages, words)
    # the map reaches 500 m beyond the cell (BBOX_MARGIN_M): beyond InH's 150 m only
    assert len(hits) == int(hi < 500.0), messages
    if hits:
        assert "pixel–cell pairs of the coverage map are outside" in hits[0]
        assert len(messages) == 1, messages  # nothing else: the drop said the rest


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_cell_above_the_scenarios_height_warns_in_the_link_table_and_not_again_in_coverage(
        scenario):
    _, hi = height_range(scenario, "h_bs_m")
    net = one_cell([(60.0, 0.0)], height_m=hi * (1 + STEP))
    m = model(scenario, user_height_m=ut_height(scenario))
    words = height_words(scenario, "h_bs_m")
    refused, messages = caught(lambda: link_table(net, model=m, rng=1, workers=1))
    assert refused is None and len(ranged(messages, words)) == 1, messages
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        drop = Drop.from_network(net, link_table(net, model=m, rng=1, workers=1))
    refused, messages = caught(lambda: coverage_map(drop, resolution_m=50.0))
    assert refused is None and ranged(messages, words) == []


# ================================================================== link tables where they meet
@pytest.fixture(scope="module")
def two_networks():
    from cellopt.topology import drop_users

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = drop_users(hex_grid(1), 20, rng=1)
        return net, drop_users(hex_grid(1), 21, rng=2), drop_users(hex_grid(1), 20, rng=3)


@pytest.mark.parametrize("other", [1, 2], ids=["more users", "same counts, other users"])
def test_a_drop_refuses_the_link_table_of_another_network_before_using_it(two_networks, other):
    net = two_networks[0]
    links = link_table(two_networks[other], rng=1, workers=1)
    with pytest.raises(ValidationError, match=r"fix: build the drop with Drop\.from_network"):
        Drop.from_network(net, links)


@pytest.mark.parametrize("power", [["46"] * 21, np.array([True] * 21), np.full(21, "46")])
def test_the_link_table_refuses_powers_that_are_not_numbers(two_networks, power):
    with pytest.raises(ValidationError, match="power_dbm is not numeric"):
        link_table(two_networks[0], power_dbm=power, rng=1, workers=1)


def test_a_coverage_map_does_not_repeat_the_models_frequency_warning():
    with pytest.warns(UserWarning, match="RMa is specified for 0.5–30 GHz"):
        m = model("rma", 40.0, user_height_m=1.0)
    net = one_cell([(60.0, 0.0)], height_m=35.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        coverage_map(Drop.from_network(net, link_table(net, model=m, rng=1, workers=1)),
                     resolution_m=50.0)


@pytest.mark.parametrize("bandwidth", [1e7, np.array([0.18, 1e7]), 2e5])
def test_thermal_noise_refuses_a_bandwidth_in_hz(bandwidth):
    from cellopt.radio import thermal_noise_dbm

    with pytest.raises(ValidationError, match=r"bandwidth_mhz=.*fix: give bandwidths > 0 in MHz, "
                                              r"at most 100000 MHz \(10 MHz = 1e7 Hz\)"):
        thermal_noise_dbm(bandwidth)
