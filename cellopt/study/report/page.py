"""The whole page: :func:`write_report`, :func:`render_report` and :func:`is_report`.

The page's header, map, tables, per-cell tables, figures and footer, in the skeleton of
``assets/report_template.html`` with its style sheet and script (package data beside this
module).
"""

from __future__ import annotations

import functools
import importlib.resources
import mmap
import os
import string
from collections.abc import Mapping, Sequence
from pathlib import Path

import geopandas as gpd
import pandas as pd
import shapely
from matplotlib.figure import Figure

from cellopt._version import __version__
from cellopt.errors import ValidationError
from cellopt.study.atomic import atomic_write
from cellopt.study.report.checks import as_geometry, check_extras, check_frames, frame_methods, method_names
from cellopt.study.report.common import OTHER_COLOR, TIER_COLORS, esc
from cellopt.study.report.coverage import CoverageLayer
from cellopt.study.report.figures import figures_section
from cellopt.study.report.map_section import map_section
from cellopt.study.report.tables import cell_tables, tables_section


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
        cell below full power or off, the mean power below full (from
        :data:`~cellopt.study.report.POWER_RAMP_DB` below, or off, to full) and the share
        off, and, where some finite ``offset_db`` is not 0, the offset: a diverging bar over
        ±the largest |offset| (at least ±1 dB), NaN grey, each non-zero offset of the method
        shown labelled beside its cell, its tooltip saying ``offset: +6 dB``; the offset
        colouring is the one chosen when the page opens if the shown method's cells have
        finite offsets (else the tier). Every column but the geometry and ``method`` is
        listed in the per-cell table.
    tables : mapping of str to pandas.DataFrame
        Summary tables, in order; the key is the caption. Floats are shown to 4
        significant digits (see :func:`~cellopt.study.report.format_value`), the index is
        shown. A column of numbers (and missing values) only is right-aligned; any other
        column is text.
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
    problems = check_frames(users, cells)
    if not problems:
        problems = check_extras(users, cells, selected_method, areas, coverage)
    if problems:
        raise ValidationError(problems)
    notes = [notes] if isinstance(notes, str) else list(notes)
    methods = frame_methods(users, cells)
    selected = None
    if methods:
        default = method_names(users)[-1] if len(users) else methods[-1]
        selected = str(selected_method) if selected_method is not None else default
    areas_geom = {str(k): as_geometry(v) for k, v in (areas or {}).items()}
    coverage = list(coverage or ())
    cell_section = cell_tables(cells, methods, selected) if cell_table else ""
    body = [
        _header(title, notes, has_tables=bool(tables), has_figures=bool(figures),
                has_cells=bool(cell_section)),
        map_section(users, cells, methods=methods, selected=selected, areas=areas_geom,
                    coverage=coverage),
        tables_section(tables),
        cell_section,
        figures_section(figures),
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


def _header(title: str, notes: list[str], *, has_tables: bool, has_figures: bool,
            has_cells: bool = False) -> str:
    items = "".join(f"<li>{esc(n)}</li>" for n in notes)
    links = ['<a href="#map-section">Map</a>']
    if has_tables:
        links.append('<a href="#tables">Tables</a>')
    if has_cells:
        links.append('<a href="#cells">Cells</a>')
    if has_figures:
        links.append('<a href="#figures">Figures</a>')
    notes_html = f'<ul class="notes" id="notes">{items}</ul>' if notes else ""
    return (f'<header><h1 id="title">{esc(title)}</h1>{notes_html}'
            f'<nav>{" · ".join(links)}</nav></header>')


#: The start of every report's footer, by which :func:`is_report` knows a page of cellopt's.
_FOOTER_MARK = b"<footer>Written by cellopt "


def _footer() -> str:
    version = __version__
    return (f'{_FOOTER_MARK.decode()}{esc(version)}. Self-contained page: it fetches nothing '
            f'from the network.</footer>')


_TIER_CSS = "".join(f".t-{t},.tier-{t}{{--c:{c}}}" for t, c in TIER_COLORS.items()) + \
    f".t-other,.tier-other{{--c:{OTHER_COLOR}}}"


@functools.cache
def _asset(name: str) -> str:
    """The text of ``assets/<name>`` (package data: the page skeleton, its style sheet, its script)."""
    return (importlib.resources.files("cellopt.study.report") / "assets" / name).read_text(encoding="utf-8")


def _page(title: str, body: str) -> str:
    """The whole HTML page: the skeleton of ``assets/report_template.html`` filled in."""
    return string.Template(_asset("report_template.html")).substitute(
        title=esc(title), css=_asset("report.css") + _TIER_CSS, body=body, script=_asset("report.js"))
