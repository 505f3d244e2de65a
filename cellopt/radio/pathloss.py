"""Path-loss models: distance [m] in, loss [dB] out. Any such callable can be plugged in."""

from __future__ import annotations

import numpy as np

from cellopt.network import check_real

__all__ = ["free_space", "tr36814_macro", "tr36814_pico"]


def tr36814_macro(distance_m: np.ndarray) -> np.ndarray:
    """Macro path loss of TR 36.814 Table A.2.1.1-2 (2 GHz): ``128.1 + 37.6 log10 R[km]``.

    Parameters
    ----------
    distance_m : ndarray
        Distance [m], any shape.

    Returns
    -------
    ndarray
        Path loss [dB], same shape.
    """
    return 128.1 + 37.6 * np.log10(np.asarray(distance_m, dtype=float) * 1e-3)


def tr36814_pico(distance_m: np.ndarray) -> np.ndarray:
    """Pico (and outdoor femto) path loss of TR 36.814 Table A.2.1.1.2-3: ``140.7 + 36.7 log10 R[km]``.

    Parameters
    ----------
    distance_m : ndarray
        Distance [m], any shape.

    Returns
    -------
    ndarray
        Path loss [dB], same shape.
    """
    return 140.7 + 36.7 * np.log10(np.asarray(distance_m, dtype=float) * 1e-3)


def free_space(distance_m: np.ndarray, frequency_mhz: float = 2000.0) -> np.ndarray:
    """Free-space (Friis) path loss ``20 log10 d[m] + 20 log10 f[MHz] − 27.55`` dB.

    Parameters
    ----------
    distance_m : ndarray
        Distance [m], any shape.
    frequency_mhz : float
        Carrier frequency [MHz] (2000 by default, as TR 36.814). Values outside 100 MHz –
        100 GHz warn (a frequency given in GHz or Hz); outside (0, 1e7] MHz raise.

    Returns
    -------
    ndarray
        Path loss [dB], same shape.
    """
    f = check_real(frequency_mhz, "frequency_mhz")
    d = np.asarray(distance_m, dtype=float)
    return 20.0 * np.log10(d) + 20.0 * np.log10(f) - 27.55
