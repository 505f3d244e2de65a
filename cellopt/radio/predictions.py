"""A planner's own path-loss predictions as a propagation model: one raster per cell.

Planning tools (Atoll, Planet, Mentum and the like) predict each cell's path loss from
terrain and clutter, and ray tracers (Sionna RT's radio maps, for example) compute it from
3-D buildings; both exchange the result as one raster per cell in a projected CRS.
:class:`RasterPathLoss` reads them (:class:`~cellopt.radio.raster_io.RasterSet`:
a folder of ``<cell_id>.tif`` or one multi-band GeoTIFF whose band descriptions are the
cell ids) and gives every link its value at the user's position, interpolated
bilinearly. It is a :class:`~cellopt.radio.Propagation`, given per tier as
:attr:`RadioModel.pathloss <cellopt.radio.RadioModel.pathloss>` or in a scenario as
``[radio] path_loss`` (docs/propagation.md).

- The predictions are deterministic: no shadowing is added unless `shadowing_std_db`
  asks for it, and no exterior wall (``includes_fading``): a prediction for indoor users
  already holds what the tool assumed for them.
- A user outside a cell's raster, or on its nodata, has no link with that cell.
"""

from __future__ import annotations

import dataclasses
import math
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from cellopt.checks import check_real
from cellopt.errors import ValidationError
from cellopt.radio.interface import Links
from cellopt.radio.raster_io import KINDS, RasterSet

if TYPE_CHECKING:
    from cellopt.network import Network
    from cellopt.radio.model import RadioModel

__all__ = ["RasterPathLoss"]

#: Bounds of the far-field slope fitted to the predictions [dB per decade of distance]:
#: free space (20) to a steep urban law (60).
FAR_SLOPE_DB_PER_DECADE = (20.0, 60.0)
#: Sampled pairs the far-field law is fitted to at most (every k-th pair beyond).
FAR_FIT_PAIRS = 200_000


@dataclasses.dataclass(frozen=True)
class RasterPathLoss:
    """Per-cell predictions from rasters (module docstring).

    Parameters
    ----------
    source : str or path
        A folder of GeoTIFFs named ``<cell_id>.tif``, or one multi-band GeoTIFF whose band
        descriptions are the cell ids. Every cell of the tiers this model is given for
        needs a raster; a raster for no cell of the network is refused too.
    kind : {"path_loss_db", "gain_db", "rsrp_dbm"}
        What the pixels hold: path loss [dB] (positive), gain [dB] (negative), or RSRP
        [dBm per resource element] at the cell's ``tx_power_dbm``; checked against the
        values.
    includes_antenna : bool
        The predictions hold the cell's antenna gain and pattern, as planning tools'
        usually do (default); False applies the cell's antenna
        (:attr:`RadioModel.antenna <cellopt.radio.RadioModel.antenna>`) on top. An RSRP
        always holds it.
    shadowing_std_db : float
        Log-normal shadowing σ [dB] to add to the predictions (0, default: none), with
        the radio model's ``site_correlation``, correlated in space over
        `decorrelation_m`.
    decorrelation_m : float
        Decorrelation distance of the added shadowing [m] (50 m, TR 36.942).
    """

    source: str | os.PathLike
    kind: str = "path_loss_db"
    includes_antenna: bool = True
    shadowing_std_db: float = 0.0
    decorrelation_m: float = 50.0
    rasters: RasterSet = dataclasses.field(init=False, repr=False, compare=False)

    #: Its values are complete: the radio model adds no shadowing and no walls.
    includes_fading: ClassVar[bool] = True
    #: No carrier is implied.
    frequency_ghz: ClassVar[None] = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValidationError(f"RasterPathLoss kind={self.kind!r}; fix: use one of "
                                  f"{list(KINDS)}")
        if not isinstance(self.includes_antenna, (bool, np.bool_)):
            raise ValidationError(f"RasterPathLoss includes_antenna={self.includes_antenna!r}; "
                                  "fix: give True or False")
        if self.kind == "rsrp_dbm" and not self.includes_antenna:
            raise ValidationError("RasterPathLoss kind='rsrp_dbm' with includes_antenna=False: a "
                                  "received power already holds the cell's antenna; fix: "
                                  "includes_antenna=True")
        object.__setattr__(self, "source", Path(self.source))
        object.__setattr__(self, "shadowing_std_db", check_real(
            self.shadowing_std_db, "RasterPathLoss shadowing_std_db", "shadowing_std_db"))
        object.__setattr__(self, "decorrelation_m", check_real(
            self.decorrelation_m, "RasterPathLoss decorrelation_m", "decorrelation_m"))
        object.__setattr__(self, "rasters", RasterSet(self.source, self.kind))

    @property
    def resolution_m(self) -> float:
        """The finest pixel size of the rasters [m] (coverage maps use it if finer)."""
        return self.rasters.min_resolution_m

    def median(self) -> RasterPathLoss:
        """The predictions without the added shadowing (a median map)."""
        if self.shadowing_std_db == 0.0:
            return self
        return dataclasses.replace(self, shadowing_std_db=0.0)

    def bind(self, network: Network, cells: np.ndarray, radio: RadioModel) -> BoundRasters:
        """Sample the rasters of the cells at rows `cells` at every user of `network`.

        Parameters
        ----------
        network : Network
        cells : ndarray of int
            Row positions of the cells this model serves.
        radio : RadioModel
            For the power per resource element of an RSRP raster.

        Returns
        -------
        BoundRasters

        Raises
        ------
        ValidationError
            Cells without a raster or rasters for no cell (from the raster set), or no
            user inside any raster with data.

        Warns
        -----
        UserWarning
            Users with no link with any of these cells (outside every raster or on
            nodata), counted: they get no link with these cells.
        """
        every = network.cells["cell_id"].astype(str).to_numpy()
        ids = every[cells]
        have = set(self.rasters.cell_ids)
        for which, names, fix in (
                ("cells without a raster", [i for i in ids if i not in have],
                 "add their predictions, or give their tier another model ([radio] path_loss "
                 "per tier)"),
                ("rasters for no cell of the network", sorted(have - set(every)),
                 "remove them from the source, or check that the file names or band "
                 "descriptions are the cells' cell_id")):
            if names:
                raise ValidationError(
                    f"{self.source}: {len(names)} {which}: {', '.join(names[:5])}"
                    f"{', ...' if len(names) > 5 else ''}; fix: {fix}")
        users = network.user_arrays()
        x_m, y_m = users["x_m"], users["y_m"]
        n_users = len(x_m)
        which, point, value = self.rasters.sample(ids, x_m, y_m, network.crs, strict=False)
        cell = np.asarray(cells)[which]
        if self.kind == "path_loss_db":
            loss = value
        elif self.kind == "gain_db":
            loss = -value
        else:  # RSRP per resource element at the cell's full power
            re_power = (network.cells["tx_power_dbm"].to_numpy(float)
                        - radio.rsrp_offset_db(network.bandwidth_mhz))
            loss = re_power[cell] - value
        if n_users and not len(point):
            raise ValidationError(
                f"{self.source}: no user of the network lies inside a raster with data of any "
                f"of its {len(ids)} cells; fix: check that the rasters cover the study area (the "
                "rasters' CRS and the network's) and hold data there")
        reached = np.zeros(n_users, bool)
        reached[point] = True
        if n_users and not reached.all():
            missing = np.flatnonzero(~reached)
            shown = ", ".join(str(u) for u in network.users["user_id"].to_numpy()[missing[:5]])
            warnings.warn(
                f"{self.source}: {len(missing):,} of {n_users:,} users (e.g. {shown}) are "
                f"outside the rasters or on nodata of all {len(ids)} cells they are given for: "
                "they have no link with these cells; fix: extend the predictions over the study "
                "area, or limit the users to it", UserWarning, stacklevel=4)
        step = max(1, len(loss) // FAR_FIT_PAIRS)  # a fixed stride: the same fit every time
        c = network.cell_arrays()
        fit = slice(None, None, step)
        distance = np.hypot(x_m[point[fit]] - c["x_m"][cell[fit]],
                            y_m[point[fit]] - c["y_m"][cell[fit]])
        return BoundRasters(self, LossTable(cell, point, loss, np.asarray(cells), n_users),
                            _far_law(distance, loss[fit]))


class LossTable:
    """The sampled loss of user–cell pairs, looked up by (cell, user) rows.

    Dense (an array of cells × users, ``inf`` where no pair was sampled) where at least
    half of the pairs were sampled, so that the lookups of a block are one gather; sorted
    keys ``cell × n_users + user`` and a binary search otherwise. Either way memory is
    at most 16 bytes per sampled pair.

    Parameters
    ----------
    cell, user : ndarray of int, shape (P,)
        Rows of the sampled pairs, sorted by (cell, user).
    loss : ndarray, shape (P,)
        Their loss [dB].
    cells : ndarray of int, shape (C,)
        The rows of every cell the table is for, ascending.
    n_users : int
    """

    def __init__(self, cell: np.ndarray, user: np.ndarray, loss: np.ndarray, cells: np.ndarray,
                 n_users: int):
        self.n_users = n_users
        self.dense = len(loss) >= 0.5 * len(cells) * n_users
        if self.dense:
            self.position = np.full(int(cells.max()) + 1 if len(cells) else 0, -1, np.int64)
            self.position[cells] = np.arange(len(cells))
            self.table = np.full((len(cells), n_users), np.inf)
            self.table[self.position[cell], user] = loss
        else:
            self.keys = cell.astype(np.int64) * n_users + user
            self.loss = loss

    def __call__(self, cells: np.ndarray, users: np.ndarray) -> np.ndarray:
        """The loss of each pair [dB] (``inf``: not sampled), the broadcast shape."""
        cells, users = np.asarray(cells, np.int64), np.asarray(users, np.int64)
        if self.dense:
            return self.table[self.position[cells], users]
        key = cells * self.n_users + users
        if not len(self.keys):
            return np.full(key.shape, np.inf)
        at = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
        return np.where(self.keys[at] == key, self.loss[at], np.inf)


@dataclasses.dataclass(frozen=True, eq=False)
class BoundRasters:
    """A :class:`RasterPathLoss` sampled at the users of one network.

    Attributes
    ----------
    model : RasterPathLoss
    table : LossTable
        The loss of every sampled pair [dB] (antenna included if the model's predictions
        hold it).
    far_law : tuple of float
        ``(a, b)`` of the far field's mean loss ``a + b log10 d`` [dB, d in m].
    """

    model: RasterPathLoss
    table: LossTable
    far_law: tuple[float, float]

    includes_fading: ClassVar[bool] = True
    frequency_ghz: ClassVar[None] = None

    @property
    def includes_antenna(self) -> bool:
        return self.model.includes_antenna

    @property
    def resolution_m(self) -> float:
        return self.model.resolution_m

    def median(self) -> RasterPathLoss:
        return self.model.median()

    def loss_db(self, links: Links) -> np.ndarray:
        """The sampled loss of each link [dB]; ``inf`` (no link) where none was sampled."""
        loss = self.table(links.cells, links.users)
        sigma = self.model.shadowing_std_db
        if sigma > 0:
            loss = loss + sigma * links.shadowing(self.model.decorrelation_m, None)
        return loss

    def mean_loss_db(self, distance_m: np.ndarray) -> np.ndarray:
        """The far field's loss at `distance_m` [m]: the log-distance law fitted to the
        sampled pairs, less the mean of their scatter (and of any added shadowing)."""
        a, b = self.far_law
        spread = self.model.shadowing_std_db * math.log(10.0) / 10.0
        return a + b * np.log10(np.maximum(distance_m, 1.0)) - 0.5 * spread**2 * 10.0 / math.log(10.0)


def _far_law(distance_m: np.ndarray, loss_db: np.ndarray) -> tuple[float, float]:
    """``(a, b)`` of the least-squares law ``a + b log10 d`` through the sampled pairs,
    its slope held within :data:`FAR_SLOPE_DB_PER_DECADE`, minus the mean of the scatter
    around it (``σ² ln 10 / 20`` for a log-normal scatter σ): the loss of the mean
    received power at each distance."""
    finite = np.isfinite(loss_db) & (distance_m > 1.0)
    log_d = np.log10(distance_m[finite])
    loss = loss_db[finite]
    low, high = FAR_SLOPE_DB_PER_DECADE
    if len(loss) < 2 or np.ptp(log_d) == 0:  # no slope to fit: free space's
        return (float(np.mean(loss - low * log_d)) if len(loss) else 0.0), low
    centred = log_d - log_d.mean()
    slope = float(np.clip(centred @ (loss - loss.mean()) / (centred @ centred), low, high))
    intercept = float(np.mean(loss - slope * log_d))
    scatter = float(np.std(loss - intercept - slope * log_d)) * math.log(10.0) / 10.0
    return intercept - 0.5 * scatter**2 * 10.0 / math.log(10.0), slope
