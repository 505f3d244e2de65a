"""The TR 38.901 indoor office: a rectangular grid of ceiling-mounted sites in one hall."""

from __future__ import annotations

from typing import Literal

import numpy as np
import shapely

from cellopt.checks import check_count, check_real
from cellopt.errors import ValidationError
from cellopt.network import Network, cells_frame
from cellopt.topology.hexgrid import (
    DEFAULT_SECTOR_ORIENTATION,
    SYNTHETIC_ORIGIN_M,
    antenna_columns,
    layout_crs,
    sector_azimuths_deg,
)

__all__ = ["indoor_office"]


def indoor_office(
    rows: int = 2,
    columns: int = 6,
    isd_m: float = 20.0,
    *,
    sectors: int = 3,
    length_m: float = 120.0,
    width_m: float = 50.0,
    tx_power_dbm: float = 24.0,
    antenna_gain_dbi: float = 8.0,
    height_m: float = 3.0,
    bandwidth_mhz: float = 20.0,
    tilt_deg: float | None = None,
    electrical_tilt_deg: float | None = 20.0,
    panel_rows: int | None = 10,
    panel_columns: int | None = 1,
    sector_orientation: Literal["corner", "neighbour"] = DEFAULT_SECTOR_ORIENTATION,
    origin_lonlat: tuple[float, float] | None = None,
    crs: str | None = None,
) -> Network:
    """The indoor-office layout of TR 38.901 Table 7.8-1: 12 sites, 20 m apart, in a
    120 m × 50 m hall.

    Parameters
    ----------
    rows, columns : int
        Sites along the hall's width and length (2 × 6), centred in the hall.
    isd_m : float
        Distance between neighbouring sites [m] (20 m).
    sectors : {3, 1}
        3: sectorised sites (`sector_orientation` says where the boresights point);
        1: omni.
    length_m, width_m : float
        The hall [m] (120 m east–west, 50 m north–south); it is the network's region.
    tx_power_dbm, antenna_gain_dbi, height_m : float
        24 dBm, 8 dBi (the TR 38.901 element's maximum gain), 3 m (ceiling).
    bandwidth_mhz : float
        20 MHz (the 6 GHz calibration; 100 MHz at 30 and 70 GHz).
    tilt_deg, electrical_tilt_deg, panel_rows, panel_columns : optional
        The 3-D antenna (:func:`~cellopt.topology.hex_grid`); default a 10 × 1 panel
        steered 20° down (zenith 110°, TR 38.901 Table 7.8-1).
    sector_orientation : {"corner", "neighbour"}
        Boresights of the 3 sectors [degrees clockwise from north], the same as
        :func:`~cellopt.topology.hex_grid`'s (:data:`~cellopt.topology.SECTOR_ORIENTATIONS`):
        ``"corner"`` (default) 30°, 150°, 270°; ``"neighbour"`` 60°, 180°, 300°, TR 38.901
        Table 7.8-1's 30°, 150°, 270° counted counter-clockwise from east (the hall's
        length), as its calibration has them.
    origin_lonlat, crs : optional
        Where the layout lies: its centre at (lon, lat) [degrees] (default Munich), or
        a projected CRS given instead, as for :func:`~cellopt.topology.hex_grid`.

    Returns
    -------
    Network
        ``rows × columns × sectors`` macro cells; no wraparound.

    Raises
    ------
    ValidationError
        A parameter of the wrong type or out of range, or sites that do not fit in the
        hall.
    """
    rows = check_count(rows, "rows", fix="give a whole number of site rows ≥ 1", minimum=1)
    columns = check_count(columns, "columns", fix="give a whole number of site columns ≥ 1",
                          minimum=1)
    isd_m = check_real(isd_m, "isd_m")
    length_m = check_real(length_m, "length_m", "isd_m")
    width_m = check_real(width_m, "width_m", "isd_m")
    if (columns - 1) * isd_m >= length_m or (rows - 1) * isd_m >= width_m:
        raise ValidationError(f"{rows} × {columns} sites {isd_m:g} m apart do not fit in a "
                              f"{length_m:g} m × {width_m:g} m hall; fix: fewer sites, a "
                              "smaller isd_m or a larger hall")
    if sectors not in (1, 3) or isinstance(sectors, bool):
        raise ValidationError(f"sectors={sectors!r}; fix: use 3 (sectorised) or 1 (omni)")
    azimuths = sector_azimuths_deg(sectors, sector_orientation)
    crs = layout_crs(crs, origin_lonlat)
    x = (np.arange(columns) - (columns - 1) / 2) * isd_m
    y = (np.arange(rows) - (rows - 1) / 2) * isd_m
    sites = np.column_stack([np.tile(x, rows), np.repeat(y, columns)]) + SYNTHETIC_ORIGIN_M
    xy = np.repeat(sites, sectors, axis=0)
    cells = cells_frame(
        xy[:, 0], xy[:, 1], crs=crs, tier="macro",
        site_id=np.repeat(np.arange(len(sites)), sectors), azimuth_deg=np.tile(azimuths, len(sites)),
        tx_power_dbm=check_real(tx_power_dbm, "tx_power_dbm"),
        antenna_gain_dbi=check_real(antenna_gain_dbi, "antenna_gain_dbi"),
        height_m=check_real(height_m, "height_m"),
        **antenna_columns(tilt_deg=tilt_deg, electrical_tilt_deg=electrical_tilt_deg,
                          panel_rows=panel_rows, panel_columns=panel_columns))
    x0, y0 = SYNTHETIC_ORIGIN_M
    hall = shapely.box(x0 - length_m / 2, y0 - width_m / 2, x0 + length_m / 2, y0 + width_m / 2)
    return Network(cells=cells, bandwidth_mhz=check_real(bandwidth_mhz, "bandwidth_mhz"),
                   region=hall).validate()
