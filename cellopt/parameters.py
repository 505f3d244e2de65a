"""The parameter catalogue: every scalar parameter's unit, possible and usual range, and fix.

Builders, the radio model, the solvers and the scenario schema check what they are given
against :data:`LIMITS` with :func:`check_real` (numbers) and :func:`check_count` (whole
numbers), so that a value is refused, or warned about, with the same words wherever it
enters. docs/conventions.md renders its table of parameters from this catalogue.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from typing import Any

import numpy as np

from cellopt.errors import ValidationError

__all__ = ["LIMITS", "Limit", "check_count", "check_real", "is_integer", "is_real"]


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
    """

    unit: str
    low: float
    high: float
    usual: tuple[float, float] | None
    fix: str
    low_open: bool = False
    allow_inf: bool = False

    def interval(self) -> str:
        """The possible range as text, e.g. ``(0, 1e+06] m`` or ``[0, inf) per km²``."""
        unit = f" {self.unit}" if self.unit else ""
        close = ")" if math.isinf(self.high) and not self.allow_inf else "]"
        return f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}{close}{unit}"


_FRACTION = Limit("", 0.0, 1.0, None, "give a fraction in [0, 1]")
_DENSITY = Limit("per km²", 0.0, math.inf, None, "give a finite density ≥ 0 per km²")
_MIN_DIST = Limit("m", 0.0, 1e5, (0.0, 1000.0), "give a distance ≥ 0 in metres")

#: Limits of every scalar radio, cell and drop parameter, by parameter name. Possible
#: ranges keep 10^(x/10) of every power and gain finite in float64, so rates never
#: become NaN; usual ranges catch values given in the wrong unit.
LIMITS: dict[str, Limit] = {
    "tx_power_dbm": Limit(
        "dBm", -100.0, 100.0, (5.0, 60.0),
        "give the power in dBm (46 dBm = 40 W macro, 30 dBm pico, 20 dBm femto; "
        "from watts: 10·log10(P_W) + 30)"),
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
    # spectral-efficiency maps
    "gap_db": Limit("dB", 0.0, 100.0, None, "give an SNR gap ≥ 0 dB (3 dB is common)"),
    "attenuation": Limit("", 0.0, 1.0, None, "give the factor α in (0, 1] (0.6 in TR 36.942)",
                         low_open=True),
    "min_sinr_db": Limit("dB", -100.0, 100.0, None, "give SINR_MIN in dB (−10 dB in TR 36.942)"),
    "max_bps_hz": Limit("bit/s/Hz", 0.0, math.inf, None,
                        "give a cap > 0 bit/s/Hz (4.4 in TR 36.942), or inf for none",
                        low_open=True, allow_inf=True),
}


def is_real(value: Any) -> bool:
    """A real number (Python or numpy), not a boolean."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def is_integer(value: Any) -> bool:
    """An integer (Python or numpy), not a boolean."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_real(value: Any, name: str, kind: str | None = None, *, warn: bool = True,
               stacklevel: int = 3) -> float:
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
        raise ValidationError(f"{name}={value!r} is a {type(value).__name__}, not a number; "
                              f"fix: {limit.fix}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not (limit.allow_inf and v > 0)):
        raise ValidationError(f"{name}={v}{unit} is not finite; fix: {limit.fix}")
    if v < limit.low or (limit.low_open and v == limit.low) or v > limit.high:
        raise ValidationError(f"{name}={v:.6g}{unit} is outside the possible range "
                              f"{limit.interval()}; fix: {limit.fix}")
    if warn and limit.usual is not None and not limit.usual[0] <= v <= limit.usual[1]:
        lo, hi = limit.usual
        warnings.warn(f"{name}={v:.6g}{unit} is outside the usual range [{lo:g}, {hi:g}]{unit} "
                      f"(legal, but check the unit): {limit.fix}", UserWarning, stacklevel=stacklevel)
    return v


def check_count(value: Any, name: str, *, fix: str, minimum: int = 0) -> int:
    """`value` as an int ≥ `minimum`: an integer, or a float with a whole value.

    Raises
    ------
    ValidationError
        Booleans, strings, None, fractions, NaN or inf, and values below `minimum`.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValidationError(f"{name}={value!r} is a boolean, not a count; fix: {fix}")
    if not is_real(value):
        raise ValidationError(f"{name}={value!r} is a {type(value).__name__}, not a whole "
                              f"number; fix: {fix}")
    if isinstance(value, (float, np.floating)) and not (math.isfinite(value)
                                                         and float(value).is_integer()):
        raise ValidationError(f"{name}={value!r} is not a whole number; fix: {fix}")
    count = int(value)
    if count < minimum:
        raise ValidationError(f"{name}={count} is below {minimum}; fix: {fix}")
    return count
