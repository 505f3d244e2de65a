"""Bring your own sites: a network from a CSV of cell positions and a service area.

Real deployments are not hexagonal grids. This tutorial:

1. writes a small CSV of 6 three-sector macro sites around Lyon (lon/lat in degrees) -
   in practice this is your own file, or an OpenCelliD export;
2. reads it with :func:`cellopt.topology.read_cells`, which validates it and projects it
   to the local UTM zone (metres);
3. defines the service area as a polygon in lon/lat and projects it to the network's CRS
   with geopandas;
4. drops users in that area, builds the link table and solves with the ALM solver;
5. prints the certified gap and the load of each cell, and saves a map.

Run it with ``python docs/tutorials/custom_topology.py``. The CSV and the map go into the
folder named by the environment variable ``CELLOPT_TUTORIAL_OUT`` (default
``results/tutorial``).
"""

# %% Imports and output folder
import os
from pathlib import Path

import geopandas as gpd
import matplotlib.pyplot as plt
import pandas as pd
import shapely

import cellopt
from cellopt import radio, topology
from cellopt.plotting import plot_network

out = Path(os.environ.get("CELLOPT_TUTORIAL_OUT", "results/tutorial"))
out.mkdir(parents=True, exist_ok=True)

# %% 1. A CSV of cell sites
# One row per cell (sector). Only `lon` and `lat` are required; here we also give a
# `cell_id`, the `site_id` that groups the three sectors of a mast, the `tier` and the
# boresight `azimuth_deg` (clockwise from north; leave it empty for an omni antenna).
# Columns left out (tx_power_dbm, height_m, ...) take read_cells' defaults.
sites = {  # site_id: (lon, lat) [degrees], about 600 m apart in central Lyon
    0: (4.8300, 45.7600),
    1: (4.8378, 45.7600),
    2: (4.8339, 45.7650),
    3: (4.8261, 45.7650),
    4: (4.8222, 45.7600),
    5: (4.8339, 45.7550),
}
rows = [
    {"cell_id": f"LYN{site}-{sector}", "site_id": site, "lon": lon, "lat": lat,
     "tier": "macro", "azimuth_deg": azimuth}
    for site, (lon, lat) in sites.items()
    for sector, azimuth in enumerate((0, 120, 240))
]
csv_path = out / "lyon_cells.csv"
pd.DataFrame(rows).to_csv(csv_path, index=False)
print(f"wrote {len(rows)} cells on {len(sites)} sites to {csv_path}")

# %% 2. Read it
# read_cells checks every column (and reports every bad row at once), then projects the
# positions from lon/lat to the UTM zone of the data, so that distances are in metres.
net = topology.read_cells(csv_path)
print(f"read {len(net.cells)} cells, CRS {net.crs.name}")
print(net.cells[["cell_id", "site_id", "tier", "azimuth_deg", "tx_power_dbm"]].head(6))

# %% 3. The service area
# Users are dropped in the network's region. Draw it in lon/lat (the coordinates you
# read off a map) and project it to the network's CRS, the one its cells are in.
area_lonlat = shapely.Polygon([
    (4.8170, 45.7520), (4.8430, 45.7520), (4.8430, 45.7690), (4.8170, 45.7690),
])
area = gpd.GeoSeries([area_lonlat], crs="EPSG:4326").to_crs(net.crs).iloc[0]
net = net.replace(region=area)
print(f"service area: {area.area / 1e6:.2f} km2")

# %% 4. Users, links and the optimised association
# 300 users uniformly in the area (there are no picos here, so no hotspot users).
net = topology.drop_users(net, 300, rng=2)
links = radio.link_table(net, n_candidates=6, rng=3)
drop = cellopt.Drop.from_network(net, links)
sol = drop.solve(tol=1e-4)                                 # the default method: "dual" here

# %% 5. Results
# The gap compares the objective with an upper bound on the optimum: it certifies that
# no association does better by more than that (relative) amount.
print(f"\n{sol.method}: status {sol.status!r}, objective {sol.objective:.2f}, "
      f"upper bound {sol.upper_bound:.2f}, certified gap {sol.gap:.2e}")

# Per-cell loads: airtime used (fraction of the frame), traffic carried [Mbit/s], the
# airtime price (the dual variable: how congested the cell is) and the users it serves.
users, cells = drop.frames(sol)
cells["airtime_price"] = sol.prices["airtime"].mean(axis=1)
with pd.option_context("display.width", 120):
    print(cells[["cell_id", "site_id", "azimuth_deg", "n_users", "load", "traffic_mbps",
                 "airtime_price"]].to_string(index=False, float_format="{:.3f}".format))

# %% 6. Map
# Cells (triangles, with their boresights), the service area, and users coloured by the
# cell that serves them.
ax = plot_network(net, serving_cell=drop.per_user(sol.serving_cell, fill=-1), association_lines=True,
                  color_by="cell")
ax.set_title("Lyon: six three-sector sites, ALM association")
ax.figure.savefig(out / "custom_topology_map.png", dpi=120, bbox_inches="tight")
plt.close(ax.figure)
print(f"\nmap saved to {out / 'custom_topology_map.png'}")
