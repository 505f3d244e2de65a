"""Power patterns: let cells lower their power or switch off, jointly with association.

This tutorial:

1. builds a small HetNet (7 sites × 3 sectors + 1 pico per sector, 150 users);
2. solves association at full power with max-RSRP and with the certified optimizer;
3. runs :func:`cellopt.solve_power` with levels [0 dB, −10 dB, off] and an energy price,
   and reads its patterns, their shares, the cells' average power and the energy saved;
4. compares with the eICIC baseline grid (almost-blank subframes × range expansion);
5. saves a figure of the pattern shares and of each cell's average power.

Run it with ``python docs/tutorials/power_patterns.py``. The figure goes into the folder
named by the environment variable ``CELLOPT_TUTORIAL_OUT`` (default ``results/tutorial``).
"""

# %% Imports and output folder
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import cellopt
from cellopt import radio, topology
from cellopt.power import ColumnGenerationOptions, GainTable, PowerProblem, abs_grid

out = Path(os.environ.get("CELLOPT_TUTORIAL_OUT", "results/tutorial"))
out.mkdir(parents=True, exist_ok=True)

# %% 1. A small HetNet
net = topology.hex_grid(n_rings=1)                     # 7 sites × 3 sectors, wrap-around
net = topology.add_picos(net, per_sector=1, rng=1)      # 21 picos at 30 dBm
net = topology.drop_users(net, 150, clustered_fraction=0.5, rng=2)
print(f"{net.n_cells} cells, {net.n_users} users")

# %% 2. Full power: max-RSRP and the optimized association
# The gain table holds each user's strongest cells; with the same seed as link_table it
# gives the same full-power rates.
gains = GainTable.from_network(net, rng=3)
problem = cellopt.Problem.from_network(net, radio.link_table(net, n_candidates=8, rng=3))
full = {m: cellopt.solve(problem, method=m) for m in ("max_rsrp", "alm")}
for name, sol in full.items():
    print(f"full power, {name:8s}: objective {sol.objective:8.2f}")

# %% 3. Power patterns
# Levels are relative to each cell's maximum power; None = off. The energy price is in
# utility per W of transmit power (per unit share of the band): here 0.05, so a macro
# cell at 46 dBm (40 W) costs 2 utility units if it transmits all the time.
# It stops when an iteration raises the geometric-mean rate by less than 1 % (gain_tol).
power = PowerProblem.from_network(net, levels_db=[0.0, -10.0, None], energy_price_per_w=0.05,
                                  gains=gains)
sol = cellopt.solve_power(power, options=ColumnGenerationOptions(bound="relaxed", gain_tol=1e-2))
full_w = float((10.0 ** (net.cells["tx_power_dbm"].to_numpy() / 10.0)).sum() * 1e-3)
print(sol.status, "-", sol.message)
print(f"{len(sol.power.patterns)} patterns, objective {sol.objective:.2f} (utility {sol.utility:.2f}, "
      f"energy cost {sol.energy_cost:.2f})")
print(f"transmit energy {sol.power.energy_w:.1f} W of {full_w:.1f} W at full power "
      f"({100 * (1 - sol.power.energy_w / full_w):.0f} % saved)")
print(f"certified gap (relaxed bound, valid but loose): {sol.gap:.3g}")
for name, s in (("max-RSRP", full["max_rsrp"]), ("patterns", sol)):
    r = s.user_rate_mbps
    print(f"{name:9s}: 5th-percentile {np.percentile(r, 5):.2f} Mbit/s, "
          f"median {np.median(r):.2f} Mbit/s")
print(sol.history[["iteration", "n_patterns", "objective", "n_new"]].to_string(index=False))

# %% 4. The eICIC grid: pico bias × share of airtime with the macros muted
grid = abs_grid(net, gains=gains)
best = grid.loc[grid["objective"].idxmax()]
print(f"best ABS point: bias {best.bias_db:g} dB, muted share {best.muted_share:g}, objective "
      f"{best.objective:.2f} (energy {best.energy_w:.1f} W)")

# %% 5. Figure: pattern shares and each cell's average power
fig, (ax_s, ax_p) = plt.subplots(1, 2, figsize=(10, 3.5))
ax_s.bar(np.arange(len(sol.pattern_share)), sol.pattern_share)
ax_s.set(xlabel="pattern", ylabel="share of the band", title="pattern shares")
xy = np.column_stack([net.cells.geometry.x, net.cells.geometry.y])
shown = np.where(np.isneginf(sol.power.cell_power_dbm), np.nan, sol.power.cell_power_dbm)
points = ax_p.scatter(xy[:, 0], xy[:, 1], c=shown, cmap="viridis", s=30)
fig.colorbar(points, ax=ax_p, label="average power [dBm]")
ax_p.set(title="cells' average power (blank: off)", aspect="equal")
fig.savefig(out / "power_patterns.png", dpi=80, bbox_inches="tight")
plt.close(fig)
