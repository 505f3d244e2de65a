"""The row filters of a cell file: radio / mcc / mnc on column values, then bbox and polygon.

A filter that leaves no rows is refused, naming the filter, the rows before it and what
the file has instead. Files read in chunks add up what each value filter saw
(:class:`_FilterCount`) and are refused at the end, as a read in one go is.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely

from cellopt.errors import ValidationError
from cellopt.topology.cellfiles.records import RowFilters, Source


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


def _attribute_filters(frame: pd.DataFrame, name: str, kind: str, filters: RowFilters,
                       counts: dict[str, _FilterCount] | None = None) -> pd.DataFrame:
    """The rows that pass the radio / mcc / mnc filters.

    A filter that leaves no rows is refused; with `counts` (the chunks of one file) what
    each filter saw is added up there instead, for :func:`_check_filter_counts`.
    """
    columns = {"radio": ("radio",), "mcc": ("mcc",),
               "mnc": ("net",) if kind == "opencellid" else ("mnc", "net")}
    for key, value in filters.attributes.items():
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


def _spatial_filters(x: np.ndarray, y: np.ndarray, keep: np.ndarray, src: Source,
                     filters: RowFilters, *,
                     inside: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Mask of the rows inside the `filters`' bbox and polygon (given the rows already kept).

    `inside`: the masks of the rows inside `bbox` and inside `polygon` (all True for an
    absent filter), when already known (a file read in chunks).
    """
    out = np.ones(len(x), bool)
    xname, yname = src.labels()
    span = (f"the rows span {xname} [{np.min(x[keep]):.6g}, {np.max(x[keep]):.6g}], {yname} "
            f"[{np.min(y[keep]):.6g}, {np.max(y[keep]):.6g}]")
    if filters.bbox is not None:
        box = _as_bbox(filters.bbox)
        out &= _in_bbox(x, y, box) if inside is None else inside[0]
        if not (out & keep).any():
            raise ValidationError(f"{src.name}: no rows left after filter bbox={tuple(box.tolist())} "
                                  f"({int(keep.sum())} rows before it; {span}); fix: widen or "
                                  "drop the bbox filter (it is in the file's CRS, "
                                  f"{src.crs.to_string()})")
    if filters.polygon is not None:
        area = _filter_area(filters.polygon, src.crs)
        shapely.prepare(area)
        before = int((out & keep).sum())
        out &= shapely.intersects_xy(area, x, y) if inside is None else inside[1]
        if not (out & keep).any():
            raise ValidationError(f"{src.name}: no rows left after filter polygon (bounds "
                                  f"{tuple(round(b, 6) for b in area.bounds)}; {before} rows "
                                  f"before it; {span}); fix: check that the polygon is in "
                                  f"the file's CRS ({src.crs.to_string()}) or drop the filter")
    return out
