"""Areas of real networks: the default region around the cells, and a downtown study
window with a guard band of interferers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import geopandas as gpd
import numpy as np
import shapely

from cellopt.checks import check_real
from cellopt.errors import ValidationError
from cellopt.network import Network

__all__ = ["CELLS_REGION_BUFFER_M", "cells_region", "study_window"]

#: How far the default region of a network without one reaches beyond its cells [m].
CELLS_REGION_BUFFER_M = 500.0


def cells_region(network: Network, buffer_m: float = CELLS_REGION_BUFFER_M) -> shapely.Geometry:
    """The default region of a network that has none (e.g. read from a cell file): the
    convex hull of its cells, buffered by `buffer_m`.

    Where :func:`~cellopt.topology.drop_users` and
    :func:`~cellopt.topology.add_femtocells` drop users and femtocells in a network
    without a :attr:`~cellopt.Network.region` when given no `region`, and the region
    ``cellopt run`` gives the network of a cell file (``[network] region_buffer_m``).

    Parameters
    ----------
    network : Network
        With at least one cell.
    buffer_m : float
        Reach beyond the outermost cells [m], ≥ 0 (500 m by default: about one
        inter-site distance of an urban macro layer).

    Returns
    -------
    shapely.Polygon
        In the network CRS.

    Raises
    ------
    ValidationError
        For a network without cells, or a `buffer_m` that is not ≥ 0 and finite.
    """
    buffer_m = check_real(buffer_m, "buffer_m", "region_buffer_m")
    if network.n_cells == 0:
        raise ValidationError("the network has no region and no cells to draw one around; fix: "
                              "pass region=<shapely polygon in the network CRS>")
    xy = np.column_stack([network.cells.geometry.x, network.cells.geometry.y])
    return shapely.convex_hull(shapely.MultiPoint(xy)).buffer(buffer_m)


def study_window(
    network: Network,
    area: shapely.Geometry | gpd.GeoSeries | gpd.GeoDataFrame | Sequence[float],
    *,
    guard_m: float = 500.0,
) -> Network:
    """Restrict a network to a study area and the guard band around it.

    A city-wide cell list is too large to sweep at femtocell density, and the users at
    the edge of any cut-out see interference from one side only. So the cut keeps the
    cells within `guard_m` of the area as interferers, and users and femtocells dropped
    later go everywhere in that buffered area (its :attr:`~cellopt.Network.region`), so
    the guard cells carry load; statistics count only the users inside the area
    (:attr:`~cellopt.Network.study_area`, :meth:`~cellopt.Network.in_study_area`).

    Parameters
    ----------
    network : Network
    area : shapely polygon, GeoSeries / GeoDataFrame, or (lon_min, lat_min, lon_max, lat_max)
        The study area: a polygon in the network CRS [m]; polygons with a CRS (their
        union), reprojected; or a box in degrees (EPSG:4326).
    guard_m : float
        Width of the guard band [m], ≥ 0.

    Returns
    -------
    Network
        The cells within the buffered area (others dropped), with ``region`` = area
        buffered by `guard_m` and ``study_area`` = area. Users are kept only inside the
        new region.

    Raises
    ------
    ValidationError
        A box that is not ``lon_min < lon_max``, ``lat_min < lat_max`` in degrees, an
        empty or non-polygonal area, a guard band that is not a finite width ≥ 0 m, or an
        area holding no cell.
    """
    if not isinstance(network, Network):
        raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt Network")
    polygon = _as_polygon(area, network.crs)
    guard_m = check_real(guard_m, "guard_m")
    region = polygon.buffer(guard_m) if guard_m > 0 else polygon
    keep = _within(region, network.cells)
    if not _within(polygon, network.cells).any():
        lon_lat = network.cells.geometry.to_crs("EPSG:4326").total_bounds.round(4).tolist()
        raise ValidationError(f"the study area holds none of the {network.n_cells} cells; fix: an "
                              f"area over the data (the cells span lon/lat {lon_lat})")
    users = network.users[_within(region, network.users)].reset_index(drop=True)
    return network.replace(cells=network.cells[keep].reset_index(drop=True), users=users,
                           region=region, study_area=polygon)


def _within(polygon: shapely.Geometry, frame: gpd.GeoDataFrame) -> np.ndarray:
    """Rows of `frame` whose point lies in `polygon` or on its edge, bool of shape (n,)."""
    return shapely.intersects_xy(polygon, frame.geometry.x.to_numpy(float),
                                 frame.geometry.y.to_numpy(float))


def _as_polygon(area: Any, crs: Any) -> shapely.Geometry:
    if isinstance(area, gpd.GeoDataFrame):
        area = area.geometry
    if isinstance(area, gpd.GeoSeries):
        if area.crs is None:
            raise ValidationError("the study area GeoSeries has no CRS; fix: set one, e.g. "
                                  "area.set_crs('EPSG:4326')")
        area = shapely.union_all(area.to_crs(crs).values)
    elif not isinstance(area, shapely.Geometry):
        try:
            box = np.asarray(area, dtype=float)
        except (TypeError, ValueError):
            box = np.full(1, np.nan)
        if box.shape != (4,) or not (-180 <= box[0] < box[2] <= 180 and -90 <= box[1] < box[3] <= 90):
            raise ValidationError(f"study area box {np.atleast_1d(box).tolist()}; fix: give "
                                  "[lon_min, lat_min, lon_max, lat_max] in degrees, min < max")
        area = gpd.GeoSeries([shapely.box(*box)], crs="EPSG:4326").to_crs(crs).iloc[0]
    if area.geom_type not in ("Polygon", "MultiPolygon") or not area.area > 0:
        raise ValidationError(f"the study area is a {area.geom_type} of area {area.area:g} m²; fix: "
                              "give a polygon with positive area")
    return area
