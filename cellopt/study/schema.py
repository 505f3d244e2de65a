"""The scenario file schema: TOML kinds of the keys, and the checks of tables and values.

The sections are described in :mod:`cellopt.study.scenario`. The keys of ``[network]``
are those of its builder (:data:`cellopt.study.builders.BUILDERS`), those of the other
sections (:data:`SECTION_KEYS`) the parameters of what each feeds, both read from
signatures; :func:`key_table` lists them all. The ranges, counts and names are those of
the parameter catalogue (:mod:`cellopt.parameters`). :class:`Checker` validates a parsed file, raising a
:class:`~cellopt.ValidationError` (or a :class:`~cellopt.ResourceLimitError`) that names
the file, the section and the key.

Kinds of values: "int", "float" (an integer is accepted and converted), "str", "bool",
"floats" (array of numbers), "str|strs", "int|ints", "dist" (number or distribution),
"tiers" (table of tier tables), "per_tier" (number or table of numbers per tier),
"per_tier_name" (name or table of names per tier), "float|auto" (number or "auto"), "path"
(a string, a path relative to the TOML file), "path_loss" (per-cell predictions: a path, a
table of :data:`PATH_LOSS_KEYS`, or a table of either per tier) and "levels" (power
levels, or a table of them per tier).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyproj

from cellopt import topology
from cellopt.checks import check_choice, check_count, check_per_tier, check_real
from cellopt.coverage import CoverageSettings
from cellopt.deploy.settings import DeploySettings
from cellopt.errors import ValidationError, check_memory
from cellopt.load_coupling import LoadCoupling
from cellopt.network import TIERS
from cellopt.parameters import CHOICES, LIMITS, TIER_LIMITS, kind_of
from cellopt.power import PowerProblem, solve_power
from cellopt.power.patterns import (
    UnusualLevelWarning,
    level_offsets_db,
    unusual_levels,
    unusual_levels_message,
)
from cellopt.problem import Problem
from cellopt.radio.links import link_table_nbytes
from cellopt.radio.predictions import RasterPathLoss
from cellopt.solvers import METHODS
from cellopt.solvers.arguments import check_arguments
from cellopt.study.builders import BUILDERS, RADIO_KEYS, has_tier, scenario_keys
from cellopt.study.runkinds import MethodRun, PowerRun, label_problem, labels_problem
from cellopt.study.seeds import DropSeeds
from cellopt.topology.femto import WIFI_DENSITY_PER_KM2, add_femtocells_nbytes
from cellopt.topology.hexgrid import add_picos_nbytes
from cellopt.topology.poisson import TIER_KEYS
from cellopt.topology.users import drop_users_nbytes

__all__ = ["INTERFERENCE", "MEASURED_RADIO_KEYS", "MEASURED_USER_KEYS", "POISSON_TIER_KEYS",
           "SECTION_KEYS", "Checker", "Distribution", "check_range", "key_table", "toml_type"]

#: Keys of each tier table of a Poisson layout (``[network.tiers.<tier>]``), with their kinds.
POISSON_TIER_KEYS = {k: kind_of(k) for k in TIER_KEYS}
#: Interference models of the ``[problem]`` section.
INTERFERENCE = CHOICES["interference"].names()
#: Keys of each section but ``[network]`` (whose keys are its builder's), with their TOML
#: kinds: the parameters (or fields) of what the section feeds, read from their signatures
#: and type hints as the builders' are (:func:`~cellopt.study.builders.scenario_keys`). A
#: kind is given where the file's form differs from the type hint (a distribution, a table
#: per tier, power levels), and a key where the file names it otherwise.
SECTION_KEYS: dict[str, dict[str, str]] = {
    "picos": scenario_keys(topology.add_picos, exclude=("network",)),
    "femtocells": scenario_keys(topology.add_femtocells, exclude=("network", "region", "buildings"),
                                kinds=dict.fromkeys(("backhaul_mbps", "price_per_mbps"), "dist")),
    "users": {  # the building radius is [radio]'s: one building size
        **scenario_keys(topology.drop_users, exclude=("network", "region", "building_radius_m"),
                        kinds={"demand_mbps": "dist", "min_distance_m": "per_tier"}),
        **scenario_keys(topology.read_measurements, only=("source", "source_crs"),
                        rename={"source": "links"}, kinds={"source": "path", "source_crs": "str"}),
    },
    "radio": RADIO_KEYS,
    "problem": {  # backhaul_mbps, price_per_mbps: one value, for the third-party cells
        **scenario_keys(Problem.from_links, only=("alpha", "backhaul_mbps", "price_per_mbps"),
                        kinds=dict.fromkeys(("backhaul_mbps", "price_per_mbps"), "float")),
        "interference": "str",
        **scenario_keys(LoadCoupling.from_drop, exclude=("drop",)),
    },
    "power": {
        **scenario_keys(PowerProblem.from_drop, exclude=("drop", "alpha"),
                        kinds={"levels_db": "levels", "energy_price_per_w": "float"}),
        **scenario_keys(solve_power, exclude=("problem", "callback", "progress", "options"),
                        rename={"method": "master_method"}, kinds={"max_iter": "int"}),
        "label": "str",
    },
    "seeds": scenario_keys(DropSeeds),
    "coverage": scenario_keys(CoverageSettings),
    "deploy": scenario_keys(DeploySettings),
}
TOP_KEYS = ["name", "description", "network", *SECTION_KEYS, "methods"]
REQUIRED = ("network", "users")
_EXPECTED = {
    "int": "integer", "float": "number", "str": "string", "bool": "boolean", "path": "string",
    "floats": "array of numbers", "str|strs": "string or array of strings",
    "int|ints": "integer or array of integers",
    "dist": "number or distribution table {distribution = 'uniform' | 'lognormal', ...}",
    "tiers": "table of tier tables, e.g. [network.tiers.macro]",
    "per_tier": "number, or table of numbers per tier, e.g. {macro = 3.5, pico = 4.0}",
    "per_tier_name": 'name, or table of names per tier, e.g. {macro = "uma", pico = "umi"}',
    "float|auto": 'number or "auto"',
    "path_loss": 'path of the predictions, a table {source = "folder/", kind = "path_loss_db", '
                 'includes_antenna = true}, or a table of either per tier',
    "levels": 'array of levels (numbers ≤ 0 dB, "off"), or a table of such arrays per tier, '
              'e.g. [0, -10, "off"] or {macro = [0, "off"], pico = [0, -10]}',
}
_DIST_KEYS = {"uniform": ("low", "high"), "lognormal": ("median", "sigma")}
#: Keys of a ``[radio] path_loss`` table: the options of
#: :class:`~cellopt.radio.RasterPathLoss` (its source relative to the scenario file).
PATH_LOSS_KEYS = scenario_keys(RasterPathLoss, kinds={"source": "path"})
#: ``[users]`` keys a scenario with measured links (``[users] links``) may give.
MEASURED_USER_KEYS = ("links", "source_crs", "weight", "demand_mbps")
#: ``[radio]`` keys that apply to measured links: the noise, the RSRP offset, the rate
#: mapping and the candidates kept (the others describe propagation, which is measured).
MEASURED_RADIO_KEYS = ("noise_figure_db", "rat", "subcarrier_spacing_khz", "spectral_efficiency",
                       "n_candidates", "window_db")


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


#: How :func:`key_table` names each TOML kind.
_KIND_WORDS = {
    "int": "integer", "float": "number", "str": "string", "bool": "boolean", "path": "path",
    "floats": "numbers", "str|strs": "string or strings", "int|ints": "integer or integers",
    "dist": "number or distribution", "tiers": "tier tables", "per_tier": "number per tier",
    "per_tier_name": "name per tier", "float|auto": 'number or "auto"',
    "path_loss": "path or table", "levels": "levels",
}


def _key_list(keys: Mapping[str, str], required: Sequence[str] = ()) -> str:
    return ", ".join(f"`{k}` ({_KIND_WORDS[kind]}{', required' if k in required else ''})"
                     for k, kind in keys.items())


def key_table() -> str:
    """Every key a scenario file may give, by section, as a Markdown table (docs/scenarios.md,
    "Schema").

    Returns
    -------
    str
        A row for the top level, one per ``[network]`` builder
        (:data:`~cellopt.study.builders.BUILDERS`, by name), one per other section
        (:data:`SECTION_KEYS`), then the tables some keys take: Poisson tier tables,
        ``[radio] path_loss`` and distributions; each key with its kind (a number or a
        table per tier: "number per tier"); ends with a newline.
    """
    rows = ["| section | keys |", "|---|---|",
            f"| top level | {_key_list(dict.fromkeys(('name', 'description'), 'str'))}, `methods` "
            "(names or tables of a method's options) |"]
    tables = []
    for name, builder in sorted(BUILDERS.items()):
        rows.append(f"| `[network]` `builder = \"{name}\"` | {_key_list(builder.keys, builder.required)} |")
        tables += [f"`{key}` ({name})" for key, kind in builder.keys.items() if kind == "tiers"]
    rows += [f"| `[{section}]` | {_key_list(keys)} |" for section, keys in SECTION_KEYS.items()]
    rows.append(f"| a tier table of {', '.join(tables)} | {_key_list(POISSON_TIER_KEYS)} |")
    rows.append(f"| `[radio] path_loss` table | {_key_list(PATH_LOSS_KEYS, ('source',))} |")
    rows.append("| a distribution | `distribution` (string, required): "
                + "; ".join(f"`{kind}` with {_key_list(dict.fromkeys(names, 'float'), names)}"
                            for kind, names in _DIST_KEYS.items()) + " |")
    return "\n".join(rows) + "\n"


def check_range(key: str, value: Any) -> None:
    """Raise a ValidationError naming `key` if its (well-typed) value is out of range.

    Parameters
    ----------
    key : str
        A scenario key.
    value : any
        Its value, of the key's TOML kind.

    Raises
    ------
    ValidationError
        Outside the range of the parameter catalogue, or an unknown name.
    """
    limit = LIMITS.get(key)
    if key in TIER_LIMITS:  # a scenario key given per tier has its own range
        check_per_tier(value, key)
    elif limit is not None and limit.kind == "int":
        for v in value if isinstance(value, list) else [value]:
            check_count(v, key)
    elif limit is not None and isinstance(value, float):
        check_real(value, key, warn=False)
    elif key in CHOICES:
        for name in value.values() if isinstance(value, dict) else [value]:
            check_choice(name, key)
    elif key == "resource_mhz":
        bad = [v for v in value if not (math.isfinite(v) and v > 0)]
        if bad or not value:
            raise ValidationError(f"resource_mhz={value}; fix: give positive subband widths in MHz")
    elif key in ("bbox", "window"):
        if len(value) != 4 or not all(math.isfinite(v) for v in value):
            raise ValidationError(f"{key}={value}; fix: give 4 finite numbers")
    elif key == "demand_mbps" and not (value.kind == "lognormal" or dict(value.params)["low"] > 0
                                       if isinstance(value, Distribution) else value > 0):
        raise ValidationError(f"demand_mbps={value}; fix: give demands > 0 in Mbit/s (a uniform "
                              "distribution needs low > 0), or inf for full buffer")
    elif key == "interference_radius_m" and value != "auto" and not (math.isfinite(value)
                                                                    and value > 0):
        raise ValidationError(f"interference_radius_m={value}; fix: give a radius > 0 in metres, "
                              'or "auto"')
    elif key == "tiers":
        _check_tier_tables(value)
    elif key == "levels_db":
        for name, levels in (value.items() if isinstance(value, dict) else [("", value)]):
            key = f"levels_db.{name}" if name else "levels_db"
            if len(levels) and all(v is None for v in levels):  # in the file's own words
                cells = f"the {name} cells" if name else "every cell"
                shown_levels = ["off" if v is None else v for v in levels]
                raise ValidationError(f"{key}={shown_levels} holds only \"off\", so {cells} would "
                                      "be off in every pattern and the users they serve would have no link; "
                                      "fix: add a level with power, e.g. [0, \"off\"]")
            level_offsets_db(levels, key, warn=False)  # Checker.power warns, naming the file
    elif key in ("crs", "source_crs"):
        try:
            pyproj.CRS(value)
        except pyproj.exceptions.CRSError:
            raise ValidationError(f"{key}={value!r} is not a CRS pyproj knows; fix: give one such as "
                                  "'EPSG:32631' (UTM 31N) or 'EPSG:4326'") from None


def _check_tier_tables(value: Mapping[str, Mapping[str, Any]]) -> None:
    """The ranges of Poisson tier tables, and their sectors and densities."""
    for tier, table in value.items():
        for k, v in table.items():
            try:
                check_range(k, v)
            except ValidationError as err:
                raise ValidationError(f"tiers.{tier}: {err.problems[0]}") from None
        if table.get("sectors", 1) not in (1, 3):
            raise ValidationError(f"tiers.{tier}: sectors={table['sectors']}; fix: use 1 "
                                  "(omni) or 3 (sectorised)")
        if not table.get("density_per_km2", 0.0) > 0:
            raise ValidationError(f"tiers.{tier}: density_per_km2="
                                  f"{table.get('density_per_km2')}; fix: give a density > 0 "
                                  "per km² (leave the tier out for none)")


def toml_type(value: Any) -> str:
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


def _is_levels(v: Any) -> bool:
    """An array of power levels: numbers [dB] or "off"."""
    return isinstance(v, list) and all(_is_number(x) or x == "off" for x in v)


class Checker:
    """Validates a parsed scenario file, with messages that name the file and the key.

    Parameters
    ----------
    path : Path
        The scenario file, named in every message.
    """

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, message: str) -> ValidationError:
        """The error to raise: `message` about `where` (a section or key) of the file."""
        return ValidationError(f"{self.path}: {where} {message}")

    def table(self, raw: Any, where: str, keys: Mapping[str, str]) -> dict[str, Any]:
        """A table whose keys are those of `keys`, each value checked against its kind."""
        if not isinstance(raw, dict):
            raise self.fail(where, f"must be a table, got {toml_type(raw)}")
        unknown = [k for k in raw if k not in keys]
        if unknown:
            raise self.fail(where, f"unknown key {unknown[0]!r}; valid: {sorted(keys)}")
        return {k: self.value(v, keys[k], f"{where} key {k!r}") for k, v in raw.items()}

    def value(self, v: Any, kind: str, where: str) -> Any:
        """`v` checked against the TOML `kind`, as the builders take it (floats as float)."""
        ok = {
            "int": _is_int(v), "float": _is_number(v), "str": isinstance(v, str),
            "path": isinstance(v, str),
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
            "per_tier_name": isinstance(v, str) or (isinstance(v, dict)
                                                    and all(isinstance(x, str) for x in v.values())),
            "levels": _is_levels(v) or (isinstance(v, dict) and all(map(_is_levels, v.values()))),
            "path_loss": isinstance(v, (str, dict)),
        }[kind]
        if not ok:
            hint = ""
            if kind in ("int", "int|ints") and isinstance(v, float):
                hint = ("; fix: write a whole number without a decimal point or exponent "
                        "(1e9 is a float in TOML; write 1_000_000_000)")
            raise self.fail(where, f"expected {_EXPECTED[kind]}, got {toml_type(v)} ({v!r}){hint}")
        if kind == "float" or (kind == "float|auto" and v != "auto"):
            return float(v)
        if kind == "floats":
            return [float(x) for x in v]
        if kind == "dist":
            return float(v) if _is_number(v) else self.distribution(v, where)
        if kind == "levels":  # "off" → None, as PowerProblem takes it
            def levels(x: list[Any]) -> list[float | None]:
                return [None if lv == "off" else float(lv) for lv in x]
            if isinstance(v, list):
                return levels(v)
            unknown = [t for t in v if t not in TIERS]
            if unknown:
                raise self.fail(where, f"has unknown tiers {unknown}; fix: use tiers from "
                                f"{list(TIERS)}")
            return {t: levels(x) for t, x in v.items()}
        if kind == "path_loss":
            return self.path_loss(v, where)
        if kind in ("tiers", "per_tier", "per_tier_name") and isinstance(v, dict):
            unknown = [t for t in v if t not in TIERS]
            if unknown:
                raise self.fail(where, f"has unknown tiers {unknown}; valid: {list(TIERS)}")
            if kind == "tiers":
                return {t: self.table(table, f"{where} tier {t!r}", POISSON_TIER_KEYS)
                        for t, table in v.items()}
            return {t: float(x) if kind == "per_tier" else x for t, x in v.items()}
        return float(v) if kind == "per_tier" else v

    def path_loss(self, v: str | dict, where: str) -> dict[str, dict[str, Any]]:
        """``[radio] path_loss`` as ``{tier: options}`` (``"*"``: every tier), each
        ``source`` still relative to the scenario file."""
        if isinstance(v, str):
            return {"*": {"source": v}}
        if "source" in v:
            return {"*": self.table(v, where, PATH_LOSS_KEYS)}
        unknown = [t for t in v if t not in TIERS]
        if unknown:
            raise self.fail(where, f"has key {unknown[0]!r}, neither 'source' nor a tier; fix: "
                            "give {source = \"folder/\", ...}, or a table per tier of "
                            f"{list(TIERS)}")
        out = {}
        for tier, options in v.items():
            if isinstance(options, str):
                options = {"source": options}
            out[tier] = self.table(options, f"{where} tier {tier!r}", PATH_LOSS_KEYS)
            if "source" not in out[tier]:
                raise self.fail(f"{where} tier {tier!r}", "has no 'source'; fix: give the "
                                "folder or multi-band GeoTIFF of its predictions")
        return out

    def ranges(self, section: str, values: Mapping[str, Any]) -> None:
        """Check every value of a section against its range, naming the section and key."""
        for key, v in values.items():
            try:
                check_range(key, v)
            except ValidationError as err:
                raise self.fail(f"[{section}]", err.problems[0]) from None

    def consistency(self, network: Mapping[str, Any], sections: Mapping[str, Any]) -> None:
        """Check keys against each other, and that the counts fit in memory, before a build."""
        users, picos, femtos = sections["users"], sections["picos"], sections["femtocells"]
        if "links" in users:
            self.measured(sections)
        elif "source_crs" in users:
            raise self.fail("[users] key 'source_crs'", "is the CRS of the x, y columns of a "
                            "'links' file, and there is none; fix: remove it, or give links")
        elif ("n" in users) == ("density_per_km2" in users):
            raise self.fail("[users]", "give exactly one of the keys 'n' and 'density_per_km2'; "
                            "fix: e.g. n = 100 or density_per_km2 = 500")
        if femtos is not None and ("density_per_km2" in femtos) == ("adoption" in femtos):
            raise self.fail("[femtocells]", "give exactly one of the keys 'density_per_km2' and "
                            "'adoption'; fix: e.g. density_per_km2 = 40 or adoption = 0.05")
        for share, tier_key, default, what in (
                ("clustered_fraction", "cluster_tier", "pico", "clusters users around"),
                ("colocated_fraction", "colocated_tier", "femto", "places indoor users inside the "
                 "buildings of")):
            tier = users.get(tier_key, default)
            if users.get(share, 0.0) > 0 and has_tier(tier, network, picos, femtos) is False:
                raise self.fail("[users]", f"{share} > 0 {what} {tier} cells, but the network gets "
                                f"none; fix: add {tier} cells (or set {tier_key}) or set "
                                f"{share} = 0")
        interference = (sections["problem"] or {}).get("interference", "full")
        if interference == "load_coupled" and len(network.get("resource_mhz", [0.0])) > 1:
            raise self.fail("[problem]", "interference = 'load_coupled' needs one band; fix: "
                            "remove [network] resource_mhz or use interference = 'full'")
        self.power(network, sections)
        self.unused(sections)
        bandwidth = network.get("bandwidth_mhz", 10.0)
        widths = network.get("resource_mhz", [bandwidth])
        subbands = "resource_mhz" in BUILDERS[network["builder"]].keys
        if subbands and not np.isclose(sum(widths), bandwidth, rtol=1e-9, atol=0):
            raise self.fail("[network]", f"resource_mhz sums to {sum(widths):g} MHz, not "
                            f"bandwidth_mhz = {bandwidth:g}; fix: make the subband widths add up "
                            "to the band")
        self.memory(network, sections)

    def measured(self, sections: Mapping[str, Any]) -> None:
        """Refuse the keys that conflict with measured links (``[users] links``): the users,
        their positions and the links come from the file, so nothing may place users, add
        cells the measurements do not cover, model propagation, draw several drops, or
        recompute gains from the propagation model (load coupling, power patterns,
        coverage maps, the held-out drops of deployable settings)."""
        why = "conflicts with [users] links (users, positions and links come from the file)"
        users = sections["users"]
        for key in users:
            if key not in MEASURED_USER_KEYS:
                raise self.fail(f"[users] key {key!r}", f"{why}; fix: remove it (with links, "
                                f"[users] takes only {list(MEASURED_USER_KEYS)})")
        if isinstance(users.get("demand_mbps"), Distribution):
            raise self.fail("[users] key 'demand_mbps'", "is a distribution, which draws a demand "
                            "per user of a random drop; with links the users are measured: fix: "
                            "give one number, or a demand_mbps column in the links file")
        for section in ("picos", "femtocells"):
            if sections[section] is not None:
                raise self.fail(f"[{section}]", f"{why}: these cells have no measurements; fix: "
                                "remove the section, or add the cells to the network and measure "
                                "them")
        for key in sections["radio"] or {}:
            if key not in MEASURED_RADIO_KEYS:
                raise self.fail(f"[radio] key {key!r}", f"{why}: it describes propagation, which "
                                f"is measured; fix: remove it (with links, [radio] takes only "
                                f"{list(MEASURED_RADIO_KEYS)})")
        if (sections["problem"] or {}).get("interference", "full") != "full":
            raise self.fail("[problem] key 'interference'", f"{why}: load-coupled interference "
                            "recomputes every cell's gain from the propagation model; fix: "
                            "interference = 'full'")
        if sections["power"] is not None:
            raise self.fail("[power]", f"{why}: power patterns recompute every cell's gain from "
                            "the propagation model; fix: remove the section")
        if (sections["seeds"] or {}).get("drops", 1) > 1:
            raise self.fail("[seeds] key 'drops'", f"{why}: the measurements are one drop, and "
                            "shadowing seeds do not apply; fix: drops = 1 (or remove it)")
        for section, what in (("coverage", "coverage maps are computed from the propagation "
                               "model, not from the measurements"),
                              ("deploy", "deployable settings are judged on drops with new users "
                               "and shadowing, and the measurements are one drop")):
            if sections[section] is not None and sections[section].get("enabled", True):
                raise self.fail(f"[{section}]", f"{why}: {what}; fix: enabled = false, or remove "
                                "the section (off by default with links)")

    def power(self, network: Mapping[str, Any], sections: Mapping[str, Any]) -> None:
        """Check ``[power]`` against the rest: one band, full interference, and level lists
        only for tiers the network gets (a cell file's tiers are checked when read)."""
        power = sections["power"]
        if power is None:
            return
        if (sections["problem"] or {}).get("interference", "full") != "full":
            raise self.fail("[power]", "needs interference = 'full' in [problem] (patterns set "
                            "every cell's power in each share of the band); fix: remove "
                            "[problem] interference or the [power] section")
        if len(network.get("resource_mhz", [0.0])) > 1:
            raise self.fail("[power]", "needs one band (patterns share the whole band); fix: "
                            "remove [network] resource_mhz or the [power] section")
        for key, value in power.items():  # legal but unusual numbers (tol = 0.5: a 50 % gap)
            usual = LIMITS[key].usual if key in LIMITS and _is_number(value) else None
            if usual is not None and not usual[0] <= value <= usual[1]:
                limit = LIMITS[key]
                warnings.warn(f"{self.path}: [power] {key}={value:g} is outside the usual range "
                              f"[{usual[0]:g}, {usual[1]:g}] {limit.unit} (legal, but check it); "
                              f"fix: {limit.fix}", UserWarning, stacklevel=2)
        levels = power.get("levels_db")
        for tier, listed in (levels.items() if isinstance(levels, dict) else [("", levels or [])]):
            low = unusual_levels(listed)
            if low:
                warnings.warn(f"{self.path}: [power] "
                              + unusual_levels_message(f"levels_db.{tier}" if tier else "levels_db",
                                                       low), UnusualLevelWarning, stacklevel=2)
        if isinstance(levels, dict):
            lacking = [t for t in levels if has_tier(t, network, sections["picos"],
                                                     sections["femtocells"]) is False]
            if lacking:
                raise self.fail("[power] key 'levels_db'", f"has level lists for tiers {lacking}, "
                                "which the network does not get; fix: give lists only for its "
                                "tiers, or one list for every cell")
            missing = [t for t in TIERS if t not in levels and has_tier(
                t, network, sections["picos"], sections["femtocells"])]
            if missing:
                raise self.fail("[power] key 'levels_db'", f"has no level list for tiers {missing}, "
                                "which the network gets; fix: add one for each, e.g. "
                                f"{missing[0]} = [0, \"off\"]")
        n_candidates = (sections["radio"] or {}).get("n_candidates", 8)
        if power.get("n_interferers", n_candidates) < n_candidates:
            raise self.fail("[power] key 'n_interferers'", f"= {power['n_interferers']} is below "
                            f"[radio] n_candidates = {n_candidates}; fix: give at least "
                            f"{n_candidates}")

    def unused(self, sections: Mapping[str, Any]) -> None:
        """Warn about keys that the rest of the file makes unused, naming them and the fix:
        the power schedule's ``[deploy]`` keys without ``[power]``, and ``[problem]
        n_interferers`` without load coupling. (A section switched off with ``enabled =
        false`` keeps its keys silently: the switch is meant to be flipped.)"""
        found = []
        deploy, problem = sections["deploy"] or {}, sections["problem"] or {}
        if sections["power"] is None and {"subframes", "sleep_share_off"} & set(deploy):
            found.append(("[deploy]", sorted({"subframes", "sleep_share_off"} & set(deploy)),
                          "they set the schedule of a power solution, and the file has no "
                          "[power] section", "add a [power] section, or remove them"))
        interference = problem.get("interference", "full")
        if "n_interferers" in problem and interference != "load_coupled":
            found.append(("[problem]", ["n_interferers"], "it counts the cells followed exactly "
                          f"by load coupling, and interference = {interference!r}",
                          "remove it, or set interference = 'load_coupled'"
                          + (" (power patterns take [power] n_interferers)"
                             if sections["power"] is not None else "")))
        for section, keys, why, fix in found:
            warnings.warn(f"{self.path}: {section} key(s) {keys} are ignored: {why}; fix: {fix}",
                          UserWarning, stacklevel=2)

    def memory(self, network: Mapping[str, Any], sections: Mapping[str, Any]) -> None:
        """Refuse counts whose arrays cannot fit in memory, stage by stage, naming the keys.

        The counts are those the builders will see: the network's cells (the footprint
        of its builder, :class:`~cellopt.study.builders.Footprint`), picos per macro
        cell, femtocells and users as density × area (the mean), and the links
        users × candidates × resources. A file-based network's cells and area are known
        only once read: its counts are checked when the drop is built.
        """
        users, picos, femtos = sections["users"], sections["picos"], sections["femtocells"]
        radio_opts = sections["radio"] or {}
        area_km2 = n_cells = None
        n_images, n_resources = 1, 1
        footprint = BUILDERS[network["builder"]].estimate(
            {k: v for k, v in network.items() if k != "builder"})
        if footprint is not None:
            self.check_memory(footprint.nbytes, footprint.what, footprint.fix)
            area_km2, n_cells = footprint.area_km2, footprint.n_cells
            n_images, n_resources = footprint.n_images, footprint.n_resources
            if picos is not None and footprint.pico_hosts:
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
        """Refuse `n_bytes` beyond the memory limit, naming the file and `what`."""
        check_memory(n_bytes, f"{self.path}: {what}", fix)

    def distribution(self, raw: dict[str, Any], where: str) -> Distribution:
        """The :class:`Distribution` of a distribution table."""
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

    def methods(self, raw: Any) -> tuple[MethodRun, ...]:
        """The methods of the ``methods`` array, checked as ``solve()`` would check them."""
        where = "methods"
        if not isinstance(raw, list):
            raise self.fail(where, f"expected array of method names or tables, got "
                            f"{toml_type(raw)}")
        specs = []
        for i, item in enumerate(raw):
            at = f"methods[{i}]"
            if isinstance(item, str):
                name, label, options = item, None, {}
            elif isinstance(item, dict):
                if not isinstance(item.get("name"), str):
                    raise self.fail(at, f"key 'name' expected string, got "
                                    f"{toml_type(item.get('name')) if 'name' in item else 'nothing'}")
                name, label = item["name"], item.get("label")
                if label is not None and not isinstance(label, str):
                    raise self.fail(at, f"key 'label' expected string, got {toml_type(label)}")
                options = {k: v for k, v in item.items() if k not in ("name", "label")}
                for k, v in options.items():
                    if isinstance(v, dict) and not all(_is_number(x) for x in v.values()):
                        raise self.fail(at, f"key {k!r} expected number, string, boolean, "
                                        f"array or table of numbers (e.g. per tier), got {v!r}")
            else:
                raise self.fail(at, f"expected string or table, got {toml_type(item)}")
            if name == PowerRun.name:  # a section's run, not a method
                raise self.fail(at, "power optimization is not a method of the list; fix: "
                                "describe it in a [power] section (levels_db, "
                                "energy_price_per_w, ...): it runs after the methods")
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
            else:
                self.label(label, f"{at} key 'label'")
            specs.append(MethodRun(name, label, options))
        self.distinct_labels([s.label for s in specs], where)
        return tuple(specs)

    def label(self, label: str, where: str) -> None:
        """Refuse a blank run label (:func:`~cellopt.study.runkinds.label_problem`), naming
        the file and `where`."""
        problem = label_problem(label)
        if problem is not None:
            raise self.fail(where, problem)

    def distinct_labels(self, labels: Sequence[str], where: str) -> None:
        """Refuse labels that differ only by spaces at their ends
        (:func:`~cellopt.study.runkinds.labels_problem`)."""
        problem = labels_problem(labels)
        if problem is not None:
            raise self.fail(where, problem)
