"""The network builders of scenario files: one registry entry per ``[network] builder``.

Each entry (:func:`register_builder`) names the function that builds the network; the
keys a scenario may give in ``[network]``, and their TOML kinds, are read from that
function's signature and type hints (``float``, ``int``, ``bool``, ``str``, a ``Literal``
of strings, tuples or sequences of numbers, ``X | Sequence[X]``), with overrides only
where the TOML kind differs: ``"tiers"`` (tables of tier tables), ``"float|auto"`` and
``"path"`` (a string resolved relative to the TOML file). Parameters without a default
are required. The entry's footprint estimates, from the keys alone, the memory of the
network, its area and (mean) cell count and the tiers it gets: the scenario's memory
checks and its checks of hotspot and co-location tiers read it before anything is built.

The keys of the other sections are read the same way from what they feed
(:func:`scenario_keys`): those of ``[radio]`` (:data:`RADIO_KEYS`) from the fields of
:class:`~cellopt.radio.RadioModel` and :class:`~cellopt.radio.ThreeGPP` and the options of
:func:`~cellopt.radio.link_table`, which :func:`radio_model` and the drop's build take
them to.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import math
import os
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import geopandas as gpd
import numpy as np

from cellopt import radio, topology
from cellopt.errors import ValidationError
from cellopt.network import TIERS, Network
from cellopt.radio.pathloss import FRIIS_1M_2GHZ_DB, SingleSlope
from cellopt.radio.propagation import scenario_options
from cellopt.topology.hexgrid import hex_grid_nbytes
from cellopt.topology.poisson import poisson_layout_nbytes
from cellopt.topology.square import square_grid_nbytes

__all__ = ["BUILDERS", "LINK_KEYS", "RADIO_KEYS", "Builder", "Footprint", "file_network", "has_tier",
           "problem_options", "radio_model", "register_builder", "scenario_keys"]


@dataclasses.dataclass(frozen=True)
class Footprint:
    """What a builder's network will hold, estimated from its scenario keys before it is built.

    `nbytes` is the peak memory of the build (the builder's ``*_nbytes`` helper), `what`
    and `fix` name its keys and how to lower it; `area_km2` is the area users and
    femtocells are dropped in, `n_cells` the (mean) cells with sectors counted, `tiers`
    those the network has cells of, `n_images` the copies of each cell the radio model
    measures (wraparound), `n_resources` the subbands; with `pico_hosts`, ``[picos]`` are
    placed around these (macro) cells and their count is checked too.
    """

    nbytes: float
    what: str
    fix: str
    area_km2: float
    n_cells: float
    tiers: frozenset[str]
    n_images: int = 1
    n_resources: int = 1
    pico_hosts: bool = False


@dataclasses.dataclass(frozen=True)
class Builder:
    """One ``[network] builder`` of scenario files (made by :func:`register_builder`).

    Attributes
    ----------
    name : str
        The value of ``builder``.
    function : callable
        Builds the network from the scenario keys (and ``rng``, if it takes one).
    keys : mapping of str to str
        TOML kind of each scenario key (see :mod:`cellopt.study.schema`).
    defaults : mapping of str to any
        Default of each key that has one.
    required : tuple of str
        Keys a scenario must give.
    footprint : callable or None
        ``footprint(keys with defaults) -> Footprint``; None: known only once built.
    check : callable or None
        ``check(keys) -> (where, message)`` of the first inconsistency between keys, or
        None; run when the file is loaded, before the ranges.
    """

    name: str
    function: Callable[..., Network]
    keys: Mapping[str, str]
    defaults: Mapping[str, Any]
    required: tuple[str, ...]
    footprint: Callable[[Mapping[str, Any]], Footprint] | None = None
    check: Callable[[Mapping[str, Any]], tuple[str, str] | None] | None = None
    convert: Mapping[str, Callable[[Any], Any]] = dataclasses.field(default_factory=dict)
    takes_rng: bool = False

    def estimate(self, network: Mapping[str, Any]) -> Footprint | None:
        """The footprint of a scenario's ``[network]`` keys (defaults filled in), or None."""
        if self.footprint is None:
            return None
        return self.footprint({**self.defaults, **network})

    def build(self, network: Mapping[str, Any], rng: np.random.Generator) -> Network:
        """The network of a scenario's ``[network]`` keys (``builder`` left out)."""
        options = {k: self.convert[k](v) if k in self.convert else v for k, v in network.items()}
        return self.function(**options, rng=rng) if self.takes_rng else self.function(**options)


#: The registered builders, by name.
BUILDERS: dict[str, Builder] = {}

_SCALARS = {bool: "bool", int: "int", float: "float", str: "str"}
_KINDS = ("str", "int", "float", "bool", "floats", "str|strs", "int|ints")


def _kind(hint: Any) -> str | None:
    """The TOML kind of a type hint, or None if it has none."""
    args = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    kinds = set()
    for arg in (a for a in args if a is not type(None)):
        origin, inner = typing.get_origin(arg), typing.get_args(arg)
        if arg in _SCALARS:
            kinds.add(_SCALARS[arg])
        elif origin is Literal and all(isinstance(x, str) for x in inner):
            kinds.add("str")
        elif origin is os.PathLike:
            kinds.add("str")
        elif origin in (tuple, list, collections.abc.Sequence) and inner and all(
                x in (float, int, str, Ellipsis) for x in inner):
            kinds.add(f"{_SCALARS[inner[0]]}s")
        else:
            return None
    kind = "|".join(sorted(kinds, key=len))
    return kind if kind in _KINDS else None


def _converter(hint: Any) -> Callable[[Any], Any] | None:
    """How to turn a TOML array into the type a parameter wants: a tuple or an ndarray."""
    args = [a for a in typing.get_args(hint) if a is not type(None)] \
        if typing.get_origin(hint) in (typing.Union, types.UnionType) else [hint]
    if len(args) == 1 and typing.get_origin(args[0]) is tuple:
        return tuple
    if len(args) == 1 and args[0] is np.ndarray:
        return np.asarray
    return None


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The type hints of a function's parameters (of a plain class: of its ``__init__``)."""
    plain_class = isinstance(fn, type) and not dataclasses.is_dataclass(fn)
    return typing.get_type_hints(fn.__init__ if plain_class else fn)


def _keys(fn: Callable[..., Any], kinds: Mapping[str, str], exclude: Sequence[str],
          only: Sequence[str] | None, what: str) -> Iterator[tuple[inspect.Parameter, str, Any]]:
    """Each parameter of `fn` a scenario sets, with its TOML kind and type hint."""
    hints = _hints(fn)
    for p in inspect.signature(fn).parameters.values():
        if p.name in ("rng", *exclude) or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) \
                or (only is not None and p.name not in only):
            continue
        hint = hints.get(p.name)
        kind = kinds.get(p.name) or _kind(hint)
        if kind is None:
            raise TypeError(f"{what}: the type hint of {p.name!r} ({hint}) has no TOML kind; "
                            "fix: give it in kinds=")
        yield p, kind, hint


def scenario_keys(fn: Callable[..., Any], *, kinds: Mapping[str, str] | None = None,
                  exclude: Sequence[str] = (), only: Sequence[str] | None = None,
                  rename: Mapping[str, str] | None = None) -> dict[str, str]:
    """The scenario keys of the parameters of `fn` (a function, or a class and its
    fields), with their TOML kinds read from the type hints, as a builder's are.

    Parameters
    ----------
    fn : callable
        What a section of the file feeds (e.g. :func:`cellopt.topology.add_picos`).
    kinds : mapping of str to str, optional
        TOML kinds of the parameters whose type hint does not say (or says otherwise):
        the file's form differs (a table per tier, a distribution).
    exclude : sequence of str
        Parameters a scenario does not set (``rng`` always is).
    only : sequence of str, optional
        The parameters a scenario sets, where it sets few of many.
    rename : mapping of str to str, optional
        The key of a parameter the file names otherwise.

    Returns
    -------
    dict of str to str
        The TOML kind of each key, in the order of the parameters.

    Raises
    ------
    TypeError
        A parameter whose TOML kind neither its type hint nor `kinds` gives, or a name of
        `only` that `fn` does not take.
    """
    what = f"scenario_keys({getattr(fn, '__qualname__', fn)})"
    keys = {p.name: kind for p, kind, _ in _keys(fn, kinds or {}, exclude, only, what)}
    missing = [k for k in only or () if k not in keys]
    if missing:
        raise TypeError(f"{what}: it takes no parameters {missing}")
    return {(rename or {}).get(k, k): kind for k, kind in keys.items()}


def register_builder(name: str, function: Callable[..., Network], *,
                     footprint: Callable[[Mapping[str, Any]], Footprint] | None = None,
                     check: Callable[[Mapping[str, Any]], tuple[str, str] | None] | None = None,
                     kinds: Mapping[str, str] | None = None, exclude: Sequence[str] = (),
                     required: Sequence[str] | None = None,
                     passes_to: Callable[..., Any] | None = None) -> Builder:
    """Register a network builder of scenario files under ``[network] builder = name``.

    Parameters
    ----------
    name : str
        The value of ``builder``.
    function : callable
        Returns the :class:`~cellopt.network.Network`; called with the scenario's keys,
        and with ``rng`` (a :class:`numpy.random.Generator`) if it has that parameter.
    footprint : callable, optional
        ``footprint(keys) -> Footprint``, the keys with the function's defaults filled in.
    check : callable, optional
        ``check(keys) -> (where, message) or None``: the first inconsistency of the keys.
    kinds : mapping of str to str, optional
        TOML kinds of the keys whose type hint does not say (or says otherwise).
    exclude : sequence of str
        Parameters a scenario does not set (``rng`` always is).
    required : sequence of str, optional
        Keys a scenario must give; default the parameters without a default.
    passes_to : callable, optional
        The function `function` passes its ``**options`` to: its parameters are keys too.

    Returns
    -------
    Builder

    Raises
    ------
    TypeError
        A parameter whose TOML kind neither its type hint nor `kinds` gives.
    """
    keys: dict[str, str] = {}
    defaults: dict[str, Any] = {}
    convert: dict[str, Callable[[Any], Any]] = {}
    needed = []
    for fn in (function, passes_to) if passes_to is not None else (function,):
        for p, kind, hint in _keys(fn, kinds or {}, exclude, None, f"register_builder({name!r})"):
            if p.name in keys:  # `function` already takes it
                continue
            keys[p.name] = kind
            if p.default is p.empty:
                needed.append(p.name)
            else:
                defaults[p.name] = p.default
            if (to := _converter(hint)) is not None:
                convert[p.name] = to
    builder = Builder(name=name, function=function, keys=keys, defaults=defaults,
                      required=tuple(needed if required is None else required), footprint=footprint,
                      check=check, convert=convert,
                      takes_rng="rng" in inspect.signature(function).parameters)
    BUILDERS[name] = builder
    return builder


def has_tier(tier: str, network: Mapping[str, Any], picos: Mapping[str, Any] | None,
             femtos: Mapping[str, Any] | None) -> bool | None:
    """Whether a scenario's network gets cells of `tier`: True, False, or None (known only
    once a cell file is read)."""
    if tier == "femto" and femtos is not None:
        return True
    if tier == "pico" and picos is not None and picos.get("per_sector", 4) > 0:
        return True
    footprint = BUILDERS[network["builder"]].estimate(
        {k: v for k, v in network.items() if k != "builder"})
    return None if footprint is None else tier in footprint.tiers


# ------------------------------------------------------------------ build steps
#: [radio] keys that are options of :func:`~cellopt.radio.link_table`, not RadioModel
#: fields, with their TOML kinds.
LINK_KEYS = scenario_keys(radio.link_table, exclude=("network", "model", "power_dbm", "workers",
                                                     "progress"),
                          kinds={"interference_radius_m": "float|auto"})
#: [radio] keys that become :attr:`RadioModel.pathloss <cellopt.radio.RadioModel.pathloss>`:
#: the single-slope law of the tiers given.
_PATHLOSS_KEYS = dict.fromkeys(("pathloss_exponent", "pathloss_reference_db"), "per_tier")
#: [radio] keys of the :class:`~cellopt.radio.ThreeGPP` models of the tiers ``propagation``
#: names (the scenario per tier); the other keys are the models' fields (their
#: ``shadowing_std_db`` is the section's, given per tier).
_THREE_GPP_KEYS = {"propagation": "per_tier_name",
                   **scenario_keys(radio.ThreeGPP, exclude=("scenario", "shadowing_std_db"))}
#: Every [radio] key, with its TOML kind: the :class:`~cellopt.radio.RadioModel` fields
#: (its ``pathloss`` from the single-slope keys, a 3GPP ``propagation`` or the ``path_loss``
#: predictions, :class:`~cellopt.radio.RasterPathLoss`) and the options of
#: :func:`~cellopt.radio.link_table`. Kinds are given where the file's form differs from
#: the type hint: numbers or tables per tier, one wall loss, names.
RADIO_KEYS = {
    **scenario_keys(radio.RadioModel, exclude=("pathloss",),
                    kinds={"min_distance_m": "per_tier", "shadowing_std_db": "per_tier",
                           "wall_loss_db": "float", "indoor_tiers": "str|strs",
                           "spectral_efficiency": "str"}),
    **_PATHLOSS_KEYS, "path_loss": "path_loss", **_THREE_GPP_KEYS, **LINK_KEYS,
}


def radio_model(section: Mapping[str, Any], *, open_rasters: bool = True) -> radio.RadioModel:
    """The :class:`~cellopt.radio.RadioModel` of a scenario's ``[radio]`` section.

    Parameters
    ----------
    section : mapping
        The validated ``[radio]`` keys.
    open_rasters : bool
        Open the predictions of ``path_loss`` (:class:`~cellopt.radio.RasterPathLoss`).
        False checks every other key as the build would, leaving those tiers at the
        default model: what loading a scenario does, before any raster is read.

    Returns
    -------
    RadioModel
        Its fields, with per-tier values merged into the defaults, and single-slope path
        losses for the tiers given a ``pathloss_exponent``.
    """
    fields = {k: v for k, v in section.items()
              if k not in (*LINK_KEYS, *_PATHLOSS_KEYS, *_THREE_GPP_KEYS, "path_loss")}
    if "indoor_tiers" in fields:
        tiers = fields["indoor_tiers"]
        fields["indoor_tiers"] = (tiers,) if isinstance(tiers, str) else tuple(tiers)
    _refuse_unused(section)
    default = radio.RadioModel()
    for name in ("shadowing_std_db", "min_distance_m"):
        if name in fields:
            fields[name] = {**getattr(default, name), **_per_tier(fields[name])}
    names = _propagation_tiers(section, fields.get("indoor_tiers", default.indoor_tiers))
    if "pathloss_exponent" in section:  # single-slope models for the tiers given
        exponent = _per_tier(section["pathloss_exponent"])
        both = [t for t in exponent if t in names]
        if both:
            raise ValidationError(
                f"[radio] pathloss_exponent sets the single-slope model of tiers {both}, but "
                f"[radio] propagation gives them the 3GPP model {names[both[0]]!r}, whose path "
                "loss is the standard's; fix: remove pathloss_exponent (and "
                "pathloss_reference_db), or give it per tier for the tiers without a 3GPP "
                "model only (e.g. pathloss_exponent = {femto = 3.5})")
        reference = _per_tier(section.get("pathloss_reference_db", FRIIS_1M_2GHZ_DB))
        stray = [t for t in reference if t not in exponent] \
            if isinstance(section.get("pathloss_reference_db"), Mapping) else []
        if stray:
            raise ValidationError(f"[radio] pathloss_reference_db is given for tiers {stray}, "
                                  "which pathloss_exponent gives no single-slope model; fix: "
                                  "give pathloss_exponent for them too, or leave them out")
        fields["pathloss"] = {**default.pathloss, **{
            t: SingleSlope(n, reference.get(t, FRIIS_1M_2GHZ_DB)) for t, n in exponent.items()}}
    elif "pathloss_reference_db" in section:
        raise ValidationError("[radio] pathloss_reference_db is the loss at 1 m of the "
                              "single-slope model, and [radio] gives no pathloss_exponent; fix: "
                              "add pathloss_exponent (e.g. 3.5), or remove "
                              "pathloss_reference_db")
    if names:  # 3GPP 3-D models for the tiers given
        pathloss = dict(fields.get("pathloss", default.pathloss))
        pathloss.update(_three_gpp_models(section, names))
        fields["pathloss"] = pathloss
        if "shadowing_std_db" in fields:  # the 3GPP tiers take theirs in their model
            fields["shadowing_std_db"] = {t: (0.0 if t in names else v)
                                          for t, v in fields["shadowing_std_db"].items()}
    elif "propagation" in section:  # given, but for no tier
        names_given = section["propagation"]
        why = (f"indoor_tiers = {list(fields.get('indoor_tiers', default.indoor_tiers))} "
               "puts every tier indoors, and one name holds for the outdoor tiers only"
               if isinstance(names_given, str) else "the table names no tier")
        raise ValidationError(f"[radio] propagation = {names_given!r} gives no tier a 3GPP "
                              f"model: {why}; fix: name the scenario per tier, e.g. propagation "
                              "= {macro = \"uma\", femto = \"inh_mixed\"}, or remove it")
    else:
        given = [k for k in _THREE_GPP_KEYS if k in section]
        if given:
            raise ValidationError(f"[radio] {given} set a 3GPP model, but [radio] gives no "
                                  "'propagation'; fix: add e.g. propagation = \"uma\" or "
                                  "remove them")
    if "path_loss" in section:  # a planner's predictions, for the tiers given
        given = section["path_loss"]
        tiers = list(TIERS) if "*" in given else list(given)
        named = [(key, list(_per_tier(section[key])) if key == "pathloss_exponent"
                  else (list(section[key]) if isinstance(section[key], Mapping) else None))
                 for key in ("pathloss_exponent", "propagation") if key in section]
        for key, key_tiers in named:
            both = tiers if key_tiers is None and "*" in given else \
                [t for t in key_tiers or () if t in tiers]
            if both:
                raise ValidationError(f"[radio] path_loss and [radio] {key} both give the model "
                                      f"of tiers {both}; fix: give the predictions' tiers as a "
                                      "table (path_loss = {macro = \"folder/\"}) and leave "
                                      f"them out of {key}")
        if "shadowing_std_db" in section:
            sigma = section["shadowing_std_db"]
            both = [t for t in (sigma if isinstance(sigma, Mapping) else TIERS) if t in tiers]
            if both:
                raise ValidationError(
                    f"[radio] shadowing_std_db is given for tiers {both}, whose path loss is "
                    "[radio] path_loss: predictions take their shadowing from their own table; "
                    "fix: give it there (path_loss = {source = \"folder/\", shadowing_std_db = "
                    "8}), and shadowing_std_db per tier for the other tiers only")
        if "indoor_tiers" not in fields:  # the predictions hold what indoor cells pay
            fields["indoor_tiers"] = tuple(t for t in default.indoor_tiers if t not in tiers)
        pathloss = dict(fields.get("pathloss", default.pathloss))
        if not open_rasters:
            pass
        elif "*" in given:
            shared = radio.RasterPathLoss(**given["*"])
            pathloss.update(dict.fromkeys(TIERS, shared))
        else:
            pathloss.update({t: radio.RasterPathLoss(**o) for t, o in given.items()})
        fields["pathloss"] = pathloss
    model = radio.RadioModel(**fields)
    predicted = (TIERS if "*" in section["path_loss"] else tuple(section["path_loss"])) \
        if "path_loss" in section else ()
    own = [t for t in TIERS if getattr(model.pathloss.get(t), "includes_fading", False)
           or t in predicted]
    if len(own) == len(TIERS):
        for key, what in (("decorrelation_m", "shadowing's decorrelation distance"),
                          ("wall_loss_db", "exterior wall loss")):
            if key in section:
                raise ValidationError(
                    f"[radio] {key} is the {what} of the distance-law tiers, and every tier "
                    "follows a model with its own (the 3GPP scenario's, or the predictions'); "
                    f"fix: remove {key}")
    return model


def _propagation_tiers(section: Mapping[str, Any], indoor: tuple[str, ...]) -> dict[str, str]:
    """The 3GPP scenario of each tier ``propagation`` names: one name holds for every tier
    whose cells are outdoors (not in `indoor`)."""
    names = section.get("propagation")
    if names is None:
        return {}
    if isinstance(names, str):
        return {t: names for t in TIERS if t not in indoor}
    return dict(names)


def _three_gpp_models(section: Mapping[str, Any], names: Mapping[str, str]
                      ) -> dict[str, radio.ThreeGPP]:
    """The :class:`~cellopt.radio.ThreeGPP` model of each tier of `names`, with the
    ``[radio]`` options its scenario uses; an option no tier's scenario uses is refused,
    and so is a missing ``frequency_ghz``."""
    if "frequency_ghz" not in section:
        raise ValidationError(f"[radio] propagation = {section['propagation']!r} needs the carrier "
                              "frequency, and [radio] gives no frequency_ghz; fix: add e.g. "
                              "frequency_ghz = 3.5 (in GHz)")
    options = {k: section[k] for k in _THREE_GPP_KEYS if k in section and k != "propagation"}
    used = {t: set(scenario_options(n)) for t, n in names.items()}
    unused = [k for k in options if not any(k in u for u in used.values())]
    if unused:
        scenarios = sorted(set(names.values()))
        raise ValidationError(f"[radio] {unused} {'is' if len(unused) == 1 else 'are'} not used "
                              f"by the 3GPP scenarios {scenarios} of [radio] propagation; fix: "
                              f"remove {'it' if len(unused) == 1 else 'them'}")
    sigma = _per_tier(section["shadowing_std_db"]) if "shadowing_std_db" in section else {}
    models = {}
    for tier, name in names.items():
        own = {k: v for k, v in options.items() if k in used[tier]}
        if tier in sigma:
            own["shadowing_std_db"] = sigma[tier]
        models[tier] = radio.ThreeGPP(name, **own)
    return models


def _refuse_unused(section: Mapping[str, Any]) -> None:
    """Refuse the [radio] keys that the rest of the section leaves without effect."""
    if section.get("antenna", "tr36814") == "tr38901":
        given = [k for k in ("theta_3db_deg", "max_attenuation_db") if k in section]
        if given:
            raise ValidationError(f"[radio] {given} shape the 2-D TR 36.814 sector pattern, but "
                                  "antenna = \"tr38901\" uses the TR 38.901 element and the "
                                  "cells' panels; fix: remove them, or antenna = \"tr36814\"")
    if "far_field" in section and "interference_radius_m" not in section:
        raise ValidationError("[radio] far_field is the interference of the cells beyond the "
                              "interference radius, and [radio] gives no interference_radius_m "
                              "(every cell interferes exactly); fix: remove far_field, or give "
                              "interference_radius_m")


def _per_tier(value: float | Mapping[str, float]) -> dict[str, float]:
    """A per-tier scenario value as a mapping: a lone number holds for every tier."""
    return dict(value) if isinstance(value, Mapping) else dict.fromkeys(TIERS, float(value))


def problem_options(problem: Mapping[str, Any], net: Network) -> dict[str, Any]:
    """``alpha`` and the ``[problem]`` overrides of third-party cells' backhaul and price.

    Parameters
    ----------
    problem : mapping
        The validated ``[problem]`` keys.
    net : Network
        The network of the drop.

    Returns
    -------
    dict
        Options of :meth:`cellopt.Drop.from_network`.
    """
    overrides: dict[str, Any] = {"alpha": problem.get("alpha", 1.0)}  # the rest: build
    third = (net.cells["owner"] == "third_party").to_numpy()
    for key in ("backhaul_mbps", "price_per_mbps"):
        if key in problem:
            values = net.cells[key].to_numpy(float).copy()
            values[third] = problem[key]
            overrides[key] = values
    return overrides


def file_network(path: str, *, region_buffer_m: float = topology.CELLS_REGION_BUFFER_M,
                 window: Sequence[float] | None = None, area: str | None = None,
                 guard_m: float = 500.0, sectors: int | None = None, stand_in: str | None = None,
                 **options: Any) -> Network:
    """The network of a cell file (:func:`~cellopt.topology.read_cells`), with its service area.

    Parameters
    ----------
    path : str
        The cell file.
    region_buffer_m : float
        Without a region of its own, the network's is its cells' convex hull buffered so
        (:func:`~cellopt.topology.cells_region`, the default region of
        :func:`~cellopt.topology.drop_users` too).
    window, area : sequence of 4 floats or str, optional
        ``[lon_min, lat_min, lon_max, lat_max]`` of a study area, or a polygon file of
        it (:func:`~cellopt.topology.study_window`, with `guard_m` [m] of guard band).
    guard_m : float
    sectors : int, optional
        Sectors of the sites without azimuths (:func:`~cellopt.topology.sectorize`).
    stand_in : str, optional
        A scenario to run where `path` is absent, named in the error.
    **options
        Passed to :func:`~cellopt.topology.read_cells`.

    Returns
    -------
    Network

    Raises
    ------
    ValidationError
        A cell file that does not exist, or an area file that cannot be read.
    """
    study_area = _read_polygon(area) if area is not None else window
    if not Path(path).exists():
        raise ValidationError(f"the cell file {path} does not exist; fix: put the file "
                              "there or set [network] path"
                              + (f", or run its synthetic stand-in {stand_in}" if stand_in else ""))
    net = topology.read_cells(path, **options)
    if sectors is not None:
        net = topology.sectorize(net, sectors)
    if study_area is not None:
        return topology.study_window(net, study_area, guard_m=guard_m)
    if net.region is None:  # the default of drop_users and add_femtocells, with its buffer
        net = net.replace(region=topology.cells_region(net, region_buffer_m))
    return net


def _read_polygon(path: str) -> gpd.GeoSeries:
    """The polygons of a vector file (GeoJSON, GeoPackage, ...), with their CRS."""
    try:
        frame = gpd.read_file(path)
    except Exception as err:  # pyogrio raises several kinds for missing or unreadable files
        raise ValidationError(f"area={path!r} cannot be read ({err}); fix: a polygon file "
                              "(GeoJSON, GeoPackage, Shapefile) with a CRS") from err
    return frame.geometry


# ------------------------------------------------------------------ footprints and checks
def _mean_cells(tiers: Mapping[str, Mapping[str, Any]], area_km2: float) -> float:
    """Expected cells of Poisson tier tables over `area_km2`, sectors counted."""
    return sum(t["density_per_km2"] * t.get("sectors", 1) for t in tiers.values()) * area_km2


def _hex_footprint(net: Mapping[str, Any]) -> Footprint:
    n_rings, sectors = net["n_rings"], net["sectors"]
    n_sites = 3 * n_rings**2 + 3 * n_rings + 1
    return Footprint(
        hex_grid_nbytes(n_rings, sectors), f"[network] n_rings={n_rings:,} ({n_sites:,} sites)",
        "use fewer rings (n_rings)", area_km2=n_sites * math.sqrt(3) / 2 * net["isd_m"] ** 2 / 1e6,
        n_cells=n_sites * sectors, tiers=frozenset({"macro"}),
        n_images=7 if net["wraparound"] and n_rings > 0 else 1,
        n_resources=1 if net["resource_mhz"] is None else len(net["resource_mhz"]), pico_hosts=True)


def _hex_check(net: Mapping[str, Any]) -> tuple[str, str] | None:
    if net.get("sectors", 3) not in (1, 3):
        return "[network]", f"sectors={net['sectors']}; fix: use 3 (sectorised) or 1 (omni)"
    return None


def _poisson_footprint(net: Mapping[str, Any]) -> Footprint:
    area_km2 = net["side_m"] ** 2 / 1e6
    n_cells = _mean_cells(net.get("tiers", {}), area_km2)
    return Footprint(poisson_layout_nbytes(n_cells),
                     f"[network] tiers: about {n_cells:.3g} cells over {area_km2:.3g} km²",
                     "use lower densities or a smaller side_m", area_km2, n_cells,
                     tiers=frozenset(net.get("tiers", {})), n_images=9 if net["wraparound"] else 1)


def _poisson_check(net: Mapping[str, Any]) -> tuple[str, str] | None:
    if not net.get("tiers"):
        return "[network]", ("a poisson layout needs at least one tier; fix: add e.g. "
                             "[network.tiers.macro] with density_per_km2 = 5")
    return None


def _country_footprint(net: Mapping[str, Any]) -> Footprint:
    area_km2 = net["side_m"] ** 2 / 1e6
    n_cells = _mean_cells(net["rural"], area_km2)
    return Footprint(poisson_layout_nbytes(n_cells),
                     f"[network] rural: about {n_cells:.3g} cells over {area_km2:.3g} km²",
                     "use lower densities or a smaller side_m", area_km2, n_cells,
                     tiers=frozenset({**net["rural"], **net["urban"]}))


def _file_check(net: Mapping[str, Any]) -> tuple[str, str] | None:
    if "window" in net and "area" in net:
        return "[network]", "has both 'window' and 'area'; fix: give one"
    if "bbox" in net and len(net["bbox"]) != 4:
        return "[network] key 'bbox'", "expected 4 numbers [x_min, y_min, x_max, y_max]"
    return None


def _square_footprint(net: Mapping[str, Any]) -> Footprint:
    n_side = net["n_side"]
    return Footprint(square_grid_nbytes(n_side), f"[network] n_side={n_side:,} ({n_side**2:,} sites)",
                     "use fewer sites per side (n_side)", n_side**2 * net["spacing_m"] ** 2 / 1e6,
                     n_side**2, tiers=frozenset({"macro"}), n_images=9 if net["wraparound"] else 1)


# ------------------------------------------------------------------ the builders
register_builder("hex_grid", topology.hex_grid, footprint=_hex_footprint, check=_hex_check,
                 kinds={"resource_mhz": "floats", "tilt_deg": "float",
                        "electrical_tilt_deg": "float", "panel_rows": "int",
                        "panel_columns": "int"})
register_builder("poisson", topology.poisson_layout, footprint=_poisson_footprint,
                 check=_poisson_check, kinds={"tiers": "tiers"}, required=())
register_builder("country", topology.country_layout, footprint=_country_footprint,
                 kinds={"rural": "tiers", "urban": "tiers"})
register_builder("file", file_network, check=_file_check, passes_to=topology.read_cells,
                 kinds={"path": "path", "area": "path", "stand_in": "path", "crs": "str",
                        "source_crs": "str"}, exclude=("polygon", "progress"))
register_builder("square_grid", topology.square_grid, footprint=_square_footprint)
register_builder("indoor_office", topology.indoor_office,
                 kinds={"tilt_deg": "float", "electrical_tilt_deg": "float", "panel_rows": "int",
                        "panel_columns": "int", "rows": "int", "columns": "int",
                        "length_m": "float", "width_m": "float"})
