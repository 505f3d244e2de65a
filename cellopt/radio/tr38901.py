"""Large-scale propagation of 3GPP TR 38.901 (§7.4, §7.5) and TR 36.873 (§7.2).

Pure, vectorized numpy functions: path loss, LOS probability, shadow-fading σ and
decorrelation distance, outdoor-to-indoor (O2I) loss and the random heights of the
drop. Nothing random is drawn here: every random quantity is a function of uniforms in
[0, 1) or standard normals that the caller passes in (e.g. from
:func:`cellopt.radio.shadowing.uniform_hash`), so that values can be keyed by a
counter-based hash. Arrays broadcast against each other (numpy rules).

Sources, transcribed from the text of the reports:

- TR 38.901 v16.1.0 / v17.0.0: Table 7.4.1-1 (path loss, σ_SF), Table 7.4.2-1 (LOS
  probability), §7.4.3.1 with Tables 7.4.3-1, 7.4.3-2 and 7.4.3-3 (O2I building
  penetration), Table 7.2-1 (indoor UT height), Table 7.5-6 (SF decorrelation distance
  and the O2I σ_SF).
- TR 36.873 v12.7.0: Table 7.2-1 (3D-UMa, 3D-UMi path loss and O2I loss), Table 7.2-2
  (LOS probability, effective environment height), Table 6-1 (indoor UT height), Table
  7.3-6 (σ_SF and decorrelation distances).

Conventions of both reports: f_c in GHz in the formulas (in Hz in the breakpoint
distances, c = 3.0e8 m/s); distances and heights in metres; d_3D the BS–UT distance,
d_2D its horizontal projection. Each scenario's applicability ranges are declared once,
in :data:`VALIDITY`, and :func:`check_validity` holds :func:`pathloss_db` (and the
:class:`~cellopt.radio.ThreeGPP` model of the link table and coverage maps) to them: what
the formulas cannot evaluate (a distance or height ≤ 0, a breakpoint of 0 or less) is
refused, what lies outside the stated ranges warns and is evaluated as written: nothing
is clamped. Raising short distances to the minimum of the model (10 m outdoors, 1 m
indoors) is the caller's job.
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

__all__ = [
    "SCENARIOS",
    "VALIDITY",
    "Validity",
    "breakpoint_distance_m",
    "check_validity",
    "decorrelation_distance_m",
    "indoor_distance_m",
    "indoor_floor_height_m",
    "los_probability",
    "o2i_loss_db",
    "pathloss_db",
    "shadow_std_db",
    "uma_effective_height_m",
    "uma_effective_height_pmf",
]

#: Scenario names: TR 38.901 UMa, UMi-Street Canyon, RMa, InH-Office mixed and open
#: (both use the InH-Office path loss), then TR 36.873 3D-UMa and 3D-UMi.
SCENARIOS: tuple[str, ...] = ("uma", "umi", "rma", "inh_mixed", "inh_open", "3d_uma", "3d_umi")
register_choice("propagation", SCENARIOS)

#: O2I building-penetration models of :func:`o2i_loss_db`.
O2I_MODELS: tuple[str, ...] = ("low", "high", "36873")

#: Propagation velocity of the breakpoint formulas [m/s] (TR 38.901 Table 7.4.1-1 note 1).
SPEED_OF_LIGHT_M_S: float = 3.0e8

_UMA_LIKE = ("uma", "3d_uma")
_INH = ("inh_mixed", "inh_open")

# σ_SF [dB], (LOS, NLOS, O2I). TR 38.901 Table 7.4.1-1 (LOS, NLOS) and Table 7.5-6 (O2I);
# TR 36.873 Table 7.3-6. RMa LOS is 4 dB up to the breakpoint and 6 dB beyond (NaN here,
# resolved in shadow_std_db). InH has no O2I case (NaN).
_SIGMA_SF_DB: dict[str, tuple[float, float, float]] = {
    "uma": (4.0, 6.0, 7.0),
    "umi": (4.0, 7.82, 7.0),
    "rma": (math.nan, 8.0, 8.0),
    "inh_mixed": (3.0, 8.03, math.nan),
    "inh_open": (3.0, 8.03, math.nan),
    "3d_uma": (4.0, 6.0, 7.0),
    "3d_umi": (3.0, 4.0, 7.0),
}

# SF decorrelation distance [m], (LOS, NLOS, O2I). TR 38.901 Table 7.5-6 parts 1 and 2;
# TR 36.873 Table 7.3-6.
_SF_DECORRELATION_M: dict[str, tuple[float, float, float]] = {
    "uma": (37.0, 50.0, 7.0),
    "umi": (10.0, 13.0, 7.0),
    "rma": (37.0, 120.0, 120.0),
    "inh_mixed": (10.0, 6.0, math.nan),
    "inh_open": (10.0, 6.0, math.nan),
    "3d_uma": (37.0, 50.0, 7.0),
    "3d_umi": (10.0, 13.0, 7.0),
}


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


def check_validity(scenario: str, *, frequency_ghz: float | None = None,
                   distance_m: ArrayLike | None = None, h_bs_m: ArrayLike | None = None,
                   h_ut_m: ArrayLike | None = None, h_e_m: ArrayLike = 1.0,
                   los: ArrayLike | None = None, rma_h_building_m: float | None = None,
                   rma_w_street_m: float | None = None, what: str = "links", warn: bool = True,
                   labels: dict[str, str] | None = None, stacklevel: int = 2) -> None:
    """Refuse what the scenario's path loss cannot evaluate; warn outside its stated ranges.

    One check for every path that evaluates a scenario (:func:`pathloss_db`, the link
    table and the coverage maps through :class:`~cellopt.radio.ThreeGPP`), against
    :data:`VALIDITY`. Refused (undefined): a distance ≤ 0 or not finite, a height ≤ 0,
    and in the scenarios with the breakpoint ``d'_BP = 4 (h_BS − h_E)(h_UT − h_E) f_c / c``
    a BS or UT height at or below h_E (a breakpoint of 0 or less: every LOS link beyond
    it, 11–24 dB too weak at 100–500 m for h_UT = h_E = 1 m). Warned (one
    :class:`UserWarning` per quantity and call, counting the values outside): a carrier,
    distance or height outside the range the report states.

    Parameters
    ----------
    scenario : str
        One of :data:`SCENARIOS`.
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
    v = VALIDITY[_check_scenario(scenario)]
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


# --------------------------------------------------------------------------- path loss


def breakpoint_distance_m(scenario: str, h_bs_m: ArrayLike, h_ut_m: ArrayLike,
                          frequency_ghz: float, *, h_e_m: ArrayLike = 1.0) -> np.ndarray:
    """Breakpoint distance of the LOS path loss [m].

    UMa, UMi, 3D-UMa, 3D-UMi (TR 38.901 Table 7.4.1-1 note 1, TR 36.873 Table 7.2-1 note
    1): ``d'_BP = 4 h'_BS h'_UT f_c / c`` with ``h' = h − h_E`` (h_E = 1 m for UMi and
    3D-UMi; for UMa and 3D-UMa the per-link `h_e_m`, see :func:`uma_effective_height_m`).
    RMa (note 5): ``d_BP = 2π h_BS h_UT f_c / c``. f_c in Hz, c = 3.0e8 m/s.

    Parameters
    ----------
    scenario : str
        One of :data:`SCENARIOS` except the InH ones (their path loss has no breakpoint).
    h_bs_m, h_ut_m : array_like
        BS and UT antenna heights [m], broadcast.
    frequency_ghz : float
        Carrier frequency [GHz].
    h_e_m : array_like
        Effective environment height [m] (UMa and 3D-UMa only; 1 m otherwise).

    Returns
    -------
    ndarray
        Breakpoint distance [m], the broadcast shape of the heights.
    """
    scenario = _check_scenario(scenario)
    if scenario in _INH:
        raise ValidationError(f"scenario={scenario!r} has no breakpoint distance; fix: give one "
                              "of 'uma', 'umi', 'rma', '3d_uma', '3d_umi'")
    f_hz = _frequency(frequency_ghz) * 1e9
    h_bs = _height(h_bs_m, "h_bs_m")
    h_ut = _height(h_ut_m, "h_ut_m")
    if scenario == "rma":
        return 2.0 * math.pi * h_bs * h_ut * f_hz / SPEED_OF_LIGHT_M_S
    h_e = _effective_height(scenario, h_e_m, h_bs, h_ut)
    return 4.0 * (h_bs - h_e) * (h_ut - h_e) * f_hz / SPEED_OF_LIGHT_M_S


def _effective_height(scenario: str, h_e_m: Any, h_bs: np.ndarray, h_ut: np.ndarray) -> np.ndarray:
    """h_E of the scenario: `h_e_m` for UMa/3D-UMa (scalars checked below h_BS and h_UT), else 1."""
    if scenario not in _UMA_LIKE:
        if not _is_value(h_e_m, 1.0):
            raise ValidationError(f"h_e_m applies to UMa and 3D-UMa only (in {scenario!r} h_E "
                                  "is 1 m or unused); fix: leave h_e_m at its default 1.0")
        return np.asarray(1.0)
    if np.ndim(h_e_m) == 0 and not isinstance(h_e_m, np.ndarray):
        h_e = check_real(h_e_m, "h_e_m", "user_height_m", warn=False, stacklevel=5)
        # h_E = 1 m at or above a height: check_validity says why (the breakpoint)
        if (h_bs.ndim == 0 and h_ut.ndim == 0 and h_e != 1.0
                and not h_e < min(float(h_bs), float(h_ut))):
            raise ValidationError(f"h_e_m={h_e:g} m is not below h_bs_m={float(h_bs):g} m and "
                                  f"h_ut_m={float(h_ut):g} m; fix: give the effective "
                                  "environment height of uma_effective_height_m (1 m or 12, "
                                  "15, …, h_UT − 1.5 m)")
        return np.asarray(h_e)
    return _real_array(h_e_m, "h_e_m", "effective environment heights in metres")


def pathloss_db(scenario: str, d2d_m: ArrayLike, d3d_m: ArrayLike, h_bs_m: ArrayLike,
                h_ut_m: ArrayLike, frequency_ghz: float, los: ArrayLike, *,
                h_e_m: ArrayLike = 1.0, rma_h_building_m: float = 5.0,
                rma_w_street_m: float = 20.0, warn: bool = True) -> np.ndarray:
    """Basic path loss [dB]: no shadow fading, no O2I loss.

    LOS links get PL_LOS; NLOS links ``max(PL_LOS, PL'_NLOS)``. Dual-slope LOS models use
    PL1 for ``d_2D ≤ d_BP`` and PL2 beyond (:func:`breakpoint_distance_m`). Formulas,
    with f_c in GHz and distances in metres:

    ``"uma"`` (TR 38.901 Table 7.4.1-1; valid 10 m ≤ d_2D ≤ 5 km, h_BS = 25 m,
    1.5 m ≤ h_UT ≤ 22.5 m, 0.5–100 GHz):
        PL1 = 28.0 + 22 log10 d_3D + 20 log10 f_c;
        PL2 = 28.0 + 40 log10 d_3D + 20 log10 f_c − 9 log10(d'_BP² + (h_BS − h_UT)²);
        PL'_NLOS = 13.54 + 39.08 log10 d_3D + 20 log10 f_c − 0.6 (h_UT − 1.5).
    ``"umi"`` (UMi-Street Canyon; valid 10 m ≤ d_2D ≤ 5 km, h_BS = 10 m,
    1.5 m ≤ h_UT ≤ 22.5 m, 0.5–100 GHz):
        PL1 = 32.4 + 21 log10 d_3D + 20 log10 f_c;
        PL2 = 32.4 + 40 log10 d_3D + 20 log10 f_c − 9.5 log10(d'_BP² + (h_BS − h_UT)²);
        PL'_NLOS = 35.3 log10 d_3D + 22.4 + 21.3 log10 f_c − 0.3 (h_UT − 1.5).
    ``"rma"`` (valid LOS 10 m ≤ d_2D ≤ 10 km, NLOS 10 m ≤ d_2D ≤ 5 km, 10 m ≤ h_BS ≤
    150 m (35 m default), 1 m ≤ h_UT ≤ 10 m, 5 m ≤ h, W ≤ 50 m (outside warns, as the
    other ranges), 0.5–30 GHz):
        PL1 = 20 log10(40π d_3D f_c / 3) + min(0.03 h^1.72, 10) log10 d_3D
        − min(0.044 h^1.72, 14.77) + 0.002 log10(h) d_3D;
        PL2 = PL1(d_BP) + 40 log10(d_3D / d_BP) (PL1 evaluated at d_3D = d_BP);
        PL'_NLOS = 161.04 − 7.1 log10 W + 7.5 log10 h − (24.37 − 3.7 (h/h_BS)²) log10 h_BS
        + (43.42 − 3.1 log10 h_BS)(log10 d_3D − 3) + 20 log10 f_c
        − (3.2 (log10(11.75 h_UT))² − 4.97).
    ``"inh_mixed"``, ``"inh_open"`` (InH-Office; valid 1 m ≤ d_3D ≤ 150 m, h_BS = 3 m,
    h_UT = 1 m, 0.5–100 GHz):
        PL_LOS = 32.4 + 17.3 log10 d_3D + 20 log10 f_c;
        PL'_NLOS = 38.3 log10 d_3D + 17.30 + 24.9 log10 f_c.
    ``"3d_uma"`` (TR 36.873 Table 7.2-1; valid 10 m < d_2D < 5 km, h_BS = 25 m,
    1.5 m ≤ h_UT ≤ 22.5 m; evaluated at 2 GHz in TR 36.873, f_c kept as a parameter):
        PL1 = 22.0 log10 d_3D + 28.0 + 20 log10 f_c;
        PL2 = 40 log10 d_3D + 28.0 + 20 log10 f_c − 9 log10(d'_BP² + (h_BS − h_UT)²);
        PL'_NLOS = 161.04 − 7.1 log10 W + 7.5 log10 h − (24.37 − 3.7 (h/h_BS)²) log10 h_BS
        + (43.42 − 3.1 log10 h_BS)(log10 d_3D − 3) + 20 log10 f_c
        − (3.2 (log10 17.625)² − 4.97) − 0.6 (h_UT − 1.5), with W = h = 20 m.
    ``"3d_umi"`` (TR 36.873 Table 7.2-1, hexagonal layout; valid LOS 10 m < d_2D < 5 km,
    NLOS 10 m < d_2D < 2 km, h_BS = 10 m, 1.5 m ≤ h_UT ≤ 22.5 m; 2 GHz as above):
        PL1, PL2 as 3D-UMa LOS;
        PL'_NLOS = 36.7 log10 d_3D + 22.7 + 26 log10 f_c − 0.3 (h_UT − 1.5).

    Every call goes through :func:`check_validity`: what the formulas cannot evaluate is
    refused (a distance or height ≤ 0; h_BS or h_UT at or below h_E where the breakpoint
    subtracts it, e.g. UMa with h_UT = 1 m), and a carrier, distance or height outside
    the ranges above (:data:`VALIDITY`) warns once per call, counting the links outside;
    the formulas are then evaluated as written (no clamping). Raising d_2D to 10 m (d_3D
    to 1 m indoors) is the caller's job. The optional single-slope UMa/UMi/InH NLOS
    formulas are not provided.

    Parameters
    ----------
    scenario : str
        One of :data:`SCENARIOS`.
    d2d_m, d3d_m : array_like
        Horizontal and 3D BS–UT distances [m], > 0; d3d_m should equal
        ``hypot(d2d_m, h_bs_m − h_ut_m)`` (not checked). For an O2I UT, the distances
        to the UT itself (TR 38.901 §7.4.3: PL_b uses d_3D-out + d_3D-in).
    h_bs_m, h_ut_m : array_like
        BS and UT antenna heights [m]. Scalars are checked (> 0; a warning outside
        1–100 m); arrays only for their dtype.
    frequency_ghz : float
        Carrier frequency [GHz], in (0, 1000]; warns outside 0.5–100 GHz.
    los : bool or array_like of bool
        True for LOS links, False for NLOS.
    h_e_m : array_like
        Effective environment height h_E [m] of UMa and 3D-UMa links (per link, from
        :func:`uma_effective_height_m`); 1 m by default. Other scenarios refuse any
        value but 1.0 (their h_E is fixed at 1 m, or unused).
    rma_h_building_m, rma_w_street_m : float
        Average building height h and street width W of RMa [m] (defaults 5 m and 20 m);
        other scenarios refuse other values (3D-UMa NLOS fixes W = h = 20 m).
    warn : bool
        Warn outside the scenario's stated ranges (default). False refuses what is
        undefined but does not warn: for a caller that evaluates one model in many calls
        and checked the ranges once (:class:`~cellopt.radio.ThreeGPP`).

    Returns
    -------
    ndarray
        Path loss [dB], the broadcast shape of all array arguments (0-d for scalars).

    Raises
    ------
    ValidationError
        Unknown scenario; frequency or a scalar height not a number or out of range;
        non-numeric arrays, a non-boolean `los`; shapes that do not broadcast; an h_E or
        RMa parameter given to a scenario that does not use it; a distance or height the
        formulas cannot evaluate (:func:`check_validity`).
    """
    scenario = _check_scenario(scenario)
    fc = check_real(frequency_ghz, "frequency_ghz", warn=False)  # the scenario's range warns
    d2d = _real_array(d2d_m, "d2d_m", "distances in metres")
    d3d = _real_array(d3d_m, "d3d_m", "distances in metres")
    h_bs = _height(h_bs_m, "h_bs_m", warn=False)  # check_validity warns, as on every path
    h_ut = _height(h_ut_m, "h_ut_m", warn=False)
    los_a = _bool_array(los, "los")
    h_e = _effective_height(scenario, h_e_m, h_bs, h_ut)
    if scenario == "rma":
        h = _rma_geometry(rma_h_building_m, "rma_h_building_m")
        w = _rma_geometry(rma_w_street_m, "rma_w_street_m")
    elif not (_is_value(rma_h_building_m, 5.0) and _is_value(rma_w_street_m, 20.0)):
        raise ValidationError(f"rma_h_building_m and rma_w_street_m apply to 'rma' only, not "
                              f"{scenario!r}; fix: leave them at their defaults")
    shape = _shape(d2d_m=d2d, d3d_m=d3d, h_bs_m=h_bs, h_ut_m=h_ut, los=los_a, h_e_m=h_e)
    check_validity(scenario, frequency_ghz=fc,
                   distance_m=np.broadcast_to(d3d if scenario in _INH else d2d, shape),
                   h_bs_m=np.broadcast_to(h_bs, shape), h_ut_m=np.broadcast_to(h_ut, shape),
                   h_e_m=h_e, los=los_a, warn=warn, stacklevel=2,
                   **({"rma_h_building_m": h, "rma_w_street_m": w} if scenario == "rma" else {}))
    if scenario not in _INH and not (np.isfinite(d3d) & (d3d > 0)).all():  # in the logarithms
        raise ValidationError(f"d3d_m has {int((~(np.isfinite(d3d) & (d3d > 0))).sum()):,} "
                              "values that are not finite numbers > 0; fix: give positive "
                              "distances in metres")
    log_fc = math.log10(fc)
    log_d3d = np.log10(d3d)

    if scenario in _INH:
        pl_los = 32.4 + 17.3 * log_d3d + 20.0 * log_fc
    elif scenario == "rma":
        d_bp = 2.0 * math.pi * h_bs * h_ut * (fc * 1e9) / SPEED_OF_LIGHT_M_S
        a, b, k = min(0.03 * h**1.72, 10.0), min(0.044 * h**1.72, 14.77), 0.002 * math.log10(h)
        pl1 = 20.0 * np.log10(40.0 * math.pi * d3d * fc / 3.0) + a * log_d3d - b + k * d3d
        pl1_bp = (20.0 * np.log10(40.0 * math.pi * d_bp * fc / 3.0) + a * np.log10(d_bp)
                  - b + k * d_bp)  # PL1 at d_3D = d_BP
        pl2 = pl1_bp + 40.0 * np.log10(d3d / d_bp)
        pl_los = np.where(d2d <= d_bp, pl1, pl2)
    else:
        d_bp = 4.0 * (h_bs - h_e) * (h_ut - h_e) * (fc * 1e9) / SPEED_OF_LIGHT_M_S
        if scenario == "umi":
            a1, a0, slope2 = 21.0, 32.4, 9.5
        else:  # uma, 3d_uma, 3d_umi: 28.0 + 22 log10 d_3D; 9 log10(...)
            a1, a0, slope2 = 22.0, 28.0, 9.0
        pl1 = a0 + a1 * log_d3d + 20.0 * log_fc
        pl2 = (a0 + 40.0 * log_d3d + 20.0 * log_fc
               - slope2 * np.log10(d_bp**2 + (h_bs - h_ut) ** 2))
        pl_los = np.where(d2d <= d_bp, pl1, pl2)

    if los_a.ndim == 0 and bool(los_a):
        return _full(np.asarray(pl_los, dtype=np.float64), shape)

    if scenario == "uma":
        pl_nlos = 13.54 + 39.08 * log_d3d + 20.0 * log_fc - 0.6 * (h_ut - 1.5)
    elif scenario == "umi":
        pl_nlos = 35.3 * log_d3d + 22.4 + 21.3 * log_fc - 0.3 * (h_ut - 1.5)
    elif scenario in _INH:
        pl_nlos = 38.3 * log_d3d + 17.30 + 24.9 * log_fc
    elif scenario == "rma":
        log_hbs = np.log10(h_bs)
        pl_nlos = (161.04 - 7.1 * math.log10(w) + 7.5 * math.log10(h)
                   - (24.37 - 3.7 * (h / h_bs) ** 2) * log_hbs
                   + (43.42 - 3.1 * log_hbs) * (log_d3d - 3.0)
                   + 20.0 * log_fc - (3.2 * np.log10(11.75 * h_ut) ** 2 - 4.97))
    elif scenario == "3d_uma":
        w = h = 20.0
        log_hbs = np.log10(h_bs)
        pl_nlos = (161.04 - 7.1 * math.log10(w) + 7.5 * math.log10(h)
                   - (24.37 - 3.7 * (h / h_bs) ** 2) * log_hbs
                   + (43.42 - 3.1 * log_hbs) * (log_d3d - 3.0)
                   + 20.0 * log_fc - (3.2 * math.log10(17.625) ** 2 - 4.97)
                   - 0.6 * (h_ut - 1.5))
    else:  # 3d_umi
        pl_nlos = 36.7 * log_d3d + 22.7 + 26.0 * log_fc - 0.3 * (h_ut - 1.5)
    pl_nlos = np.maximum(pl_los, pl_nlos)
    if los_a.ndim == 0:
        return _full(np.asarray(pl_nlos, dtype=np.float64), shape)
    return _full(np.where(los_a, pl_los, pl_nlos), shape)


# --------------------------------------------------------------------------- LOS state


def los_probability(scenario: str, d2d_m: ArrayLike, h_ut_m: ArrayLike = 1.5) -> np.ndarray:
    """Probability of a LOS link, TR 38.901 Table 7.4.2-1 and TR 36.873 Table 7.2-2.

    With d the 2D distance [m] (d_2D-out, to the building wall, for O2I UTs of the
    outdoor scenarios; d_2D-in for InH):

    - ``"rma"``: 1 for d ≤ 10 m, else ``exp(−(d − 10)/1000)``;
    - ``"umi"``, ``"3d_umi"``: 1 for d ≤ 18 m, else ``18/d + exp(−d/36)(1 − 18/d)``;
    - ``"uma"``, ``"3d_uma"``: 1 for d ≤ 18 m, else
      ``[18/d + exp(−d/63)(1 − 18/d)] (1 + C'(h_UT) (5/4)(d/100)³ exp(−d/150))`` with
      ``C'(h_UT) = 0`` for h_UT ≤ 13 m and ``((h_UT − 13)/10)^1.5`` above (defined up
      to 23 m; evaluated as written above that). For h_UT near 23 m the formula exceeds
      1 (by up to 0.6 %) just beyond 18 m; the result is clipped to 1, which leaves the
      draw ``u < p`` unchanged;
    - ``"inh_mixed"``: 1 for d ≤ 1.2 m, ``exp(−(d − 1.2)/4.7)`` for 1.2 m < d < 6.5 m,
      ``0.32 exp(−(d − 6.5)/32.6)`` for d ≥ 6.5 m;
    - ``"inh_open"``: 1 for d ≤ 5 m, ``exp(−(d − 5)/70.8)`` for 5 m < d ≤ 49 m,
      ``0.54 exp(−(d − 49)/211.7)`` for d > 49 m.

    TR 36.873's 3D-UMi ``min(18/d, 1)(1 − exp(−d/36)) + exp(−d/36)`` and 3D-UMa
    ``(min(18/d, 1)(1 − exp(−d/63)) + exp(−d/63))(1 + C(d, h_UT))`` with
    ``C = ((h_UT − 13)/10)^1.5 · 1.25e−6 d³ exp(−d/150)`` (0 for h_UT < 13 m or
    d ≤ 18 m) are algebraically the same functions as 38.901's UMi and UMa.
    The models assume BS heights of 25 m (UMa), 10 m (UMi) and 3 m (InH).

    Parameters
    ----------
    scenario : str
        One of :data:`SCENARIOS`.
    d2d_m : array_like
        2D distance [m], ≥ 0.
    h_ut_m : array_like
        UT height [m] (used by UMa and 3D-UMa only); default 1.5 m.

    Returns
    -------
    ndarray
        LOS probability in [0, 1], the broadcast shape of `d2d_m` and `h_ut_m`. Draw
        the state as ``u < p`` with u uniform in [0, 1).
    """
    scenario = _check_scenario(scenario)
    d = _real_array(d2d_m, "d2d_m", "distances in metres")
    h_ut = _height(h_ut_m, "h_ut_m")
    shape = _shape(d2d_m=d, h_ut_m=h_ut)
    with np.errstate(divide="ignore", invalid="ignore"):
        if scenario == "rma":
            p = np.where(d <= 10.0, 1.0, np.exp(-(d - 10.0) / 1000.0))
        elif scenario in ("umi", "3d_umi"):
            p = np.where(d <= 18.0, 1.0, 18.0 / d + np.exp(-d / 36.0) * (1.0 - 18.0 / d))
        elif scenario in _UMA_LIKE:
            c = np.where(h_ut <= 13.0, 0.0, ((np.maximum(h_ut, 13.0) - 13.0) / 10.0) ** 1.5)
            base = 18.0 / d + np.exp(-d / 63.0) * (1.0 - 18.0 / d)
            p = np.where(d <= 18.0, 1.0,  # ≤ 1: the formula reaches 1.006 just past 18 m
                         np.minimum(base * (1.0 + c * 1.25 * (d / 100.0) ** 3
                                            * np.exp(-d / 150.0)), 1.0))
        elif scenario == "inh_mixed":
            p = np.where(d <= 1.2, 1.0,
                         np.where(d < 6.5, np.exp(-(d - 1.2) / 4.7),
                                  0.32 * np.exp(-(d - 6.5) / 32.6)))
        else:  # inh_open
            p = np.where(d <= 5.0, 1.0,
                         np.where(d <= 49.0, np.exp(-(d - 5.0) / 70.8),
                                  0.54 * np.exp(-(d - 49.0) / 211.7)))
    return _full(np.asarray(p, dtype=np.float64), shape)


# --------------------------------------------------------------------------- shadowing


def _by_state(table: dict[str, tuple[float, float, float]], scenario: str, los: np.ndarray,
              o2i: np.ndarray) -> np.ndarray:
    v_los, v_nlos, v_o2i = table[scenario]
    return np.where(o2i, v_o2i, np.where(los, v_los, v_nlos))


def shadow_std_db(scenario: str, los: ArrayLike, frequency_ghz: float | None = None, *,
                  o2i: ArrayLike = False, d2d_m: ArrayLike | None = None,
                  h_bs_m: ArrayLike = 35.0, h_ut_m: ArrayLike = 1.5) -> np.ndarray:
    """Standard deviation σ_SF of the log-normal shadow fading [dB].

    ======== ===================== ====== ====================
    scenario LOS                   NLOS   O2I (Table 7.5-6)
    ======== ===================== ====== ====================
    uma      4                     6      7
    umi      4                     7.82   7
    rma      4 (d_2D ≤ d_BP), 6    8      8
    inh_*    3                     8.03   — (refused)
    3d_uma   4                     6      7
    3d_umi   3                     4      7
    ======== ===================== ====== ====================

    TR 38.901 Table 7.4.1-1 (LOS, NLOS) and Table 7.5-6 (O2I, the σ_SF of the LSPs of
    indoor UTs, whatever the LOS state of the outdoor part); TR 36.873 Table 7.2-1 and
    Table 7.3-6. No σ_SF of these tables depends on the frequency, except through the
    RMa breakpoint.

    Parameters
    ----------
    scenario : str
        One of :data:`SCENARIOS`.
    los : bool or array_like of bool
        LOS state of each link.
    frequency_ghz : float, optional
        Carrier frequency [GHz]; required for RMa LOS links (breakpoint), checked if given.
    o2i : bool or array_like of bool
        True for outdoor-to-indoor links (overrides `los`).
    d2d_m : array_like, optional
        2D distance [m]; required for RMa LOS links.
    h_bs_m, h_ut_m : array_like
        Antenna heights [m] of the RMa breakpoint (defaults 35 m and 1.5 m).

    Returns
    -------
    ndarray
        σ_SF [dB], the broadcast shape of `los`, `o2i` (and, for RMa, `d2d_m` and the
        heights).

    Raises
    ------
    ValidationError
        Unknown scenario, non-boolean states, an O2I link in InH, RMa LOS links without
        `frequency_ghz` and `d2d_m`.
    """
    scenario = _check_scenario(scenario)
    los_a = _bool_array(los, "los")
    o2i_a = _bool_array(o2i, "o2i")
    if frequency_ghz is not None:
        fc = _frequency(frequency_ghz)
    if scenario in _INH and o2i_a.any():
        raise ValidationError(f"scenario={scenario!r} has no O2I links; fix: give o2i=False")
    if scenario != "rma" or not (los_a & ~o2i_a).any():
        _shape(los=los_a, o2i=o2i_a)
        return np.asarray(_by_state(_SIGMA_SF_DB, scenario, los_a, o2i_a), dtype=np.float64)
    if frequency_ghz is None or d2d_m is None:
        raise ValidationError("RMa LOS σ_SF depends on the breakpoint (4 dB up to d_BP, 6 dB "
                              "beyond); fix: give frequency_ghz and d2d_m (and h_bs_m, h_ut_m)")
    d2d = _real_array(d2d_m, "d2d_m", "distances in metres")
    h_bs = _height(h_bs_m, "h_bs_m")
    h_ut = _height(h_ut_m, "h_ut_m")
    _shape(los=los_a, o2i=o2i_a, d2d_m=d2d, h_bs_m=h_bs, h_ut_m=h_ut)
    d_bp = 2.0 * math.pi * h_bs * h_ut * (fc * 1e9) / SPEED_OF_LIGHT_M_S
    sigma_los = np.where(d2d <= d_bp, 4.0, 6.0)
    v_nlos, v_o2i = _SIGMA_SF_DB["rma"][1:]
    return np.asarray(np.where(o2i_a, v_o2i, np.where(los_a, sigma_los, v_nlos)),
                      dtype=np.float64)


def decorrelation_distance_m(scenario: str, los: ArrayLike, *,
                             o2i: ArrayLike = False) -> np.ndarray:
    """Decorrelation distance of the shadow fading [m].

    TR 38.901 Table 7.5-6 (parts 1 and 2), TR 36.873 Table 7.3-6:

    ======== ==== ===== =====
    scenario LOS  NLOS  O2I
    ======== ==== ===== =====
    uma      37   50    7
    umi      10   13    7
    rma      37   120   120
    inh_*    10   6     —
    3d_uma   37   50    7
    3d_umi   10   13    7
    ======== ==== ===== =====

    Parameters
    ----------
    scenario : str
        One of :data:`SCENARIOS`.
    los : bool or array_like of bool
        LOS state.
    o2i : bool or array_like of bool
        True for outdoor-to-indoor links (overrides `los`); refused for InH.

    Returns
    -------
    ndarray
        Distance [m], the broadcast shape of `los` and `o2i`.
    """
    scenario = _check_scenario(scenario)
    los_a = _bool_array(los, "los")
    o2i_a = _bool_array(o2i, "o2i")
    _shape(los=los_a, o2i=o2i_a)
    if scenario in _INH and o2i_a.any():
        raise ValidationError(f"scenario={scenario!r} has no O2I links; fix: give o2i=False")
    return np.asarray(_by_state(_SF_DECORRELATION_M, scenario, los_a, o2i_a), dtype=np.float64)


# --------------------------------------------------------------------------- drop


def uma_effective_height_m(d2d_m: ArrayLike, h_ut_m: ArrayLike, u_choice: ArrayLike,
                           u_height: ArrayLike) -> np.ndarray:
    """Effective environment height h_E of a UMa link [m] (TR 38.901 Table 7.4.1-1 note 1).

    h_E = 1 m with probability ``1/(1 + C(d_2D, h_UT))``, otherwise uniform on the
    discrete set {12, 15, …, h_UT − 1.5} m, where
    ``C = 0`` for h_UT < 13 m, ``((h_UT − 13)/10)^1.5 g(d_2D)`` for 13 m ≤ h_UT ≤ 23 m,
    ``g = 0`` for d_2D ≤ 18 m and ``(5/4)(d_2D/100)³ exp(−d_2D/150)`` beyond. TR 36.873
    (Table 7.2-1 note 1, with C of Table 7.2-2) defines the same h_E for 3D-UMa. h_E is
    drawn independently for every BS-site–UT link.

    Here h_E = 1 m when ``u_choice < 1/(1 + C)``; otherwise h_E = 12 + 3k with
    ``k = floor(u_height · K)`` and K the size of the set. The set is empty for
    13 m ≤ h_UT < 13.5 m (C > 0 but h_UT − 1.5 < 12): there h_E = 12 m, as ns-3 and Sionna
    do. h_UT above 23 m is evaluated with the 13–23 m formula.

    Parameters
    ----------
    d2d_m, h_ut_m : array_like
        2D distance [m] and UT height [m].
    u_choice, u_height : array_like
        Independent uniforms in [0, 1) (1.0 is taken as the last bin).

    Returns
    -------
    ndarray
        h_E [m], the broadcast shape of the four arguments.
    """
    d = _real_array(d2d_m, "d2d_m", "distances in metres")
    h_ut = _height(h_ut_m, "h_ut_m")
    u_c = _real_array(u_choice, "u_choice", "uniforms in [0, 1)")
    u_h = _real_array(u_height, "u_height", "uniforms in [0, 1)")
    shape = _shape(d2d_m=d, h_ut_m=h_ut, u_choice=u_c, u_height=u_h)
    c = _uma_c(d, h_ut)
    n_set = _uma_set_size(h_ut)
    k = np.minimum(np.floor(u_h * n_set), n_set - 1.0)
    return _full(np.where(u_c < 1.0 / (1.0 + c), 1.0, 12.0 + 3.0 * k), shape)


def _uma_c(d: np.ndarray, h_ut: np.ndarray) -> np.ndarray:
    """C(d_2D, h_UT) of the UMa effective environment height (TR 38.901 Table 7.4.1-1 note 1)."""
    g = np.where(d <= 18.0, 0.0, 1.25 * (d / 100.0) ** 3 * np.exp(-d / 150.0))
    return np.where(h_ut < 13.0, 0.0, ((np.maximum(h_ut, 13.0) - 13.0) / 10.0) ** 1.5) * g


def _uma_set_size(h_ut: np.ndarray) -> np.ndarray:
    """|{12, 15, …, h_UT − 1.5}|, at least 1 (see :func:`uma_effective_height_m`)."""
    # the 1e-9 keeps h_UT = 22.5 (exactly 21 = 12 + 3·3) in
    return np.maximum(np.floor((h_ut - 1.5 - 12.0) / 3.0 + 1e-9) + 1.0, 1.0)


def uma_effective_height_pmf(d2d_m: ArrayLike, h_ut_m: ArrayLike
                             ) -> tuple[np.ndarray, np.ndarray]:
    """The distribution of h_E that :func:`uma_effective_height_m` draws from.

    h_E = 1 m with probability ``1/(1 + C)``; each value of {12, 15, …, h_UT − 1.5} m
    (12 m alone where that set is empty) with probability ``C / (1 + C)`` divided by
    the size of the set. For the expectation of a quantity over h_E (e.g. the mean
    received power of :class:`cellopt.radio.ThreeGPP` with ``los="expected"``).

    Parameters
    ----------
    d2d_m, h_ut_m : array_like
        2D distance [m] and UT height [m], broadcast.

    Returns
    -------
    heights : ndarray, shape (n,)
        The values h_E can take [m]: 1, then 12, 15, … up to the largest any link can
        take (only 1 when no link has C > 0, e.g. every UT below 13 m).
    probabilities : ndarray, shape (n, *broadcast shape)
        The probability of each value for each link (sums to 1 over the first axis).
    """
    d = _real_array(d2d_m, "d2d_m", "distances in metres")
    h_ut = _height(h_ut_m, "h_ut_m")
    shape = _shape(d2d_m=d, h_ut_m=h_ut)
    c = _full(np.asarray(_uma_c(d, h_ut), dtype=np.float64), shape)
    if not np.any(c > 0):
        return np.ones(1), np.ones((1, *shape))
    n_set = _full(np.asarray(_uma_set_size(h_ut), dtype=np.float64), shape)
    n_max = int(n_set[c > 0].max())
    heights = np.concatenate([[1.0], 12.0 + 3.0 * np.arange(n_max)])
    k = np.arange(n_max).reshape((n_max,) + (1,) * len(shape))
    share = np.where(k < n_set, (c / (1.0 + c)) / n_set, 0.0)
    return heights, np.concatenate([(1.0 / (1.0 + c))[None], share])


def indoor_floor_height_m(u_floors: ArrayLike, u_floor: ArrayLike) -> np.ndarray:
    """Height of an indoor UT [m]: ``h_UT = 3 (n_fl − 1) + 1.5``.

    N_fl ~ U{4, …, 8} floors in the building and n_fl ~ U{1, …, N_fl} the UT's floor
    (TR 38.901 Table 7.2-1, UMa and UMi-Street Canyon; TR 36.873 Table 6-1). Here
    ``N_fl = 4 + floor(5 u_floors)`` and ``n_fl = 1 + floor(N_fl u_floor)``.

    Parameters
    ----------
    u_floors, u_floor : array_like
        Independent uniforms in [0, 1) (1.0 is taken as the last bin).

    Returns
    -------
    ndarray
        h_UT [m] in {1.5, 4.5, …, 22.5}, the broadcast shape of the arguments.
    """
    u_n = _real_array(u_floors, "u_floors", "uniforms in [0, 1)")
    u_k = _real_array(u_floor, "u_floor", "uniforms in [0, 1)")
    shape = _shape(u_floors=u_n, u_floor=u_k)
    n_floors = np.minimum(4.0 + np.floor(5.0 * u_n), 8.0)
    floor = np.minimum(1.0 + np.floor(n_floors * u_k), n_floors)
    return _full(3.0 * (floor - 1.0) + 1.5, shape)


def indoor_distance_m(u1: ArrayLike, u2: ArrayLike | None = None,
                      max_m: float = 25.0) -> np.ndarray:
    """Horizontal distance d_2D-in of an O2I UT from the exterior wall [m].

    TR 38.901 §7.4.3.1: the minimum of two independent uniforms on [0, 25] m for UMa and
    UMi-Street Canyon, on [0, 10] m for RMa (``max_m=10``). TR 36.873 Table 7.2-1 (and
    the backward-compatible model of TR 38.901 Table 7.4.3-3): a single uniform on
    [0, 25] m — leave `u2` out.

    Parameters
    ----------
    u1 : array_like
        Uniforms in [0, 1).
    u2 : array_like, optional
        Second, independent uniforms (38.901); None for a single uniform (36.873).
    max_m : float
        Largest distance [m]; 25 by default.

    Returns
    -------
    ndarray
        d_2D-in [m], the broadcast shape of `u1` and `u2`.
    """
    top = check_real(max_m, "max_m", "max_indoor_distance_m")
    a = _real_array(u1, "u1", "uniforms in [0, 1)")
    if u2 is None:
        return top * a
    b = _real_array(u2, "u2", "uniforms in [0, 1)")
    _shape(u1=a, u2=b)
    return top * np.minimum(a, b)


def o2i_loss_db(model: str, frequency_ghz: float, d2d_in_m: ArrayLike,
                z: ArrayLike) -> np.ndarray:
    """Outdoor-to-indoor loss ``PL_tw + PL_in + σ_P z`` [dB], added to the basic path loss.

    ``"low"`` and ``"high"`` (TR 38.901 Table 7.4.3-2, with the materials of Table
    7.4.3-1, f in GHz: L_glass = 2 + 0.2 f, L_IRRglass = 23 + 0.3 f, L_concrete = 5 + 4 f):

    - low loss: ``PL_tw = 5 − 10 log10(0.3·10^(−L_glass/10) + 0.7·10^(−L_concrete/10))``,
      σ_P = 4.4 dB;
    - high loss: ``PL_tw = 5 − 10 log10(0.7·10^(−L_IRRglass/10) + 0.3·10^(−L_concrete/10))``,
      σ_P = 6.5 dB;
    - both: ``PL_in = 0.5 d_2D-in``.

    ``"36873"``: TR 36.873 Table 7.2-1 (3D-UMa/3D-UMi O2I), equal to TR 38.901 Table
    7.4.3-3 (backward compatibility, UMa and UMi below 6 GHz): ``PL_tw = 20`` dB,
    ``PL_in = 0.5 d_2D-in``, σ_P = 0 (`z` is ignored). TR 36.873 puts indoor users'
    spread in their shadowing instead, σ_SF = 7 dB (Table 7.3-6;
    ``shadow_std_db(..., o2i=True)``); :class:`~cellopt.radio.ThreeGPP` does not apply
    it, and draws their shadowing with the σ of the link's LOS or NLOS state (the module
    docstring of :mod:`cellopt.radio.propagation`).

    Which model applies is the caller's choice: TR 38.901 uses only the low-loss model in
    RMa, and a mix of low and high in UMa/UMi (e.g. 50 % each in the calibration).
    Valid 0.5–100 GHz (low/high).

    Parameters
    ----------
    model : {"low", "high", "36873"}
        Penetration model.
    frequency_ghz : float
        Carrier frequency [GHz].
    d2d_in_m : array_like
        Indoor distance [m] (:func:`indoor_distance_m`).
    z : array_like
        Standard normals of the σ_P term (one per UT).

    Returns
    -------
    ndarray
        O2I loss [dB], the broadcast shape of `d2d_in_m` and `z`.
    """
    if not isinstance(model, str) or model not in O2I_MODELS:
        raise ValidationError(f"model={model!r} is not an O2I model; fix: give one of "
                              f"{', '.join(repr(m) for m in O2I_MODELS)}")
    f = _frequency(frequency_ghz)
    d_in = _real_array(d2d_in_m, "d2d_in_m", "distances in metres")
    z_a = _real_array(z, "z", "standard normals")
    shape = _shape(d2d_in_m=d_in, z=z_a)
    l_concrete = 5.0 + 4.0 * f
    if model == "low":
        l_glass = 2.0 + 0.2 * f
        pl_tw = 5.0 - 10.0 * math.log10(0.3 * 10.0 ** (-l_glass / 10.0)
                                        + 0.7 * 10.0 ** (-l_concrete / 10.0))
        sigma_p = 4.4
    elif model == "high":
        l_irr_glass = 23.0 + 0.3 * f
        pl_tw = 5.0 - 10.0 * math.log10(0.7 * 10.0 ** (-l_irr_glass / 10.0)
                                        + 0.3 * 10.0 ** (-l_concrete / 10.0))
        sigma_p = 6.5
    else:
        pl_tw, sigma_p = 20.0, 0.0
    return _full(pl_tw + 0.5 * d_in + sigma_p * z_a, shape)
