"""One drop of a scenario (`cellopt run`): the Drop, its tables, the GeoPackage, the report."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
from helpers import ROOT

import cellopt
from cellopt import ValidationError, radio, topology
from cellopt.drop import Drop
from cellopt.study import load_scenario, run_scenario
from cellopt.study.gis import layer_suffixes
from cellopt.study.run import RUN_OUTPUTS

#: Weak macros, on purpose: the builder's warning about their power is expected.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:tx_power_dbm=20 dBm is outside the usual range \[33, 60\] dBm of macro cells"
    ":UserWarning")

#: Picos, femtocells with a backhaul cap and a price, a guard band, and users in outage:
#: every column of the outputs has something to show.
SCENARIO = """
name = "outputs"
methods = ["max_rsrp", {name = "alm", label = "optimized"}]

[network]
builder = "hex_grid"
n_rings = 1
isd_m = 3000.0
tx_power_dbm = 20.0        # weak macros far apart: some users have no usable link

[picos]
per_sector = 1

[femtocells]
density_per_km2 = 2.0
backhaul_mbps = 2.0
price_per_mbps = 0.05

[users]
n = 120
clustered_fraction = 0.3

[radio]
n_candidates = 4

[seeds]
base = 5

[deploy]     # the deployable settings on few drops (tests/deploy/test_deploy_run.py: the defaults)
training_drops = 2
held_out_drops = 1
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run")
    path = folder / "outputs.toml"
    path.write_text(SCENARIO, encoding="utf-8")
    return run_scenario(load_scenario(path), folder / "out")


@pytest.mark.slow
def test_the_drop_maps_solutions_back_to_every_network_row(run):
    drop, sol = run.drop, run.solutions["optimized"]
    assert (~drop.solvable).sum() > 0, "the scenario should leave some users in outage"
    rate = drop.per_user(sol.user_rate_mbps)
    assert rate.shape == (drop.network.n_users,)
    np.testing.assert_array_equal(rate[drop.solvable], sol.user_rate_mbps)
    assert (rate[~drop.solvable] == 0).all()
    serving = drop.per_user(sol.serving_cell, fill=-1)
    assert serving.dtype.kind == "i" and (serving[~drop.solvable] == -1).all()
    with pytest.raises(ValidationError, match="solvable users"):
        drop.per_user(sol.user_rate_mbps[:-1])


def test_frames_hold_every_user_and_cell_once_with_the_solution_numbers(run):
    drop, sol = run.drop, run.solutions["optimized"]
    users, cells = drop.frames(sol)
    net = drop.network
    assert list(users["user_id"]) == list(net.users["user_id"])
    assert list(cells["cell_id"]) == list(net.cells["cell_id"])
    np.testing.assert_array_equal(users["rate_mbps"].to_numpy()[drop.solvable], sol.user_rate_mbps)
    np.testing.assert_array_equal(cells["traffic_mbps"], sol.cell_traffic_mbps)
    np.testing.assert_allclose(cells["payment"], sol.cell_payment)
    served = users["serving_cell_id"].notna().to_numpy()
    assert (users.loc[~served, "serving_tier"] == "none").all()
    assert users.loc[~served, "sinr_db"].isna().all()
    # The serving cell is the solution's, by id; its tier is that cell's tier.
    ids = net.cells["cell_id"].to_numpy()
    np.testing.assert_array_equal(users.loc[served, "serving_cell_id"].to_numpy(),
                                  ids[sol.serving_cell[sol.serving_cell >= 0]])
    tier = dict(zip(cells["cell_id"], cells["tier"], strict=True))
    assert [tier[c] for c in users.loc[served, "serving_cell_id"]] == \
        list(users.loc[served, "serving_tier"])
    # Airtime: each user's shares sum to its airtime; a cell's load is the airtime it gives.
    assert (users["airtime_share"] >= 0).all() and (cells["load"] <= 1 + 1e-9).all()
    np.testing.assert_allclose(users["airtime_share"].sum(), cells["load"].sum(), rtol=1e-9)
    # Users counted by their serving cell; backhaul use = traffic / cap where capped.
    assert cells["n_users"].sum() == served.sum()
    capped = np.isfinite(cells["backhaul_mbps"]).to_numpy()
    assert capped.any()
    np.testing.assert_allclose(cells.loc[capped, "backhaul_use"],
                               cells.loc[capped, "traffic_mbps"] / cells.loc[capped, "backhaul_mbps"])
    assert (cells.loc[~capped, "backhaul_use"] == 0).all()


def test_geopackage_reads_back_with_the_same_numbers(run, tmp_path):
    path = run.files[0].parent / "results.gpkg"
    net = run.drop.network
    assert layer_suffixes(run.solutions) == {"max_rsrp": "max_rsrp", "optimized": "optimized",
                                             "per-cell offsets": "per_cell_offsets",
                                             "best per-tier bias": "best_per_tier_bias"}
    suffix = layer_suffixes(run.solutions)
    for label, sol in run.solutions.items():  # a users and a cells layer per method
        u = gpd.read_file(path, layer=f"users_{suffix[label]}")
        c = gpd.read_file(path, layer=f"cells_{suffix[label]}")
        assert u.crs == net.crs and c.crs == net.crs
        assert "method" not in u.columns and "method" not in c.columns
        assert list(u["user_id"]) == list(net.users["user_id"])
        assert sorted(c["cell_id"]) == sorted(net.cells["cell_id"])
        np.testing.assert_allclose(u["rate_mbps"].to_numpy(), run.drop.per_user(sol.user_rate_mbps))
        np.testing.assert_allclose(c["traffic_mbps"].to_numpy(), sol.cell_traffic_mbps)
        np.testing.assert_allclose(u.geometry.x, net.users.geometry.x)
    for column in ("serving_cell_id", "serving_tier", "airtime_share", "sinr_db", "in_study_area"):
        assert column in u.columns
    for column in ("load", "n_users", "traffic_mbps", "backhaul_use", "tx_power_dbm", "payment"):
        assert column in c.columns


def test_csv_tables_match_the_geopackage(run):
    out = run.files[0].parent
    csv = pd.read_csv(out / "user_rates.csv")
    assert list(csv.columns[:4]) == ["method", "user_id", "x_m", "y_m"]
    assert len(csv) == len(run.solutions) * run.drop.network.n_users
    np.testing.assert_allclose(csv["rate_mbps"], run.users["rate_mbps"])
    cells = pd.read_csv(out / "cell_stats.csv")
    assert len(cells) == len(run.solutions) * run.drop.network.n_cells
    summary = pd.read_csv(out / "method_summary.csv", index_col="method")
    assert list(summary.index) == ["max_rsrp", "optimized", "per-cell offsets", "best per-tier bias"]
    assert summary.loc["optimized", "status"] == "optimal"


def test_every_output_file_is_written(run):
    names = {p.name for p in run.files}
    assert names == {"method_summary.csv", "radio_summary.csv", "user_rates.csv", "cell_stats.csv",
                     "cell_config.csv", "deploy_drops.csv",
                     "results.gpkg", "coverage_best_server.tif", "coverage_rsrp_dbm.tif",
                     "coverage_sinr_db.tif", "coverage_rate_mbps.tif", "network_map.png",
                     "rate_cdf.png", "convergence.png", "report.html", "checksums.sha256", "run.json"}
    assert all(p.stat().st_size > 0 for p in run.files)
    assert not list(run.files[0].parent.glob(".*tmp*"))


def test_each_entry_recognises_the_file_it_wrote(run):
    """What a run removes as stale, and what it replaces without --force, is what its entry
    recognises; run.json is read by the owner check instead."""
    out = run.files[0].parent
    for entry in RUN_OUTPUTS:
        if (out / entry.name).exists():
            assert entry.is_own(out / entry.name) == (entry.name != "run.json"), entry.name


def test_checksums_let_a_run_made_again_be_checked_with_sha256sum(run, tmp_path):
    """checksums.sha256 lists every file written without wall-clock values, in the order
    written, in sha256sum's format; the same scenario and seed run again (without its
    report) gives the same bytes, which `sha256sum -c` confirms."""
    out = run.files[0].parent
    text = (out / "checksums.sha256").read_text(encoding="utf-8")
    lines = [line.split("  ", 1) for line in text.splitlines()]
    wall_clock = {"method_summary.csv", "results.gpkg", "report.html", "checksums.sha256", "run.json"}
    assert [name for _, name in lines] == [p.name for p in run.files if p.name not in wall_clock]
    assert all(digest == hashlib.sha256((out / name).read_bytes()).hexdigest()
               for digest, name in lines)
    again = run_scenario(run.scenario, tmp_path / "again", seed=run.drop.seed, report=False)
    assert (tmp_path / "again" / "checksums.sha256").read_text(encoding="utf-8") == text
    assert again.removed == []
    if shutil.which("sha256sum"):
        check = subprocess.run(["sha256sum", "-c", str(out / "checksums.sha256")], cwd=tmp_path / "again",
                               capture_output=True, text=True)
        assert check.returncode == 0 and check.stdout.count(": OK") == len(lines), check.stdout


@pytest.mark.slow
def test_a_large_run_streams_the_same_tables_in_chunks(run, tmp_path, monkeypatch, capsys):
    """Above CHUNK_USERS users the per-user tables are written a chunk at a time and not
    kept; they hold the same rows and numbers as the whole-table run's."""
    import cellopt.study.run as run_module
    import cellopt.study.runviews as runviews

    monkeypatch.setattr(run_module, "CHUNK_USERS", 37)   # 120 users: 4 chunks per method
    monkeypatch.setattr(runviews, "PLOT_USERS", 50)
    monkeypatch.setattr(runviews, "REPORT_USERS", 40)
    streamed = run_scenario(run.scenario, tmp_path / "streamed", progress=True)
    assert streamed.users is None
    whole = run.files[0].parent
    assert (tmp_path / "streamed" / "user_rates.csv").read_bytes() == \
        (whole / "user_rates.csv").read_bytes()
    layers = list(pyogrio.list_layers(whole / "results.gpkg")[:, 0])
    assert list(pyogrio.list_layers(tmp_path / "streamed" / "results.gpkg")[:, 0]) == layers
    for name in layers:  # the users and association layers in 4 chunks, the same rows
        pd.testing.assert_frame_equal(gpd.read_file(tmp_path / "streamed" / "results.gpkg",
                                                    layer=name),
                                      gpd.read_file(whole / "results.gpkg", layer=name))
    page = (tmp_path / "streamed" / "report.html").read_text(encoding="utf-8")
    assert "map: a random sample of 40 users and the cells serving them" in page
    assert "rate CDF and network_map.png: a random sample of 50 users" in page
    err = capsys.readouterr().err
    for stage in ("built network", "built radio", "optimized: optimal", "wrote results.gpkg"):
        assert stage in err


def test_drop_from_a_network_built_by_hand():
    net = topology.drop_users(topology.hex_grid(n_rings=0), 40, rng=1)
    links = radio.link_table(net, n_candidates=3, rng=2)
    drop = Drop.from_network(net, links, alpha=2.0)
    assert drop.problem.alpha == 2.0 and drop.seed is None
    assert drop.problem.n_users == int(drop.solvable.sum())
    users, cells = drop.frames(cellopt.solve(drop.problem, "dual"))
    assert len(users) == 40 and len(cells) == net.n_cells


# ---------------------------------------------------------------------------- ergonomics
def run_python(code: str, cwd: Path) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_cellopt_loads_no_heavy_dependency(tmp_path):
    """`import cellopt` took 2.6 s: it imported cvxpy, geopandas and matplotlib up front."""
    loaded = run_python("import sys, cellopt; print(' '.join(sorted(sys.modules)))", tmp_path).split()
    for heavy in ("cvxpy", "geopandas", "matplotlib", "scipy", "pandas", "shapely", "pyproj"):
        assert heavy not in loaded, f"import cellopt imports {heavy}"


def test_loading_and_building_a_scenario_loads_no_plotting_or_gis_writer(tmp_path):
    """Loading a scenario imported matplotlib, rasterio (GDAL) and pyogrio, which only
    runs, reports and raster predictions need."""
    code = ("import sys, cellopt; cellopt.load_scenario('hetnet').build(seed=1); "
            "print(' '.join(sorted(sys.modules)))")
    loaded = run_python(code, tmp_path).split()
    for heavy in ("matplotlib", "rasterio", "pyogrio", "cellopt.study.report", "cellopt.study.run"):
        assert heavy not in loaded, f"loading and building a scenario imports {heavy}"


@pytest.mark.slow
def test_study_functions_are_reachable_after_import_cellopt(tmp_path):
    """`cellopt.capacity...` and `cellopt.scenario...` used to raise AttributeError."""
    out = run_python("import cellopt; print(cellopt.capacity.__module__, cellopt.load_scenario('hetnet')"
                     ".name, cellopt.study.sweep.run_sweep.__name__, cellopt.run_scenario.__name__)",
                     tmp_path)
    assert out.split() == ["cellopt.study.capacity", "hetnet", "run_sweep", "run_scenario"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        cellopt.nope  # noqa: B018


@pytest.mark.slow
def test_shipped_scenarios_run_by_name_from_any_folder(tmp_path):
    """`cellopt run hetnet` failed, and only worked from the repository root."""
    code = ("from cellopt.cli import main; import sys; sys.exit(main(['run', 'macro_3gpp', "
            "'--method', 'max_rsrp', '--no-report', '--out', 'out']))")
    out = run_python(code, tmp_path)
    assert "scenario 'macro_3gpp'" in out and (tmp_path / "out" / "user_rates.csv").is_file()


def test_an_unknown_scenario_name_lists_the_shipped_ones(tmp_path):
    with pytest.raises(ValidationError, match=r"hetnet.*macro_3gpp.*sf_femto"):
        load_scenario("hetnte")


def test_cellopt_help_loads_no_heavy_dependency(tmp_path):
    """`cellopt --help` took 4 s: the CLI imported the whole library to print its usage."""
    code = ("import sys\nfrom cellopt.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
            "    pass\nprint(' '.join(sorted(sys.modules)), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60)
    assert "usage: cellopt" in out.stdout
    for heavy in ("cvxpy", "geopandas", "matplotlib", "numpy"):
        assert heavy not in out.stderr.split(), f"cellopt --help imports {heavy}"


def test_sweeps_and_capacity_sweeps_write_one_meta_schema(tmp_path):
    """Two engines used to write meta.json in two schemas."""
    import json

    from helpers.small_scenario import small_scenario

    from cellopt.study import capacity_sweep, run_sweep

    path = tmp_path / "small.toml"
    path.write_text(small_scenario(1), encoding="utf-8")
    scenario = load_scenario(path)
    run_sweep(scenario, tmp_path / "sweep", progress=False)
    capacity_sweep(scenario, tmp_path / "capacity", methods=["max_rsrp"], replicates=1, drops=1,
                   progress=False, rel_tol=0.5, target_p5_mbps=0.1)
    sweep, cap = (json.loads((tmp_path / f / "meta.json").read_text()) for f in ("sweep", "capacity"))
    common = {"kind", "cellopt_version", "scenario", "scenario_sha256", "settings", "started",
              "resumed", "drop_seeds", "grid_points"}
    assert common <= set(sweep) and common <= set(cap)
    assert (sweep["kind"], cap["kind"]) == ("sweep", "capacity")
    assert sweep["scenario_sha256"] == cap["scenario_sha256"]
    assert sweep["settings"]["seed_base"] == cap["settings"]["seed_base"] == 3
    # A folder of one kind is not resumed as the other.
    with pytest.raises(cellopt.StoreError, match="another kind"):
        run_sweep(scenario, tmp_path / "capacity", resume=True, progress=False)


def test_the_docs_and_code_stand_alone():
    """Docstrings and docs cited design notes and issue numbers a reader does not have."""
    import re

    root = ROOT
    files = [*root.glob("cellopt/**/*.py"), *root.glob("docs/**/*.md"), *root.glob("docs/**/*.py"),
             *root.glob("experiments/*.py"), *root.glob("benchmarks/*.py"), root / "README.md"]
    pattern = re.compile(r"DESIGN|\b[Ii]ssues? \d|[Cc]omes next|\bTODO\b|\bFIXME\b")
    hits = [f"{f.relative_to(root)}:{n}" for f in files
            for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
            if pattern.search(line)]
    assert not hits, hits


def test_mean_ci_by_hand():
    from cellopt.study.summary import mean_ci

    mean, half = mean_ci(np.array([[1.0, 10.0], [2.0, 10.0], [3.0, 10.0]]))
    assert mean.tolist() == [2.0, 10.0]
    assert half == pytest.approx([1.96 / np.sqrt(3), 0.0])  # sample sd 1 and 0
    assert mean_ci(np.array([5.0]))[1] == 0.0  # one sample: no interval


def test_every_gap_in_the_tables_is_to_the_runs_best_bound(run):
    """max-RSRP reported the gap to its own loose bound (0.79 where its distance to the
    run's best bound was 0.24), and the convergence figure drew that bound as a dot far
    above every objective."""
    from cellopt.solvers.certificate import certified_gap
    from cellopt.study.runviews import plot_bounds

    best = run.solutions["optimized"]
    baseline = run.solutions["max_rsrp"]
    assert baseline.upper_bound > best.upper_bound  # its own bound is the looser one
    summary = pd.read_csv(run.files[0].parent / "method_summary.csv", index_col="method")
    expected = certified_gap(run.drop.problem, best.upper_bound, baseline.objective,
                             baseline.utility)
    row = summary.loc["max_rsrp"]
    assert row["upper_bound"] == pytest.approx(best.upper_bound)
    assert row["gap"] == pytest.approx(expected) and row["gap"] < baseline.gap
    assert row["bound_from"] == "optimized"
    np.testing.assert_allclose(summary["upper_bound"], best.upper_bound, rtol=1e-12)
    assert (summary["bound_from"] == "optimized").all()
    # the figure follows: one line for the run's best bound, no baseline's own bound
    ax = plot_bounds(run)
    labels = [line.get_label() for line in ax.get_lines()]
    assert "best upper bound of the run (optimized)" in labels
    assert "max_rsrp upper bound" not in labels and "max_rsrp objective" in labels
    line = next(x for x in ax.get_lines() if x.get_label().startswith("best upper bound"))
    assert set(line.get_ydata()) == {best.upper_bound}
    ax.figure.clf()


def test_a_sweeps_gaps_are_to_each_drops_best_bound(tmp_path):
    from cellopt.study.sweep import run_sweep

    path = tmp_path / "outputs.toml"
    path.write_text(SCENARIO.replace("[deploy]", "[deploy]\nenabled = false"), encoding="utf-8")
    scenario = load_scenario(path)
    index = run_sweep(scenario, tmp_path / "sweep", drops=1, progress=False)
    rows = index.set_index("method")
    drop = scenario.build(int(rows["seed"].iloc[0]))
    own = scenario.runs[0].solve(scenario, drop)
    assert rows.loc["max_rsrp", "upper_bound"] == pytest.approx(rows.loc["optimized", "upper_bound"])
    assert rows.loc["max_rsrp", "gap"] < own.gap
