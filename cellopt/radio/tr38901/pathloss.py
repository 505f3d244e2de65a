"""Basic path loss of each scenario and its LOS breakpoint distance (TR 38.901 Table
7.4.1-1, TR 36.873 Table 7.2-1)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cellopt.checks import check_real
from cellopt.errors import ValidationError
from cellopt.radio.tr38901.validity import (
    _INH,
    _UMA_LIKE,
    _bool_array,
    _check_scenario,
    _frequency,
    _full,
    _height,
    _is_value,
    _real_array,
    _rma_geometry,
    _shape,
    check_validity,
)

__all__ = ["SPEED_OF_LIGHT_M_S", "breakpoint_distance_m", "pathloss_db"]

#: Propagation velocity of the breakpoint formulas [m/s] (TR 38.901 Table 7.4.1-1 note 1).
SPEED_OF_LIGHT_M_S: float = 3.0e8


def breakpoint_distance_m(scenario: str, h_bs_m: ArrayLike, h_ut_m: ArrayLike,
                          frequency_ghz: float, *, h_e_m: ArrayLike = 1.0) -> np.ndarray:
    """Breakpoint distance of the LOS path loss [m].

    UMa, UMi, 3D-UMa, 3D-UMi (TR 38.901 Table 7.4.1-1 note 1, TR 36.873 Table 7.2-1 note
    1): ``d'_BP = 4 h'_BS h'_UT f_c / c`` with ``h' = h − h_E`` (h_E = 1 m for UMi and
    3D-UMi; for UMa and 3D-UMa the per-link `h_e_m`, see
    :func:`~cellopt.radio.tr38901.uma_effective_height_m`).
    RMa (note 5): ``d_BP = 2π h_BS h_UT f_c / c``. f_c in Hz, c = 3.0e8 m/s.

    Parameters
    ----------
    scenario : str
        One of :data:`~cellopt.radio.tr38901.SCENARIOS` except the InH ones (their path
        loss has no breakpoint).
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
    the ranges above (:data:`~cellopt.radio.tr38901.VALIDITY`) warns once per call,
    counting the links outside; the formulas are then evaluated as written (no
    clamping). Raising d_2D to 10 m (d_3D to 1 m indoors) is the caller's job. The
    optional single-slope UMa/UMi/InH NLOS formulas are not provided.

    Parameters
    ----------
    scenario : str
        One of :data:`~cellopt.radio.tr38901.SCENARIOS`.
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
        :func:`~cellopt.radio.tr38901.uma_effective_height_m`); 1 m by default. Other
        scenarios refuse any value but 1.0 (their h_E is fixed at 1 m, or unused).
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
