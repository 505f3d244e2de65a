"""A metric CRS for data given in lon/lat that keeps distances within 1 %.

The UTM zone of the data when its scale stays within :data:`MAX_DISTANCE_ERROR` over the
data's extent; else an azimuthal equidistant projection centred on the data when that
stays within it; else a refusal naming the extent. See docs/conventions.md, "Coordinates
and CRS".
"""

from __future__ import annotations

import functools

import geopandas as gpd
import numpy as np
import pyproj
import shapely
from pyproj.aoi import AreaOfInterest
from pyproj.database import query_utm_crs_info

from cellopt.errors import ValidationError

__all__ = ["MAX_DISTANCE_ERROR", "describe_error", "metric_crs"]

#: Largest relative error of projected distances that the default projection may make.
MAX_DISTANCE_ERROR = 0.01
# Mean Earth radius [m], for the spherical scale bound of the azimuthal projection.
_EARTH_RADIUS_M = 6_371_008.8


def metric_crs(points: gpd.GeoSeries, name: str, fix: str) -> pyproj.CRS:
    """The metric CRS for `points`: their UTM zone, else a centred azimuthal equidistant one.

    Each is used only if it keeps every distance between the points within
    :data:`MAX_DISTANCE_ERROR` of the geodesic distance; otherwise the data is refused.

    Parameters
    ----------
    points : geopandas.GeoSeries
        Positions with a CRS, shape (n,), n ≥ 1, all transforming to finite lon/lat.
    name : str
        What the points are, for the message (e.g. the file name).
    fix : str
        How to avoid the refusal, for the message.

    Returns
    -------
    pyproj.CRS
        A projected CRS in metres.

    Raises
    ------
    ValidationError
        For data no single local projection keeps within the error, naming its extent.
    """
    lonlat = points.to_crs("EPSG:4326")
    lon, lat = shapely.get_x(lonlat.values), shapely.get_y(lonlat.values)
    west, east, crosses = _lon_range(lon)
    utm = _utm_zone(points, west, east, crosses, lat)
    utm_error = _utm_distance_error(utm, lon, lat)
    if utm_error <= MAX_DISTANCE_ERROR:
        return utm
    lon0, lat0 = _centre(lon, lat)
    _, _, dist_m = pyproj.Geod(ellps="WGS84").inv(np.full(len(lon), lon0),
                                                  np.full(len(lat), lat0), lon, lat)
    radius_m = float(np.max(dist_m))
    aeqd_error = _aeqd_distance_error(radius_m)
    if aeqd_error <= MAX_DISTANCE_ERROR:
        return pyproj.CRS.from_dict({"proj": "aeqd", "lat_0": lat0, "lon_0": lon0,
                                     "datum": "WGS84", "units": "m"})
    across = " (across the antimeridian)" if crosses else ""
    utm_name = utm.name if utm is not None else "no UTM zone (polar data)"
    raise ValidationError(
        f"{name}: the cells span lon [{west:.6g}, {east:.6g}]{across}, lat "
        f"[{lat.min():.6g}, {lat.max():.6g}], up to {radius_m / 1e3:,.0f} km from their centre "
        f"(lon {lon0:.6g}, lat {lat0:.6g}): no single local projection keeps their distances "
        f"within {MAX_DISTANCE_ERROR:.0%} ({utm_name}: {describe_error(utm_error)}; azimuthal "
        f"equidistant centred on the cells: {describe_error(aeqd_error)}); fix: {fix}")


def describe_error(error: float) -> str:
    """``up to 1.2% off``, or ``unusable`` for an infinite error."""
    return f"up to {error:.1%} off" if np.isfinite(error) else "unusable"


def _lon_range(lon: np.ndarray) -> tuple[float, float, bool]:
    """West and east ends of the shortest arc of longitude holding every point [degrees].

    The arc leaves out the widest gap between neighbouring longitudes; it crosses the
    antimeridian (third value True, west > east) unless that gap is the one across it.
    """
    s = np.sort(np.asarray(lon, float))
    gaps = np.diff(np.append(s, s[0] + 360.0))  # last gap: across the antimeridian
    i = int(np.argmax(gaps))
    if gaps[-1] >= gaps[i]:
        return float(s[0]), float(s[-1]), False
    return float(s[i + 1]), float(s[i]), True


def _utm_zone(points: gpd.GeoSeries, west: float, east: float, crosses: bool,
              lat: np.ndarray) -> pyproj.CRS | None:
    """The UTM zone of the points' extent, or None where UTM is undefined (poles)."""
    if not crosses:
        try:
            return _estimated_utm(points.crs.to_wkt(), tuple(float(v) for v in points.total_bounds))
        except RuntimeError:  # beyond 84° N / 80° S
            return None
    centre = (west + ((east - west) % 360.0) / 2 + 180.0) % 360.0 - 180.0
    mid_lat = float(lat.min() + lat.max()) / 2
    found = query_utm_crs_info(datum_name="WGS 84", area_of_interest=AreaOfInterest(
        west_lon_degree=centre, south_lat_degree=mid_lat, east_lon_degree=centre,
        north_lat_degree=mid_lat))
    return pyproj.CRS.from_epsg(found[0].code) if found else None


@functools.lru_cache(maxsize=64)
def _estimated_utm(crs_wkt: str, bounds: tuple[float, float, float, float]) -> pyproj.CRS:
    """geopandas' ``estimate_utm_crs`` of points with these bounds in this CRS, cached.

    The estimate depends on the bounds alone, and its database query takes 0.05-0.2 s:
    the same cell file read again does not pay it twice.
    """
    corners = gpd.GeoSeries(shapely.points([bounds[:2], bounds[2:]]), crs=crs_wkt)
    return corners.estimate_utm_crs()


def _utm_distance_error(crs: pyproj.CRS | None, lon: np.ndarray, lat: np.ndarray) -> float:
    """Bound on the relative distance error of a transverse Mercator CRS over the points.

    The scale factor k of transverse Mercator grows with the distance from the central
    meridian and shrinks towards the poles, so over the points' lon/lat box it is largest
    at the longitude farthest from the meridian and the latitude nearest the equator, and
    smallest (k0) on the meridian. A projected distance is the geodesic one times a
    scale between these two, hence the bound max(k_max - 1, 1 - k0).
    """
    if crs is None or crs.coordinate_operation is None:
        return np.inf
    params = {p.name: p.value for p in crs.coordinate_operation.params}
    lon_0 = params.get("Longitude of natural origin")
    k0 = params.get("Scale factor at natural origin")
    if lon_0 is None or k0 is None:
        return np.inf
    offset = np.max(np.abs((lon - lon_0 + 180.0) % 360.0 - 180.0))
    if offset >= 80.0:  # far outside any transverse Mercator's usable band
        return np.inf
    lat_min, lat_max = float(np.min(lat)), float(np.max(lat))
    near_equator = 0.0 if lat_min <= 0.0 <= lat_max else min(abs(lat_min), abs(lat_max))
    factors = pyproj.Proj(crs).get_factors((lon_0 + offset + 180.0) % 360.0 - 180.0,
                                           near_equator)
    k_max = max(factors.meridional_scale, factors.parallel_scale)
    if not np.isfinite(k_max):
        return np.inf
    return float(max(k_max - 1.0, 1.0 - k0))


def _aeqd_distance_error(radius_m: float) -> float:
    """Bound on the relative distance error of an azimuthal equidistant projection.

    Its scale is 1 along the radii and c / sin c across them, at angular distance c from
    the centre; a disc of radius c around the centre projects to a disc, so every
    projected distance is between 1 and c / sin c times the geodesic one.
    """
    c = radius_m / _EARTH_RADIUS_M
    if c <= 0.0:
        return 0.0
    if c >= np.pi / 2:
        return np.inf
    return float(c / np.sin(c) - 1.0)


def _centre(lon: np.ndarray, lat: np.ndarray) -> tuple[float, float]:
    """A centre of the points: the middle of their bounding box in 3-D [degrees].

    Working on unit vectors makes it indifferent to the antimeridian and the poles, and
    the box (not the mean) to how many points sit in each part of the extent.
    """
    lam, phi = np.radians(lon), np.radians(lat)
    xyz = np.column_stack([np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)])
    mid = (xyz.min(axis=0) + xyz.max(axis=0)) / 2
    norm = float(np.linalg.norm(mid))
    if norm < 1e-9:  # points all around the globe: any centre is as bad
        return float(lon[0]), float(lat[0])
    lon0 = float(np.degrees(np.arctan2(mid[1], mid[0])))
    lat0 = float(np.degrees(np.arcsin(np.clip(mid[2] / norm, -1.0, 1.0))))
    return round(lon0, 6), round(lat0, 6)
