"""Coverage rasters on the map: :class:`CoverageLayer`, its picture and its legend.

A layer is drawn as a PNG image at its bounds, under the markers and hidden until chosen in
the map's "Coverage" choice; a continuous layer with viridis and a colour bar, a categorical
one in a cycle of 20 colours.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import math
from collections.abc import Mapping

import matplotlib as mpl
import numpy as np
from matplotlib import image as mpl_image

from cellopt.errors import ValidationError
from cellopt.study.report.common import chip, coord, esc, format_value, ramp_legend, with_unit

#: Colour map of a continuous coverage layer, and the percentiles its range spans by default.
_COVERAGE_CMAP = "viridis"
_COVERAGE_PERCENTILES = (2.0, 98.0)
#: Colours of a categorical coverage layer, by value modulo 20: tab20's ten dark hues, then
#: its ten light ones, so that consecutive values (e.g. the sectors of a site) differ in hue.
_CATEGORY_COLORS = np.array([mpl.colormaps["tab20"](i) for i in (*range(0, 20, 2), *range(1, 20, 2))])


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


def coverage_svg(layer: CoverageLayer, layer_id: str, ox: float, oy: float) -> tuple[str, str]:
    """The layer as an ``<image>`` at its bounds (hidden until chosen), and its legend."""
    rgba, lo, hi = _coverage_rgba(layer)
    xmin, ymin, xmax, ymax = layer.bounds_m
    image = (f'<g id="{layer_id}" class="coverage" style="display:none">'
             f'<image href="{_png_uri(rgba)}" x="{coord(xmin - ox)}" y="{coord(oy - ymax)}" '
             f'width="{coord(xmax - xmin)}" height="{coord(ymax - ymin)}" preserveAspectRatio="none" '
             f'style="image-rendering:pixelated"><title>{esc(layer.name)}</title></image></g>')
    title = esc(layer.name) + (f" [{esc(layer.unit)}]" if layer.unit else "")
    nodata = '<div class="small">Transparent: no data.</div>'
    hidden = ' style="display:none"'
    if layer.categorical:
        values = layer.values[np.isfinite(layer.values) & (layer.values >= 0)].astype(np.int64)
        present = np.unique(values)
        if layer.labels is not None and len(present) <= len(_CATEGORY_COLORS):
            items = "".join(
                f"<li>{chip(mpl.colors.to_hex(_CATEGORY_COLORS[v % len(_CATEGORY_COLORS)]))}"
                f"{esc(layer.labels.get(int(v), format_value(int(v))))}</li>" for v in present)
            body = f"<ul>{items}</ul>"
        else:
            body = (f'<div class="small">Colours distinguish cells ({len(present):,} values; a cycle of '
                    f'{len(_CATEGORY_COLORS)} colours, not an order).</div>')
        legend = (f'<div class="cov-legend" id="{layer_id}-legend"{hidden}>'
                  f'<div class="legend-title">{title}</div>{body}{nodata}</div>')
        return image, legend
    colours = [mpl.colors.to_hex(c) for c in mpl.colormaps[_COVERAGE_CMAP](np.linspace(0, 1, 11))]
    ticks = [with_unit(v, layer.unit) if layer.unit else format_value(v) for v in (lo, (lo + hi) / 2, hi)]
    auto = layer.vmin is None or layer.vmax is None
    note = ('<div class="small">Range: 2nd to 98th percentile; values beyond take the end colours.</div>'
            if auto else '<div class="small">Values beyond the range take the end colours.</div>')
    legend = ramp_legend(layer_id, title, colours, ticks, note + nodata, attrs=hidden,
                         classes="ramp-legend cov-legend")
    return image, legend
