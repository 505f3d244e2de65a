"""From a planner's cell file to cell_config.csv: offsets a live network takes.

The optimizer says how good an association can be; a live LTE or NR network takes per-cell
offsets instead (each user picks the cell of largest RSRP + offset, on the TS 36.331
Q-OffsetRange value set). This tutorial:

1. writes a small planning export of 7 three-sector macro sites and 8 small cells in
   Munich (site, sector, latitude, longitude, azimuth, height, power in W, tier) - in
   practice this is your own file;
2. writes a scenario around it: the file's cells, users in hotspots around the small
   cells, max-RSRP and the optimizer, and a ``[deploy]`` section;
3. runs it (``cellopt run`` from Python): per-cell offsets and the best per-tier bias are
   fitted on 8 drops of these cells and judged on 3 drops whose users they never saw;
4. reads ``cell_config.csv`` back and applies it to a new drop of the same cells, with the
   certified gap to that drop's bound.

Run it with ``python docs/tutorials/deploy_cell_file.py`` (a few seconds). Everything goes
into the folder named by the environment variable ``CELLOPT_TUTORIAL_OUT`` (default
``results/tutorial``).
"""

# %% Imports and output folder
import os
from pathlib import Path

import pandas as pd

import cellopt
from cellopt import deploy

out = Path(os.environ.get("CELLOPT_TUTORIAL_OUT", "results/tutorial"))
out.mkdir(parents=True, exist_ok=True)

# %% 1. A planner's cell file
# Column names as a planning tool exports them: read_cells matches them after folding case
# and punctuation and reads the unit from the name (Power_W in watts), see docs/cell_files.md.
sites = {  # site: (lat, lon) [degrees], about 500 m apart around Munich's centre
    "MUC01": (48.1374, 11.5755), "MUC02": (48.1374, 11.5822), "MUC03": (48.1413, 11.5789),
    "MUC04": (48.1413, 11.5721), "MUC05": (48.1374, 11.5688), "MUC06": (48.1335, 11.5721),
    "MUC07": (48.1335, 11.5789),
}
rows = [{"Site": site, "Sector": sector + 1, "Latitude": lat, "Longitude": lon,
         "Azimuth": azimuth, "Height": 25, "Power_W": 40, "Tier": "macro"}
        for site, (lat, lon) in sites.items() for sector, azimuth in enumerate((0, 120, 240))]
small = [(48.1390, 11.5772), (48.1358, 11.5740), (48.1395, 11.5705), (48.1350, 11.5805),
         (48.1420, 11.5760), (48.1330, 11.5755), (48.1380, 11.5840), (48.1365, 11.5675)]
rows += [{"Site": f"SC{k:02d}", "Sector": 1, "Latitude": lat, "Longitude": lon, "Azimuth": None,
          "Height": 6, "Power_W": 1, "Tier": "pico"} for k, (lat, lon) in enumerate(small)]
cells_csv = out / "munich_cells.csv"
pd.DataFrame(rows).to_csv(cells_csv, index=False)
print(f"wrote {len(rows)} cells on {len(sites) + len(small)} sites to {cells_csv}")

# %% 2. A scenario around it
# The file builder reads the cells (the service area is their hull with 500 m around);
# two thirds of the users are in hotspots around the small cells. [deploy] fits the
# offsets on 8 drops (this one and 7 more of the same cells) and judges them on 3 more.
scenario_toml = out / "munich.toml"
scenario_toml.write_text(f"""
name = "munich"
methods = ["max_rsrp", {{name = "dual", label = "optimized (dual)"}}]

[network]
builder = "file"
path = "{cells_csv.name}"
bandwidth_mhz = 10.0

[users]
n = 600
clustered_fraction = 0.6666666666666666
cluster_radius_m = 40.0
indoor_fraction = 1.0

[radio]
wall_loss_db = 20.0
spectral_efficiency = "tr36942"
n_candidates = 8

[deploy]
training_drops = 8    # a short run: the defaults are 16 and 5
held_out_drops = 3

[coverage]
enabled = false
""", encoding="utf-8")
scenario = cellopt.load_scenario(scenario_toml)

# %% 3. Run it: the optimum, the rules fitted to it, their judgement
result = cellopt.run_scenario(scenario, out / "munich_run", report=False)
deployment = result.deployment
print(deployment.summary_line())
print(deployment.judgement_table().to_string(float_format=lambda v: f"{v:.3f}"))
print(f"offsets fitted in {deployment.fit_s:.2f} s; the optimizer solved the drop in "
      f"{deployment.optimizer_s:.2f} s")
config = pd.read_csv(out / "munich_run" / "cell_config.csv")
print(config.head(8).to_string(index=False))
print("offsets used [dB]:", sorted(config["offset_db"].unique().tolist()))

# %% 4. Apply cell_config.csv to users it was not fitted to
# A drop of the same cells (cell_seed = the run's seed) with new users and shadowing: the
# offsets read back by cell_id are the rule; its certified gap is to that drop's bound.
offsets = config.set_index("cell_id")["offset_db"]
run_seed = result.drop.seed
new = scenario.build(seed=12345, cell_seed=run_seed)
optimum = new.solve("dual")
rule = deploy.evaluate(new, offsets, bound=optimum)
max_rsrp = new.solve("max_rsrp")
kept = deploy.kept_share(rule.objective, max_rsrp.objective, optimum.objective)
print(f"on new users: certified gap {rule.gap:.4f} to the drop's bound (the optimizer's "
      f"{optimum.gap:.1e}); kept share of the optimizer's gain over max-RSRP {kept:.0%}")
