"""The map's SVG layers: cell markers, offset labels, user dots, association lines, area outlines.

A :class:`View` is what the map shows of one method; the layers draw the view of the method
the page opens with (the page's script applies another's). Positions are local coordinates
[m]: x east, y down, from the map's origin.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import shapely

from cellopt.study.report.common import TIER_COLORS, coord, esc

#: Marker radius of a user dot and of the cell markers, in screen pixels.
_USER_RADIUS_PX = 2.2
#: An area's outline is simplified to this share of the map's span (a pixel at the deepest zoom is
#: 2·10⁻⁶ of it), or coarser while it keeps more than ``_AREA_MAX_VERTICES`` vertices.
_AREA_TOLERANCE = 1e-5
_AREA_MAX_VERTICES = 50_000
GUARD, UNUSABLE, ABSENT = 1, 2, 4  # flags of a user in the page's method data


@dataclasses.dataclass
class View:
    """What the map shows of one method: per shared user, and per shared cell in page order."""

    name: str | None
    tier: np.ndarray  # (n_users,) str: the serving tier's class suffix ("macro"... "none", "other")
    flags: np.ndarray  # (n_users,) int: GUARD | UNUSABLE | ABSENT
    user_title: list[str]  # (n_users,)
    line_end: np.ndarray  # (n_users, 2) float: local end of the association line [m]; NaN: none
    cell_style: list[str | None]  # (n_cells,): colour variables; None: no row in this method
    cell_title: list[str | None]  # (n_cells,)
    cell_label: list[str | None]  # (n_cells,): offset labels ("+6"); None: none
    counts: dict[str, int]


def method_view(name: str | None, rows: np.ndarray, crows: np.ndarray, tier_class: np.ndarray,
                flags: np.ndarray, user_titles: list[str], ends: np.ndarray, cell_titles: list[str],
                cell_styles: list[str], cell_labels: list[str | None], cell_tier: np.ndarray,
                owner: np.ndarray) -> View:
    """The view of one method from its users' rows `rows` (n_users,) and its cells' rows `crows`
    (n_cells,) in page order (−1: none)."""
    present = rows >= 0
    r = np.maximum(rows, 0)
    n = len(rows)
    tier = np.where(present, tier_class[r], "none") if n else np.empty(0, object)
    user_flags = np.where(present, flags[r], ABSENT) if n else np.empty(0, int)
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
              "guard": int((present & (user_flags & GUARD > 0)).sum()),
              "unusable": int((present & (user_flags & UNUSABLE > 0)).sum())}
    return View(name, tier, user_flags, titles, line_end, cell_style, cell_title, cell_label, counts)


def marker_path(tier: str, azimuth_deg: float) -> str:
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


def cells_svg(x: np.ndarray, y: np.ndarray, tier: np.ndarray, owner: np.ndarray, azimuth: np.ndarray,
              view: View) -> str:
    """The cell markers at local (`x`, `y`) [m], in page order, as `view` shows them."""
    parts = []
    for j in range(len(x)):
        t = tier[j]
        tier_class = f"tier-{t}" if t in TIER_COLORS else "tier-other"
        third = " third" if owner[j] == "third_party" else ""
        style, title = view.cell_style[j], view.cell_title[j]
        absent = " absent" if style is None else ""
        parts.append(f'<g class="cell {tier_class}{third}{absent}" '
                     f'transform="translate({coord(x[j])} {coord(y[j])})" style="{style or ""}">'
                     f'<title>{esc(title or "")}</title>'
                     f'<path d="{marker_path(t, azimuth[j])}"/></g>')
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


def offsets_svg(x: np.ndarray, y: np.ndarray, tier: np.ndarray, azimuth: np.ndarray, views: list[View],
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
                     f'transform="translate({coord(x[j])} {coord(y[j])})"><text x="{dx:.1f}" y="{dy:.1f}" '
                     f'text-anchor="{anchor}">{esc(label or "")}</text></g>')
    return "".join(parts)


def _user_class(tier: str, flags: int) -> str:
    """The class of a user dot (the page's script builds the same)."""
    return (f"user t-{tier}" + (" guard" if flags & GUARD else "")
            + (" unusable" if flags & UNUSABLE else "") + (" absent" if flags & ABSENT else ""))


def users_svg(x: np.ndarray, y: np.ndarray, view: View, k0: float) -> str:
    """The user dots at local (`x`, `y`) [m], shape (n_users,), as `view` shows them."""
    r0 = f"{_USER_RADIUS_PX * k0:.3g}"
    return "".join(f'<circle class="{_user_class(view.tier[i], view.flags[i])}" cx="{coord(x[i])}" '
                   f'cy="{coord(y[i])}" r="{r0}"><title>{esc(view.user_title[i])}</title></circle>'
                   for i in range(len(x)))


def lines_svg(x: np.ndarray, y: np.ndarray, view: View) -> str:
    """The association lines from the users at local (`x`, `y`) [m] to their line ends."""
    parts = []
    for i in np.flatnonzero(np.isfinite(view.line_end[:, 0])):
        guard = " guard" if view.flags[i] & GUARD else ""
        parts.append(f'<path class="assoc t-{view.tier[i]}{guard}" '
                     f'd="M{coord(x[i])} {coord(y[i])}'
                     f'L{coord(view.line_end[i, 0])} {coord(view.line_end[i, 1])}"/>')
    return "".join(parts)


def _geometry_path(geom: shapely.Geometry, ox: float, oy: float) -> str:
    """SVG path data of the lines and polygon rings of `geom`, in local coordinates [m]."""
    parts: list[str] = []

    def ring(coords: np.ndarray, closed: bool) -> None:
        if closed and len(coords) > 1 and (coords[0] == coords[-1]).all():
            coords = coords[:-1]
        if len(coords) < 2:
            return
        pts = [f"{coord(x - ox)} {coord(oy - y)}" for x, y in coords[:, :2]]
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


def area_svg(name: str, geom: shapely.Geometry, area_id: str, style: tuple[str, str], ox: float,
             oy: float, span: float) -> str:
    """One area's outline: a group the legend's checkbox shows or hides."""
    colour, dash = style
    d = _geometry_path(_simplified(geom, span), ox, oy)
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<g id="{area_id}" class="area"><path d="{d}" stroke="{colour}"{dash_attr}>'
            f"<title>{esc(name)}</title></path></g>")
