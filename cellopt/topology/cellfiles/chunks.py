"""Reading a CSV / OpenCelliD file a chunk of rows at a time (``read_cells(chunk_rows=...)``).

Each chunk is filtered and validated as it comes; only the rows the filters let through
are kept whole, with a compact key of the others that the file-wide steps
(de-duplication, the duplicate ``cell_id`` check) need. The result is that of a read in
one go.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyproj
import shapely

from cellopt.errors import ValidationError
from cellopt.progress import progress_bar
from cellopt.topology.cellfiles.checks import (
    _DUPLICATE_ID,
    _cell_problems,
    _coordinates,
    _repeated_header,
)
from cellopt.topology.cellfiles.columns import _plan_columns
from cellopt.topology.cellfiles.filters import (
    _as_bbox,
    _attribute_filters,
    _check_filter_counts,
    _filter_area,
    _FilterCount,
    _in_bbox,
    _spatial_filters,
)
from cellopt.topology.cellfiles.formats import (
    _ID_COLUMNS,
    _csv_errors,
    _csv_source,
    _id_kind,
    _id_text,
    _id_values,
    _table_layout,
    _tidy_columns,
)
from cellopt.topology.cellfiles.opencellid import _best_rows, _dedup_key, _opencellid_codes
from cellopt.topology.cellfiles.problems import _no_data_rows, _problem_lines, _Report, _Rows
from cellopt.topology.cellfiles.records import RowFilters, Source

# File name endings and their compression, as pandas infers them from a path (first match),
# for the chunked reader, which hands pandas an open file to follow its progress.
_COMPRESSIONS = ((".tar", "tar"), (".tar.gz", "tar"), (".tar.bz2", "tar"), (".tar.xz", "tar"),
                 (".gz", "gzip"), (".bz2", "bz2"), (".zip", "zip"), (".xz", "xz"),
                 (".zst", "zstd"))


def _read_chunks(path: Path, kind: str | None, source_crs: pyproj.CRS | None,
                 filters: RowFilters, *, chunk_rows: int, progress: bool
                 ) -> tuple[pd.DataFrame, Source, np.ndarray, np.ndarray]:
    """As :func:`~cellopt.topology.cellfiles.reader._read_whole` for a CSV file, read
    `chunk_rows` rows at a time.

    Each chunk is filtered (radio / mcc / mnc, then bbox / polygon) and validated as it
    comes. The rows inside bbox / polygon are kept whole; of every row that passes radio /
    mcc / mnc a compact key is kept (coordinates, inside masks, and the OpenCelliD
    :func:`~cellopt.topology.cellfiles.opencellid._dedup_key` or the plain CSV cell_id),
    because de-duplication and the duplicate cell_id check span the file and come before
    bbox / polygon. What a read in one go decides from a whole column (ids read as
    integers, unnamed empty columns dropped, dtypes) is decided from what every chunk had.
    Problems are gathered over the chunks (no rows are kept once there is one); filters
    that leave nothing are refused at the end, before the problems, as a read in one go
    does.
    """
    name = path.name
    kind, options, names = _table_layout(path, kind)
    plan = _plan_columns(names, name) if kind == "csv" and "names" not in options else None
    src: Source | None = None
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
    bar = progress_bar(path.stat().st_size, progress=progress, desc=f"reading {name}", unit="B",
                       unit_scale=True)
    with bar, contextlib.closing(_csv_chunks(path, chunk_rows, bar, **options)) as chunks:
        for chunk in chunks:
            chunk = _tidy_columns(chunk, kind, plan, options.get("sep", ","))
            if src is None:  # the first chunk: the columns are known
                src = _csv_source(chunk, name, kind, source_crs, plan)
                box = None if filters.bbox is None else _as_bbox(filters.bbox)
                if filters.polygon is not None:
                    area = _filter_area(filters.polygon, src.crs)
                    shapely.prepare(area)
                # (a cell_id made of site and sector ids comes after the file's columns)
                unnamed_empty = {c: True for c, n in zip(list(chunk.columns)[:len(names)],
                                                         names, strict=True) if not n}
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

            chunk = _attribute_filters(chunk, name, kind, filters, counts)
            bar.set_postfix({"rows": n_rows, "kept": n_kept}, refresh=False)
            if not len(chunk):
                continue
            _repeated_header(chunk, src, found_xy)
            x, y, _ = _coordinates(chunk, src, found_xy)
            if kind == "opencellid":
                codes, _ = _opencellid_codes(chunk, name, found_cells)
            else:
                _cell_problems(chunk, name, found_cells, plan)
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
    spatial = dataclasses.replace(filters, bbox=box, polygon=area)  # checked once, at the start
    keep &= _spatial_filters(x, y, keep, src, spatial, inside=(in_box, in_area))
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


def _csv_chunks(path: Path, chunk_rows: int, bar: Any, **options: Any) -> Iterator[pd.DataFrame]:
    """The data rows of a CSV file, `chunk_rows` at a time, indexed by their row in the file.

    As :func:`~cellopt.topology.cellfiles.formats._parse_csv` reads them (same options, same
    errors). `bar` (tqdm) counts the bytes read from the file (compressed bytes for
    compressed files).
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
