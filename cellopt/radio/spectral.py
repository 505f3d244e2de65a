"""Spectral-efficiency maps: SINR (linear) in, bit/s/Hz out."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cellopt.errors import ValidationError
from cellopt.parameters import check_real

__all__ = ["SPECTRAL_EFFICIENCY", "get_efficiency", "shannon", "shannon_gap", "tr36942"]


def shannon(sinr: np.ndarray) -> np.ndarray:
    """Shannon capacity ``log2(1 + γ)`` [bit/s/Hz] of a linear SINR γ."""
    return np.log2(1.0 + np.asarray(sinr, dtype=float))


def shannon_gap(
    sinr: np.ndarray, gap_db: float = 3.0, max_bps_hz: float = np.inf
) -> np.ndarray:
    """Shannon with an SNR gap: ``min(log2(1 + γ / Γ), max_bps_hz)`` [bit/s/Hz].

    Parameters
    ----------
    sinr : ndarray
        Linear SINR γ.
    gap_db : float
        The gap Γ [dB] to capacity of practical coding and modulation.
    max_bps_hz : float
        Cap of the highest modulation and coding scheme (inf: none).
    """
    gap = 10.0 ** (check_real(gap_db, "gap_db") / 10.0)
    check_real(max_bps_hz, "max_bps_hz")
    return np.minimum(np.log2(1.0 + np.asarray(sinr, dtype=float) / gap), max_bps_hz)


def tr36942(
    sinr: np.ndarray,
    attenuation: float = 0.6,
    min_sinr_db: float = -10.0,
    max_bps_hz: float = 4.4,
) -> np.ndarray:
    """Truncated Shannon of TR 36.942 §A.2 (downlink): ``0.6 log2(1 + γ)``.

    Zero below −10 dB SINR, capped at 4.4 bit/s/Hz.

    Parameters
    ----------
    sinr : ndarray
        Linear SINR γ.
    attenuation, min_sinr_db, max_bps_hz : float
        The factor α, SINR_MIN [dB] and Thr_MAX of TR 36.942 Table A.2.

    Returns
    -------
    ndarray
        Spectral efficiency [bit/s/Hz], same shape.
    """
    check_real(attenuation, "attenuation")
    check_real(min_sinr_db, "min_sinr_db")
    check_real(max_bps_hz, "max_bps_hz")
    g = np.asarray(sinr, dtype=float)
    eff = np.minimum(attenuation * np.log2(1.0 + g), max_bps_hz)
    return np.where(g < 10.0 ** (min_sinr_db / 10.0), 0.0, eff)


SPECTRAL_EFFICIENCY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "shannon": shannon,
    "shannon_gap": shannon_gap,
    "tr36942": tr36942,
}


def get_efficiency(
    name_or_func: str | Callable[[np.ndarray], np.ndarray],
) -> Callable[[np.ndarray], np.ndarray]:
    """Look up a spectral-efficiency map by name, or pass a callable through.

    Raises
    ------
    ValidationError
        An unknown name (a ``ValueError`` too), listing the valid ones.
    """
    if callable(name_or_func):
        return name_or_func
    try:
        return SPECTRAL_EFFICIENCY[name_or_func]
    except (KeyError, TypeError):
        raise ValidationError(
            f"unknown spectral efficiency {name_or_func!r} (spectral_efficiency); fix: use one "
            f"of {sorted(SPECTRAL_EFFICIENCY)} or a callable of the linear SINR"
        ) from None
