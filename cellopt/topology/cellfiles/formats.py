"""Telling the format of a cell file, and reading its columns.

A path is a vector file (GeoJSON, GeoPackage, shapefile, or a folder of shapefiles) by
its name; spreadsheets and binary tables are refused by name or by their first bytes;
anything else is CSV text, told apart as an OpenCelliD export (with or without a header)
or a plain cell table by its first line. The columns are then renamed to their
canonical names (case and surrounding spaces aside), ids are read as text, and the
coordinate columns and CRS are found (:class:`~cellopt.topology.cellfiles.records.Source`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import re
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
from pandas.io.common import get_handle

from cellopt.errors import ValidationError
from cellopt.topology.cellfiles.columns import _Plan, _plan_columns, _rename
from cellopt.topology.cellfiles.opencellid import (
    _OPENCELLID_MADE,
    _OPENCELLID_QUORUM,
    _OPENCELLID_RADIOS,
    OPENCELLID_COLUMNS,
    OPENCELLID_REQUIRED,
)
from cellopt.topology.cellfiles.records import Source

# Vector files, read with GDAL: GeoJSON, GeoPackage, shapefile, and the formats planning and
# GIS tools export cells in too (Google Earth KML / KMZ, MapInfo MIF, GML, FlatGeobuf;
# a MapInfo .tab is told from a tab-separated text by its first line, '!table').
_VECTOR_SUFFIXES = {".geojson", ".json", ".gpkg", ".shp", ".kml", ".kmz", ".mif", ".gml",
                    ".fgb"}
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
    if suffixes and suffixes[-1] == ".tab":
        with path.open("rb") as handle:
            if handle.read(6).lower() == b"!table":  # MapInfo, not tab-separated text
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


# Delimiters a CSV may use, in order of preference, and the lines read to tell them apart.
_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_LINES = 50


def _csv_dialect(path: Path) -> dict[str, Any]:
    """The ``read_csv`` options of a CSV file's layout: its delimiter (``sep``), Excel's
    ``sep=;`` first line (honoured, and skipped) and a decimal comma.

    Without a ``sep=`` line the delimiter is the first of :data:`_DELIMITERS` that splits
    every one of the first :data:`_SNIFF_LINES` lines into the same number (> 1) of fields,
    quotes respected (a comma inside a quoted header name, or in a ``;``-separated file's
    decimal numbers, does not count); a comma if none does (pandas then names the row
    that does not fit). A file that is not comma-separated reads numbers with a decimal
    comma (``48,137``) if its fields have decimal commas and no decimal points (and
    :func:`_tidy_columns` reads a column of such numbers with a decimal comma in any case).
    Such a file with a column whose values all look like numbers with thousands points
    (``20.000``) is refused: the point is ambiguous there.
    """
    lines = _first_lines(path)
    options: dict[str, Any] = {}
    first = lines[0].lstrip("\ufeff").strip() if lines else ""
    excel = re.fullmatch(r"sep=(.)", first, flags=re.IGNORECASE)
    if excel:
        options["skiprows"] = 1
        lines = lines[1:]
        sep = excel.group(1)
    else:
        sep = next((d for d in _DELIMITERS if _fields_per_line(lines, d) > 1), ",")
    options["sep"] = sep
    if sep != ",":
        rows = _rows(lines[1:], sep)
        fields = [f.strip() for row in rows for f in row]
        commas = any(re.fullmatch(r"[+-]?\d*,\d+", f) for f in fields)
        points = any(re.fullmatch(r"[+-]?\d*\.\d+", f) for f in fields)
        if commas and not points:
            options["decimal"] = ","
        if commas and lines:
            _check_thousands(_rows(lines[:1], sep), rows, path.name)
    return options


def _check_thousands(header: list[list[str]], rows: list[list[str]], name: str) -> None:
    """Refuse a column of a file with decimal commas whose values all look like numbers with
    thousands points (``20.000``): twenty thousand, or twenty with a decimal point?"""
    names = header[0] if header else []
    for j, title in enumerate(names):
        values = [row[j].strip() for row in rows if len(row) > j and row[j].strip()]
        if values and all(re.fullmatch(r"[+-]?\d{1,3}(\.\d{3})+", v) for v in values):
            raise ValidationError(
                f"{name}: column '{title.strip()}' holds values such as '{values[0]}' in a file "
                "whose numbers have decimal commas, so its '.' may be a thousands separator "
                f"({values[0].replace('.', '')}) or a decimal point; fix: write the column's "
                "numbers without thousands separators, with the file's decimal comma")


def _first_lines(path: Path) -> list[str]:
    """The first :data:`_SNIFF_LINES` lines of a (possibly compressed) text file."""
    with _csv_errors(path.name), get_handle(path, "r", encoding="utf-8",
                                            compression="infer") as handle:
        return list(itertools.islice(handle.handle, _SNIFF_LINES))


def _rows(lines: Sequence[str], sep: str) -> list[list[str]]:
    """The lines split at `sep` (quotes respected), empty lines left out. Line ends are
    read as universal newlines, so that a file ending its lines with a lone CR (old Mac
    Excel) is split into its lines too."""
    text = io.StringIO("".join(lines), newline=None)
    return [row for row in csv.reader(text, delimiter=sep) if row]


def _fields_per_line(lines: Sequence[str], sep: str) -> int:
    """The number of fields `sep` splits every line into, or 0 if it differs between lines.
    The last line read may be cut short (a quoted field going on): it is not counted."""
    counts = {len(row) for row in _rows(lines[:-1] if len(lines) == _SNIFF_LINES else lines, sep)}
    return counts.pop() if len(counts) == 1 else 0


def _parse_csv(path: Path, **options: Any) -> pd.DataFrame:
    """``pandas.read_csv`` with every parsing failure turned into a ValidationError."""
    with _csv_errors(path.name):
        # index_col=False: a row longer than the header is an error, not an index.
        return pd.read_csv(path, index_col=False, **options)


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
    except csv.Error as exc:
        raise ValidationError(f"{name}: cannot be parsed as CSV ({exc}); fix: give a "
                              "delimited text file with one header line and one line per "
                              "cell") from exc
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


def _read_table(path: Path, kind: str | None) -> tuple[pd.DataFrame, str, _Plan | None]:
    """A CSV file's rows, its columns renamed to their canonical names, its kind, and (plain
    tables) the plan of its columns (:func:`~cellopt.topology.cellfiles.columns._plan_columns`)."""
    kind, options, names = _table_layout(path, kind)
    frame = _parse_csv(path, **options)
    if "names" in options:  # a headerless export, read with OpenCelliD's column names
        return frame, kind, None
    # A trailing delimiter on every line makes an unnamed, empty column: not data.
    unnamed = [c for c, n in zip(frame.columns, names, strict=True) if not n]
    frame = frame.drop(columns=[c for c in unnamed if frame[c].isna().all()])
    plan = _plan_columns(names, path.name) if kind == "csv" else None
    frame = _tidy_columns(frame, kind, plan, options.get("sep", ","))
    if kind == "csv":
        for col in _ID_COLUMNS:
            if col in frame.columns:
                frame[col] = _id_values(frame[col])
    return frame, kind, plan


def _tidy_columns(frame: pd.DataFrame, kind: str, plan: _Plan | None = None,
                  sep: str = ",") -> pd.DataFrame:
    """The rows that are not all empty, their columns renamed to their canonical names
    (surrounding spaces and case aside), then as `plan` says (a plain table's aliases; a
    ``cell_id`` made of site and sector ids is added last). In a file not separated by
    commas (`sep`), a text column whose values are all numbers with a decimal comma (or
    whole numbers) becomes numbers, whatever the decimal mark of the other columns."""
    # Lines of delimiters only (',,,,' as spreadsheets export empty rows) are not rows,
    # like blank lines; the others keep their row in the file.
    frame = frame[frame.notna().any(axis=1).to_numpy()]
    if sep != ",":
        frame = _decimal_commas(frame, plan)
    names = [str(c).strip() for c in frame.columns]
    canonical = OPENCELLID_COLUMNS if kind == "opencellid" else _OPTIONAL_COLUMNS
    renames = _canonical_names(names, canonical)
    frame.columns = [renames.get(c, c) for c in names]
    return frame if plan is None else _rename(frame, plan)


def _decimal_commas(frame: pd.DataFrame, plan: _Plan | None) -> pd.DataFrame:
    """`frame` with its text columns of decimal-comma numbers (``48,137``) as numbers; id
    columns stay text."""
    ids = set(plan.id_columns) if plan is not None else set()
    for col in frame.columns:
        if (pd.api.types.is_numeric_dtype(frame[col]) or str(col).strip() in ids
                or str(col).strip().casefold() in _ID_COLUMNS):
            continue
        text = frame[col].dropna().astype(str).str.strip()
        if (len(text) and text.str.fullmatch(r"[+-]?\d+(,\d+)?").all()
                and text.str.contains(",", regex=False).any()):
            number = frame[col].astype("string").str.strip().str.replace(",", ".", regex=False)
            frame = frame.assign(**{col: pd.to_numeric(number, errors="coerce").astype(float)})
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
    dialect = _csv_dialect(path)
    raw = [str(v) for v in _parse_csv(path, header=None, nrows=1, dtype=str,
                                      keep_default_na=False, **dialect).iloc[0].tolist()]
    if _is_opencellid_row(raw):
        if kind == "csv":
            raise ValidationError(f"{name}: the first line is an OpenCelliD data row, not a "
                                  "header; fix: drop format='csv' to read it as a headerless "
                                  "OpenCelliD export, or add a header line")
        return "opencellid", {"header": None, "names": list(OPENCELLID_COLUMNS), **dialect}, list(
            OPENCELLID_COLUMNS)
    names = [n.strip() for n in raw]
    if names[0].startswith("#") and not any(names[1:]):
        raise ValidationError(f"{name}: the first line {','.join(raw).strip()[:60]!r} is a "
                              "comment, not the header; fix: delete the comment lines above "
                              "the header line (cell files have no comment lines)")
    if pd.to_numeric(pd.Series(names), errors="coerce").notna().all():
        raise ValidationError(f"{name}: the first line {names} is numbers, not column names: "
                              "the file has no header; fix: add a header line, e.g. "
                              "'cell_id,lon,lat'")
    if len(names) == 1:
        seps = [sep for sep in (";", "\t", "|") if sep in names[0]]
        if seps:
            raise ValidationError(f"{name}: the header {names[0]!r} has no commas but "
                                  f"{seps[0]!r}, yet the first lines do not all have as many "
                                  f"{seps[0]!r}-separated fields as it: the delimiter is "
                                  "unclear; fix: give every line one field per column (quote "
                                  "fields that hold the delimiter), or add Excel's first line "
                                  f"'sep={seps[0]}'")
    _check_unique_names(raw, name)
    kind = _table_kind(names, name, kind)
    aliases = _plan_columns(names, name).id_columns if kind == "csv" else ()
    ids = {r: str for r, n in zip(raw, names, strict=True)
           if n.casefold() in _ID_COLUMNS or n in aliases}
    return kind, {"dtype": ids if kind == "csv" else None, **dialect}, names


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


def _read_vector(path: Path, source_crs: pyproj.CRS | None) -> tuple[pd.DataFrame, Source]:
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
    plan = _plan_columns(attributes, path.name, geometry=True)
    frame = _rename(frame.rename(columns=_canonical_names(attributes, _OPTIONAL_COLUMNS)), plan)
    for col in _ID_COLUMNS:
        if col in frame.columns and col in plan.renames.values():
            frame[col] = _id_values(frame[col])
    id_col = "cell_id" if "cell_id" in frame.columns else None
    return frame, Source(path.name, "vector", pyproj.CRS(crs), None, None, id_col, plan)


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
                source_crs: pyproj.CRS | None, plan: _Plan | None = None) -> Source:
    cols = list(frame.columns)
    if kind == "opencellid":
        wgs84 = pyproj.CRS("EPSG:4326")
        if source_crs is not None and not source_crs.equals(wgs84, ignore_axis_order=True):
            raise ValidationError(f"{name}: OpenCelliD positions are WGS 84 lon/lat "
                                  f"(EPSG:4326), not source_crs={source_crs.to_string()}; fix: "
                                  "drop source_crs")
        return Source(name, kind, wgs84, "lon", "lat", "cell")
    id_col = "cell_id" if "cell_id" in cols else None
    lon, lat = _pick_column(cols, _LON_NAMES, name), _pick_column(cols, _LAT_NAMES, name)
    x, y = _pick_column(cols, _X_NAMES, name), _pick_column(cols, _Y_NAMES, name)
    if lon and lat:
        crs = source_crs if source_crs is not None else pyproj.CRS("EPSG:4326")
        if not crs.is_geographic:
            raise ValidationError(f"{name}: columns '{lon}', '{lat}' are degrees but "
                                  f"source_crs={crs.to_string()} is projected; fix: drop "
                                  "source_crs, or name the columns 'x', 'y'")
        return Source(name, kind, crs, lon, lat, id_col, plan)
    if x and y:
        if source_crs is None:
            raise ValidationError(f"{name}: columns '{x}', '{y}' need source_crs; fix: pass "
                                  "the CRS of these coordinates, e.g. source_crs='EPSG:32610'")
        return Source(name, kind, source_crs, x, y, id_col, plan)
    half = [f"'{c}'" for c in (lon, lat, x, y) if c]
    found = f"; it has only {', '.join(half)} of them" if half else ""
    raise ValidationError(
        f"{name}: lacks coordinate columns{found}; expected 'lon', 'lat' (or 'longitude', "
        "'latitude'; degrees, EPSG:4326) or 'x', 'y' (or 'x_m', 'y_m', with source_crs=...); "
        f"columns found: {cols}; fix: add or rename the coordinate columns"
    )
