"""COST-231 Hata: the median macro-cell path loss that planning tools offer, 1500–2000 MHz.

The COST 231 extension of the Okumura–Hata model (COST 231 final report, ch. 4), with f
the carrier [MHz], h_b the cell's antenna height [m], h_m the user's [m] and d the 2-D
distance [km]:

    L = 46.3 + 33.9 log10 f − 13.82 log10 h_b − a(h_m) + (44.9 − 6.55 log10 h_b) log10 d + C_M,
    a(h_m) = (1.1 log10 f − 0.7) h_m − (1.56 log10 f − 0.8),

with C_M = 3 dB in metropolitan centres (``"urban"``) and 0 dB in medium-sized cities and
suburban centres (``"suburban"``), the two environments planning tools offer for it.
The report states it for 1500 MHz ≤ f ≤ 2000 MHz, 30 m ≤ h_b ≤ 200 m, 1 m ≤ h_m ≤ 10 m
and 1 km ≤ d ≤ 20 km (:data:`VALIDITY`); as for the 3GPP models
(:func:`~cellopt.radio.tr38901.check_validity`), what the formula cannot evaluate (a
distance or height ≤ 0) is refused, and what lies outside the stated ranges warns and is
evaluated as written: nothing is clamped.

:class:`Cost231Hata` is the model of a tier's links (a :class:`~cellopt.radio.Propagation`).
It gives the median loss: the radio model adds its per-tier log-normal shadowing and
exterior walls, as for a distance law, and the cell's antenna gain and pattern.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from cellopt.checks import as_float_array, check_real
from cellopt.errors import ValidationError
from cellopt.radio.interface import Links
from cellopt.radio.propagation import warn_pair_distances
from cellopt.radio.tr38901 import Validity, check_validity

if TYPE_CHECKING:
    from cellopt.network import Network
    from cellopt.radio.model import RadioModel

__all__ = ["ENVIRONMENTS", "VALIDITY", "Cost231Hata", "cost231_hata_db"]

#: The environments and their correction C_M [dB]: metropolitan centres (``"urban"``),
#: medium-sized cities and suburban centres with medium tree density (``"suburban"``).
ENVIRONMENTS: dict[str, float] = {"urban": 3.0, "suburban": 0.0}

#: Where the formula is specified: 1.5–2 GHz, 1 km ≤ d ≤ 20 km, 30 m ≤ h_b ≤ 200 m,
#: 1 m ≤ h_m ≤ 10 m (COST 231 final report, ch. 4).
VALIDITY = Validity("COST-231 Hata", "COST 231 final report, ch. 4", (1.5, 2.0), (1000.0, 20_000.0),
                    h_bs_m=(30.0, 200.0), h_ut_m=(1.0, 10.0))

#: The cell height of the far field's mean law before the model is bound to cells [m]: the
#: lowest of the stated range.
_UNBOUND_HEIGHT_M = VALIDITY.h_bs_m[0]


def _environment(environment: object, name: str) -> float:
    """C_M of `environment`, or a ValidationError naming `name`."""
    if not isinstance(environment, str) or environment not in ENVIRONMENTS:
        raise ValidationError(f"{name}={environment!r} is not a COST-231 Hata environment; fix: "
                              f"give one of {list(ENVIRONMENTS)}")
    return ENVIRONMENTS[environment]


def cost231_hata_db(distance_m: ArrayLike, cell_height_m: ArrayLike, user_height_m: ArrayLike,
                    frequency_ghz: float, environment: str = "urban", *,
                    warn: bool = True) -> np.ndarray:
    """Median path loss of COST-231 Hata [dB] (module docstring for the formula).

    Parameters
    ----------
    distance_m : array_like
        2-D cell–user distances d [m], > 0 (the formula takes kilometres).
    cell_height_m, user_height_m : array_like
        Antenna heights above ground of the cells (h_b) and the users (h_m) [m], > 0.
    frequency_ghz : float
        Carrier frequency [GHz] (the formula takes MHz).
    environment : {"urban", "suburban"}
        C_M = 3 dB (metropolitan centres) or 0 dB (medium-sized cities, suburban centres).
    warn : bool
        Warn outside the stated ranges (:data:`VALIDITY`), once per quantity, counting the
        links outside (default). False refuses what is undefined but does not warn: for a
        caller that checked the ranges once (:class:`Cost231Hata`).

    Returns
    -------
    ndarray
        Path loss [dB], the broadcast shape of the array arguments.

    Raises
    ------
    ValidationError
        An unknown environment; a carrier that is not a number in (0, 1000] GHz; arrays
        that are not numbers or do not broadcast; a distance or height that is not a
        finite number > 0 (:func:`~cellopt.radio.tr38901.check_validity`).
    """
    c_m = _environment(environment, "environment")
    f_ghz = check_real(frequency_ghz, "frequency_ghz", warn=False)  # the stated range warns
    fix = "give metres as real numbers (a float or an array of floats)"
    d = as_float_array(distance_m, "distance_m", fix=fix, copy=False)
    h_b = as_float_array(cell_height_m, "cell_height_m", fix=fix, copy=False)
    h_m = as_float_array(user_height_m, "user_height_m", fix=fix, copy=False)
    try:
        shape = np.broadcast_shapes(d.shape, h_b.shape, h_m.shape)
    except ValueError:
        raise ValidationError(f"distance_m{d.shape}, cell_height_m{h_b.shape} and "
                              f"user_height_m{h_m.shape} do not broadcast; fix: give arrays that "
                              "broadcast together, e.g. users (n, 1) against cells (1, m)") from None
    check_validity(VALIDITY, frequency_ghz=f_ghz, distance_m=np.broadcast_to(d, shape),
                   h_bs_m=np.broadcast_to(h_b, shape), h_ut_m=np.broadcast_to(h_m, shape),
                   warn=warn, stacklevel=2,
                   labels={"h_bs_m": "cell_height_m", "h_ut_m": "user_height_m"})
    log_f = math.log10(1000.0 * f_ghz)
    log_hb = np.log10(h_b)
    a_hm = (1.1 * log_f - 0.7) * h_m - (1.56 * log_f - 0.8)
    loss = (46.3 + 33.9 * log_f - 13.82 * log_hb - a_hm
            + (44.9 - 6.55 * log_hb) * np.log10(d / 1000.0) + c_m)
    return np.asarray(loss, dtype=np.float64)


@dataclasses.dataclass(frozen=True)
class Cost231Hata:
    """COST-231 Hata for one tier's links: the median loss of :func:`cost231_hata_db`.

    Given as a tier's model, e.g. ``RadioModel(pathloss={"macro": Cost231Hata(1.8)})``.
    Each link's loss is :func:`cost231_hata_db` at its 2-D distance (raised to the tier's
    ``min_distance_m``), its cell's ``height_m`` and the model's `user_height_m`. The
    radio model adds its per-tier shadowing and walls and the cell's antenna.

    Parameters
    ----------
    frequency_ghz : float
        Carrier frequency [GHz], required (specified for 1.5–2 GHz).
    environment : {"urban", "suburban"}
        C_M = 3 dB (metropolitan centres, default) or 0 dB (medium-sized cities and
        suburban centres).
    user_height_m : float
        h_m, the users' antenna height [m] (1.5 m; specified for 1–10 m), as planning
        tools set it for a prediction.
    far_field_height_m : float, optional
        h_b of :meth:`mean_loss_db`, the mean law of the cells beyond the interference
        radius [m]. None (default): the median ``height_m`` of the cells the model is bound
        to (30 m before).

    Raises
    ------
    ValidationError
        A missing carrier, an unknown environment, or a value that is not a number or is
        out of range (a height ≤ 0). A carrier or user height outside the stated range
        warns (:data:`VALIDITY`); so do, when the model is bound to a network, cell
        heights and user–cell distances outside it.
    """

    frequency_ghz: float = None  # type: ignore[assignment]  # required: refused if left out
    environment: str = "urban"
    user_height_m: float = 1.5
    far_field_height_m: float | None = None

    #: A median loss: the radio model adds its shadowing and walls.
    includes_fading: ClassVar[bool] = False
    #: Its antenna is the radio model's.
    includes_antenna: ClassVar[bool] = False
    #: The cell enters only through its position and height.
    per_site: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.frequency_ghz is None:
            raise ValidationError("Cost231Hata.frequency_ghz is missing; fix: give the carrier in "
                                  "GHz, e.g. Cost231Hata(frequency_ghz=1.8)")
        _environment(self.environment, "Cost231Hata.environment")
        # the stated ranges warn (check_validity below), not the catalogue's
        object.__setattr__(self, "frequency_ghz", check_real(
            self.frequency_ghz, "Cost231Hata.frequency_ghz", "frequency_ghz", warn=False))
        object.__setattr__(self, "user_height_m", check_real(
            self.user_height_m, "Cost231Hata.user_height_m", "user_height_m", warn=False))
        check_validity(VALIDITY, frequency_ghz=self.frequency_ghz, h_ut_m=self.user_height_m,
                       what="users", labels={"h_ut_m": "Cost231Hata.user_height_m"}, stacklevel=3)
        if self.far_field_height_m is not None:
            object.__setattr__(self, "far_field_height_m", check_real(
                self.far_field_height_m, "Cost231Hata.far_field_height_m", "height_m", warn=False))
            check_validity(VALIDITY, h_bs_m=self.far_field_height_m, what="cells", stacklevel=3,
                           labels={"h_bs_m": "Cost231Hata.far_field_height_m"})

    def loss_db(self, links: Links) -> np.ndarray:
        """The median loss [dB] of each link (:class:`~cellopt.radio.Propagation`); the
        ranges were checked when the model was made and bound."""
        return cost231_hata_db(links.distance_m, links.cell_height_m, self.user_height_m,
                               self.frequency_ghz, self.environment, warn=False)

    def mean_loss_db(self, distance_m: np.ndarray) -> np.ndarray:
        """The median loss [dB] at 2-D `distance_m` of a cell at `far_field_height_m`: the
        mean law the far field integrates (the radio model adds the shadowing's mean),
        beyond the stated distances too, without a warning."""
        height = _UNBOUND_HEIGHT_M if self.far_field_height_m is None else self.far_field_height_m
        return cost231_hata_db(distance_m, height, self.user_height_m, self.frequency_ghz,
                               self.environment, warn=False)

    def bind(self, network: Network, cells: np.ndarray, radio: RadioModel) -> Cost231Hata:
        """The model for the cells at rows `cells` of `network`, their heights checked (> 0;
        a warning outside 30–200 m), the network's user–cell distances outside 1–20 km
        warned about once, and the far field at their median height (unless
        `far_field_height_m` is given)."""
        height = network.cells["height_m"].to_numpy(float)[cells]
        check_validity(VALIDITY, h_bs_m=height, what="cells", stacklevel=4,
                       labels={"h_bs_m": "the cells' height_m"})
        self.warn_distances(network, cells, radio, stacklevel=4)
        if self.far_field_height_m is not None or not len(height):
            return self
        bound = copy.copy(self)  # made and checked already: no second warning
        object.__setattr__(bound, "far_field_height_m", float(np.median(height)))
        return bound

    def warn_distances(self, network: Network, cells: np.ndarray, radio: RadioModel,
                       user_xy: np.ndarray | None = None, what: str = "user–cell pairs",
                       stacklevel: int = 2) -> None:
        """Warn once if 2-D distances from the cells at rows `cells` are outside 1–20 km
        (:func:`~cellopt.radio.propagation.warn_pair_distances` gives the arguments;
        coverage maps call it with their pixel centres)."""
        warn_pair_distances(VALIDITY, network, cells, radio, user_xy, what, stacklevel + 1)
