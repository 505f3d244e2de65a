"""Projecting the cells of a file to a metric CRS, and the checks around it.

The default target CRS comes from :func:`cellopt.crs.metric_crs`; a given one must be
projected in metres, and is used as it is, with a warning where it distorts distances
at the cells by more than :data:`~cellopt.crs.MAX_DISTANCE_ERROR`.
"""

from __future__ import annotations

import warnings
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely

from cellopt.crs import MAX_DISTANCE_ERROR, describe_error, metric_crs
from cellopt.errors import ValidationError, describe_rows
from cellopt.topology.cellfiles.problems import _Report
from cellopt.topology.cellfiles.records import Source


def _as_crs(value: Any, name: str) -> pyproj.CRS | None:
    if value is None:
        return None
    try:
        return pyproj.CRS.from_user_input(value)
    except pyproj.exceptions.CRSError as exc:
        raise ValidationError(f"{name}={value!r} is not a CRS ({exc}); fix: give an EPSG code "
                              "such as 'EPSG:32610' or a pyproj.CRS") from exc


def _check_target_crs(crs: pyproj.CRS | None) -> None:
    """Refuse a target CRS whose coordinates are not metres."""
    if crs is None:
        return
    fix = ("fix: give a projected CRS in metres, e.g. the UTM zone of the data such as "
           "'EPSG:32610', or drop crs= to choose one from the data")
    if not crs.is_projected:
        raise ValidationError(f"crs={crs.to_string()} is not a projected CRS (its coordinates "
                              f"are not metres on a plane); {fix}")
    units = sorted({axis.unit_name for axis in crs.axis_info})
    if not units or not set(units) <= {"metre", "meter"}:
        raise ValidationError(f"crs={crs.to_string()} has axes in {units}, not metres; {fix}")


def _default_crs(points: gpd.GeoSeries, frame: pd.DataFrame, src: Source) -> pyproj.CRS:
    """The metric CRS for the cells (:func:`~cellopt.crs.metric_crs`),
    after refusing positions that do not transform to lon/lat."""
    lonlat = points.to_crs("EPSG:4326")
    lon, lat = shapely.get_x(lonlat.values), shapely.get_y(lonlat.values)
    report = _Report(frame, src.name, src.id_col)
    report(~(np.isfinite(lon) & np.isfinite(lat)),
           f"the position does not transform to lon/lat from {src.crs.to_string()}",
           "check source_crs (the CRS of the coordinates in the file)")
    if report.problems:
        raise ValidationError(report.problems)
    try:
        return metric_crs(points, src.name, fix="split the data by region and read each part "
                          "separately (filters bbox=, polygon= or mcc=), or pass crs= a "
                          "projected CRS in metres whose distortion you accept")
    except ValidationError as err:
        raise ValidationError(_stray_rows(lon, lat, frame, src) + err.problems) from None


# Rows are named as strays of a file refused for its extent when they lie farther than
# this from the median position of the rows, and than _STRAY_SPREAD times the median
# distance of the rows from it, and are fewer than half of them.
_STRAY_KM = 100.0
_STRAY_SPREAD = 10.0


def _warn_stray_rows(points: gpd.GeoSeries, frame: pd.DataFrame, src: Source) -> None:
    """Warn about the few rows that lie far from all the others (:func:`_stray_rows`): the
    network's region, the cells' hull, would reach out to them."""
    lonlat = points.to_crs("EPSG:4326")
    lines = _stray_rows(shapely.get_x(lonlat.values), shapely.get_y(lonlat.values), frame, src,
                        "the cells' region (their hull) reaches out to them")
    for line in lines:
        warnings.warn(line, UserWarning, stacklevel=3)


def _stray_rows(lon: np.ndarray, lat: np.ndarray, frame: pd.DataFrame, src: Source,
                harm: str = "they alone spread the file too wide for one projection"
                ) -> list[str]:
    """A line naming the few rows that lie far from all the others (a stray position, which
    alone makes the file too wide for one projection), or none."""
    lon0, lat0 = float(np.median(lon)), float(np.median(lat))
    _, _, dist_m = pyproj.Geod(ellps="WGS84").inv(np.full(len(lon), lon0),
                                                  np.full(len(lat), lat0), lon, lat)
    km = dist_m / 1e3
    far = km > max(_STRAY_KM, _STRAY_SPREAD * float(np.median(km)))
    if not far.any() or far.sum() * 2 >= len(km):
        return []
    report = _Report(frame, src.name, src.id_col)
    xname, yname = src.labels()
    report(far, f"these rows lie up to {km[far].max():,.0f} km from the other cells (median "
           f"position {lat0:.4f}° lat, {lon0:.4f}° lon; the others within "
           f"{km[~far].max():,.0f} km): {harm}",
           f"check '{xname}' and '{yname}' in these rows, or drop them")
    return report.problems


def _warn_distortion(points: gpd.GeoSeries, frame: pd.DataFrame, src: Source,
                     crs: pyproj.CRS) -> None:
    """Warn when a given target CRS scales distances at the cells by more than 1 %."""
    lonlat = points.to_crs(crs.geodetic_crs or "EPSG:4326")
    try:
        factors = pyproj.Proj(crs).get_factors(shapely.get_x(lonlat.values),
                                               shapely.get_y(lonlat.values), errcheck=False)
    except (pyproj.exceptions.ProjError, pyproj.exceptions.CRSError):
        return  # a CRS PROJ cannot give scale factors for: nothing to say
    scales = np.column_stack([factors.tissot_semimajor, factors.tissot_semiminor])
    with np.errstate(invalid="ignore"):
        error = np.max(np.abs(scales - 1.0), axis=1)
        bad = ~(error <= MAX_DISTANCE_ERROR)
    if bad.any():
        ids = None if src.id_col is None else frame[src.id_col].to_numpy(object)[bad]
        worst = np.nanmax(error) if np.isfinite(error).any() else np.inf
        warnings.warn(f"{src.name}: crs={crs.to_string()} scales distances at "
                      f"{describe_rows(frame.index.to_numpy()[bad], ids)} by {describe_error(worst)} "
                      f"(more than {MAX_DISTANCE_ERROR:.0%}); the cells are projected as asked, "
                      "but distances there are off: choose a crs made for this area, or drop "
                      "crs= to choose one from the data", UserWarning, stacklevel=3)


def _check_projected(xy_m: np.ndarray, frame: pd.DataFrame, src: Source,
                     crs: pyproj.CRS) -> None:
    """Refuse positions that the target CRS cannot hold (outside its domain)."""
    report = _Report(frame, src.name, src.id_col)
    report(~np.isfinite(xy_m).all(axis=1),
           f"the position has no finite coordinates in crs={crs.to_string()}",
           "choose a crs whose area of use covers these cells, or drop crs= to choose one "
           "from the data")
    if report.problems:
        raise ValidationError(report.problems)
