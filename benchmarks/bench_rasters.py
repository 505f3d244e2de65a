"""Link-table time from per-cell path-loss rasters against TR 38.901, on the same networks.

For each member of a small family, one GeoTIFF per cell is written first (not timed:
float32, 256-pixel tiles, deflate-compressed or raw), holding the TR 38.901 UMa
(macro) or UMi (pico) NLOS path loss [dB] at the pixel centres within the cell's
calculation radius (nodata beyond). Then, in one run, the link table of the same network
is built twice and timed:

- ``rasters``: ``RasterPathLoss(folder, includes_antenna=False)`` for every tier (the
  rasters sampled at every user, bilinearly, windowed: the binding is in the time);
- ``tr38901``: ``ThreeGPP("uma", 3.5)`` for macros and ``ThreeGPP("umi", 3.5)`` for
  picos (LOS states, heights, O2I loss, shadowing by state).

Both use the 2-D sector pattern, 8 candidates and the same interference setting. Times are
per million links of the table (the median of ``--repeat`` builds), with the ratio
rasters / TR 38.901. The family varies the cells (57 to 366, with and without picos), the
users (10,000 to 50,000), the pixel (10 to 25 m), the rasters' extent (the whole area or a
calculation radius), the interference radius and the compression.

Run ``python benchmarks/bench_rasters.py [--repeat 3] [--only NAME]``; ``--load`` starts
two busy loops first (a loaded, shared machine).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import rasterio
from rasterio.transform import Affine

from cellopt import radio, topology
from cellopt.radio import tr38901

#: name → (rings, picos per sector, users, pixel [m], calculation radius [m] or None for
#: the whole area, interference radius [m] or None for every cell exactly, compression)
FAMILY = {
    "hex2_whole_10m": (2, 0, 10_000, 10.0, None, None, "deflate"),
    "hex2_whole_10m_raw": (2, 0, 10_000, 10.0, None, None, None),
    "hex2_whole_10m_50k": (2, 0, 50_000, 10.0, None, None, "deflate"),
    "hex2_picos_25m": (2, 2, 10_000, 25.0, None, None, "deflate"),
    "hex4_calc1500_10m": (4, 0, 20_000, 10.0, 1500.0, 1500.0, "deflate"),
    "hex4_picos_calc800_20m": (4, 1, 30_000, 20.0, 800.0, 1000.0, "deflate"),
}
FREQUENCY_GHZ = 3.5


def write_rasters(net, folder: Path, pixel_m: float, calc_radius_m: float | None,
                  compress: str | None = "deflate") -> int:
    """One raster per cell (a loop over files); returns the bytes written."""
    c = net.cell_arrays()
    ids = net.cells["cell_id"].astype(str).to_numpy()
    tiers = net.cells["tier"].to_numpy()
    heights = c["height_m"]
    west, east = c["x_m"].min() - 600.0, c["x_m"].max() + 600.0
    south, north = c["y_m"].min() - 600.0, c["y_m"].max() + 600.0
    for j in range(net.n_cells):  # a loop over the files written
        x0, x1, y0, y1 = west, east, south, north
        if calc_radius_m is not None:
            x0, x1 = max(west, c["x_m"][j] - calc_radius_m), min(east, c["x_m"][j] + calc_radius_m)
            y0, y1 = max(south, c["y_m"][j] - calc_radius_m), min(north, c["y_m"][j] + calc_radius_m)
        cols, rows = int(np.ceil((x1 - x0) / pixel_m)), int(np.ceil((y1 - y0) / pixel_m))
        xs = x0 + (np.arange(cols) + 0.5) * pixel_m
        ys = y1 - (np.arange(rows) + 0.5) * pixel_m
        d2 = np.maximum(np.hypot(xs[None, :] - c["x_m"][j], ys[:, None] - c["y_m"][j]), 10.0)
        scenario = "uma" if tiers[j] == "macro" else "umi"
        d3 = np.sqrt(d2 * d2 + (heights[j] - 1.5) ** 2)
        loss = tr38901.pathloss_db(scenario, d2, d3, heights[j], 1.5, FREQUENCY_GHZ, False)
        if calc_radius_m is not None:
            loss = np.where(d2 <= calc_radius_m, loss, -9999.0)
        profile = {"driver": "GTiff", "height": rows, "width": cols, "count": 1,
                   "dtype": "float32", "crs": net.crs, "nodata": -9999.0,
                   "transform": Affine(pixel_m, 0.0, x0, 0.0, -pixel_m, y1),
                   "tiled": True, "blockxsize": 256, "blockysize": 256}
        if compress:
            profile["compress"] = compress
        with rasterio.open(folder / f"{ids[j]}.tif", "w", **profile) as dst:
            dst.write(loss.astype(np.float32)[None])
    return sum(p.stat().st_size for p in folder.glob("*.tif"))


def member(name: str, repeat: int) -> dict:
    rings, picos, n_users, pixel, calc, radius, compress = FAMILY[name]
    net = topology.hex_grid(n_rings=rings, wraparound=False)
    if picos:
        net = topology.add_picos(net, per_sector=picos, rng=1)
    net = topology.drop_users(net, n_users, rng=2)
    with tempfile.TemporaryDirectory() as tmp:
        size = write_rasters(net, Path(tmp), pixel, calc, compress)
        raster = radio.RasterPathLoss(tmp, includes_antenna=False)
        models = {
            "rasters": radio.RadioModel(pathloss=dict.fromkeys(("macro", "pico", "femto"), raster),
                                        indoor_tiers=()),
            "tr38901": radio.RadioModel(pathloss={"macro": radio.ThreeGPP("uma", FREQUENCY_GHZ),
                                                  "pico": radio.ThreeGPP("umi", FREQUENCY_GHZ),
                                                  "femto": radio.ThreeGPP("umi", FREQUENCY_GHZ)},
                                        indoor_tiers=()),
        }
        out = {"name": name, "cells": net.n_cells, "users": net.n_users,
               "raster_mb": size / 2**20}
        for label, model in models.items():
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # users outside some rasters
                    links = radio.link_table(net, model=model, rng=3,
                                             interference_radius_m=radius)
                times.append(time.perf_counter() - t0)
            out[label] = statistics.median(times) / len(links) * 1e6
            out[f"{label}_links"] = len(links)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=sorted(FAMILY), nargs="+", default=list(FAMILY))
    parser.add_argument("--load", action="store_true", help="two busy loops while timing")
    args = parser.parse_args()
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(2)] if args.load else []
    try:
        rows = [member(name, args.repeat) for name in args.only]
    finally:
        for p in loops:
            p.kill()
    print(f"{'member':24} {'cells':>6} {'users':>7} {'links':>9} {'MB':>6} "
          f"{'rasters s/M':>12} {'tr38901 s/M':>12} {'ratio':>6}")
    ratios = []
    for r in rows:
        ratio = r["rasters"] / r["tr38901"]
        ratios.append(ratio)
        print(f"{r['name']:24} {r['cells']:6d} {r['users']:7d} {r['rasters_links']:9,d} "
              f"{r['raster_mb']:6.1f} {r['rasters']:12.2f} {r['tr38901']:12.2f} {ratio:6.2f}")
    print(f"rasters / TR 38.901 per link: median {statistics.median(ratios):.2f}, worst "
          f"{max(ratios):.2f}{' (two busy loops)' if args.load else ''}")


if __name__ == "__main__":
    main()
