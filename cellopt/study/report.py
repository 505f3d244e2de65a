"""A self-contained HTML report of one solved drop: notes, summary tables, an interactive map, figures.

:func:`write_report` writes one HTML5 file that works fully offline: every style, script
and figure is inline, text uses the reader's system fonts, and a Content-Security-Policy
forbids any network fetch. The page holds

* the title and the notes (scenario, seed, counts...) as a list;
* the summary tables, one HTML table each (numbers to 4 significant digits, index shown);
* an interactive map drawn as inline SVG: cells by tier (macro: triangle, or a pie slice
  around the boresight when the cells frame has a finite ``azimuth_deg``, so a
  three-sector site reads as three slices; pico: square; femto: diamond), filled for
  operator cells and hollow for third-party cells,
  optionally coloured by load; users as dots coloured by the tier of their serving cell
  (grey when not served, hollow when unusable), guard-band users faded; association lines
  user → serving cell as a layer that can be switched off (off by default above
  :data:`ASSOCIATION_LINES_MAX_USERS` users). Hovering a marker shows its key values;
  drag pans, the wheel and the +/− buttons zoom, "Reset" restores the first view. The
  legend and the controls sit beside the map, never over it. The SVG is built here; the
  small inline script only changes the view box and toggles layers, so the page stays
  responsive with about 10,000 users and 300 cells (about 2.7 MB of HTML). Markers keep
  their size on screen when zooming;
* the figures, embedded as inline SVG (text drawn as paths, so no font is needed).

The page's skeleton, style sheet and script are package data, in ``assets/`` beside this
module (``report_template.html``, ``report.css``, ``report.js``); the page holds their text.

There is no basemap: map tiles would have to be fetched from a server, which the page
never does.
"""

from __future__ import annotations

import functools
import html
import importlib.resources
import io
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
from matplotlib.figure import Figure

from cellopt import __version__, network
from cellopt.errors import ValidationError
from cellopt.study.atomic import atomic_write

__all__ = ["ASSOCIATION_LINES_MAX_USERS", "POWER_RAMP_DB", "TIER_COLORS", "format_value", "is_report",
           "render_report", "write_report"]

#: Above this many users the association-line layer starts switched off (it can be switched on).
ASSOCIATION_LINES_MAX_USERS = 5000

#: Fill colour of each tier, as in the plots; users take the colour of their serving tier,
#: unserved users the "none" grey.
TIER_COLORS: dict[str, str] = {**network.TIER_COLORS, "none": network.UNSERVED_COLOR}
_OTHER_COLOR = "#6f4e7c"  # cells of an unknown tier
_NO_LOAD_COLOR = "#c8c8c8"  # cells without a finite load
_LOAD_CMAP = "YlOrRd"
_LOAD_RANGE = (0.12, 1.0)  # part of the colour map used for load 0..1 (skips the near-white end)
#: Range of the "mean power" colouring [dB below full power]: the ramp runs from this far
#: below (and off) to full power.
POWER_RAMP_DB = 30.0

#: Marker radius of a user dot and of the cell markers, in screen pixels.
_USER_RADIUS_PX = 2.2
_MAP_WIDTH_PX = 1000  # assumed map width, only for the marker size a page without script shows

_DASH = "–"


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
    users : geopandas.GeoDataFrame, shape (n_users, ...)
        One row per user, Point geometry in a projected CRS in metres (the CRS of `cells`).
        Required columns: ``user_id`` and ``serving_cell_id`` (a value of ``cells.cell_id``;
        None/NaN when the user is not served). Optional columns, shown when present:
        ``in_study_area`` (bool; False: guard-band user, drawn faded), ``usable`` (bool;
        False: drawn hollow), ``serving_tier`` (str, "macro"|"pico"|"femto"|"none"; default:
        the tier of the serving cell), ``n_serving_cells`` (int), ``airtime_share`` (float,
        0..1), ``rate_mbps`` [Mbit/s], ``sinr_db`` [dB] (NaN if not served).
    cells : geopandas.GeoDataFrame, shape (n_cells, ...)
        One row per cell, Point geometry, same CRS. Required columns: ``cell_id``
        (unique) and ``tier`` ("macro"|"pico"|"femto"). Optional columns, shown when
        present: ``site_id``, ``owner`` ("operator"|"third_party"; third-party cells are
        drawn hollow), ``azimuth_deg`` (degrees clockwise from north, NaN = omni),
        ``tx_power_dbm`` [dBm], ``load`` (airtime used, 0..1; colours the cells when "Colour
        cells by: load" is chosen), ``n_users`` (int), ``traffic_mbps`` [Mbit/s],
        ``backhaul_mbps`` [Mbit/s] (inf = unlimited), ``backhaul_use`` (0..1 or NaN),
        ``payment``, ``mean_power_dbm`` [dBm] and ``share_off`` (0..1; with
        ``tx_power_dbm``, and when some cell is below full power or off, the map can colour
        the cells by their mean power below full power, from :data:`POWER_RAMP_DB` below
        (or off) to full, or by their share off).
    tables : mapping of str to pandas.DataFrame
        Summary tables, in order; the key is the caption. Floats are shown to 4
        significant digits (see :func:`format_value`), the index is shown.
    figures : mapping of str to matplotlib.figure.Figure
        Figures, in order; the key is the caption. Embedded as SVG; the figures are not
        closed (the caller owns them).
    notes : sequence of str, optional
        Short lines shown under the title (scenario, seed, counts...).

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ValidationError
        If a frame lacks a required column, has a geometry other than points, duplicate
        cell ids, a geographic CRS (degrees), or a CRS different from the other frame's.
    """
    path = Path(path)
    page = render_report(title=title, users=users, cells=cells, tables=tables, figures=figures,
                         notes=notes)
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
) -> str:
    """The page :func:`write_report` writes, as text (for a caller that writes it itself).

    Parameters
    ----------
    title, users, cells, tables, figures, notes
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
    if problems:
        raise ValidationError(problems)
    notes = [notes] if isinstance(notes, str) else list(notes)
    body = [
        _header(title, notes, has_tables=bool(tables), has_figures=bool(figures)),
        _map_section(users, cells),
        _tables_section(tables),
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
    if "cell_id" in cells.columns and cells["cell_id"].duplicated().any():
        dup = cells.loc[cells["cell_id"].duplicated(), "cell_id"].unique()[:10].tolist()
        problems.append(f"cells table: duplicate cell_id {dup}; fix: give each cell a unique id")
    if len(users) and len(cells) and users.crs is not None and cells.crs is not None \
            and users.crs != cells.crs:
        problems.append(f"users CRS {users.crs.name!r} differs from cells CRS {cells.crs.name!r}; fix: "
                        f"users.to_crs(cells.crs)")
    return problems


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
def _header(title: str, notes: list[str], *, has_tables: bool, has_figures: bool) -> str:
    items = "".join(f"<li>{_esc(n)}</li>" for n in notes)
    links = ['<a href="#map-section">Map</a>']
    if has_tables:
        links.append('<a href="#tables">Tables</a>')
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


def _label(value: Any) -> str:
    if isinstance(value, tuple):
        return " / ".join(format_value(v) for v in value if not (isinstance(v, str) and v == ""))
    return format_value(value)


_NUM = ' class="num"'


def _is_number(value: Any) -> bool:
    numeric = isinstance(value, int | float | np.integer | np.floating)
    return numeric and not isinstance(value, bool | np.bool_)


def _table_html(name: str, frame: pd.DataFrame, table_id: str) -> str:
    if not isinstance(frame, pd.DataFrame):
        frame = pd.DataFrame(frame)
    index = frame.index
    n_index = index.nlevels
    index_names = [format_value(n) if n is not None else "" for n in index.names]
    numeric = [all(_is_number(v) or format_value(v) == _DASH for v in frame.iloc[:, j])
               for j in range(frame.shape[1])]
    head = "".join(f'<th scope="col">{_esc(n)}</th>' for n in index_names)
    head += "".join(f'<th scope="col"{_NUM if num else ""}>{_esc(_label(c))}</th>'
                    for c, num in zip(frame.columns, numeric, strict=True))
    rows = []
    for key, values in zip(index, frame.itertuples(index=False, name=None), strict=True):
        keys = key if n_index > 1 else (key,)
        cells = "".join(f'<th scope="row">{_esc(format_value(k))}</th>' for k in keys)
        cells += "".join(f'<td class="num">{_esc(format_value(v))}</td>' if _is_number(v)
                         else f"<td>{_esc(format_value(v))}</td>" for v in values)
        rows.append(f"<tr>{cells}</tr>")
    return (f'<div class="table-wrap"><table class="summary-table" id="{table_id}">'
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
def _map_section(users: gpd.GeoDataFrame, cells: gpd.GeoDataFrame) -> str:
    n_users, n_cells = len(users), len(cells)
    ux = users.geometry.x.to_numpy(float) if n_users else np.empty(0)
    uy = users.geometry.y.to_numpy(float) if n_users else np.empty(0)
    cx = cells.geometry.x.to_numpy(float) if n_cells else np.empty(0)
    cy = cells.geometry.y.to_numpy(float) if n_cells else np.empty(0)

    # local coordinates: x east, y down (SVG), origin near the top-left point, in metres
    all_x, all_y = np.concatenate([ux, cx]), np.concatenate([uy, cy])
    if len(all_x):
        x0, x1, y0, y1 = all_x.min(), all_x.max(), all_y.min(), all_y.max()
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

    cell_index = pd.Index(cells["cell_id"]) if n_cells else pd.Index([])
    serving = users["serving_cell_id"]
    served_row = np.full(n_users, -1)
    has_id = serving.notna().to_numpy()
    if has_id.any() and n_cells:
        served_row[has_id] = cell_index.get_indexer(pd.Index(serving[has_id]))
    unknown = has_id & (served_row < 0)
    if unknown.any():
        warnings.warn(f"{int(unknown.sum())} users have a serving_cell_id not in cells.cell_id "
                      f"(e.g. {serving[unknown].iloc[0]!r}); their association lines are left out",
                      stacklevel=3)

    cell_tier = cells["tier"].astype(str).to_numpy() if n_cells else np.empty(0, object)
    if "serving_tier" in users.columns:
        user_tier = users["serving_tier"].where(users["serving_tier"].notna(), "none").astype(str).to_numpy()
    else:
        user_tier = np.where(served_row >= 0, cell_tier[np.maximum(served_row, 0)] if n_cells else "none",
                             "none").astype(str)
    in_area = _bools(users, "in_study_area")
    usable = _bools(users, "usable")

    lines_on = n_users <= ASSOCIATION_LINES_MAX_USERS
    layers = _cell_layer(cells, cx - ox, oy - cy)
    user_layer = _user_layer(users, ux - ox, oy - uy, user_tier, in_area, usable, served_row,
                             cells["cell_id"].to_numpy() if n_cells else np.empty(0), k0)
    assoc_layer = _assoc_layer(ux - ox, oy - uy, cx - ox, oy - cy, served_row, user_tier, in_area)

    row_classes = ["show-users", "show-guard"] + (["show-assoc"] if lines_on else [])
    svg = (f'<svg id="map" viewBox="{view_box}" preserveAspectRatio="xMidYMid meet" '
           f'style="--k:{k0:.4g}" role="img" aria-label="Map of cells, users and association">'
           f'<rect class="bg" x="{_c(vb_x - 50 * span)}" y="{_c(vb_y - 50 * span)}" '
           f'width="{_c(101 * span)}" height="{_c(101 * span)}"/>'
           f'<g id="layer-assoc">{assoc_layer}</g><g id="layer-users">{user_layer}</g>'
           f'<g id="layer-cells">{layers}</g></svg>')
    legend = _legend(cells, user_tier, in_area, usable, int((served_row >= 0).sum()), lines_on)
    return (f'<section id="map-section"><h2>Map</h2>'
            f'<div class="map-row {" ".join(row_classes)}" id="map-row">'
            f'<div class="map-box">{svg}</div>{legend}</div></section>')


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


def _power_shares(cells: gpd.GeoDataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's mean power as a share of its full power, and its share of the band off
    (NaN where the columns are absent)."""
    mean_dbm, full_dbm = _floats(cells, "mean_power_dbm"), _floats(cells, "tx_power_dbm")
    with np.errstate(invalid="ignore"):
        share = 10.0 ** ((mean_dbm - full_dbm) / 10.0)
    return share, _floats(cells, "share_off")


def _varies_power(cells: gpd.GeoDataFrame) -> bool:
    """Whether some cell is below full power or off: the power colourings are worth offering."""
    share, off = _power_shares(cells)
    return bool(np.nanmax(np.r_[1.0 - share, off, 0.0]) > 1e-9) if len(cells) else False


def _cell_layer(cells: gpd.GeoDataFrame, x: np.ndarray, y: np.ndarray) -> str:
    n = len(cells)
    if n == 0:
        return ""
    tier = cells["tier"].astype(str).to_numpy()
    owner = _column(cells, "owner", "operator")
    azimuth = _floats(cells, "azimuth_deg")
    load = _floats(cells, "load")
    power_share, share_off = _power_shares(cells)
    with np.errstate(divide="ignore", invalid="ignore"):  # off: −inf dB, the ramp's low end
        below_db = np.maximum(10.0 * np.log10(power_share), -POWER_RAMP_DB)
    colors = {"lc": _load_colors(load), "pc": _load_colors(1.0 + below_db / POWER_RAMP_DB),
              "oc": _load_colors(share_off)}
    cols = {name: _column(cells, name, None) for name in
            ("cell_id", "site_id", "tx_power_dbm", "n_users", "traffic_mbps", "backhaul_mbps",
             "backhaul_use", "payment", "mean_power_dbm")}
    order = sorted(range(n), key=lambda i: ({"macro": 0, "pico": 1, "femto": 2}.get(tier[i], 3), i))
    parts = []
    for i in order:
        t = tier[i]
        tier_class = f"tier-{t}" if t in TIER_COLORS else "tier-other"
        third = " third" if str(owner[i]) == "third_party" else ""
        lines = [f"cell {format_value(cols['cell_id'][i])}"
                 + ("" if "site_id" not in cells.columns else f" (site {format_value(cols['site_id'][i])})"),
                 f"{t}, {format_value(owner[i]) if 'owner' in cells.columns else 'operator'}"]
        if "tx_power_dbm" in cells.columns:
            lines.append(f"tx power: {_with_unit(cols['tx_power_dbm'][i], 'dBm')}")
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
        parts.append(f'<g class="cell {tier_class}{third}" transform="translate({_c(x[i])} {_c(y[i])})" '
                     f'style="{";".join(f"--{k}:{v[i]}" for k, v in colors.items())}">'
                     f'<title>{_esc(chr(10).join(lines))}</title>'
                     f'<path d="{_marker_path(t, azimuth[i])}"/></g>')
    return "".join(parts)


def _user_layer(users: gpd.GeoDataFrame, x: np.ndarray, y: np.ndarray, tier: np.ndarray,
                in_area: np.ndarray, usable: np.ndarray, served_row: np.ndarray, cell_ids: np.ndarray,
                k0: float) -> str:
    n = len(users)
    if n == 0:
        return ""
    user_id = users["user_id"].to_numpy()
    serving_id = users["serving_cell_id"].to_numpy()
    n_serving = _column(users, "n_serving_cells", None)
    airtime = _column(users, "airtime_share", None)
    rate = _column(users, "rate_mbps", None)
    sinr = _column(users, "sinr_db", None)
    has = set(users.columns)
    r0 = f"{_USER_RADIUS_PX * k0:.3g}"
    parts = []
    for i in range(n):
        t = tier[i]
        classes = f"user t-{t if t in TIER_COLORS else 'other'}"
        if not in_area[i]:
            classes += " guard"
        if not usable[i]:
            classes += " unusable"
        sid = cell_ids[served_row[i]] if served_row[i] >= 0 else serving_id[i]
        lines = [f"user {format_value(user_id[i])}"]
        if format_value(sid) == _DASH:
            lines.append("not served")
        else:
            lines.append(f"served by cell {format_value(sid)} ({t})"
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
        parts.append(f'<circle class="{classes}" cx="{_c(x[i])}" cy="{_c(y[i])}" r="{r0}">'
                     f"<title>{_esc(chr(10).join(lines))}</title></circle>")
    return "".join(parts)


def _assoc_layer(ux: np.ndarray, uy: np.ndarray, cx: np.ndarray, cy: np.ndarray, served_row: np.ndarray,
                 tier: np.ndarray, in_area: np.ndarray) -> str:
    parts = []
    for i in np.flatnonzero(served_row >= 0):
        j = served_row[i]
        t = tier[i] if tier[i] in TIER_COLORS else "other"
        guard = "" if in_area[i] else " guard"
        parts.append(f'<path class="assoc t-{t}{guard}" '
                     f'd="M{_c(ux[i])} {_c(uy[i])}L{_c(cx[j])} {_c(cy[j])}"/>')
    return "".join(parts)


def _swatch(d: str, fill: str, stroke: str, stroke_width: float = 1.0) -> str:
    return (f'<svg class="sw" viewBox="-14 -14 28 28" aria-hidden="true"><path d="{d}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="{stroke_width}"/></svg>')


def _dot(fill: str, stroke: str = "none", opacity: float = 1.0) -> str:
    return (f'<svg class="sw" viewBox="-14 -14 28 28" aria-hidden="true"><circle r="4" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="1.2" opacity="{opacity}"/></svg>')


def _counts(values: Iterable[Any]) -> dict[str, int]:
    return pd.Series(list(values), dtype=object).astype(str).value_counts().to_dict()


def _legend(cells: gpd.GeoDataFrame, user_tier: np.ndarray, in_area: np.ndarray, usable: np.ndarray,
            n_served: int, lines_on: bool) -> str:
    n_users = len(user_tier)
    tiers = _counts(cells["tier"]) if len(cells) else {}
    third = int((_column(cells, "owner", "operator").astype(str) == "third_party").sum()) if len(cells) else 0
    cell_items = []
    for t in ("macro", "pico", "femto"):
        if tiers.get(t):
            sectors = t == "macro" and bool(np.isfinite(_floats(cells, "azimuth_deg")).any())
            d = "".join(_marker_path(t, a) for a in (0, 120, 240)) if sectors else _marker_path(t, np.nan)
            label = f"{t} (sectors)" if sectors else t
            cell_items.append(f"<li>{_swatch(d, TIER_COLORS[t], '#1b1b1b')}{label} "
                              f'<span class="n">{tiers[t]}</span></li>')
    other = sum(v for k, v in tiers.items() if k not in TIER_COLORS)
    if other:
        cell_items.append(f"<li>{_swatch(_marker_path('other', np.nan), _OTHER_COLOR, '#1b1b1b')}other tier "
                          f'<span class="n">{other}</span></li>')
    if third:
        t = str(cells["tier"].to_numpy()[_column(cells, "owner", "").astype(str) == "third_party"][0])
        swatch = _swatch(_marker_path(t, np.nan), "#ffffff", TIER_COLORS.get(t, _OTHER_COLOR), 2.2)
        cell_items.append(f'<li>{swatch}third party (hollow) <span class="n">{third}</span></li>')
    stops = "".join(
        f'<stop offset="{v:.2f}" stop-color="{c}"/>'
        for v, c in zip(np.linspace(0, 1, 6), _load_colors(np.linspace(0, 1, 6)), strict=True))
    percent = ("0 %", "50 %", "100 %")
    colourings = {"by-load": ("load", "Cell load (airtime used)", percent, "no load data")}
    if _varies_power(cells):
        colourings["by-power"] = ("mean power", "Mean power below full",
                                  (f"≤ −{POWER_RAMP_DB:g} dB", f"−{POWER_RAMP_DB / 2:g} dB", "full"),
                                  "no power data")
        colourings["by-off"] = ("share off", "Share of the band off", percent, "no power data")
    ramp_legends = "".join(
        f'<div class="ramp-legend" id="{key}-legend"><div class="legend-title">{title}</div>'
        '<svg class="ramp" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">'
        f'<defs><linearGradient id="{key}-ramp">{stops}</linearGradient></defs>'
        f'<rect width="100" height="10" fill="url(#{key}-ramp)"/></svg>'
        f'<div class="ramp-labels">{"".join(f"<span>{t}</span>" for t in ticks)}</div>'
        f'<div class="small">{_dot(_NO_LOAD_COLOR, "#1b1b1b")}{missing}</div></div>'
        for key, (_, title, ticks, missing) in colourings.items())
    colour_choice = "".join(
        f'<label><input type="radio" name="colour" data-toggle="{key}"> {name}</label>'
        for key, (name, _, _, _) in colourings.items())
    tier_users = _counts(user_tier)
    user_items = []
    for t in ("macro", "pico", "femto", "none"):
        if tier_users.get(t):
            label = "not served" if t == "none" else f"served by {t}"
            user_items.append(f"<li>{_dot(TIER_COLORS[t])}{label} "
                              f'<span class="n">{tier_users[t]}</span></li>')
    if n_served:
        line = _swatch("M-11 8L11 -8", "none", TIER_COLORS["macro"], 1.2)
        user_items.append(f'<li>{line}line to the serving cell <span class="n">{n_served}</span></li>')
    n_guard, n_unusable = int((~in_area).sum()), int((~usable).sum())
    if n_guard:
        user_items.append(f"<li>{_dot('#555555', opacity=0.3)}guard band (faded) "
                          f'<span class="n">{n_guard}</span></li>')
    if n_unusable:
        user_items.append(f"<li>{_dot('#ffffff', '#9a9a9a')}not usable (hollow) "
                          f'<span class="n">{n_unusable}</span></li>')
    line_note = "" if lines_on else (f'<div class="small">Off by default above '
                                     f'{ASSOCIATION_LINES_MAX_USERS:,} users.</div>')
    guard_box = ('<label><input type="checkbox" data-toggle="show-guard" checked> Guard-band users</label>'
                 if n_guard else "")
    return (
        '<aside class="legend" id="legend" aria-label="Map legend and controls">'
        '<div class="tools"><button type="button" id="zoom-in" title="Zoom in">+</button>'
        '<button type="button" id="zoom-out" title="Zoom out">−</button>'
        '<button type="button" id="zoom-reset" title="Back to the first view">Reset</button></div>'
        '<div class="scale" title="Scale"><span id="scale-bar"></span><span id="scale-label"></span></div>'
        '<fieldset><legend>Layers</legend>'
        f'<label><input type="checkbox" data-toggle="show-assoc"{" checked" if lines_on else ""}> '
        f'Association lines</label>{line_note}'
        '<label><input type="checkbox" data-toggle="show-users" checked> Users</label>'
        f'{guard_box}'
        '</fieldset><fieldset><legend>Colour cells by</legend>'
        '<label><input type="radio" name="colour" data-toggle="by-tier" checked> tier</label>'
        f'{colour_choice}</fieldset>'
        f'<div class="legend-title">Cells <span class="n">{len(cells)}</span></div>'
        f'<ul>{"".join(cell_items)}</ul>{ramp_legends}'
        f'<div class="legend-title">Users, by serving tier <span class="n">{n_users}</span></div>'
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
