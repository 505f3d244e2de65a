"""Bad and degenerate inputs to every network builder, radio parameter and scenario key.

Every bad input must end in a cellopt error that names the parameter and the fix (or a
warning where the value is legal but implausible); counts that cannot fit in memory are
refused before anything is allocated; degenerate inputs (no users, nobody served) give
exact, consistent results; and no NaN ever leaves the link table.
"""

from __future__ import annotations

import math
import re
import textwrap
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
import shapely
from helpers.checks import raises
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cellopt import CelloptError, LinkTable, ResourceLimitError, ValidationError
from cellopt.network import Network, cells_frame, users_frame
from cellopt.radio import (
    RadioModel,
    coupling_db,
    free_space,
    link_table,
    sector_gain_db,
    shannon_gap,
    sinr_db,
    thermal_noise_dbm,
    tr36942,
)
from cellopt.radio.links import link_table_nbytes
from cellopt.radio.spectral import get_efficiency
from cellopt.study.scenario import load_scenario
from cellopt.study.seeds import MAX_DROPS, DropSeeds, drop_seed, drop_seeds
from cellopt.topology import (
    add_femtocells,
    add_picos,
    drop_users,
    hex_grid,
    sectorize,
    study_window,
)
from cellopt.topology.hexgrid import hex_site_positions

CRS = "EPSG:32631"
X0, Y0 = 500_000.0, 1_000_000.0
NET = hex_grid(1)  # 7 sites, 21 macro cells, wraparound
USERS = drop_users(NET, 20, rng=1)
FIELDS = LinkTable.COLUMNS
# The warning for a legal but implausible value, which the bad and random inputs below
# may trigger; they ignore only it, so any other warning still shows.
IMPLAUSIBLE = r".* is outside the usual range"


def omni_network(n_cells: int = 3, **cell_kwargs) -> Network:
    cells = cells_frame(X0 + 300.0 * np.arange(n_cells), np.full(n_cells, Y0), crs=CRS, tier="macro",
                        tx_power_dbm=cell_kwargs.pop("tx_power_dbm", 46.0),
                        antenna_gain_dbi=cell_kwargs.pop("antenna_gain_dbi", 14.0), **cell_kwargs)
    users = users_frame(X0 + np.array([50.0, 400.0]), np.full(2, Y0 + 20.0), crs=CRS)
    return Network(cells=cells, users=users)


# ====================================================================== builders
BUILDER_ERRORS = [
    # hex_grid
    ("rings negative", lambda: hex_grid(-1), "n_rings=-1 is below 0; fix: give a whole number ≥ 0"),
    ("rings fraction", lambda: hex_grid(2.5), "n_rings=2.5 is not a whole number"),
    ("rings bool", lambda: hex_grid(True), "n_rings=True is a boolean, not a count"),
    ("rings str", lambda: hex_grid("2"), "n_rings='2' is a str, not a whole number"),
    ("rings None", lambda: hex_grid(None), "n_rings=None is a NoneType"),
    ("rings nan", lambda: hex_grid(math.nan), "n_rings=nan is not a whole number"),
    ("isd zero", lambda: hex_grid(1, 0.0), "isd_m=0 m is outside the possible range (0, 1e+06] m"),
    ("isd negative", lambda: hex_grid(1, -500.0), "isd_m=-500 m is outside the possible range"),
    ("isd str", lambda: hex_grid(1, "500"), "isd_m='500' is a str, not a number"),
    ("isd nan", lambda: hex_grid(1, math.nan), "isd_m=nan m is not finite"),
    ("isd inf", lambda: hex_grid(1, math.inf), "isd_m=inf m is not finite"),
    ("sectors 2", lambda: hex_grid(1, sectors=2), "sectors=2; fix: use 3 (sectorised) or 1 (omni)"),
    ("sectors bool", lambda: hex_grid(1, sectors=True), "sectors=True; fix: use 3"),
    ("wraparound str", lambda: hex_grid(1, wraparound="yes"), "wraparound='yes'; fix: give True or False"),
    ("power mW", lambda: hex_grid(1, tx_power_dbm=40_000.0),
     "tx_power_dbm=40000 dBm is outside the possible range [-100, 100] dBm; fix: give the power in dBm"),
    ("power 1e6", lambda: hex_grid(1, tx_power_dbm=1e6), "tx_power_dbm=1e+06 dBm is outside"),
    ("power nan", lambda: hex_grid(1, tx_power_dbm=math.nan), "tx_power_dbm=nan dBm is not finite"),
    ("power -inf", lambda: hex_grid(1, tx_power_dbm=-math.inf), "tx_power_dbm=-inf dBm is not finite"),
    ("gain 100", lambda: hex_grid(1, antenna_gain_dbi=100.0),
     "antenna_gain_dbi=100 dBi is outside the possible range [-50, 50] dBi"),
    ("height negative", lambda: hex_grid(1, height_m=-1.0), "height_m=-1 m is outside the possible range"),
    ("height 5 km", lambda: hex_grid(1, height_m=5000.0), "height_m=5000 m is outside"),
    ("bandwidth zero", lambda: hex_grid(1, bandwidth_mhz=0.0),
     "bandwidth_mhz=0 MHz is outside the possible range (0, 100000] MHz"),
    ("bandwidth in Hz", lambda: hex_grid(1, bandwidth_mhz=1e7), "10 MHz = 1e7 Hz"),
    ("bandwidth str", lambda: hex_grid(1, bandwidth_mhz="10"), "bandwidth_mhz='10' is a str"),
    ("resources sum", lambda: hex_grid(1, resource_mhz=[5.0, 4.0]), "resource_mhz sums to 9 MHz"),
    ("resource negative", lambda: hex_grid(1, resource_mhz=[-1.0, 11.0]),
     "resource_mhz entries [0] are not positive"),
    ("resource str", lambda: hex_grid(1, resource_mhz="abc"), "resource_mhz='abc' cannot be read as numbers"),
    ("crs unknown", lambda: hex_grid(1, crs="EPSG:999999"), "crs='EPSG:999999' is not a CRS pyproj knows"),
    ("crs degrees", lambda: hex_grid(1, crs="EPSG:4326"), "is in a geographic CRS"),
    # drop_users
    ("users negative", lambda: drop_users(NET, -1, rng=0),
     "n=-1 is below 0; fix: give a whole number of users"),
    ("users fraction", lambda: drop_users(NET, 8.5, rng=0), "n=8.5 is not a whole number"),
    ("users bool", lambda: drop_users(NET, True, rng=0), "n=True is a boolean, not a count"),
    ("users str", lambda: drop_users(NET, "5", rng=0), "n='5' is a str, not a whole number"),
    ("users nan", lambda: drop_users(NET, math.nan, rng=0), "n=nan is not a whole number"),
    ("density negative", lambda: drop_users(NET, density_per_km2=-1.0, rng=0),
     "density_per_km2=-1 per km² is outside the possible range"),
    ("density nan", lambda: drop_users(NET, density_per_km2=math.nan, rng=0), "density_per_km2=nan"),
    ("density str", lambda: drop_users(NET, density_per_km2="many", rng=0),
     "density_per_km2='many' is a str"),
    ("n and density", lambda: drop_users(NET, 5, density_per_km2=5.0, rng=0), "give exactly one of n or"),
    ("clustered 1.5", lambda: drop_users(NET, 5, clustered_fraction=1.5, rng=0),
     "clustered_fraction=1.5 is outside the possible range [0, 1]; fix: give a fraction in [0, 1]"),
    ("indoor nan", lambda: drop_users(NET, 5, indoor_fraction=math.nan, rng=0),
     "indoor_fraction=nan is not finite"),
    ("cluster radius", lambda: drop_users(NET, 5, cluster_radius_m=-5.0, rng=0), "cluster_radius_m=-5 m"),
    ("weight zero", lambda: drop_users(NET, 5, weight=0.0, rng=0),
     "weight=0 is outside the possible range (0, inf)"),
    ("weight inf", lambda: drop_users(NET, 5, weight=math.inf, rng=0), "weight=inf is not finite"),
    ("demand zero", lambda: drop_users(NET, 5, demand_mbps=0.0, rng=0), "demand_mbps=0 Mbit/s is outside"),
    ("demand nan", lambda: drop_users(NET, 5, demand_mbps=math.nan, rng=0),
     "demand_mbps=nan Mbit/s is not finite"),
    ("region point", lambda: drop_users(NET, 5, region=shapely.Point(X0, Y0), rng=0),
     "region is a Point (Point)"),
    ("region flat", lambda: drop_users(NET, 5, region=shapely.box(X0, Y0, X0, Y0 + 9), rng=0),
     "region is empty or has zero area"),
    ("region str", lambda: drop_users(NET, 5, region="downtown", rng=0), "region is a str"),
    ("users rng negative", lambda: drop_users(NET, 5, rng=-1), "rng=-1 cannot seed a generator"),
    ("users rng float", lambda: drop_users(NET, 5, rng=1.5), "rng=1.5 is a float"),
    ("users no network", lambda: drop_users("net", 5, rng=0),
     "network is a str; fix: give a cellopt Network"),
    # add_picos
    ("picos negative", lambda: add_picos(NET, -2, rng=0), "per_sector=-2 is below 0"),
    ("picos fraction", lambda: add_picos(NET, 1.5, rng=0), "per_sector=1.5 is not a whole number"),
    ("picos str", lambda: add_picos(NET, "4", rng=0), "per_sector='4' is a str"),
    ("picos rounds", lambda: add_picos(NET, 1, max_rounds=0, rng=0), "max_rounds=0 is below 1"),
    ("picos min dist", lambda: add_picos(NET, 1, min_dist_pico_m=-1.0, rng=0),
     "min_dist_pico_m=-1 m is outside"),
    ("picos macro dist", lambda: add_picos(NET, 1, min_dist_macro_m=math.nan, rng=0),
     "min_dist_macro_m=nan m"),
    ("picos power", lambda: add_picos(NET, 1, tx_power_dbm=1e6, rng=0), "tx_power_dbm=1e+06 dBm is outside"),
    ("picos height", lambda: add_picos(NET, 1, height_m="tall", rng=0), "height_m='tall' is a str"),
    ("picos cannot pack", lambda: add_picos(NET, 1000, rng=0),
     "could not place 1000 picos per sector: a sector of 72,169 m² holds at most 67 points 40 m apart"),
    # add_femtocells
    ("femto power", lambda: add_femtocells(NET, density_per_km2=10, tx_power_dbm=200.0, rng=0),
     "tx_power_dbm=200 dBm is outside the possible range"),
    ("femto gain", lambda: add_femtocells(NET, density_per_km2=10, antenna_gain_dbi=-math.inf, rng=0),
     "antenna_gain_dbi=-inf dBi is not finite"),
    ("femto height", lambda: add_femtocells(NET, density_per_km2=10, height_m=2000.0, rng=0),
     "height_m=2000 m"),
    ("femto owner", lambda: add_femtocells(NET, density_per_km2=10, owner=3, rng=0), "owner is 3"),
    ("femto adoption bool", lambda: add_femtocells(NET, adoption=True, rng=0), "adoption=True is a bool"),
    # sectorize, study_window
    ("sectorize zero", lambda: sectorize(NET, 0), "sectors=0 is below 1"),
    ("sectorize fraction", lambda: sectorize(NET, 2.5), "sectors=2.5 is not a whole number"),
    ("sectorize azimuth", lambda: sectorize(NET, 3, first_azimuth_deg=math.nan), "first_azimuth_deg=nan"),
    ("sectorize gain", lambda: sectorize(NET, 3, antenna_gain_dbi=99.0),
     "antenna_gain_dbi=99 dBi is outside"),
    ("guard negative", lambda: study_window(NET, NET.region, guard_m=-1.0), "guard_m=-1 m is outside"),
    ("guard str", lambda: study_window(NET, NET.region, guard_m="wide"), "guard_m='wide' is a str"),
    # tables and Network
    ("x str", lambda: cells_frame(["a", "b"], [0.0, 1.0], crs=CRS, tier="macro", tx_power_dbm=46.0,
                                  antenna_gain_dbi=14.0), "x_m=['a', 'b'] cannot be read as numbers"),
    ("x y lengths", lambda: users_frame([X0, X0], [Y0, Y0, Y0], crs=CRS), "x_m has shape (2,) but y_m (3,)"),
    ("cells not a table", lambda: Network(cells="cells.csv"), "cells is a str, not a GeoDataFrame"),
    ("network bandwidth str", lambda: Network(cells=NET.cells, bandwidth_mhz="ten").validate(),
     "bandwidth_mhz='ten' is a str"),
    ("table power", lambda: omni_network(tx_power_dbm=500.0).validate(),
     "tx_power_dbm is not finite or outside [-100, 100] dBm"),
    ("table gain", lambda: omni_network(antenna_gain_dbi=80.0).validate(),
     "antenna_gain_dbi is not finite or"),
    ("table height", lambda: omni_network(height_m=2000.0).validate(), "height_m is not finite or outside"),
    ("wrap shifts odd", lambda: NET.replace(wrap_shifts_m=[1.0, 2.0, 3.0]), "wrap_shifts_m has shape (3,)"),
    ("wrap shifts str", lambda: NET.replace(wrap_shifts_m="x"),
     "wrap_shifts_m='x' cannot be read as numbers"),
    ("wrap shifts 3 columns", lambda: NET.replace(wrap_shifts_m=np.zeros((2, 3))),
     "wrap_shifts_m has shape (2, 3)"),
    ("sectors array", lambda: hex_grid(1, sectors=np.array([1, 3])), "sectors=array([1, 3]); fix"),
    ("crs array", lambda: hex_grid(1, crs=np.ones(3)), "is not a CRS pyproj knows"),
    ("cell ids short", lambda: cells_frame([X0, X0], [Y0, Y0], crs=CRS, tier="macro", tx_power_dbm=46.0,
                                           antenna_gain_dbi=14.0, cell_id=[1]),
     "cell_id has shape (1,), not (2,); fix: give one value per row"),
]


@pytest.mark.parametrize(("build", "text"), [c[1:] for c in BUILDER_ERRORS],
                         ids=[c[0] for c in BUILDER_ERRORS])
def test_builders_refuse_bad_input(build, text):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", IMPLAUSIBLE, UserWarning)
        with raises(ValidationError, text) as err:
            build()
    assert "fix:" in str(err.value) or "NoneType" in str(err.value) or "geographic" in str(err.value)


# ====================================================================== radio
NO_TIER = {"macro": 8.0, "pico": 10.0, "femto": 10.0}

RADIO_MODEL_ERRORS = [
    ("nf nan", {"noise_figure_db": math.nan}, "RadioModel.noise_figure_db=nan dB is not finite"),
    ("nf negative", {"noise_figure_db": -3.0},
     "RadioModel.noise_figure_db=-3 dB is outside the possible range"),
    ("nf str", {"noise_figure_db": "9"}, "RadioModel.noise_figure_db='9' is a str"),
    ("shadow negative", {"shadowing_std_db": {**NO_TIER, "macro": -1.0}},
     "RadioModel.shadowing_std_db['macro']=-1 dB is outside"),
    ("shadow huge", {"shadowing_std_db": {**NO_TIER, "pico": 1000.0}}, "shadowing_std_db['pico']=1000 dB"),
    ("shadow tier typo", {"shadowing_std_db": {**NO_TIER, "mega": 3.0}},
     "RadioModel.shadowing_std_db has unknown tiers ['mega']"),
    ("min distance zero", {"min_distance_m": {"macro": 0.0, "pico": 10.0, "femto": 10.0}},
     "RadioModel.min_distance_m['macro']=0 m is outside the possible range [0.001, 100000] m"),
    ("wall negative", {"wall_loss_db": -20.0}, "RadioModel.wall_loss_db=-20 dB is outside"),
    ("wall nan", {"wall_loss_db": {"macro": math.nan, "pico": 20.0, "femto": 20.0}},
     "RadioModel.wall_loss_db['macro']=nan dB is not finite"),
    ("beamwidth zero", {"theta_3db_deg": 0.0},
     "RadioModel.theta_3db_deg=0 deg is outside the possible range (0, 360]"),
    ("floor negative", {"max_attenuation_db": -5.0}, "RadioModel.max_attenuation_db=-5 dB is outside"),
    ("building inf", {"building_radius_m": math.inf}, "RadioModel.building_radius_m=inf m is not finite"),
    ("efficiency name", {"spectral_efficiency": "magic"}, "RadioModel.spectral_efficiency='magic'"),
    ("pathloss number", {"pathloss": {"macro": 128.1}}, "RadioModel.pathloss['macro'] is a float"),
    ("pathloss str", {"pathloss": "tr36814"}, "RadioModel.pathloss is a str"),
    ("indoor tiers", {"indoor_tiers": ("attic",)}, "RadioModel.indoor_tiers has unknown tiers ['attic']"),
]


@pytest.mark.parametrize(("fields", "text"), [c[1:] for c in RADIO_MODEL_ERRORS],
                         ids=[c[0] for c in RADIO_MODEL_ERRORS])
def test_radio_model_refuses_impossible_values(fields, text):
    with raises(ValidationError, text):
        RadioModel(**fields)


def test_radio_model_lists_every_problem_and_accepts_a_lone_indoor_tier():
    with pytest.raises(ValidationError) as err:
        RadioModel(noise_figure_db=math.nan, theta_3db_deg=-1.0)
    assert len(err.value.problems) == 2
    assert RadioModel(indoor_tiers="femto").indoor_tiers == ("femto",)


def _nan_efficiency(sinr):
    return np.full(np.shape(sinr), np.nan)


def _negative_efficiency(sinr):
    return -np.ones(np.shape(sinr))


def _nan_pico_loss(distance_m):
    return np.full(np.shape(distance_m), np.nan)


PICO_NET = drop_users(add_picos(NET, 1, rng=2), 10, rng=3)

LINK_ERRORS = [
    ("candidates zero", dict(n_candidates=0), "n_candidates=0 is below 1"),
    ("candidates fraction", dict(n_candidates=2.5), "n_candidates=2.5 is not a whole number"),
    ("candidates bool", dict(n_candidates=True), "n_candidates=True is a boolean"),
    ("window negative", dict(window_db=-1.0), "window_db=-1 dB is outside the possible range"),
    ("window nan", dict(window_db=math.nan), "window_db=nan dB is not finite"),
    ("workers zero", dict(workers=0), "workers=0 is below 1"),
    ("seed negative", dict(rng=-1), "rng=-1; fix: give a seed ≥ 0 and < 2**64"),
    ("seed too big", dict(rng=2**64), "rng=18446744073709551616; fix"),
    ("seed str", dict(rng="seed"), "rng='seed' is a str"),
    ("seed bool", dict(rng=True), "rng=True is a boolean"),
    ("power mW", dict(power_dbm=np.full(21, 1e6)), "power_dbm of cells rows [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"),
    ("power nan", dict(power_dbm=np.full(21, np.nan)), "power_dbm has NaN or +inf entries"),
    ("power str", dict(power_dbm="high"), "power_dbm is not numeric"),
    ("power scalar", dict(power_dbm=1e300), "power_dbm has shape (); fix: give shape (21,) or (21, 1)"),
    ("model str", dict(model="default"), "model is a str; fix: give a RadioModel"),
    ("efficiency nan", dict(model=RadioModel(spectral_efficiency=_nan_efficiency)),
     "80 links have a NaN or infinite RSRP, SINR or rate"),
    ("efficiency negative", dict(model=RadioModel(spectral_efficiency=_negative_efficiency)),
     "or a negative rate: users rows [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"),
    ("efficiency shape", dict(model=RadioModel(spectral_efficiency=lambda s: np.ones(3))),
     "the spectral efficiency returned shape (3,)"),
]


@pytest.mark.parametrize(("kwargs", "text"), [c[1:] for c in LINK_ERRORS], ids=[c[0] for c in LINK_ERRORS])
def test_link_table_refuses_bad_arguments_and_never_returns_nan(kwargs, text):
    net = drop_users(NET, 10, rng=4)
    with raises(ValidationError, text):
        link_table(net, **kwargs)


def test_the_final_check_names_the_cells_and_users_of_nan_links():
    model = RadioModel(pathloss={"macro": lambda d: 128.1 + 37.6 * np.log10(d * 1e-3),
                                 "pico": _nan_pico_loss, "femto": _nan_pico_loss})
    with pytest.raises(ValidationError) as err:
        link_table(PICO_NET, model=model, rng=1)
    msg = str(err.value)
    assert "NaN or infinite RSRP, SINR or rate" in msg
    assert "(ids [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])" in msg  # the users, by id
    assert "cells rows [0, 1, 2" in msg and "fix: check the radio parameters" in msg


def test_link_table_without_a_network():
    with raises(ValidationError, "network is a NoneType"):
        link_table(None)


RADIO_FUNCTION_ERRORS = [
    ("noise figure nan", lambda: thermal_noise_dbm(10.0, math.nan), "noise_figure_db=nan dB is not finite"),
    ("noise bandwidth", lambda: thermal_noise_dbm(0.0), "bandwidth_mhz=0.0; fix: give bandwidths > 0"),
    ("frequency zero", lambda: free_space(100.0, frequency_mhz=0.0), "frequency_mhz=0 MHz is outside"),
    ("frequency in Hz", lambda: free_space(100.0, frequency_mhz=2e9), "2 GHz = 2000 MHz"),
    ("gap nan", lambda: shannon_gap(1.0, gap_db=math.nan), "gap_db=nan dB is not finite"),
    ("attenuation zero", lambda: tr36942(1.0, attenuation=0.0),
     "attenuation=0 is outside the possible range (0, 1]"),
    ("tr36942 cap", lambda: tr36942(1.0, max_bps_hz=-1.0), "max_bps_hz=-1 bit/s/Hz is outside"),
    ("beamwidth zero", lambda: sector_gain_db(np.zeros(2), theta_3db_deg=0.0), "theta_3db_deg=0 deg"),
    ("efficiency name", lambda: get_efficiency("nope"), "unknown spectral efficiency 'nope'"),
    ("dense nan gain", lambda: sinr_db(np.full((1, 2), np.nan), np.zeros(2), -95.0),
     "gain_db has NaN entries"),
    ("dense mW power", lambda: sinr_db(np.zeros((1, 2)), np.full(2, 4e4), -95.0),
     "power_dbm has NaN entries or"),
    ("coupling users", lambda: coupling_db(USERS, users=np.array([0, 99])),
     "users must be row positions in [0, 20)"),
]


@pytest.mark.parametrize(("call", "text"), [c[1:] for c in RADIO_FUNCTION_ERRORS],
                         ids=[c[0] for c in RADIO_FUNCTION_ERRORS])
def test_radio_functions_refuse_bad_parameters(call, text):
    with raises(ValidationError, text):
        call()


# ====================================================================== implausible values warn
WARNINGS = [
    ("isd in km", lambda: hex_grid(1, 0.5), "isd_m=0.5 m is outside the usual range [20, 50000] m"),
    ("power in W", lambda: hex_grid(1, tx_power_dbm=1.0), "tx_power_dbm=1 dBm is outside the usual range"),
    ("bandwidth in GHz", lambda: hex_grid(1, bandwidth_mhz=0.01),
     "bandwidth_mhz=0.01 MHz is outside the usual"),
    ("height in cm", lambda: hex_grid(1, height_m=500.0), "height_m=500 m is outside the usual range"),
    ("linear gain", lambda: hex_grid(1, antenna_gain_dbi=40.0),
     "antenna_gain_dbi=40 dBi is outside the usual"),
    ("femto power in W", lambda: add_femtocells(NET, density_per_km2=1, tx_power_dbm=0.1, rng=0),
     "tx_power_dbm=0.1 dBm"),
    ("radius in km", lambda: drop_users(add_picos(NET, 1, rng=0), 5, clustered_fraction=0.5,
                                        cluster_radius_m=0.04, rng=0), "cluster_radius_m=0.04 m"),
    ("noise figure", lambda: RadioModel(noise_figure_db=30.0),
     "RadioModel.noise_figure_db=30 dB is outside the usual"),
    ("beamwidth radians", lambda: RadioModel(theta_3db_deg=1.22), "in degrees, not radians"),
    ("shadowing", lambda: RadioModel(shadowing_std_db=30.0), "RadioModel.shadowing_std_db=30 dB"),
    ("wall loss", lambda: RadioModel(wall_loss_db=80.0), "RadioModel.wall_loss_db=80 dB"),
    ("frequency in GHz", lambda: free_space(100.0, frequency_mhz=2.0),
     "frequency_mhz=2 MHz is outside the usual"),
]


@pytest.mark.parametrize(("call", "text"), [c[1:] for c in WARNINGS], ids=[c[0] for c in WARNINGS])
def test_legal_but_implausible_values_warn(call, text):
    with pytest.warns(UserWarning, match=re.escape(text)):
        call()


def test_defaults_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net = drop_users(add_femtocells(add_picos(hex_grid(1), 1, rng=0), density_per_km2=5, rng=1),
                         10, clustered_fraction=0.5, rng=2)
        link_table(net, model=RadioModel(), rng=3)
        free_space(100.0)


# ====================================================================== memory guard
def test_memory_guard_refuses_before_allocating():
    tracemalloc.start()
    try:
        with raises(ResourceLimitError, "drop_users: n=1,000,000,000 users need about 466 GB"):
            drop_users(NET, 10**9, rng=0)
        with raises(ResourceLimitError, "hex_grid: n_rings=100,000 (30,000,300,001 sites)"):
            hex_grid(100_000)
        with raises(ResourceLimitError, "drop_seeds: 1,000,000,000 drops"):
            drop_seeds(1, 10**9)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * 2**20


MEMORY_ERRORS = [
    ("users density", lambda: drop_users(NET, density_per_km2=1e12, rng=0),
     "drop_users: density_per_km2=1e+12 over 1.52 km² (about 1.52e+12 users)"),
    ("users density beyond Poisson", lambda: drop_users(NET, density_per_km2=1e300, rng=0),
     "about 1.52e+300 users"),
    ("site positions", lambda: hex_site_positions(10**5, 500.0), "hex_site_positions: n_rings=100,000"),
    ("picos", lambda: add_picos(NET, 10**6, min_dist_pico_m=0.0, rng=0),
     "add_picos: per_sector=1,000,000 × 21 macro cells need about"),
    ("femtocells", lambda: add_femtocells(NET, density_per_km2=1e9, rng=0),
     "add_femtocells: 1e+09 per km² over 1.52 km² (about 1.52e+09 cells)"),
    ("femtocells in buildings", lambda: add_femtocells(NET, density_per_km2=1e12, rng=0,
                                                       buildings=[shapely.box(X0, Y0, X0 + 50, Y0 + 50)]),
     "add_femtocells: 1e+12 per km²"),
    ("sectors", lambda: sectorize(hex_grid(1, sectors=1), 10**9),
     "sectorize: 7 sites × sectors=1,000,000,000"),
    ("grid", lambda: hex_grid(1000), "hex_grid: n_rings=1,000 (3,003,001 sites) need about 12.8 GB"),
    ("users", lambda: drop_users(NET, 10**8, rng=0), "drop_users: n=100,000,000 users need about 46.6 GB"),
    ("rings near int64", lambda: hex_grid(2**62), "sites) need about"),
]


@pytest.mark.parametrize(("call", "text"), [c[1:] for c in MEMORY_ERRORS], ids=[c[0] for c in MEMORY_ERRORS])
def test_counts_beyond_memory_are_refused(call, text, monkeypatch):
    monkeypatch.setenv("CELLOPT_MAX_MEMORY_GB", "4")
    with pytest.raises(ResourceLimitError) as err:
        call()
    msg = str(err.value)
    assert "more than the 4 GB cellopt may use" in msg and "CELLOPT_MAX_MEMORY_GB" in msg
    if text:
        assert text in msg


def test_the_link_table_guard_counts_links_and_blocks(monkeypatch):
    net = drop_users(NET, 200, rng=0)
    need = link_table_nbytes(200, 21, 1, 8, 7)
    assert need == pytest.approx(200 * 8 * 160 + 200 * (21 * 160 + 8 * 160) + 200 * 64)
    monkeypatch.setenv("CELLOPT_MAX_MEMORY_GB", str(0.9 * need / 2**30))
    with raises(ResourceLimitError,
                "a link table of 200 users × 8 candidate cells × 1 resource(s) need about"):
        link_table(net, rng=0)
    monkeypatch.setenv("CELLOPT_MAX_MEMORY_GB", str(1.1 * need / 2**30))
    assert len(link_table(net, rng=0)) == 1600


def test_the_override_raises_and_lowers_the_limit(monkeypatch):
    monkeypatch.setenv("CELLOPT_MAX_MEMORY_GB", "1e-6")  # about 1 kB
    with raises(ResourceLimitError, "drop_users: n=1,000 users"):
        drop_users(NET, 1000, rng=0)
    monkeypatch.setenv("CELLOPT_MAX_MEMORY_GB", "1")
    assert drop_users(NET, 1000, rng=0).n_users == 1000
    monkeypatch.setenv("CELLOPT_MAX_MEMORY_GB", "lots")
    with raises(ValidationError, "CELLOPT_MAX_MEMORY_GB='lots'"):
        drop_users(NET, 1, rng=0)


# ====================================================================== degenerate but valid
def assert_consistent(net: Network, links: LinkTable) -> None:
    assert (links.n_users, links.n_cells) == (net.n_users, net.n_cells)
    for f in FIELDS:
        assert getattr(links, f).shape == (len(links),)
    assert links.user.dtype == links.cell.dtype == links.resource.dtype == np.int64
    assert not np.isnan(links.sinr_db).any() and np.isfinite(links.rate_mbps).all()
    assert (links.rate_mbps >= 0).all()
    assert links.users_with_rate().shape == (net.n_users,)
    links.validate()


@pytest.mark.parametrize("drop", [dict(n=0), dict(density_per_km2=0.0), dict(n=np.int64(0))],
                         ids=["n=0", "density=0", "n=int64(0)"])
def test_zero_users_give_an_empty_but_valid_link_table(drop):
    net = drop_users(NET, **drop, rng=0)
    links = link_table(net, rng=0)
    assert net.n_users == 0 and len(links) == 0
    assert_consistent(net, links)
    assert list(links.to_frame().columns) == [*FIELDS, "coupling_loss_db"]
    assert links.best_by().shape == (0,) and links.select_users(np.zeros(0, bool)).n_users == 0


def test_nobody_served_gives_outage_users_not_nan():
    # every cell at one point, far away and at -30 dBm: no link reaches -10 dB SINR
    cells = cells_frame(np.full(3, X0), np.full(3, Y0), crs=CRS, tier="macro", tx_power_dbm=-30.0,
                        antenna_gain_dbi=0.0, site_id=[0, 0, 0], azimuth_deg=[30.0, 150.0, 270.0])
    users = users_frame(X0 + np.array([3000.0, -4000.0, 500.0]), Y0 + np.array([0.0, 100.0, 2500.0]), crs=CRS)
    net = Network(cells=cells, users=users)
    links = link_table(net, n_candidates=2, rng=0)
    assert_consistent(net, links)
    assert len(links) == 3 * 2 and (links.rate_mbps == 0).all()
    np.testing.assert_array_equal(links.users_with_rate(), [False, False, False])
    np.testing.assert_array_equal(np.bincount(links.user), [2, 2, 2])  # each keeps its candidates


def test_degenerate_layouts():
    one_site = hex_grid(0)
    assert one_site.n_cells == 3 and one_site.wrap_shifts_m is None
    assert add_picos(NET, 0, rng=0).n_cells == 21
    assert add_femtocells(NET, density_per_km2=0.0, rng=0).n_cells == 21
    links = link_table(drop_users(one_site, 4, rng=0), n_candidates=50, rng=0)
    np.testing.assert_array_equal(np.bincount(links.user), [3, 3, 3, 3])
    net = drop_users(NET, 5, rng=1)
    a, b = link_table(net, window_db=math.inf, rng=2), link_table(net, rng=2)
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))


def test_no_cells_is_an_error():
    empty = Network(cells=NET.cells.iloc[:0], region=NET.region)
    net = drop_users(empty, 3, rng=0)  # users may come before cells
    with raises(ValidationError, "the network has no cells; fix: add cells before building links"):
        link_table(net)


def _table(**changes) -> LinkTable:
    fields = dict(user=np.array([0, 1]), cell=np.array([0, 0]), resource=np.array([0, 0]),
                  rsrp_dbm=np.array([-80.0, -90.0]), sinr_db=np.array([3.0, -1.0]),
                  rate_mbps=np.array([5.0, 1.0]), n_users=2, n_cells=1, resource_mhz=np.array([10.0]))
    return LinkTable(**{**fields, **changes})


@pytest.mark.parametrize(("changes", "text"), [
    (dict(user=np.array([0, 5])), "user index outside [0, 2)"),
    (dict(cell=np.array([0, -1])), "cell index outside [0, 1)"),
    (dict(user=np.array([1, 0])), "links are not sorted by user"),
    (dict(rate_mbps=np.array([np.nan, 1.0])), "1 links have a NaN or infinite RSRP, SINR or rate"),
    (dict(sinr_db=np.array([np.inf, 1.0])), "users rows [0], cells rows [0]"),
    (dict(rate_mbps=np.array([1.0])), "link table columns have shapes"),
], ids=["user range", "cell range", "order", "nan rate", "inf sinr", "shapes"])
def test_link_table_consistency_check(changes, text):
    with raises(ValidationError, text):
        _table(**changes).validate()


def test_select_users_needs_a_mask_of_every_user():
    with raises(ValidationError, "keep has shape (3,)"):
        _table().select_users(np.ones(3, bool))
    with raises(ValidationError, "dtype int64"):
        _table().select_users(np.array([1, 0]))


# ====================================================================== scenario files
SCENARIO = """
[network]
builder = "hex_grid"
{network}
{sections}
[users]
{users}
"""


def scenario(tmp_path: Path, network: str = "", users: str = "n = 10", sections: str = "") -> Path:
    path = tmp_path / "s.toml"
    if "n_rings" not in network:
        network = "n_rings = 1\n" + network
    path.write_text(textwrap.dedent(SCENARIO.format(network=network, users=users, sections=sections)))
    return path


SCENARIO_ERRORS = [
    # (network keys, users keys, other sections, error, message part)
    ("", "n = 1e9", "", ValidationError,
     "[users] key 'n' expected integer, got float (1000000000.0); fix: write a whole number"),
    ("", "n = 1_000_000_000", "", ResourceLimitError,
     "[users] n=1,000,000,000: 1e+09 users need about 466 GB"),
    ("n_rings = 100_000", "n = 10", "", ResourceLimitError,
     "[network] n_rings=100,000 (30,000,300,001 sites)"),
    ("", "n = 10", "[picos]\nper_sector = 1_000_000", ResourceLimitError,
     "[picos] per_sector=1,000,000 × 21"),
    ("", "n = 10", "[femtocells]\ndensity_per_km2 = 1e9", ResourceLimitError,
     "[femtocells] 1e+09 per km² over 1.52 km²"),
    ("", "density_per_km2 = 1e10", "", ResourceLimitError, "[users] density_per_km2=10,000,000,000.0"),
    ("", "n = 20_000_000", "", ResourceLimitError,
     "with [radio] n_candidates=8: a link table of 2e+07 users"),
    ("", "n = 10", "[seeds]\ndrops = 1_000_000_000", ValidationError,
     "[seeds] key 'drops' must be ≥ 1 and ≤ 1,000,000, got 1,000,000,000"),
    ("", "n = 10", "[seeds]\nbase = -1", ValidationError, "[seeds] key 'base' must be ≥ 0"),
    ("", "n = -1", "", ValidationError, "[users] n=-1 is below 0"),
    ("", "n = 10", "[picos]\nper_sector = -2", ValidationError, "[picos] per_sector=-2 is below 0"),
    ("", "n = 10", "[picos]\nmax_rounds = 0", ValidationError, "[picos] max_rounds=0 is below 1"),
    ("tx_power_dbm = 1e6", "n = 10", "", ValidationError, "[network] tx_power_dbm=1e+06 dBm is outside"),
    ("isd_m = 0.0", "n = 10", "", ValidationError, "[network] isd_m=0 m is outside the possible range"),
    ("bandwidth_mhz = 1e7", "n = 10", "", ValidationError, "[network] bandwidth_mhz=1e+07 MHz is outside"),
    ("resource_mhz = [5.0, 4.0]", "n = 10", "", ValidationError, "[network] resource_mhz sums to 9 MHz"),
    ("resource_mhz = [-1.0, 11.0]", "n = 10", "", ValidationError, "[network] resource_mhz=[-1.0, 11.0]"),
    ("sectors = 2", "n = 10", "", ValidationError, "[network] sectors=2; fix: use 3"),
    ("crs = 'EPSG:999999'", "n = 10", "", ValidationError, "[network] crs='EPSG:999999' is not a CRS"),
    ("height_m = -3.0", "n = 10", "", ValidationError, "[network] height_m=-3 m is outside"),
    ("", "n = 10", "[radio]\nnoise_figure_db = nan", ValidationError,
     "[radio] noise_figure_db=nan dB is not finite"),
    ("", "n = 10", "[radio]\nspectral_efficiency = 'magic'", ValidationError,
     "[radio] spectral_efficiency='magic'; fix: use one of"),
    ("", "n = 10", "[radio]\nindoor_tiers = ['attic']", ValidationError,
     "[radio] indoor_tiers has unknown tiers"),
    ("", "n = 10", "[radio]\nn_candidates = 0", ValidationError, "[radio] n_candidates=0 is below 1"),
    ("", "n = 10", "[radio]\nwindow_db = -3.0", ValidationError, "[radio] window_db=-3 dB is outside"),
    ("", "n = 10", "[radio]\ntheta_3db_deg = 0.0", ValidationError, "[radio] theta_3db_deg=0 deg is outside"),
    ("", "n = 10", "[femtocells]\ndensity_per_km2 = 5.0\nowner = 'landlord'", ValidationError,
     "[femtocells] owner='landlord'"),
    ("", "n = 10", "[femtocells]\ndensity_per_km2 = 5.0\nadoption = 0.1", ValidationError,
     "[femtocells] give exactly one of the keys 'density_per_km2' and 'adoption'"),
    ("", "n = 10", "[femtocells]\nadoption = 1.5", ValidationError, "[femtocells] adoption=1.5 is outside"),
    ("", "n = 10", "[femtocells]\ndensity_per_km2 = 5.0\nbackhaul_mbps = -1.0", ValidationError,
     "[femtocells] backhaul_mbps=-1 Mbit/s is outside"),
    ("", "n = 10\ndensity_per_km2 = 3.0", "", ValidationError,
     "[users] give exactly one of the keys 'n' and"),
    ("", "indoor_fraction = 0.5", "", ValidationError, "[users] give exactly one of the keys 'n' and"),
    ("", "n = 10\nclustered_fraction = 0.5", "", ValidationError,
     "[users] clustered_fraction > 0 clusters users"),
    ("", "n = 10\nweight = 0.0", "", ValidationError, "[users] weight=0 is outside"),
    ("", "n = 10\ndemand_mbps = nan", "", ValidationError, "[users] demand_mbps=nan Mbit/s is not finite"),
    ("", "n = 10\nusers = 3", "", ValidationError, "[users] unknown key 'users'"),
    ("", "n = 10", "[problem]\nalpha = -1.0", ValidationError, "[problem] alpha=-1 is outside"),
    ("", "n = 10", "[problem]\nprice_per_mbps = inf", ValidationError,
     "[problem] price_per_mbps=inf per Mbit/s"),
]


@pytest.mark.parametrize(("network", "users", "sections", "exc", "text"), SCENARIO_ERRORS,
                         ids=[f"{i}-{c[4][:40]}" for i, c in enumerate(SCENARIO_ERRORS)])
def test_scenario_keys_are_checked_at_load_time(tmp_path, network, users, sections, exc, text):
    path = scenario(tmp_path, network, users, sections)
    with pytest.raises(exc) as err:
        load_scenario(path)
    assert type(err.value) is exc
    assert f"{path}: {text}" in str(err.value) or text in str(err.value)
    assert str(path) in str(err.value)
    assert "fix:" in str(err.value) or "valid:" in str(err.value)


@pytest.mark.parametrize(("key", "text"), [
    ("merge_distance_m = -1.0", "[network] merge_distance_m=-1 m is outside"),
    ("region_buffer_m = -5.0", "[network] region_buffer_m=-5 m is outside"),
    ("tier = 'mega'", "[network] tier has unknown tiers ['mega']"),
    ("window = [1.0, 2.0, 3.0]", "[network] window=[1.0, 2.0, 3.0]; fix: give 4 finite numbers"),
])
def test_file_scenario_keys_are_checked_at_load_time(tmp_path, key, text):
    path = tmp_path / "f.toml"
    path.write_text(f'[network]\nbuilder = "file"\npath = "cells.csv"\n{key}\n[users]\nn = 5\n')
    with raises(ValidationError, text):
        load_scenario(path)


def test_zero_users_scenario_builds_an_empty_drop(tmp_path):
    for users in ("n = 0", "density_per_km2 = 0.0"):
        drop = load_scenario(scenario(tmp_path, users=users)).build(3)
        net, links, problem = drop.network, drop.links, drop.problem
        assert net.n_users == 0 and net.n_cells == 21
        assert_consistent(net, links)
        assert len(links) == 0 and problem.n_users == 0 and problem.n_links == 0


def test_outage_scenario_builds_with_every_user_left_out(tmp_path):
    path = scenario(tmp_path, network="isd_m = 5000.0\ntx_power_dbm = -30.0")
    with pytest.warns(UserWarning, match=re.escape("tx_power_dbm=-30 dBm is outside the usual range")):
        drop = load_scenario(path).build(3)
        net, links, problem = drop.network, drop.links, drop.problem
    assert_consistent(net, links)
    assert net.n_users == 10 and len(links) == 80 and not links.users_with_rate().any()
    assert problem.n_users == 0


def test_build_stage_errors_keep_their_class_and_name_the_section(tmp_path, monkeypatch):
    scn = load_scenario(scenario(tmp_path, sections="[picos]\nper_sector = 60\nmax_rounds = 1"))
    with raises(ValidationError, "[picos] could not place 60 picos per sector"):
        scn.build(1)
    scn = load_scenario(scenario(tmp_path))
    monkeypatch.setenv("CELLOPT_MAX_MEMORY_GB", "1e-9")
    with pytest.raises(ResourceLimitError, match=re.escape("s.toml: [network] hex_grid: n_rings=1")):
        scn.build(1)


def test_the_memory_override_applies_at_load_time(tmp_path, monkeypatch):
    path = scenario(tmp_path, users="n = 100_000")
    load_scenario(path)
    monkeypatch.setenv("CELLOPT_MAX_MEMORY_GB", "0.01")
    with raises(ResourceLimitError,
                "[users] n=100,000: 1e+05 users need about 0.0466 GB, more than the 0.01 GB"):
        load_scenario(path)


def test_drop_seeds_are_lazy_and_unchanged(tmp_path):
    expected = [int(c.generate_state(1)[0]) for c in np.random.SeedSequence(7).spawn(50)]
    assert drop_seeds(7, 50) == expected
    assert DropSeeds(7, 50) == tuple(expected) and list(DropSeeds(7, 50)) == expected
    assert DropSeeds(7, 50)[-1] == expected[-1] and DropSeeds(7, 50)[10:13] == expected[10:13]
    scn = load_scenario(scenario(tmp_path, sections=f"[seeds]\nbase = 7\ndrops = {MAX_DROPS}"))
    assert len(scn.seeds) == MAX_DROPS
    assert scn.seeds[49] == expected[49] == drop_seed(7, 49)
    with pytest.raises(IndexError):
        scn.seeds[MAX_DROPS]
    with raises(ValidationError, "drops=-1 is below 0"):
        drop_seeds(7, -1)


# ====================================================================== properties
def _maybe_bad(good: st.SearchStrategy, *bad) -> st.SearchStrategy:
    """A good value nine times in ten, else one of the bad ones."""
    return st.integers(0, 9).flatmap(lambda k: good if k else st.sampled_from(bad))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_rings=st.integers(0, 1),
    isd_m=_maybe_bad(st.floats(150.0, 3000.0), 0.0, -5.0, math.nan, 1e7, 0.5),
    sectors=st.sampled_from([1, 3]),
    tx_power_dbm=_maybe_bad(st.floats(-60.0, 70.0), 1e6, math.nan, -math.inf, 150.0),
    per_sector=st.integers(0, 2),
    femto_density=st.sampled_from([0.0, 5.0, 30.0]),
    n_users=st.integers(0, 25),
    indoor_fraction=st.floats(0.0, 1.0),
    noise_figure_db=_maybe_bad(st.floats(0.0, 30.0), math.nan, -1.0, 1e4),
    shadowing_std_db=_maybe_bad(st.floats(0.0, 30.0), -1.0, 500.0, math.inf),
    wall_loss_db=_maybe_bad(st.floats(0.0, 60.0), -10.0, 1e3),
    n_candidates=st.integers(1, 6),
    n_resources=st.integers(1, 3),
    efficiency=st.sampled_from(["tr36942", "shannon", "shannon_gap"]),
    seed=st.integers(0, 2**32),
)
def test_random_networks_give_finite_links_or_a_cellopt_error(
        n_rings, isd_m, sectors, tx_power_dbm, per_sector, femto_density, n_users, indoor_fraction,
        noise_figure_db, shadowing_std_db, wall_loss_db, n_candidates, n_resources, efficiency, seed):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", IMPLAUSIBLE, UserWarning)
        try:
            net = hex_grid(n_rings, isd_m, sectors=sectors, tx_power_dbm=tx_power_dbm,
                           resource_mhz=np.full(n_resources, 10.0 / n_resources))
            if n_rings and per_sector:
                net = add_picos(net, per_sector, rng=seed)
            net = add_femtocells(net, density_per_km2=femto_density, rng=seed)
            net = drop_users(net, n_users, indoor_fraction=indoor_fraction, rng=seed)
            model = RadioModel(noise_figure_db=noise_figure_db, shadowing_std_db=shadowing_std_db,
                               wall_loss_db=wall_loss_db, spectral_efficiency=efficiency)
            links = link_table(net, n_candidates, model=model, rng=seed)
        except CelloptError as err:
            event(f"refused: {type(err).__name__}")
            return
    event("built")
    assert_consistent(net, links)
    assert len(links) == n_users * min(n_candidates, net.n_cells) * n_resources
    assert (links.sinr_db < np.inf).all() and (links.rsrp_dbm < np.inf).all()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(
    isd=_maybe_bad(st.sampled_from(["500.0", "200", "1732.0"]), "0.0", "-1.0", "nan", "'far'"),
    power=_maybe_bad(st.sampled_from(["46.0", "-30.0", "20"]), "1e6", "inf", "true"),
    n=_maybe_bad(st.sampled_from(["0", "7", "15"]), "-3", "2.5", "1_000_000_000", "'ten'"),
    noise=_maybe_bad(st.sampled_from(["9.0", "0.0", "25.0"]), "nan", "-2.0", "300.0"),
    candidates=_maybe_bad(st.sampled_from(["1", "4"]), "0", "3.0"),
    per_sector=_maybe_bad(st.sampled_from(["0", "1", "2"]), "-1", "1_000_000"),
)
def test_random_scenarios_load_and_build_or_raise_a_cellopt_error(tmp_path, isd, power, n, noise,
                                                                   candidates, per_sector):
    path = scenario(tmp_path, network=f"isd_m = {isd}\ntx_power_dbm = {power}", users=f"n = {n}",
                    sections=f"[picos]\nper_sector = {per_sector}\n[radio]\nnoise_figure_db = {noise}\n"
                             f"n_candidates = {candidates}")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", IMPLAUSIBLE, UserWarning)
        try:
            drop = load_scenario(path).build(1)
            net, links, problem = drop.network, drop.links, drop.problem
        except CelloptError as err:
            assert str(path) in str(err)
            event(f"refused: {type(err).__name__}")
            return
    event("built")
    assert_consistent(net, links)
    assert problem.n_users == int(links.users_with_rate().sum())
