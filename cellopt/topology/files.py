"""Read real cell positions from files: plain CSV, vector files and OpenCelliD exports.

:func:`read_cells` is the one entry point. It validates the file at the boundary (every
problem it finds is gathered into one :class:`~cellopt.errors.ValidationError` that names
the offending rows and the fix), applies the optional filters, projects the positions
once to a metric CRS (the UTM zone of the data by default) and, for OpenCelliD exports,
clusters the measured LTE sectors into sites. Nothing here loops over rows in Python.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely
from scipy import sparse
from scipy.sparse import csgraph
from scipy.spatial import cKDTree

from cellopt.errors import ValidationError, describe_rows
from cellopt.network import Network, cells_frame

__all__ = ["OPENCELLID_COLUMNS", "read_cells"]

#: Header of an OpenCelliD export, in order; a CSV with exactly this header is read as one.
OPENCELLID_COLUMNS: tuple[str, ...] = (
    "radio", "mcc", "net", "area", "cell", "unit", "lon", "lat", "range", "samples",
    "changeable", "created", "updated", "averageSignal",
)

_VECTOR_SUFFIXES = {".geojson", ".json", ".gpkg", ".shp"}
_COMPRESSION_SUFFIXES = {".gz", ".bz2", ".zip", ".xz", ".zst"}
_FORMATS = ("csv", "opencellid", "vector")

# Accepted coordinate column names (matched case-insensitively), in order of preference.
_LON_NAMES = ("lon", "longitude")
_LAT_NAMES = ("lat", "latitude")
_X_NAMES = ("x", "x_m")
_Y_NAMES = ("y", "y_m")

# Optional cell columns of plain CSV / vector input (see cellopt.network.CELL_COLUMNS).
_NUMERIC_COLUMNS = (
    "height_m", "azimuth_deg", "antenna_gain_dbi", "tx_power_dbm", "backhaul_mbps",
    "price_per_mbps",
)
_OPTIONAL_COLUMNS = ("cell_id", "site_id", "tier", "owner", *_NUMERIC_COLUMNS)

# Radios whose cell number is unique only within its area (GSM LAC, CDMA NID); for the
# others (UMTS, LTE, NR) the cell number is unique within the operator (mcc, mnc).
_AREA_SCOPED_RADIOS = ("GSM", "CDMA")


# ---------------------------------------------------------------------- public entry
def read_cells(
    path: str | os.PathLike[str],
    *,
    format: Literal["csv", "opencellid", "vector"] | None = None,
    crs: Any = None,
    source_crs: Any = None,
    radio: str | Sequence[str] | None = None,
    mcc: int | Sequence[int] | None = None,
    mnc: int | Sequence[int] | None = None,
    bbox: tuple[float, float, float, float] | None = None,
    polygon: shapely.Geometry | gpd.GeoSeries | gpd.GeoDataFrame | None = None,
    cluster_sites: bool = True,
    merge_distance_m: float = 50.0,
    tier: str = "macro",
    tx_power_dbm: float = 46.0,
    antenna_gain_dbi: float = 14.0,
    height_m: float = 25.0,
    bandwidth_mhz: float = 10.0,
) -> Network:
    """Read cell positions from a file into a validated network in a metric CRS.

    Parameters
    ----------
    path : str or os.PathLike
        The file. Its format is detected from its name and header unless `format` is
        given: ``.geojson``, ``.json``, ``.gpkg``, ``.shp`` are vector files; any other
        file is read as CSV (compressed ``.csv.gz`` etc. included), as an OpenCelliD
        export if its header is exactly :data:`OPENCELLID_COLUMNS`, else as a plain CSV.
    format : {'csv', 'opencellid', 'vector'}, optional
        Force a format instead of detecting it.
    crs : pyproj.CRS or str, optional
        Target CRS, projected with metre units. Default: the UTM zone of the data
        (``GeoDataFrame.estimate_utm_crs()``), whatever the source CRS.
    source_crs : pyproj.CRS or str, optional
        CRS of the coordinates in the file. Plain CSV: required with ``x``/``y``
        columns; with ``lon``/``lat`` columns it defaults to EPSG:4326 and must be
        geographic. Vector files: default the file's CRS; if given, it replaces the
        file's (for files with missing or wrong CRS metadata). OpenCelliD: EPSG:4326.
    radio : str or sequence of str, optional
        Keep only these radio technologies (e.g. ``"LTE"``; case-insensitive). Needs a
        ``radio`` column.
    mcc : int or sequence of int, optional
        Keep only these mobile country codes. Needs an ``mcc`` column.
    mnc : int or sequence of int, optional
        Keep only these mobile network codes. Needs an ``mnc`` column (``net`` in
        OpenCelliD exports).
    bbox : (float, float, float, float), optional
        ``(x_min, y_min, x_max, y_max)`` in the source CRS, bounds included; that is
        ``(lon_min, lat_min, lon_max, lat_max)`` [degrees] for OpenCelliD and lon/lat
        CSVs.
    polygon : shapely.Geometry or geopandas.GeoSeries or geopandas.GeoDataFrame, optional
        Keep only cells inside (or on the boundary of) this area. A bare shapely geometry
        is in the source CRS (lon/lat [degrees] for OpenCelliD and lon/lat CSVs); a
        GeoSeries / GeoDataFrame must have a CRS and is reprojected (union of its rows).
    cluster_sites : bool
        OpenCelliD only: cluster the measured cells into sites (see Notes). If False,
        every cell is its own site at its measured position. Ignored for other formats,
        which carry their sites in an optional ``site_id`` column.
    merge_distance_m : float
        OpenCelliD clustering: merge sites closer than this [m]; 0 merges nothing.
    tier : str
        Tier of cells without a ``tier`` column: ``'macro'``, ``'pico'`` or ``'femto'``.
    tx_power_dbm : float
        Maximum transmit power of cells without a ``tx_power_dbm`` column [dBm].
    antenna_gain_dbi : float
        Boresight antenna gain of cells without an ``antenna_gain_dbi`` column [dBi].
    height_m : float
        Antenna height of cells without a ``height_m`` column [m].
    bandwidth_mhz : float
        Total bandwidth of the returned network [MHz] (one resource).

    Returns
    -------
    cellopt.Network
        Cells only (no users), validated, in `crs` (metres). Columns: those of
        :data:`cellopt.network.CELL_COLUMNS`, plus the extra columns described in Notes.
        The rows keep the file's order (minus the rows dropped by filters or
        de-duplication), with a fresh index ``0..n-1``.

    Raises
    ------
    FileNotFoundError
        If `path` does not exist.
    ValidationError
        On bad input, listing every problem found, each with the offending rows and the
        fix: an empty file; a CSV without usable coordinate columns; missing, non-numeric
        or infinite coordinates; latitudes outside [-90, 90] or longitudes outside
        [-180, 180] (including lon/lat columns that look swapped); duplicate or missing
        ``cell_id`` (plain CSV / vector); non-numeric values in numeric columns; a filter
        that leaves no rows (naming the filter); and everything
        :meth:`cellopt.Network.validate` rejects (an unknown tier, say). Rows are
        numbered from 0 over the file's data rows (the CSV header is not a row), and
        identified by ``cell_id`` (OpenCelliD: by ``cell``) when the file has one.

    Notes
    -----
    **Plain CSV.** Coordinates come from ``lon``, ``lat`` (or ``longitude``,
    ``latitude``; case-insensitive; degrees), or, if there is no such pair, from ``x``,
    ``y`` (or ``x_m``, ``y_m``) in `source_crs`. The optional columns ``cell_id``,
    ``site_id``, ``tier``, ``owner``, ``height_m``, ``azimuth_deg``,
    ``antenna_gain_dbi``, ``tx_power_dbm``, ``backhaul_mbps``, ``price_per_mbps`` are
    used as they are when present (an empty ``azimuth_deg`` means omni; other empty
    values are errors); absent ones take this function's defaults (``owner`` =
    ``'operator'``, ``azimuth_deg`` = NaN, ``backhaul_mbps`` = inf, ``price_per_mbps`` =
    0, ``cell_id`` and ``site_id`` = ``0..n-1``). Every other column is kept as an
    extra column; lon/lat coordinates are kept as ``lon``, ``lat`` [degrees], x/y ones
    are consumed (the geometry holds them, reprojected).

    **Vector files** (GeoJSON, GeoPackage, shapefile): one Point per row, with the same
    optional columns as plain CSV; other columns are kept.

    **OpenCelliD exports.** After the `radio` / `mcc` / `mnc` filters:

    * *Duplicates.* The same cell appears in several rows when it was seen with
      different ``area`` codes (the LTE tracking area changed). A cell is identified by
      (radio, mcc, net, cell), and for GSM and CDMA, whose cell numbers are unique only
      within an area, by (radio, mcc, net, area, cell). Of the rows of one cell the one
      with most ``samples`` is kept (ties: the most recently ``updated``, then the
      first in the file); this happens before the `bbox` / `polygon` filters.
    * *Ids.* ``cell_id`` is the string ``'{radio}-{mcc}-{mnc}-{area}-{cell}'``, e.g.
      ``'LTE-311-480-9728-9903886'`` (the kept row's area), unique by construction.
    * *Sites* (``cluster_sites=True``). LTE cells are grouped by eNB, (mcc, mnc,
      ``cell // 256``); a cell of another radio is its own group. A group's site
      position is the mean of its cells' projected positions. Sites closer than
      `merge_distance_m` are then merged (connected components of the graph of such
      pairs), and the merge is repeated on the merged positions until no two sites are
      closer than `merge_distance_m`; a merged site's position is the mean of all its
      cells' positions. So every two sites of the result are at least
      `merge_distance_m` apart. Every cell is moved to its site's position and
      ``site_id`` numbers the sites ``0..n_sites-1`` in order of first appearance.
    * *Azimuths.* OpenCelliD has no antenna azimuths: every cell is omnidirectional
      (``azimuth_deg`` = NaN); the other cell columns take this function's defaults.
    * *Extra columns:* ``radio`` (upper case), ``mcc``, ``mnc``, ``area``, ``cell``,
      ``enb_id`` (LTE only, else missing), ``range_m`` (OpenCelliD's estimated range
      [m]), ``samples``, and ``lon``, ``lat``: the measured position [degrees], before
      clustering. The other export columns are dropped.

    OpenCelliD positions are centres of crowd-sourced measurements, not surveyed mast
    positions.

    Examples
    --------
    >>> net = read_cells("opencellid.csv", radio="LTE", mcc=311, mnc=480)  # doctest: +SKIP
    >>> net.cells[["cell_id", "site_id", "lon", "lat"]].head()  # doctest: +SKIP
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: '{path}'; fix: check the path")
    name = path.name
    if path.is_file() and path.stat().st_size == 0:
        raise ValidationError(f"{name}: the file is empty (0 bytes); fix: give a file with "
                              "a header and at least one row of cells")
    if not (np.isfinite(merge_distance_m) and merge_distance_m >= 0):
        raise ValidationError(f"merge_distance_m is {merge_distance_m}; fix: give a distance "
                              "≥ 0 in metres (0 merges nothing)")
    target_crs = _as_crs(crs, "crs")
    src_crs = _as_crs(source_crs, "source_crs")

    kind = _detect_format(path, format)
    if kind == "vector":
        frame, src = _read_vector(path, src_crs)
    else:
        frame = _read_csv(path)
        if kind is None:
            kind = "opencellid" if tuple(frame.columns) == OPENCELLID_COLUMNS else "csv"
        src = _csv_source(frame, name, kind, src_crs)
    if not len(frame):
        raise ValidationError(f"{name}: the file has no data rows; fix: give at least one "
                              "cell")

    frame = _attribute_filters(frame, name, kind, radio=radio, mcc=mcc, mnc=mnc)
    x, y, problems = _coordinates(frame, src)
    if kind == "opencellid":
        codes, more = _opencellid_codes(frame, name)
    else:
        codes, more = {}, _cell_problems(frame, name)
    problems += more
    if problems:
        raise ValidationError(problems)

    keep = np.ones(len(frame), bool)
    if kind == "opencellid":
        keep = _best_rows(frame, codes)
    keep &= _spatial_filters(frame, x, y, keep, src, bbox=bbox, polygon=polygon)
    frame, x, y = frame[keep], x[keep], y[keep]
    codes = {k: v[keep] for k, v in codes.items()}

    points = gpd.GeoSeries(shapely.points(x, y), crs=src.crs)
    if target_crs is None:
        target_crs = points.estimate_utm_crs()
    xy_m = shapely.get_coordinates(points.to_crs(target_crs).values)
    defaults = dict(tier=tier, tx_power_dbm=tx_power_dbm, antenna_gain_dbi=antenna_gain_dbi,
                    height_m=height_m)
    if kind == "opencellid":
        cells = _opencellid_cells(frame, codes, xy_m, target_crs, cluster_sites,
                                  merge_distance_m, defaults)
    else:
        cells = _plain_cells(frame, src, x, y, xy_m, target_crs, defaults)
    return Network(cells=cells, bandwidth_mhz=bandwidth_mhz).validate()


# ---------------------------------------------------------------------- reading
@dataclasses.dataclass(frozen=True)
class _Source:
    """Where the coordinates of a table come from."""

    name: str  # file name, for messages
    kind: str  # 'csv', 'opencellid' or 'vector'
    crs: pyproj.CRS  # CRS of the coordinates in the file
    xcol: str | None  # coordinate columns; None for vector files (the geometry)
    ycol: str | None
    id_col: str | None  # column identifying rows in messages

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


def _as_crs(value: Any, name: str) -> pyproj.CRS | None:
    if value is None:
        return None
    try:
        return pyproj.CRS.from_user_input(value)
    except pyproj.exceptions.CRSError as exc:
        raise ValidationError(f"{name}={value!r} is not a CRS ({exc}); fix: give an EPSG code "
                              "such as 'EPSG:32610' or a pyproj.CRS") from exc


def _detect_format(path: Path, format: str | None) -> str | None:
    """'vector', 'csv', 'opencellid', or None for 'a CSV, decide from its header'."""
    if format is not None:
        if format not in _FORMATS:
            raise ValidationError(f"format={format!r} is unknown; fix: use one of "
                                  f"{list(_FORMATS)} or None to detect it")
        return format
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION_SUFFIXES:
        suffixes = suffixes[:-1]
    if path.is_dir() or (suffixes and suffixes[-1] in _VECTOR_SUFFIXES):
        return "vector"
    return None


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError as exc:
        raise ValidationError(f"{path.name}: the file is empty (no header); fix: give a "
                              "header line and at least one row of cells") from exc
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValidationError(f"{path.name}: cannot be parsed as CSV ({exc}); fix: give a "
                              "comma-separated file with one header line") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _read_vector(path: Path, source_crs: pyproj.CRS | None) -> tuple[pd.DataFrame, _Source]:
    try:
        frame = gpd.read_file(path)
    except Exception as exc:  # pyogrio raises several kinds; all mean "not readable"
        raise ValidationError(f"{path.name}: cannot be read as a vector file ({exc}); fix: "
                              "give a GeoJSON, GeoPackage or shapefile, or pass format="
                              "'csv'") from exc
    if not isinstance(frame, gpd.GeoDataFrame):  # a table without geometries
        raise ValidationError(f"{path.name}: the file has no geometries; fix: give one Point "
                              "per cell, or pass format='csv' for a table with coordinates")
    crs = source_crs if source_crs is not None else frame.crs
    if crs is None:
        raise ValidationError(f"{path.name}: the file has no CRS; fix: pass source_crs=..., "
                              "e.g. source_crs='EPSG:4326'")
    id_col = "cell_id" if "cell_id" in frame.columns else None
    return frame, _Source(path.name, "vector", pyproj.CRS(crs), None, None, id_col)


def _pick_column(columns: Sequence[str], names: Sequence[str], file: str) -> str | None:
    """The column whose case-folded name is the first of `names` found, or None."""
    folded = pd.Series(list(columns), dtype=object)
    keys = folded.str.casefold()
    for want in names:
        hits = folded[keys == want].tolist()
        if len(hits) > 1:
            raise ValidationError(f"{file}: columns {hits} all read as '{want}'; fix: keep "
                                  "one of them")
        if hits:
            return hits[0]
    return None


def _csv_source(frame: pd.DataFrame, name: str, kind: str,
                source_crs: pyproj.CRS | None) -> _Source:
    cols = list(frame.columns)
    if kind == "opencellid":
        missing = [c for c in OPENCELLID_COLUMNS if c not in cols]
        if missing:
            raise ValidationError(f"{name}: lacks the OpenCelliD columns {missing}; fix: give "
                                  f"an export with the header {','.join(OPENCELLID_COLUMNS)}, "
                                  "or pass format='csv'")
        return _Source(name, kind, pyproj.CRS("EPSG:4326"), "lon", "lat", "cell")
    id_col = "cell_id" if "cell_id" in cols else None
    lon, lat = _pick_column(cols, _LON_NAMES, name), _pick_column(cols, _LAT_NAMES, name)
    x, y = _pick_column(cols, _X_NAMES, name), _pick_column(cols, _Y_NAMES, name)
    if lon and lat:
        crs = source_crs if source_crs is not None else pyproj.CRS("EPSG:4326")
        if not crs.is_geographic:
            raise ValidationError(f"{name}: columns '{lon}', '{lat}' are degrees but "
                                  f"source_crs={crs.to_string()} is projected; fix: drop "
                                  "source_crs, or name the columns 'x', 'y'")
        return _Source(name, kind, crs, lon, lat, id_col)
    if x and y:
        if source_crs is None:
            raise ValidationError(f"{name}: columns '{x}', '{y}' need source_crs; fix: pass "
                                  "the CRS of these coordinates, e.g. source_crs='EPSG:32610'")
        return _Source(name, kind, source_crs, x, y, id_col)
    half = [f"'{c}'" for c in (lon, lat, x, y) if c]
    found = f"; it has only {', '.join(half)} of them" if half else ""
    raise ValidationError(
        f"{name}: lacks coordinate columns{found}; expected 'lon', 'lat' (or 'longitude', "
        "'latitude'; degrees, EPSG:4326) or 'x', 'y' (or 'x_m', 'y_m', with source_crs=...); "
        f"columns found: {cols}; fix: add or rename the coordinate columns"
    )


# ---------------------------------------------------------------------- checks
class _Report:
    """Collects problem lines naming rows by file position and id."""

    def __init__(self, frame: pd.DataFrame, name: str, id_col: str | None):
        self.name = name
        self.pos = frame.index.to_numpy()
        self.ids = frame[id_col].to_numpy(object) if id_col else None
        self.problems: list[str] = []

    def __call__(self, bad: np.ndarray | pd.Series, what: str, fix: str) -> None:
        bad = np.asarray(bad, bool)
        if bad.any():
            ids = None if self.ids is None else self.ids[bad]
            self.problems.append(f"{self.name}: {describe_rows(self.pos[bad], ids)}: {what}; "
                                 f"fix: {fix}")


def _numbers(values: pd.Series, col: str, report: _Report) -> np.ndarray:
    """Coerce to float, reporting missing and non-numeric entries (NaN in the result)."""
    num = pd.to_numeric(values, errors="coerce").to_numpy(float)
    missing = values.isna().to_numpy()
    report(missing, f"{col} is missing", "fill it in or drop the row")
    report(np.isnan(num) & ~missing, f"{col} is not a number", f"give numbers in '{col}'")
    return num


def _coordinates(frame: pd.DataFrame, src: _Source) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Source-CRS coordinates, shape (n,) each, and the problems found in them."""
    report = _Report(frame, src.name, src.id_col)
    xname, yname = src.labels()
    if src.xcol is not None:
        x = _numbers(frame[src.xcol], src.xcol, report)
        y = _numbers(frame[src.ycol], src.ycol, report)
    else:
        geom = frame.geometry.to_numpy()
        missing = np.asarray(shapely.is_missing(geom), bool)
        point = ~missing & (np.asarray(shapely.get_type_id(geom)) == 0)
        empty = point & np.asarray(shapely.is_empty(geom), bool)
        report(missing, "geometry is missing", "give one Point per row")
        report(~missing & ~point, "geometry is not a Point",
               "give one Point per row (e.g. the centroid of each shape)")
        report(empty, "geometry is an empty Point", "give a position or drop the row")
        ok = point & ~empty
        x = np.full(len(frame), np.nan)
        y = np.full(len(frame), np.nan)
        x[ok], y[ok] = shapely.get_x(geom[ok]), shapely.get_y(geom[ok])
        report(ok & (np.isnan(x) | np.isnan(y)), "geometry has NaN coordinates",
               "give a finite position or drop the row")
    report(np.isinf(x) | np.isinf(y), f"{xname} or {yname} is infinite",
           "give finite coordinates")
    if src.geographic:
        with np.errstate(invalid="ignore"):
            lon_bad, lat_bad = np.abs(x) > 180, np.abs(y) > 90
            swapped = lat_bad & (np.abs(y) <= 180) & (np.abs(x) <= 90)
        report(swapped, f"{yname} is outside [-90, 90] while {xname} is within [-90, 90]: "
               f"the {xname}/{yname} columns look swapped",
               f"swap the {xname} and {yname} values (longitude is x, latitude is y)")
        report(lat_bad & ~swapped, f"{yname} is outside [-90, 90]",
               "give latitudes in degrees in [-90, 90]")
        report(lon_bad & ~swapped, f"{xname} is outside [-180, 180]",
               "give longitudes in degrees in [-180, 180]")
    return x, y, report.problems


def _cell_problems(frame: pd.DataFrame, name: str) -> list[str]:
    """Ids and numeric optional columns of plain CSV / vector input."""
    id_col = "cell_id" if "cell_id" in frame.columns else None
    report = _Report(frame, name, id_col)
    if id_col:
        ids = frame["cell_id"]
        report(ids.isna(), "cell_id is missing", "give every row a cell_id, or drop the "
               "column to number the cells 0..n-1")
        report(ids.duplicated(keep=False) & ids.notna(), "duplicate cell_id",
               "make cell_id unique (one row per cell)")
    if "site_id" in frame.columns:
        report(frame["site_id"].isna(), "site_id is missing",
               "give every row a site_id, or drop the column (one site per cell)")
    for col in _NUMERIC_COLUMNS:
        if col in frame.columns:
            values = frame[col]
            num = pd.to_numeric(values, errors="coerce")
            report(num.isna() & values.notna(), f"{col} is not a number",
                   f"give numbers in '{col}'")
    return report.problems


def _opencellid_codes(frame: pd.DataFrame, name: str) -> tuple[dict[str, np.ndarray], list]:
    """Integer code columns of an OpenCelliD export, and the problems found in them."""
    report = _Report(frame, name, "cell")
    codes: dict[str, np.ndarray] = {}
    for col in ("mcc", "net", "area", "cell"):
        num = pd.to_numeric(frame[col], errors="coerce").to_numpy(float)
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(num) | (num < 0) | (num != np.floor(num))
        report(bad, f"{col} is missing or not a non-negative integer",
               f"give integer codes in '{col}', or drop the row")
        codes[col] = np.where(bad, -1, np.nan_to_num(num)).astype(np.int64)
    report(frame["radio"].isna(), "radio is missing", "give the radio (e.g. LTE), or drop "
           "the row")
    codes["radio"] = frame["radio"].astype(str).str.strip().str.upper().to_numpy(object)
    codes["samples"] = pd.to_numeric(frame["samples"], errors="coerce").to_numpy(float)
    codes["updated"] = pd.to_numeric(frame["updated"], errors="coerce").to_numpy(float)
    return codes, report.problems


# ---------------------------------------------------------------------- filters
def _as_list(value: Any, what: str, integer: bool) -> list:
    if integer:
        arr = np.atleast_1d(np.asarray(value)).ravel()
        ok = arr.dtype.kind in "iu" or (
            arr.dtype.kind == "f" and np.isfinite(arr).all() and (arr == np.round(arr)).all())
        if not ok or not len(arr):
            raise ValidationError(f"{what}={value!r} is not an integer or a list of integers; "
                                  f"fix: e.g. {what}=311")
        return arr.astype(np.int64).tolist()
    arr = np.atleast_1d(np.asarray(value, dtype=object)).ravel()
    return [str(v).strip().upper() for v in arr]


def _shown(values: pd.Series) -> list:
    """A few distinct values of a column, for messages."""
    uniq = pd.unique(values.dropna())
    out = [v.item() if hasattr(v, "item") else v for v in uniq[:10]]
    return [int(v) if isinstance(v, float) and v.is_integer() else v for v in out]


def _attribute_filters(frame: pd.DataFrame, name: str, kind: str, **filters: Any) -> pd.DataFrame:
    columns = {"radio": ("radio",), "mcc": ("mcc",),
               "mnc": ("net",) if kind == "opencellid" else ("mnc", "net")}
    for key, value in filters.items():
        if value is None:
            continue
        col = next((c for c in columns[key] if c in frame.columns), None)
        if col is None:
            raise ValidationError(f"{name}: filter {key}={value!r} needs a column "
                                  f"{' or '.join(map(repr, columns[key]))}; columns found: "
                                  f"{list(frame.columns)}; fix: add it or drop the filter")
        wanted = _as_list(value, key, integer=key != "radio")
        if key == "radio":
            have = frame[col].astype(str).str.strip().str.upper()
        else:
            have = pd.to_numeric(frame[col], errors="coerce")
        keep = have.isin(wanted).to_numpy()
        if not keep.any():
            raise ValidationError(f"{name}: no rows left after filter {key}={wanted} "
                                  f"({len(frame)} rows before it; column '{col}' has values "
                                  f"{_shown(have)}); fix: change or drop the {key} filter")
        frame = frame[keep]
    return frame


def _best_rows(frame: pd.DataFrame, codes: dict[str, np.ndarray]) -> np.ndarray:
    """Mask of the rows to keep: per cell, the one with most samples (then latest)."""
    area_scoped = np.isin(codes["radio"], _AREA_SCOPED_RADIOS)
    key = pd.DataFrame({
        "radio": codes["radio"], "mcc": codes["mcc"], "net": codes["net"],
        "area": np.where(area_scoped, codes["area"], -1), "cell": codes["cell"],
        "samples": np.nan_to_num(codes["samples"], nan=-np.inf),
        "updated": np.nan_to_num(codes["updated"], nan=-np.inf),
        "order": np.arange(len(frame)),
    })
    ranked = key.sort_values(["samples", "updated", "order"], ascending=[False, False, True],
                             kind="stable")
    first = ~ranked.duplicated(["radio", "mcc", "net", "area", "cell"], keep="first")
    keep = np.zeros(len(frame), bool)
    keep[ranked["order"].to_numpy()[first.to_numpy()]] = True
    return keep


def _filter_area(polygon: Any, crs: pyproj.CRS) -> shapely.Geometry:
    if isinstance(polygon, gpd.GeoDataFrame | gpd.GeoSeries):
        if polygon.crs is None:
            raise ValidationError("polygon has no CRS; fix: polygon.set_crs(...), or pass a "
                                  "shapely geometry in the file's coordinates (lon/lat)")
        area = polygon.to_crs(crs).union_all()
    elif isinstance(polygon, shapely.Geometry):
        area = polygon
    else:
        raise ValidationError(f"polygon is a {type(polygon).__name__}; fix: give a shapely "
                              "geometry or a GeoSeries / GeoDataFrame with a CRS")
    if area.is_empty or area.area <= 0:
        raise ValidationError(f"polygon {area.geom_type} has no area; fix: give a Polygon or "
                              "MultiPolygon")
    return area


def _spatial_filters(frame: pd.DataFrame, x: np.ndarray, y: np.ndarray, keep: np.ndarray,
                     src: _Source, *, bbox: Any, polygon: Any) -> np.ndarray:
    """Mask of the rows inside `bbox` and `polygon` (given the rows already kept)."""
    out = np.ones(len(frame), bool)
    xname, yname = src.labels()
    span = (f"the rows span {xname} [{np.min(x[keep]):.6g}, {np.max(x[keep]):.6g}], {yname} "
            f"[{np.min(y[keep]):.6g}, {np.max(y[keep]):.6g}]")
    if bbox is not None:
        box = np.asarray(bbox, dtype=float).ravel()
        if box.shape != (4,) or not np.isfinite(box).all() or box[0] > box[2] or box[1] > box[3]:
            raise ValidationError(f"bbox={bbox!r} is not (x_min, y_min, x_max, y_max) with "
                                  "min ≤ max; fix: e.g. bbox=(lon_min, lat_min, lon_max, "
                                  "lat_max) in the file's coordinates")
        out &= (x >= box[0]) & (x <= box[2]) & (y >= box[1]) & (y <= box[3])
        if not (out & keep).any():
            raise ValidationError(f"{src.name}: no rows left after filter bbox={tuple(box.tolist())} "
                                  f"({int(keep.sum())} rows before it; {span}); fix: widen or "
                                  "drop the bbox filter (it is in the file's CRS, "
                                  f"{src.crs.to_string()})")
    if polygon is not None:
        area = _filter_area(polygon, src.crs)
        shapely.prepare(area)
        before = int((out & keep).sum())
        out &= shapely.intersects_xy(area, x, y)
        if not (out & keep).any():
            raise ValidationError(f"{src.name}: no rows left after filter polygon (bounds "
                                  f"{tuple(round(b, 6) for b in area.bounds)}; {before} rows "
                                  f"before it; {span}); fix: check that the polygon is in "
                                  f"the file's CRS ({src.crs.to_string()}) or drop the filter")
    return out


# ---------------------------------------------------------------------- building
def _plain_cells(frame: pd.DataFrame, src: _Source, x: np.ndarray, y: np.ndarray,
                 xy_m: np.ndarray, crs: pyproj.CRS, defaults: dict) -> gpd.GeoDataFrame:
    given: dict[str, Any] = {}
    for col in _OPTIONAL_COLUMNS:
        if col in frame.columns:
            if col in _NUMERIC_COLUMNS:
                given[col] = pd.to_numeric(frame[col], errors="coerce").to_numpy(float)
            else:
                given[col] = frame[col].to_numpy(object if col in ("tier", "owner") else None)
    cells = cells_frame(xy_m[:, 0], xy_m[:, 1], crs=crs, **{**defaults, **given})
    consumed = set(_OPTIONAL_COLUMNS) | {src.xcol, src.ycol}
    if src.kind == "vector":
        consumed.add(frame.geometry.name)
    geometry_name = cells.geometry.name
    for col in frame.columns:
        if col not in consumed and col != geometry_name:
            cells[col] = frame[col].array
    if src.xcol is not None and src.geographic:
        cells["lon"], cells["lat"] = x, y
    return cells


def _opencellid_cells(frame: pd.DataFrame, codes: dict[str, np.ndarray], xy_m: np.ndarray,
                      crs: pyproj.CRS, cluster_sites: bool, merge_distance_m: float,
                      defaults: dict) -> gpd.GeoDataFrame:
    n = len(frame)
    lte = codes["radio"] == "LTE"
    enb = codes["cell"] // 256
    if cluster_sites:
        group = pd.DataFrame({
            "mcc": codes["mcc"], "net": codes["net"],
            "enb": np.where(lte, enb, -1 - np.arange(n)),  # non-LTE rows: groups of one
        }).groupby(["mcc", "net", "enb"], sort=False).ngroup().to_numpy()
        site, site_xy = _merge_sites(xy_m, group, merge_distance_m)
        xy = site_xy[site]
    else:
        site, xy = np.arange(n), xy_m
    cell_id = (pd.Series(codes["radio"], dtype=object) + "-" + _text(codes["mcc"]) + "-"
               + _text(codes["net"]) + "-" + _text(codes["area"]) + "-" + _text(codes["cell"]))
    cells = cells_frame(xy[:, 0], xy[:, 1], crs=crs, cell_id=cell_id.to_numpy(object),
                        site_id=site, **defaults)
    cells["radio"] = codes["radio"]
    cells["mcc"], cells["mnc"] = codes["mcc"], codes["net"]
    cells["area"], cells["cell"] = codes["area"], codes["cell"]
    cells["enb_id"] = pd.arrays.IntegerArray(enb, ~lte)
    cells["range_m"] = pd.to_numeric(frame["range"], errors="coerce").to_numpy(float)
    cells["samples"] = pd.to_numeric(frame["samples"], errors="coerce").to_numpy()
    cells["lon"] = pd.to_numeric(frame["lon"]).to_numpy(float)
    cells["lat"] = pd.to_numeric(frame["lat"]).to_numpy(float)
    return cells


def _text(values: np.ndarray) -> pd.Series:
    return pd.Series(values).astype(str).astype(object)


def _merge_sites(xy_m: np.ndarray, group: np.ndarray,
                 merge_distance_m: float) -> tuple[np.ndarray, np.ndarray]:
    """Sites of cells: their groups, merged while two sites are closer than the distance.

    Parameters
    ----------
    xy_m : ndarray, shape (n, 2)
        Cell positions [m].
    group : ndarray of int, shape (n,)
        Initial group 0..g-1 of each cell (e.g. its eNB).
    merge_distance_m : float
        Sites closer than this [m] are merged (connected components of the graph of
        such pairs), repeatedly until no pair is left.

    Returns
    -------
    site : ndarray of int, shape (n,)
        Site of each cell, 0..n_sites-1 in order of first appearance.
    site_xy_m : ndarray, shape (n_sites, 2)
        Site positions [m]: the mean of their cells' positions.
    """
    label = np.asarray(group, np.int64)
    while True:
        n_sites = int(label.max()) + 1
        count = np.bincount(label, minlength=n_sites)
        pos = np.column_stack([np.bincount(label, weights=xy_m[:, k], minlength=n_sites)
                               for k in range(2)]) / count[:, None]
        if merge_distance_m <= 0 or n_sites < 2:
            break
        pairs = cKDTree(pos).query_pairs(r=merge_distance_m, output_type="ndarray")
        if len(pairs):  # query_pairs includes the radius; "closer than" excludes it
            gap = np.hypot(*(pos[pairs[:, 0]] - pos[pairs[:, 1]]).T)
            pairs = pairs[gap < merge_distance_m]
        if not len(pairs):
            break
        graph = sparse.coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])),
                                  shape=(n_sites, n_sites))
        label = csgraph.connected_components(graph, directed=False)[1][label]
    site, first = pd.factorize(label)
    return site.astype(np.int64), pos[np.asarray(first)]
