"""The tutorial scripts in docs/tutorials run end to end and produce what they promise."""

import os
import subprocess
import sys

import pytest
from helpers import ROOT

TUTORIALS = ROOT / "docs" / "tutorials"


@pytest.mark.parametrize(("script", "outputs"), [
    ("getting_started.py", ["network_map.png", "rate_cdf.png"]),
    ("custom_topology.py", ["lyon_cells.csv", "custom_topology_map.png"]),
    ("power_patterns.py", ["power_patterns.png"]),
    ("own_opencellid.py", ["opencellid_extract.csv", "own_opencellid_map.png",
                           "own_opencellid.toml"]),
    ("deploy_cell_file.py", ["munich_cells.csv", "munich.toml", "munich_run/cell_config.csv",
                             "munich_run/deploy_drops.csv"]),
    ("planner_rasters.py", ["rasters/MUC-N-1.tif", "planner_rasters.toml",
                            "planner_run/cell_config.csv", "planner_run/report.html",
                            "planner_run/coverage_rsrp_dbm.tif"]),
])
@pytest.mark.slow
def test_tutorial_runs(tmp_path, script, outputs):
    env = {**os.environ, "MPLBACKEND": "Agg", "CELLOPT_TUTORIAL_OUT": str(tmp_path)}
    result = subprocess.run([sys.executable, str(TUTORIALS / script)], env=env, cwd=tmp_path,
                            capture_output=True, text=True, check=True, timeout=300)
    for name in outputs:
        path = tmp_path / name
        assert path.is_file() and path.stat().st_size > 0, f"{script} did not write {name}"
    assert "certified gap" in result.stdout
