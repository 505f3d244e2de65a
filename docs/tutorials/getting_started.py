"""Getting started with cellopt: a HetNet, four association methods, certified gaps.

This tutorial walks through the whole pipeline on the standard heterogeneous network
(3GPP TR 36.814 Configuration 4b):

1. build a network: 19 macro sites x 3 sectors, 4 picos per sector, clustered users;
2. compute the link table (RSRP, SINR and rate of each user on its candidate cells);
3. turn it into an association problem (proportional fairness, ``alpha = 1``);
4. solve it with three classic baselines and with the certified ALM solver;
5. compare the methods: cell-edge (5th percentile) and median rate, objective, upper
   bound and gap;
6. look at the per-user and per-cell tables and save two figures.

Run it with ``python docs/tutorials/getting_started.py``. The figures go into the folder
named by the environment variable ``CELLOPT_TUTORIAL_OUT`` (default
``results/tutorial``). The script never opens a window: it only saves figures, so it
runs fine headless (set ``MPLBACKEND=Agg`` if your default backend needs a display).
"""

# %% Imports and output folder
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import cellopt
from cellopt import radio, topology
from cellopt.plotting import plot_network, plot_rate_cdf

out = Path(os.environ.get("CELLOPT_TUTORIAL_OUT", "results/tutorial"))
out.mkdir(parents=True, exist_ok=True)

# %% 1. The network
# A hexagonal grid with two rings of sites around the centre one: 19 sites, 3 sectors
# each, 500 m between sites. Then 4 picos per macro sector, and 600 users of which 2/3
# are dropped in 40 m hotspots around the picos (the rest uniformly in the region).
# Every random step takes its own seed, so the run is reproducible.
net = topology.hex_grid(2)
net = topology.add_picos(net, per_sector=4, rng=1)
net = topology.drop_users(net, 600, clustered_fraction=2 / 3, rng=2)
print(f"network: {len(net.cells)} cells, {len(net.users)} users")

# %% 2. The link table
# For every user, the candidate cells it could be served by, with RSRP [dBm], SINR [dB]
# and the full-band rate [Mbit/s] it would get there. It is sparse: only the strongest
# candidates of each user are kept.
links = radio.link_table(net, n_candidates=8, rng=3)
print(links.to_frame().head())

# %% 3. The association problem
# Maximise the sum of log rates (proportional fairness) over fractional associations and
# airtime shares, subject to each cell's airtime (and backhaul) budget.
drop = cellopt.Drop.from_network(net, links)  # the network, its links and the problem
problem = drop.problem

# %% 4. Solve with four methods
# - max_rsrp: each user picks its strongest cell (what LTE does by default);
# - range_expansion: the same with a +6 dB bias for picos, to offload the macros;
# - load_aware: users move selfishly to the cell where they would get the most rate;
# - alm: the optimiser. It also returns an upper bound on the optimum (from the dual
#   function), so its gap is certified: no allocation gives every user more than
#   (1 + gap) times these rates.
# Each method reports the upper bound of the dual function at its own prices; the
# baselines' prices are not optimal, so their bounds are loose. The lowest bound (ALM's)
# holds for every method: objective differences against it are what the baselines lose.
solutions = {
    "max_rsrp": cellopt.solve(problem, method="max_rsrp"),
    "range_expansion": cellopt.solve(problem, method="range_expansion", bias_db=6),
    "load_aware": cellopt.solve(problem, method="load_aware"),
    "alm": cellopt.solve(problem, method="alm", tol=1e-4),
}

# %% 5. Compare the methods
print()
print(f"{'method':<16} {'p5 [Mbit/s]':>12} {'median':>9} {'objective':>11} "
      f"{'upper bound':>12} {'gap':>10}")
for name, sol in solutions.items():
    p5, p50 = np.percentile(sol.user_rate_mbps, [5, 50])
    ub = "-" if sol.upper_bound is None else f"{sol.upper_bound:.2f}"
    gap = "-" if sol.gap is None else f"{sol.gap:.2e}"
    print(f"{name:<16} {p5:>12.3f} {p50:>9.3f} {sol.objective:>11.2f} {ub:>12} {gap:>10}")

best = solutions["alm"]
print(f"\nalm: status {best.status!r}, certified gap {best.gap:.2e} "
      f"after {best.n_iter} iterations ({best.wall_s:.2f} s)")
for name, sol in solutions.items():
    print(f"  {name:<16} is within {best.upper_bound - sol.objective:7.2f} (sum of log rates) "
          "of the optimum")

# %% 6. Tables per user and per cell
# Joined to the network's tables, these are GeoDataFrames: each user's rate, serving cell
# and SINR, each cell's load, users served and traffic (columns: docs/conventions.md,
# "Result tables"). The airtime prices (the dual variables) are in best.prices.
users, cells = drop.frames(best)
cells["airtime_price"] = best.prices["airtime"].mean(axis=1)
print(users[["user_id", "rate_mbps", "serving_cell_id", "sinr_db"]].head())
print(cells[["cell_id", "tier", "load", "n_users", "traffic_mbps", "airtime_price"]].head())
print(cells.groupby("tier")[["traffic_mbps"]].sum())

# %% 7. Figures
# The map colours every user by the tier of its serving cell (macro or pico) under the
# optimised association; the CDF compares the user rates of all four methods (dots: 5th
# percentile and median).
ax = plot_network(net, serving_cell=drop.per_user(best.serving_cell, fill=-1))
ax.set_title("HetNet: users coloured by the tier of their ALM serving cell")
ax.figure.savefig(out / "network_map.png", dpi=120, bbox_inches="tight")
plt.close(ax.figure)

ax = plot_rate_cdf({name: sol.user_rate_mbps for name, sol in solutions.items()})
ax.set_title("User rates per association method")
ax.figure.savefig(out / "rate_cdf.png", dpi=120, bbox_inches="tight")
plt.close(ax.figure)

print(f"\nfigures saved in {out}/: network_map.png, rate_cdf.png")
