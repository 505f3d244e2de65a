"""3-D antenna patterns: the TR 38.901 element, local angles of a tilted antenna, tilted panels.

The 2-D sector pattern of :mod:`cellopt.radio.antenna` depends on the horizontal angle off
boresight only. This module adds the vertical dimension, as in TR 36.873 §7.1 (3-D channel
model for LTE) and TR 38.901 §7.1 and §7.3 (NR, 0.5–100 GHz):

- :func:`element_gain_db`: the gain of one antenna element toward a direction given in
  the antenna's local coordinates (TR 38.901 Table 7.3-1, identical to TR 36.873
  Table 7.1-1);
- :func:`local_angles_deg`: the local angles (θ', φ') toward a user, from the offset
  between antenna and user in the global frame, the antenna's compass bearing and its
  mechanical downtilt (TR 38.901 §7.1.3);
- :func:`panel_gain_db`: the gain of a uniform planar array of rows × columns such
  elements fed as one beam, whose vertical phase weights steer the beam to an electrical
  downtilt (TR 36.873 §7.1.1, one TXRU over the whole panel);
- :func:`antenna_gain_db`: the two chained, per link.

Every function takes arrays of any broadcastable shapes (one value per link, per user,
per cell, or a scalar for all) and loops over neither links nor array elements.

Conventions
-----------
Global frame (GCS): x east, y north, z up, in metres, with the antenna at the origin; a
link's offset ``(dx_m, dy_m, dz_m)`` points from the antenna to the user.

Local frame (LCS, TR 38.901 §7.1.1): x' is the boresight, z' the panel's "up" (the
elements lie in the y'–z' plane), y' completes a right-handed frame and so points to the
*left* of the boresight seen from above. The local zenith angle θ' ∈ [0°, 180°] is
measured from z' (θ' = 90° on the boresight plane, θ' > 90° below it); the local azimuth
φ' ∈ [−180°, 180°) is measured from x' toward y', i.e. **counter-clockwise seen from
above**: φ' > 0 left of the boresight. This is the opposite sign of
:func:`cellopt.radio.antenna.angle_off_boresight_deg` (clockwise, compass style); both
patterns here are symmetric in φ', so the sign changes the reported angle, not the gain.

Orientation: ``bearing_deg`` is the compass bearing of the boresight, clockwise from
north (cellopt's ``azimuth_deg`` column); TR 38.901's bearing α is counter-clockwise from
the x axis (east), so ``α = 90° − bearing_deg``. ``mechanical_tilt_deg`` is TR 38.901's β
(rotation about the rotated y axis); positive tilts the boresight *below* the horizon.
The slant γ is 0. ``electrical_tilt_deg`` is the tilt the phase weights add inside the
panel, also positive downwards: TR 36.873's θ_etilt (a zenith angle) is
``90° + electrical_tilt_deg``, so "θ_etilt = 102°" is a 12° electrical downtilt. A panel's
beam then points (for an untilted azimuth) at ``mechanical + electrical`` degrees below
the horizon.

Calibration antennas (:data:`CALIBRATION_PANELS`)
-------------------------------------------------
- TR 36.873 §8.2 phase-1 calibration (3D-UMa ISD 500 m, 3D-UMi ISD 200 m, 2 GHz),
  configuration "K = M = 10": one column of 10 vertically polarised elements at
  d_V = 0.5 λ, all on one TXRU, 12° electrical downtilt (θ_etilt = 102°), no mechanical
  tilt; peak gain 8 + 10 = 18 dBi.
- The same study's "K = M = 1": a single element. With K = 1 the weight of
  TR 36.873 §7.1.1 is w = 1, so an electrical tilt has no effect and the element is not
  tilted (QuaDRiGa's calibration script models it untilted); peak gain 8 dBi at the
  horizon.
- TR 38.901 §7.8.1 large-scale calibration (Table 7.8-1), configuration 1:
  (M, N, P, M_g, N_g) = (10, 1, 1, 1, 1), d_V = 0.5 λ, all elements on one port,
  electrical tilt 102° (12° down) for UMa and UMi, 110° (20° down) for indoor office;
  mechanical tilt 0 (boresight horizontal).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cellopt.checks import check_count, check_real, is_real, shown
from cellopt.errors import ValidationError
from cellopt.parameters import LIMITS

__all__ = [
    "CALIBRATION_PANELS",
    "TR38901_ELEMENT",
    "CalibrationPanel",
    "ElementPattern",
    "antenna_gain_db",
    "element_gain_db",
    "local_angles_deg",
    "panel_gain_db",
]

#: Power array factors below this (a gain 300 dB under the element's) are reported as it:
#: exact nulls of the array would otherwise give −inf dB (and a divide-by-zero warning).
ARRAY_FACTOR_FLOOR: float = 1e-30

#: Below this |sin(ψ/2)| the Dirichlet kernel is replaced by its limit (the element count).
_TINY_SINE = 1e-150


@dataclasses.dataclass(frozen=True)
class ElementPattern:
    """Parameters of the TR 38.901 Table 7.3-1 element pattern (see :func:`element_gain_db`).

    Attributes
    ----------
    theta_3db_deg : float
        Vertical half-power beamwidth θ_3dB [degrees] (65°).
    phi_3db_deg : float
        Horizontal half-power beamwidth φ_3dB [degrees] (65°).
    sla_v_db : float
        Side-lobe level limit of the vertical cut SLA_V [dB] (30 dB).
    a_max_db : float
        Front-to-back ratio A_max [dB] (30 dB): the largest attenuation.
    max_gain_dbi : float
        Directional gain of the element G_E,max [dBi] (8 dBi).

    Raises
    ------
    ValidationError
        A value that is not a finite number in the catalogue's range (beamwidths in
        (0, 360] degrees, attenuations in [0, 200] dB, gain in [−50, 50] dBi).
    """

    theta_3db_deg: float = 65.0
    phi_3db_deg: float = 65.0
    sla_v_db: float = 30.0
    a_max_db: float = 30.0
    max_gain_dbi: float = 8.0

    def __post_init__(self) -> None:
        kinds = {"theta_3db_deg": "theta_3db_deg", "phi_3db_deg": "theta_3db_deg",
                 "sla_v_db": "max_attenuation_db", "a_max_db": "max_attenuation_db",
                 "max_gain_dbi": "antenna_gain_dbi"}
        for field, kind in kinds.items():
            value = check_real(getattr(self, field), field, kind, warn=False)
            object.__setattr__(self, field, value)


#: The element of TR 38.901 Table 7.3-1 and TR 36.873 Table 7.1-1: 65° beamwidths,
#: SLA_V = A_max = 30 dB, 8 dBi.
TR38901_ELEMENT = ElementPattern()


@dataclasses.dataclass(frozen=True)
class CalibrationPanel:
    """A base-station antenna of a 3GPP calibration set-up (see :data:`CALIBRATION_PANELS`).

    Attributes
    ----------
    rows, columns : int
        Elements per column (M) and per row (N), all fed as one beam.
    electrical_tilt_deg : float
        Downtilt of the vertical phase weights [degrees], positive below the horizon.
    mechanical_tilt_deg : float
        Downtilt of the panel itself [degrees], positive below the horizon.
    v_spacing_wavelengths, h_spacing_wavelengths : float
        Element spacings d_V and d_H [wavelengths].
    source : str
        Where the configuration is specified.
    """

    rows: int
    columns: int
    electrical_tilt_deg: float
    mechanical_tilt_deg: float
    v_spacing_wavelengths: float
    h_spacing_wavelengths: float
    source: str


#: Base-station antennas of the 3GPP large-scale calibrations, by name. Pass their fields
#: to :func:`antenna_gain_db`; the module docstring gives the reasons for each value.
CALIBRATION_PANELS: dict[str, CalibrationPanel] = {
    "tr36873_k10": CalibrationPanel(10, 1, 12.0, 0.0, 0.5, 0.5,
                                    "TR 36.873 §7.1.1, §8.2 phase 1: K = M = 10, θ_etilt = 102°"),
    "tr36873_k1": CalibrationPanel(1, 1, 0.0, 0.0, 0.5, 0.5,
                                   "TR 36.873 §7.1.1, §8.2 phase 1: K = M = 1 (w = 1)"),
    "tr38901_uma_umi": CalibrationPanel(10, 1, 12.0, 0.0, 0.5, 0.5,
                                        "TR 38.901 Table 7.8-1 config 1, UMa/UMi: tilt 102°"),
    "tr38901_indoor": CalibrationPanel(10, 1, 20.0, 0.0, 0.5, 0.5,
                                       "TR 38.901 Table 7.8-1 config 1, indoor: tilt 110°"),
}


# ----------------------------------------------------------------------------- checks


def _real_array(value: Any, name: str, fix: str, *, low: float = -math.inf,
                high: float = math.inf, allow_nan: bool = False,
                unit: str = "deg") -> np.ndarray:
    """`value` as a float array, refused unless every entry is a finite number in [low, high].

    One pass of vectorized tests; the message names the argument, counts the bad entries,
    shows the first one and gives the fix. NaN entries pass when `allow_nan` is set.
    """
    if isinstance(value, (bool, np.bool_)) or isinstance(value, str):
        raise ValidationError(f"{name}={shown(value)} is a {type(value).__name__}, not a "
                              f"number; fix: {fix}")
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):  # ragged nested sequences
        raise ValidationError(f"{name} is not a numeric array; fix: {fix}") from None
    if array.dtype.kind not in "iuf":
        raise ValidationError(f"{name} has dtype {array.dtype}, not a real number type; "
                              f"fix: {fix}")
    array = array.astype(float, copy=False)
    if array.size == 0:
        return array
    bad = ~np.isfinite(array) | (array < low) | (array > high)
    if allow_nan:
        bad &= ~np.isnan(array)
    if bad.any():
        first = np.unravel_index(int(np.argmax(bad)), array.shape)
        where = f"index {first[0] if len(first) == 1 else first}" if array.ndim else "value"
        interval = f"[{low:g}, {high:g}] {unit}".rstrip()
        raise ValidationError(f"{name} has {int(bad.sum())} value(s) that are not finite or "
                              f"lie outside {interval} (first: {where} = "
                              f"{array[first]:.6g}); fix: {fix}")
    return array


def _tilt(value: Any, name: str, stacklevel: int) -> float | np.ndarray:
    """A tilt [degrees] checked against ``LIMITS["tilt_deg"]``: a float, or a float array.

    `stacklevel` counts the frames from this function up to the code a warning blames:
    2 when a public function calls this one, so that the warning points at its caller.
    """
    if np.ndim(value) == 0 and not isinstance(value, (str, bytes)):
        scalar = value.item() if isinstance(value, np.ndarray) else value
        if is_real(scalar) or isinstance(scalar, (bool, np.bool_)):
            return check_real(scalar, name, "tilt_deg", stacklevel=stacklevel + 2)
    limit = LIMITS["tilt_deg"]
    tilt = _real_array(value, name, limit.fix, low=limit.low, high=limit.high)
    if limit.usual is not None and tilt.size:
        lo, hi = limit.usual
        if tilt.min() < lo or tilt.max() > hi:
            warnings.warn(f"{name} has values outside the usual range [{lo:g}, {hi:g}] deg "
                          f"(from {tilt.min():.6g} to {tilt.max():.6g}; legal, but check the "
                          f"unit): {limit.fix}", UserWarning, stacklevel=stacklevel + 1)
    return tilt


def _counts(value: Any, name: str, kind: str) -> int | np.ndarray:
    """Rows or columns: an int (:func:`check_count`), or an integer array with every entry ≥ 1."""
    limit = LIMITS[kind]
    minimum = int(limit.low)
    if np.ndim(value) == 0:
        scalar = value.item() if isinstance(value, np.ndarray) else value
        return check_count(scalar, name, fix=limit.fix, minimum=minimum)
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        raise ValidationError(f"{name} is not an integer array; fix: {limit.fix}") from None
    if array.dtype.kind not in "iu":
        raise ValidationError(f"{name} has dtype {array.dtype}, not an integer type; fix: "
                              f"{limit.fix} (e.g. np.asarray({name}, dtype=int))")
    if array.size and array.min() < minimum:
        bad = array < minimum
        first = np.unravel_index(int(np.argmax(bad)), array.shape)
        where = first[0] if len(first) == 1 else first
        raise ValidationError(f"{name} has {int(bad.sum())} value(s) below {minimum} (first: "
                              f"index {where} = {array[first]}); fix: {limit.fix}")
    return array


def _spacing(value: Any, name: str) -> float:
    """An element spacing [wavelengths]: a finite float > 0."""
    fix = "give the element spacing in wavelengths, > 0 (0.5 in TR 36.873 and TR 38.901)"
    if not is_real(value):
        raise ValidationError(f"{name}={shown(value)} is a {type(value).__name__}, not a "
                              f"number; fix: {fix}")
    v = float(value)
    if not (math.isfinite(v) and v > 0.0):
        raise ValidationError(f"{name}={v} is not a finite spacing > 0; fix: {fix}")
    return v


def _local_angles(zenith_deg: ArrayLike, azimuth_deg: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Local angles checked: zenith in [0, 180] degrees, azimuth finite."""
    zenith = _real_array(zenith_deg, "zenith_deg", "give the local zenith angle in degrees "
                         "in [0, 180] (90 on the boresight plane)", low=0.0, high=180.0)
    azimuth = _real_array(azimuth_deg, "azimuth_deg", "give the local azimuth in degrees "
                          "(0 on boresight), a finite number")
    return zenith, azimuth


# ----------------------------------------------------------------------------- patterns


def _element_gain(zenith: np.ndarray, azimuth: np.ndarray, e: ElementPattern) -> np.ndarray:
    """Table 7.3-1 on checked float arrays (no validation)."""
    phi = (azimuth + 180.0) % 360.0 - 180.0
    a_v = -np.minimum(12.0 * ((zenith - 90.0) / e.theta_3db_deg) ** 2, e.sla_v_db)
    a_h = -np.minimum(12.0 * (phi / e.phi_3db_deg) ** 2, e.a_max_db)
    return e.max_gain_dbi - np.minimum(-(a_v + a_h), e.a_max_db)


def element_gain_db(zenith_deg: ArrayLike, azimuth_deg: ArrayLike, *,
                    theta_3db_deg: float = 65.0, phi_3db_deg: float = 65.0,
                    sla_v_db: float = 30.0, a_max_db: float = 30.0,
                    max_gain_dbi: float = 8.0) -> np.ndarray:
    """Gain of one antenna element, TR 38.901 Table 7.3-1 (= TR 36.873 Table 7.1-1).

    ``A_V = −min(12 ((θ' − 90°)/θ_3dB)², SLA_V)``, ``A_H = −min(12 (φ'/φ_3dB)², A_max)``,
    gain ``G_max − min(−(A_V + A_H), A_max)``.

    Parameters
    ----------
    zenith_deg : array_like
        Local zenith angle θ' [degrees] in [0, 180]: 90 on the boresight plane, > 90
        below it. Any shape broadcastable with `azimuth_deg`.
    azimuth_deg : array_like
        Local azimuth φ' [degrees] from the boresight; any finite value (wrapped to
        [−180, 180)).
    theta_3db_deg, phi_3db_deg : float
        Vertical and horizontal half-power beamwidths [degrees] (65°).
    sla_v_db : float
        Vertical side-lobe limit SLA_V [dB] (30 dB).
    a_max_db : float
        Front-to-back ratio A_max [dB] (30 dB).
    max_gain_dbi : float
        Peak gain G_E,max [dBi] (8 dBi).

    Returns
    -------
    ndarray
        Gain [dBi], float64, of the broadcast shape of the angles (a numpy scalar for
        scalar angles); between
        ``max_gain_dbi − a_max_db`` and ``max_gain_dbi``.

    Raises
    ------
    ValidationError
        Angles that are not finite numbers or a zenith outside [0, 180]; pattern parameters
        outside the catalogue's range.
    """
    element = ElementPattern(theta_3db_deg, phi_3db_deg, sla_v_db, a_max_db, max_gain_dbi)
    zenith, azimuth = _local_angles(zenith_deg, azimuth_deg)
    return _element_gain(zenith, azimuth, element)


def _local(dx: np.ndarray, dy: np.ndarray, dz: np.ndarray, bearing: np.ndarray,
           beta: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TR 38.901 eq. 7.1-7/7.1-8 with γ = 0 on checked arrays (see :func:`local_angles_deg`)."""
    omni = np.isnan(bearing)
    b = np.radians(np.where(omni, 0.0, bearing))
    # rotate by −α about z, α = 90° − bearing: cos α = sin b, sin α = cos b
    rho = np.hypot(dx, dy)
    x1 = np.sin(b) * dx + np.cos(b) * dy
    y1 = np.sin(b) * dy - np.cos(b) * dx
    # an omni antenna faces every user: rotate in the vertical plane that contains the user
    x1 = np.where(omni, rho, x1)
    y1 = np.where(omni, 0.0, y1)
    # rotate by −β about the new y axis: boresight (cos β, 0, −sin β) → (1, 0, 0)
    cb, sb = np.cos(np.radians(beta)), np.sin(np.radians(beta))
    x2 = cb * x1 - sb * dz
    z2 = sb * x1 + cb * dz
    zenith = np.degrees(np.arctan2(np.hypot(x2, y1), z2))
    azimuth = np.degrees(np.arctan2(y1, x2))
    azimuth = (azimuth + 180.0) % 360.0 - 180.0
    if omni.any():
        conical = np.clip(np.degrees(np.arctan2(rho, dz)) - beta, 0.0, 180.0)
        zenith = np.where(omni, conical, zenith)
        azimuth = np.where(omni, 0.0, azimuth)
    here = (rho == 0.0) & (dz == 0.0)  # the user at the antenna: take the boresight
    if here.any():
        zenith = np.where(here, 90.0, zenith)
        azimuth = np.where(here, 0.0, azimuth)
    return zenith, azimuth


def _offsets(dx_m: ArrayLike, dy_m: ArrayLike, dz_m: ArrayLike) -> list[np.ndarray]:
    fix = "give the offset from the antenna to the user in metres (east, north, up), finite"
    return [_real_array(v, n, fix, unit="m")
            for v, n in ((dx_m, "dx_m"), (dy_m, "dy_m"), (dz_m, "dz_m"))]


def _bearing(bearing_deg: ArrayLike) -> np.ndarray:
    return _real_array(bearing_deg, "bearing_deg", "give the boresight's compass bearing in "
                       "degrees clockwise from north, or NaN for an omni antenna",
                       allow_nan=True)


def local_angles_deg(dx_m: ArrayLike, dy_m: ArrayLike, dz_m: ArrayLike,
                     bearing_deg: ArrayLike, mechanical_tilt_deg: ArrayLike
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Local zenith θ' and azimuth φ' of users seen from a rotated antenna (TR 38.901 §7.1.3).

    The direction ``(dx, dy, dz)`` is expressed in the antenna's local frame, obtained from
    the global one by the rotations of TR 38.901 eq. 7.1-1 to 7.1-8 with bearing
    ``α = 90° − bearing_deg`` (TR 38.901 counts α counter-clockwise from east), downtilt
    ``β = mechanical_tilt_deg`` and slant ``γ = 0``. See the module docstring for the
    frames and signs.

    Parameters
    ----------
    dx_m, dy_m, dz_m : array_like
        Offset from the antenna to the user [m]: east, north, up (``user − antenna``;
        ``dz_m = h_user − h_antenna`` is negative for a user below a mast). Any
        broadcastable shapes, e.g. (n_users, 1) against (1, n_cells), or one per link.
    bearing_deg : array_like
        Compass bearing of the boresight [degrees], clockwise from north (cellopt's
        ``azimuth_deg``); any finite value, or NaN for an omni antenna. Broadcastable.
    mechanical_tilt_deg : array_like
        Downtilt of the antenna [degrees] in [−90, 90], positive below the horizon: a float
        or a broadcastable array.

    Returns
    -------
    zenith_deg : ndarray
        Local zenith angle θ' [degrees] in [0, 180], float64, of the broadcast shape (a
        numpy scalar for scalar inputs): 90 on the boresight plane, > 90 below it.
    azimuth_deg : ndarray
        Local azimuth φ' [degrees] in [−180, 180), same shape: 0 on the boresight,
        positive to the left of it seen from above (counter-clockwise, TR 38.901's φ'), the
        opposite sign of :func:`~cellopt.radio.antenna.angle_off_boresight_deg`.

    Raises
    ------
    ValidationError
        Offsets or bearings that are not finite (NaN bearings excepted), tilts that are not
        finite or outside [−90, 90] degrees. A tilt outside the usual [−20, 45] degrees
        warns (:class:`UserWarning`).

    Notes
    -----
    Omni antennas (NaN bearing) are symmetric about the vertical: the antenna faces every
    user, ``φ' = 0``, and the tilt rotates only in the vertical plane through the user,
    ``θ' = θ − β`` (a conical tilt) clipped to [0°, 180°], θ being the global zenith
    angle. A user exactly at the antenna (zero offset) is put on the boresight
    (θ' = 90°, φ' = 0°).
    """
    dx, dy, dz = _offsets(dx_m, dy_m, dz_m)
    bearing = _bearing(bearing_deg)
    beta = _tilt(mechanical_tilt_deg, "mechanical_tilt_deg", stacklevel=2)
    return _local(dx, dy, dz, bearing, beta)


def _dirichlet_power(psi: np.ndarray, n: int | np.ndarray) -> np.ndarray:
    """``|Σ_{k<n} e^{jkψ}|² / n`` = ``sin²(nψ/2) / (n sin²(ψ/2))``, n at ψ ≡ 0 (mod 2π)."""
    psi = psi - 2.0 * np.pi * np.round(psi / (2.0 * np.pi))  # in [−π, π]: exact near 0
    half = 0.5 * psi
    den = np.sin(half)
    num = np.sin(n * half)
    shape = np.broadcast_shapes(np.shape(num), np.shape(den))
    ratio = np.array(np.broadcast_to(np.asarray(n, dtype=float), shape))
    np.divide(num, den, out=ratio, where=np.abs(den) > _TINY_SINE)
    return ratio**2 / n


def _panel_gain(zenith: np.ndarray, azimuth: np.ndarray, rows: int | np.ndarray,
                columns: int | np.ndarray, etilt: float | np.ndarray, d_v: float, d_h: float,
                element: ElementPattern) -> np.ndarray:
    """Panel gain on checked arrays (see :func:`panel_gain_db`)."""
    theta = np.radians(zenith)
    power = 1.0  # a single row or column contributes a factor 1: not computed
    if np.any(np.asarray(rows) > 1):
        # vertical: element m at z' = m d_V λ, weight e^{−j2π m d_V cos θ_etilt} / √M with
        # cos θ_etilt = cos(90° + tilt) = −sin(tilt): the phase progression is ψ_V below
        psi_v = 2.0 * np.pi * d_v * (np.cos(theta) + np.sin(np.radians(etilt)))
        power = power * _dirichlet_power(psi_v, rows)
    if np.any(np.asarray(columns) > 1):
        # horizontal: element n at y' = n d_H λ, uniform weights 1/√N (beam on the boresight)
        psi_h = 2.0 * np.pi * d_h * np.sin(theta) * np.sin(np.radians(azimuth))
        power = power * _dirichlet_power(psi_h, columns)
    array_db = 10.0 * np.log10(np.maximum(power, ARRAY_FACTOR_FLOOR))
    return _element_gain(zenith, azimuth, element) + array_db


def panel_gain_db(zenith_deg: ArrayLike, azimuth_deg: ArrayLike, *, rows: ArrayLike,
                  columns: ArrayLike, electrical_tilt_deg: ArrayLike,
                  v_spacing_wavelengths: float = 0.5, h_spacing_wavelengths: float = 0.5,
                  element: ElementPattern = TR38901_ELEMENT) -> np.ndarray:
    """Gain of a rows × columns panel fed as one beam, electrically tilted (TR 36.873 §7.1.1).

    The elements (pattern `element`) sit on a rectangular grid in the panel's y'–z' plane,
    ``rows`` (M) high at spacing d_V and ``columns`` (N) wide at spacing d_H, and are all
    fed by one transceiver unit. The weight of element (m, n) is ``w_m^V w_n^H`` with
    ``w_m^V = e^{−j 2π m d_V cos θ_etilt} / √M`` (the sub-array weights of TR 36.873 §7.1.1
    with K = M, θ_etilt = 90° + electrical tilt) and ``w_n^H = 1/√N`` (the horizontal beam on
    the boresight). The gain toward local (θ', φ') is

    ``G = A_E(θ', φ') + 10 log10 |Σ_{m,n} w_m^V w_n^H e^{jψ_{m,n}}|²``,
    ``ψ_{m,n} = 2π (m d_V cos θ' + n d_H sin θ' sin φ')``

    so a lossless panel peaks at ``A_E + 10 log10(M N)`` toward the electrical tilt on the
    boresight azimuth (TR 38.901's power normalisation: each element radiates its share).
    The double sum factors into two geometric series, evaluated in closed form
    (``sin²(Mψ/2) / (M sin²(ψ/2))``), so per-link `rows` and `columns` cost no loop over
    elements or panel shapes.

    Parameters
    ----------
    zenith_deg, azimuth_deg : array_like
        Local angles θ' ∈ [0, 180] and φ' [degrees] (see :func:`local_angles_deg`), any
        broadcastable shapes.
    rows, columns : int or array_like of int
        Elements per column (M) and per row (N), ≥ 1: an int, or an integer array
        broadcastable with the angles (one per link).
    electrical_tilt_deg : float or array_like
        Electrical downtilt [degrees] in [−90, 90], positive below the boresight plane:
        a float or a broadcastable array. It has no effect when ``rows == 1``.
    v_spacing_wavelengths, h_spacing_wavelengths : float
        Element spacings d_V and d_H [wavelengths] (0.5).
    element : ElementPattern
        Element pattern (:data:`TR38901_ELEMENT`).

    Returns
    -------
    ndarray
        Gain [dBi], float64, of the broadcast shape of all array arguments (a numpy scalar
        for scalar arguments). Exact nulls
        of the array come out :data:`ARRAY_FACTOR_FLOOR` (−300 dB) below the element gain.

    Raises
    ------
    ValidationError
        Non-finite angles or a zenith outside [0, 180]; rows or columns that are not whole
        numbers ≥ 1 (integer arrays only; 3.0 is refused); a tilt outside [−90, 90]
        (a tilt outside [−20, 45] warns); spacings that are not finite numbers > 0.
    """
    zenith, azimuth = _local_angles(zenith_deg, azimuth_deg)
    m = _counts(rows, "rows", "panel_rows")
    n = _counts(columns, "columns", "panel_columns")
    etilt = _tilt(electrical_tilt_deg, "electrical_tilt_deg", stacklevel=2)
    d_v = _spacing(v_spacing_wavelengths, "v_spacing_wavelengths")
    d_h = _spacing(h_spacing_wavelengths, "h_spacing_wavelengths")
    return _panel_gain(zenith, azimuth, m, n, etilt, d_v, d_h, element)


def antenna_gain_db(dx_m: ArrayLike, dy_m: ArrayLike, dz_m: ArrayLike, bearing_deg: ArrayLike,
                    mechanical_tilt_deg: ArrayLike, electrical_tilt_deg: ArrayLike,
                    rows: ArrayLike, columns: ArrayLike, *,
                    v_spacing_wavelengths: float = 0.5, h_spacing_wavelengths: float = 0.5,
                    element: ElementPattern = TR38901_ELEMENT) -> np.ndarray:
    """Gain of each link's antenna toward its user: :func:`local_angles_deg`, :func:`panel_gain_db`.

    Parameters
    ----------
    dx_m, dy_m, dz_m : array_like
        Offset from the antenna to the user [m] (east, north, up), broadcastable shapes.
    bearing_deg : array_like
        Boresight compass bearing [degrees] clockwise from north; NaN for an omni antenna.
    mechanical_tilt_deg, electrical_tilt_deg : float or array_like
        Mechanical and electrical downtilts [degrees] in [−90, 90], positive down.
    rows, columns : int or array_like of int
        Panel shape (M × N elements, ≥ 1): ints, or integer arrays (one per link).
    v_spacing_wavelengths, h_spacing_wavelengths : float
        Element spacings [wavelengths] (0.5).
    element : ElementPattern
        Element pattern (:data:`TR38901_ELEMENT`).

    Returns
    -------
    ndarray
        Gain [dBi], float64, of the broadcast shape of all array arguments (a numpy scalar
        for scalar arguments).

    Raises
    ------
    ValidationError
        As :func:`local_angles_deg` and :func:`panel_gain_db`.

    Examples
    --------
    The TR 36.873 "K = M = 10" panel of a 25 m macro, toward a 1.5 m user 200 m east of
    an east-facing sector:

    >>> p = CALIBRATION_PANELS["tr36873_k10"]
    >>> g = antenna_gain_db(200.0, 0.0, 1.5 - 25.0, 90.0, p.mechanical_tilt_deg,
    ...                     p.electrical_tilt_deg, p.rows, p.columns)
    >>> round(float(g), 1)
    14.7
    """
    dx, dy, dz = _offsets(dx_m, dy_m, dz_m)
    bearing = _bearing(bearing_deg)
    beta = _tilt(mechanical_tilt_deg, "mechanical_tilt_deg", stacklevel=2)
    m = _counts(rows, "rows", "panel_rows")
    n = _counts(columns, "columns", "panel_columns")
    etilt = _tilt(electrical_tilt_deg, "electrical_tilt_deg", stacklevel=2)
    d_v = _spacing(v_spacing_wavelengths, "v_spacing_wavelengths")
    d_h = _spacing(h_spacing_wavelengths, "h_spacing_wavelengths")
    zenith, azimuth = _local(dx, dy, dz, bearing, beta)
    return _panel_gain(zenith, azimuth, m, n, etilt, d_v, d_h, element)
