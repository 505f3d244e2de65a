"""Outdoor-to-indoor (O2I) loss: an indoor UT's distance from the exterior wall and the
building penetration loss (TR 38.901 §7.4.3.1, TR 36.873 Table 7.2-1)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from cellopt.checks import check_real
from cellopt.errors import ValidationError
from cellopt.radio.tr38901.validity import _frequency, _full, _real_array, _shape

__all__ = ["O2I_MODELS", "indoor_distance_m", "o2i_loss_db"]

#: O2I building-penetration models of :func:`o2i_loss_db`.
O2I_MODELS: tuple[str, ...] = ("low", "high", "36873")


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
