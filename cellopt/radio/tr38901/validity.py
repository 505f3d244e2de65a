"""What each scenario accepts: the argument checks and the applicability ranges.

The scenario names (:data:`SCENARIOS`), the checks every formula of the package applies
to its arguments (refusing non-numeric arrays, shapes that do not broadcast, unknown
scenarios), and where each scenario's path loss is specified (:data:`VALIDITY`), which
:func:`check_validity` holds every evaluation to: what the formulas cannot evaluate is
refused, what lies outside the stated ranges warns.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cellopt.checks import check_real, is_real
from cellopt.errors import ValidationError
from cellopt.parameters import LIMITS, register_choice

__all__ = ["SCENARIOS", "VALIDITY", "Validity", "check_validity"]

#: Scenario names: TR 38.901 UMa, UMi-Street Canyon, RMa, InH-Office mixed and open
#: (both use the InH-Office path loss), then TR 36.873 3D-UMa and 3D-UMi.
SCENARIOS: tuple[str, ...] = ("uma", "umi", "rma", "inh_mixed", "inh_open", "3d_uma", "3d_umi")
register_choice("propagation", SCENARIOS)

_UMA_LIKE = ("uma", "3d_uma")
_INH = ("inh_mixed", "inh_open")


# --------------------------------------------------------------------------- checks


def _check_scenario(scenario: Any) -> str:
    if not isinstance(scenario, str) or scenario not in SCENARIOS:
        raise ValidationError(
            f"scenario={scenario!r} is not a known scenario; fix: give one of "
            f"{', '.join(repr(s) for s in SCENARIOS)}")
    return scenario


def _real_array(x: Any, name: str, unit: str) -> np.ndarray:
    """`x` as a float array, refusing non-numeric dtypes (O(1) for float64 arrays)."""
    a = np.asarray(x)
    if a.dtype.kind not in "iuf":
        raise ValidationError(f"{name} has dtype {a.dtype}, not real numbers; fix: give {unit} "
                              "as real numbers (a float or an array of floats)")
    return a.astype(np.float64, copy=False)


def _height(x: Any, name: str, warn: bool = True) -> np.ndarray:
    """A height [m]: scalars checked against the catalogue's limits of antenna heights
    (``height_m``, for `name` ``"h_bs_m"``) or of user heights (``user_height_m``), warning
    outside the usual range if `warn`; arrays by dtype."""
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        kind = "height_m" if name == "h_bs_m" else "user_height_m"
        return np.asarray(check_real(x, name, kind, warn=warn, stacklevel=4))
    return _real_array(x, name, "heights in metres")


def _bool_array(x: Any, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype != np.bool_:
        raise ValidationError(f"{name} has dtype {a.dtype}, not bool; fix: give True (LOS) / "
                              "False (NLOS), or a boolean array, e.g. u < los_probability(...)")
    return a


def _shape(**arrays: np.ndarray) -> tuple[int, ...]:
    """The broadcast shape of `arrays`, or a ValidationError naming their shapes."""
    try:
        return np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k}{v.shape}" for k, v in arrays.items())
        raise ValidationError(
            f"shapes do not broadcast: {shapes}; fix: give arrays that broadcast together, "
            "e.g. users (n, 1) against cells (1, m)") from None


def _full(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`x` broadcast to `shape` as a new, writeable array."""
    if x.shape == shape:
        return x
    return x + np.zeros(shape)


def _frequency(frequency_ghz: Any) -> float:
    return check_real(frequency_ghz, "frequency_ghz", stacklevel=4)


def _is_value(x: Any, value: float) -> bool:
    """`x` is the real scalar `value` (e.g. a keyword left at its default)."""
    return np.ndim(x) == 0 and is_real(x) and float(x) == value


def _rma_geometry(value: Any, name: str) -> float:
    """Average building height or street width of RMa [m]: finite, in (0, 1000]."""
    if not is_real(value) or not math.isfinite(float(value)) or not 0.0 < float(value) <= 1000.0:
        raise ValidationError(f"{name}={value!r} is not a number in (0, 1000] m; fix: give metres "
                              "in the applicability range 5–50 m of TR 38.901 Table 7.4.1-1")
    return float(value)


# --------------------------------------------------------------------------- validity


@dataclasses.dataclass(frozen=True)
class Validity:
    """Where a scenario's path loss is specified: the applicability ranges of its table.

    Attributes
    ----------
    name : str
        The scenario as the reports name it, for messages (e.g. ``"UMa"``).
    source : str
        The table that states the ranges.
    frequency_ghz : (float, float)
        Carrier frequency range [GHz].
    distance_m : (float, float)
        Distance range [m] of LOS links (and of NLOS ones unless `nlos_distance_m`).
    nlos_distance_m : (float, float) or None
        Distance range [m] of NLOS links where it differs.
    distance : {"d_2D", "d_3D"}
        Which distance the ranges bound.
    h_bs_m, h_ut_m : (float, float) or None
        BS and UT antenna height ranges [m] (equal ends for a single stated height);
        None where the table states none.
    building_m : (float, float) or None
        Range [m] of the average building height h and the street width W of the
        formulas that take them (RMa: 5–50 m); None where the formulas have none.
    breakpoint : bool
        The LOS breakpoint is ``4 (h_BS − h_E)(h_UT − h_E) f_c / c``: heights at or below
        the effective environment height h_E make it 0 or negative (undefined, refused).
    """

    name: str
    source: str
    frequency_ghz: tuple[float, float]
    distance_m: tuple[float, float]
    nlos_distance_m: tuple[float, float] | None = None
    distance: str = "d_2D"
    h_bs_m: tuple[float, float] | None = None
    h_ut_m: tuple[float, float] | None = None
    building_m: tuple[float, float] | None = None
    breakpoint: bool = False

    def distance_range_m(self, los: bool | None = None) -> tuple[float, float]:
        """The distance range of LOS (True), NLOS (False) links, or of both (None: where
        both states' formulas hold)."""
        if self.nlos_distance_m is None or los is True:
            return self.distance_m
        return self.nlos_distance_m

    def outside(self, quantity: str, n_outside: int, n_total: int, seen: tuple[float, float],
                what: str = "links", los: bool | None = None, label: str | None = None) -> str:
        """The warning about `n_outside` of `n_total` `what` whose `quantity` (one of
        "frequency_ghz", "distance", "h_bs_m", "h_ut_m", "rma_h_building_m",
        "rma_w_street_m") is outside the range; `seen` the smallest and largest of those
        outside (NaN: not known); `label` how the message names the argument or key that
        gave the heights (the range names h_BS or h_UT), the building height or the street
        width; the frequency is named ``frequency_ghz`` and the distance by the range."""
        if quantity in ("rma_h_building_m", "rma_w_street_m"):
            lo, hi = self.building_m
            symbol = "h" if quantity == "rma_h_building_m" else "W"
            noun = "average building height" if symbol == "h" else "street width"
            return (f"{self.name} is specified for {lo:g} m ≤ {symbol} ≤ {hi:g} m ({noun}, "
                    f"{self.source}); got {label or quantity}={seen[0]:g} m: the formulas are "
                    f"extrapolated; fix: give the {noun} in metres in that range")
        if quantity == "frequency_ghz":
            lo, hi = self.frequency_ghz
            return (f"{self.name} is specified for {lo:g}–{hi:g} GHz ({self.source}); got "
                    f"frequency_ghz={seen[0]:g} GHz: the formulas are extrapolated; fix: use "
                    f"a carrier in that range, or a scenario specified at {seen[0]:g} GHz "
                    "(TR 38.901 UMa, UMi and InH: 0.5–100 GHz)")
        if quantity == "distance":
            lo, hi = self.distance_range_m(los)
            state = {True: " in LOS", False: " in NLOS"}.get(los, "")
            if los is None and self.nlos_distance_m is not None:
                state = f" in NLOS ({self.distance_m[1]:g} m in LOS)"
            what_range = f"{lo:g} m ≤ {self.distance} ≤ {hi:g} m{state}"
            fix = ("keep users within that distance of the cells (a smaller study area, or an "
                   "interference radius), or use a model for that range")
        elif getattr(self, quantity) is None:  # the report states none: the catalogue's
            lo, hi = _USUAL_HEIGHT_M[quantity]
            who = "BS" if quantity == "h_bs_m" else "UT"
            span = ("" if math.isnan(seen[0]) else f" ({seen[0]:g} m)" if seen[0] == seen[1]
                    else f" ({seen[0]:g}–{seen[1]:g} m)")
            named = f"{label}: " if label else ""
            return (f"{self.name} states no h_{who} range ({self.source}), and {lo:g}–{hi:g} m "
                    f"is the usual range of {'antenna' if who == 'BS' else 'user'} heights; "
                    f"{named}{n_outside:,} of {n_total:,} {what} are outside{span}: check the "
                    "unit; fix: give heights in metres")
        else:
            lo, hi = getattr(self, quantity)
            who = "BS" if quantity == "h_bs_m" else "UT"
            what_range = (f"h_{who} = {lo:g} m" if lo == hi else f"{lo:g} m ≤ h_{who} ≤ {hi:g} m")
            fix = ("give the cells the scenario's antenna height, or the scenario of their "
                   "height (e.g. UMi for 10 m small cells)" if quantity == "h_bs_m" else
                   "give users in that height range")
        span = ("" if math.isnan(seen[0]) else f" ({seen[0]:g} m)" if seen[0] == seen[1]
                else f" ({seen[0]:g}–{seen[1]:g} m)")
        named = f"{label}: " if label else ""
        return (f"{self.name} is specified for {what_range} ({self.source}); {named}{n_outside:,} "
                f"of {n_total:,} {what} are outside{span}: the formulas are extrapolated "
                f"there; fix: {fix}")


_3GPP = "TR 38.901 Table 7.4.1-1"
#: Where a scenario states no BS or UT height range, the usual ranges of the parameter
#: catalogue (``height_m``, ``user_height_m``) [m]: a height in centimetres still warns.
_USUAL_HEIGHT_M: dict[str, tuple[float, float]] = {
    "h_bs_m": LIMITS["height_m"].usual, "h_ut_m": LIMITS["user_height_m"].usual}
#: The applicability of each scenario's path loss: TR 38.901 Table 7.4.1-1 (UMa, UMi,
#: RMa with its note on frequency, InH-Office: 1 m ≤ d_3D ≤ 150 m, no stated heights);
#: TR 36.873 Table 7.2-1 (3D-UMa, 3D-UMi), whose formulas come from ITU-R M.2135-1
#: (Table A1-2, 2–6 GHz).
VALIDITY: dict[str, Validity] = {
    "uma": Validity("UMa", _3GPP, (0.5, 100.0), (10.0, 5000.0), h_ut_m=(1.5, 22.5),
                    breakpoint=True),
    "umi": Validity("UMi-Street Canyon", _3GPP, (0.5, 100.0), (10.0, 5000.0),
                    h_ut_m=(1.5, 22.5), breakpoint=True),
    "rma": Validity("RMa", _3GPP, (0.5, 30.0), (10.0, 10_000.0), (10.0, 5000.0),
                    h_bs_m=(10.0, 150.0), h_ut_m=(1.0, 10.0), building_m=(5.0, 50.0)),
    "inh_mixed": Validity("InH-Office", _3GPP, (0.5, 100.0), (1.0, 150.0), distance="d_3D"),
    "inh_open": Validity("InH-Office", _3GPP, (0.5, 100.0), (1.0, 150.0), distance="d_3D"),
    "3d_uma": Validity("3D-UMa", "TR 36.873 Table 7.2-1, from ITU-R M.2135-1", (2.0, 6.0),
                       (10.0, 5000.0), h_ut_m=(1.5, 22.5), breakpoint=True),
    "3d_umi": Validity("3D-UMi", "TR 36.873 Table 7.2-1, from ITU-R M.2135-1", (2.0, 6.0),
                       (10.0, 5000.0), (10.0, 2000.0), h_ut_m=(1.5, 22.5), breakpoint=True),
}


def _count_outside(values: np.ndarray, lo: float, hi: float,
                   where: np.ndarray | None = None) -> tuple[int, int, tuple[float, float]]:
    """How many of `values` (those `where` picks) are outside [lo, hi], of how many, and
    the smallest and largest of those outside."""
    v = values if where is None else values[np.broadcast_to(where, values.shape)]
    if v.size == 0:
        return 0, 0, (math.nan, math.nan)
    bad = (v < lo) | (v > hi)
    n_bad = int(np.count_nonzero(bad))
    if not n_bad:
        return 0, int(v.size), (math.nan, math.nan)
    return n_bad, int(v.size), (float(v[bad].min()), float(v[bad].max()))


def check_validity(scenario: str | Validity, *, frequency_ghz: float | None = None,
                   distance_m: ArrayLike | None = None, h_bs_m: ArrayLike | None = None,
                   h_ut_m: ArrayLike | None = None, h_e_m: ArrayLike = 1.0,
                   los: ArrayLike | None = None, rma_h_building_m: float | None = None,
                   rma_w_street_m: float | None = None, what: str = "links", warn: bool = True,
                   labels: dict[str, str] | None = None, stacklevel: int = 2) -> None:
    """Refuse what the scenario's path loss cannot evaluate; warn outside its stated ranges.

    One check for every path that evaluates a scenario
    (:func:`~cellopt.radio.tr38901.pathloss_db`, the link table and the coverage maps
    through :class:`~cellopt.radio.ThreeGPP`), against :data:`VALIDITY`, and of any other
    model with stated ranges, against its own :class:`Validity`. Refused (undefined): a
    distance ≤ 0 or not finite, a height ≤ 0, and in the scenarios with the breakpoint
    ``d'_BP = 4 (h_BS − h_E)(h_UT − h_E) f_c / c`` a BS or UT height at or below h_E (a
    breakpoint of 0 or less: every LOS link beyond it, 11–24 dB too weak at 100–500 m for
    h_UT = h_E = 1 m). Warned (one :class:`UserWarning` per quantity and call, counting
    the values outside): a carrier, distance or height outside the range the report
    states.

    Parameters
    ----------
    scenario : str or Validity
        One of :data:`SCENARIOS`, or the ranges of another model.
    frequency_ghz : float, optional
        Carrier frequency [GHz] (already checked as a number).
    distance_m : array_like, optional
        The distance the scenario's range bounds (:attr:`Validity.distance`: d_2D, or
        d_3D for InH) [m].
    h_bs_m, h_ut_m : array_like, optional
        BS and UT heights [m].
    h_e_m : array_like
        Effective environment height h_E [m] (1 m but in UMa and 3D-UMa).
    los : array_like of bool, optional
        LOS state of the links, for the ranges that differ by state (RMa, 3D-UMi).
    rma_h_building_m, rma_w_street_m : float, optional
        Average building height and street width of RMa [m] (already checked as numbers
        in (0, 1000] m); warned outside :attr:`Validity.building_m`.
    what : str
        What the values are, for messages ("links", "cells", "users").
    warn : bool
        Warn outside the stated ranges (False: refuse only).
    labels : dict of str to str, optional
        How messages name the arguments (e.g. ``{"h_ut_m": "ThreeGPP.user_height_m"}``);
        a warning about heights, the building height or the street width names the
        argument so (by default as this function does).
    stacklevel : int
        Of the warnings: 2 points at the caller.

    Raises
    ------
    ValidationError
        An undefined distance or height, naming how many values and the fix.
    """
    v = scenario if isinstance(scenario, Validity) else VALIDITY[_check_scenario(scenario)]
    labels = {"distance_m": v.distance, **(labels or {})}
    arrays = {}
    for name, value in (("distance_m", distance_m), ("h_bs_m", h_bs_m), ("h_ut_m", h_ut_m)):
        if value is not None:
            arrays[name] = np.asarray(value, dtype=np.float64)
    problems = []
    for name, a in arrays.items():
        bad = ~(np.isfinite(a) & (a > 0))
        if bad.any():
            problems.append(f"{labels.get(name, name)} is not a finite number > 0 for "
                            f"{int(bad.sum()):,} of {a.size:,} {what} (e.g. "
                            f"{float(a[bad].flat[0]):g} m); fix: give positive distances and "
                            "heights in metres")
    if v.breakpoint and not problems:
        h_e = np.asarray(h_e_m, dtype=np.float64)
        for name, who in (("h_ut_m", "UT"), ("h_bs_m", "BS")):
            if name not in arrays:
                continue
            low = arrays[name] <= h_e
            if low.any():
                h = float(np.broadcast_to(arrays[name], low.shape)[low].flat[0])
                e = float(np.broadcast_to(h_e, low.shape)[low].flat[0])
                which = (f"{labels.get(name, name)}={h:g} m is" if low.size == 1 else
                         f"{labels.get(name, name)}: {int(low.sum()):,} of {low.size:,} {what} "
                         f"have h_{who} (e.g. {h:g} m)")
                problems.append(
                    f"{which} at or below the effective environment height h_E = {e:g} m, where "
                    f"the {v.name} breakpoint distance 4 (h_BS − h_E)(h_UT − h_E) f_c / c is 0 "
                    f"or less ({v.source} note 1) and every LOS link falls on its far slope; "
                    f"fix: give h_{who} above h_E" + (f" ({v.h_ut_m[0]:g}–{v.h_ut_m[1]:g} m)"
                                                       if who == "UT" else ""))
    if problems:
        raise ValidationError(problems)
    if not warn:
        return
    messages = []
    if frequency_ghz is not None and not v.frequency_ghz[0] <= frequency_ghz <= v.frequency_ghz[1]:
        messages.append(v.outside("frequency_ghz", 1, 1, (frequency_ghz, frequency_ghz)))
    if "distance_m" in arrays:
        d = arrays["distance_m"]
        states = [None] if los is None or v.nlos_distance_m is None else [True, False]
        for state in states:
            where = None
            if state is not None:
                los_a = np.asarray(los, dtype=bool)
                where = los_a if state else ~los_a
                d = np.broadcast_to(arrays["distance_m"], np.broadcast_shapes(d.shape, los_a.shape))
            lo, hi = v.distance_range_m(state)
            n_bad, n, seen = _count_outside(d, lo, hi, where)
            if n_bad:
                messages.append(v.outside("distance", n_bad, n, seen, what, state))
    for name in ("h_bs_m", "h_ut_m"):
        limits = getattr(v, name) or _USUAL_HEIGHT_M[name]  # the catalogue's if none stated
        if name in arrays:
            n_bad, n, seen = _count_outside(arrays[name], *limits)
            if n_bad:
                messages.append(v.outside(name, n_bad, n, seen, what, label=labels.get(name, name)))
    for name, value in (("rma_h_building_m", rma_h_building_m), ("rma_w_street_m", rma_w_street_m)):
        if value is not None and v.building_m is not None and not (
                v.building_m[0] <= value <= v.building_m[1]):
            messages.append(v.outside(name, 1, 1, (value, value), label=labels.get(name, name)))
    for message in messages:
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)
