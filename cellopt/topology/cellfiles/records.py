"""The small records the modules of :mod:`cellopt.topology.cellfiles` pass each other.

:func:`~cellopt.topology.cellfiles.read_cells` takes its options as keywords (scenario
files pass them through); inside the package they travel grouped: the row filters, the
per-cell defaults, the site merging of OpenCelliD exports, and where a table's
coordinates come from.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pyproj

__all__ = ["CellDefaults", "RowFilters", "SiteMerging", "Source"]


@dataclasses.dataclass(frozen=True)
class RowFilters:
    """The filters that choose the rows of a file, as given to read_cells (checked when used).

    Attributes
    ----------
    radio : str or sequence of str or None
        Radio technologies to keep (case-insensitive); None keeps all.
    mcc, mnc : int or sequence of int or None
        Mobile country / network codes to keep; None keeps all.
    bbox : array_like of 4 floats or None
        ``(x_min, y_min, x_max, y_max)`` in the source CRS, bounds included.
    polygon : shapely.Geometry or geopandas.GeoSeries or geopandas.GeoDataFrame or None
        Area whose inside and boundary are kept (a bare geometry is in the source CRS).
    """

    radio: Any = None
    mcc: Any = None
    mnc: Any = None
    bbox: Any = None
    polygon: Any = None

    @property
    def attributes(self) -> dict[str, Any]:
        """The filters on column values, in the order they are applied: radio, mcc, mnc."""
        return {"radio": self.radio, "mcc": self.mcc, "mnc": self.mnc}


@dataclasses.dataclass(frozen=True)
class CellDefaults:
    """Values of the cell columns a file does not give.

    Attributes
    ----------
    tier : str
        ``'macro'``, ``'pico'`` or ``'femto'``.
    tx_power_dbm : float
        Maximum transmit power [dBm].
    antenna_gain_dbi : float
        Boresight antenna gain [dBi].
    height_m : float
        Antenna height [m].
    """

    tier: str
    tx_power_dbm: float
    antenna_gain_dbi: float
    height_m: float

    def as_columns(self) -> dict[str, Any]:
        """The defaults as keyword arguments of :func:`cellopt.network.cells_frame`."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class SiteMerging:
    """How the cells of an OpenCelliD export are grouped into sites.

    Attributes
    ----------
    cluster_sites : bool
        Group LTE cells by eNB and merge close sites; if False every cell is its own site.
    merge_distance_m : float
        Sites closer than this are merged [m]; 0 merges nothing.
    """

    cluster_sites: bool
    merge_distance_m: float


@dataclasses.dataclass(frozen=True)
class Source:
    """Where the coordinates of a table come from."""

    name: str  # file name, for messages
    kind: str  # 'csv', 'opencellid' or 'vector'
    crs: pyproj.CRS  # CRS of the coordinates in the file
    xcol: str | None  # coordinate columns; None for vector files (the geometry)
    ycol: str | None
    id_col: str | None  # column identifying rows in messages
    # What becomes of each column of a plain table (columns._Plan); None for OpenCelliD.
    plan: Any = None

    @property
    def geographic(self) -> bool:
        return bool(self.crs.is_geographic)

    def labels(self) -> tuple[str, str]:
        """How the two coordinates are called in messages."""
        if self.xcol is not None:
            return self.xcol, self.ycol
        if self.geographic:
            return "geometry x (lon)", "geometry y (lat)"
        return "geometry x", "geometry y"
