"""Read real cell positions from files: plain CSV, vector files and OpenCelliD exports.

:func:`read_cells` is the one entry point. It validates the file at the boundary (every
problem it finds is gathered into one :class:`~cellopt.errors.ValidationError` that names
the offending rows and the fix), applies the optional filters, projects the positions
once to a metric CRS (the UTM zone of the data by default, if it keeps distances within
1 %) and, for OpenCelliD exports, clusters the measured LTE sectors into sites. With
``chunk_rows`` a CSV is read that many rows at a time, keeping only the rows the filters
let through, with the same result. Nothing here loops over rows in Python.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
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
from tqdm.auto import tqdm

from cellopt.crs import MAX_DISTANCE_ERROR, describe_error, metric_crs
from cellopt.errors import ROWS_LISTED, ValidationError, describe_rows
from cellopt.network import CELL_COLUMNS, Network, cells_frame
from cellopt.parameters import check_count

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
# File name endings and their compression, as pandas infers them from a path (first match),
# for the chunked reader, which hands pandas an open file to follow its progress.
_COMPRESSIONS = ((".tar", "tar"), (".tar.gz", "tar"), (".tar.bz2", "tar"), (".tar.xz", "tar"),
                 (".gz", "gzip"), (".bz2", "bz2"), (".zip", "zip"), (".xz", "xz"),
                 (".zst", "zstd"))
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
# The duplicate cell_id check of plain CSV / vector input: what is wrong, and the fix.
_DUPLICATE_ID = ("duplicate cell_id", "make cell_id unique (one row per cell)")


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
    chunk_rows: int | None = None,
    progress: bool = True,
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
    chunk_rows : int, optional
        Read a CSV / OpenCelliD file this many data rows at a time (a whole number ≥ 1;
        ``5e5`` is accepted), filtering and validating each chunk as it comes and keeping
        only the rows the filters let through, so that memory grows with the chunk and
        the rows kept, not with the file: about 300 bytes per row of a chunk, plus the
        rows kept (see Notes, *Chunked reading*). The result is the same as without it.
        None (default): read the file in one go. Vector files are always read whole, so
        they refuse `chunk_rows`.
    progress : bool
        With `chunk_rows`: show a tqdm progress bar of the bytes read (compressed bytes
        for compressed files), with the rows read and kept, on stderr. A read in one go
        is one pandas call and shows none.

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
        :meth:`cellopt.Network.validate` rejects (an unknown tier, say); a `chunk_rows`
        that is not a whole number ≥ 1, or given for a vector file. Rows are numbered
        from 0 over the file's data rows (the CSV header is not a row), and identified
        by ``cell_id`` (OpenCelliD: by ``cell``) when the file has one. Each problem
        lists its first 10 rows and counts the others.

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

    **Chunked reading** (`chunk_rows`). For files of millions of rows (an OpenCelliD
    country extract, or the world file of some 40 million rows, 4 GB) of which the
    filters keep a small part. Each chunk is filtered by `radio`, `mcc`, `mnc`, then
    `bbox` and `polygon` (in the source CRS), and validated; the rows inside `bbox` /
    `polygon` are kept whole. Of the rows that pass `radio` / `mcc` / `mnc` but lie
    outside `bbox` / `polygon` a key of about 55 bytes is kept (coordinates, and for
    OpenCelliD the cell's codes, samples and date; for plain CSV the ``cell_id``),
    because de-duplication and the duplicate ``cell_id`` check span the whole file and
    come before those filters, as in a read in one go: `radio` / `mcc` / `mnc` bound
    that. Projection, de-duplication and site clustering are done once, on the rows
    kept. Peak memory is then about that of parsing one chunk plus the rows kept,
    where a read in one go needs several times the file's size (docs/cell_files.md has
    measurements). The rows, their order, ids, positions, CRS, columns and errors are
    those of a read in one go; a problem found in several chunks is one line, naming
    rows by their row in the file, and only its first 10 rows are kept, with their
    count, so that gathering the problems of a large file stays small. Differences: a
    bad `bbox` or `polygon` is refused at the first chunk, before the rows are
    validated (a read in one go validates the rows first); and where a column that
    read_cells does not interpret (an extra column) holds numbers in one chunk and
    text in another, the numbers go back to text as Python writes them (the file's
    text for integers; ``1.50`` becomes ``'1.5'``).

    Examples
    --------
    >>> net = read_cells("opencellid.csv", radio="LTE", mcc=311, mnc=480)  # doctest: +SKIP
    >>> net.cells[["cell_id", "site_id", "lon", "lat"]].head()  # doctest: +SKIP
    >>> net = read_cells("cell_towers.csv.gz", radio="LTE", mcc=262, mnc=1,
    ...                  chunk_rows=500_000)  # doctest: +SKIP
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
    if chunk_rows is not None:
        chunk_rows = check_count(chunk_rows, "chunk_rows", minimum=1, fix="give the rows to read "
                                 "at a time, e.g. chunk_rows=500_000, or None to read the file "
                                 "in one go")
    if not isinstance(progress, bool | np.bool_):
        raise ValidationError(f"progress={progress!r} is not True or False; fix: pass "
                              "progress=True or False")
    target_crs = _as_crs(crs, "crs")
    _check_target_crs(target_crs)
    src_crs = _as_crs(source_crs, "source_crs")

    kind = _detect_format(path, format)
    filters = {"radio": radio, "mcc": mcc, "mnc": mnc}
    if chunk_rows is None:
        frame, src, x, y, codes = _read_whole(path, kind, src_crs, filters, bbox, polygon)
    elif kind == "vector":
        raise ValidationError(f"{name}: chunk_rows applies to CSV and OpenCelliD files; vector "
                              "files are read whole; fix: drop chunk_rows, or export the cells "
                              "as CSV with lon, lat columns")
    else:
        frame, src, x, y = _read_chunks(path, kind, src_crs, filters, bbox, polygon,
                                        chunk_rows=chunk_rows, progress=bool(progress))
        codes = _opencellid_codes(frame, name)[0] if src.kind == "opencellid" else {}
    kind = src.kind

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
def _no_data_rows(name: str) -> ValidationError:
    return ValidationError(f"{name}: the file has no data rows; fix: give at least one cell")


def _read_whole(path: Path, kind: str | None, source_crs: pyproj.CRS | None,
                filters: dict[str, Any], bbox: Any, polygon: Any
                ) -> tuple[pd.DataFrame, _Source, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The file's rows that pass the filters (indexed by their row in the file), read in one
    go and validated; their source, coordinates [source CRS] and OpenCelliD codes."""
    name = path.name
    if kind == "vector":
        frame, src = _read_vector(path, source_crs)
    else:
        frame, kind = _read_table(path, kind)
        src = _csv_source(frame, name, kind, source_crs)
    if not len(frame):
        raise _no_data_rows(name)

    frame = _attribute_filters(frame, name, src.kind, **filters)
    x, y, problems = _coordinates(frame, src)
    if src.kind == "opencellid":
        codes, more = _opencellid_codes(frame, name)
    else:
        codes, more = {}, _cell_problems(frame, name)
    problems += more
    if problems:
        raise ValidationError(problems)

    keep = np.ones(len(frame), bool)
    if src.kind == "opencellid":
        keep = _best_rows(_dedup_key(codes))
    keep &= _spatial_filters(x, y, keep, src, bbox=bbox, polygon=polygon)
    codes = {k: v[keep] for k, v in codes.items()}
    return frame[keep], src, x[keep], y[keep], codes


def _read_chunks(path: Path, kind: str | None, source_crs: pyproj.CRS | None,
                 filters: dict[str, Any], bbox: Any, polygon: Any, *, chunk_rows: int,
                 progress: bool) -> tuple[pd.DataFrame, _Source, np.ndarray, np.ndarray]:
    """As :func:`_read_whole` for a CSV file, read `chunk_rows` rows at a time.

    Each chunk is filtered (radio / mcc / mnc, then bbox / polygon) and validated as it
    comes. The rows inside bbox / polygon are kept whole; of every row that passes radio /
    mcc / mnc a compact key is kept (coordinates, inside masks, and the OpenCelliD
    :func:`_dedup_key` or the plain CSV cell_id), because de-duplication and the
    duplicate cell_id check span the file and come before bbox / polygon. What a read in
    one go decides from a whole column (ids read as integers, unnamed empty columns
    dropped, dtypes) is decided from what every chunk had. Problems are gathered over the
    chunks (no rows are kept once there is one); filters that leave nothing are refused
    at the end, before the problems, as a read in one go does.
    """
    name = path.name
    kind, options, names = _table_layout(path, kind)
    src: _Source | None = None
    box = area = None
    n_rows = n_kept = 0
    counts: dict[str, _FilterCount] = {}
    found_xy: dict[tuple[str, str], _Rows] = {}  # the problems of _coordinates
    found_cells: dict[tuple[str, str], _Rows] = {}  # of _opencellid_codes / _cell_problems
    dtypes: dict[str, list] = {}  # column -> the dtypes of its chunks
    unnamed_empty: dict[str, bool] = {}  # unnamed column -> empty so far
    id_kinds: dict[str, tuple[bool, bool]] = {}  # id column -> (has values, all integers)
    ids: list[pd.Series] = []  # plain CSV: cell_id of every row passing radio / mcc / mnc
    keys: dict[str, list[np.ndarray]] = {}  # the key of every row passing radio / mcc / mnc
    whole: list[pd.DataFrame] = []  # the rows inside bbox / polygon
    bar = tqdm(total=path.stat().st_size, unit="B", unit_scale=True, desc=f"reading {name}",
               disable=not progress, file=sys.stderr)
    with bar, contextlib.closing(_csv_chunks(path, chunk_rows, bar, **options)) as chunks:
        for chunk in chunks:
            chunk = _tidy_columns(chunk, kind)
            if src is None:  # the first chunk: the columns are known
                src = _csv_source(chunk, name, kind, source_crs)
                box = None if bbox is None else _as_bbox(bbox)
                if polygon is not None:
                    area = _filter_area(polygon, src.crs)
                    shapely.prepare(area)
                unnamed_empty = {c: True for c, n in zip(chunk.columns, names, strict=True)
                                 if not n}
            if not len(chunk):
                continue
            n_rows += len(chunk)
            for col, dtype in chunk.dtypes.items():
                if dtype not in dtypes.setdefault(col, []):
                    dtypes[col].append(dtype)
            for col in unnamed_empty:
                unnamed_empty[col] &= bool(chunk[col].isna().all())
            for col in _ID_COLUMNS if kind == "csv" else ():
                if col in chunk.columns:
                    text = _id_text(chunk[col])
                    given, integer = _id_kind(text)
                    was = id_kinds.get(col, (False, True))
                    id_kinds[col] = (was[0] or given, was[1] and integer)
                    chunk[col] = _id_values(text, integer=False)  # decided at the end

            chunk = _attribute_filters(chunk, name, kind, counts, **filters)
            bar.set_postfix({"rows": n_rows, "kept": n_kept}, refresh=False)
            if not len(chunk):
                continue
            x, y, _ = _coordinates(chunk, src, found_xy)
            if kind == "opencellid":
                codes, _ = _opencellid_codes(chunk, name, found_cells)
            else:
                _cell_problems(chunk, name, found_cells)
                if "cell_id" in chunk.columns:
                    ids.append(chunk["cell_id"])
            if any(r.count for r in (*found_xy.values(), *found_cells.values())):
                keys.clear()  # the file is refused: gather its problems only
                whole.clear()
            else:
                in_box = np.ones(len(chunk), bool) if box is None else _in_bbox(x, y, box)
                in_area = (np.ones(len(chunk), bool) if area is None
                           else shapely.intersects_xy(area, x, y))
                key = {"x": x, "y": y, "in_box": in_box, "in_area": in_area}
                if kind == "opencellid":
                    key |= _dedup_key(codes)
                for col, values in key.items():
                    keys.setdefault(col, []).append(values)
                inside = in_box & in_area
                if inside.any():
                    whole.append(chunk[inside])
                    n_kept += int(inside.sum())
        bar.set_postfix({"rows": n_rows, "kept": n_kept}, refresh=False)
        bar.update(bar.total - bar.n)

    if src is None or not n_rows:
        raise _no_data_rows(name)
    _check_filter_counts(name, counts)
    integer_ids = {col: all(v) for col, v in id_kinds.items()}
    if ids:  # duplicate cell_id, over the file (ids as a read in one go makes them)
        cell_ids = pd.concat(ids)
        cell_ids = pd.Series(_id_values(cell_ids, integer=integer_ids["cell_id"]),
                             index=cell_ids.index)
        dup = (cell_ids.duplicated(keep=False) & cell_ids.notna()).to_numpy()
        _Report(cell_ids.to_frame("cell_id"), name, "cell_id", found_cells)(dup, *_DUPLICATE_ID)
    if kind == "csv":
        def show_ids(shown: list) -> Sequence:
            return _id_values(pd.Series(shown, dtype=object), integer=integer_ids["cell_id"])
    else:
        def show_ids(shown: list) -> Sequence:
            return _file_dtype(pd.Series(shown), dtypes["cell"]).to_numpy(object)
    problems = (_problem_lines(name, found_xy, show_ids)
                + _problem_lines(name, found_cells, show_ids))
    if problems:
        raise ValidationError(problems)

    key = {col: np.concatenate(keys.pop(col)) for col in list(keys)}  # freeing the parts
    x, y, in_box, in_area = key.pop("x"), key.pop("y"), key.pop("in_box"), key.pop("in_area")
    keep = _best_rows(key) if kind == "opencellid" else np.ones(len(x), bool)
    del key
    keep &= _spatial_filters(x, y, keep, src, bbox=box, polygon=area, inside=(in_box, in_area))
    empty = [c for c, e in unnamed_empty.items() if e]
    chosen = keep[in_box & in_area]  # of the rows in `whole`
    parts, start = [], 0
    while whole:  # the rows kept of each chunk as a read in one go has them
        part = whole.pop(0)
        mask, start = chosen[start:start + len(part)], start + len(part)
        if not mask.any():
            continue
        part = part[mask].drop(columns=empty)
        columns = {col: _id_values(part[col], integer=integer_ids[col]) if col in integer_ids
                   else _file_dtype(part[col], dtypes[col]) for col in part.columns}
        parts.append(pd.DataFrame(columns, index=part.index))
    return pd.concat(parts), src, x[keep], y[keep]


def _file_dtype(values: pd.Series, dtypes: Sequence) -> pd.Series:
    """A column of some rows of a chunk as a read in one go gives it, from the `dtypes` of
    the column in every chunk: text if some chunk had text (numbers back to text: exactly
    the file's for integers; booleans to objects if that is what a chunk had, booleans
    with gaps), float if some had floats (a column with gaps); else as it is.
    """
    text = [d for d in dtypes if d.kind == "O"]
    if text and values.dtype.kind == "b":
        return values.astype(text[0])
    if text and values.dtype.kind != "O":
        return values.astype(str).where(values.notna()).astype(text[0])
    if any(d.kind == "f" for d in dtypes) and values.dtype.kind in "iu":
        return values.astype(float)
    return values


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
    with _csv_errors(path.name):
        # index_col=False: a row longer than the header is an error, not an index.
        return pd.read_csv(path, index_col=False, **options)


def _csv_chunks(path: Path, chunk_rows: int, bar: Any, **options: Any) -> Iterator[pd.DataFrame]:
    """The data rows of a CSV file, `chunk_rows` at a time, indexed by their row in the file.

    As :func:`_parse_csv` reads them (same options, same errors). `bar` (tqdm) counts the
    bytes read from the file (compressed bytes for compressed files).
    """
    compression = next((c for end, c in _COMPRESSIONS if path.name.lower().endswith(end)), None)
    start = 0
    with path.open("rb") as raw:
        with _csv_errors(path.name):
            reader = pd.read_csv(raw, index_col=False, chunksize=chunk_rows,
                                 compression=compression, **options)
        with reader:
            while True:
                with _csv_errors(path.name):
                    chunk = next(reader, None)
                if chunk is None:
                    return
                bar.update(raw.tell() - bar.n)
                chunk.index = pd.RangeIndex(start, start + len(chunk))
                start += len(chunk)
                yield chunk


@contextlib.contextmanager
def _csv_errors(name: str) -> Iterator[None]:
    """Turn every failure of ``pandas.read_csv`` on file `name` into a ValidationError."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            yield
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
    """A CSV file's rows, its columns renamed to their canonical names, and its kind."""
    kind, options, names = _table_layout(path, kind)
    frame = _parse_csv(path, **options)
    if "names" in options:  # a headerless export, read with OpenCelliD's column names
        return frame, kind
    # A trailing delimiter on every line makes an unnamed, empty column: not data.
    unnamed = [c for c, n in zip(frame.columns, names, strict=True) if not n]
    frame = frame.drop(columns=[c for c in unnamed if frame[c].isna().all()])
    frame = _tidy_columns(frame, kind)
    if kind == "csv":
        for col in _ID_COLUMNS:
            if col in frame.columns:
                frame[col] = _id_values(frame[col])
    return frame, kind


def _tidy_columns(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The columns renamed, in place, to their canonical names (surrounding spaces and case
    aside)."""
    names = [str(c).strip() for c in frame.columns]
    canonical = OPENCELLID_COLUMNS if kind == "opencellid" else _OPTIONAL_COLUMNS
    renames = _canonical_names(names, canonical)
    frame.columns = [renames.get(c, c) for c in names]
    return frame


def _table_layout(path: Path, kind: str | None) -> tuple[str, dict[str, Any], list[str]]:
    """A CSV file's kind, the ``read_csv`` options to read it, and its column names.

    The first line is read, to tell OpenCelliD exports (with or without a header) from
    plain tables and to read plain tables' id columns as text. The names are the
    header's, without surrounding spaces (:data:`OPENCELLID_COLUMNS` for a headerless
    export, whose options then have ``names``).
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
        return "opencellid", {"header": None, "names": list(OPENCELLID_COLUMNS)}, list(
            OPENCELLID_COLUMNS)
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
    ids = {r: str for r, n in zip(raw, names, strict=True) if n.casefold() in _ID_COLUMNS}
    return kind, {"dtype": ids if kind == "csv" else None}, names


def _canonical_names(columns: Sequence[str], canonical: Sequence[str]) -> dict[str, str]:
    """Renames of the columns that match a canonical name but for case."""
    wanted = {c.casefold(): c for c in canonical}
    return {c: wanted[c.casefold()] for c in columns if c.casefold() in wanted}


def _id_values(values: pd.Series, integer: bool | None = None) -> np.ndarray:
    """Ids read as text: plain integers become int64, anything else stays text.

    Reading ids as text keeps ``'007'`` and ``'7'`` apart and a mixed column whole; only a
    column of canonical integers (no leading zeros, no decimal point) is made numeric.
    `integer` says whether it is (for a column read in chunks: see :func:`_id_kind`);
    None: decide from `values`.
    """
    text = _id_text(values)
    given = text.dropna()
    if integer is None:
        integer = all(_id_kind(text))
    if integer:
        if text.isna().any():
            out = np.full(len(text), np.nan, dtype=object)
            out[text.notna().to_numpy()] = given.astype(np.int64).to_numpy(object)
            return out
        return text.astype(np.int64).to_numpy()
    return text.astype(object).where(text.notna(), np.nan).to_numpy(object)


def _id_text(values: pd.Series) -> pd.Series:
    """Ids as text without surrounding spaces; missing where empty."""
    text = values.astype(object).where(values.notna(), None)
    text = pd.Series(text, dtype="string").str.strip()
    return text.mask(text == "")


def _id_kind(text: pd.Series) -> tuple[bool, bool]:
    """Whether an id column (:func:`_id_text`) has values, and whether all are plain integers."""
    given = text.dropna()
    return bool(len(given)), bool(given.str.fullmatch(r"-?(0|[1-9]\d{0,17})").all())


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
@dataclasses.dataclass
class _Rows:
    """The offending rows of one check: the first :data:`ROWS_LISTED`, and their count."""

    pos: list[int] = dataclasses.field(default_factory=list)
    ids: list | None = None
    count: int = 0

    def add(self, pos: np.ndarray, ids: np.ndarray | None) -> None:
        room = max(ROWS_LISTED - len(self.pos), 0)
        self.pos += pos[:room].tolist()
        if ids is not None:
            self.ids = (self.ids or []) + list(ids[:room])
        self.count += len(pos)


class _Report:
    """Collects problem lines naming rows by file position and id.

    One line per check (what is wrong and its fix), in the order the checks are made.
    The reports of the chunks of one file share `found`, so that a check's rows in
    every chunk make one line.
    """

    def __init__(self, frame: pd.DataFrame, name: str, id_col: str | None,
                 found: dict[tuple[str, str], _Rows] | None = None):
        self.name = name
        self.pos = frame.index.to_numpy()
        self.ids = frame[id_col].to_numpy(object) if id_col else None
        self.found = {} if found is None else found

    def __call__(self, bad: np.ndarray | pd.Series, what: str, fix: str) -> None:
        bad = np.asarray(bad, bool)
        rows = self.found.setdefault((what, fix), _Rows())  # its place in the order
        if bad.any():
            rows.add(self.pos[bad], None if self.ids is None else self.ids[bad])

    @property
    def problems(self) -> list[str]:
        return _problem_lines(self.name, self.found)


def _problem_lines(name: str, found: dict[tuple[str, str], _Rows],
                   show_ids: Callable[[list], Sequence] | None = None) -> list[str]:
    """The lines of the checks that found rows; `show_ids` converts the ids listed."""
    lines = []
    for (what, fix), rows in found.items():
        if rows.count:
            ids = rows.ids if rows.ids is None or show_ids is None else show_ids(rows.ids)
            lines.append(f"{name}: {describe_rows(rows.pos, ids, total=rows.count)}: {what}; "
                         f"fix: {fix}")
    return lines


def _numbers(values: pd.Series, col: str, report: _Report) -> np.ndarray:
    """Coerce to float, reporting missing and non-numeric entries (NaN in the result)."""
    num = pd.to_numeric(values, errors="coerce").to_numpy(float)
    missing = values.isna().to_numpy()
    report(missing, f"{col} is missing", "fill it in or drop the row")
    report(np.isnan(num) & ~missing, f"{col} is not a number", f"give numbers in '{col}'")
    return num


def _coordinates(frame: pd.DataFrame, src: _Source, found: dict | None = None
                 ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Source-CRS coordinates, shape (n,) each, and the problems found in them (gathered
    into `found` too, when given: see :class:`_Report`)."""
    report = _Report(frame, src.name, src.id_col, found)
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


def _cell_problems(frame: pd.DataFrame, name: str, found: dict | None = None) -> list[str]:
    """Ids and numeric optional columns of plain CSV / vector input.

    With `found` (the chunks of one file, see :class:`_Report`), duplicate ids are left to
    the caller, who has the ids of every chunk: this only marks the check's place.
    """
    id_col = "cell_id" if "cell_id" in frame.columns else None
    report = _Report(frame, name, id_col, found)
    if id_col:
        ids = frame["cell_id"]
        report(ids.isna(), "cell_id is missing", "give every row a cell_id, or drop the "
               "column to number the cells 0..n-1")
        dup = np.zeros(len(ids), bool) if found is not None else ids.duplicated(keep=False)
        report(dup & ids.notna(), *_DUPLICATE_ID)
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


def _opencellid_codes(frame: pd.DataFrame, name: str, found: dict | None = None
                      ) -> tuple[dict[str, np.ndarray], list]:
    """Code columns of an OpenCelliD export, and the problems found in them (gathered into
    `found` too, when given: see :class:`_Report`).

    Returns ``radio`` (upper case), ``mcc``, ``net``, ``area``, ``cell`` (int64; -1 where
    bad) and the optional ``samples``, ``range`` and ``updated`` [Unix s] (float; NaN
    where missing or absent).
    """
    report = _Report(frame, name, "cell", found)
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


@dataclasses.dataclass
class _FilterCount:
    """What one attribute filter saw over the chunks of a file."""

    wanted: list  # the values it keeps
    col: str  # the column it reads
    before: int = 0  # rows that reached it
    kept: int = 0  # rows it kept
    shown: list = dataclasses.field(default_factory=list)  # the first values it saw (_shown)


def _attribute_filters(frame: pd.DataFrame, name: str, kind: str,
                       counts: dict[str, _FilterCount] | None = None, **filters: Any
                       ) -> pd.DataFrame:
    """The rows that pass the radio / mcc / mnc filters.

    A filter that leaves no rows is refused; with `counts` (the chunks of one file) what
    each filter saw is added up there instead, for :func:`_check_filter_counts`.
    """
    columns = {"radio": ("radio",), "mcc": ("mcc",),
               "mnc": ("net",) if kind == "opencellid" else ("mnc", "net")}
    for key, value in filters.items():
        if value is None:
            continue
        if counts is not None and not len(frame):
            break  # no row of this chunk reaches the filter
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
        if counts is None:
            if not keep.any():
                raise _no_rows_left(name, key, _FilterCount(wanted, col, len(frame), 0,
                                                            _shown(have)))
        else:
            seen = counts.setdefault(key, _FilterCount(wanted, col))
            seen.before += len(frame)
            seen.kept += int(keep.sum())
            if len(seen.shown) < 10:
                seen.shown += [v for v in _shown(have) if v not in seen.shown]
                del seen.shown[10:]
        frame = frame[keep]
    return frame


def _no_rows_left(name: str, key: str, seen: _FilterCount) -> ValidationError:
    return ValidationError(f"{name}: no rows left after filter {key}={seen.wanted} "
                           f"({seen.before} rows before it; column '{seen.col}' has values "
                           f"{seen.shown}); fix: change or drop the {key} filter")


def _check_filter_counts(name: str, counts: dict[str, _FilterCount]) -> None:
    """Refuse, as :func:`_attribute_filters` does, the first filter that left no rows."""
    for key, seen in counts.items():  # in the order of the filters
        if not seen.kept:
            raise _no_rows_left(name, key, seen)


def _dedup_key(codes: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What identifies the cell of each row (radio as its index in :data:`_OPENCELLID_RADIOS`),
    and its rank among the rows of the cell (samples, updated; -inf where missing), in
    compact dtypes (valid codes: see :func:`_opencellid_codes`)."""
    area_scoped = np.isin(codes["radio"], _AREA_SCOPED_RADIOS)
    return {
        "radio": pd.Categorical(codes["radio"], categories=_OPENCELLID_RADIOS).codes,
        "mcc": codes["mcc"].astype(np.int16), "net": codes["net"].astype(np.int16),
        "area": np.where(area_scoped, codes["area"], -1), "cell": codes["cell"],
        "samples": np.nan_to_num(codes["samples"], nan=-np.inf),
        "updated": np.nan_to_num(codes["updated"], nan=-np.inf),
    }


def _best_rows(key: dict[str, np.ndarray]) -> np.ndarray:
    """Mask of the rows to keep: per cell, the one with most samples (then latest, then
    first). `key`: :func:`_dedup_key` of the rows, in file order."""
    n = len(key["cell"])
    # Sorted by cell, then most samples, then latest; lexsort is stable, so among rows
    # that tie the first in the file comes first. Its last key sorts first.
    cell = [key[c] for c in ("cell", "area", "net", "mcc", "radio")]
    order = np.lexsort([-key["updated"], -key["samples"], *cell])
    first = np.zeros(n, bool)
    first[:1] = True
    for values in cell:
        ranked = values[order]
        first[1:] |= ranked[1:] != ranked[:-1]
    keep = np.zeros(n, bool)
    keep[order[first]] = True
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


def _as_bbox(bbox: Any) -> np.ndarray:
    """`bbox` as an array (x_min, y_min, x_max, y_max), refused unless it is one."""
    try:
        box = np.asarray(bbox, dtype=float).ravel()
    except (TypeError, ValueError):
        box = np.full(1, np.nan)  # not numbers: refused below
    if box.shape != (4,) or not np.isfinite(box).all() or box[0] > box[2] or box[1] > box[3]:
        raise ValidationError(f"bbox={bbox!r} is not (x_min, y_min, x_max, y_max) with "
                              "min ≤ max; fix: e.g. bbox=(lon_min, lat_min, lon_max, "
                              "lat_max) in the file's coordinates")
    return box


def _in_bbox(x: np.ndarray, y: np.ndarray, box: np.ndarray) -> np.ndarray:
    return (x >= box[0]) & (x <= box[2]) & (y >= box[1]) & (y <= box[3])


def _spatial_filters(x: np.ndarray, y: np.ndarray, keep: np.ndarray, src: _Source, *,
                     bbox: Any, polygon: Any,
                     inside: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Mask of the rows inside `bbox` and `polygon` (given the rows already kept).

    `inside`: the masks of the rows inside `bbox` and inside `polygon` (all True for an
    absent filter), when already known (a file read in chunks).
    """
    out = np.ones(len(x), bool)
    xname, yname = src.labels()
    span = (f"the rows span {xname} [{np.min(x[keep]):.6g}, {np.max(x[keep]):.6g}], {yname} "
            f"[{np.min(y[keep]):.6g}, {np.max(y[keep]):.6g}]")
    if bbox is not None:
        box = _as_bbox(bbox)
        out &= _in_bbox(x, y, box) if inside is None else inside[0]
        if not (out & keep).any():
            raise ValidationError(f"{src.name}: no rows left after filter bbox={tuple(box.tolist())} "
                                  f"({int(keep.sum())} rows before it; {span}); fix: widen or "
                                  "drop the bbox filter (it is in the file's CRS, "
                                  f"{src.crs.to_string()})")
    if polygon is not None:
        area = _filter_area(polygon, src.crs)
        shapely.prepare(area)
        before = int((out & keep).sum())
        out &= shapely.intersects_xy(area, x, y) if inside is None else inside[1]
        if not (out & keep).any():
            raise ValidationError(f"{src.name}: no rows left after filter polygon (bounds "
                                  f"{tuple(round(b, 6) for b in area.bounds)}; {before} rows "
                                  f"before it; {span}); fix: check that the polygon is in "
                                  f"the file's CRS ({src.crs.to_string()}) or drop the filter")
    return out


# ---------------------------------------------------------------------- projection
def _default_crs(points: gpd.GeoSeries, frame: pd.DataFrame, src: _Source) -> pyproj.CRS:
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
