"""Per-cell path-loss rasters from a planner's cell file, as a planning tool exports them.

Writes one GeoTIFF per cell, ``<cell_id>.tif``: float32, nodata -9999, in the cells'
metric CRS (the local UTM zone that :func:`cellopt.topology.read_cells` picks with
:func:`cellopt.crs.metric_crs`), on one grid of `resolution_m` covering the cells with
a margin. Each pixel holds the **path loss [dB, positive] including the antenna
pattern**, as planning tools (Atoll, Planet) export it, at the pixel's centre, from a
generating model whose exact value :func:`model_loss_db` gives at any point:

    L = PL_LOS(d_2D, d_3D) + 20 dB × (buildings crossed) − G_max − A(φ)

- PL_LOS: 3GPP TR 38.901 Table 7.4.1-1 LOS path loss (:func:`cellopt.radio.tr38901.pathloss_db`,
  dual slope with the breakpoint distance d'_BP), UMa for macro cells and
  UMi-Street Canyon for every other tier, at f_c = 2 GHz, UE height 1.5 m, h_E = 1 m;
  d_2D = max(distance, 10 m) (the models' minimum distance), d_3D = hypot(d_2D, h_BS − 1.5 m).
- Buildings: the axis-aligned rectangles of :data:`BUILDINGS_M`, placed relative to the
  centre of the cells' extent. Each one that the straight line from the cell to the
  point crosses adds 20 dB (a point inside a building pays its wall too: an indoor
  user); a line that only touches an edge or a corner does not cross. The rasters are
  therefore discontinuous along the walls and along the shadow edges behind building
  corners, where bilinear samples err most.
- Antenna: G_max is the cell's ``antenna_gain_dbi``; A(φ) = −min(12 (φ/70°)², 25 dB)
  the TR 36.814 3-sector horizontal pattern of the angle φ between the cell's azimuth
  and the bearing to the point (:func:`cellopt.radio.sector_gain_db`); 0 for omni cells
  (no azimuth). No vertical pattern, no tilt.
- Calculation radius: like a planning tool, small cells (every tier but macro) are
  computed within 500 m only (``--radius-m`` sets one radius for every cell): their
  raster covers the square around that circle, with nodata beyond it. Macro cells cover
  the whole grid.

Run ``python examples/planner_rasters/make_rasters.py --out examples/planner_rasters/rasters``
(the default ``--cells`` is ``cells.csv`` next to this script, 16 cells in Munich; point it
at your own cell file, e.g. an OpenCelliD extract, in any format ``read_cells`` reads).
The rasters are generated, not committed: the output folder is ignored by git. The
OpenCelliD extracts are licensed (CC BY-SA 4.0) and are not shipped with cellopt.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyproj
import rasterio
from rasterio.transform import Affine

from cellopt.radio import angle_off_boresight_deg, sector_gain_db
from cellopt.radio.tr38901 import pathloss_db
from cellopt.topology import read_cells

HERE = Path(__file__).resolve().parent
#: The shipped cell file: 4 three-sector macro sites and 4 small cells in central Munich.
CELLS_CSV = HERE / "cells.csv"
#: Carrier frequency of the path loss [GHz].
FREQUENCY_GHZ = 2.0
#: UE height [m].
UE_HEIGHT_M = 1.5
#: Smallest horizontal distance of the path-loss formula [m] (closer points get its value).
MIN_DISTANCE_M = 10.0
#: Loss of each building crossed [dB].
PENETRATION_LOSS_DB = 20.0
#: Calculation radius of small cells (every tier but macro) [m].
SMALL_CELL_RADIUS_M = 500.0
#: Margin of the grid around the cells [m].
MARGIN_M = 400.0
#: The rasters' nodata value.
NODATA = -9999.0
#: Buildings: (x_min, y_min, x_max, y_max) [m] east and north of the centre of the cells'
#: extent (the middle of their bounding box, rounded to whole metres). For the shipped
#: cells none of them holds a cell.
BUILDINGS_M = np.array([
    [-120.0, 150.0, 0.0, 260.0],
    [100.0, -120.0, 260.0, -20.0],
    [-450.0, -60.0, -330.0, 120.0],
    [350.0, 20.0, 520.0, 110.0],
    [-80.0, -330.0, 60.0, -230.0],
    [120.0, 380.0, 300.0, 460.0],
])

__all__ = ["buildings_m", "calculation_radius_m", "grid", "main", "model_loss_db", "read_planner_cells",
           "write_rasters"]


def read_planner_cells(path: str | Path = CELLS_CSV, *, check_land: bool = True) -> Any:
    """The cells of a cell file in their metric CRS (:func:`cellopt.topology.read_cells`).

    Parameters
    ----------
    path : str or Path
        A cell file ``read_cells`` reads (planner CSV, OpenCelliD export, vector file).
    check_land : bool
        ``read_cells``' check that the cells lie on land (about 3 s the first time).

    Returns
    -------
    geopandas.GeoDataFrame
        One row per cell: ``cell_id``, ``tier``, ``height_m``, ``azimuth_deg`` (NaN for
        omni), ``antenna_gain_dbi`` and Point geometries in a projected CRS [m].
    """
    return read_cells(path, progress=False, check_land=check_land).cells


def _arrays(cells: Any) -> dict[str, np.ndarray]:
    """The cell columns the model needs, from a cells frame or a mapping of arrays."""
    if hasattr(cells, "geometry"):
        x, y = np.asarray(cells.geometry.x, float), np.asarray(cells.geometry.y, float)
    else:
        x, y = np.asarray(cells["x_m"], float), np.asarray(cells["y_m"], float)
    n = len(x)

    def get(key: str, default: Any) -> np.ndarray:
        return np.asarray(cells[key]) if key in cells else np.full(n, default)

    return {"x_m": x, "y_m": y, "height_m": get("height_m", 25.0).astype(float),
            "azimuth_deg": get("azimuth_deg", np.nan).astype(float),
            "antenna_gain_dbi": get("antenna_gain_dbi", 14.0).astype(float),
            "tier": get("tier", "macro").astype(str), "cell_id": get("cell_id", "").astype(str)}


def buildings_m(cells: Any) -> np.ndarray:
    """:data:`BUILDINGS_M` placed at the centre of the cells' extent, in the cells' CRS.

    Parameters
    ----------
    cells : GeoDataFrame or mapping of arrays
        The cells (a frame with Point geometries, or ``x_m``, ``y_m`` arrays).

    Returns
    -------
    ndarray, shape (n_buildings, 4)
        ``(x_min, y_min, x_max, y_max)`` of each building [m].
    """
    c = _arrays(cells)
    cx = np.round((c["x_m"].min() + c["x_m"].max()) / 2)
    cy = np.round((c["y_m"].min() + c["y_m"].max()) / 2)
    return BUILDINGS_M + np.array([cx, cy, cx, cy])


def calculation_radius_m(cells: Any, radius_m: float | None = None) -> np.ndarray:
    """Each cell's calculation radius [m], shape (n_cells,): `radius_m` for every cell if
    given, else :data:`SMALL_CELL_RADIUS_M` for small cells and infinity for macro cells."""
    tier = _arrays(cells)["tier"]
    if radius_m is not None:
        return np.full(len(tier), float(radius_m))
    return np.where(tier == "macro", np.inf, SMALL_CELL_RADIUS_M)


def crossings(x0: float, y0: float, x: np.ndarray, y: np.ndarray, buildings: np.ndarray) -> np.ndarray:
    """Buildings crossed by the segments from (x0, y0) to each point (x, y): slab test.

    The segment P(t) = P0 + t (P − P0), t ∈ [0, 1], is inside a rectangle for the t in
    both slabs ``x_min ≤ x ≤ x_max`` and ``y_min ≤ y ≤ y_max``; it crosses the rectangle
    when that interval, cut to [0, 1], has a positive length. Vectorized over the points;
    the loop runs over the buildings.

    Parameters
    ----------
    x0, y0 : float
        Start of every segment (the cell) [m].
    x, y : ndarray
        Ends of the segments [m], any shape (one shape).
    buildings : ndarray, shape (n_buildings, 4)
        ``(x_min, y_min, x_max, y_max)`` [m].

    Returns
    -------
    ndarray of int64
        Buildings crossed, the shape of `x`.
    """
    dx, dy = x - x0, y - y0
    count = np.zeros(np.shape(x), np.int64)
    for x_min, y_min, x_max, y_max in np.asarray(buildings, float).reshape(-1, 4):
        lo_x, hi_x = _slab(x0, dx, x_min, x_max)
        lo_y, hi_y = _slab(y0, dy, y_min, y_max)
        enter = np.maximum(np.maximum(lo_x, lo_y), 0.0)
        leave = np.minimum(np.minimum(hi_x, hi_y), 1.0)
        count += enter < leave
    return count


def _slab(start: float, delta: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """The t interval in which start + t·delta lies in [low, high] (±inf for delta = 0)."""
    moving = delta != 0.0
    safe = np.where(moving, delta, 1.0)
    t1, t2 = (low - start) / safe, (high - start) / safe
    inside = low <= start <= high
    lo = np.where(moving, np.minimum(t1, t2), -np.inf if inside else np.inf)
    hi = np.where(moving, np.maximum(t1, t2), np.inf if inside else -np.inf)
    return lo, hi


def _cell_loss_db(c: Mapping[str, np.ndarray], j: int, x: np.ndarray, y: np.ndarray,
                  buildings: np.ndarray) -> np.ndarray:
    """The generating model of cell `j` at the points (x, y) [dB], the shape of `x`."""
    x0, y0, h_bs = float(c["x_m"][j]), float(c["y_m"][j]), float(c["height_m"][j])
    dx, dy = x - x0, y - y0
    d2d = np.maximum(np.hypot(dx, dy), MIN_DISTANCE_M)
    d3d = np.hypot(d2d, h_bs - UE_HEIGHT_M)
    scenario = "uma" if c["tier"][j] == "macro" else "umi"
    loss = pathloss_db(scenario, d2d, d3d, h_bs, UE_HEIGHT_M, FREQUENCY_GHZ, True)
    loss = loss + PENETRATION_LOSS_DB * crossings(x0, y0, x, y, buildings)
    gain = c["antenna_gain_dbi"][j]
    azimuth = c["azimuth_deg"][j]
    if np.isfinite(azimuth):
        bearing = np.degrees(np.arctan2(dx, dy))  # clockwise from north
        gain = gain + sector_gain_db(angle_off_boresight_deg(bearing, azimuth))
    return loss - gain


def model_loss_db(cells: Any, x_m: np.ndarray, y_m: np.ndarray, *, buildings: np.ndarray | None = None,
                  radius_m: float | None = None) -> np.ndarray:
    """The generating model's exact path loss including the antenna, at arbitrary points.

    Parameters
    ----------
    cells : GeoDataFrame or mapping of arrays
        The cells as :func:`read_planner_cells` returns them, or a mapping with arrays
        ``x_m``, ``y_m`` [m] and optionally ``height_m`` (25), ``azimuth_deg`` (NaN:
        omni), ``antenna_gain_dbi`` (14), ``tier`` ('macro'), shape (n_cells,) each.
    x_m, y_m : array_like, shape (n_points,)
        Points in the cells' CRS (the rasters' CRS) [m].
    buildings : ndarray, shape (n_buildings, 4), optional
        Rectangles ``(x_min, y_min, x_max, y_max)`` [m]; default :func:`buildings_m`.
    radius_m : float, optional
        Calculation radius of every cell; default :func:`calculation_radius_m`'s.

    Returns
    -------
    ndarray, shape (n_points, n_cells)
        Path loss [dB]; NaN beyond a cell's calculation radius (where its raster holds
        nodata).
    """
    c = _arrays(cells)
    buildings = buildings_m(cells) if buildings is None else np.asarray(buildings, float)
    x, y = np.asarray(x_m, float), np.asarray(y_m, float)
    radius = calculation_radius_m(cells, radius_m)
    out = np.empty((len(x), len(c["x_m"])))
    for j in range(out.shape[1]):
        loss = _cell_loss_db(c, j, x, y, buildings)
        far = np.hypot(x - c["x_m"][j], y - c["y_m"][j]) > radius[j]
        out[:, j] = np.where(far, np.nan, loss)
    return out


def grid(cells: Any, resolution_m: float = 10.0, margin_m: float = MARGIN_M) -> tuple[Affine, int, int]:
    """The grid covering the cells with `margin_m` around, aligned to multiples of `resolution_m`.

    Returns
    -------
    (affine.Affine, int, int)
        North-up transform, rows, columns.
    """
    c = _arrays(cells)
    x0 = np.floor((c["x_m"].min() - margin_m) / resolution_m) * resolution_m
    x1 = np.ceil((c["x_m"].max() + margin_m) / resolution_m) * resolution_m
    y0 = np.floor((c["y_m"].min() - margin_m) / resolution_m) * resolution_m
    y1 = np.ceil((c["y_m"].max() + margin_m) / resolution_m) * resolution_m
    rows, cols = round((y1 - y0) / resolution_m), round((x1 - x0) / resolution_m)
    return Affine(resolution_m, 0.0, float(x0), 0.0, -resolution_m, float(y1)), rows, cols


def _cell_window(transform: Affine, rows: int, cols: int, x0: float, y0: float, radius: float
                 ) -> tuple[int, int, int, int]:
    """(row_start, row_stop, col_start, col_stop) of the grid around a calculation circle."""
    if not np.isfinite(radius):
        return 0, rows, 0, cols
    res = transform.a
    c0 = int(np.clip(np.floor((x0 - radius - transform.c) / res), 0, cols))
    c1 = int(np.clip(np.ceil((x0 + radius - transform.c) / res), 0, cols))
    r0 = int(np.clip(np.floor((transform.f - (y0 + radius)) / res), 0, rows))
    r1 = int(np.clip(np.ceil((transform.f - (y0 - radius)) / res), 0, rows))
    return r0, r1, c0, c1


def write_rasters(cells: Any, out: str | Path, *, resolution_m: float = 10.0, margin_m: float = MARGIN_M,
                  radius_m: float | None = None, crs: Any = None) -> list[Path]:
    """Write one path-loss GeoTIFF per cell, ``<out>/<cell_id>.tif``.

    Parameters
    ----------
    cells : GeoDataFrame or mapping of arrays
        As for :func:`model_loss_db`, with ``cell_id``; a frame brings its CRS.
    out : str or Path
        Folder, created if needed; files of the same names are overwritten.
    resolution_m : float
        Pixel size [m].
    margin_m : float
        Margin of the grid around the cells [m].
    radius_m : float, optional
        Calculation radius of every cell [m]; default small cells 500 m, macro cells the
        whole grid.
    crs : optional
        The CRS of the positions; default the frame's.

    Returns
    -------
    list of Path
        The files written, in the order of the cells.
    """
    c = _arrays(cells)
    crs = pyproj.CRS.from_user_input(crs if crs is not None else cells.crs)
    bad = [cid for cid in c["cell_id"] if not cid or any(ch in cid for ch in '/\\:*?"<>|')]
    if bad:
        raise ValueError(f"cell ids {bad[:5]} cannot be file names; give the cells plain ids")
    transform, rows, cols = grid(cells, resolution_m, margin_m)
    buildings = buildings_m(cells)
    radius = calculation_radius_m(cells, radius_m)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for j, cell_id in enumerate(c["cell_id"]):
        r0, r1, c0, c1 = _cell_window(transform, rows, cols, c["x_m"][j], c["y_m"][j], radius[j])
        x = transform.c + resolution_m * (np.arange(c0, c1) + 0.5)
        y = transform.f - resolution_m * (np.arange(r0, r1) + 0.5)
        xx, yy = np.meshgrid(x, y)
        loss = _cell_loss_db(c, j, xx, yy, buildings)
        loss[np.hypot(xx - c["x_m"][j], yy - c["y_m"][j]) > radius[j]] = NODATA
        path = out / f"{cell_id}.tif"
        profile = {"driver": "GTiff", "height": r1 - r0, "width": c1 - c0, "count": 1, "dtype": "float32",
                   "crs": crs.to_wkt(), "nodata": NODATA, "compress": "deflate", "tiled": True,
                   "blockxsize": 128, "blockysize": 128,
                   "transform": Affine(resolution_m, 0.0, transform.c + c0 * resolution_m, 0.0,
                                       -resolution_m, transform.f - r0 * resolution_m)}
        with rasterio.open(path, "w", **profile) as dst:
            dst.write(loss.astype(np.float32), 1)
            dst.set_band_description(1, cell_id)
            dst.update_tags(1, quantity="path loss including the antenna pattern", unit="dB")
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: read the cells, write the rasters, say what was written."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "rasters", help="output folder (default: "
                        "rasters/ next to this script)")
    parser.add_argument("--cells", type=Path, default=CELLS_CSV, help="cell file (default: the shipped "
                        "cells.csv); any file cellopt.topology.read_cells reads")
    parser.add_argument("--resolution-m", type=float, default=10.0, help="pixel size [m] (default 10)")
    parser.add_argument("--margin-m", type=float, default=MARGIN_M, help="margin around the cells [m]")
    parser.add_argument("--no-land-check", action="store_true", help="skip read_cells' check that the "
                        "cells lie on land (synthetic positions, or to save its 3 s)")
    parser.add_argument("--radius-m", type=float, default=None, help="calculation radius of every "
                        "cell [m] (default: small cells 500 m, macro cells the whole grid)")
    args = parser.parse_args(argv)
    if not args.resolution_m > 0:
        parser.error("--resolution-m must be > 0")
    start = time.perf_counter()
    cells = read_planner_cells(args.cells, check_land=not args.no_land_check)
    _, rows, cols = grid(cells, args.resolution_m, args.margin_m)
    radius = calculation_radius_m(cells, args.radius_m)
    side = np.minimum(2 * radius / args.resolution_m + 2, max(rows, cols))
    pixels = float(np.sum(np.where(np.isfinite(radius), side**2, rows * cols)))
    if pixels * 4 > 2**31:
        parser.error(f"{len(cells)} cells on a {cols} × {rows} grid would take about "
                     f"{pixels * 4 / 2**30:.1f} GB; use a coarser --resolution-m or a --radius-m")
    paths = write_rasters(cells, args.out, resolution_m=args.resolution_m, margin_m=args.margin_m,
                          radius_m=args.radius_m)
    size = sum(p.stat().st_size for p in paths)
    others = sorted({p.name for p in args.out.glob("*.tif*")} - {p.name for p in paths})
    print(f"wrote {len(paths)} path-loss rasters ({size / 2**20:.2f} MB, {cols} × {rows} pixels of "
          f"{args.resolution_m:g} m, {cells.crs.name}) to {args.out} in "
          f"{time.perf_counter() - start:.2f} s")
    if others:
        print(f"note: {args.out} also holds {len(others)} other rasters ({others[:3]}...): a RasterSet of "
              "the folder reads them too", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
