"""A self-contained HTML report of one solved drop: notes, summary tables, an interactive map, figures.

:func:`write_report` writes one HTML5 file that works fully offline: every style, script and
figure is inline, text uses the reader's system fonts, and a Content-Security-Policy
forbids any network fetch (images are ``data:`` URIs). The page holds

* the title and the notes (scenario, seed, counts...) as a list;
* the summary tables, one HTML table each (numbers to 4 significant digits, right-aligned
  in a column of numbers only; text left-aligned and wrapped; index shown);
* an interactive map drawn as inline SVG: cells by tier (macro: triangle, or a pie slice
  around the boresight when the cells frame has a finite ``azimuth_deg``, so a
  three-sector site reads as three slices; pico: square; femto: diamond), filled for
  operator cells and hollow for third-party cells, coloured by tier or, by the "Colour cells
  by" choice, by a quantity with a colour bar (load, overload, users served, best-RSRP share,
  mean SINR, airtime price, mean power, share off, where the columns allow; grey: no value);
  with an ``offset_db`` column (the offset of each method's association rule, NaN for a
  method that is no offset rule) also by offset, on a diverging bar symmetric about 0 dB
  (negative blue, 0 white, positive red), each non-zero offset of the method shown then
  written beside its cell ("+6", "−3"), and this colouring chosen when the page opens if the
  selected method has offsets; users as dots coloured by the tier of their serving cell
  (grey when not served, hollow when unusable), guard-band users faded; association lines
  user → serving cell (or its nearest wraparound copy) as a layer that can be switched off
  (off by default above :data:`ASSOCIATION_LINES_MAX_USERS` users); optionally the outlines
  of the study area and other regions, and coverage rasters (:class:`CoverageLayer`) under
  the markers, one at a time. When the frames carry a ``method`` column (the rows of several
  methods stacked), a "Method" choice switches the association, colours, offset labels,
  tooltips, counts and per-cell table shown; the markers are drawn once and each method's
  state is a compact JSON block the script applies (2,000 users × 7 methods: about 2 MB;
  each further method adds about 0.1 MB per 1,000 users).
  Hovering a marker shows its key values; drag pans, the wheel and the +/− buttons zoom,
  "Reset" restores the first view. The legend and the controls sit beside the map, never
  over it. The SVG is built here; the small inline script only changes the view box,
  toggles layers and applies a method's state, so the page stays responsive with about
  10,000 users and 300 cells (about 2.7 MB of HTML for one method). Markers and labels keep
  their size on screen when zooming, and the labels let the mouse through to the markers;
* a per-cell table (of each method, switched with the map's method; at most
  :data:`CELL_TABLE_MAX_ROWS` rows each). Every table sorts by a column when its header is
  clicked (numbers numerically, text alphabetically; again: the other direction; missing
  values last);
* the figures, embedded as inline SVG (text drawn as paths, so no font is needed).

The page's skeleton, style sheet and script are package data, in ``assets/`` beside this
module (``report_template.html``, ``report.css``, ``report.js``); the page holds their text.

There is no basemap: map tiles would have to be fetched from a server, which the page
never does.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import html
import importlib.resources
import io
import json
import math
import mmap
import os
import re
import string
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import geopandas as gpd
import matplotlib as mpl
import numpy as np
import pandas as pd
import shapely
from matplotlib import image as mpl_image
from matplotlib.figure import Figure

from cellopt import network
from cellopt._version import __version__
from cellopt.errors import ValidationError
from cellopt.study.atomic import atomic_write

__all__ = ["ASSOCIATION_LINES_MAX_USERS", "CELL_TABLE_MAX_ROWS", "POWER_RAMP_DB", "TIER_COLORS",
           "CoverageLayer", "format_value", "is_report", "render_report", "write_report"]

#: Above this many users the association-line layer starts switched off (it can be switched on).
ASSOCIATION_LINES_MAX_USERS = 5000

#: Rows of the per-cell table (of each method); a longer cells frame shows its first rows, and
#: the table's caption says so.
CELL_TABLE_MAX_ROWS = 2000

#: Fill colour of each tier, as in the plots; users take the colour of their serving tier,
#: unserved users the "none" grey.
TIER_COLORS: dict[str, str] = {**network.TIER_COLORS, "none": network.UNSERVED_COLOR}
_OTHER_COLOR = "#6f4e7c"  # cells of an unknown tier
_NO_LOAD_COLOR = "#c8c8c8"  # cells without a finite load
_LOAD_CMAP = "YlOrRd"
_LOAD_RANGE = (0.12, 1.0)  # part of the colour map used for load 0..1 (skips the near-white end)
#: Diverging colour map of the cells' offsets: negative blue, 0 white, positive red.
_OFFSET_CMAP = "RdBu_r"
#: The offset colour bar spans ±max(|offset|), at least ±this [dB].
_OFFSET_MIN_SPAN_DB = 1.0
#: Range of the "mean power" colouring [dB below full power]: the ramp runs from this far
#: below (and off) to full power.
POWER_RAMP_DB = 30.0

#: Marker radius of a user dot and of the cell markers, in screen pixels.
_USER_RADIUS_PX = 2.2
_MAP_WIDTH_PX = 1000  # assumed map width, only for the marker size a page without script shows

_DASH = "–"

#: Colour map of a continuous coverage layer, and the percentiles its range spans by default.
_COVERAGE_CMAP = "viridis"
_COVERAGE_PERCENTILES = (2.0, 98.0)
#: Colours of a categorical coverage layer, by value modulo 20: tab20's ten dark hues, then
#: its ten light ones, so that consecutive values (e.g. the sectors of a site) differ in hue.
_CATEGORY_COLORS = np.array([mpl.colormaps["tab20"](i) for i in (*range(0, 20, 2), *range(1, 20, 2))])
#: Outline colour and dash pattern [screen px] of each area, in turn.
_AREA_STYLES = (("#1b1b1b", ""), ("#b2182b", "9 5"), ("#2166ac", "3 4"), ("#5e3c99", "12 4 3 4"),
                ("#1b7837", "1.5 3"), ("#8c510a", "6 3 6 8"))
#: An area's outline is simplified to this share of the map's span (a pixel at the deepest zoom is
#: 2·10⁻⁶ of it), or coarser while it keeps more than ``_AREA_MAX_VERTICES`` vertices.
_AREA_TOLERANCE = 1e-5
_AREA_MAX_VERTICES = 50_000
#: Codes of the serving tiers in the page's method data.
_TIER_CODES = ("macro", "pico", "femto", "none", "other")
_GUARD, _UNUSABLE, _ABSENT = 1, 2, 4  # flags of a user in the page's method data


@dataclasses.dataclass(frozen=True, eq=False)
class CoverageLayer:
    """A raster the map can show under its markers: a coverage map (RSRP, SINR, best server...).

    Parameters
    ----------
    name : str
        Name shown in the map's "Coverage" choice and over its colour bar.
    values : numpy.ndarray, shape (n_rows, n_cols)
        The raster: row 0 is the north edge (``bounds_m[3]``), column 0 the west edge
        (``bounds_m[0]``); the pixels are ``(xmax − xmin) / n_cols`` by
        ``(ymax − ymin) / n_rows`` metres. Continuous: float, NaN (or ±inf) = no data.
        Categorical: integers (e.g. the best server's cell number), −1 (any negative value)
        or NaN = no data. No data is transparent.
    bounds_m : tuple of float, shape (4,)
        ``(xmin, ymin, xmax, ymax)`` of the raster's outer edges [m], in the CRS of the users
        and cells.
    unit : str
        Unit of the values, shown with the colour bar's ticks (e.g. ``"dBm"``, ``"dB"``);
        may be empty.
    categorical : bool, default False
        Whether the values are categories (drawn in a cycle of 20 colours by value modulo
        20, consecutive values in different hues; the legend says the colours distinguish
        cells) rather than a quantity (drawn with viridis and a colour bar).
    labels : mapping of int to str, optional
        Categorical only: names of the values. When given and at most 20 distinct values
        are present, the legend lists each value's colour and name.
    vmin, vmax : float, optional
        Continuous only: the values at the ends of the colour bar, in `unit`; values beyond
        take the end colours. Default: the 2nd and the 98th percentile of the finite values.

    Raises
    ------
    ValidationError
        If `values` is not a non-empty 2-D array of numbers, `bounds_m` not four finite
        numbers with xmin < xmax and ymin < ymax, a categorical layer has non-integer
        values, or ``vmin >= vmax``.
    """

    name: str
    values: np.ndarray
    bounds_m: tuple[float, float, float, float]
    unit: str
    categorical: bool = False
    labels: Mapping[int, str] | None = None
    vmin: float | None = None
    vmax: float | None = None

    def __post_init__(self) -> None:
        values = np.asarray(self.values)
        problems = []
        if values.ndim != 2 or 0 in values.shape:
            problems.append(f"values have shape {values.shape}; fix: give a 2-D array (n_rows, n_cols)")
        elif not (np.issubdtype(values.dtype, np.number) or values.dtype == bool):
            problems.append(f"values are of dtype {values.dtype}; fix: give numbers")
        elif self.categorical and np.issubdtype(values.dtype, np.floating):
            finite = values[np.isfinite(values)]
            if (finite != np.round(finite)).any():
                problems.append("categorical values are not whole numbers; fix: give integer codes, "
                                "−1 for no data")
        try:
            bounds = tuple(float(b) for b in self.bounds_m)
        except (TypeError, ValueError):
            bounds = ()
        if len(bounds) != 4 or not all(map(math.isfinite, bounds)) \
                or not (bounds[0] < bounds[2] and bounds[1] < bounds[3]):
            problems.append(f"bounds_m {self.bounds_m!r}; fix: give (xmin, ymin, xmax, ymax) in metres, "
                            f"xmin < xmax, ymin < ymax")
        if self.vmin is not None and self.vmax is not None and not float(self.vmin) < float(self.vmax):
            problems.append(f"vmin {self.vmin} is not below vmax {self.vmax}; fix: vmin < vmax")
        if problems:
            raise ValidationError([f"coverage layer {self.name!r}: {p}" for p in problems])
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "bounds_m", bounds)


# ---------------------------------------------------------------------- public function
def write_report(
    path: str | os.PathLike[str],
    *,
    title: str,
    users: gpd.GeoDataFrame,
    cells: gpd.GeoDataFrame,
    tables: Mapping[str, pd.DataFrame],
    figures: Mapping[str, Figure],
    notes: Sequence[str] = (),
    selected_method: str | None = None,
    areas: Mapping[str, shapely.Geometry] | None = None,
    coverage: Sequence[CoverageLayer] | None = None,
    cell_table: bool = True,
) -> Path:
    """Write the report of one solved drop as a single self-contained HTML file.

    Parameters
    ----------
    path : str or path-like
        Where to write the page (conventionally ``*.html``). Missing parent folders are
        created; an existing file is replaced atomically (written to a temporary file in
        the same folder, then renamed).
    title : str
        Title of the page.
    users : geopandas.GeoDataFrame, shape (n_users, ...) or (n_users × n_methods, ...)
        One row per user (and method), Point geometry in a projected CRS in metres (the CRS
        of `cells`). Required columns: ``user_id`` and ``serving_cell_id`` (a value of
        ``cells.cell_id``; None/NaN when the user is not served). Optional columns, shown
        when present: ``method`` (see below), ``in_study_area`` (bool; False: guard-band
        user, drawn faded), ``usable`` (bool; False: drawn hollow), ``serving_tier`` (str,
        "macro"|"pico"|"femto"|"none"; default: the tier of the serving cell),
        ``n_serving_cells`` (int), ``airtime_share`` (float, 0..1), ``rate_mbps`` [Mbit/s],
        ``sinr_db`` [dB] (NaN if not served), ``serving_x_m`` and ``serving_y_m`` [m, the
        frames' CRS] (both or neither: where the user's association line ends, the position
        of the serving cell's wraparound copy nearest to the user; NaN, or absent: the
        serving cell's own position).

        With a ``method`` column the frame holds several methods' rows stacked (the same
        users repeated, each ``user_id`` at most once per method); the map draws each
        ``user_id`` once, at its first row's position, and shows the chosen method's
        association. A user without a row in a method is hidden while it is shown.
    cells : geopandas.GeoDataFrame, shape (n_cells, ...) or (n_cells × n_methods, ...)
        One row per cell (and method), Point geometry, same CRS. Required columns:
        ``cell_id`` (unique, within each method) and ``tier`` ("macro"|"pico"|"femto").
        Optional columns, shown when present: ``method`` (the methods' rows stacked, as for
        `users`; without it, the cells are the same for every method of `users`),
        ``site_id``, ``owner`` ("operator"|"third_party"; third-party cells are drawn
        hollow), ``azimuth_deg`` (degrees clockwise from north, NaN = omni),
        ``tx_power_dbm`` [dBm], ``load`` (airtime used, 0..1), ``overload`` (0..; NaN:
        none), ``n_users`` (int), ``best_rsrp_share`` (0..1), ``mean_sinr_db`` [dB],
        ``airtime_price``, ``traffic_mbps`` [Mbit/s], ``backhaul_mbps`` [Mbit/s] (inf =
        unlimited), ``backhaul_use`` (0..1 or NaN), ``payment``, ``mean_power_dbm`` [dBm],
        ``share_off`` (0..1) and ``offset_db`` [dB] (the offset the method's association
        rule adds to the cell's RSRP; NaN for a method that is no offset rule). "Colour
        cells by" offers load and overload where the columns are given (leave them out where
        they are 1 and null by construction, as under full buffer), users served, best-RSRP
        share, mean SINR and airtime price where they vary, with ``tx_power_dbm`` and some
        cell below full power or off, the mean power below full (from :data:`POWER_RAMP_DB`
        below, or off, to full) and the share off, and, where some finite ``offset_db`` is
        not 0, the offset: a diverging bar over ±the largest |offset| (at least ±1 dB),
        NaN grey, each non-zero offset of the method shown labelled beside its cell, its
        tooltip saying ``offset: +6 dB``; the offset colouring is the one chosen when the
        page opens if the shown method's cells have finite offsets (else the tier). Every
        column but the geometry and ``method`` is listed in the per-cell table.
    tables : mapping of str to pandas.DataFrame
        Summary tables, in order; the key is the caption. Floats are shown to 4
        significant digits (see :func:`format_value`), the index is shown. A column of
        numbers (and missing values) only is right-aligned; any other column is text.
    figures : mapping of str to matplotlib.figure.Figure
        Figures, in order; the key is the caption. Embedded as SVG; the figures are not
        closed (the caller owns them).
    notes : sequence of str, optional
        Short lines shown under the title (scenario, seed, counts...).
    selected_method : str, optional
        With a ``method`` column: the method shown when the page opens. Default: the last
        method of `users` in order of appearance.
    areas : mapping of str to shapely.Geometry, optional
        Outlines to draw, in order; the key is the name listed in the legend (e.g.
        ``{"study area": polygon, "region": polygon}``). Polygons, lines or collections of
        them (a GeoSeries or GeoDataFrame: the union of its shapes), in the frames' CRS [m];
        drawn unfilled, each in its own colour and dash pattern, each switchable.
        Simplified to 10⁻⁵ of the map's span (at least 0.1 m; coarser where an outline
        would keep more than 50,000 vertices).
    coverage : sequence of CoverageLayer, optional
        Rasters the map can show under the markers, one at a time (none at first). The
        map's first view spans the users, the cells, the areas and the coverage layers.
    cell_table : bool, default True
        Whether the page lists the cells in a sortable table (of each method).

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ValidationError
        If a frame lacks a required column, has a geometry other than points, duplicate
        cell ids (within a method), a geographic CRS (degrees), or a CRS different from the
        other frame's; if `cells` has a ``method`` column and `users` none, a user id is
        missing or repeated within a method, or a method is missing; if `selected_method`
        is not a method of the frames (or given without a ``method`` column); if only one
        of ``serving_x_m``, ``serving_y_m`` is given; if an area is not a shapely geometry.
    """
    path = Path(path)
    page = render_report(title=title, users=users, cells=cells, tables=tables, figures=figures,
                         notes=notes, selected_method=selected_method, areas=areas, coverage=coverage,
                         cell_table=cell_table)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda f: f.write(page))
    return path


def render_report(
    *,
    title: str,
    users: gpd.GeoDataFrame,
    cells: gpd.GeoDataFrame,
    tables: Mapping[str, pd.DataFrame],
    figures: Mapping[str, Figure],
    notes: Sequence[str] = (),
    selected_method: str | None = None,
    areas: Mapping[str, shapely.Geometry] | None = None,
    coverage: Sequence[CoverageLayer] | None = None,
    cell_table: bool = True,
) -> str:
    """The page :func:`write_report` writes, as text (for a caller that writes it itself).

    Parameters
    ----------
    title, users, cells, tables, figures, notes, selected_method, areas, coverage, cell_table
        As for :func:`write_report`.

    Returns
    -------
    str
        The whole HTML page.

    Raises
    ------
    ValidationError
        As for :func:`write_report`.
    """
    problems = _check_frames(users, cells)
    if not problems:
        problems = _check_extras(users, cells, selected_method, areas, coverage)
    if problems:
        raise ValidationError(problems)
    notes = [notes] if isinstance(notes, str) else list(notes)
    methods = _methods(users, cells)
    selected = None
    if methods:
        default = _method_names(users)[-1] if len(users) else methods[-1]
        selected = str(selected_method) if selected_method is not None else default
    areas_geom = {str(k): _as_geometry(v) for k, v in (areas or {}).items()}
    coverage = list(coverage or ())
    cell_section = _cell_tables(cells, methods, selected) if cell_table else ""
    body = [
        _header(title, notes, has_tables=bool(tables), has_figures=bool(figures),
                has_cells=bool(cell_section)),
        _map_section(users, cells, methods=methods, selected=selected, areas=areas_geom,
                     coverage=coverage),
        _tables_section(tables),
        cell_section,
        _figures_section(figures),
        _footer(),
    ]
    return _page(title, "\n".join(b for b in body if b))


def is_report(path: str | os.PathLike[str]) -> bool:
    """Whether the file at `path` is a page :func:`write_report` wrote (any version).

    It looks for the page's footer ("Written by cellopt ..."), without reading the whole
    file into memory.
    """
    try:
        with open(path, "rb") as f:
            if not f.read(64).lstrip().lower().startswith(b"<!doctype html>"):
                return False
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return data.find(_FOOTER_MARK) >= 0
    except (OSError, ValueError):  # unreadable, or empty (mmap refuses)
        return False


def format_value(value: Any) -> str:
    """The text shown for one value of a table or tooltip (not yet HTML-escaped).

    Parameters
    ----------
    value : Any
        A scalar.

    Returns
    -------
    str
        "–" for None/NaN/NA; "∞"/"−∞" for infinities; "yes"/"no" for booleans; integers in
        full; other floats rounded to 4 significant digits without trailing zeros, in fixed
        notation between 0.001 and 10⁶ (e.g. ``12350``, ``3.142``, ``0.5``, ``0.001235``) and
        in scientific notation outside (``1.235e+07``, ``1e-09``); anything else as
        ``str(value)``.
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return _DASH
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        v = float(value)
        if math.isnan(v):
            return _DASH
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        if v == 0:
            return "0"
        r = float(f"{v:.4g}")
        a = abs(r)
        if a >= 1e6 or a < 1e-3:
            mantissa, exponent = f"{v:.3e}".split("e")
            return f"{_strip_zeros(mantissa)}e{exponent}"
        return _strip_zeros(f"{r:.{max(0, 3 - math.floor(math.log10(a)))}f}")
    try:
        if pd.isna(value):
            return _DASH
    except (TypeError, ValueError):  # array-likes
        pass
    return str(value)


def _strip_zeros(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


# ---------------------------------------------------------------------- checks
def _check_frames(users: Any, cells: Any) -> list[str]:
    problems: list[str] = []
    for name, frame, required in (("users", users, ("user_id", "serving_cell_id")),
                                  ("cells", cells, ("cell_id", "tier"))):
        if not isinstance(frame, gpd.GeoDataFrame):
            problems.append(f"{name} is a {type(frame).__name__}; fix: give a geopandas.GeoDataFrame")
            continue
        missing = [c for c in required if c not in frame.columns]
        if missing:
            problems.append(f"{name} table lacks columns {missing}; fix: add them")
        if len(frame) == 0:
            continue
        geom = frame.geometry
        bad = (geom.isna() | (geom.geom_type != "Point")).to_numpy().copy()
        bad[~bad] = geom[~bad].is_empty.to_numpy()
        if bad.any():
            rows = np.flatnonzero(bad)
            problems.append(f"{name} table: rows {rows[:10].tolist()} have no Point geometry; fix: give "
                            f"one non-empty Point per row")
        crs = frame.crs
        if crs is not None and crs.is_geographic:
            problems.append(f"{name} table is in the geographic CRS {crs.name!r} (degrees); fix: project "
                            f"it to metres, e.g. frame.to_crs(frame.estimate_utm_crs())")
    if problems:
        return problems
    key = ["method", "cell_id"] if "method" in cells.columns else ["cell_id"]
    if "cell_id" in cells.columns and cells.duplicated(subset=key).any():
        dup = cells.loc[cells.duplicated(subset=key), "cell_id"].unique()[:10].tolist()
        within = " within a method" if len(key) > 1 else ""
        problems.append(f"cells table: duplicate cell_id {dup}{within}; fix: give each cell a unique id")
    if len(users) and len(cells) and users.crs is not None and cells.crs is not None \
            and users.crs != cells.crs:
        problems.append(f"users CRS {users.crs.name!r} differs from cells CRS {cells.crs.name!r}; fix: "
                        f"users.to_crs(cells.crs)")
    return problems


def _check_extras(users: gpd.GeoDataFrame, cells: gpd.GeoDataFrame, selected_method: Any,
                  areas: Mapping[str, Any] | None, coverage: Sequence[Any] | None) -> list[str]:
    """Problems of the method columns, `selected_method`, the line ends, `areas` and `coverage`."""
    problems: list[str] = []
    has_xy = ["serving_x_m" in users.columns, "serving_y_m" in users.columns]
    if any(has_xy) and not all(has_xy):
        problems.append("users table has only one of serving_x_m, serving_y_m; fix: give both or neither")
    if "method" in cells.columns and "method" not in users.columns:
        problems.append("cells table has a method column and users table none; fix: give users a method "
                        "column too, or drop the cells' one")
    if "method" in users.columns:
        for name, frame in (("users", users), ("cells", cells)):
            if "method" in frame.columns and frame["method"].isna().any():
                rows = np.flatnonzero(frame["method"].isna().to_numpy())[:10].tolist()
                problems.append(f"{name} table: rows {rows} have no method; fix: give every row its method")
        if users["user_id"].isna().any():
            rows = np.flatnonzero(users["user_id"].isna().to_numpy())[:10].tolist()
            problems.append(f"users table: rows {rows} have no user_id; fix: give every user an id")
        dup = users.duplicated(subset=["method", "user_id"])
        if dup.any():
            problems.append(f"users table: user_id {users.loc[dup, 'user_id'].unique()[:10].tolist()} "
                            f"repeated within a method; fix: one row per user and method")
    if problems:
        return problems
    methods = _methods(users, cells)
    if selected_method is not None:
        if not methods:
            problems.append(f"selected_method {selected_method!r} given, but users table has no method "
                            f"column; fix: give no selected_method, or a method column")
        elif str(selected_method) not in methods:
            problems.append(f"selected_method {selected_method!r} is not a method of the tables; fix: "
                            f"one of {methods}")
    for name, geom in (areas or {}).items():
        try:
            _as_geometry(geom)
        except TypeError:
            problems.append(f"area {name!r} is a {type(geom).__name__}; fix: give a shapely geometry")
    for layer in coverage or ():
        if not isinstance(layer, CoverageLayer):
            problems.append(f"coverage holds a {type(layer).__name__}; fix: give CoverageLayer objects")
    return problems


def _method_names(frame: pd.DataFrame) -> list[str]:
    """The distinct values of `frame`'s ``method`` column as text, in order of appearance."""
    if "method" not in frame.columns:
        return []
    return list(dict.fromkeys(frame["method"].astype(str)))


def _methods(users: pd.DataFrame, cells: pd.DataFrame) -> list[str]:
    """The methods of the stacked frames (the users', then any other of the cells'), or [] when
    `users` has no ``method`` column."""
    if "method" not in users.columns:
        return []
    return list(dict.fromkeys(_method_names(users) + _method_names(cells)))


def _as_geometry(value: Any) -> shapely.Geometry:
    """`value` as one shapely geometry (a GeoSeries or GeoDataFrame: the union of its shapes)."""
    if isinstance(value, gpd.GeoDataFrame | gpd.GeoSeries):
        return value.geometry.union_all()
    if isinstance(value, shapely.Geometry):
        return value
    raise TypeError(type(value).__name__)


# ---------------------------------------------------------------------- formatting helpers
def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _c(v: float) -> str:
    """A coordinate rounded to 0.1 m, without a trailing ``.0``."""
    s = f"{v:.1f}"
    if s.endswith(".0"):
        s = s[:-2]
    return "0" if s == "-0" else s


def _slug(name: str, used: set[str], prefix: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "item"
    slug, k = f"{prefix}-{base}", 2
    while slug in used:
        slug, k = f"{prefix}-{base}-{k}", k + 1
    used.add(slug)
    return slug


def _column(frame: pd.DataFrame, name: str, default: Any) -> np.ndarray:
    if name in frame.columns:
        return frame[name].to_numpy()
    return np.full(len(frame), default, dtype=object)


def _bools(frame: pd.DataFrame, name: str) -> np.ndarray:
    """Column `name` as bool (missing column or missing values: True)."""
    if name not in frame.columns:
        return np.ones(len(frame), bool)
    v = frame[name]
    return v.where(v.notna(), True).astype(bool).to_numpy()


def _floats(frame: pd.DataFrame, name: str) -> np.ndarray:
    if name not in frame.columns:
        return np.full(len(frame), np.nan)
    return pd.to_numeric(frame[name], errors="coerce").to_numpy(float)


def _with_unit(value: Any, unit: str) -> str:
    text = format_value(value)
    return text if text == _DASH else f"{text} {unit}"


def _percent(value: Any) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return format_value(value)
    return _with_unit(v * 100, "%")


# ---------------------------------------------------------------------- page parts
def _header(title: str, notes: list[str], *, has_tables: bool, has_figures: bool,
            has_cells: bool = False) -> str:
    items = "".join(f"<li>{_esc(n)}</li>" for n in notes)
    links = ['<a href="#map-section">Map</a>']
    if has_tables:
        links.append('<a href="#tables">Tables</a>')
    if has_cells:
        links.append('<a href="#cells">Cells</a>')
    if has_figures:
        links.append('<a href="#figures">Figures</a>')
    notes_html = f'<ul class="notes" id="notes">{items}</ul>' if notes else ""
    return (f'<header><h1 id="title">{_esc(title)}</h1>{notes_html}'
            f'<nav>{" · ".join(links)}</nav></header>')


#: The start of every report's footer, by which :func:`is_report` knows a page of cellopt's.
_FOOTER_MARK = b"<footer>Written by cellopt "


def _footer() -> str:
    version = __version__
    return (f'{_FOOTER_MARK.decode()}{_esc(version)}. Self-contained page: it fetches nothing '
            f'from the network.</footer>')


def _tables_section(tables: Mapping[str, pd.DataFrame]) -> str:
    if not tables:
        return ""
    used: set[str] = set()
    parts = [_table_html(name, frame, _slug(str(name), used, "table")) for name, frame in tables.items()]
    return f'<section id="tables"><h2>Tables</h2>{"".join(parts)}</section>'


def _cell_tables(cells: gpd.GeoDataFrame, methods: list[str], selected: str | None) -> str:
    """The per-cell tables: one per method (all but the selected one hidden), or one."""
    if not isinstance(cells, gpd.GeoDataFrame) or len(cells) == 0:
        return ""
    geometry = [c for c in cells.columns if isinstance(cells[c].dtype, gpd.array.GeometryDtype)]
    plain = pd.DataFrame(cells.drop(columns=geometry))
    if "method" in plain.columns:
        method = plain["method"].astype(str)
        groups = [(m, plain[method.to_numpy() == m].drop(columns="method")) for m in methods]
        groups = [(m, g) for m, g in groups if len(g)]
    else:
        groups = [(None, plain)]
    used: set[str] = set()
    parts = []
    for m, frame in groups:
        n = len(frame)
        shown = frame.iloc[:CELL_TABLE_MAX_ROWS].set_index("cell_id")
        caption = "Cells" if m is None else f"Cells: {m}"
        if n > CELL_TABLE_MAX_ROWS:
            caption += f" (the first {CELL_TABLE_MAX_ROWS:,} of {n:,} rows)"
        wrap = "" if m is None else f' data-method="{_esc(m)}"' + ("" if m == selected else " hidden")
        parts.append(_table_html(caption, shown, _slug("cells" if m is None else f"cells {m}", used, "table"),
                                 table_class="cell-table", wrap_class="table-wrap sortable cell-table-wrap",
                                 wrap_attrs=wrap))
    note = ('<p class="small">The cells of the method the map shows (choose it beside the map). '
            if groups[0][0] is not None else '<p class="small">')
    note += "Click a column's header to sort by it.</p>"
    return f'<section id="cells"><h2>Cells</h2>{note}{"".join(parts)}</section>'


def _label(value: Any) -> str:
    if isinstance(value, tuple):
        return " / ".join(format_value(v) for v in value if not (isinstance(v, str) and v == ""))
    return format_value(value)


_NUM = ' class="num"'
_SORT_NUM = ' data-sort="num"'


def _is_number(value: Any) -> bool:
    numeric = isinstance(value, int | float | np.integer | np.floating)
    return numeric and not isinstance(value, bool | np.bool_)


def _numeric(values: Iterable[Any]) -> bool:
    """Whether a column holds numbers (and missing values) only: right-aligned, sorted as numbers."""
    return all(_is_number(v) or format_value(v) == _DASH for v in values)


def _table_html(name: str, frame: pd.DataFrame, table_id: str, *, table_class: str = "summary-table",
                wrap_class: str = "table-wrap sortable", wrap_attrs: str = "") -> str:
    """One table, its headers sortable by the page's script (``data-sort="num"``: as numbers)."""
    if not isinstance(frame, pd.DataFrame):
        frame = pd.DataFrame(frame)
    index = frame.index
    n_index = index.nlevels
    index_names = [format_value(n) if n is not None else "" for n in index.names]
    index_numeric = [_numeric(index.get_level_values(k)) and len(index) > 0 for k in range(n_index)]
    numeric = [_numeric(frame.iloc[:, j]) for j in range(frame.shape[1])]
    head = "".join(f'<th scope="col"{_SORT_NUM if num else ""}>{_esc(n)}</th>'
                   for n, num in zip(index_names, index_numeric, strict=True))
    head += "".join(f'<th scope="col"{_NUM + _SORT_NUM if num else ""}>{_esc(_label(c))}</th>'
                    for c, num in zip(frame.columns, numeric, strict=True))
    td = [f"<td{_NUM}>" if num else "<td>" for num in numeric]
    rows = []
    for key, values in zip(index, frame.itertuples(index=False, name=None), strict=True):
        keys = key if n_index > 1 else (key,)
        cells = "".join(f'<th scope="row">{_esc(format_value(k))}</th>' for k in keys)
        cells += "".join(f"{t}{_esc(format_value(v))}</td>" for t, v in zip(td, values, strict=True))
        rows.append(f"<tr>{cells}</tr>")
    return (f'<div class="{wrap_class}"{wrap_attrs}><table class="{table_class}" id="{table_id}">'
            f"<caption>{_esc(name)}</caption><thead><tr>{head}</tr></thead>"
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _figures_section(figures: Mapping[str, Figure]) -> str:
    if not figures:
        return ""
    used: set[str] = set()
    parts = []
    for name, fig in figures.items():
        fig_id = _slug(str(name), used, "fig")
        parts.append(f'<figure class="figure" id="{fig_id}">{_figure_svg(fig, fig_id)}'
                     f"<figcaption>{_esc(name)}</figcaption></figure>")
    return f'<section id="figures"><h2>Figures</h2><div class="figures">{"".join(parts)}</div></section>'


def _figure_svg(fig: Figure, fig_id: str) -> str:
    """`fig` as an inline ``<svg>`` element whose ids are prefixed with `fig_id` (unique on the page)."""
    buf = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "path", "svg.hashsalt": "cellopt-report", "svg.image_inline": True}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buf.getvalue()
    svg = svg[svg.find("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.DOTALL)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{fig_id}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{fig_id}-\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{fig_id}-\1"', svg)

    def scope_rule(r: re.Match[str]) -> str:
        return r.group(1) + ",".join(f"#{fig_id} {sel.strip()}" for sel in r.group(2).split(",")) + "{"

    def scope(m: re.Match[str]) -> str:  # style rules of one figure apply to that figure only
        rules = re.sub(r"(^|\})\s*([^{}]+?)\s*\{", scope_rule, m.group(2))
        return f"{m.group(1)}{rules}</style>"

    svg = re.sub(r"(<style[^>]*>)(.*?)</style>", scope, svg, flags=re.DOTALL)
    return svg.strip()


# ---------------------------------------------------------------------- the map
@dataclasses.dataclass
class _View:
    """What the map shows of one method: per shared user, and per shared cell in page order."""

    name: str | None
    tier: np.ndarray  # (n_users,) str: the serving tier's class suffix ("macro"... "none", "other")
    flags: np.ndarray  # (n_users,) int: _GUARD | _UNUSABLE | _ABSENT
    user_title: list[str]  # (n_users,)
    line_end: np.ndarray  # (n_users, 2) float: local end of the association line [m]; NaN: none
    cell_style: list[str | None]  # (n_cells,): colour variables; None: no row in this method
    cell_title: list[str | None]  # (n_cells,)
    cell_label: list[str | None]  # (n_cells,): offset labels ("+6"); None: none
    counts: dict[str, int]


def _map_section(users: gpd.GeoDataFrame, cells: gpd.GeoDataFrame, *, methods: list[str],
                 selected: str | None, areas: Mapping[str, shapely.Geometry],
                 coverage: Sequence[CoverageLayer]) -> str:
    n_urows, n_crows = len(users), len(cells)
    ux = users.geometry.x.to_numpy(float) if n_urows else np.empty(0)
    uy = users.geometry.y.to_numpy(float) if n_urows else np.empty(0)
    cx = cells.geometry.x.to_numpy(float) if n_crows else np.empty(0)
    cy = cells.geometry.y.to_numpy(float) if n_crows else np.empty(0)

    # local coordinates: x east, y down (SVG), origin near the top-left point, in metres
    all_x, all_y = [ux, cx], [uy, cy]
    for geom in areas.values():
        if not geom.is_empty:
            b = geom.bounds
            all_x.append(np.array([b[0], b[2]]))
            all_y.append(np.array([b[1], b[3]]))
    for layer in coverage:
        all_x.append(np.array(layer.bounds_m[0::2]))
        all_y.append(np.array(layer.bounds_m[1::2]))
    xs, ys = np.concatenate(all_x), np.concatenate(all_y)
    if len(xs):
        x0, x1, y0, y1 = xs.min(), xs.max(), ys.min(), ys.max()
    else:
        x0, x1, y0, y1 = 0.0, 1000.0, 0.0, 1000.0
    ox, oy = math.floor(x0), math.ceil(y1)
    span = max(x1 - x0, y1 - y0, 200.0)
    pad = 0.04 * span
    width, height = max(x1 - x0, 200.0) + 2 * pad, max(y1 - y0, 200.0) + 2 * pad
    vb_x = (x0 + x1) / 2 - width / 2 - ox
    vb_y = oy - (y0 + y1) / 2 - height / 2
    view_box = f"{_c(vb_x)} {_c(vb_y)} {_c(width)} {_c(height)}"
    k0 = max(width, height) / _MAP_WIDTH_PX  # metres per screen pixel before the script runs

    # the methods of the rows; the shared users and cells (each drawn once, at its first row)
    names: list[str | None] = list(methods) if methods else [None]
    number = {m: k for k, m in enumerate(names)}
    if methods:
        u_method = users["method"].astype(str).map(number).to_numpy(int)
        u_code = pd.factorize(users["user_id"])[0]
    else:
        u_method, u_code = np.zeros(n_urows, int), np.arange(n_urows)
    by_method = bool(methods) and "method" in cells.columns
    if by_method:
        c_method = cells["method"].astype(str).map(number).to_numpy(int)
        c_code = pd.factorize(cells["cell_id"], use_na_sentinel=False)[0]
    else:
        c_method, c_code = np.zeros(n_crows, int), np.arange(n_crows)
    first_u = np.unique(u_code, return_index=True)[1]
    first_c = np.unique(c_code, return_index=True)[1]
    n_users, n_cells = len(first_u), len(first_c)
    user_row = np.full((len(names), n_users), -1)
    user_row[u_method, u_code] = np.arange(n_urows)
    cell_row = np.full((len(names), n_cells), -1)
    if by_method:
        cell_row[c_method, c_code] = np.arange(n_crows)
    else:
        cell_row[:, c_code] = np.arange(n_crows)

    # each user row's serving cell (a row of cells), tier, flags and line end
    serving = users["serving_cell_id"]
    served_row = np.full(n_urows, -1)
    has_id = serving.notna().to_numpy()
    if has_id.any() and n_crows:
        if by_method:
            index = pd.MultiIndex.from_arrays([c_method, cells["cell_id"].to_numpy()])
            query = pd.MultiIndex.from_arrays([u_method[has_id], serving[has_id].to_numpy()])
            served_row[has_id] = index.get_indexer(query)
        else:
            served_row[has_id] = pd.Index(cells["cell_id"]).get_indexer(pd.Index(serving[has_id]))
    unknown = has_id & (served_row < 0)
    if unknown.any():
        warnings.warn(f"{int(unknown.sum())} users have a serving_cell_id not in cells.cell_id "
                      f"(e.g. {serving[unknown].iloc[0]!r}); their association lines are left out",
                      stacklevel=3)
    served = served_row >= 0
    cell_tier = cells["tier"].astype(str).to_numpy() if n_crows else np.empty(0, object)
    if "serving_tier" in users.columns:
        user_tier = users["serving_tier"].where(users["serving_tier"].notna(), "none").astype(str).to_numpy()
    else:
        user_tier = np.where(served, cell_tier[np.maximum(served_row, 0)] if n_crows else "none",
                             "none").astype(str)
    tier_class = np.array([t if t in TIER_COLORS else "other" for t in user_tier], dtype=object)
    in_area, usable = _bools(users, "in_study_area"), _bools(users, "usable")
    flags = np.where(in_area, 0, _GUARD) | np.where(usable, 0, _UNUSABLE)
    end_x, end_y = np.full(n_urows, np.nan), np.full(n_urows, np.nan)
    end_x[served], end_y[served] = cx[served_row[served]], cy[served_row[served]]
    if "serving_x_m" in users.columns:  # the serving cell's nearest wraparound copy
        sx, sy = _floats(users, "serving_x_m"), _floats(users, "serving_y_m")
        given = served & np.isfinite(sx) & np.isfinite(sy)
        end_x[given], end_y[given] = sx[given], sy[given]
    cell_ids = cells["cell_id"].to_numpy() if n_crows else np.empty(0, object)
    sid = np.where(served, cell_ids[np.maximum(served_row, 0)] if n_crows else None, serving.to_numpy())
    user_titles = _user_titles(users, user_tier, in_area, usable, sid)

    # each cell row's tooltip and colours; the shared cells in page order (small markers on top)
    cell_titles, cell_styles, cell_labels = _cell_rows(cells)
    owner = _column(cells, "owner", "operator").astype(str)
    azimuth = _floats(cells, "azimuth_deg")
    rank = {"macro": 0, "pico": 1, "femto": 2}
    order = np.array(sorted(range(n_cells), key=lambda k: (rank.get(cell_tier[first_c[k]], 3), k)), int)
    page_cells = first_c[order]
    cell_row = cell_row[:, order]

    sux, suy = ux[first_u] - ox, oy - uy[first_u]
    ends = np.column_stack([end_x - ox, oy - end_y])
    views = [_view(name, user_row[k], cell_row[k], tier_class, flags, user_titles, ends, cell_titles,
                   cell_styles, cell_labels, cell_tier, owner) for k, name in enumerate(names)]
    sel = names.index(selected) if methods else 0
    view = views[sel]
    labelled = any(label is not None for label in cell_labels)
    # the offset colouring first when the method shown has offsets (rules, not optimizers)
    shown_rows = (cells["method"].astype(str).to_numpy() == selected if by_method
                  else np.ones(n_crows, bool))
    offset_first = "by-offset" in _colourings(cells) \
        and bool(np.isfinite(_floats(cells, "offset_db")[shown_rows]).any())

    lines_on = n_users <= ASSOCIATION_LINES_MAX_USERS
    cell_layer = _cell_layer(cx[page_cells] - ox, oy - cy[page_cells], cell_tier[page_cells],
                             owner[page_cells], azimuth[page_cells], view)
    offset_layer = _offset_layer(cx[page_cells] - ox, oy - cy[page_cells], cell_tier[page_cells],
                                 azimuth[page_cells], views, sel) if labelled else ""
    user_layer = _user_layer(sux, suy, view, k0)
    assoc_layer = _assoc_layer(sux, suy, view)
    used: set[str] = set()
    area_ids = [_slug(name, used, "area") for name in areas]
    area_layer = "".join(
        _area_svg(name, geom, area_id, _AREA_STYLES[k % len(_AREA_STYLES)], ox, oy, span)
        for k, (area_id, (name, geom)) in enumerate(zip(area_ids, areas.items(), strict=True)))
    coverage_ids = [_slug(layer.name, used, "cov") for layer in coverage]
    rendered = [_coverage_svg(layer, cid, ox, oy) for layer, cid in zip(coverage, coverage_ids, strict=True)]

    row_classes = ["show-users", "show-guard"] + (["show-assoc"] if lines_on else []) \
        + (["by-offset"] if offset_first else [])
    svg = (f'<svg id="map" viewBox="{view_box}" preserveAspectRatio="xMidYMid meet" '
           f'style="--k:{k0:.4g}" role="img" aria-label="Map of cells, users and association">'
           f'<rect class="bg" x="{_c(vb_x - 50 * span)}" y="{_c(vb_y - 50 * span)}" '
           f'width="{_c(101 * span)}" height="{_c(101 * span)}"/>'
           + (f'<g id="layer-coverage">{"".join(r[0] for r in rendered)}</g>' if coverage else "")
           + (f'<g id="layer-areas">{area_layer}</g>' if areas else "")
           + f'<g id="layer-assoc">{assoc_layer}</g><g id="layer-users">{user_layer}</g>'
           f'<g id="layer-cells">{cell_layer}</g>'
           + (f'<g id="layer-offsets">{offset_layer}</g>' if labelled else "") + "</svg>")
    legend = _legend(cells, views, sel, lines_on, nearest_image="serving_x_m" in users.columns,
                     colour="by-offset" if offset_first else "by-tier",
                     areas=list(zip(area_ids, areas, strict=True)),
                     coverage=[(cid, r[1]) for cid, r in zip(coverage_ids, rendered, strict=True)],
                     coverage_names=[layer.name for layer in coverage])
    heading = "Map" if not methods else f'Map<span id="map-method">: {_esc(selected)}</span>'
    data = _method_data(views, sel, labels=labelled) if methods else ""
    return (f'<section id="map-section"><h2>{heading}</h2>'
            f'<div class="map-row {" ".join(row_classes)}" id="map-row">'
            f'<div class="map-box">{svg}</div>{legend}</div>{data}</section>')


def _view(name: str | None, rows: np.ndarray, crows: np.ndarray, tier_class: np.ndarray, flags: np.ndarray,
          user_titles: list[str], ends: np.ndarray, cell_titles: list[str], cell_styles: list[str],
          cell_labels: list[str | None], cell_tier: np.ndarray, owner: np.ndarray) -> _View:
    """The view of one method from its users' rows `rows` (n_users,) and its cells' rows `crows`
    (n_cells,) in page order (−1: none)."""
    present = rows >= 0
    r = np.maximum(rows, 0)
    n = len(rows)
    tier = np.where(present, tier_class[r], "none") if n else np.empty(0, object)
    user_flags = np.where(present, flags[r], _ABSENT) if n else np.empty(0, int)
    titles = [user_titles[i] if p else "" for i, p in zip(r, present, strict=True)]
    line_end = np.where(present[:, None], ends[r], np.nan) if n else np.empty((0, 2))
    has_cell = crows >= 0
    cell_style = [cell_styles[j] if j >= 0 else None for j in crows]
    cell_title = [cell_titles[j] if j >= 0 else None for j in crows]
    cell_label = [cell_labels[j] if j >= 0 else None for j in crows]
    ctier = cell_tier[crows[has_cell]]
    counts = {"cells": int(has_cell.sum()),
              **{f"cells-{t}": int((ctier == t).sum()) for t in ("macro", "pico", "femto")},
              "cells-other": int((~np.isin(ctier, ["macro", "pico", "femto"])).sum()),
              "cells-third": int((owner[crows[has_cell]] == "third_party").sum()),
              "users": int(present.sum()),
              **{f"users-{t}": int((present & (tier == t)).sum())
                 for t in ("macro", "pico", "femto", "none")},
              "lines": int(np.isfinite(line_end[:, 0]).sum()),
              "guard": int((present & (user_flags & _GUARD > 0)).sum()),
              "unusable": int((present & (user_flags & _UNUSABLE > 0)).sum())}
    return _View(name, tier, user_flags, titles, line_end, cell_style, cell_title, cell_label, counts)


def _method_data(views: list[_View], selected: int, *, labels: bool = False) -> str:
    """The methods' states as a JSON block the page's script applies when a method is chosen.

    A tooltip is a list of numbers, those of its lines in the list ``lines`` shared by every
    method (a user's id, serving cell and notes repeat from method to method). With `labels`,
    ``ol`` holds each cell's offset label (null: none)."""
    lines: dict[str, int] = {}

    def refs(text: str | None) -> list[int] | None:
        if text is None:
            return None
        return [lines.setdefault(line, len(lines)) for line in text.split("\n")] if text else []

    def num(v: float) -> float | int | None:
        if not math.isfinite(v):
            return None
        r = round(float(v), 1)
        return int(r) if r.is_integer() else r

    methods = [{"name": v.name,
                "t": "".join(str(_TIER_CODES.index(t)) for t in v.tier),
                "f": "".join(str(int(f)) for f in v.flags),
                "lx": [num(x) for x in v.line_end[:, 0]], "ly": [num(y) for y in v.line_end[:, 1]],
                "ut": [refs(t) for t in v.user_title], "cs": v.cell_style,
                "ct": [refs(t) for t in v.cell_title], "n": v.counts,
                **({"ol": v.cell_label} if labels else {})}
               for v in views]
    text = json.dumps({"tiers": _TIER_CODES, "selected": selected, "lines": list(lines), "methods": methods},
                      ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c")  # no "</script>" inside the block
    return f'<script type="application/json" id="map-data">{text}</script>'


def _marker_path(tier: str, azimuth_deg: float) -> str:
    """Marker outline of one cell in screen pixels around (0, 0) (y down)."""
    if tier == "macro":
        if np.isfinite(azimuth_deg):  # pie slice of the sector, centred on its boresight
            a0, a1 = math.radians(azimuth_deg - 32), math.radians(azimuth_deg + 32)
            r = 12.0
            return (f"M0 0L{r * math.sin(a0):.1f} {-r * math.cos(a0):.1f}"
                    f"A{r:g} {r:g} 0 0 1 {r * math.sin(a1):.1f} {-r * math.cos(a1):.1f}Z")
        return "M0 -8.5L7.5 4.5H-7.5Z"
    if tier == "pico":
        return "M-4.5 -4.5H4.5V4.5H-4.5Z"
    if tier == "femto":
        return "M0 -5.5L5.5 0L0 5.5L-5.5 0Z"
    return "M-4 0A4 4 0 1 0 4 0A4 4 0 1 0 -4 0Z"


def _load_colors(load: np.ndarray) -> list[str]:
    cmap = mpl.colormaps[_LOAD_CMAP]
    lo, hi = _LOAD_RANGE
    out = []
    for v in load:
        if not np.isfinite(v):
            out.append(_NO_LOAD_COLOR)
        else:
            out.append(mpl.colors.to_hex(cmap(lo + (hi - lo) * min(max(v, 0.0), 1.0))))
    return out


def _offset_colors(ramp: np.ndarray) -> list[str]:
    """Colours of the diverging offset map at `ramp` 0..1 (0.5: white, offset 0); NaN: grey."""
    cmap = mpl.colormaps[_OFFSET_CMAP]
    return [mpl.colors.to_hex(cmap(min(max(v, 0.0), 1.0))) if np.isfinite(v) else _NO_LOAD_COLOR
            for v in ramp]


def _signed(value: float, unit: str = "") -> str:
    """`value` with its sign ("+6", "−3", "0"), 4 significant digits, and `unit` if given."""
    text = ("+" if value > 0 else "−" if value < 0 else "") + format_value(abs(float(value)))
    return f"{text} {unit}" if unit else text


def _offset_label(value: float) -> str | None:
    """A cell's offset label on the map ("+6", "−3", to 0.1 dB); None for NaN and 0."""
    if not math.isfinite(value) or round(value, 1) == 0:
        return None
    return _signed(round(value, 1))


def _has_offsets(offsets: np.ndarray) -> bool:
    """Whether some finite offset is non-zero (then the offsets vary or are all one non-zero value)."""
    finite = offsets[np.isfinite(offsets)]
    return bool(finite.size) and bool((np.abs(finite) > 1e-9).any())


def _power_shares(cells: gpd.GeoDataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's mean power as a share of its full power, and its share of the band off
    (NaN where the columns are absent)."""
    mean_dbm, full_dbm = _floats(cells, "mean_power_dbm"), _floats(cells, "tx_power_dbm")
    with np.errstate(invalid="ignore"):
        share = 10.0 ** ((mean_dbm - full_dbm) / 10.0)
    return share, _floats(cells, "share_off")


@dataclasses.dataclass(frozen=True)
class _Colouring:
    """One way the map can colour the cells (a choice of "Colour cells by")."""

    choice: str  # the radio button's label
    title: str  # the colour bar's title
    ticks: tuple[str, str, str]  # under the bar: low, middle, high
    ramp: np.ndarray  # (n_cells,) each cell's place on the bar, 0..1; NaN: no value (grey)
    diverging: bool = False  # colours of _OFFSET_CMAP (white in the middle) rather than _LOAD_CMAP
    no_value: str = "no value"  # the legend's words for the grey of NaN

    def colors(self, ramp: np.ndarray | None = None) -> list[str]:
        """The colours of `ramp` (default: the cells' own), grey for NaN."""
        ramp = self.ramp if ramp is None else ramp
        return _offset_colors(ramp) if self.diverging else _load_colors(ramp)


def _colourings(cells: pd.DataFrame) -> dict[str, _Colouring]:
    """The colourings the cells' columns allow, by key (``by-load``, ...; also the CSS class
    of the map row and the name of the cells' colour variable ``--by-load``).

    Load and overload where the table has them (``cellopt run`` leaves them out under full
    buffer, where they are 1 and null by construction); users served, best-RSRP share,
    mean SINR and airtime price where they vary, on a bar from their smallest (0 for
    counts, shares and prices) to their largest value; mean power and share off where some
    cell is below full power; the offset of the association rule (``offset_db``) where some
    finite offset is not 0, on a diverging bar symmetric about 0 dB (±the largest |offset|,
    at least ±1 dB; NaN, a method that is no offset rule: grey).
    """
    out: dict[str, _Colouring] = {}
    percent = ("0 %", "50 %", "100 %")
    if "load" in cells.columns:
        out["by-load"] = _Colouring("load", "Cell load (airtime used)", percent, _floats(cells, "load"))
    overload = _floats(cells, "overload")
    if np.isfinite(overload).any():
        out["by-overload"] = _Colouring("overload", "Airtime its users need beyond the whole",
                                        ("0 %", "50 %", "≥ 100 %"), overload)
    for column, key, choice, title, unit, from_zero in (
            ("n_users", "by-users", "users served", "Users served", "", True),
            ("best_rsrp_share", "by-best", "best-RSRP share", "Share of users whose strongest "
             "cell it is", "%", True),
            ("mean_sinr_db", "by-sinr", "mean SINR", "Mean SINR of its users", " dB", False),
            ("airtime_price", "by-price", "airtime price", "Price of its airtime (utility per "
             "unit)", "", True)):
        values = _floats(cells, column)
        finite = values[np.isfinite(values)]
        if not finite.size or finite.max() <= finite.min():
            continue
        lo, hi = (0.0 if from_zero else float(finite.min())), float(finite.max())
        scale = 100.0 if unit == "%" else 1.0
        ticks = tuple(_with_unit(v * scale, unit.strip()) for v in (lo, (lo + hi) / 2, hi))
        out[key] = _Colouring(choice, title, ticks, (values - lo) / (hi - lo))  # type: ignore[arg-type]
    power_share, share_off = _power_shares(cells)  # offered when some cell is below full or off
    if len(cells) and np.nanmax(np.r_[1.0 - power_share, share_off, 0.0]) > 1e-9:
        with np.errstate(divide="ignore", invalid="ignore"):  # off: −inf dB, the ramp's low end
            below_db = np.maximum(10.0 * np.log10(power_share), -POWER_RAMP_DB)
        out["by-power"] = _Colouring("mean power", "Mean power below full",
                                     (f"≤ −{POWER_RAMP_DB:g} dB", f"−{POWER_RAMP_DB / 2:g} dB", "full"),
                                     1.0 + below_db / POWER_RAMP_DB)
        out["by-off"] = _Colouring("share off", "Share of the band off", percent, share_off)
    offsets = _floats(cells, "offset_db")
    if _has_offsets(offsets):
        span = max(_OFFSET_MIN_SPAN_DB, float(np.abs(offsets[np.isfinite(offsets)]).max()))
        out["by-offset"] = _Colouring("offset", "Cell offset (RSRP + offset picks the cell)",
                                      (_signed(-span, "dB"), "0 dB", _signed(span, "dB")),
                                      0.5 + 0.5 * offsets / span, diverging=True,
                                      no_value="no offset (not an offset rule)")
    return out


def _colouring_css(keys: Iterable[str]) -> str:
    """The style rules of the colourings `keys`: the cells' fill, and the bar shown (and the
    offset labels, with the offset colouring only)."""
    keys = list(keys)
    return "".join(f".map-row.{k} #map .cell path{{fill:var(--{k})}}"
                   f".map-row.{k} #map .cell.third path{{stroke:var(--c)}}"
                   f".map-row:not(.{k}) #{k}-legend{{display:none}}" for k in keys) \
        + (".map-row:not(.by-offset) #layer-offsets{display:none}" if "by-offset" in keys else "")


def _cell_rows(cells: gpd.GeoDataFrame) -> tuple[list[str], list[str], list[str | None]]:
    """Each cell row's tooltip, its colour variables (``--by-load``, ... of
    :func:`_colourings`) as a style attribute, and its offset label (None: none; every row's
    None unless the offset colouring is offered)."""
    n = len(cells)
    if n == 0:
        return [], [], []
    tier = cells["tier"].astype(str).to_numpy()
    owner = _column(cells, "owner", "operator")
    load = _floats(cells, "load")
    power_share, share_off = _power_shares(cells)
    colourings = _colourings(cells)
    colors = {key: c.colors() for key, c in colourings.items()}
    offsets = _floats(cells, "offset_db")
    labels = [_offset_label(v) for v in offsets] if "by-offset" in colourings else [None] * n
    cols = {name: _column(cells, name, None) for name in
            ("cell_id", "site_id", "tx_power_dbm", "n_users", "traffic_mbps", "backhaul_mbps",
             "backhaul_use", "payment", "mean_power_dbm")}
    titles, styles = [], []
    for i in range(n):
        t = tier[i]
        lines = [f"cell {format_value(cols['cell_id'][i])}"
                 + ("" if "site_id" not in cells.columns else f" (site {format_value(cols['site_id'][i])})"),
                 f"{t}, {format_value(owner[i]) if 'owner' in cells.columns else 'operator'}"]
        if "tx_power_dbm" in cells.columns:
            lines.append(f"tx power: {_with_unit(cols['tx_power_dbm'][i], 'dBm')}")
        if math.isfinite(offsets[i]):
            lines.append(f"offset: {_signed(offsets[i], 'dB')}")
        if "mean_power_dbm" in cells.columns:
            lines.append(f"mean power: {_with_unit(cols['mean_power_dbm'][i], 'dBm')}"
                         + (f" ({_percent(power_share[i])} of full)" if np.isfinite(power_share[i])
                            else ""))
        if "share_off" in cells.columns:
            lines.append(f"off: {_percent(share_off[i])} of the band")
        if "load" in cells.columns:
            lines.append(f"load: {_percent(load[i])}")
        if "n_users" in cells.columns:
            lines.append(f"users: {format_value(cols['n_users'][i])}")
        if "traffic_mbps" in cells.columns:
            lines.append(f"traffic: {_with_unit(cols['traffic_mbps'][i], 'Mbit/s')}")
        if "backhaul_mbps" in cells.columns:
            bh = cols["backhaul_mbps"][i]
            text = "unlimited" if isinstance(bh, float | np.floating) and np.isposinf(bh) \
                else _with_unit(bh, "Mbit/s")
            if "backhaul_use" in cells.columns and format_value(cols["backhaul_use"][i]) != _DASH:
                text += f" ({_percent(cols['backhaul_use'][i])} used)"
            lines.append(f"backhaul: {text}")
        if "payment" in cells.columns:
            lines.append(f"payment: {format_value(cols['payment'][i])}")
        titles.append("\n".join(lines))
        styles.append(";".join(f"--{k}:{v[i]}" for k, v in colors.items()))
    return titles, styles, labels


def _cell_layer(x: np.ndarray, y: np.ndarray, tier: np.ndarray, owner: np.ndarray, azimuth: np.ndarray,
                view: _View) -> str:
    """The cell markers at local (`x`, `y`) [m], in page order, as `view` shows them."""
    parts = []
    for j in range(len(x)):
        t = tier[j]
        tier_class = f"tier-{t}" if t in TIER_COLORS else "tier-other"
        third = " third" if owner[j] == "third_party" else ""
        style, title = view.cell_style[j], view.cell_title[j]
        absent = " absent" if style is None else ""
        parts.append(f'<g class="cell {tier_class}{third}{absent}" '
                     f'transform="translate({_c(x[j])} {_c(y[j])})" style="{style or ""}">'
                     f'<title>{_esc(title or "")}</title>'
                     f'<path d="{_marker_path(t, azimuth[j])}"/></g>')
    return "".join(parts)


def _label_anchor(tier: str, azimuth_deg: float) -> tuple[float, float, str]:
    """Where a cell's offset label sits, in screen pixels from the cell (y down), and its
    ``text-anchor``: beyond a sector's slice (radius 12 px) along its boresight, so that the
    three sectors of a site keep their labels apart, starting there when it points east, ending
    there when it points west, centred above or below it otherwise; else right of the marker."""
    if tier == "macro" and np.isfinite(azimuth_deg):
        a = math.radians(azimuth_deg)
        s, c = math.sin(a), math.cos(a)
        anchor = "start" if s > 0.35 else "end" if s < -0.35 else "middle"
        r = 19.0 if anchor == "middle" else 17.0  # clear of the slice, half a label's height beyond
        return r * s, -r * c, anchor
    half = {"macro": 8.5, "pico": 4.5, "femto": 5.5}.get(tier, 4.0)
    return half + 2.5, 0.0, "start"


def _offset_layer(x: np.ndarray, y: np.ndarray, tier: np.ndarray, azimuth: np.ndarray, views: list[_View],
                  sel: int) -> str:
    """The offset labels of the cells at local (`x`, `y`) [m] in page order: one for each cell
    labelled under some method (``data-cell``: its place in page order), the text of the
    method `sel` (hidden where it has none); shown with the offset colouring only."""
    view = views[sel]
    parts = []
    for j in range(len(x)):
        if all(v.cell_label[j] is None for v in views):
            continue
        dx, dy, anchor = _label_anchor(tier[j], azimuth[j])
        label = view.cell_label[j]
        absent = " absent" if label is None else ""
        parts.append(f'<g class="olabel{absent}" data-cell="{j}" '
                     f'transform="translate({_c(x[j])} {_c(y[j])})"><text x="{dx:.1f}" y="{dy:.1f}" '
                     f'text-anchor="{anchor}">{_esc(label or "")}</text></g>')
    return "".join(parts)


def _user_titles(users: gpd.GeoDataFrame, tier: np.ndarray, in_area: np.ndarray, usable: np.ndarray,
                 serving_id: np.ndarray) -> list[str]:
    """Each user row's tooltip."""
    user_id = users["user_id"].to_numpy()
    n_serving = _column(users, "n_serving_cells", None)
    airtime = _column(users, "airtime_share", None)
    rate = _column(users, "rate_mbps", None)
    sinr = _column(users, "sinr_db", None)
    has = set(users.columns)
    out = []
    for i in range(len(users)):
        lines = [f"user {format_value(user_id[i])}"]
        if format_value(serving_id[i]) == _DASH:
            lines.append("not served")
        else:
            lines.append(f"served by cell {format_value(serving_id[i])} ({tier[i]})"
                         + (f", {format_value(n_serving[i])} cells" if "n_serving_cells" in has else ""))
        if "rate_mbps" in has:
            lines.append(f"rate: {_with_unit(rate[i], 'Mbit/s')}")
        if "sinr_db" in has:
            lines.append(f"SINR: {_with_unit(sinr[i], 'dB')}")
        if "airtime_share" in has:
            lines.append(f"airtime share: {format_value(airtime[i])}")
        if not in_area[i]:
            lines.append("guard band (outside the study area)")
        if not usable[i]:
            lines.append("not usable (no link with a positive rate)")
        out.append("\n".join(lines))
    return out


def _user_class(tier: str, flags: int) -> str:
    """The class of a user dot (the page's script builds the same)."""
    return (f"user t-{tier}" + (" guard" if flags & _GUARD else "")
            + (" unusable" if flags & _UNUSABLE else "") + (" absent" if flags & _ABSENT else ""))


def _user_layer(x: np.ndarray, y: np.ndarray, view: _View, k0: float) -> str:
    """The user dots at local (`x`, `y`) [m], shape (n_users,), as `view` shows them."""
    r0 = f"{_USER_RADIUS_PX * k0:.3g}"
    return "".join(f'<circle class="{_user_class(view.tier[i], view.flags[i])}" cx="{_c(x[i])}" '
                   f'cy="{_c(y[i])}" r="{r0}"><title>{_esc(view.user_title[i])}</title></circle>'
                   for i in range(len(x)))


def _assoc_layer(x: np.ndarray, y: np.ndarray, view: _View) -> str:
    """The association lines from the users at local (`x`, `y`) [m] to their line ends."""
    parts = []
    for i in np.flatnonzero(np.isfinite(view.line_end[:, 0])):
        guard = " guard" if view.flags[i] & _GUARD else ""
        parts.append(f'<path class="assoc t-{view.tier[i]}{guard}" '
                     f'd="M{_c(x[i])} {_c(y[i])}L{_c(view.line_end[i, 0])} {_c(view.line_end[i, 1])}"/>')
    return "".join(parts)


def _geometry_path(geom: shapely.Geometry, ox: float, oy: float) -> str:
    """SVG path data of the lines and polygon rings of `geom`, in local coordinates [m]."""
    parts: list[str] = []

    def ring(coords: np.ndarray, closed: bool) -> None:
        if closed and len(coords) > 1 and (coords[0] == coords[-1]).all():
            coords = coords[:-1]
        if len(coords) < 2:
            return
        pts = [f"{_c(x - ox)} {_c(oy - y)}" for x, y in coords[:, :2]]
        parts.append(f"M{pts[0]}L{' '.join(pts[1:])}{'Z' if closed else ''}")

    def walk(g: shapely.Geometry) -> None:
        if g.is_empty:
            return
        kind = g.geom_type
        if kind == "Polygon":
            ring(np.asarray(g.exterior.coords), True)
            for hole in g.interiors:
                ring(np.asarray(hole.coords), True)
        elif kind in ("LineString", "LinearRing"):
            ring(np.asarray(g.coords), kind == "LinearRing")
        elif hasattr(g, "geoms"):
            for part in g.geoms:
                walk(part)

    walk(geom)
    return "".join(parts)


def _simplified(geom: shapely.Geometry, span: float) -> shapely.Geometry:
    """`geom` simplified to :data:`_AREA_TOLERANCE` of the map's `span` [m] (at least 0.1 m), or
    coarser while it keeps more than :data:`_AREA_MAX_VERTICES` vertices."""
    tolerance = max(0.1, _AREA_TOLERANCE * span)
    while True:
        simple = geom.simplify(tolerance, preserve_topology=True)
        if shapely.get_num_coordinates(simple) <= _AREA_MAX_VERTICES:
            return simple
        tolerance *= 4.0


def _area_svg(name: str, geom: shapely.Geometry, area_id: str, style: tuple[str, str], ox: float,
              oy: float, span: float) -> str:
    """One area's outline: a group the legend's checkbox shows or hides."""
    colour, dash = style
    d = _geometry_path(_simplified(geom, span), ox, oy)
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<g id="{area_id}" class="area"><path d="{d}" stroke="{colour}"{dash_attr}>'
            f"<title>{_esc(name)}</title></path></g>")


def _coverage_range(layer: CoverageLayer, finite: np.ndarray) -> tuple[float, float]:
    """The values at the ends of a continuous layer's colour bar (NaN when no value is finite)."""
    lo = float(layer.vmin) if layer.vmin is not None else \
        float(np.percentile(finite, _COVERAGE_PERCENTILES[0])) if finite.size else np.nan
    hi = float(layer.vmax) if layer.vmax is not None else \
        float(np.percentile(finite, _COVERAGE_PERCENTILES[1])) if finite.size else np.nan
    if math.isfinite(lo) and math.isfinite(hi) and not lo < hi:  # constant: a range of 1 unit around it
        lo, hi = (lo - 0.5, lo + 0.5) if layer.vmax is None else (hi - 1.0, hi)
    return lo, hi


def _coverage_rgba(layer: CoverageLayer) -> tuple[np.ndarray, float, float]:
    """The layer's pixels as RGBA, shape (n_rows, n_cols, 4) uint8 (no data: transparent), and
    the colour bar's range (NaN for a categorical layer)."""
    values = layer.values.astype(float)
    rgba = np.zeros((*values.shape, 4), np.uint8)
    if layer.categorical:
        ok = np.isfinite(values) & (values >= 0)
        palette = np.round(_CATEGORY_COLORS * 255).astype(np.uint8)
        rgba[ok] = palette[values[ok].astype(np.int64) % len(palette)]
        return rgba, np.nan, np.nan
    ok = np.isfinite(values)
    lo, hi = _coverage_range(layer, values[ok])
    if ok.any():
        t = np.clip((values[ok] - lo) / (hi - lo), 0.0, 1.0)
        rgba[ok] = mpl.colormaps[_COVERAGE_CMAP](t, bytes=True)
    return rgba, lo, hi


def _png_uri(rgba: np.ndarray) -> str:
    """An RGBA image, shape (n_rows, n_cols, 4) uint8, as a ``data:image/png;base64,...`` URI."""
    buf = io.BytesIO()
    mpl_image.imsave(buf, rgba, format="png")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _coverage_svg(layer: CoverageLayer, layer_id: str, ox: float, oy: float) -> tuple[str, str]:
    """The layer as an ``<image>`` at its bounds (hidden until chosen), and its legend."""
    rgba, lo, hi = _coverage_rgba(layer)
    xmin, ymin, xmax, ymax = layer.bounds_m
    image = (f'<g id="{layer_id}" class="coverage" style="display:none">'
             f'<image href="{_png_uri(rgba)}" x="{_c(xmin - ox)}" y="{_c(oy - ymax)}" '
             f'width="{_c(xmax - xmin)}" height="{_c(ymax - ymin)}" preserveAspectRatio="none" '
             f'style="image-rendering:pixelated"><title>{_esc(layer.name)}</title></image></g>')
    title = _esc(layer.name) + (f" [{_esc(layer.unit)}]" if layer.unit else "")
    nodata = '<div class="small">Transparent: no data.</div>'
    hidden = ' style="display:none"'
    if layer.categorical:
        values = layer.values[np.isfinite(layer.values) & (layer.values >= 0)].astype(np.int64)
        present = np.unique(values)
        if layer.labels is not None and len(present) <= len(_CATEGORY_COLORS):
            items = "".join(
                f"<li>{_chip(mpl.colors.to_hex(_CATEGORY_COLORS[v % len(_CATEGORY_COLORS)]))}"
                f"{_esc(layer.labels.get(int(v), format_value(int(v))))}</li>" for v in present)
            body = f"<ul>{items}</ul>"
        else:
            body = (f'<div class="small">Colours distinguish cells ({len(present):,} values; a cycle of '
                    f'{len(_CATEGORY_COLORS)} colours, not an order).</div>')
        legend = (f'<div class="cov-legend" id="{layer_id}-legend"{hidden}>'
                  f'<div class="legend-title">{title}</div>{body}{nodata}</div>')
        return image, legend
    colours = [mpl.colors.to_hex(c) for c in mpl.colormaps[_COVERAGE_CMAP](np.linspace(0, 1, 11))]
    ticks = [_with_unit(v, layer.unit) if layer.unit else format_value(v) for v in (lo, (lo + hi) / 2, hi)]
    auto = layer.vmin is None or layer.vmax is None
    note = ('<div class="small">Range: 2nd to 98th percentile; values beyond take the end colours.</div>'
            if auto else '<div class="small">Values beyond the range take the end colours.</div>')
    legend = _ramp_legend(layer_id, title, colours, ticks, note + nodata, attrs=hidden,
                          classes="ramp-legend cov-legend")
    return image, legend


def _swatch(d: str, fill: str, stroke: str, stroke_width: float = 1.0) -> str:
    return (f'<svg class="sw" viewBox="-14 -14 28 28" aria-hidden="true"><path d="{d}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="{stroke_width}"/></svg>')


def _dot(fill: str, stroke: str = "none", opacity: float = 1.0) -> str:
    return (f'<svg class="sw" viewBox="-14 -14 28 28" aria-hidden="true"><circle r="4" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="1.2" opacity="{opacity}"/></svg>')


def _chip(fill: str) -> str:
    return (f'<svg class="sw" viewBox="-14 -14 28 28" aria-hidden="true"><rect x="-7" y="-7" width="14" '
            f'height="14" fill="{fill}"/></svg>')


def _dash_swatch(colour: str, dash: str) -> str:
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<svg class="sw line" viewBox="0 0 30 10" aria-hidden="true"><path d="M1 5H29" fill="none" '
            f'stroke="{colour}" stroke-width="1.8"{dash_attr}/></svg>')


def _ramp_legend(key: str, title: str, colours: Sequence[str], ticks: Sequence[str], notes_html: str,
                 *, attrs: str = "", classes: str = "ramp-legend") -> str:
    """A colour bar: `colours` evenly spread from left to right, `ticks` under it."""
    stops = "".join(f'<stop offset="{v:.2f}" stop-color="{c}"/>'
                    for v, c in zip(np.linspace(0, 1, len(colours)), colours, strict=True))
    return (f'<div class="{classes}" id="{key}-legend"{attrs}><div class="legend-title">{title}</div>'
            '<svg class="ramp" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">'
            f'<defs><linearGradient id="{key}-ramp">{stops}</linearGradient></defs>'
            f'<rect width="100" height="10" fill="url(#{key}-ramp)"/></svg>'
            f'<div class="ramp-labels">{"".join(f"<span>{_esc(t)}</span>" for t in ticks)}</div>'
            f"{notes_html}</div>")


def _legend(cells: gpd.GeoDataFrame, views: list[_View], sel: int, lines_on: bool, *, nearest_image: bool,
            areas: list[tuple[str, str]], coverage: list[tuple[str, str]], coverage_names: list[str],
            colour: str = "by-tier") -> str:
    """The legend and controls beside the map; the counts are the selected method's, each in a
    ``data-count`` span the page's script updates when another method is chosen. `colour`: the
    colouring chosen when the page opens."""
    view = views[sel]

    def has(key: str) -> bool:
        return any(v.counts[key] for v in views)

    def n(key: str) -> str:
        return f'<span class="n" data-count="{key}">{view.counts[key]}</span>'

    cell_items = []
    for t in ("macro", "pico", "femto"):
        if has(f"cells-{t}"):
            sectors = t == "macro" and bool(np.isfinite(_floats(cells, "azimuth_deg")).any())
            d = "".join(_marker_path(t, a) for a in (0, 120, 240)) if sectors else _marker_path(t, np.nan)
            label = f"{t} (sectors)" if sectors else t
            cell_items.append(f"<li>{_swatch(d, TIER_COLORS[t], '#1b1b1b')}{label} {n(f'cells-{t}')}</li>")
    if has("cells-other"):
        cell_items.append(f"<li>{_swatch(_marker_path('other', np.nan), _OTHER_COLOR, '#1b1b1b')}other tier "
                          f"{n('cells-other')}</li>")
    if has("cells-third"):
        t = str(cells["tier"].to_numpy()[_column(cells, "owner", "").astype(str) == "third_party"][0])
        swatch = _swatch(_marker_path(t, np.nan), "#ffffff", TIER_COLORS.get(t, _OTHER_COLOR), 2.2)
        cell_items.append(f"<li>{swatch}third party (hollow) {n('cells-third')}</li>")
    colourings = _colourings(cells)
    label_note = ('<div class="small">Labels: each non-zero offset [dB] of the method shown.</div>'
                  if any(label is not None for v in views for label in v.cell_label) else "")
    ramp_legends = "".join(
        _ramp_legend(key, c.title, c.colors(np.linspace(0, 1, 9 if c.diverging else 6)), c.ticks,
                     f'<div class="small">{_dot(_NO_LOAD_COLOR, "#1b1b1b")}{_esc(c.no_value)}</div>'
                     + (label_note if key == "by-offset" else ""))
        for key, c in colourings.items())
    colour_choice = "".join(
        f'<label><input type="radio" name="colour" data-toggle="{key}"{" checked" if key == colour else ""}> '
        f'{c.choice}</label>' for key, c in colourings.items())
    colour_css = f"<style>{_colouring_css(colourings)}</style>" if colourings else ""
    user_items = []
    for t in ("macro", "pico", "femto", "none"):
        if has(f"users-{t}"):
            label = "not served" if t == "none" else f"served by {t}"
            user_items.append(f"<li>{_dot(TIER_COLORS[t])}{label} {n(f'users-{t}')}</li>")
    if has("lines"):
        line = _swatch("M-11 8L11 -8", "none", TIER_COLORS["macro"], 1.2)
        user_items.append(f"<li>{line}line to the serving cell {n('lines')}</li>")
    if has("guard"):
        user_items.append(f"<li>{_dot('#555555', opacity=0.3)}guard band (faded) {n('guard')}</li>")
    if has("unusable"):
        user_items.append(f"<li>{_dot('#ffffff', '#9a9a9a')}not usable (hollow) {n('unusable')}</li>")
    line_note = "" if lines_on else (f'<div class="small">Off by default above '
                                     f'{ASSOCIATION_LINES_MAX_USERS:,} users.</div>')
    if nearest_image:
        line_note += '<div class="small">Lines end at the serving cell\'s nearest wraparound copy.</div>'
    guard_box = ('<label><input type="checkbox" data-toggle="show-guard" checked> Guard-band users</label>'
                 if has("guard") else "")
    method_choice = ""
    if views[0].name is not None:
        method_choice = ('<fieldset id="method-choice"><legend>Method</legend>' + "".join(
            f'<label><input type="radio" name="method" value="{k}"{" checked" if k == sel else ""}> '
            f"{_esc(v.name)}</label>" for k, v in enumerate(views)) + "</fieldset>")
    area_boxes = ""
    if areas:
        area_boxes = ('<fieldset id="area-choice"><legend>Outlines</legend>' + "".join(
            f'<label><input type="checkbox" data-show="{area_id}" checked> '
            f"{_dash_swatch(*_AREA_STYLES[k % len(_AREA_STYLES)])}{_esc(name)}</label>"
            for k, (area_id, name) in enumerate(areas)) + "</fieldset>")
    coverage_choice = ""
    if coverage:
        coverage_choice = (
            '<fieldset id="coverage-choice"><legend>Coverage</legend>'
            '<label><input type="radio" name="coverage" data-show="" checked> none</label>'
            + "".join(f'<label><input type="radio" name="coverage" data-show="{cid} {cid}-legend"> '
                      f"{_esc(name)}</label>"
                      for (cid, _), name in zip(coverage, coverage_names, strict=True))
            + "</fieldset>" + "".join(legend for _, legend in coverage))
    return (
        '<aside class="legend" id="legend" aria-label="Map legend and controls">'
        '<div class="tools"><button type="button" id="zoom-in" title="Zoom in">+</button>'
        '<button type="button" id="zoom-out" title="Zoom out">−</button>'
        '<button type="button" id="zoom-reset" title="Back to the first view">Reset</button></div>'
        '<div class="scale" title="Scale"><span id="scale-bar"></span><span id="scale-label"></span></div>'
        f"{method_choice}"
        '<fieldset><legend>Layers</legend>'
        f'<label><input type="checkbox" data-toggle="show-assoc"{" checked" if lines_on else ""}> '
        f'Association lines</label>{line_note}'
        '<label><input type="checkbox" data-toggle="show-users" checked> Users</label>'
        f'{guard_box}'
        '</fieldset><fieldset><legend>Colour cells by</legend>'
        f'<label><input type="radio" name="colour" data-toggle="by-tier"'
        f'{" checked" if colour not in colourings else ""}> tier</label>'
        f'{colour_choice}</fieldset>{area_boxes}{coverage_choice}'
        f'<div class="legend-title">Cells {n("cells")}</div>'
        f'<ul>{"".join(cell_items)}</ul>{colour_css}{ramp_legends}'
        f'<div class="legend-title">Users, by serving tier {n("users")}</div>'
        f'<ul>{"".join(user_items)}</ul>'
        '<p class="small hint">Drag to pan; wheel or +/− to zoom; hover a marker for details.</p>'
        '</aside>')


# ---------------------------------------------------------------------- page template
_TIER_CSS = "".join(f".t-{t},.tier-{t}{{--c:{c}}}" for t, c in TIER_COLORS.items()) + \
    f".t-other,.tier-other{{--c:{_OTHER_COLOR}}}"


@functools.cache
def _asset(name: str) -> str:
    """The text of ``assets/<name>`` (package data: the page skeleton, its style sheet, its script)."""
    return (importlib.resources.files("cellopt.study") / "assets" / name).read_text(encoding="utf-8")


def _page(title: str, body: str) -> str:
    """The whole HTML page: the skeleton of ``assets/report_template.html`` filled in."""
    return string.Template(_asset("report_template.html")).substitute(
        title=_esc(title), css=_asset("report.css") + _TIER_CSS, body=body, script=_asset("report.js"))
