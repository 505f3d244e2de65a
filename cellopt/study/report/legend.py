"""The legend and the controls beside the map: layers, method, colouring, outlines, coverage, counts."""

from __future__ import annotations

import geopandas as gpd
import numpy as np

from cellopt.study.report.colourings import cell_colourings, colouring_css
from cellopt.study.report.common import (
    AREA_STYLES,
    NO_LOAD_COLOR,
    OTHER_COLOR,
    TIER_COLORS,
    column,
    esc,
    floats,
    ramp_legend,
)
from cellopt.study.report.layers import View, marker_path


def _swatch(d: str, fill: str, stroke: str, stroke_width: float = 1.0) -> str:
    return (f'<svg class="sw" viewBox="-14 -14 28 28" aria-hidden="true"><path d="{d}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="{stroke_width}"/></svg>')


def _dot(fill: str, stroke: str = "none", opacity: float = 1.0) -> str:
    return (f'<svg class="sw" viewBox="-14 -14 28 28" aria-hidden="true"><circle r="4" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="1.2" opacity="{opacity}"/></svg>')


def _dash_swatch(colour: str, dash: str) -> str:
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<svg class="sw line" viewBox="0 0 30 10" aria-hidden="true"><path d="M1 5H29" fill="none" '
            f'stroke="{colour}" stroke-width="1.8"{dash_attr}/></svg>')


def map_legend(cells: gpd.GeoDataFrame, views: list[View], sel: int, lines_on: bool, *, lines_max: int,
               nearest_image: bool, areas: list[tuple[str, str]], coverage: list[tuple[str, str]],
               coverage_names: list[str], colour: str = "by-tier") -> str:
    """The legend and controls beside the map; the counts are the selected method's, each in a
    ``data-count`` span the page's script updates when another method is chosen. `lines_max`:
    the users above which the association lines start switched off. `colour`: the colouring
    chosen when the page opens."""
    view = views[sel]

    def has(key: str) -> bool:
        return any(v.counts[key] for v in views)

    def n(key: str) -> str:
        return f'<span class="n" data-count="{key}">{view.counts[key]}</span>'

    cell_items = []
    for t in ("macro", "pico", "femto"):
        if has(f"cells-{t}"):
            sectors = t == "macro" and bool(np.isfinite(floats(cells, "azimuth_deg")).any())
            d = "".join(marker_path(t, a) for a in (0, 120, 240)) if sectors else marker_path(t, np.nan)
            label = f"{t} (sectors)" if sectors else t
            cell_items.append(f"<li>{_swatch(d, TIER_COLORS[t], '#1b1b1b')}{label} {n(f'cells-{t}')}</li>")
    if has("cells-other"):
        cell_items.append(f"<li>{_swatch(marker_path('other', np.nan), OTHER_COLOR, '#1b1b1b')}other tier "
                          f"{n('cells-other')}</li>")
    if has("cells-third"):
        t = str(cells["tier"].to_numpy()[column(cells, "owner", "").astype(str) == "third_party"][0])
        swatch = _swatch(marker_path(t, np.nan), "#ffffff", TIER_COLORS.get(t, OTHER_COLOR), 2.2)
        cell_items.append(f"<li>{swatch}third party (hollow) {n('cells-third')}</li>")
    colourings = cell_colourings(cells)
    label_note = ('<div class="small">Labels: each non-zero offset [dB] of the method shown.</div>'
                  if any(label is not None for v in views for label in v.cell_label) else "")
    ramp_legends = "".join(
        ramp_legend(key, c.title, c.colors(np.linspace(0, 1, 9 if c.diverging else 6)), c.ticks,
                    f'<div class="small">{_dot(NO_LOAD_COLOR, "#1b1b1b")}{esc(c.no_value)}</div>'
                    + (label_note if key == "by-offset" else ""))
        for key, c in colourings.items())
    colour_choice = "".join(
        f'<label><input type="radio" name="colour" data-toggle="{key}"{" checked" if key == colour else ""}> '
        f'{c.choice}</label>' for key, c in colourings.items())
    colour_css = f"<style>{colouring_css(colourings)}</style>" if colourings else ""
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
                                     f'{lines_max:,} users.</div>')
    if nearest_image:
        line_note += '<div class="small">Lines end at the serving cell\'s nearest wraparound copy.</div>'
    guard_box = ('<label><input type="checkbox" data-toggle="show-guard" checked> Guard-band users</label>'
                 if has("guard") else "")
    method_choice = ""
    if views[0].name is not None:
        method_choice = ('<fieldset id="method-choice"><legend>Method</legend>' + "".join(
            f'<label><input type="radio" name="method" value="{k}"{" checked" if k == sel else ""}> '
            f"{esc(v.name)}</label>" for k, v in enumerate(views)) + "</fieldset>")
    area_boxes = ""
    if areas:
        area_boxes = ('<fieldset id="area-choice"><legend>Outlines</legend>' + "".join(
            f'<label><input type="checkbox" data-show="{area_id}" checked> '
            f"{_dash_swatch(*AREA_STYLES[k % len(AREA_STYLES)])}{esc(name)}</label>"
            for k, (area_id, name) in enumerate(areas)) + "</fieldset>")
    coverage_choice = ""
    if coverage:
        coverage_choice = (
            '<fieldset id="coverage-choice"><legend>Coverage</legend>'
            '<label><input type="radio" name="coverage" data-show="" checked> none</label>'
            + "".join(f'<label><input type="radio" name="coverage" data-show="{cid} {cid}-legend"> '
                      f"{esc(name)}</label>"
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
