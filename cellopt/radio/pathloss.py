"""Path-loss models: distance [m] in, loss [dB] out. Any such callable can be plugged in."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from cellopt.checks import check_number, check_real
from cellopt.errors import ValidationError

__all__ = ["FRIIS_1M_2GHZ_DB", "SingleSlope", "free_space", "tr36814_macro", "tr36814_pico"]

#: Free-space loss at 1 m and 2 GHz [dB], from the formula of :func:`free_space`:
#: ``20 log10(1 m) + 20 log10(2000 MHz) − 27.55`` ≈ 38.47 dB.
FRIIS_1M_2GHZ_DB: float = 20.0 * math.log10(1.0) + 20.0 * math.log10(2000.0) - 27.55


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


@dataclasses.dataclass(frozen=True)
class SingleSlope:
    """Single-slope (log-distance) path loss ``L0 + 10 n log10(d / d0)`` [dB].

    The model of stochastic-geometry studies of random networks. An instance is a
    callable of the distance, as :attr:`cellopt.radio.RadioModel.pathloss` expects, and,
    unlike a closure, it pickles (scenarios can be sent to worker processes).

    Parameters
    ----------
    exponent : float
        Path-loss exponent n, in (0, 10] (2 free space; 3.5 macro and 4 small cells in
        urban studies).
    reference_loss_db : float
        Loss L0 at the reference distance [dB], in [0, 200]; default
        :data:`FRIIS_1M_2GHZ_DB`, free space at 1 m and 2 GHz.
    reference_distance_m : float
        Reference distance d0 [m], in (0, 1e5]; default 1 m.

    Raises
    ------
    ValidationError
        A field that is not a real number, not finite, or outside its range; the
        message names the field and the fix.

    Examples
    --------
    >>> loss = SingleSlope(3.5)
    >>> round(float(loss(100.0)) - FRIIS_1M_2GHZ_DB, 9)
    70.0
    """

    exponent: float
    reference_loss_db: float = FRIIS_1M_2GHZ_DB
    reference_distance_m: float = 1.0

    def __post_init__(self) -> None:
        problems: list[str] = []
        for name, low, high, low_open, fix in (
                ("exponent", 0.0, 10.0, True, "give a path-loss exponent in (0, 10], e.g. 3.5"),
                ("reference_loss_db", 0.0, 200.0, False,
                 "give the loss at the reference distance in [0, 200] dB, e.g. "
                 f"{FRIIS_1M_2GHZ_DB:.2f} dB (free space at 1 m and 2 GHz)"),
                ("reference_distance_m", 0.0, 1e5, True,
                 "give the reference distance in metres in (0, 1e5], e.g. 1.0")):
            try:
                object.__setattr__(self, name, check_number(
                    getattr(self, name), f"SingleSlope.{name}", low=low, high=high,
                    low_open=low_open, fix=fix))
            except ValidationError as err:
                problems += err.problems
        if problems:
            raise ValidationError(problems)

    def __call__(self, distance_m: np.ndarray) -> np.ndarray:
        """Path loss [dB] at `distance_m`.

        Parameters
        ----------
        distance_m : ndarray
            Distance [m], any shape, > 0 (the radio model raises short distances to the
            tier's ``min_distance_m`` first).

        Returns
        -------
        ndarray
            ``reference_loss_db + 10 exponent log10(distance_m / reference_distance_m)``
            [dB], same shape as `distance_m`.
        """
        d = np.asarray(distance_m, dtype=float)
        return self.reference_loss_db + 10.0 * self.exponent * np.log10(d / self.reference_distance_m)
