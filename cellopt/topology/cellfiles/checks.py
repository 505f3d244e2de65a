"""The row checks of coordinates and of the cell columns of plain CSV / vector input.

Each check reports its offending rows to a :class:`~cellopt.topology.cellfiles.problems._Report`
(the OpenCelliD code checks are in :mod:`cellopt.topology.cellfiles.opencellid`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import shapely

from cellopt.topology.cellfiles.formats import _NUMERIC_COLUMNS
from cellopt.topology.cellfiles.problems import _Report
from cellopt.topology.cellfiles.records import Source

# The duplicate cell_id check of plain CSV / vector input: what is wrong, and the fix.
_DUPLICATE_ID = ("duplicate cell_id", "make cell_id unique (one row per cell)")


def _numbers(values: pd.Series, col: str, report: _Report) -> np.ndarray:
    """Coerce to float, reporting missing and non-numeric entries (NaN in the result)."""
    num = pd.to_numeric(values, errors="coerce").to_numpy(float)
    missing = values.isna().to_numpy()
    report(missing, f"{col} is missing", "fill it in or drop the row")
    report(np.isnan(num) & ~missing, f"{col} is not a number", f"give numbers in '{col}'")
    return num


def _coordinates(frame: pd.DataFrame, src: Source, found: dict | None = None
                 ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Source-CRS coordinates, shape (n,) each, and the problems found in them (gathered
    into `found` too, when given: see :class:`~cellopt.topology.cellfiles.problems._Report`)."""
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

    With `found` (the chunks of one file, see
    :class:`~cellopt.topology.cellfiles.problems._Report`), duplicate ids are left to the
    caller, who has the ids of every chunk: this only marks the check's place.
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
