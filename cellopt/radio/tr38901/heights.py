"""Random heights of the drop: UMa's effective environment height h_E and indoor UTs'
floors (TR 38.901 Tables 7.4.1-1 and 7.2-1, TR 36.873 Tables 7.2-1 and 6-1)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cellopt.radio.tr38901.validity import _full, _height, _real_array, _shape

__all__ = ["indoor_floor_height_m", "uma_effective_height_m", "uma_effective_height_pmf"]


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
