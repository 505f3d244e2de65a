"""Probability of a LOS link (TR 38.901 Table 7.4.2-1, TR 36.873 Table 7.2-2)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cellopt.radio.tr38901.validity import _UMA_LIKE, _check_scenario, _full, _height, _real_array, _shape

__all__ = ["los_probability"]


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
        One of :data:`~cellopt.radio.tr38901.SCENARIOS`.
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
