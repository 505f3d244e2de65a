"""The propagation interface: what a model of one tier's links must provide.

Every model of :attr:`RadioModel.pathloss <cellopt.radio.RadioModel.pathloss>`, built-in
or written by a user, is a :class:`Propagation`: it gives the loss of any set of
user–cell links (:class:`Links`) and the mean loss at a 2-D distance (for the far field
of the cells beyond the interference radius). The link table, the interference radius
and its far field, coverage maps, load coupling and the calibration all call these, never
a concrete class. A plain callable of the distance in metres (TR 36.814's laws) is a
model too: :func:`as_propagation` wraps it in a :class:`DistanceLaw`.

Optional attributes say what the values already hold; the radio model adds the rest:

- ``includes_fading`` (default False): the loss holds the model's own shadowing and
  building penetration, so the radio model's ``shadowing_std_db`` and exterior walls are
  not added (:class:`~cellopt.radio.ThreeGPP`, :class:`~cellopt.radio.RasterPathLoss`);
- ``includes_antenna`` (default False): the loss holds the cell's antenna gain and
  pattern (planning tools' predictions usually do), so neither is added;
- ``frequency_ghz`` (default None): the carrier, for NR's frequency range;
- ``resolution_m`` (default None): the model's own grid, which coverage maps use where
  it is finer than theirs.

Optional methods:

- ``bind(network, cells, radio) -> Propagation``: the model for the cells at rows
  `cells` of `network` (a model that reads files per cell, or per-user data, prepares it
  here); called once per network;
- ``draw_users(seed, indoor) -> UserDraws``: per-user random quantities (height, O2I
  terms) that every tier of a network shares (the 3GPP models);
- ``indoor_loss_db(draws) -> ndarray``: each user's building penetration loss [dB], for
  the far field of indoor users (models with ``includes_fading``);
- ``median() -> Propagation``: the model without its random terms, for median coverage
  maps (default: the model itself).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from cellopt.errors import ValidationError

if TYPE_CHECKING:
    from cellopt.network import Network
    from cellopt.radio.model import RadioModel

__all__ = ["DistanceLaw", "Links", "Propagation", "as_propagation", "bind"]


@dataclasses.dataclass(frozen=True)
class Links:
    """The user–cell links a :class:`Propagation` model is asked about.

    The arrays broadcast together: a block of users against cells is given with
    user-side arrays of shape (U, 1) and cell-side arrays of shape (1, C); a list of
    pairs with every array of shape (P,).

    Attributes
    ----------
    users, cells : ndarray of int
        Row positions of the users and of the cells in the network's tables.
    sites : ndarray of int
        Site codes of the cells (sectors of one mast share one).
    distance_m : ndarray
        2-D distances [m], raised to the tier's ``min_distance_m`` (with wraparound, to
        the nearest image of the cell).
    user_x_m, user_y_m : ndarray
        User positions [m] in the network's projected CRS (:attr:`crs`).
    user_height_m, cell_height_m : ndarray
        Antenna heights above ground [m] (users at 1.5 m unless a model draws them).
    indoor : ndarray of bool
        Whether each user is indoors (user-side).
    crs : pyproj.CRS or None
        The network's CRS (None for a synthetic layout without one).
    seed : int
        The shadowing seed: every random term keyed by it and the link is reproducible,
        whatever the block.
    draws : UserDraws or None
        The per-user draws of the network's models (``draw_users``), if any.
    shadowing : callable
        ``shadowing(decorrelation_m=0.0, where=None)``: the links' N(0, 1) shadowing,
        correlated between the sites of one user as the radio model's
        ``site_correlation`` says, and in space over `decorrelation_m` [m] (0: every user
        independent); with a boolean array `where`, only of those links (1-D).
    """

    users: np.ndarray
    cells: np.ndarray
    sites: np.ndarray
    distance_m: np.ndarray
    user_x_m: np.ndarray
    user_y_m: np.ndarray
    user_height_m: np.ndarray
    cell_height_m: np.ndarray
    indoor: np.ndarray
    crs: Any
    seed: int
    draws: Any
    shadowing: Callable[..., np.ndarray]


@runtime_checkable
class Propagation(Protocol):
    """A model of one tier's large-scale propagation (module docstring for the options)."""

    def loss_db(self, links: Links) -> np.ndarray:
        """Loss [dB] of each link, the broadcast shape of `links`: path loss, plus the
        model's shadowing and penetration (``includes_fading``), less the antenna gains
        (``includes_antenna``); ``inf`` where the cell has no link with the user."""
        ...

    def mean_loss_db(self, distance_m: np.ndarray) -> np.ndarray:
        """Loss [dB] of the mean received power at 2-D `distance_m` [m], over the
        model's random terms, for an outdoor user (the far field's integrand)."""
        ...


@dataclasses.dataclass(frozen=True)
class DistanceLaw:
    """A path loss that depends on the 2-D distance only (TR 36.814's laws).

    The radio model adds its per-tier log-normal shadowing and exterior walls.

    Parameters
    ----------
    function : callable
        Path loss [dB] of an array of distances [m].
    """

    function: Callable[[np.ndarray], np.ndarray]

    def loss_db(self, links: Links) -> np.ndarray:
        return np.asarray(self.function(links.distance_m), float)

    def mean_loss_db(self, distance_m: np.ndarray) -> np.ndarray:
        return np.asarray(self.function(distance_m), float)


def as_propagation(value: object, where: str) -> Propagation:
    """`value` as a :class:`Propagation`: a model (or an object whose ``bind`` returns
    one for a network, as :class:`~cellopt.radio.RasterPathLoss`) as it is, a callable of
    the distance wrapped in a :class:`DistanceLaw`.

    Parameters
    ----------
    value : Propagation, bindable model or callable
    where : str
        Where it was given (for the error), e.g. ``"RadioModel.pathloss['macro']"``.

    Raises
    ------
    ValidationError
        Neither a model nor a callable.
    """
    if isinstance(value, Propagation) or callable(getattr(value, "bind", None)):
        return value  # a model, or one that becomes a model for a network
    if callable(value):
        return DistanceLaw(value)
    raise ValidationError(f"{where} is a {type(value).__name__}; fix: give a callable of the "
                          "distance in metres, or a model with loss_db(links) and "
                          "mean_loss_db(distance_m) (cellopt.radio.Propagation)")


def bind(value: object, network: Network, cells: np.ndarray, radio: RadioModel,
         where: str) -> Propagation:
    """`value` (:func:`as_propagation`) ready for the cells at rows `cells` of `network`:
    its ``bind`` called if it has one.

    Raises
    ------
    ValidationError
        `value` is not a model, or its ``bind`` returned none.
    """
    prop = as_propagation(value, where)
    if getattr(prop, "bind", None) is None:
        return prop
    bound = prop.bind(network, cells, radio)
    if not isinstance(bound, Propagation):
        raise ValidationError(f"{where}.bind returned a {type(bound).__name__}; fix: return a "
                              "model with loss_db(links) and mean_loss_db(distance_m)")
    return bound
