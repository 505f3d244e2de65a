"""The page's interactive map: the SVG of cells, users, lines, outlines and coverage, with its legend.

The markers are drawn once; each method's state (association, colours, tooltips, counts,
offset labels) is a compact JSON block the page's script applies when another method is
chosen.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from cellopt.study.report.colourings import cell_colourings, cell_rows
from cellopt.study.report.common import (
    AREA_STYLES,
    DASH,
    TIER_COLORS,
    bools,
    column,
    coord,
    esc,
    floats,
    format_value,
    slug,
    with_unit,
)
from cellopt.study.report.coverage import CoverageLayer, coverage_svg
from cellopt.study.report.layers import (
    GUARD,
    UNUSABLE,
    View,
    area_svg,
    cells_svg,
    lines_svg,
    method_view,
    offsets_svg,
    users_svg,
)
from cellopt.study.report.legend import map_legend

#: Above this many users the association-line layer starts switched off (it can be switched on).
ASSOCIATION_LINES_MAX_USERS = 5000
_MAP_WIDTH_PX = 1000  # assumed map width, only for the marker size a page without script shows
#: Codes of the serving tiers in the page's method data.
_TIER_CODES = ("macro", "pico", "femto", "none", "other")


def map_section(users: gpd.GeoDataFrame, cells: gpd.GeoDataFrame, *, methods: list[str],
                selected: str | None, areas: Mapping[str, shapely.Geometry],
                coverage: Sequence[CoverageLayer]) -> str:
    """The map section: the SVG map, its legend and controls, and (with `methods`) each method's state."""
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
    view_box = f"{coord(vb_x)} {coord(vb_y)} {coord(width)} {coord(height)}"
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
    in_area, usable = bools(users, "in_study_area"), bools(users, "usable")
    flags = np.where(in_area, 0, GUARD) | np.where(usable, 0, UNUSABLE)
    end_x, end_y = np.full(n_urows, np.nan), np.full(n_urows, np.nan)
    end_x[served], end_y[served] = cx[served_row[served]], cy[served_row[served]]
    if "serving_x_m" in users.columns:  # the serving cell's nearest wraparound copy
        sx, sy = floats(users, "serving_x_m"), floats(users, "serving_y_m")
        given = served & np.isfinite(sx) & np.isfinite(sy)
        end_x[given], end_y[given] = sx[given], sy[given]
    cell_ids = cells["cell_id"].to_numpy() if n_crows else np.empty(0, object)
    sid = np.where(served, cell_ids[np.maximum(served_row, 0)] if n_crows else None, serving.to_numpy())
    user_titles = _user_titles(users, user_tier, in_area, usable, sid)

    # each cell row's tooltip and colours; the shared cells in page order (small markers on top)
    cell_titles, cell_styles, cell_labels = cell_rows(cells)
    owner = column(cells, "owner", "operator").astype(str)
    azimuth = floats(cells, "azimuth_deg")
    rank = {"macro": 0, "pico": 1, "femto": 2}
    order = np.array(sorted(range(n_cells), key=lambda k: (rank.get(cell_tier[first_c[k]], 3), k)), int)
    page_cells = first_c[order]
    cell_row = cell_row[:, order]

    sux, suy = ux[first_u] - ox, oy - uy[first_u]
    ends = np.column_stack([end_x - ox, oy - end_y])
    views = [method_view(name, user_row[k], cell_row[k], tier_class, flags, user_titles, ends, cell_titles,
                         cell_styles, cell_labels, cell_tier, owner) for k, name in enumerate(names)]
    sel = names.index(selected) if methods else 0
    view = views[sel]
    labelled = any(label is not None for label in cell_labels)
    # the offset colouring first when the method shown has offsets (rules, not optimizers)
    shown_rows = (cells["method"].astype(str).to_numpy() == selected if by_method
                  else np.ones(n_crows, bool))
    offset_first = "by-offset" in cell_colourings(cells) \
        and bool(np.isfinite(floats(cells, "offset_db")[shown_rows]).any())

    lines_on = n_users <= ASSOCIATION_LINES_MAX_USERS
    cell_layer = cells_svg(cx[page_cells] - ox, oy - cy[page_cells], cell_tier[page_cells],
                           owner[page_cells], azimuth[page_cells], view)
    offset_layer = offsets_svg(cx[page_cells] - ox, oy - cy[page_cells], cell_tier[page_cells],
                               azimuth[page_cells], views, sel) if labelled else ""
    user_layer = users_svg(sux, suy, view, k0)
    assoc_layer = lines_svg(sux, suy, view)
    used: set[str] = set()
    area_ids = [slug(name, used, "area") for name in areas]
    area_layer = "".join(
        area_svg(name, geom, area_id, AREA_STYLES[k % len(AREA_STYLES)], ox, oy, span)
        for k, (area_id, (name, geom)) in enumerate(zip(area_ids, areas.items(), strict=True)))
    coverage_ids = [slug(layer.name, used, "cov") for layer in coverage]
    rendered = [coverage_svg(layer, cid, ox, oy) for layer, cid in zip(coverage, coverage_ids, strict=True)]

    row_classes = ["show-users", "show-guard"] + (["show-assoc"] if lines_on else []) \
        + (["by-offset"] if offset_first else [])
    svg = (f'<svg id="map" viewBox="{view_box}" preserveAspectRatio="xMidYMid meet" '
           f'style="--k:{k0:.4g}" role="img" aria-label="Map of cells, users and association">'
           f'<rect class="bg" x="{coord(vb_x - 50 * span)}" y="{coord(vb_y - 50 * span)}" '
           f'width="{coord(101 * span)}" height="{coord(101 * span)}"/>'
           + (f'<g id="layer-coverage">{"".join(r[0] for r in rendered)}</g>' if coverage else "")
           + (f'<g id="layer-areas">{area_layer}</g>' if areas else "")
           + f'<g id="layer-assoc">{assoc_layer}</g><g id="layer-users">{user_layer}</g>'
           f'<g id="layer-cells">{cell_layer}</g>'
           + (f'<g id="layer-offsets">{offset_layer}</g>' if labelled else "") + "</svg>")
    legend = map_legend(cells, views, sel, lines_on, lines_max=ASSOCIATION_LINES_MAX_USERS,
                        nearest_image="serving_x_m" in users.columns,
                        colour="by-offset" if offset_first else "by-tier",
                        areas=list(zip(area_ids, areas, strict=True)),
                        coverage=[(cid, r[1]) for cid, r in zip(coverage_ids, rendered, strict=True)],
                        coverage_names=[layer.name for layer in coverage])
    heading = "Map" if not methods else f'Map<span id="map-method">: {esc(selected)}</span>'
    data = _method_data(views, sel, labels=labelled) if methods else ""
    return (f'<section id="map-section"><h2>{heading}</h2>'
            f'<div class="map-row {" ".join(row_classes)}" id="map-row">'
            f'<div class="map-box">{svg}</div>{legend}</div>{data}</section>')


def _method_data(views: list[View], selected: int, *, labels: bool = False) -> str:
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


def _user_titles(users: gpd.GeoDataFrame, tier: np.ndarray, in_area: np.ndarray, usable: np.ndarray,
                 serving_id: np.ndarray) -> list[str]:
    """Each user row's tooltip."""
    user_id = users["user_id"].to_numpy()
    n_serving = column(users, "n_serving_cells", None)
    airtime = column(users, "airtime_share", None)
    rate = column(users, "rate_mbps", None)
    sinr = column(users, "sinr_db", None)
    has = set(users.columns)
    out = []
    for i in range(len(users)):
        lines = [f"user {format_value(user_id[i])}"]
        if format_value(serving_id[i]) == DASH:
            lines.append("not served")
        else:
            lines.append(f"served by cell {format_value(serving_id[i])} ({tier[i]})"
                         + (f", {format_value(n_serving[i])} cells" if "n_serving_cells" in has else ""))
        if "rate_mbps" in has:
            lines.append(f"rate: {with_unit(rate[i], 'Mbit/s')}")
        if "sinr_db" in has:
            lines.append(f"SINR: {with_unit(sinr[i], 'dB')}")
        if "airtime_share" in has:
            lines.append(f"airtime share: {format_value(airtime[i])}")
        if not in_area[i]:
            lines.append("guard band (outside the study area)")
        if not usable[i]:
            lines.append("not usable (no link with a positive rate)")
        out.append("\n".join(lines))
    return out
