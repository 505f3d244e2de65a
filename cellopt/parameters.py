"""The parameter catalogue: every scalar parameter's type, unit, possible and usual range, and fix.

Builders, the radio model, the solvers and the scenario schema check what they are given
against :data:`LIMITS` with :func:`check_real` (numbers) and :func:`check_count` (whole
numbers), so that a value is refused, or warned about, with the same words wherever it
enters. Scenario files also check the keys they give per tier against
:data:`TIER_LIMITS` (:func:`check_per_tier`) and the names they give against
:data:`CHOICES` (:func:`check_choice`). :func:`parameter_table` renders the catalogue as
the Markdown table of docs/scenarios.md ("Parameters").
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import numbers
import warnings
from typing import Any

import numpy as np

from cellopt.errors import ValidationError

__all__ = [
    "CHOICES",
    "LIMITS",
    "TIER_LIMITS",
    "Choice",
    "Limit",
    "check_choice",
    "check_count",
    "check_per_tier",
    "check_real",
    "is_integer",
    "is_real",
    "kind_of",
    "outside_usual",
    "parameter_table",
    "shown",
]


@dataclasses.dataclass(frozen=True)
class Limit:
    """The possible and the usual range of one scalar parameter (see :func:`check_real`).

    Attributes
    ----------
    unit : str
        Unit shown in messages ("" for ratios and fractions).
    low, high : float
        Possible range; a value outside it raises a :class:`ValidationError`.
    usual : (float, float) or None
        Usual range; a legal value outside it warns (often a unit slip). None: no warning.
    fix : str
        How to give a good value, appended to errors and warnings.
    low_open : bool
        `low` itself is impossible (e.g. a distance that must be > 0).
    allow_inf : bool
        +inf is legal (e.g. an unlimited demand); otherwise values must be finite.
    kind : {"float", "int"}
        "int": a whole number ≥ `low` (:func:`check_count`); "float": a real number
        (:func:`check_real`).
    usual_per_tier : tuple of (str, float, float)
        Narrower usual ranges of cells of a tier, ``(tier, low, high)``, which a value
        checked for a cell of that tier must also be in (a macro power of 20 dBm is
        20 W typed as dBm). Empty: `usual` for every tier.
    """

    unit: str
    low: float
    high: float
    usual: tuple[float, float] | None
    fix: str
    low_open: bool = False
    allow_inf: bool = False
    kind: str = "float"
    usual_per_tier: tuple[tuple[str, float, float], ...] = ()

    def usual_for(self, tier: str | None = None) -> tuple[float, float] | None:
        """The usual range of a value of a cell of `tier` (None: of any cell)."""
        for name, lo, hi in self.usual_per_tier:
            if name == tier:
                return lo, hi
        return self.usual

    def interval(self) -> str:
        """The possible range as text, e.g. ``(0, 1e+06] m`` or ``[0, inf) per km²``."""
        unit = f" {self.unit}" if self.unit else ""
        close = ")" if math.isinf(self.high) and not self.allow_inf else "]"
        return f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}{close}{unit}"


def _count(minimum: int, fix: str) -> Limit:
    """The limit of a whole number ≥ `minimum`."""
    return Limit("", float(minimum), math.inf, None, fix, kind="int")


_FRACTION = Limit("", 0.0, 1.0, None, "give a fraction in [0, 1]")
_DENSITY = Limit("per km²", 0.0, math.inf, None, "give a finite density ≥ 0 per km²")
_MIN_DIST = Limit("m", 0.0, 1e5, (0.0, 1000.0), "give a distance ≥ 0 in metres")

#: Limits of every scalar radio, cell and drop parameter, by parameter name. Possible
#: ranges keep 10^(x/10) of every power and gain finite in float64, so rates never
#: become NaN; usual ranges catch values given in the wrong unit. Counts (``kind="int"``)
#: are whole numbers ≥ their `low`.
LIMITS: dict[str, Limit] = {
    "tx_power_dbm": Limit(
        "dBm", -100.0, 100.0, (5.0, 60.0),
        "give the power in dBm (46 dBm = 40 W macro, 30 dBm pico, 20 dBm femto; "
        "from watts: 10·log10(P_W) + 30)",
        # TR 36.814 Table A.2.1.1.2-3 (macro 46 / 49 dBm, pico 24 / 30 dBm, HeNB 20 dBm) and
        # the TS 36.104 classes (home BS ≤ 20 dBm, local area ≤ 24 dBm, medium range
        # ≤ 38 dBm), with room for micro cells typed as macro and powers per port.
        usual_per_tier=(("macro", 33.0, 60.0), ("pico", 15.0, 38.0), ("femto", 5.0, 27.0))),
    "antenna_gain_dbi": Limit(
        "dBi", -50.0, 50.0, (-10.0, 25.0),
        "give the boresight gain in dBi (14–18 dBi macro sector, 0–5 dBi omni; from a "
        "linear gain G: 10·log10(G))"),
    "height_m": Limit("m", 0.0, 1000.0, (0.0, 300.0),
                      "give the antenna height in metres (1.5 m femto to 25–50 m macro)"),
    "isd_m": Limit("m", 0.0, 1e6, (20.0, 50_000.0),
                   "give the inter-site distance in metres (500 m for TR 36.814 Case 1, "
                   "not 0.5 km)", low_open=True),
    "bandwidth_mhz": Limit("MHz", 0.0, 1e5, (0.1, 1000.0),
                           "give the bandwidth in MHz (LTE carriers 1.4–20 MHz; "
                           "10 MHz = 1e7 Hz)", low_open=True),
    "frequency_mhz": Limit("MHz", 0.0, 1e7, (100.0, 100_000.0),
                           "give the carrier frequency in MHz (2 GHz = 2000 MHz)",
                           low_open=True),
    "frequency_ghz": Limit("GHz", 0.0, 1000.0, (0.5, 100.0),
                           "give the carrier frequency in GHz (3.5 GHz, not 3.5e9 Hz; TR 38.901 "
                           "covers 0.5–100 GHz)", low_open=True),
    "tilt_deg": Limit("deg", -90.0, 90.0, (-20.0, 45.0),
                      "give the downtilt in degrees in [−90, 90], positive below the horizon "
                      "(6–12° macro)"),
    "user_height_m": Limit("m", 0.0, 1000.0, (1.0, 100.0),
                           "give the user's height above ground in metres (1.5 m at street "
                           "level)", low_open=True),
    "max_indoor_distance_m": Limit("m", 0.0, 1000.0, (0.0, 100.0),
                               "give the largest distance from the exterior wall in metres "
                               "(25 m in TR 38.901)"),
    "high_loss_fraction": _FRACTION,
    "subcarrier_spacing_khz": Limit("kHz", 0.0, 1000.0, (15.0, 120.0),
                                    "give the subcarrier spacing in kHz: 15 (LTE); 15, 30, 60 "
                                    "or 120 (NR)", low_open=True),
    "site_correlation": Limit("", 0.0, 1.0, None,
                              "give the correlation of shadowing between sites in [0, 1] "
                              "(0.5 in TR 36.814 Case 1)"),
    "decorrelation_m": Limit("m", 0.0, 1e5, (0.0, 1000.0),
                             "give the shadowing decorrelation distance in metres (50 m "
                             "macro, TR 36.942; 37–50 m UMa, 10–13 m UMi in TR 38.901), or 0 "
                             "for independent users"),
    "noise_figure_db": Limit("dB", 0.0, 100.0, (0.0, 20.0),
                             "give the receiver noise figure in dB (5–9 dB for a UE)"),
    "shadowing_std_db": Limit("dB", 0.0, 100.0, (0.0, 20.0),
                              "give the log-normal shadowing σ in dB (4–12 dB; 0 disables it)"),
    "wall_loss_db": Limit("dB", 0.0, 200.0, (0.0, 50.0),
                          "give the loss of one exterior wall in dB (10–20 dB)"),
    "building_radius_m": Limit("m", 0.0, 1e5, (0.0, 1000.0),
                               "give a building radius ≥ 0 in metres (15 m by default)"),
    # a path loss at a distance below 1 mm would overflow 10^(gain/10)
    "min_distance_m": Limit("m", 1e-3, 1e5, (1.0, 1000.0),
                            "give a minimum distance in metres (10 m pico, 35 m macro)"),
    "theta_3db_deg": Limit("deg", 0.0, 360.0, (10.0, 180.0),
                           "give the half-power beamwidth in degrees, not radians (70°)",
                           low_open=True),
    "max_attenuation_db": Limit("dB", 0.0, 200.0, (0.0, 60.0),
                                "give the front-to-back floor in dB (20–30 dB)"),
    "cluster_radius_m": Limit("m", 0.0, 1e5, (1.0, 1000.0),
                              "give the hotspot radius in metres (40 m in TR 36.814)"),
    "min_dist_macro_m": _MIN_DIST,
    "min_dist_pico_m": _MIN_DIST,
    "guard_m": Limit("m", 0.0, 1e6, None, "give a guard band width ≥ 0 in metres"),
    "region_buffer_m": Limit("m", 0.0, 1e6, None, "give a buffer ≥ 0 in metres"),
    "merge_distance_m": Limit("m", 0.0, 1e6, None, "give a distance ≥ 0 in metres"),
    "window_db": Limit("dB", 0.0, math.inf, None, "give a window ≥ 0 dB, or leave it out",
                       allow_inf=True),
    "density_per_km2": _DENSITY,
    "wifi_density_per_km2": _DENSITY,
    "clustered_fraction": _FRACTION,
    "indoor_fraction": _FRACTION,
    "colocated_fraction": _FRACTION,
    "adoption": _FRACTION,
    "weight": Limit("", 0.0, math.inf, None, "give a finite weight > 0 (1 for all equal)",
                    low_open=True),
    "demand_mbps": Limit("Mbit/s", 0.0, math.inf, None,
                         "give a demand > 0 in Mbit/s, or inf for full buffer",
                         low_open=True, allow_inf=True),
    "backhaul_mbps": Limit("Mbit/s", 0.0, math.inf, None,
                           "give a capacity ≥ 0 in Mbit/s, or inf for unlimited", allow_inf=True),
    "price_per_mbps": Limit("per Mbit/s", 0.0, math.inf, None, "give a finite price ≥ 0"),
    "alpha": Limit("", 0.0, 1e6, None, "give a fairness α ≥ 0 (1: proportional fair)"),
    # power optimization and solver budgets
    "energy_price_per_w": Limit("per W", 0.0, math.inf, None,
                                "give a finite price ≥ 0 in utility per W (0: energy is free)"),
    "tol": Limit("", 0.0, 1.0, (1e-8, 0.1), "give a relative tolerance in (0, 1), e.g. 1e-4",
                 low_open=True),
    "time_limit_s": Limit("s", 0.0, math.inf, None, "give a limit > 0 in seconds, or leave it out "
                          "(the work budget max_iter decides)", low_open=True),
    # spectral-efficiency maps
    "gap_db": Limit("dB", 0.0, 100.0, None, "give an SNR gap ≥ 0 dB (3 dB is common)"),
    "attenuation": Limit("", 0.0, 1.0, None, "give the factor α in (0, 1] (0.6 in TR 36.942)",
                         low_open=True),
    "min_sinr_db": Limit("dB", -100.0, 100.0, None, "give SINR_MIN in dB (−10 dB in TR 36.942)"),
    "max_bps_hz": Limit("bit/s/Hz", 0.0, math.inf, None,
                        "give a cap > 0 bit/s/Hz (4.4 in TR 36.942), or inf for none",
                        low_open=True, allow_inf=True),
    # counts
    "n_rings": _count(0, "give a whole number ≥ 0 (1 → 7, 2 → 19 sites)"),
    "sectors": _count(1, "a whole number ≥ 1"),
    "per_sector": _count(0, "give a whole number of picos per macro sector ≥ 0 (4 in TR 36.814)"),
    "max_rounds": _count(1, "give a whole number of rounds ≥ 1"),
    "n": _count(0, "give a whole number of users ≥ 0"),
    "n_candidates": _count(1, "give a whole number ≥ 1"),
    "chunk_rows": _count(1, "give a whole number of rows ≥ 1, e.g. 500_000"),
    "n_interferers": _count(1, "give a whole number of cells ≥ n_candidates"),
    "max_iter": _count(1, "give a whole number of iterations ≥ 1, or leave it out (auto)"),
    "panel_rows": _count(1, "give the number of antenna element rows ≥ 1 (10 in TR 36.873)"),
    "panel_columns": _count(1, "give the number of antenna element columns ≥ 1"),
    "mcc": _count(0, "give mobile country codes ≥ 0"),
    "mnc": _count(0, "give mobile network codes ≥ 0"),
    # deployable settings (the [deploy] section)
    "training_drops": _count(1, "give the drops the offsets are fitted on, a whole number ≥ 1 (the "
                                "run's drop and more of the same cells; 16 by default)"),
    "held_out_drops": _count(0, "give the drops the configuration is judged on, a whole number ≥ 0 "
                                "(5 by default; 0: none)"),
    "penalty_per_db": Limit("per dB", 0.0, math.inf, (0.0, 1e-2),
                            "give the rate-equivalent gain each dB of a cell's offset away from "
                            "its tier's bias must buy, ≥ 0 (1e-4 by default; divided by √T on T "
                            "training drops)"),
    "subframes": _count(1, "give the schedule's period in subframes, a whole number ≥ 1 (40: the "
                           "FDD almost-blank-subframe bitmap of TS 36.423)"),
    "sleep_share_off": Limit("", 0.0, 1.0, None,
                             "give the share of the subframes a cell is off at or above which it "
                             "is listed to sleep, in [0, 1]"),
    # coverage maps
    "resolution_m": Limit("m", 0.0, 1e6, (1.0, 10_000.0),
                          "give the pixel size of the coverage maps in metres (left out: 25 m, "
                          "finer for a small area; a larger area is mapped coarser, see "
                          "max_pixels)", low_open=True),
    "max_pixels": _count(1, "give a whole number of pixels ≥ 1 per coverage raster (1_000_000: "
                            "1000 × 1000)"),
}

#: Limits of the scenario keys given per tier (``[radio]``: a number for every tier, or a
#: table such as ``{macro = 8, pico = 10}``), checked by :func:`check_per_tier`.
TIER_LIMITS: dict[str, Limit] = {
    "shadowing_std_db": Limit("dB", 0.0, 30.0, None, "give a standard deviation in [0, 30] dB"),
    "pathloss_exponent": Limit("", 0.0, 10.0, None, "give an exponent in (0, 10], e.g. 3.5",
                               low_open=True),
    "pathloss_reference_db": Limit("dB", 0.0, 200.0, None, "give a loss in [0, 200] dB at 1 m"),
    "min_distance_m": Limit("m", 0.0, 1e5, None,
                            "give the smallest distance from a cell of the tier at which users "
                            "are dropped, in metres (35 m macro, 10 m pico in TR 36.814)"),
}


@dataclasses.dataclass(frozen=True)
class Choice:
    """A parameter whose value is a name from a fixed set (see :func:`check_choice`).

    Attributes
    ----------
    names : tuple of str, or str
        The names, or ``"module:attribute"`` of the tuple of names (a mapping gives its
        keys, a set its members, sorted), imported when first read.
    noun : str or None
        The names are of this kind (e.g. "tiers"): a message lists the unknown ones and
        the valid ones as "use tiers from [...]". None: "use one of [...]".
    many : bool
        The parameter may give several names (a string or an array of strings).
    """

    names: tuple[str, ...] | str
    noun: str | None = None
    many: bool = False

    def values(self) -> tuple[str, ...]:
        """The valid names."""
        if not isinstance(self.names, str):
            return self.names
        module, _, attribute = self.names.partition(":")
        names = getattr(importlib.import_module(module), attribute)
        return tuple(sorted(names)) if isinstance(names, dict | set | frozenset) else tuple(names)


_TIER = Choice("cellopt.network:TIERS", noun="tiers")

#: Parameters whose values are names, by parameter name.
CHOICES: dict[str, Choice] = {
    "tier": _TIER,
    "cluster_tier": _TIER,
    "colocated_tier": _TIER,
    "indoor_tiers": dataclasses.replace(_TIER, many=True),
    "owner": Choice("cellopt.network:OWNERS"),
    "interference": Choice(("full", "load_coupled")),
    "spectral_efficiency": Choice("cellopt.radio.spectral:SPECTRAL_EFFICIENCY"),
    "propagation": Choice("cellopt.radio.tr38901:SCENARIOS", many=True),
    "los": Choice("cellopt.radio.propagation:LOS_STATES"),
    "antenna": Choice("cellopt.radio.model:ANTENNAS"),
    "rat": Choice(("lte", "nr")),
    "master_method": Choice("cellopt.solvers:PATTERN_METHODS"),
    "sector_orientation": Choice("cellopt.topology.hexgrid:SECTOR_ORIENTATIONS"),
}


#: Largest count: counts index int64 arrays.
_INT64_MAX = 2**63 - 1


def shown(value: Any) -> str:
    """`value` for a message: its repr, shortened (a 400-digit integer stays readable)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}...({len(text)} characters)"


def is_real(value: Any) -> bool:
    """A real number (Python or numpy), not a boolean."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def is_integer(value: Any) -> bool:
    """An integer (Python or numpy), not a boolean."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_real(value: Any, name: str, kind: str | None = None, *, warn: bool = True,
               stacklevel: int = 3, tier: str | None = None) -> float:
    """`value` as a float, after checking it against ``LIMITS[kind]``.

    Parameters
    ----------
    value : any
        The parameter as given.
    name : str
        How messages name it, e.g. ``"isd_m"`` or ``"RadioModel.noise_figure_db['macro']"``.
    kind : str, optional
        Key of :data:`LIMITS`; default `name`.
    warn : bool
        Warn (:class:`UserWarning`) outside the usual range.
    stacklevel : int
        Of the warning: 3 points at the caller of the function that calls this one.
    tier : str, optional
        The value is that of cells of this tier: warn outside the tier's usual range
        (:meth:`Limit.usual_for`), where the limit has one.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        Not a real number (strings, booleans, None), NaN, infinite where not allowed, or
        outside the possible range; the message names the parameter and the fix.
    """
    limit = LIMITS[name if kind is None else kind]
    unit = f" {limit.unit}" if limit.unit else ""
    if not is_real(value):
        raise ValidationError(f"{name}={shown(value)} is a {type(value).__name__}, not a number; "
                              f"fix: {limit.fix}")
    try:
        v = float(value)
    except OverflowError:  # an integer beyond the float range, e.g. 10**400
        raise ValidationError(f"{name}={shown(value)}{unit} is beyond the floating-point range; "
                              f"fix: {limit.fix}") from None
    if math.isnan(v) or (math.isinf(v) and not (limit.allow_inf and v > 0)):
        raise ValidationError(f"{name}={v}{unit} is not finite; fix: {limit.fix}")
    if v < limit.low or (limit.low_open and v == limit.low) or v > limit.high:
        raise ValidationError(f"{name}={v:.6g}{unit} is outside the possible range "
                              f"{limit.interval()}; fix: {limit.fix}")
    usual = limit.usual_for(tier)
    if warn and usual is not None and not usual[0] <= v <= usual[1]:
        lo, hi = usual
        of = f" of {tier} cells" if usual != limit.usual else ""
        warnings.warn(f"{name}={v:.6g}{unit} is outside the usual range [{lo:g}, {hi:g}]{unit}"
                      f"{of} (legal, but check the unit): {limit.fix}", UserWarning,
                      stacklevel=stacklevel)
    return v


def outside_usual(values: np.ndarray, kind: str, tiers: np.ndarray | None = None) -> np.ndarray:
    """Which values are outside the usual range of ``LIMITS[kind]`` (:func:`check_real`'s
    warning, for a column of values rather than one).

    Parameters
    ----------
    values : array_like of float, shape (n,)
        The values; NaN ones (not given) are never outside.
    kind : str
        Key of :data:`LIMITS`.
    tiers : array_like of str, shape (n,), optional
        The tier of each value's cell: the tier's usual range where the limit has one
        (:meth:`Limit.usual_for`).

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    limit = LIMITS[kind]
    values = np.asarray(values, float)
    low = np.full(values.shape, -math.inf)
    high = np.full(values.shape, math.inf)
    if limit.usual is not None:
        low[:], high[:] = limit.usual
    if tiers is not None:
        tiers = np.asarray(tiers, object)
        for tier, lo, hi in limit.usual_per_tier:
            mine = tiers == tier
            low[mine], high[mine] = lo, hi
    with np.errstate(invalid="ignore"):
        return (values < low) | (values > high)


def check_count(value: Any, name: str, *, fix: str | None = None, minimum: int | None = None) -> int:
    """`value` as an int ≥ `minimum`: a Python or numpy integer that fits an int64.

    Parameters
    ----------
    value : any
        The count as given.
    name : str
        How messages name it.
    fix : str, optional
        How to give a good value; default that of the count ``LIMITS[name]``, whose
        `low` is then also the default `minimum`.
    minimum : int, optional
        Smallest legal count; default 0 (or ``LIMITS[name].low``, see `fix`).

    Returns
    -------
    int

    Raises
    ------
    ValidationError
        Booleans, floats (whole ones too: ``3.0`` is refused, with the hint ``3``),
        strings, None, values below `minimum` and values beyond int64.
    """
    if fix is None:
        fix = LIMITS[name].fix
        minimum = int(LIMITS[name].low) if minimum is None else minimum
    minimum = 0 if minimum is None else minimum
    if isinstance(value, (bool, np.bool_)):
        raise ValidationError(f"{name}={value!r} is a boolean, not a count; fix: {fix}")
    if not is_integer(value):
        if not is_real(value):
            raise ValidationError(f"{name}={shown(value)} is a {type(value).__name__}, not a "
                                  f"whole number; fix: {fix}")
        try:
            whole = math.isfinite(float(value)) and float(value).is_integer()
        except OverflowError:
            whole = False
        what = f"a {type(value).__name__}, not an int" if whole else "not a whole number"
        hint = f" (e.g. {name}={int(value)})" if whole and abs(float(value)) < 2**63 else ""
        raise ValidationError(f"{name}={shown(value)} is {what}; fix: {fix}{hint}")
    count = int(value)
    if count < minimum:
        raise ValidationError(f"{name}={count} is below {minimum}; fix: {fix}")
    if count > _INT64_MAX:
        raise ValidationError(f"{name}={shown(count)} is beyond any count cellopt can index "
                              f"(2**63 − 1); fix: {fix}")
    return count


def check_per_tier(value: float | dict[str, float], name: str) -> None:
    """Check a per-tier scenario value against ``TIER_LIMITS[name]``, tier by tier.

    Parameters
    ----------
    value : float or dict of str to float
        One number for every tier, or a number per tier.
    name : str
        Key of :data:`TIER_LIMITS`.

    Raises
    ------
    ValidationError
        A value that is not finite or is outside the limit, naming the tier.
    """
    limit = TIER_LIMITS[name]
    for tier, v in (value.items() if isinstance(value, dict) else [("every tier", value)]):
        if not (math.isfinite(v) and limit.low <= v <= limit.high) or (limit.low_open
                                                                      and v == limit.low):
            raise ValidationError(f"{name} of {tier} is {v}; fix: {limit.fix}")


def check_choice(value: str | list[str], name: str) -> None:
    """Check a name (or, for a :class:`Choice` with a noun, names) against ``CHOICES[name]``.

    Raises
    ------
    ValidationError
        An unknown name; the message lists the valid ones.
    """
    choice = CHOICES[name]
    valid = choice.values()
    if choice.noun is None:
        if value not in valid:
            raise ValidationError(f"{name}={value!r}; fix: use one of {list(valid)}")
        return
    unknown = [t for t in ([value] if isinstance(value, str) else value) if t not in valid]
    if unknown:
        raise ValidationError(f"{name} has unknown {choice.noun} {unknown}; fix: use "
                              f"{choice.noun} from {list(valid)}")


def kind_of(name: str) -> str | None:
    """The type of a catalogued parameter: "float", "int" or "str"; None if not catalogued."""
    if name in LIMITS:
        return LIMITS[name].kind
    if name in TIER_LIMITS:
        return "float"
    return "str" if name in CHOICES else None


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def parameter_table() -> str:
    """The catalogue as a Markdown table: name, type, unit, possible range, usual range, fix.

    Returns
    -------
    str
        One row per parameter of :data:`LIMITS` (by name), then the per-tier scenario keys
        of :data:`TIER_LIMITS` and the names of :data:`CHOICES`; ends with a newline.
    """
    rows = ["| name | type | unit | possible | usual | fix |", "|---|---|---|---|---|---|"]
    for name, limit in sorted(LIMITS.items()):
        unit = limit.unit
        possible = limit.interval().removesuffix(f" {unit}") if unit else limit.interval()
        usual = "" if limit.usual is None else f"[{limit.usual[0]:g}, {limit.usual[1]:g}]"
        usual += "".join(f"; {tier} [{lo:g}, {hi:g}]" for tier, lo, hi in limit.usual_per_tier)
        kind = "whole number" if limit.kind == "int" else "number"
        rows.append(f"| `{name}` | {kind} | {unit} | {possible} | {usual} | {_cell(limit.fix)} |")
    for name, limit in sorted(TIER_LIMITS.items()):
        possible = limit.interval().removesuffix(f" {limit.unit}") if limit.unit else limit.interval()
        rows.append(f"| `{name}` (scenario, per tier) | number or table per tier | {limit.unit} "
                    f"| {possible} |  | {_cell(limit.fix)} |")
    for name, choice in sorted(CHOICES.items()):
        kind = "name or names" if choice.many else "name"
        names = ", ".join(f"`{v}`" for v in choice.values())
        rows.append(f"| `{name}` | {kind} |  | one of {names} |  | use one of them |")
    return "\n".join(rows) + "\n"
