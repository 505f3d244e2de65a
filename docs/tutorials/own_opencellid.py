"""Bring your own OpenCelliD extract: third-party femtocells on real base-station sites.

OpenCelliD (https://opencellid.org) publishes crowd-sourced cell positions for every
country as CSV exports. This tutorial takes one such extract through the whole chain of
experiment (d):

1. an extract (here a small synthetic one; pass your own file as the first argument);
2. :func:`cellopt.topology.read_cells`: filters (radio, operator), LTE cells clustered
   into sites (eNB = cell // 256), projection to UTM;
3. :func:`cellopt.topology.sectorize` (OpenCelliD has no antenna directions) and
   :func:`cellopt.topology.study_window`: a study area with a guard band of interferers;
4. open-access third-party femtocells, each with its own backhaul cap and a price per
   Mbit/s, and mostly indoor users;
5. the operator's choice: max received power against the optimizer, with the payment,
   the offloaded traffic and every femtocell's cap use;
6. the same as a scenario file, and the capacity metric on it.

Run it with ``python docs/tutorials/own_opencellid.py [your_extract.csv]``; outputs go
into the folder named by ``CELLOPT_TUTORIAL_OUT`` (default ``results/tutorial``).
OpenCelliD data is CC BY-SA 4.0: keep the attribution "OpenCelliD Project" with it, and
do not commit extracts into a repository whose licence differs.
"""

# %% Imports and output folder
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pyproj

import cellopt
from cellopt import radio, topology
from cellopt.drop import Drop
from cellopt.plotting import plot_network
from cellopt.study.scenario import load_scenario

out = Path(os.environ.get("CELLOPT_TUTORIAL_OUT", "results/tutorial"))
out.mkdir(parents=True, exist_ok=True)

# %% 1. The extract
# An OpenCelliD export has these columns: radio, mcc, net (the MNC), area (TAC),
# cell (for LTE the 28-bit ECI: eNB id × 256 + sector), unit, lon, lat, range, samples,
# changeable, created, updated, averageSignal. read_cells needs radio, mcc, net, area,
# cell, lon, lat (in any order and case); the others are optional, and extra columns of
# yours are kept. Positions are the centres of the
# measurements of each cell, not the mast. Without a file of yours, we write a synthetic
# one: a 6 × 6 grid of eNBs 350 m apart in a city (lon/lat near 2.35 E, 48.85 N), three
# measured cells each scattered up to 40 m from the mast, plus a few GSM cells and cells
# of another operator that the filters will drop.
if len(sys.argv) > 1:
    extract = Path(sys.argv[1])
else:
    rng = np.random.default_rng(7)
    utm = pyproj.CRS("EPSG:32631")
    x0, y0 = pyproj.Transformer.from_crs("EPSG:4326", utm, always_xy=True).transform(2.35, 48.85)
    ix, iy = (a.ravel() for a in np.meshgrid(np.arange(6), np.arange(6)))
    enb = np.repeat(20_000 + np.arange(36), 3)
    x = x0 + np.repeat(ix * 350.0, 3) + rng.uniform(-40, 40, enb.size)
    y = y0 + np.repeat(iy * 350.0, 3) + rng.uniform(-40, 40, enb.size)
    lon, lat = pyproj.Transformer.from_crs(utm, "EPSG:4326", always_xy=True).transform(x, y)
    n = enb.size
    frame = pd.DataFrame({
        "radio": ["LTE"] * (n - 6) + ["GSM"] * 6, "mcc": 208,
        "net": [1] * (n - 9) + [20] * 3 + [1] * 6, "area": 75001,
        "cell": enb * 256 + np.tile(np.arange(3), 36), "unit": 0, "lon": lon, "lat": lat,
        "range": 500, "samples": rng.integers(2, 200, n), "changeable": 1,
        "created": 1_500_000_000, "updated": 1_600_000_000, "averageSignal": 0,
    })
    extract = out / "opencellid_extract.csv"
    frame.to_csv(extract, index=False)
    print(f"wrote a synthetic extract of {n} cells to {extract}")

# %% 2. Read, filter, cluster, project
# read_cells recognises an OpenCelliD export by its column names. Keep one operator's LTE
# cells; their eNB ids (cell // 256) group the measured sectors into sites, and sites
# closer than merge_distance_m are merged. The result is in the data's UTM zone, in
# metres (a wider extract gets a projection that keeps distances within 1 %, or an error).
net = topology.read_cells(extract, radio="LTE", mcc=208, mnc=1, merge_distance_m=50.0)
print(f"{net.n_cells} LTE cells on {net.cells['site_id'].nunique()} sites, CRS {net.crs.name}")

# %% 3. Sectors and a study window
# OpenCelliD gives no azimuths: every site gets 3 sectors (30, 150, 270 degrees, 14 dBi).
# The study window is a box in lon/lat; the cells within guard_m of it stay as
# interferers, and users and femtocells are dropped over window + guard band, so every
# counted user (those in the window) sees interference from all sides.
net = topology.sectorize(net, 3)
lon_min, lat_min, lon_max, lat_max = net.cells.to_crs("EPSG:4326").total_bounds
pad_lon, pad_lat = 0.3 * (lon_max - lon_min), 0.3 * (lat_max - lat_min)
window = [float(v) for v in (lon_min + pad_lon, lat_min + pad_lat, lon_max - pad_lon, lat_max - pad_lat)]
net = topology.study_window(net, window, guard_m=300.0)
print(f"study window {net.study_area.area / 1e6:.2f} km², with guard band {net.area_km2:.2f} km², "
      f"{net.n_cells} sectors kept")

# %% 4. Femtocells and users
# Open-access femtocells at 10 % of the WiFi access-point density (616 per km², see
# docs/conventions.md). Each sells its spare backhaul: a cap drawn per femtocell from a
# lognormal spread of residential upload speeds (median 10 Mbit/s), and an access price
# of 0.02 utility per Mbit/s. Then users at 300 per km², 80 % indoors.
net = topology.add_femtocells(
    net, adoption=0.1,
    backhaul_mbps=lambda rng, n: 10.0 * np.exp(0.8 * rng.standard_normal(n)),
    price_per_mbps=0.02, rng=4)
net = topology.drop_users(net, density_per_km2=300.0, indoor_fraction=0.8, rng=5)
print(net)

# %% 5. Whom to send to the femtocells
# Links: femtocells are indoors, so a link to a user in another building crosses two
# exterior walls (radio.RadioModel, indoor_tiers and building_radius_m). The problem
# maximizes utility minus the payment to the femtocells' owners, under their caps.
# A Drop keeps the users without a usable link out of the problem and maps every
# solution back to all the network's users (they count with rate 0).
links = radio.link_table(net, n_candidates=8, rng=6)
drop = Drop.from_network(net, links)
study = drop.in_study_area  # statistics: the window's users only
for method in ("max_rsrp", "ipm"):    # ipm: the default method with backhaul caps
    sol = cellopt.solve(drop.problem, method=method)
    rate = drop.per_user(sol.user_rate_mbps)
    gap = "n/a" if sol.gap is None else f"{sol.gap:.1e}"
    print(f"\n{method}: objective {sol.objective:.1f} = utility {sol.utility:.1f} - payment "
          f"{sol.cost:.2f}; certified gap {gap}")
    print(f"  offloaded share of the traffic {sol.offload_share:.3f}; 5th-percentile rate in "
          f"the window {np.percentile(rate[study], 5):.3f} Mbit/s")
    print(f"  femtocells over their cap before scaling: {len(sol.exceeded_backhaul)}")

# Per femtocell: traffic, revenue (price × traffic) and cap use, from the cells table.
users, cells = drop.frames(sol)
femtos = cells[cells["owner"] == "third_party"]
busy = femtos[femtos["traffic_mbps"] > 1e-6]
print(f"\n{len(busy)} of {len(femtos)} femtocells carry traffic; revenue "
      f"{femtos['payment'].sum():.3f} in all; largest cap use {femtos['backhaul_use'].max():.3f}")
print(busy[["cell_id", "traffic_mbps", "backhaul_mbps", "backhaul_use", "payment"]]
      .head(8).to_string(index=False, float_format="{:.3f}".format))

ax = plot_network(net, serving_cell=drop.per_user(sol.serving_cell, fill=-1))
ax.set_title("Own extract: sectorized sites, window, femtocells (ipm)")
ax.figure.savefig(out / "own_opencellid_map.png", dpi=110, bbox_inches="tight")
plt.close(ax.figure)

# %% 6. The same as a scenario file, and its capacity
# A scenario file keeps the whole set-up in one place (docs/scenarios.md), for
# `cellopt run`, sweeps and the capacity metric: the largest user density whose
# 5th-percentile rate (window users, pooled over drops) meets a target.
scenario_path = out / "own_opencellid.toml"
scenario_path.write_text(f"""
name = "own_opencellid"
methods = ["max_rsrp", "ipm"]
[network]
builder = "file"
path = "{extract.resolve().as_posix()}"
radio = "LTE"
mcc = 208
mnc = 1
sectors = 3
window = {window}
guard_m = 300.0
[femtocells]
adoption = 0.1
backhaul_mbps = {{ distribution = "lognormal", median = 10.0, sigma = 0.8 }}
price_per_mbps = 0.02
[users]
density_per_km2 = 300.0
indoor_fraction = 0.8
""")
scenario = load_scenario(scenario_path)
result = cellopt.capacity(scenario, target_p5_mbps=1.0, drops=2, method="ipm", rel_tol=0.1,
                  first_guess_per_km2=100.0)
print(f"\ncapacity at a 5th-percentile rate of 1 Mbit/s: {result.capacity_per_km2:.0f} users/km² "
      f"(next density tried, {result.upper_per_km2:.0f}, misses it); "
      f"{len(result.evaluations)} densities tried")
