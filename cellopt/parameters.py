"""The catalogue of named quantities: each parameter's, scenario key's and column's unit, type,
possible and usual range, and fix.

One type, :class:`Quantity`, declares them all: the scalar parameters (:data:`LIMITS`),
the scenario keys given per tier (:data:`TIER_LIMITS`), the parameters whose values are
names (:data:`CHOICES`), and, beside the modules they belong to, the input columns of the
network's tables (:data:`cellopt.network.CELL_COLUMNS`, ``USER_COLUMNS``,
``ANTENNA_COLUMNS``) and the result columns of a drop's tables
(:data:`cellopt.drop.USER_RESULT_COLUMNS`, ``CELL_RESULT_COLUMNS``). The functions of
:mod:`cellopt.checks` check values against it (:func:`~cellopt.checks.check_real`,
:func:`~cellopt.checks.check_count`, :func:`~cellopt.checks.check_per_tier`,
:func:`~cellopt.checks.check_choice`), so that a value is refused, or warned about, with
the same words wherever it enters. The names of a choice are registered by the module
that defines them (:func:`register_choice`): this layer imports none above it.
:func:`parameter_table` renders the catalogue as the Markdown table of docs/scenarios.md
("Parameters").
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping
from typing import Any

__all__ = [
    "CHOICES",
    "LIMITS",
    "TIER_LIMITS",
    "Quantity",
    "kind_of",
    "parameter_table",
    "register_choice",
]


@dataclasses.dataclass(frozen=True)
class Quantity:
    """One named quantity: a parameter, a scenario key, an input or a result column.

    A result column gives its name, unit and description; a parameter or an input column
    also its kind, range and fix, which its checks read.

    Attributes
    ----------
    name : str
        The parameter's, key's or column's name (its unit is in the name where it has one).
    unit : str
        Unit shown in messages and tables ("" for ratios and fractions); for a result
        column without a unit, the kind of value (e.g. "share", "bool").
    description : str
        What the value is, including what it holds when there is nothing to report ("":
        the name says it).
    kind : {"float", "int", "str", "bool", "id"}
        "int": a whole number ≥ `low` (:func:`~cellopt.checks.check_count`); "float": a
        real number (:func:`~cellopt.checks.check_real`); "str": a name from `choices`
        (:func:`~cellopt.checks.check_choice`); "bool" and "id" (any label): columns.
    low, high : float
        Possible range; a value outside it raises a :class:`~cellopt.ValidationError`.
    usual : (float, float) or None
        Usual range; a legal value outside it warns (often a unit slip). None: no warning.
    fix : str
        How to give a good value, appended to errors and warnings.
    low_open : bool
        `low` itself is impossible (e.g. a distance that must be > 0).
    allow_inf : bool
        +inf is legal (e.g. an unlimited demand); otherwise values must be finite.
    usual_per_tier : tuple of (str, float, float)
        Narrower usual ranges of cells of a tier, ``(tier, low, high)``, which a value
        checked for a cell of that tier must also be in (a macro power of 20 dBm is
        20 W typed as dBm). Empty: `usual` for every tier.
    default : any
        The value of a row that lacks the column (the 3-D antenna columns); None: none.
    choices : tuple of str, or str
        ("str") The valid names, or the name under which the module that defines them
        registers them (:func:`register_choice`), read when used.
    noun : str or None
        ("str") The names are of this kind (e.g. "tiers"): a message lists the unknown
        ones and the valid ones as "use tiers from [...]". None: "use one of [...]".
    many : bool
        ("str") The parameter may give several names (a string or an array of strings).
    """

    name: str
    unit: str = ""
    description: str = ""
    kind: str = "float"
    low: float = -math.inf
    high: float = math.inf
    usual: tuple[float, float] | None = None
    fix: str = ""
    low_open: bool = False
    allow_inf: bool = False
    usual_per_tier: tuple[tuple[str, float, float], ...] = ()
    default: Any = None
    choices: tuple[str, ...] | str = ()
    noun: str | None = None
    many: bool = False

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

    def names(self) -> tuple[str, ...]:
        """The valid names of a choice (a mapping gives its keys, a set its members, sorted).

        Raises
        ------
        LookupError
            For names registered by a module (:func:`register_choice`) that is not
            imported yet.
        """
        names = self.choices
        if isinstance(names, str):
            if names not in _REGISTERED:
                raise LookupError(f"the names of {self.name!r} are registered by the module "
                                  f"that defines them (register_choice({names!r}, ...)), which "
                                  "is not imported; fix: import cellopt.study first")
            names = _REGISTERED[names]
        return tuple(sorted(names)) if isinstance(names, Mapping | set | frozenset) else tuple(names)


def _by_name(*quantities: Quantity) -> dict[str, Quantity]:
    return {q.name: q for q in quantities}


def _limit(name: str, unit: str, low: float, high: float, usual: tuple[float, float] | None,
           fix: str, **options: Any) -> Quantity:
    """A real parameter: its possible and usual range and fix."""
    return Quantity(name, unit, low=low, high=high, usual=usual, fix=fix, **options)


def _count(name: str, minimum: int, fix: str) -> Quantity:
    """A whole number ≥ `minimum`."""
    return Quantity(name, kind="int", low=float(minimum), fix=fix)


def _fraction(name: str) -> Quantity:
    return _limit(name, "", 0.0, 1.0, None, "give a fraction in [0, 1]")


def _density(name: str) -> Quantity:
    return _limit(name, "per km²", 0.0, math.inf, None, "give a finite density ≥ 0 per km²")


def _min_dist(name: str) -> Quantity:
    return _limit(name, "m", 0.0, 1e5, (0.0, 1000.0), "give a distance ≥ 0 in metres")


#: Limits of every scalar radio, cell and drop parameter, by parameter name. Possible
#: ranges keep 10^(x/10) of every power and gain finite in float64, so rates never
#: become NaN; usual ranges catch values given in the wrong unit. Counts (``kind="int"``)
#: are whole numbers ≥ their `low`.
LIMITS: dict[str, Quantity] = _by_name(
    _limit(
        "tx_power_dbm", "dBm", -100.0, 100.0, (5.0, 60.0),
        "give the power in dBm (46 dBm = 40 W macro, 30 dBm pico, 20 dBm femto; "
        "from watts: 10·log10(P_W) + 30)",
        # TR 36.814 Table A.2.1.1.2-3 (macro 46 / 49 dBm, pico 24 / 30 dBm, HeNB 20 dBm) and
        # the TS 36.104 classes (home BS ≤ 20 dBm, local area ≤ 24 dBm, medium range
        # ≤ 38 dBm), with room for micro cells typed as macro and powers per port.
        usual_per_tier=(("macro", 33.0, 60.0), ("pico", 15.0, 38.0), ("femto", 5.0, 27.0))),
    _limit(
        "antenna_gain_dbi", "dBi", -50.0, 50.0, (-10.0, 25.0),
        "give the boresight gain in dBi (14–18 dBi macro sector, 0–5 dBi omni; from a "
        "linear gain G: 10·log10(G))"),
    _limit("height_m", "m", 0.0, 1000.0, (0.0, 300.0),
        "give the antenna height in metres (1.5 m femto to 25–50 m macro)"),
    _limit("isd_m", "m", 0.0, 1e6, (20.0, 50_000.0),
        "give the inter-site distance in metres (500 m for TR 36.814 Case 1, "
        "not 0.5 km)", low_open=True),
    _limit("bandwidth_mhz", "MHz", 0.0, 1e5, (0.1, 1000.0),
        "give the bandwidth in MHz (LTE carriers 1.4–20 MHz; "
        "10 MHz = 1e7 Hz)", low_open=True),
    _limit("frequency_mhz", "MHz", 0.0, 1e7, (100.0, 100_000.0),
        "give the carrier frequency in MHz (2 GHz = 2000 MHz)",
        low_open=True),
    _limit("frequency_ghz", "GHz", 0.0, 1000.0, (0.5, 100.0),
        "give the carrier frequency in GHz (3.5 GHz, not 3.5e9 Hz; TR 38.901 "
        "covers 0.5–100 GHz)", low_open=True),
    _limit("tilt_deg", "deg", -90.0, 90.0, (-20.0, 45.0),
        "give the downtilt in degrees in [−90, 90], positive below the horizon "
        "(6–12° macro)"),
    _limit("user_height_m", "m", 0.0, 1000.0, (1.0, 100.0),
        "give the user's height above ground in metres (1.5 m at street "
        "level)", low_open=True),
    _limit("max_indoor_distance_m", "m", 0.0, 1000.0, (0.0, 100.0),
        "give the largest distance from the exterior wall in metres "
        "(25 m in TR 38.901)"),
    _fraction("high_loss_fraction"),
    _limit("subcarrier_spacing_khz", "kHz", 0.0, 1000.0, (15.0, 120.0),
        "give the subcarrier spacing in kHz: 15 (LTE); 15, 30, 60 "
        "or 120 (NR)", low_open=True),
    _limit("site_correlation", "", 0.0, 1.0, None,
        "give the correlation of shadowing between sites in [0, 1] "
        "(0.5 in TR 36.814 Case 1)"),
    _limit("decorrelation_m", "m", 0.0, 1e5, (0.0, 1000.0),
        "give the shadowing decorrelation distance in metres (50 m "
        "macro, TR 36.942; 37–50 m UMa, 10–13 m UMi in TR 38.901), or 0 "
        "for independent users"),
    _limit("noise_figure_db", "dB", 0.0, 100.0, (0.0, 20.0),
        "give the receiver noise figure in dB (5–9 dB for a UE)"),
    _limit("shadowing_std_db", "dB", 0.0, 100.0, (0.0, 20.0),
        "give the log-normal shadowing σ in dB (4–12 dB; 0 disables it)"),
    _limit("wall_loss_db", "dB", 0.0, 200.0, (0.0, 50.0),
        "give the loss of one exterior wall in dB (10–20 dB)"),
    _limit("building_radius_m", "m", 0.0, 1e5, (0.0, 1000.0),
        "give a building radius ≥ 0 in metres (15 m by default)"),
    # a path loss at a distance below 1 mm would overflow 10^(gain/10)
    _limit("min_distance_m", "m", 1e-3, 1e5, (1.0, 1000.0),
        "give a minimum distance in metres (10 m pico, 35 m macro)"),
    _limit("theta_3db_deg", "deg", 0.0, 360.0, (10.0, 180.0),
        "give the half-power beamwidth in degrees, not radians (70°)",
        low_open=True),
    _limit("max_attenuation_db", "dB", 0.0, 200.0, (0.0, 60.0),
        "give the front-to-back floor in dB (20–30 dB)"),
    _limit("cluster_radius_m", "m", 0.0, 1e5, (1.0, 1000.0),
        "give the hotspot radius in metres (40 m in TR 36.814)"),
    _min_dist("min_dist_macro_m"),
    _min_dist("min_dist_pico_m"),
    _limit("guard_m", "m", 0.0, 1e6, None, "give a guard band width ≥ 0 in metres"),
    _limit("region_buffer_m", "m", 0.0, 1e6, None, "give a buffer ≥ 0 in metres"),
    _limit("merge_distance_m", "m", 0.0, 1e6, None, "give a distance ≥ 0 in metres"),
    _limit("window_db", "dB", 0.0, math.inf, None, "give a window ≥ 0 dB, or leave it out",
        allow_inf=True),
    _density("density_per_km2"),
    _density("wifi_density_per_km2"),
    _fraction("clustered_fraction"),
    _fraction("indoor_fraction"),
    _fraction("colocated_fraction"),
    _fraction("adoption"),
    _limit("weight", "", 0.0, math.inf, None, "give a finite weight > 0 (1 for all equal)",
        low_open=True),
    _limit("demand_mbps", "Mbit/s", 0.0, math.inf, None,
        "give a demand > 0 in Mbit/s, or inf for full buffer",
        low_open=True, allow_inf=True),
    _limit("backhaul_mbps", "Mbit/s", 0.0, math.inf, None,
        "give a capacity ≥ 0 in Mbit/s, or inf for unlimited", allow_inf=True),
    _limit("price_per_mbps", "per Mbit/s", 0.0, math.inf, None, "give a finite price ≥ 0"),
    _limit("alpha", "", 0.0, 1e6, None, "give a fairness α ≥ 0 (1: proportional fair)"),
    # power optimization and solver budgets
    _limit("energy_price_per_w", "per W", 0.0, math.inf, None,
        "give a finite price ≥ 0 in utility per W (0: energy is free)"),
    _limit("tol", "", 0.0, 1.0, (1e-8, 0.1), "give a relative tolerance in (0, 1), e.g. 1e-4",
        low_open=True),
    _limit("time_limit_s", "s", 0.0, math.inf, None, "give a limit > 0 in seconds, or leave it out "
        "(the work budget max_iter decides)", low_open=True),
    # spectral-efficiency maps
    _limit("gap_db", "dB", 0.0, 100.0, None, "give an SNR gap ≥ 0 dB (3 dB is common)"),
    _limit("attenuation", "", 0.0, 1.0, None, "give the factor α in (0, 1] (0.6 in TR 36.942)",
        low_open=True),
    _limit("min_sinr_db", "dB", -100.0, 100.0, None, "give SINR_MIN in dB (−10 dB in TR 36.942)"),
    _limit("max_bps_hz", "bit/s/Hz", 0.0, math.inf, None,
        "give a cap > 0 bit/s/Hz (4.4 in TR 36.942), or inf for none",
        low_open=True, allow_inf=True),
    # counts
    _count("n_rings", 0, "give a whole number ≥ 0 (1 → 7, 2 → 19 sites)"),
    _count("sectors", 1, "a whole number ≥ 1"),
    _count("per_sector", 0, "give a whole number of picos per macro sector ≥ 0 (4 in TR 36.814)"),
    _count("max_rounds", 1, "give a whole number of rounds ≥ 1"),
    _count("n", 0, "give a whole number of users ≥ 0"),
    _count("n_candidates", 1, "give a whole number ≥ 1"),
    _count("chunk_rows", 1, "give a whole number of rows ≥ 1, e.g. 500_000"),
    _count("n_interferers", 1, "give a whole number of cells ≥ n_candidates"),
    _count("max_iter", 1, "give a whole number of iterations ≥ 1, or leave it out (auto)"),
    _count("panel_rows", 1, "give the number of antenna element rows ≥ 1 (10 in TR 36.873)"),
    _count("panel_columns", 1, "give the number of antenna element columns ≥ 1"),
    _count("mcc", 0, "give mobile country codes ≥ 0"),
    _count("mnc", 0, "give mobile network codes ≥ 0"),
    # deployable settings (the [deploy] section)
    _count("training_drops", 1, "give the drops the offsets are fitted on, a whole number ≥ 1 (the "
        "run's drop and more of the same cells; 16 by default)"),
    _count("held_out_drops", 0, "give the drops the configuration is judged on, a whole number ≥ 0 "
        "(5 by default; 0: none)"),
    _limit("penalty_per_db", "per dB", 0.0, math.inf, (0.0, 1e-2),
        "give the rate-equivalent gain each dB of a cell's offset away from "
        "its tier's bias must buy, ≥ 0 (1e-4 by default; divided by √T on T "
        "training drops)"),
    _count("subframes", 1, "give the schedule's period in subframes, a whole number ≥ 1 (40: the "
        "FDD almost-blank-subframe bitmap of TS 36.423)"),
    _limit("sleep_share_off", "", 0.0, 1.0, None,
        "give the share of the subframes a cell is off at or above which it "
        "is listed to sleep, in [0, 1]"),
    # coverage maps
    _limit("resolution_m", "m", 0.0, 1e6, (1.0, 10_000.0),
        "give the pixel size of the coverage maps in metres (left out: 25 m, "
        "finer for a small area; a larger area is mapped coarser, see "
        "max_pixels)", low_open=True),
    _count("max_pixels", 1, "give a whole number of pixels ≥ 1 per coverage raster (1_000_000: "
        "1000 × 1000)"),
)

#: Limits of the scenario keys given per tier (``[radio]``: a number for every tier, or a
#: table such as ``{macro = 8, pico = 10}``), checked by :func:`~cellopt.checks.check_per_tier`.
TIER_LIMITS: dict[str, Quantity] = _by_name(
    _limit("shadowing_std_db", "dB", 0.0, 30.0, None, "give a standard deviation in [0, 30] dB"),
    _limit("pathloss_exponent", "", 0.0, 10.0, None, "give an exponent in (0, 10], e.g. 3.5",
        low_open=True),
    _limit("pathloss_reference_db", "dB", 0.0, 200.0, None, "give a loss in [0, 200] dB at 1 m"),
    _limit("min_distance_m", "m", 0.0, 1e5, None,
        "give the smallest distance from a cell of the tier at which users "
        "are dropped, in metres (35 m macro, 10 m pico in TR 36.814)"),
)

#: The names of each choice whose module registered them (:func:`register_choice`).
_REGISTERED: dict[str, Collection[str]] = {}


def register_choice(name: str, names: Collection[str]) -> None:
    """Register the valid names of the choice `name`, from the module that defines them.

    Parameters
    ----------
    name : str
        The choice, as the :data:`CHOICES` entries that take these names give it in
        :attr:`Quantity.choices` (e.g. ``"tier"``).
    names : collection of str
        The names; a mapping gives its keys, a set its members (sorted). Read when
        used, so that names added later (registered solver methods) count.
    """
    _REGISTERED[name] = names


def _choice(name: str, choices: tuple[str, ...] | str, **options: Any) -> Quantity:
    """A parameter whose value is a name from `choices`."""
    return Quantity(name, kind="str", choices=choices, fix="use one of them", **options)


#: Parameters whose values are names, by parameter name (:func:`~cellopt.checks.check_choice`).
CHOICES: dict[str, Quantity] = _by_name(
    _choice("tier", "tier", noun="tiers"),
    _choice("cluster_tier", "tier", noun="tiers"),
    _choice("colocated_tier", "tier", noun="tiers"),
    _choice("indoor_tiers", "tier", noun="tiers", many=True),
    _choice("owner", "owner"),
    _choice("interference", ("full", "load_coupled")),
    _choice("spectral_efficiency", "spectral_efficiency"),
    _choice("propagation", "propagation", many=True),
    _choice("los", "los"),
    _choice("antenna", "antenna"),
    _choice("rat", "rat"),
    _choice("master_method", "master_method"),
    _choice("sector_orientation", "sector_orientation"),
)


def kind_of(name: str) -> str | None:
    """The type of a catalogued parameter: "float", "int" or "str"; None if not catalogued."""
    for table in (LIMITS, TIER_LIMITS, CHOICES):
        if name in table:
            return table[name].kind
    return None


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _possible(quantity: Quantity) -> str:
    """The possible range without its unit (the table has a column for it)."""
    unit = quantity.unit
    return quantity.interval().removesuffix(f" {unit}") if unit else quantity.interval()


def parameter_table() -> str:
    """The catalogue as a Markdown table: name, type, unit, possible range, usual range, fix.

    The names of the choices are those their modules registered: every one is, once
    :mod:`cellopt.study` is imported.

    Returns
    -------
    str
        One row per parameter of :data:`LIMITS` (by name), then the per-tier scenario keys
        of :data:`TIER_LIMITS` and the names of :data:`CHOICES`; ends with a newline.
    """
    rows = ["| name | type | unit | possible | usual | fix |", "|---|---|---|---|---|---|"]
    for name, limit in sorted(LIMITS.items()):
        usual = "" if limit.usual is None else f"[{limit.usual[0]:g}, {limit.usual[1]:g}]"
        usual += "".join(f"; {tier} [{lo:g}, {hi:g}]" for tier, lo, hi in limit.usual_per_tier)
        kind = "whole number" if limit.kind == "int" else "number"
        rows.append(f"| `{name}` | {kind} | {limit.unit} | {_possible(limit)} | {usual} "
                    f"| {_cell(limit.fix)} |")
    for name, limit in sorted(TIER_LIMITS.items()):
        rows.append(f"| `{name}` (scenario, per tier) | number or table per tier | {limit.unit} "
                    f"| {_possible(limit)} |  | {_cell(limit.fix)} |")
    for name, choice in sorted(CHOICES.items()):
        kind = "name or names" if choice.many else "name"
        names = ", ".join(f"`{v}`" for v in choice.names())
        rows.append(f"| `{name}` | {kind} |  | one of {names} |  | {choice.fix} |")
    return "\n".join(rows) + "\n"
