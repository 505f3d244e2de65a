"""The checks of a network's tables: the CRS, the ids, the point geometries, each column's
rule and the band.

:meth:`cellopt.network.Network.validate` runs them; each returns its problems as lines
(what is wrong, the offending rows, the fix), so that one
:class:`~cellopt.errors.ValidationError` lists them all. The rules of each column are
:data:`cellopt.network.CELL_RULES` and the users' ones beside it, written with the value
tests here (a column's entries as numbers, flags, or values in a catalogue range).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from cellopt.checks import check_real, is_real
from cellopt.errors import ValidationError, describe_rows
from cellopt.parameters import LIMITS, Quantity


def _check_crs(frame: gpd.GeoDataFrame, name: str) -> list[str]:
    crs = frame.crs
    if crs is None:
        return [f"{name} table has no CRS; fix: set a projected metric CRS (frame.set_crs(...))"]
    if not crs.is_projected:
        return [
            f"{name} table is in a geographic CRS ({crs.to_string()}); distances must be in "
            "metres; fix: build the network with Network.from_frames(...), which projects "
            "to UTM, or frame.to_crs(frame.estimate_utm_crs())"
        ]
    units = {axis.unit_name for axis in crs.axis_info}
    if not units <= {"metre", "meter"}:
        return [f"{name} CRS {crs.to_string()} is in {sorted(units)}, not metres; fix: to_crs a "
                "metric CRS such as UTM"]
    return []


def _finite(v: pd.Series) -> np.ndarray:
    return np.isfinite(_num(v))


def _num(v: pd.Series) -> np.ndarray:
    """A numeric column as floats; NaN (so refused by the rules) where an entry is not a
    number: a boolean column, text (even "10") or booleans in an object column."""
    if pd.api.types.is_bool_dtype(v):
        return np.full(len(v), np.nan)
    if pd.api.types.is_numeric_dtype(v):
        return pd.to_numeric(v, errors="coerce").to_numpy(float)
    values = v.to_numpy(object)
    number = np.fromiter((is_real(x) for x in values), bool, len(values))
    out = np.full(len(values), np.nan)
    out[number] = [_to_float(x) for x in values[number]]
    return out


def _to_float(x: Any) -> float:
    """A real number as a float; ±inf for an integer beyond the float range."""
    try:
        return float(x)
    except OverflowError:
        return float(np.inf if x > 0 else -np.inf)


def _not_bool(v: pd.Series) -> np.ndarray:
    """Entries of a flag column that are not True or False (0/1 and "false" included)."""
    if pd.api.types.is_bool_dtype(v) and not v.isna().any():
        return np.zeros(len(v), bool)
    return np.fromiter((not isinstance(x, (bool, np.bool_)) for x in v.to_numpy(object)), bool,
                       len(v))


def _outside(v: pd.Series, kind: str) -> np.ndarray:
    """Mask of values that are not numbers in the possible range of ``LIMITS[kind]``."""
    limit, x = LIMITS[kind], _num(v)
    with np.errstate(invalid="ignore"):
        ok = (x >= limit.low) & (x <= limit.high) & ~(limit.low_open & (x == limit.low))
        ok &= np.isfinite(x) | (limit.allow_inf & (x == np.inf))
    return ~ok


def _check_table(
    frame: gpd.GeoDataFrame,
    name: str,
    columns: Mapping[str, Quantity],
    id_col: str,
    rules: list,
) -> list[str]:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        return [f"{name} table lacks columns {missing}; fix: add them (see cellopt.network."
                f"{name.upper()[:-1]}_COLUMNS) or build the table with cellopt.network."
                f"{name[:-1]}s_frame"]
    if not len(frame):
        return []
    ids = frame[id_col].to_numpy()
    problems = []

    def report(bad: np.ndarray, what: str, fix: str) -> None:
        pos = np.flatnonzero(bad)
        if len(pos):
            problems.append(f"{name} {describe_rows(pos, ids[pos])}: {what}; fix: {fix}")

    report(frame[id_col].isna().to_numpy(), f"{id_col} is missing", f"give every row an {id_col}")
    report(frame[id_col].duplicated(keep=False).to_numpy(), f"duplicate {id_col}",
           f"make {id_col} unique")
    geom = frame.geometry
    is_point = (geom.geom_type == "Point").to_numpy() & ~geom.is_empty.to_numpy()
    report(~is_point, "geometry is not a non-empty Point", "give one point per row")
    xy = shapely.get_coordinates(geom[is_point].values)
    finite = np.zeros(len(frame), bool)
    finite[np.flatnonzero(is_point)] = np.isfinite(xy).all(axis=1)
    report(is_point & ~finite, "coordinate is NaN or infinite", "drop or fix these positions")
    for col, bad, what, fix in rules:
        if col in frame:  # optional columns are checked where given
            report(np.asarray(bad(frame[col]), bool), what, fix)
    return problems


def _check_band(bandwidth_mhz: float, resource_mhz: np.ndarray) -> list[str]:
    try:
        check_real(bandwidth_mhz, "bandwidth_mhz", warn=False)
    except ValidationError as err:
        return err.problems
    bad = np.flatnonzero(~(np.isfinite(resource_mhz) & (resource_mhz > 0)))
    if len(bad):
        return [f"resource_mhz entries {bad.tolist()} are not positive; fix: give positive "
                "subband widths in MHz"]
    if not np.isclose(resource_mhz.sum(), bandwidth_mhz, rtol=1e-9, atol=0):
        return [f"resource_mhz sums to {resource_mhz.sum():g} MHz, not bandwidth_mhz = "
                f"{bandwidth_mhz:g}; fix: make the subband widths add up to the band"]
    return []
