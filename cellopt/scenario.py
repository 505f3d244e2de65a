"""Scenario files: one TOML file describes a topology, its users, radio, problem and methods.

A scenario file has these sections (every key is optional unless marked *required*;
absent keys take the defaults of the function they are passed to)::

    name = "hetnet"                 # optional, string
    description = "..."             # optional, string
    methods = ["max_rsrp", {name = "range_expansion", bias_db = 6, label = "RE 6 dB"}]
                                    # top-level keys come before the first [section]

    [network]                       # required
    builder = "hex_grid"            # required: "hex_grid" or "file"
    # hex_grid: n_rings, isd_m, sectors, wraparound, tx_power_dbm, antenna_gain_dbi,
    #           height_m, bandwidth_mhz, resource_mhz (array), crs
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
    #           topology.sectorize; default: keep the file's cells),
    #           stand_in (a scenario file to use where `path` is absent, e.g. for data
    #           that is not shipped: named in the error, see load_scenario)

    [picos]                         # optional: topology.add_picos
    per_sector, min_dist_macro_m, min_dist_pico_m, tx_power_dbm, antenna_gain_dbi,
    height_m, max_rounds

    [femtocells]                    # optional: topology.add_femtocells
    density_per_km2 | adoption, wifi_density_per_km2, tx_power_dbm, antenna_gain_dbi,
    height_m, owner, backhaul_mbps, price_per_mbps
    # backhaul_mbps / price_per_mbps: a number, or a distribution drawn per femtocell:
    #   {distribution = "uniform", low = .., high = ..}
    #   {distribution = "lognormal", median = .., sigma = ..}   (sigma of ln)

    [users]                         # required: topology.drop_users
    n | density_per_km2, clustered_fraction, cluster_radius_m, indoor_fraction, weight,
    demand_mbps

    [radio]                         # optional: RadioModel scalars and link_table options
    noise_figure_db, wall_loss_db, theta_3db_deg, max_attenuation_db,
    spectral_efficiency (string), indoor_tiers (string or strings), building_radius_m,
    n_candidates, window_db

    [problem]                       # optional: Problem.from_network
    alpha, backhaul_mbps, price_per_mbps   # the last two override third-party cells only

    [seeds]                         # optional
    base (default 1), drops (default 1): drop k is built with the seed of the k-th
    child of SeedSequence(base).spawn(drops) (independent streams; adding drops keeps
    the earlier ones)

Unknown keys, wrong types and missing required sections raise
:class:`cellopt.ValidationError` naming the file, the section and the key.

Randomness: :meth:`Scenario.build` spawns four independent streams from
``numpy.random.SeedSequence(seed)`` — picos, femtocells, users, shadowing, in this
order — so adding femtocells does not move the users, and nothing touches numpy's
global state.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import shapely

from cellopt import radio, topology
from cellopt.errors import ValidationError
from cellopt.linktable import LinkTable
from cellopt.network import Network
from cellopt.problem import Problem
from cellopt.solvers import METHODS

__all__ = ["Distribution", "MethodSpec", "Scenario", "load_scenario"]

# ---------------------------------------------------------------------------- schema
# Kinds of values: "int", "float" (an integer is accepted and converted), "str", "bool",
# "floats" (array of numbers), "str|strs", "int|ints", "dist" (number or distribution).
_HEX_KEYS = {
    "n_rings": "int", "isd_m": "float", "sectors": "int", "wraparound": "bool",
    "tx_power_dbm": "float", "antenna_gain_dbi": "float", "height_m": "float",
    "bandwidth_mhz": "float", "resource_mhz": "floats", "crs": "str",
}
_FILE_KEYS = {
    "path": "str", "format": "str", "crs": "str", "source_crs": "str", "radio": "str|strs",
    "mcc": "int|ints", "mnc": "int|ints", "bbox": "floats", "cluster_sites": "bool",
    "merge_distance_m": "float", "tier": "str", "tx_power_dbm": "float",
    "antenna_gain_dbi": "float", "height_m": "float", "bandwidth_mhz": "float",
    "region_buffer_m": "float", "window": "floats", "area": "str", "guard_m": "float",
    "sectors": "int", "stand_in": "str",
}
_SECTIONS: dict[str, dict[str, str]] = {
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
        "cluster_radius_m": "float", "indoor_fraction": "float", "weight": "float",
        "demand_mbps": "float",
    },
    "radio": {
        "noise_figure_db": "float", "wall_loss_db": "float", "theta_3db_deg": "float",
        "max_attenuation_db": "float", "spectral_efficiency": "str", "n_candidates": "int",
        "window_db": "float", "indoor_tiers": "str|strs", "building_radius_m": "float",
    },
    "problem": {"alpha": "float", "backhaul_mbps": "float", "price_per_mbps": "float"},
    "seeds": {"base": "int", "drops": "int"},
}
_TOP_KEYS = ["name", "description", "network", *_SECTIONS, "methods"]
_REQUIRED = ("network", "users")
_LINK_KEYS = ("n_candidates", "window_db")
_EXPECTED = {
    "int": "integer", "float": "number", "str": "string", "bool": "boolean",
    "floats": "array of numbers", "str|strs": "string or array of strings",
    "int|ints": "integer or array of integers",
    "dist": "number or distribution table {distribution = 'uniform' | 'lognormal', ...}",
}
_DIST_KEYS = {"uniform": ("low", "high"), "lognormal": ("median", "sigma")}


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
        }[kind]
        if not ok:
            raise self.fail(where, f"expected {_EXPECTED[kind]}, got {_toml_type(v)} ({v!r})")
        if kind == "float":
            return float(v)
        if kind == "floats":
            return [float(x) for x in v]
        if kind == "dist":
            return float(v) if _is_number(v) else self.distribution(v, where)
        return v

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
                    if isinstance(v, dict):
                        raise self.fail(at, f"key {k!r} expected number, string, boolean or "
                                        f"array, got table")
            else:
                raise self.fail(at, f"expected string or table, got {_toml_type(item)}")
            if name not in METHODS:
                raise self.fail(at, f"unknown method {name!r}; valid: {sorted(METHODS)}")
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
        :class:`~cellopt.radio.RadioModel` scalars plus ``n_candidates``, ``window_db``.
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
        builders = {"hex_grid": _HEX_KEYS, "file": _FILE_KEYS}
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
                    for s, keys in _SECTIONS.items()}
        seeds = sections["seeds"] or {}
        for key, low in (("base", 0), ("drops", 1)):
            if key in seeds and seeds[key] < low:
                raise check.fail(f"[seeds] key {key!r}", f"must be ≥ {low}, got {seeds[key]}")
        methods = check.methods(raw.get("methods", ["max_rsrp", "alm"]))
        return cls(
            path=path, name=raw.get("name", path.stem), description=raw.get("description", ""),
            network=network, picos=sections["picos"], femtocells=sections["femtocells"],
            users=sections["users"], radio=sections["radio"] or {},
            problem=sections["problem"] or {}, methods=methods,
            seed_base=seeds.get("base", 1), drops=seeds.get("drops", 1), raw=raw,
        )

    @property
    def seeds(self) -> tuple[int, ...]:
        """The build seeds of the drops: one ``SeedSequence(base).spawn`` child per drop."""
        return tuple(drop_seeds(self.seed_base, self.drops))

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
        fields = {k: v for k, v in self.radio.items() if k not in _LINK_KEYS}
        if "indoor_tiers" in fields:
            tiers = fields["indoor_tiers"]
            fields["indoor_tiers"] = (tiers,) if isinstance(tiers, str) else tuple(tiers)
        return radio.RadioModel(**fields)

    def build(self, seed: int | None = None) -> tuple[Network, LinkTable, Problem]:
        """One drop: the network, its link table and the association problem.

        Parameters
        ----------
        seed : int, optional
            Seed of the drop (default ``seeds.base``). Picos, femtocells, users and
            shadowing draw from independent streams spawned from it.

        Returns
        -------
        network : Network
            All cells and all dropped users.
        links : LinkTable
            Links of every user of `network`.
        problem : Problem
            The users with a usable link only (those of ``links.users_with_rate()``, in
            order): users in outage have no positive rate and are left out, to be
            counted with rate 0.
        """
        seed = self.seed_base if seed is None else seed
        if not _is_int(seed) or seed < 0:
            raise ValidationError(f"{self.path}: seed={seed!r}; fix: give an integer ≥ 0")
        pico_ss, femto_ss, user_ss, shadow_ss = np.random.SeedSequence(seed).spawn(4)
        net = self._stage("network", self._network)
        if self.picos is not None:
            net = self._stage("picos", lambda: topology.add_picos(
                net, **self.picos, rng=np.random.default_rng(pico_ss)))
        if self.femtocells is not None:
            net = self._stage("femtocells", lambda: topology.add_femtocells(
                net, **self.femtocells, rng=np.random.default_rng(femto_ss)))
        net = self._stage("users", lambda: topology.drop_users(
            net, **self.users, rng=np.random.default_rng(user_ss)))
        links = self._stage("radio", lambda: radio.link_table(
            net, **{k: v for k, v in self.radio.items() if k in _LINK_KEYS},
            model=self.radio_model(), rng=np.random.default_rng(shadow_ss)))
        problem = self._stage("problem", lambda: self._problem(net, links))
        return net, links, problem

    # ------------------------------------------------------------------ helpers
    def _stage(self, section: str, fn: Callable[[], Any]) -> Any:
        """Run one build step, prefixing its validation errors with the file and section."""
        try:
            return fn()
        except ValidationError as err:
            raise ValidationError([f"{self.path}: [{section}] {p}" for p in err.problems]) from err

    def _network(self) -> Network:
        opts = {k: v for k, v in self.network.items() if k != "builder"}
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

    def _problem(self, net: Network, links: LinkTable) -> Problem:
        usable = links.users_with_rate()
        served = net.replace(users=net.users[usable].reset_index(drop=True))
        overrides: dict[str, Any] = {}
        third = (net.cells["owner"] == "third_party").to_numpy()
        for key in ("backhaul_mbps", "price_per_mbps"):
            if key in self.problem:
                values = net.cells[key].to_numpy(float).copy()
                values[third] = self.problem[key]
                overrides[key] = values
        return Problem.from_network(served, links.select_users(usable),
                                    alpha=self.problem.get("alpha", 1.0), **overrides)


def _read_polygon(path: str) -> gpd.GeoSeries:
    """The polygons of a vector file (GeoJSON, GeoPackage, ...), with their CRS."""
    try:
        frame = gpd.read_file(path)
    except Exception as err:  # pyogrio raises several kinds for missing or unreadable files
        raise ValidationError(f"area={path!r} cannot be read ({err}); fix: a polygon file "
                              "(GeoJSON, GeoPackage, Shapefile) with a CRS") from err
    return frame.geometry

def drop_seeds(base: int, drops: int) -> list[int]:
    """The build seed of each drop: one spawned ``SeedSequence(base)`` child per drop."""
    return [int(c.generate_state(1)[0]) for c in np.random.SeedSequence(base).spawn(drops)]


def load_scenario(path: str | Path, *, use_stand_in: bool = False) -> Scenario:
    """Read and validate a scenario TOML file (see the module docstring for the schema).

    Parameters
    ----------
    path : path
    use_stand_in : bool
        If the scenario's cell file is absent and it names a ``stand_in`` scenario, load
        that one instead, with a :class:`UserWarning` saying so. Otherwise building a
        drop of a scenario whose data is absent raises a ValidationError naming the
        file and the stand-in.
    """
    path = Path(path)
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
