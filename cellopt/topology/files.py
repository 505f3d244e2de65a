"""Read real cell positions from files: plain CSV, vector files and OpenCelliD exports.

:func:`read_cells` is the one entry point. It validates the file at the boundary (every
problem it finds is gathered into one :class:`~cellopt.errors.ValidationError` that names
the offending rows and the fix), applies the optional filters, projects the positions
once to a metric CRS (the UTM zone of the data by default, if it keeps distances within
1 %) and, for OpenCelliD exports, clusters the measured LTE sectors into sites. Nothing
here loops over rows in Python.
"""

from __future__ import annotations

import dataclasses
import os
import re
import warnings
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
from cellopt.network import CELL_COLUMNS, Network, cells_frame
from cellopt.topology.projection import MAX_DISTANCE_ERROR, describe_error, metric_crs

__all__ = ["MAX_DISTANCE_ERROR", "OPENCELLID_COLUMNS", "OPENCELLID_REQUIRED", "read_cells"]

#: Columns of an OpenCelliD cell export, in the export's order (the order of headerless
#: exports). Files are recognised by these names in any order and case.
OPENCELLID_COLUMNS: tuple[str, ...] = (
    "radio", "mcc", "net", "area", "cell", "unit", "lon", "lat", "range", "samples",
    "changeable", "created", "updated", "averageSignal",
)
#: The OpenCelliD columns a file must have to be read as an export; the others are optional.
OPENCELLID_REQUIRED: tuple[str, ...] = ("radio", "mcc", "net", "area", "cell", "lon", "lat")
# A CSV with at least this many OpenCelliD column names but not all the required ones is
# refused rather than read as a plain table (it is a damaged export, not a cell table).
_OPENCELLID_QUORUM = 7
# Radio values of OpenCelliD exports.
_OPENCELLID_RADIOS = ("GSM", "UMTS", "CDMA", "LTE", "NR")
# Codes above 2**53 cannot be held exactly as float64; no real cell code is that large.
_MAX_CODE = 2**53


_VECTOR_SUFFIXES = {".geojson", ".json", ".gpkg", ".shp"}
_COMPRESSION_SUFFIXES = {".gz", ".bz2", ".zip", ".xz", ".zst"}
# Table formats that are not text: refused by name rather than parsed as CSV.
_BINARY_SUFFIXES = {".xlsx", ".xlsm", ".xls", ".ods", ".parquet", ".feather", ".arrow",
                    ".pkl", ".pickle", ".npy", ".npz", ".h5", ".hdf5", ".mat", ".sqlite", ".db"}
# Leading bytes of files that are not plain text, and what they are.
_MAGIC = (
    (b"\x1f\x8b", "a gzip-compressed file", "name it with a .gz suffix (e.g. cells.csv.gz)"),
    (b"BZh", "a bzip2-compressed file", "name it with a .bz2 suffix (e.g. cells.csv.bz2)"),
    (b"\xfd7zXZ\x00", "an xz-compressed file", "name it with a .xz suffix (e.g. cells.csv.xz)"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file",
     "name it with a .zst suffix (e.g. cells.csv.zst)"),
    (b"PK\x03\x04", "a zip archive (an Excel workbook, say)",
     "export the sheet as CSV, or name a zipped CSV with a .zip suffix"),
    (b"SQLite format 3\x00", "an SQLite database",
     "name a GeoPackage with the .gpkg suffix, or export the table as CSV"),
    (b"PAR1", "a Parquet file", "export the table as CSV"),
    (b"\xff\xfe", "UTF-16 text", "save the file as UTF-8 CSV"),
    (b"\xfe\xff", "UTF-16 text", "save the file as UTF-8 CSV"),
)
_FORMATS = ("csv", "opencellid", "vector")

# Accepted coordinate column names (matched case-insensitively), in order of preference.
_LON_NAMES = ("lon", "longitude")
_LAT_NAMES = ("lat", "latitude")
_X_NAMES = ("x", "x_m")
_Y_NAMES = ("y", "y_m")

# Optional cell columns of plain CSV / vector input (see cellopt.network.CELL_COLUMNS);
# matched case-insensitively.
_NUMERIC_COLUMNS = (
    "height_m", "azimuth_deg", "antenna_gain_dbi", "tx_power_dbm", "backhaul_mbps",
    "price_per_mbps",
)
_ID_COLUMNS = ("cell_id", "site_id")
_OPTIONAL_COLUMNS = ("cell_id", "site_id", "tier", "owner", *_NUMERIC_COLUMNS)
# Columns read_cells makes itself for OpenCelliD exports: a file column of that name
# would be overwritten, so it is refused.
_OPENCELLID_MADE = (*CELL_COLUMNS, "geometry", "mnc", "enb_id", "range_m")

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
        given: ``.geojson``, ``.json``, ``.gpkg``, ``.shp`` (or a folder of shapefiles)
        are vector files; spreadsheet and binary table formats (``.xlsx``, ``.parquet``,
        ...) are refused; any other file is read as CSV (compressed ``.csv.gz`` etc.
        included): as an OpenCelliD export if its column names include
        :data:`OPENCELLID_REQUIRED` (any order, any case) or if it is a headerless
        export, else as a plain CSV (see Notes).
    format : {'csv', 'opencellid', 'vector'}, optional
        Force a format instead of detecting it.
    crs : pyproj.CRS or str, optional
        Target CRS, projected with metre units. Default: the UTM zone of the data
        (``GeoDataFrame.estimate_utm_crs()``) if it keeps every distance between the
        cells within 1 % (:data:`MAX_DISTANCE_ERROR`) of the geodesic distance, else an
        azimuthal equidistant projection centred on the cells if that does, else an
        error (see Notes). A given `crs` is used as it is (with a warning where it
        distorts distances at the cells by more than 1 %).
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
        fix: an empty file, a file without data rows, a directory without vector files,
        a spreadsheet or binary file, text that is not UTF-8, a CSV that cannot be
        parsed; column names that repeat when compared case-insensitively; a CSV
        without usable coordinate columns; a file with most OpenCelliD columns but not
        the required ones; missing, non-numeric or infinite coordinates; latitudes
        outside [-90, 90] or longitudes outside [-180, 180] (including lon/lat columns
        that look swapped); duplicate or missing ``cell_id`` (plain CSV / vector);
        non-numeric values in numeric columns; bad OpenCelliD codes or radios; a filter
        that leaves no rows (naming the filter); cells spread too widely for the
        default projection; a `crs` that is not projected in metres; and everything
        :meth:`cellopt.Network.validate` rejects (an unknown tier, say). Rows are
        numbered from 0 over the file's data rows (the CSV header is not a row), and
        identified by ``cell_id`` (OpenCelliD: by ``cell``) when the file has one.

    Warns
    -----
    UserWarning
        If a given `crs` scales distances at some cells by more than 1 %.

    Notes
    -----
    **Plain CSV.** Coordinates come from ``lon``, ``lat`` (or ``longitude``,
    ``latitude``; case-insensitive; degrees), or, if there is no such pair, from ``x``,
    ``y`` (or ``x_m``, ``y_m``) in `source_crs`. The optional columns ``cell_id``,
    ``site_id``, ``tier``, ``owner``, ``height_m``, ``azimuth_deg``,
    ``antenna_gain_dbi``, ``tx_power_dbm``, ``backhaul_mbps``, ``price_per_mbps``
    (case-insensitive) are used as they are when present (an empty ``azimuth_deg``
    means omni; other empty values are errors); absent ones take this function's
    defaults (``owner`` = ``'operator'``, ``azimuth_deg`` = NaN, ``backhaul_mbps`` =
    inf, ``price_per_mbps`` = 0, ``cell_id`` and ``site_id`` = ``0..n-1``). Ids are
    read as text, so that ``'007'`` stays ``'007'``: a column of plain integers
    (``0``, ``12``, ``-3``; no leading zeros) becomes integers, any other column stays
    text (surrounding spaces removed). Every other column is kept as an extra column;
    lon/lat coordinates are kept as ``lon``, ``lat`` [degrees], x/y ones are consumed
    (the geometry holds them, reprojected).

    **Vector files** (GeoJSON, GeoPackage, shapefile): one Point per row, with the same
    optional columns as plain CSV; other columns are kept.

    **Recognising OpenCelliD exports.** The export columns are
    :data:`OPENCELLID_COLUMNS`; names are compared after removing surrounding spaces and
    ignoring case, in any order. :data:`OPENCELLID_REQUIRED` (radio, mcc, net, area,
    cell, lon, lat) must be present; ``unit``, ``range``, ``samples``, ``changeable``,
    ``created``, ``updated``, ``averageSignal`` are optional. A file with at least 7
    OpenCelliD names but not all required ones is refused (naming the missing ones)
    rather than read as a plain CSV. A file whose first line is an OpenCelliD data row
    (14 fields, a radio name then integer codes) is read as a headerless export with
    the columns :data:`OPENCELLID_COLUMNS`. Columns that are not OpenCelliD's are kept
    as extra columns, except names that read_cells makes itself (``cell_id``,
    ``tier``, ``mnc``, ``enb_id``, ...), which are refused: pass ``format='csv'`` to
    read such a file as a plain cell table.

    **OpenCelliD exports.** ``radio`` must be one of GSM, UMTS, CDMA, LTE, NR
    (case-insensitive); ``mcc`` and ``net`` integers in [0, 999]; ``area`` and
    ``cell`` non-negative integers; ``samples``, ``range`` and ``updated`` (Unix
    seconds, or dates) may be empty. After the `radio` / `mcc` / `mnc` filters:

    * *Duplicates.* The same cell appears in several rows when it was seen with
      different ``area`` codes (the LTE tracking area changed). A cell is identified by
      (radio, mcc, net, cell), and for GSM and CDMA, whose cell numbers are unique only
      within an area, by (radio, mcc, net, area, cell). Of the rows of one cell the one
      with most ``samples`` is kept; on ties, or without a ``samples`` column (or
      value), the most recently ``updated``; then the first in the file. This happens
      before the `bbox` / `polygon` filters.
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
      [m]; NaN if absent), ``samples`` (NaN if absent), and ``lon``, ``lat``: the
      measured position [degrees], before clustering; then the file's non-OpenCelliD
      columns. The other export columns (``unit``, ``changeable``, ``created``,
      ``updated``, ``averageSignal``) are dropped.

    **Default projection.** Without `crs`, the cells (after the filters) are projected
    to the UTM zone of their extent if its scale factor stays within 1 % of 1 over the
    cells' lon/lat box (UTM's scale grows with the east-west distance x from the
    zone's central meridian, k ≈ 0.9996 (1 + x²/2R²): 1 % at about 900 km). Data
    that is too wide for that, or near a pole where UTM is undefined, is projected with
    an azimuthal equidistant projection centred on the cells if every cell is within
    about 1,550 km of the centre (its scale across the radius is c / sin c at angular
    distance c: 1 % at 14°). Wider data (cells on two continents, say) is refused,
    naming its extent: split it by region (with `bbox`, `polygon` or `mcc`) and read
    each part, or pass `crs`. Data across the antimeridian is measured across it.

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
    if not (isinstance(merge_distance_m, int | float | np.integer | np.floating)
            and np.isfinite(merge_distance_m) and merge_distance_m >= 0):
        raise ValidationError(f"merge_distance_m is {merge_distance_m!r}; fix: give a "
                              "distance ≥ 0 in metres (0 merges nothing)")
    if not isinstance(cluster_sites, bool | np.bool_):
        raise ValidationError(f"cluster_sites={cluster_sites!r} is not True or False; fix: "
                              "pass cluster_sites=True or False")
    target_crs = _as_crs(crs, "crs")
    _check_target_crs(target_crs)
    src_crs = _as_crs(source_crs, "source_crs")

    kind = _detect_format(path, format)
    if kind == "vector":
        frame, src = _read_vector(path, src_crs)
    else:
        frame, kind = _read_table(path, kind)
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
        target_crs = _default_crs(points, frame, src)
    else:
        _warn_distortion(points, frame, src, target_crs)
    xy_m = shapely.get_coordinates(points.to_crs(target_crs).values)
    _check_projected(xy_m, frame, src, target_crs)
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


def _detect_format(path: Path, format: str | None) -> str | None:
    """'vector', 'csv', 'opencellid', or None for 'a CSV, decide from its header'."""
    name = path.name
    if format is not None:
        if format not in _FORMATS:
            raise ValidationError(f"format={format!r} is unknown; fix: use one of "
                                  f"{list(_FORMATS)} or None to detect it")
        if path.is_dir() and format != "vector":
            raise ValidationError(f"{name} is a directory, not a {format} file; fix: give the "
                                  "path of the file")
        return format
    if path.is_dir():
        # The shapefile driver reads a folder of shapefiles; any other folder is a mistake.
        if not any(p.suffix.lower() in _VECTOR_SUFFIXES for p in path.iterdir()):
            raise ValidationError(f"{name} is a directory without vector files; fix: give the "
                                  "path of a cell file (CSV, GeoJSON, GeoPackage or shapefile)")
        return "vector"
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION_SUFFIXES:
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _BINARY_SUFFIXES:
        raise ValidationError(f"{name}: {suffixes[-1]} files are not read; fix: export the "
                              "table as CSV (comma-separated, UTF-8), or give a GeoJSON, "
                              "GeoPackage or shapefile")
    if suffixes and suffixes[-1] in _VECTOR_SUFFIXES:
        return "vector"
    return None


def _check_text(path: Path) -> None:
    """Refuse, by their first bytes, files that are not text (unless named compressed)."""
    if path.suffix.lower() in _COMPRESSION_SUFFIXES:
        return  # pandas decompresses these; their content is checked when parsed
    with path.open("rb") as handle:
        head = handle.read(4096)
    for magic, what, fix in _MAGIC:
        if head.startswith(magic):
            raise ValidationError(f"{path.name}: the file is {what}, not CSV text; fix: {fix}")
    if b"\x00" in head:
        raise ValidationError(f"{path.name}: the file is binary (it has NUL bytes), not CSV "
                              "text; fix: give a comma-separated UTF-8 text file")


def _parse_csv(path: Path, **options: Any) -> pd.DataFrame:
    """``pandas.read_csv`` with every parsing failure turned into a ValidationError."""
    name = path.name
    try:
        with warnings.catch_warnings():
            # index_col=False: a row longer than the header is an error, not an index.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(path, index_col=False, **options)
    except pd.errors.ParserWarning as exc:
        raise ValidationError(f"{name}: a row has more fields than the header ({exc}); fix: "
                              "give every row one field per column (quote values that "
                              "contain commas)") from exc
    except pd.errors.EmptyDataError as exc:
        raise ValidationError(f"{name}: the file is empty (no header); fix: give a "
                              "header line and at least one row of cells") from exc
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start:exc.start + 1].hex()
        raise ValidationError(f"{name}: the file is not UTF-8 text (byte 0x{byte} cannot be "
                              "decoded); fix: save it as UTF-8 (e.g. 'CSV UTF-8' in a "
                              "spreadsheet program)") from exc
    except pd.errors.ParserError as exc:
        raise ValidationError(f"{name}: cannot be parsed as CSV ({exc}); fix: give a "
                              "comma-separated file with one header line") from exc
    except (OSError, EOFError, ValueError, ImportError) as exc:
        # Damaged or mislabelled compression, zip archives of several files, missing codecs.
        raise ValidationError(f"{name}: cannot be read as CSV ({exc}); fix: give a CSV file, "
                              "compressed as its name says (.gz, .bz2, .xz, .zst, or a .zip "
                              "holding one CSV), or uncompressed") from exc


def _is_opencellid_row(fields: Sequence[str]) -> bool:
    """True if the fields are an OpenCelliD data row (the first line of a headerless export)."""
    if len(fields) != len(OPENCELLID_COLUMNS):
        return False
    # A header never starts with a radio name; the codes must look like codes (or be
    # empty, which the row checks then report).
    fields = [f.strip() for f in fields]
    return (fields[0].upper() in _OPENCELLID_RADIOS
            and all(re.fullmatch(r"-?\d*", f) for f in fields[1:5]))


def _check_unique_names(names: Sequence[str], file: str) -> None:
    """Refuse columns whose names repeat once case and surrounding spaces are ignored."""
    folded = pd.Series([n.strip().casefold() for n in names], dtype=object)
    dup = folded.duplicated(keep=False).to_numpy() & (folded != "").to_numpy()
    if dup.any():
        shown = [n for n, d in zip(names, dup, strict=True) if d]
        raise ValidationError(f"{file}: columns {shown} have the same name (compared without "
                              "case and surrounding spaces), so which to use is ambiguous; fix: "
                              "rename or drop all but one of them")


def _table_kind(names: Sequence[str], file: str, kind: str | None) -> str:
    """'opencellid' or 'csv' for a CSV with these (stripped) column names."""
    folded = {n.casefold() for n in names}
    have = [c for c in OPENCELLID_COLUMNS if c.casefold() in folded]
    missing = [c for c in OPENCELLID_REQUIRED if c not in folded]
    if kind == "csv":
        return "csv"
    if kind == "opencellid" and missing:
        raise ValidationError(f"{file}: lacks the OpenCelliD columns {missing}; fix: give an "
                              f"export with at least the columns {list(OPENCELLID_REQUIRED)} "
                              "(any order and case), or pass format='csv'")
    if not missing:
        clash = [n for n in names if n.casefold() in {c.casefold() for c in _OPENCELLID_MADE}]
        if clash:
            raise ValidationError(
                f"{file}: an OpenCelliD export with the columns {clash}, which read_cells makes "
                "itself for OpenCelliD exports (ids, defaults, codes); fix: drop or rename them, "
                "or pass format='csv' to read the file as a plain cell table with these columns")
        return "opencellid"
    if len(have) >= _OPENCELLID_QUORUM:
        raise ValidationError(f"{file}: has {len(have)} OpenCelliD columns ({have}) but lacks "
                              f"the required {missing}; fix: add the missing columns (an "
                              f"OpenCelliD export needs {list(OPENCELLID_REQUIRED)}), or pass "
                              "format='csv' to read the file as a plain cell table")
    return "csv"


def _read_table(path: Path, kind: str | None) -> tuple[pd.DataFrame, str]:
    """A CSV file's rows, its columns renamed to their canonical names, and its kind.

    The header is read first, to tell OpenCelliD exports (with or without a header) from
    plain tables and to read plain tables' id columns as text.
    """
    name = path.name
    _check_text(path)
    raw = [str(v) for v in _parse_csv(path, header=None, nrows=1, dtype=str,
                                      keep_default_na=False).iloc[0].tolist()]
    if _is_opencellid_row(raw):
        if kind == "csv":
            raise ValidationError(f"{name}: the first line is an OpenCelliD data row, not a "
                                  "header; fix: drop format='csv' to read it as a headerless "
                                  "OpenCelliD export, or add a header line")
        frame = _parse_csv(path, header=None, names=list(OPENCELLID_COLUMNS))
        return frame, "opencellid"
    names = [n.strip() for n in raw]
    if pd.to_numeric(pd.Series(names), errors="coerce").notna().all():
        raise ValidationError(f"{name}: the first line {names} is numbers, not column names: "
                              "the file has no header; fix: add a header line, e.g. "
                              "'cell_id,lon,lat'")
    if len(names) == 1:
        seps = [sep for sep in (";", "\t", "|") if sep in names[0]]
        if seps:
            raise ValidationError(f"{name}: the header {names[0]!r} has no commas but "
                                  f"{seps[0]!r}: the file looks {seps[0]!r}-separated; fix: "
                                  "save it comma-separated (with '.' as decimal point)")
    _check_unique_names(raw, name)
    kind = _table_kind(names, name, kind)
    canonical = OPENCELLID_COLUMNS if kind == "opencellid" else _OPTIONAL_COLUMNS
    ids = {r: str for r, n in zip(raw, names, strict=True) if n.casefold() in _ID_COLUMNS}
    frame = _parse_csv(path, dtype=ids if kind == "csv" else None)
    # A trailing delimiter on every line makes an unnamed, empty column: not data.
    unnamed = [c for c, n in zip(frame.columns, names, strict=True) if not n]
    frame = frame.drop(columns=[c for c in unnamed if frame[c].isna().all()])
    frame.columns = [str(c).strip() for c in frame.columns]
    frame = frame.rename(columns=_canonical_names(frame.columns, canonical))
    if kind == "csv":
        for col in _ID_COLUMNS:
            if col in frame.columns:
                frame[col] = _id_values(frame[col])
    return frame, kind


def _canonical_names(columns: Sequence[str], canonical: Sequence[str]) -> dict[str, str]:
    """Renames of the columns that match a canonical name but for case."""
    wanted = {c.casefold(): c for c in canonical}
    return {c: wanted[c.casefold()] for c in columns if c.casefold() in wanted}


def _id_values(values: pd.Series) -> np.ndarray:
    """Ids read as text: plain integers become int64, anything else stays text.

    Reading ids as text keeps ``'007'`` and ``'7'`` apart and a mixed column whole; only a
    column of canonical integers (no leading zeros, no decimal point) is made numeric.
    """
    text = values.astype(object).where(values.notna(), None)
    text = pd.Series(text, dtype="string").str.strip()
    text = text.mask(text == "")
    given = text.dropna()
    if len(given) and given.str.fullmatch(r"-?(0|[1-9]\d{0,17})").all():
        if text.isna().any():
            out = np.full(len(text), np.nan, dtype=object)
            out[text.notna().to_numpy()] = given.astype(np.int64).to_numpy(object)
            return out
        return text.astype(np.int64).to_numpy()
    return text.astype(object).where(text.notna(), np.nan).to_numpy(object)


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
    geometry = frame.geometry.name
    attributes = [str(c) for c in frame.columns if c != geometry]
    _check_unique_names(attributes, path.name)
    frame = frame.rename(columns=_canonical_names(attributes, _OPTIONAL_COLUMNS))
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
        wgs84 = pyproj.CRS("EPSG:4326")
        if source_crs is not None and not source_crs.equals(wgs84, ignore_axis_order=True):
            raise ValidationError(f"{name}: OpenCelliD positions are WGS 84 lon/lat "
                                  f"(EPSG:4326), not source_crs={source_crs.to_string()}; fix: "
                                  "drop source_crs")
        return _Source(name, kind, wgs84, "lon", "lat", "cell")
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
    """Code columns of an OpenCelliD export, and the problems found in them.

    Returns ``radio`` (upper case), ``mcc``, ``net``, ``area``, ``cell`` (int64; -1 where
    bad) and the optional ``samples``, ``range`` and ``updated`` [Unix s] (float; NaN
    where missing or absent).
    """
    report = _Report(frame, name, "cell")
    codes: dict[str, np.ndarray] = {}
    for col, top in (("mcc", 999), ("net", 999), ("area", _MAX_CODE), ("cell", _MAX_CODE)):
        num = pd.to_numeric(frame[col], errors="coerce").to_numpy(float)
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(num) | (num < 0) | (num != np.floor(num)) | (num > top)
        what = "a code in [0, 999]" if top == 999 else "a non-negative integer"
        report(bad, f"{col} is missing or not {what}",
               f"give integer codes in '{col}', or drop the row")
        codes[col] = np.where(bad, -1, np.nan_to_num(num)).astype(np.int64)
    radio = frame["radio"]
    text = pd.Series(radio.astype(object).where(radio.notna(), None), dtype="string")
    text = text.str.strip().str.upper().fillna("")
    report((text == "").to_numpy(), "radio is missing",
           "give the radio (e.g. LTE), or drop the row")
    report((text != "").to_numpy() & ~text.isin(_OPENCELLID_RADIOS).to_numpy(),
           f"radio is not one of {list(_OPENCELLID_RADIOS)}",
           "give the radio technology, or keep only known radios with the radio= filter")
    codes["radio"] = text.to_numpy(object)
    for col in ("samples", "range"):
        codes[col] = _optional_numbers(frame, col, report)
    codes["updated"] = _timestamps_s(frame, report)
    return codes, report.problems


def _optional_numbers(frame: pd.DataFrame, col: str, report: _Report) -> np.ndarray:
    """An optional column of numbers ≥ 0 (NaN where empty, or everywhere if absent)."""
    if col not in frame.columns:
        return np.full(len(frame), np.nan)
    values = frame[col]
    num = pd.to_numeric(values, errors="coerce").to_numpy(float)
    with np.errstate(invalid="ignore"):
        bad = (np.isnan(num) & values.notna().to_numpy()) | (num < 0) | np.isinf(num)
    report(bad, f"{col} is not a finite number ≥ 0", f"give numbers ≥ 0 in '{col}', or leave "
           "them empty")
    return np.where(bad, np.nan, num)


def _timestamps_s(frame: pd.DataFrame, report: _Report) -> np.ndarray:
    """The optional ``updated`` column as Unix seconds: numbers, or dates (ISO 8601)."""
    if "updated" not in frame.columns:
        return np.full(len(frame), np.nan)
    values = frame["updated"]
    seconds = np.array(pd.to_numeric(values, errors="coerce"), dtype=float)  # a writable copy
    text = np.isnan(seconds) & values.notna().to_numpy()
    if text.any():
        dates = pd.to_datetime(values[text].astype(str), errors="coerce", utc=True,
                               format="ISO8601")
        seconds[text] = ((dates - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)).to_numpy(
            float)
    report(text & np.isnan(seconds), "updated is neither a number (Unix seconds) nor a date",
           "give Unix seconds or ISO dates in 'updated', or leave them empty")
    report(np.isinf(seconds), "updated is infinite", "give Unix seconds in 'updated'")
    return np.where(np.isinf(seconds), np.nan, seconds)


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
        folded = {str(c).casefold(): c for c in frame.columns}
        col = next((folded[c] for c in columns[key] if c in folded), None)
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
        try:
            box = np.asarray(bbox, dtype=float).ravel()
        except (TypeError, ValueError):
            box = np.full(1, np.nan)  # not numbers: refused below
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


# ---------------------------------------------------------------------- projection
def _default_crs(points: gpd.GeoSeries, frame: pd.DataFrame, src: _Source) -> pyproj.CRS:
    """The metric CRS for the cells (:func:`~cellopt.topology.projection.metric_crs`),
    after refusing positions that do not transform to lon/lat."""
    lonlat = points.to_crs("EPSG:4326")
    lon, lat = shapely.get_x(lonlat.values), shapely.get_y(lonlat.values)
    report = _Report(frame, src.name, src.id_col)
    report(~(np.isfinite(lon) & np.isfinite(lat)),
           f"the position does not transform to lon/lat from {src.crs.to_string()}",
           "check source_crs (the CRS of the coordinates in the file)")
    if report.problems:
        raise ValidationError(report.problems)
    return metric_crs(points, src.name, fix="split the data by region and read each part "
                      "separately (filters bbox=, polygon= or mcc=), or pass crs= a projected "
                      "CRS in metres whose distortion you accept")


def _warn_distortion(points: gpd.GeoSeries, frame: pd.DataFrame, src: _Source,
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








def _check_projected(xy_m: np.ndarray, frame: pd.DataFrame, src: _Source,
                     crs: pyproj.CRS) -> None:
    """Refuse positions that the target CRS cannot hold (outside its domain)."""
    report = _Report(frame, src.name, src.id_col)
    report(~np.isfinite(xy_m).all(axis=1),
           f"the position has no finite coordinates in crs={crs.to_string()}",
           "choose a crs whose area of use covers these cells, or drop crs= to choose one "
           "from the data")
    if report.problems:
        raise ValidationError(report.problems)


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
    cells["range_m"] = codes["range"]
    cells["samples"] = (pd.to_numeric(frame["samples"], errors="coerce").to_numpy()
                        if "samples" in frame.columns else codes["samples"])
    cells["lon"] = pd.to_numeric(frame["lon"]).to_numpy(float)
    cells["lat"] = pd.to_numeric(frame["lat"]).to_numpy(float)
    for col in frame.columns:
        if col not in OPENCELLID_COLUMNS:  # the file's own columns ride along
            cells[col] = frame[col].array
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
