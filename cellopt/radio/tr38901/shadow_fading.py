"""Shadow fading: its standard deviation σ_SF and decorrelation distance by LOS state
(TR 38.901 Tables 7.4.1-1 and 7.5-6, TR 36.873 Table 7.3-6)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from cellopt.errors import ValidationError
from cellopt.radio.tr38901.pathloss import SPEED_OF_LIGHT_M_S
from cellopt.radio.tr38901.validity import (
    _INH,
    _bool_array,
    _check_scenario,
    _frequency,
    _height,
    _real_array,
    _shape,
)

__all__ = ["decorrelation_distance_m", "shadow_std_db"]

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
        One of :data:`~cellopt.radio.tr38901.SCENARIOS`.
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
        One of :data:`~cellopt.radio.tr38901.SCENARIOS`.
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
