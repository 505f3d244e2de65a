"""Scenario files: one TOML file describes a topology, its users, radio, problem and methods.

A scenario file has these sections (every key is optional unless marked *required*;
absent keys take the defaults of the function they are passed to)::

    name = "hetnet"                 # optional, string
    description = "..."             # optional, string
    methods = ["max_rsrp", {name = "range_expansion", bias_db = 6, label = "RE 6 dB"}]
                                    # top-level keys come before the first [section]

    [network]                       # required
    builder = "hex_grid"            # required: "hex_grid", "poisson", "country" or "file"
    # hex_grid: n_rings, isd_m, sectors, wraparound, tx_power_dbm, antenna_gain_dbi,
    #           height_m, bandwidth_mhz, resource_mhz (array), crs
    # poisson:  side_m, wraparound, bandwidth_mhz, crs, and one table per tier
    #           [network.tiers.macro] (and .pico, .femto): density_per_km2 (required,
    #           > 0), tx_power_dbm, antenna_gain_dbi, height_m, sectors (1 or 3), owner
    #           (topology.poisson_layout: independent Poisson tiers in a square torus)
    # country:  side_m, n_cities, city_radius_m (2 numbers), bandwidth_mhz, crs, and tier
    #           tables [network.rural.macro], [network.urban.pico], ... as poisson's
    #           (topology.country_layout: a rural Poisson layout with city discs on top)
    # file:     path (required; relative to the TOML's folder), format, crs, source_crs,
    #           radio, mcc, mnc, bbox (4 numbers), cluster_sites, merge_distance_m, tier,
    #           tx_power_dbm, antenna_gain_dbi, height_m, bandwidth_mhz,
    #           region_buffer_m (service area = convex hull of the cells buffered by
    #           this many metres, default 500 m; users and femtocells are dropped there),
    #           window = [lon_min, lat_min, lon_max, lat_max] (degrees) or area = path
    #           of a polygon file (any CRS): a study area instead, with guard_m (default
    #           500 m) of guard band around it whose cells interfere and carry users but
    #           whose users are left out of the statistics (topology.study_window),
    #           sectors (give sites without azimuths this many sectors,
    #           topology.sectorize; default: keep the file's cells), chunk_rows (read a
    #           large CSV this many rows at a time, docs/cell_files.md),
    #           stand_in (a scenario file to use where `path` is absent, e.g. for data
    #           that is not shipped: named in the error, see load_scenario)

    [picos]                         # optional: topology.add_picos
    per_sector, min_dist_macro_m, min_dist_pico_m, tx_power_dbm, antenna_gain_dbi,
    height_m, max_rounds

    [femtocells]                    # optional: topology.add_femtocells
    density_per_km2 | adoption (exactly one), wifi_density_per_km2, tx_power_dbm,
    antenna_gain_dbi, height_m, owner, backhaul_mbps, price_per_mbps
    # backhaul_mbps / price_per_mbps: a number, or a distribution drawn per femtocell:
    #   {distribution = "uniform", low = .., high = ..}
    #   {distribution = "lognormal", median = .., sigma = ..}   (sigma of ln)

    [users]                         # required: topology.drop_users
    n | density_per_km2 (exactly one; 0 gives an empty drop), clustered_fraction (> 0
    needs cells of cluster_tier), cluster_radius_m, cluster_tier (default "pico"),
    indoor_fraction, colocated_fraction (share of indoor users inside the building of a
    cell of colocated_tier, default "femto"; the building radius is [radio]
    building_radius_m), weight, demand_mbps (a number > 0, inf = full buffer, or a
    distribution drawn per user, as backhaul_mbps)

    [radio]                         # optional: RadioModel scalars and link_table options
    noise_figure_db, wall_loss_db, theta_3db_deg, max_attenuation_db,
    spectral_efficiency (string), indoor_tiers (string or strings), building_radius_m,
    n_candidates, window_db,
    interference_radius_m (a number [m] or "auto": cells beyond it interfere as a mean
    field, cellopt.radio.link_table; default: every cell exactly), far_field (true:
    add that mean field, the default; false: leave it out),
    shadowing_std_db (a number, or a table per tier: {macro = 8, pico = 10}),
    pathloss_exponent (per tier, as shadowing_std_db: those tiers get the single-slope
    loss pathloss_reference_db + 10 n log10(d / 1 m); the others keep TR 36.814),
    pathloss_reference_db (per tier; default 38.47 dB, free space at 1 m and 2 GHz)

    [problem]                       # optional: Problem.from_network
    alpha, backhaul_mbps, price_per_mbps   # the last two override third-party cells only
    interference = "full"           # or "load_coupled": cells interfere in proportion
                                    # to their load (cellopt.load_coupling)
    n_interferers                   # load_coupled: cells per user followed exactly (32)

    [seeds]                         # optional
    base (default 1, ≥ 0), drops (default 1, 1 to 1,000,000): drop k is built with the
    seed of the k-th child of SeedSequence(base).spawn(drops) (independent streams;
    adding drops keeps the earlier ones; each seed is computed on its own, when read)

Unknown keys, wrong types, values outside their possible range (the ranges of
:data:`cellopt.network.LIMITS`: e.g. ``tx_power_dbm`` in [−100, 100] dBm, fractions in
[0, 1], counts whole and ≥ 0) and missing required sections raise
:class:`cellopt.ValidationError` naming the file, the section and the key, when the file
is loaded. So do counts whose arrays would not fit in memory (the hex grid's sites,
picos, femtocells and users as density × area, and the link table users × candidates ×
resources): a :class:`cellopt.ResourceLimitError` names the key, the estimate and the
limit (``CELLOPT_MAX_MEMORY_GB``). Values that are legal but unusual (a unit slip, such
as ``isd_m = 0.5``) warn when the drop is built.

Randomness: :meth:`Scenario.build` spawns five independent streams from
``numpy.random.SeedSequence(seed)`` — picos, femtocells, users, shadowing and the
Poisson layout, in this order — so adding femtocells does not move the users, and
nothing touches numpy's global state.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
import tomllib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pyproj
import shapely

from cellopt import radio, topology
from cellopt.drop import Drop
from cellopt.errors import ValidationError, check_memory
from cellopt.load_coupling import LoadCoupling
from cellopt.network import OWNERS, TIERS, Network
from cellopt.parameters import LIMITS, check_count, check_real
from cellopt.radio.links import link_table_nbytes
from cellopt.radio.pathloss import FRIIS_1M_2GHZ_DB, SingleSlope
from cellopt.radio.spectral import SPECTRAL_EFFICIENCY
from cellopt.solvers import METHODS
from cellopt.solvers.registry import check_arguments
from cellopt.topology.country import RURAL_TIERS, URBAN_TIERS
from cellopt.topology.femto import WIFI_DENSITY_PER_KM2, add_femtocells_nbytes
from cellopt.topology.hexgrid import add_picos_nbytes, hex_grid_nbytes
from cellopt.topology.poisson import poisson_layout_nbytes
from cellopt.topology.users import drop_users_nbytes

__all__ = [
    "MAX_DROPS",
    "SHIPPED_DIR",
    "Distribution",
    "DropSeeds",
    "MethodSpec",
    "Scenario",
    "drop_seed",
    "drop_seeds",
    "find_scenario",
    "load_scenario",
    "shipped_scenarios",
]

#: Most drops a scenario may ask for: far beyond any sweep that can finish.
MAX_DROPS = 1_000_000
#: Memory per seed of a materialized seed list [bytes] (a Python int and its list slot,
#: with room for its JSON copy).
DROP_SEED_BYTES = 100

# ---------------------------------------------------------------------------- schema
# Kinds of values: "int", "float" (an integer is accepted and converted), "str", "bool",
# "floats" (array of numbers), "str|strs", "int|ints", "dist" (number or distribution).
HEX_GRID_KEYS = {
    "n_rings": "int", "isd_m": "float", "sectors": "int", "wraparound": "bool",
    "tx_power_dbm": "float", "antenna_gain_dbi": "float", "height_m": "float",
    "bandwidth_mhz": "float", "resource_mhz": "floats", "crs": "str",
}
FILE_KEYS = {
    "path": "str", "format": "str", "crs": "str", "source_crs": "str", "radio": "str|strs",
    "mcc": "int|ints", "mnc": "int|ints", "bbox": "floats", "cluster_sites": "bool",
    "merge_distance_m": "float", "tier": "str", "tx_power_dbm": "float",
    "antenna_gain_dbi": "float", "height_m": "float", "bandwidth_mhz": "float",
    "region_buffer_m": "float", "window": "floats", "area": "str", "guard_m": "float",
    "sectors": "int", "stand_in": "str", "chunk_rows": "int",
}
POISSON_KEYS = {
    "side_m": "float", "wraparound": "bool", "bandwidth_mhz": "float", "crs": "str",
    "tiers": "tiers",
}
COUNTRY_KEYS = {
    "side_m": "float", "n_cities": "int", "city_radius_m": "floats", "bandwidth_mhz": "float",
    "crs": "str", "rural": "tiers", "urban": "tiers",
}
#: Keys of each tier table of a Poisson layout (``[network.tiers.<tier>]``).
POISSON_TIER_KEYS = {
    "density_per_km2": "float", "tx_power_dbm": "float", "antenna_gain_dbi": "float",
    "height_m": "float", "sectors": "int", "owner": "str",
}
#: Interference models of the ``[problem]`` section.
INTERFERENCE = ("full", "load_coupled")
SECTION_KEYS: dict[str, dict[str, str]] = {
    "picos": {
        "per_sector": "int", "min_dist_macro_m": "float", "min_dist_pico_m": "float",
        "tx_power_dbm": "float", "antenna_gain_dbi": "float", "height_m": "float",
        "max_rounds": "int",
    },
    "femtocells": {
        "density_per_km2": "float", "adoption": "float", "wifi_density_per_km2": "float",
        "tx_power_dbm": "float", "antenna_gain_dbi": "float", "height_m": "float",
        "owner": "str", "backhaul_mbps": "dist", "price_per_mbps": "dist",
    },
    "users": {
        "n": "int", "density_per_km2": "float", "clustered_fraction": "float",
        "cluster_radius_m": "float", "cluster_tier": "str", "indoor_fraction": "float",
        "colocated_fraction": "float", "colocated_tier": "str", "weight": "float",
        "demand_mbps": "dist",
    },
    "radio": {
        "noise_figure_db": "float", "wall_loss_db": "float", "theta_3db_deg": "float",
        "max_attenuation_db": "float", "spectral_efficiency": "str", "n_candidates": "int",
        "window_db": "float", "indoor_tiers": "str|strs", "building_radius_m": "float",
        "shadowing_std_db": "per_tier", "pathloss_exponent": "per_tier",
        "pathloss_reference_db": "per_tier", "interference_radius_m": "float|auto",
        "far_field": "bool",
    },
    "problem": {"alpha": "float", "backhaul_mbps": "float", "price_per_mbps": "float",
                "interference": "str", "n_interferers": "int"},
    "seeds": {"base": "int", "drops": "int"},
}
_TOP_KEYS = ["name", "description", "network", *SECTION_KEYS, "methods"]
_REQUIRED = ("network", "users")
_LINK_KEYS = ("n_candidates", "window_db", "interference_radius_m", "far_field")
_PATHLOSS_KEYS = ("pathloss_exponent", "pathloss_reference_db")
_EXPECTED = {
    "int": "integer", "float": "number", "str": "string", "bool": "boolean",
    "floats": "array of numbers", "str|strs": "string or array of strings",
    "int|ints": "integer or array of integers",
    "dist": "number or distribution table {distribution = 'uniform' | 'lognormal', ...}",
    "tiers": "table of tier tables, e.g. [network.tiers.macro]",
    "per_tier": "number, or table of numbers per tier, e.g. {macro = 3.5, pico = 4.0}",
    "float|auto": 'number or "auto"',
}
_DIST_KEYS = {"uniform": ("low", "high"), "lognormal": ("median", "sigma")}


#: Whole-number keys: (minimum, fix).
_COUNTS = {
    "n_rings": (0, "give a whole number ≥ 0 (1 → 7, 2 → 19 sites)"),
    "per_sector": (0, "give a whole number of picos per macro sector ≥ 0 (4 in TR 36.814)"),
    "max_rounds": (1, "give a whole number of rounds ≥ 1"),
    "n": (0, "give a whole number of users ≥ 0"),
    "n_candidates": (1, "give a whole number ≥ 1"),
    "chunk_rows": (1, "give a whole number of rows ≥ 1, e.g. 500_000"),
    "n_interferers": (1, "give a whole number of cells ≥ n_candidates"),
    "mcc": (0, "give mobile country codes ≥ 0"),
    "mnc": (0, "give mobile network codes ≥ 0"),
}


def _check_range(section: str, key: str, value: Any, values: Mapping[str, Any]) -> None:
    """Raise a ValidationError naming `key` if its (well-typed) value is out of range."""
    if key in _COUNTS:
        low, fix = _COUNTS[key]
        for v in value if isinstance(value, list) else [value]:
            check_count(v, key, fix=fix, minimum=low)
    elif key == "sectors":
        if values.get("builder") == "hex_grid" and value not in (1, 3):
            raise ValidationError(f"sectors={value}; fix: use 3 (sectorised) or 1 (omni)")
        check_count(value, key, fix="a whole number ≥ 1", minimum=1)
    elif key in LIMITS and isinstance(value, float):
        check_real(value, key, warn=False)
    elif key == "resource_mhz":
        bad = [v for v in value if not (math.isfinite(v) and v > 0)]
        if bad or not value:
            raise ValidationError(f"resource_mhz={value}; fix: give positive subband widths in MHz")
    elif key in ("bbox", "window"):
        if len(value) != 4 or not all(math.isfinite(v) for v in value):
            raise ValidationError(f"{key}={value}; fix: give 4 finite numbers")
    elif key == "spectral_efficiency" and value not in SPECTRAL_EFFICIENCY:
        raise ValidationError(f"spectral_efficiency={value!r}; fix: use one of "
                              f"{sorted(SPECTRAL_EFFICIENCY)}")
    elif key in ("indoor_tiers", "tier", "cluster_tier", "colocated_tier"):
        unknown = [t for t in ([value] if isinstance(value, str) else value) if t not in TIERS]
        if unknown:
            raise ValidationError(f"{key} has unknown tiers {unknown}; fix: use tiers from {list(TIERS)}")
    elif key == "demand_mbps" and not (value.kind == "lognormal" or dict(value.params)["low"] > 0
                                       if isinstance(value, Distribution) else value > 0):
        raise ValidationError(f"demand_mbps={value}; fix: give demands > 0 in Mbit/s (a uniform "
                              "distribution needs low > 0), or inf for full buffer")
    elif key == "interference_radius_m" and value != "auto" and not (math.isfinite(value)
                                                                    and value > 0):
        raise ValidationError(f"interference_radius_m={value}; fix: give a radius > 0 in metres, "
                              'or "auto"')
    elif key == "interference" and value not in INTERFERENCE:
        raise ValidationError(f"interference={value!r}; fix: use one of {list(INTERFERENCE)}")
    elif key == "tiers":
        for tier, table in value.items():
            for k, v in table.items():
                try:
                    _check_range(section, k, v, table)
                except ValidationError as err:
                    raise ValidationError(f"tiers.{tier}: {err.problems[0]}") from None
            if table.get("sectors", 1) not in (1, 3):
                raise ValidationError(f"tiers.{tier}: sectors={table['sectors']}; fix: use 1 "
                                      "(omni) or 3 (sectorised)")
            if not table.get("density_per_km2", 0.0) > 0:
                raise ValidationError(f"tiers.{tier}: density_per_km2="
                                      f"{table.get('density_per_km2')}; fix: give a density > 0 "
                                      "per km² (leave the tier out for none)")
    elif key in ("shadowing_std_db", "pathloss_exponent", "pathloss_reference_db"):
        limit = {"shadowing_std_db": (0.0, 30.0, "a standard deviation in [0, 30] dB"),
                 "pathloss_exponent": (0.0, 10.0, "an exponent in (0, 10], e.g. 3.5"),
                 "pathloss_reference_db": (0.0, 200.0, "a loss in [0, 200] dB at 1 m")}[key]
        for tier, v in (value.items() if isinstance(value, dict) else [("every tier", value)]):
            if not (math.isfinite(v) and limit[0] <= v <= limit[1]) or (
                    key == "pathloss_exponent" and v == 0):
                raise ValidationError(f"{key} of {tier} is {v}; fix: give {limit[2]}")
    elif key == "owner" and value not in OWNERS:
        raise ValidationError(f"owner={value!r}; fix: use one of {list(OWNERS)}")
    elif key in ("crs", "source_crs"):
        try:
            pyproj.CRS(value)
        except pyproj.exceptions.CRSError:
            raise ValidationError(f"{key}={value!r} is not a CRS pyproj knows; fix: give one such as "
                                  "'EPSG:32631' (UTM 31N) or 'EPSG:4326'") from None


def _toml_type(value: Any) -> str:
    """The TOML name of a parsed value's type, for messages."""
    for py, name in ((bool, "boolean"), (int, "integer"), (float, "float"), (str, "string"),
                     (list, "array"), (dict, "table")):
        if isinstance(value, py):
            return name
    return type(value).__name__


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclasses.dataclass(frozen=True)
class Distribution:
    """Per-cell random values, ``f(rng, n) -> ndarray of shape (n,)``.

    ``uniform``: U(low, high). ``lognormal``: ``median · exp(sigma · Z)``, Z standard
    normal (``sigma`` is the standard deviation of the natural log).
    """

    kind: str
    params: tuple[tuple[str, float], ...]

    def __call__(self, rng: np.random.Generator, n: int) -> np.ndarray:
        p = dict(self.params)
        if self.kind == "uniform":
            return rng.uniform(p["low"], p["high"], n)
        return p["median"] * np.exp(p["sigma"] * rng.standard_normal(n))


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """One method to run: ``solve(problem, method=name, **options)``, reported as `label`."""

    name: str
    label: str
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)


class _Checker:
    """Validates the parsed TOML, collecting messages that name the file and the key."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, message: str) -> ValidationError:
        return ValidationError(f"{self.path}: {where} {message}")

    def table(self, raw: Any, where: str, keys: Mapping[str, str]) -> dict[str, Any]:
        if not isinstance(raw, dict):
            raise self.fail(where, f"must be a table, got {_toml_type(raw)}")
        unknown = [k for k in raw if k not in keys]
        if unknown:
            raise self.fail(where, f"unknown key {unknown[0]!r}; valid: {sorted(keys)}")
        return {k: self.value(v, keys[k], f"{where} key {k!r}") for k, v in raw.items()}

    def value(self, v: Any, kind: str, where: str) -> Any:
        ok = {
            "int": _is_int(v), "float": _is_number(v), "str": isinstance(v, str),
            "bool": isinstance(v, bool),
            "floats": isinstance(v, list) and all(_is_number(x) for x in v),
            "str|strs": isinstance(v, str) or (isinstance(v, list)
                                               and all(isinstance(x, str) for x in v)),
            "int|ints": _is_int(v) or (isinstance(v, list) and all(_is_int(x) for x in v)),
            "dist": _is_number(v) or isinstance(v, dict),
            "float|auto": _is_number(v) or v == "auto",
            "tiers": isinstance(v, dict) and all(isinstance(t, dict) for t in v.values()),
            "per_tier": _is_number(v) or (isinstance(v, dict)
                                          and all(_is_number(x) for x in v.values())),
        }[kind]
        if not ok:
            hint = ""
            if kind in ("int", "int|ints") and isinstance(v, float):
                hint = ("; fix: write a whole number without a decimal point or exponent "
                        "(1e9 is a float in TOML; write 1_000_000_000)")
            raise self.fail(where, f"expected {_EXPECTED[kind]}, got {_toml_type(v)} ({v!r}){hint}")
        if kind == "float" or (kind == "float|auto" and v != "auto"):
            return float(v)
        if kind == "floats":
            return [float(x) for x in v]
        if kind == "dist":
            return float(v) if _is_number(v) else self.distribution(v, where)
        if kind in ("tiers", "per_tier") and isinstance(v, dict):
            unknown = [t for t in v if t not in TIERS]
            if unknown:
                raise self.fail(where, f"has unknown tiers {unknown}; valid: {list(TIERS)}")
            if kind == "tiers":
                return {t: self.table(table, f"{where} tier {t!r}", POISSON_TIER_KEYS)
                        for t, table in v.items()}
            return {t: float(x) for t, x in v.items()}
        return float(v) if kind == "per_tier" else v

    def ranges(self, section: str, values: Mapping[str, Any]) -> None:
        """Check every value of a section against its range, naming the section and key."""
        for key, v in values.items():
            try:
                _check_range(section, key, v, values)
            except ValidationError as err:
                raise self.fail(f"[{section}]", err.problems[0]) from None

    def consistency(self, network: Mapping[str, Any], sections: Mapping[str, Any]) -> None:
        """Check keys against each other, and that the counts fit in memory, before a build."""
        users, picos, femtos = sections["users"], sections["picos"], sections["femtocells"]
        if ("n" in users) == ("density_per_km2" in users):
            raise self.fail("[users]", "give exactly one of the keys 'n' and 'density_per_km2'; "
                            "fix: e.g. n = 100 or density_per_km2 = 500")
        if femtos is not None and ("density_per_km2" in femtos) == ("adoption" in femtos):
            raise self.fail("[femtocells]", "give exactly one of the keys 'density_per_km2' and "
                            "'adoption'; fix: e.g. density_per_km2 = 40 or adoption = 0.05")
        hex_grid = network["builder"] == "hex_grid"
        if network["builder"] == "poisson" and not network.get("tiers"):
            raise self.fail("[network]", "a poisson layout needs at least one tier; fix: add e.g. "
                            "[network.tiers.macro] with density_per_km2 = 5")
        for share, tier_key, default, what in (
                ("clustered_fraction", "cluster_tier", "pico", "clusters users around"),
                ("colocated_fraction", "colocated_tier", "femto", "places indoor users inside the "
                 "buildings of")):
            tier = users.get(tier_key, default)
            if users.get(share, 0.0) > 0 and _has_tier(tier, network, picos, femtos) is False:
                raise self.fail("[users]", f"{share} > 0 {what} {tier} cells, but the network gets "
                                f"none; fix: add {tier} cells (or set {tier_key}) or set "
                                f"{share} = 0")
        interference = (sections["problem"] or {}).get("interference", "full")
        if interference == "load_coupled" and len(network.get("resource_mhz", [0.0])) > 1:
            raise self.fail("[problem]", "interference = 'load_coupled' needs one band; fix: "
                            "remove [network] resource_mhz or use interference = 'full'")
        bandwidth = network.get("bandwidth_mhz", 10.0)
        widths = network.get("resource_mhz", [bandwidth])
        if hex_grid and not np.isclose(sum(widths), bandwidth, rtol=1e-9, atol=0):
            raise self.fail("[network]", f"resource_mhz sums to {sum(widths):g} MHz, not "
                            f"bandwidth_mhz = {bandwidth:g}; fix: make the subband widths add up "
                            "to the band")
        self.memory(network, sections)

    def memory(self, network: Mapping[str, Any], sections: Mapping[str, Any]) -> None:
        """Refuse counts whose arrays cannot fit in memory, stage by stage, naming the keys.

        The counts are those the builders will see: sites of the hex grid, picos per
        macro cell, femtocells and users as density × area (the mean), and the links
        users × candidates × resources. A file-based network's cells and area are known
        only once read: its counts are checked when the drop is built.
        """
        users, picos, femtos = sections["users"], sections["picos"], sections["femtocells"]
        radio_opts = sections["radio"] or {}
        area_km2 = n_cells = None
        n_images, n_resources = 1, 1
        if network["builder"] == "poisson":
            area_km2 = network.get("side_m", 2000.0) ** 2 / 1e6
            n_cells = _mean_cells(network.get("tiers", {}), area_km2)
            self.check_memory(poisson_layout_nbytes(n_cells),
                              f"[network] tiers: about {n_cells:.3g} cells over {area_km2:.3g} km²",
                              "use lower densities or a smaller side_m")
            n_images = 9 if network.get("wraparound", True) else 1
        if network["builder"] == "country":
            area_km2 = network.get("side_m", 316_000.0) ** 2 / 1e6
            n_cells = _mean_cells(network.get("rural", RURAL_TIERS), area_km2)
            self.check_memory(poisson_layout_nbytes(n_cells),
                              f"[network] rural: about {n_cells:.3g} cells over {area_km2:.3g} km²",
                              "use lower densities or a smaller side_m")
        if network["builder"] == "hex_grid":
            n_rings, sectors = network.get("n_rings", 2), network.get("sectors", 3)
            n_sites = 3 * n_rings**2 + 3 * n_rings + 1
            self.check_memory(hex_grid_nbytes(n_rings, sectors),
                              f"[network] n_rings={n_rings:,} ({n_sites:,} sites)",
                              "use fewer rings (n_rings)")
            area_km2 = n_sites * math.sqrt(3) / 2 * network.get("isd_m", 500.0) ** 2 / 1e6
            n_cells = n_sites * sectors
            n_images = 7 if network.get("wraparound", True) and n_rings > 0 else 1
            n_resources = len(network.get("resource_mhz", [0.0]))
            if picos is not None:
                n_picos = picos.get("per_sector", 4) * n_cells
                self.check_memory(add_picos_nbytes(n_picos, n_cells),
                                  f"[picos] per_sector={picos.get('per_sector', 4):,} × {n_cells:,} "
                                  "macro cells", "use fewer picos per sector (per_sector)")
                n_cells += n_picos
        if femtos is not None and area_km2 is not None:
            density = femtos.get("density_per_km2")
            if density is None:
                density = femtos["adoption"] * femtos.get("wifi_density_per_km2",
                                                          WIFI_DENSITY_PER_KM2)
            mean = density * area_km2
            self.check_memory(add_femtocells_nbytes(mean, n_cells),
                              f"[femtocells] {density:g} per km² over {area_km2:.3g} km² (about "
                              f"{mean:.3g} cells)", "use a lower density_per_km2 or adoption")
            n_cells += mean
        n_users = users.get("n")
        if n_users is None and area_km2 is not None:
            n_users = users["density_per_km2"] * area_km2
        if n_users is None:
            return
        key = "n" if "n" in users else "density_per_km2"
        self.check_memory(drop_users_nbytes(n_users), f"[users] {key}={users[key]:,}: "
                          f"{n_users:.3g} users", "use fewer users")
        n_candidates = radio_opts.get("n_candidates", 8)
        self.check_memory(
            link_table_nbytes(n_users, n_candidates if n_cells is None else n_cells, n_resources,
                              n_candidates, n_images,
                              nearby="interference_radius_m" in radio_opts),
            f"[users] {key}={users[key]:,} with [radio] n_candidates={n_candidates}: a link table "
            f"of {n_users:.3g} users × {n_candidates} candidates × {n_resources} resource(s)",
            "use fewer users or fewer candidates (n_candidates)")

    def check_memory(self, n_bytes: float, what: str, fix: str) -> None:
        check_memory(n_bytes, f"{self.path}: {what}", fix)

    def distribution(self, raw: dict[str, Any], where: str) -> Distribution:
        kind = raw.get("distribution")
        if kind not in _DIST_KEYS:
            raise self.fail(where, f"needs distribution = one of {sorted(_DIST_KEYS)}, got "
                            f"{kind!r}")
        names = _DIST_KEYS[kind]
        p = self.table({k: v for k, v in raw.items() if k != "distribution"}, where,
                       dict.fromkeys(names, "float"))
        missing = [k for k in names if k not in p]
        if missing:
            raise self.fail(where, f"{kind} distribution needs keys {list(names)}; missing "
                            f"{missing}")
        if kind == "uniform" and not 0 <= p["low"] <= p["high"] < math.inf:
            raise self.fail(where, f"uniform needs 0 ≤ low ≤ high < inf, got low={p['low']}, "
                            f"high={p['high']}")
        if kind == "lognormal" and not (0 < p["median"] < math.inf and 0 <= p["sigma"] < math.inf):
            raise self.fail(where, f"lognormal needs median > 0 and sigma ≥ 0, got "
                            f"median={p['median']}, sigma={p['sigma']}")
        return Distribution(kind, tuple((k, p[k]) for k in names))

    def methods(self, raw: Any) -> tuple[MethodSpec, ...]:
        where = "methods"
        if not isinstance(raw, list):
            raise self.fail(where, f"expected array of method names or tables, got "
                            f"{_toml_type(raw)}")
        specs = []
        for i, item in enumerate(raw):
            at = f"methods[{i}]"
            if isinstance(item, str):
                name, label, options = item, None, {}
            elif isinstance(item, dict):
                if not isinstance(item.get("name"), str):
                    raise self.fail(at, f"key 'name' expected string, got "
                                    f"{_toml_type(item.get('name')) if 'name' in item else 'nothing'}")
                name, label = item["name"], item.get("label")
                if label is not None and not isinstance(label, str):
                    raise self.fail(at, f"key 'label' expected string, got {_toml_type(label)}")
                options = {k: v for k, v in item.items() if k not in ("name", "label")}
                for k, v in options.items():
                    if isinstance(v, dict) and not all(_is_number(x) for x in v.values()):
                        raise self.fail(at, f"key {k!r} expected number, string, boolean, "
                                        f"array or table of numbers (e.g. per tier), got {v!r}")
            else:
                raise self.fail(at, f"expected string or table, got {_toml_type(item)}")
            if name not in METHODS:
                raise self.fail(at, f"unknown method {name!r}; valid: {sorted(METHODS)}")
            common = {"tol": 1e-4, "max_iter": None, "time_limit_s": None,
                      "single_association": False}
            try:  # the checks solve() makes, now rather than after the network is built
                check_arguments(name, METHODS[name], callback=None,
                                **{k: options.get(k, v) for k, v in common.items()},
                                options={k: v for k, v in options.items() if k not in common})
            except ValidationError as err:
                raise self.fail(at, "; ".join(err.problems)) from None
            if label is None:
                label = name + ("".join(f" {k}={v}" for k, v in options.items()))
            specs.append(MethodSpec(name, label, options))
        labels = [s.label for s in specs]
        dup = sorted({x for x in labels if labels.count(x) > 1})
        if dup:
            raise self.fail(where, f"duplicate labels {dup}; fix: give each a distinct 'label'")
        return tuple(specs)


# ---------------------------------------------------------------------------- scenario
@dataclasses.dataclass(frozen=True)
class Scenario:
    """A parsed, validated scenario file; :meth:`build` makes one drop from it.

    Attributes
    ----------
    path : Path
        The TOML file (relative paths inside it are resolved against its folder).
    name, description : str
    network : dict
        ``builder`` and its options (``path`` resolved to an absolute path).
    picos, femtocells : dict or None
        Options of :func:`~cellopt.topology.add_picos` /
        :func:`~cellopt.topology.add_femtocells`; None if the section is absent.
    users : dict
        Options of :func:`~cellopt.topology.drop_users`.
    radio : dict
        :class:`~cellopt.radio.RadioModel` scalars plus ``n_candidates``, ``window_db``,
        ``interference_radius_m``, ``far_field``.
    problem : dict
        ``alpha``, and ``backhaul_mbps`` / ``price_per_mbps`` for third-party cells.
    methods : tuple of MethodSpec
    seed_base, drops : int
    raw : dict
        The parsed TOML, used by :meth:`with_overrides`.
    """

    path: Path
    name: str
    description: str
    network: dict[str, Any]
    picos: dict[str, Any] | None
    femtocells: dict[str, Any] | None
    users: dict[str, Any]
    radio: dict[str, Any]
    problem: dict[str, Any]
    methods: tuple[MethodSpec, ...]
    seed_base: int
    drops: int
    raw: dict[str, Any] = dataclasses.field(repr=False, compare=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], path: str | Path) -> Scenario:
        """Validate a parsed TOML document; `path` names it in messages and anchors paths."""
        path = Path(path)
        check = _Checker(path)
        unknown = [k for k in raw if k not in _TOP_KEYS]
        if unknown:
            raise check.fail("top level:", f"unknown key {unknown[0]!r}; valid: {_TOP_KEYS}")
        for sec in _REQUIRED:
            if sec not in raw:
                raise check.fail(f"[{sec}]", "section is missing; it is required")
        for key in ("name", "description"):
            if key in raw and not isinstance(raw[key], str):
                raise check.fail(f"key {key!r}", f"expected string, got {_toml_type(raw[key])}")

        net_raw = raw["network"]
        if not isinstance(net_raw, dict):
            raise check.fail("[network]", f"must be a table, got {_toml_type(net_raw)}")
        builder = net_raw.get("builder")
        builders = {"hex_grid": HEX_GRID_KEYS, "file": FILE_KEYS, "poisson": POISSON_KEYS,
                    "country": COUNTRY_KEYS}
        if builder not in builders:
            raise check.fail("[network] key 'builder'", f"expected one of {sorted(builders)}, "
                             f"got {builder!r}")
        network = check.table({k: v for k, v in net_raw.items() if k != "builder"},
                              f"[network] (builder {builder!r})", builders[builder])
        if builder == "file":
            if "path" not in network:
                raise check.fail("[network] key 'path'", "is required with builder 'file'")
            for key in ("path", "area", "stand_in"):
                if key in network:
                    network[key] = str((path.parent / network[key]).resolve())
            if "window" in network and "area" in network:
                raise check.fail("[network]", "has both 'window' and 'area'; fix: give one")
            if "bbox" in network and len(network["bbox"]) != 4:
                raise check.fail("[network] key 'bbox'", "expected 4 numbers "
                                 "[x_min, y_min, x_max, y_max]")
        network["builder"] = builder

        sections = {s: (check.table(raw[s], f"[{s}]", keys) if s in raw else None)
                    for s, keys in SECTION_KEYS.items()}
        seeds = sections["seeds"] or {}
        for key, low, high in (("base", 0, 2**63 - 1), ("drops", 1, MAX_DROPS)):
            if key in seeds and not low <= seeds[key] <= high:
                raise check.fail(f"[seeds] key {key!r}", f"must be ≥ {low} and ≤ {high:,}, got "
                                 f"{seeds[key]:,}; fix: give a {'seed' if key == 'base' else 'drop count'}"
                                 f" in [{low}, {high:,}]")
        check.ranges("network", network)
        for section, values in sections.items():
            if values is not None and section != "seeds":
                check.ranges(section, values)
        check.consistency(network, sections)
        methods = check.methods(raw.get("methods", ["max_rsrp", "alm"]))
        return cls(
            path=path, name=raw.get("name", path.stem), description=raw.get("description", ""),
            network=network, picos=sections["picos"], femtocells=sections["femtocells"],
            users=sections["users"], radio=sections["radio"] or {},
            problem=sections["problem"] or {}, methods=methods,
            seed_base=seeds.get("base", 1), drops=seeds.get("drops", 1), raw=raw,
        )

    @property
    def seeds(self) -> DropSeeds:
        """The build seeds of the drops, computed on demand (see :class:`DropSeeds`)."""
        return DropSeeds(self.seed_base, self.drops)

    def with_overrides(self, **section_updates: Mapping[str, Any] | Any) -> Scenario:
        """A copy with keys of sections replaced, validated again.

        ``with_overrides(users={"n": 30}, seeds={"drops": 2})`` merges into the sections;
        a non-table value (``methods=[...]``, ``name="x"``) replaces the key.
        """
        raw = dict(self.raw)
        for section, update in section_updates.items():
            if isinstance(update, Mapping) and isinstance(raw.get(section), dict):
                raw[section] = {**raw[section], **update}
            else:
                raw[section] = dict(update) if isinstance(update, Mapping) else update
        return Scenario.from_dict(raw, self.path)

    def radio_model(self) -> radio.RadioModel:
        """The :class:`~cellopt.radio.RadioModel` of the ``[radio]`` section."""
        fields = {k: v for k, v in self.radio.items() if k not in _LINK_KEYS + _PATHLOSS_KEYS}
        if "indoor_tiers" in fields:
            tiers = fields["indoor_tiers"]
            fields["indoor_tiers"] = (tiers,) if isinstance(tiers, str) else tuple(tiers)
        default = radio.RadioModel()
        if "shadowing_std_db" in fields:
            fields["shadowing_std_db"] = {**default.shadowing_std_db,
                                          **_per_tier(fields["shadowing_std_db"])}
        if "pathloss_exponent" in self.radio:  # single-slope models for the tiers given
            exponent = _per_tier(self.radio["pathloss_exponent"])
            reference = _per_tier(self.radio.get("pathloss_reference_db", FRIIS_1M_2GHZ_DB))
            fields["pathloss"] = {**default.pathloss, **{
                t: SingleSlope(n, reference.get(t, FRIIS_1M_2GHZ_DB)) for t, n in exponent.items()}}
        return radio.RadioModel(**fields)

    def build(self, seed: int | None = None, *, progress: bool = False) -> Drop:
        """One drop: the network, its link table and the association problem.

        Parameters
        ----------
        seed : int, optional
            Seed of the drop (default ``seeds.base``). Picos, femtocells, users and
            shadowing draw from independent streams spawned from it.
        progress : bool
            Show each step's time and the link table's progress bar on stderr.

        Returns
        -------
        Drop
            The network (all cells and users), the links of every user, and the problem
            of the users with a usable link (:attr:`Drop.solvable`).
        """
        seed = self.seed_base if seed is None else seed
        if not _is_int(seed) or seed < 0:
            raise ValidationError(f"{self.path}: seed={seed!r}; fix: give an integer ≥ 0")
        # children are the same whatever the count, so a fifth stream moves no other one
        pico_ss, femto_ss, user_ss, shadow_ss, layout_ss = np.random.SeedSequence(seed).spawn(5)
        net = self._stage(progress, "network", lambda: self._network(np.random.default_rng(layout_ss)))
        if net.n_cells == 0:
            raise ValidationError(f"{self.path}: [network] the network has no cells; fix: a "
                                  "builder, file or filter that yields at least one cell")
        if self.picos is not None:
            net = self._stage(progress, "picos", lambda: topology.add_picos(
                net, **self.picos, rng=np.random.default_rng(pico_ss)))
        if self.femtocells is not None:
            net = self._stage(progress, "femtocells", lambda: topology.add_femtocells(
                net, **self.femtocells, rng=np.random.default_rng(femto_ss)))
        users = dict(self.users)
        if users.get("colocated_fraction", 0.0) > 0 and "building_radius_m" in self.radio:
            users["building_radius_m"] = self.radio["building_radius_m"]  # one building size
        net = self._stage(progress, "users", lambda: topology.drop_users(
            net, **users, rng=np.random.default_rng(user_ss)))
        model = self.radio_model()
        link_options = {k: v for k, v in self.radio.items() if k in _LINK_KEYS}
        links = self._stage(progress, "radio", lambda: radio.link_table(
            net, **link_options, model=model, rng=np.random.default_rng(shadow_ss),
            progress=progress))
        drop = self._stage(progress, "problem", lambda: Drop.from_network(
            net, links, seed=int(seed), **self._problem_options(net)))
        if self.problem.get("interference", "full") == "full" or drop.problem.n_users == 0:
            return drop
        coupling = self._stage(progress, "problem", lambda: LoadCoupling.from_network(
            net, drop.problem, user_rows=np.flatnonzero(drop.solvable),
            n_candidates=link_options.get("n_candidates", 8),
            n_interferers=self.problem.get("n_interferers", 32), model=model,
            rng=np.random.default_rng(shadow_ss)))
        return dataclasses.replace(drop, coupling=coupling)

    # ------------------------------------------------------------------ helpers
    def _stage(self, progress: bool, section: str, fn: Callable[[], Any]) -> Any:
        """Run one build step, prefixing its validation errors with the file and section
        (and, with `progress`, saying on stderr how long it took)."""
        t0 = time.perf_counter()
        try:
            out = fn()
        except ValidationError as err:  # the same class: a ResourceLimitError stays one
            raise type(err)([f"{self.path}: [{section}] {p}" for p in err.problems]) from err
        if progress:
            print(f"  built {section} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
        return out

    def _network(self, rng: np.random.Generator) -> Network:
        opts = {k: v for k, v in self.network.items() if k != "builder"}
        if self.network["builder"] == "poisson":
            return topology.poisson_layout(**opts, rng=rng)
        if self.network["builder"] == "country":
            if "city_radius_m" in opts:
                opts["city_radius_m"] = tuple(opts["city_radius_m"])
            return topology.country_layout(**opts, rng=rng)
        if self.network["builder"] == "hex_grid":
            if "resource_mhz" in opts:
                opts["resource_mhz"] = np.asarray(opts["resource_mhz"])
            return topology.hex_grid(**opts)
        opts.pop("stand_in", None)
        buffer_m = opts.pop("region_buffer_m", 500.0)
        guard_m, sectors = opts.pop("guard_m", 500.0), opts.pop("sectors", None)
        area = opts.pop("window", None)
        if "area" in opts:
            area = _read_polygon(opts.pop("area"))
        if "bbox" in opts:
            opts["bbox"] = tuple(opts["bbox"])
        path = opts.pop("path")
        if not Path(path).exists():
            stand_in = self.network.get("stand_in")
            raise ValidationError(f"the cell file {path} does not exist; fix: put the file "
                                  "there or set [network] path"
                                  + (f", or run its synthetic stand-in {stand_in}" if stand_in else ""))
        net = topology.read_cells(path, **opts)
        if sectors is not None:
            net = topology.sectorize(net, sectors)
        if area is not None:
            return topology.study_window(net, area, guard_m=guard_m)
        if net.region is None:
            hull = shapely.convex_hull(shapely.MultiPoint(
                np.column_stack([net.cells.geometry.x, net.cells.geometry.y])))
            net = net.replace(region=hull.buffer(buffer_m))
        return net

    @property
    def data_missing(self) -> bool:
        """True for a file-based scenario whose cell file does not exist."""
        return self.network["builder"] == "file" and not Path(self.network["path"]).exists()

    def _problem_options(self, net: Network) -> dict[str, Any]:
        """``alpha`` and the [problem] overrides of third-party cells' backhaul and price."""
        overrides: dict[str, Any] = {"alpha": self.problem.get("alpha", 1.0)}  # the rest: build
        third = (net.cells["owner"] == "third_party").to_numpy()
        for key in ("backhaul_mbps", "price_per_mbps"):
            if key in self.problem:
                values = net.cells[key].to_numpy(float).copy()
                values[third] = self.problem[key]
                overrides[key] = values
        return overrides


def _per_tier(value: float | Mapping[str, float]) -> dict[str, float]:
    """A per-tier scenario value as a mapping: a lone number holds for every tier."""
    return dict(value) if isinstance(value, Mapping) else dict.fromkeys(TIERS, float(value))


def _has_tier(tier: str, network: Mapping[str, Any], picos: Mapping[str, Any] | None,
              femtos: Mapping[str, Any] | None) -> bool | None:
    """Whether a scenario's network gets cells of `tier`: True, False, or None (known only
    once a cell file is read)."""
    if tier == "femto" and femtos is not None:
        return True
    if tier == "pico" and picos is not None and picos.get("per_sector", 4) > 0:
        return True
    if network["builder"] == "hex_grid":
        return tier == "macro"
    if network["builder"] == "poisson":
        return tier in network.get("tiers", {})
    if network["builder"] == "country":
        return tier in {**network.get("rural", RURAL_TIERS), **network.get("urban", URBAN_TIERS)}
    return None


def _mean_cells(tiers: Mapping[str, Mapping[str, Any]], area_km2: float) -> float:
    """Expected cells of Poisson tier tables over `area_km2`, sectors counted."""
    return sum(t["density_per_km2"] * t.get("sectors", 1) for t in tiers.values()) * area_km2


def _read_polygon(path: str) -> gpd.GeoSeries:
    """The polygons of a vector file (GeoJSON, GeoPackage, ...), with their CRS."""
    try:
        frame = gpd.read_file(path)
    except Exception as err:  # pyogrio raises several kinds for missing or unreadable files
        raise ValidationError(f"area={path!r} cannot be read ({err}); fix: a polygon file "
                              "(GeoJSON, GeoPackage, Shapefile) with a CRS") from err
    return frame.geometry


def drop_seed(base: int, drop: int) -> int:
    """The build seed of drop `drop`: the state of the `drop`-th child of ``SeedSequence(base)``.

    ``SeedSequence(base).spawn(n)[k]`` is ``SeedSequence(base, spawn_key=(k,))``, so any
    drop's seed is computed alone, without spawning the ones before it.
    """
    base = check_count(base, "base", fix="give a seed ≥ 0")
    drop = check_count(drop, "drop", fix="give a drop index ≥ 0")
    return int(np.random.SeedSequence(base, spawn_key=(drop,)).generate_state(1)[0])


def drop_seeds(base: int, drops: int) -> list[int]:
    """The build seed of each drop: one spawned ``SeedSequence(base)`` child per drop.

    Raises
    ------
    ValidationError
        A base or count that is not a whole number ≥ 0.
    ResourceLimitError
        When the list would not fit in memory (use :class:`DropSeeds` for one seed).
    """
    base = check_count(base, "base", fix="give a seed ≥ 0")
    drops = check_count(drops, "drops", fix="give a number of drops ≥ 0")
    check_memory(float(drops) * DROP_SEED_BYTES, f"drop_seeds: {drops:,} drops",
                 "use fewer drops")
    return [drop_seed(base, k) for k in range(drops)]


class DropSeeds(Sequence[int]):
    """The build seeds of drops ``0 .. drops − 1``, each computed when it is read.

    Equal, item by item, to ``drop_seeds(base, drops)``, and compares equal to any
    sequence with the same seeds; nothing of size `drops` is ever built.

    Parameters
    ----------
    base : int
        The scenario's base seed (≥ 0).
    drops : int
        Number of drops (≥ 0).
    """

    def __init__(self, base: int, drops: int):
        self.base = check_count(base, "base", fix="give a seed ≥ 0")
        self.drops = check_count(drops, "drops", fix="give a number of drops ≥ 0")

    def __len__(self) -> int:
        return self.drops

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [drop_seed(self.base, k) for k in range(*index.indices(self.drops))]
        k = index + self.drops if index < 0 else index
        if not 0 <= k < self.drops:
            raise IndexError(f"drop {index} out of range for {self.drops} drops")
        return drop_seed(self.base, k)

    def __iter__(self) -> Iterator[int]:
        return (drop_seed(self.base, k) for k in range(self.drops))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DropSeeds):
            return (self.base, self.drops) == (other.base, other.drops)
        if not isinstance(other, Sequence) or isinstance(other, str) or len(other) != len(self):
            return NotImplemented if not isinstance(other, Sequence) else False
        return all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"DropSeeds(base={self.base}, drops={self.drops:,})"


#: The folder of the scenarios shipped with cellopt.
SHIPPED_DIR = Path(__file__).resolve().parents[1] / "topologies"


def shipped_scenarios() -> list[str]:
    """The names of the scenarios shipped with cellopt (``cellopt run NAME`` runs one)."""
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.toml"))


def find_scenario(name: str | Path) -> Path:
    """The scenario file `name` names: a TOML file, or the name of a shipped scenario.

    A path that exists wins over a shipped name.

    Raises
    ------
    ValidationError
        For a file that does not exist (listing the shipped names), a folder, or a file
        that is not UTF-8 text.
    """
    path = Path(name)
    if not path.exists() and path.suffix != ".toml" and len(path.parts) == 1:
        shipped = SHIPPED_DIR / f"{path.name}.toml"
        if shipped.exists():
            return shipped
    if not path.exists():
        raise ValidationError(f"the scenario file {name} does not exist, and {str(name)!r} is not "
                              f"a shipped scenario; fix: give a shipped name "
                              f"({', '.join(shipped_scenarios())}) or a TOML file")
    if path.is_dir():
        raise ValidationError(f"the scenario {path} is a folder; fix: give a scenario file (TOML) or "
                              f"a shipped name ({', '.join(shipped_scenarios())})")
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValidationError(f"{path}: not a text (UTF-8) file, so not a scenario ({err.reason} at "
                              f"byte {err.start}); fix: give a scenario file (TOML)") from None
    return path


def load_scenario(path: str | Path, *, use_stand_in: bool = False) -> Scenario:
    """Read and validate a scenario (see the module docstring for the schema).

    Parameters
    ----------
    path : path or str
        A TOML file, or the name of a shipped scenario (:func:`shipped_scenarios`:
        ``"hetnet"``, ``"sf_femto"``, ...).
    use_stand_in : bool
        If the scenario's cell file is absent and it names a ``stand_in`` scenario, load
        that one instead, with a :class:`UserWarning` saying so. Otherwise building a
        drop of a scenario whose data is absent raises a ValidationError naming the
        file and the stand-in.
    """
    path = find_scenario(path)
    try:
        with path.open("rb") as f:
            raw = tomllib.load(f)
    except tomllib.TOMLDecodeError as err:
        raise ValidationError(f"{path}: not valid TOML: {err}") from err
    scenario = Scenario.from_dict(raw, path)
    stand_in = scenario.network.get("stand_in")
    if use_stand_in and scenario.data_missing and stand_in:
        warnings.warn(f"{path}: its cell file {scenario.network['path']} is absent; running "
                      f"the synthetic stand-in {stand_in} instead", UserWarning, stacklevel=2)
        return load_scenario(stand_in)
    return scenario
