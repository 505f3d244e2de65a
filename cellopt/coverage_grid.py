"""The grid of a coverage map: the area it covers, its pixel size, the pixels inside.

:func:`coverage_area` is the mapped area (the network's study area, its region, or its
cells' bounding box grown by a margin); :func:`auto_resolution_m` the pixel size used when
none is asked. :func:`_plan` lays the grid over the area (its north-west corner on a
multiple of the asked resolution, coarsened to the pixel budget) and refuses, before any
pixel is computed, a grid that gives no map or would not fit in memory; the maps
themselves are made by :func:`cellopt.coverage.coverage_map`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import shapely

from cellopt.drop import Drop
from cellopt.errors import ValidationError, check_memory
from cellopt.network import Network
from cellopt.radio.links import LINK_BYTES

__all__ = ["BBOX_MARGIN_M", "BLOCK_LINKS", "DEFAULT_RESOLUTION_M", "MIN_PIXELS_ACROSS", "auto_resolution_m",
           "coverage_area"]

#: Default pixel size [m]: a few pixels across the smallest cells of a HetNet (a pico's
#: footprint is 50–100 m across), the clutter resolution of urban planning tools, and
#: about 400 pixels per km² (a 500 m ISD macro layout of 19 sites: some 10⁴ pixels).
DEFAULT_RESOLUTION_M = 25.0
#: Pixels across the area's shorter side that the automatic resolution gives at least
#: (an indoor hall or a campus is mapped finer than 25 m; :func:`auto_resolution_m`).
MIN_PIXELS_ACROSS = 50
#: A network with neither study area nor region is mapped over its cells' bounding box
#: grown on every side by the larger of this [m] and a tenth of the box's larger side.
BBOX_MARGIN_M = 500.0
#: Links computed at once: pixels are taken in blocks of
#: ``BLOCK_LINKS // (candidates × resources)`` (about 84 MB of links per block).
BLOCK_LINKS = 1 << 19
#: Pixels across the area at the asked resolution beyond which the grid's coordinates
#: (float64 metres) cannot tell the pixels apart: a finer ``resolution_m`` is refused.
MAX_PIXELS_ACROSS = 1e12
#: Bytes per pixel of the finished map: an int32 and three float32 rasters, the mask of
#: the pixels inside the area and their flat index.
_PIXEL_BYTES = 4 + 3 * 4 + 1 + 8


def auto_resolution_m(area: shapely.Geometry) -> float:
    """The pixel size used when none is asked: :data:`DEFAULT_RESOLUTION_M`, or for an area
    whose shorter side is under :data:`MIN_PIXELS_ACROSS` such pixels, the largest value of
    the 1-2-5 series (…, 1, 2, 5, 10 m) that gives that many across it, at least 1 m.

    Parameters
    ----------
    area : shapely.Geometry
        The mapped area (:func:`coverage_area`), in metres.

    Returns
    -------
    float
        The pixel size [m]: 25 m for the 19-site layouts, 1 m for the TR 38.901 indoor hall
        (120 m × 50 m), 10 m for a site 500 m across.
    """
    minx, miny, maxx, maxy = (float(v) for v in shapely.bounds(area))
    target = min(maxx - minx, maxy - miny) / MIN_PIXELS_ACROSS
    if not target < DEFAULT_RESOLUTION_M:  # also for a degenerate area (target 0 is below)
        return DEFAULT_RESOLUTION_M
    if target <= 1.0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(target))
    return max(m * power for m in (1.0, 2.0, 5.0) if m * power <= target)


def coverage_area(network: Network) -> shapely.Geometry:
    """The area a coverage map of `network` covers.

    Its ``study_area`` if it has one, else its ``region``, else the bounding box of its
    cells grown on every side by the larger of :data:`BBOX_MARGIN_M` and a tenth of the
    box's larger side.

    Returns
    -------
    shapely.Geometry
        A polygon (or multipolygon) in the network's CRS [m].
    """
    for area in (network.study_area, network.region):
        if area is not None and not shapely.is_empty(area):
            return area
    if network.n_cells == 0:
        raise ValidationError("the network has no cells, so no coverage; fix: add cells")
    xy = np.column_stack([network.cells.geometry.x.to_numpy(float),
                          network.cells.geometry.y.to_numpy(float)])
    low, high = xy.min(axis=0), xy.max(axis=0)
    margin = max(BBOX_MARGIN_M, 0.1 * float((high - low).max()))
    return shapely.box(*(low - margin), *(high + margin))


def _grid(bounds: tuple[float, float, float, float], requested_m: float, max_pixels: int
          ) -> tuple[tuple[float, float, float, float], float, int, int]:
    """The grid over `bounds`: its edges, resolution, rows and columns.

    The north-west corner lies on the grid of the requested resolution (multiples of it),
    so maps at one resolution line up; the resolution is the smallest whole multiple of
    the requested one whose grid has at most `max_pixels` pixels (the count falls as the
    multiple grows, so a doubling search and a bisection find it).
    """
    minx, miny, maxx, maxy = bounds
    west = math.floor(minx / requested_m) * requested_m
    north = math.ceil(maxy / requested_m) * requested_m

    def shape(factor: int) -> tuple[int, int]:
        res = requested_m * factor
        return (max(1, math.ceil((north - miny) / res - 1e-9)),
                max(1, math.ceil((maxx - west) / res - 1e-9)))

    def fits(factor: int) -> bool:
        n_rows, n_cols = shape(factor)
        return n_rows * n_cols <= max_pixels

    factor = 1
    if not fits(1):
        low, high = 1, 2  # low does not fit; double high until it does, then bisect
        while not fits(high):
            low, high = high, 2 * high
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (low, mid) if fits(mid) else (mid, high)
        factor = high
    res = requested_m * factor
    n_rows, n_cols = shape(factor)
    return (west, north - n_rows * res, west + n_cols * res, north), res, n_rows, n_cols


@dataclasses.dataclass(frozen=True)
class _Plan:
    """The grid of a coverage map, checked: its edges, pixel size, the pixels inside the
    area and the pixels computed at once."""

    bounds_m: tuple[float, float, float, float]
    resolution_m: float
    requested_m: float
    shape: tuple[int, int]
    inside: np.ndarray
    block: int


def _area_source(network: Network) -> str:
    """Which area :func:`coverage_area` maps, in words."""
    for name in ("study_area", "region"):
        area = getattr(network, name)
        if area is not None and not shapely.is_empty(area):
            return f"the network's {name}"
    return f"the cells' bounding box grown by at least {BBOX_MARGIN_M:g} m"


def _plan(drop: Drop, resolution_m: float | None, max_pixels: int) -> _Plan:
    """The checked grid of :func:`~cellopt.coverage.coverage_map` (see
    :func:`~cellopt.coverage.check_coverage`)."""
    model, _, n_candidates = drop.links.radio_settings("cellopt.coverage.coverage_map")
    network = drop.network
    area = coverage_area(network)
    extent = tuple(float(v) for v in shapely.bounds(area))
    width_m, height_m = extent[2] - extent[0], extent[3] - extent[1]
    size = _source_size(network, width_m, height_m)
    if not (width_m > 0 and height_m > 0 and shapely.area(area) > 0):
        raise ValidationError(f"the coverage area ({size}) has no extent to map; fix: give the "
                              "network a study area or region that is a polygon with an area, "
                              "or do not map it ([coverage] enabled = false)")
    auto_m = auto_resolution_m(area)
    if resolution_m is None:  # the models' own grid where it is finer
        grids = [r for m in model.pathloss.values()
                 if (r := getattr(m, "resolution_m", None)) is not None]
        resolution_m = min([auto_m, *grids])
    finest_m = max(width_m, height_m) / MAX_PIXELS_ACROSS
    if not resolution_m >= finest_m:
        raise ValidationError(f"resolution_m={resolution_m:.6g} m is too fine for the coverage "
                              f"area ({size}): over {MAX_PIXELS_ACROSS:.0e} pixels across, more "
                              "than the grid's coordinates can tell apart; fix: give resolution_m "
                              f"in metres (usual range 1 to 10000 m; at least {finest_m:.3g} m), "
                              f"or leave it out ({auto_m:g} m here)")
    if resolution_m > min(width_m, height_m):
        raise ValidationError(f"resolution_m={resolution_m:g} m is larger than the coverage area "
                              f"({size}): not one pixel fits across it; fix: give resolution_m "
                              f"below {min(width_m, height_m):,.0f} m, e.g. {auto_m:g} m (what "
                              "leaving it out gives here)")
    bounds, res, n_rows, n_cols = _grid(extent, resolution_m, max_pixels)
    n_links = min(n_candidates, network.n_cells) * network.n_resources
    block = max(1, BLOCK_LINKS // n_links)
    check_memory(float(n_rows) * n_cols * _PIXEL_BYTES + float(block) * n_links * LINK_BYTES,
                 f"a coverage map of {n_rows:,} × {n_cols:,} pixels",
                 "give a smaller max_pixels or a coarser resolution_m")
    inside = _inside(area, bounds, res, n_rows, n_cols)
    if res != resolution_m and (len(inside) == 0 or res > min(width_m, height_m)):
        half_m = min(width_m, height_m) / 2  # enough pixels for half the shorter side
        enough = (math.ceil(width_m / half_m) + 1) * (math.ceil(height_m / half_m) + 1)
        what = ("no pixel centre of the {n_cols} × {n_rows} grid falls inside it, so every pixel "
                "would be nodata" if len(inside) == 0 else "not one pixel fits across it")
        raise ValidationError(f"max_pixels={max_pixels:,} makes the pixels {res:g} m (from the "
                              f"{resolution_m:g} m asked), too coarse for the coverage area "
                              f"({size}): {what.format(n_cols=n_cols, n_rows=n_rows)}; fix: give "
                              f"a larger max_pixels, e.g. {max(enough, 100):,}")
    if len(inside) == 0:
        raise ValidationError(f"resolution_m={resolution_m:g} m: no pixel centre of the {n_cols} × "
                              f"{n_rows} grid falls inside the coverage area ({size}), so every "
                              "pixel would be nodata; fix: give a finer resolution_m, e.g. "
                              f"{auto_m:g} m (what leaving it out gives here)")
    return _Plan(bounds_m=bounds, resolution_m=res, requested_m=resolution_m,
                 shape=(n_rows, n_cols), inside=inside, block=block)


def _source_size(network: Network, width_m: float, height_m: float) -> str:
    """The mapped area and its size in words, e.g. "the network's region, 1,200 m × 800 m"."""
    return f"{_area_source(network)}, {width_m:,.6g} m × {height_m:,.6g} m"


def _inside(area: shapely.Geometry, bounds: tuple[float, float, float, float], res: float,
            n_rows: int, n_cols: int) -> np.ndarray:
    """Flat indices (row-major, north first) of the pixels whose centre is inside `area`."""
    west, _, _, north = bounds
    shapely.prepare(area)
    x = west + (np.arange(n_cols) + 0.5) * res
    rows_per_block = max(1, (1 << 20) // n_cols)
    parts = []
    for r0 in range(0, n_rows, rows_per_block):  # a loop over blocks of rows
        r1 = min(n_rows, r0 + rows_per_block)
        y = north - (np.arange(r0, r1) + 0.5) * res
        xx, yy = np.meshgrid(x, y)
        parts.append(r0 * n_cols + np.flatnonzero(shapely.contains_xy(area, xx, yy)))
    return np.concatenate(parts) if parts else np.empty(0, np.int64)
