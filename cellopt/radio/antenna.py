"""Antenna patterns: relative gain [dB] as a function of the angle off boresight."""

from __future__ import annotations

import numpy as np

from cellopt.checks import check_real

__all__ = ["angle_off_boresight_deg", "sector_gain_db"]


def sector_gain_db(
    angle_deg: np.ndarray, theta_3db_deg: float = 70.0, max_attenuation_db: float = 25.0
) -> np.ndarray:
    """Horizontal 3-sector pattern of TR 36.814 Table A.2.1.1-2: ``−min(12 (θ/θ_3dB)², A_m)``.

    Parameters
    ----------
    angle_deg : ndarray
        Angle off boresight [degrees], any shape, any sign.
    theta_3db_deg : float
        Half-power beamwidth (70°).
    max_attenuation_db : float
        Front-to-back floor A_m (25 dB).

    Returns
    -------
    ndarray
        Gain relative to boresight [dB], ≤ 0, same shape.
    """
    # a zero beamwidth would give 0/0 = NaN on boresight
    check_real(theta_3db_deg, "theta_3db_deg", warn=False)
    check_real(max_attenuation_db, "max_attenuation_db", warn=False)
    a = np.asarray(angle_deg, dtype=float)
    return -np.minimum(12.0 * (a / theta_3db_deg) ** 2, max_attenuation_db)


def angle_off_boresight_deg(bearing_deg: np.ndarray, azimuth_deg: np.ndarray) -> np.ndarray:
    """Signed angle from the boresight `azimuth_deg` to `bearing_deg`, in [−180, 180)."""
    return (np.asarray(bearing_deg) - np.asarray(azimuth_deg) + 180.0) % 360.0 - 180.0
