"""From a planner's cells and path-loss predictions to cell_config.csv.

Planning tools and ray tracers export one path-loss raster per cell. This tutorial:

1. makes such a set for the 16 cells of ``examples/planner_rasters/cells.csv`` (central
   Munich) with the example's generator, whose exact value is known at every point
   (TR 38.901 LOS path loss, the TR 36.814 sector pattern and 20 dB per building crossed;
   ``examples/planner_rasters/README.md``) - in practice these are your tool's exports;
2. writes a scenario whose ``[radio] path_loss`` reads them, and runs it
   (``cellopt run`` from Python): the optimum, max-RSRP, per-cell offsets fitted on 8
   drops and judged on 3 held-out drops, coverage maps on the rasters' 10 m grid and the
   report;
3. checks the link table's coupling loss at the users' positions against the generating
   model (what the bilinear reading costs);
4. reads ``cell_config.csv`` back and applies it to a new drop of the same cells, with the
   certified gap to that drop's bound.

Run it with ``python docs/tutorials/planner_rasters.py`` (about 15 s). Everything goes into
the folder named by the environment variable ``CELLOPT_TUTORIAL_OUT`` (default
``results/tutorial``).
"""

# %% Imports and output folder
import importlib.util
import os
from pathlib import Path

import numpy as np
import pandas as pd

import cellopt
from cellopt import deploy

out = Path(os.environ.get("CELLOPT_TUTORIAL_OUT", "results/tutorial"))
out.mkdir(parents=True, exist_ok=True)
example = Path(__file__).resolve().parents[2] / "examples" / "planner_rasters"
spec = importlib.util.spec_from_file_location("make_rasters", example / "make_rasters.py")
make_rasters = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_rasters)

# %% 1. The predictions: one GeoTIFF per cell, <cell_id>.tif, path loss [dB] with antenna
cells = make_rasters.read_planner_cells(example / "cells.csv", check_land=False)
rasters = out / "rasters"
make_rasters.write_rasters(cells, rasters, resolution_m=10.0)
print(f"{len(list(rasters.glob('*.tif')))} rasters in {rasters}")

# %% 2. A scenario that reads them, and its run
# path_loss = "folder/" is the short form; kind and includes_antenna say what the pixels
# hold. The predictions are deterministic: no shadowing and no walls are added to them.
scenario_toml = out / "planner_rasters.toml"
scenario_toml.write_text(f"""
name = "planner_rasters"
methods = ["max_rsrp", {{name = "dual", label = "optimized (dual)"}}]

[network]
builder = "file"
path = "{(example / 'cells.csv').as_posix()}"
region_buffer_m = 300.0
bandwidth_mhz = 10.0

[users]
n = 800
clustered_fraction = 0.5
cluster_tier = "pico"
cluster_radius_m = 40.0

[radio]
path_loss = {{ source = "rasters/", kind = "path_loss_db", includes_antenna = true }}

[deploy]
training_drops = 8
held_out_drops = 3
""", encoding="utf-8")
scenario = cellopt.load_scenario(scenario_toml)
result = cellopt.run_scenario(scenario, out / "planner_run")
print(result.deployment.summary_line())

# %% 3. The coupling loss at the users against the generating model
# coupling_loss_db = path loss + shadowing + penetration - antenna gains: here the
# rasters' value, read bilinearly at each user. It errs where the model jumps by 20 dB
# (walls, building shadow edges) within a pixel of the user.
drop = result.drop
frame = drop.links.to_frame()
users = drop.network.user_arrays()
exact = make_rasters.model_loss_db(drop.network.cells, users["x_m"], users["y_m"])
error = np.abs(frame["coupling_loss_db"].to_numpy() - exact[frame["user"], frame["cell"]])
error = error[np.isfinite(error)]
print(f"coupling loss against the generating model over {len(error):,} links: "
      f"median {np.median(error):.3f} dB, 95th percentile {np.percentile(error, 95):.2f} dB, "
      f"max {error.max():.1f} dB")

# %% 4. Apply cell_config.csv to users it was not fitted to
config = pd.read_csv(out / "planner_run" / "cell_config.csv")
print(config.head(6).to_string(index=False))
offsets = config.set_index("cell_id")["offset_db"]
new = scenario.build(seed=777, cell_seed=drop.seed)
optimum = new.solve("dual")
rule = deploy.evaluate(new, offsets, bound=optimum)
kept = deploy.kept_share(rule.objective, new.solve("max_rsrp").objective, optimum.objective)
print(f"on new users: certified gap {rule.gap:.4f} to the drop's bound; kept share of the "
      f"optimizer's gain over max-RSRP {kept:.0%}")
