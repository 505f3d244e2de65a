"""Scenario keys for traffic where people are: random layouts, co-located users, finite
demand, load coupling and the demand-based capacity metric."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial import cKDTree

from cellopt import ValidationError, solve
from cellopt.radio.pathloss import SingleSlope
from cellopt.study.capacity import capacity, capacity_sweep, served_share
from cellopt.study.scenario import load_scenario

RANDOM = """
methods = ["max_rsrp", "alm"]

[network]
builder = "poisson"
side_m = 800.0

[network.tiers.macro]
density_per_km2 = 6.0

[network.tiers.femto]
density_per_km2 = 40.0

[users]
n = 120
indoor_fraction = 0.8
colocated_fraction = 0.6
demand_mbps = {distribution = "lognormal", median = 1.0, sigma = 0.5}

[radio]
n_candidates = 4
pathloss_exponent = {macro = 3.5, femto = 4.0}

[problem]
interference = "load_coupled"

[seeds]
base = 2
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(textwrap.dedent(text))
    return path


def edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new)


def test_random_layout_with_colocated_users_and_demand_builds(tmp_path):
    scn = load_scenario(write(tmp_path, RANDOM))
    model = scn.radio_model()
    assert model.pathloss["macro"] == SingleSlope(3.5) and model.pathloss["femto"] == SingleSlope(4.0)
    drop = scn.build()
    net = drop.network
    assert set(net.cells["tier"]) == {"macro", "femto"}
    assert net.wrap_shifts_m is not None and len(net.wrap_shifts_m) == 9
    demand = net.users["demand_mbps"].to_numpy()
    assert (demand > 0).all() and np.isfinite(demand).all() and demand.std() > 0
    # co-located users: indoors, within the building radius of a femtocell
    femto = net.cells[net.cells["tier"] == "femto"]
    d, _ = cKDTree(np.column_stack([femto.geometry.x, femto.geometry.y])).query(
        np.column_stack([net.users.geometry.x, net.users.geometry.y]))
    indoor = net.users["indoor"].to_numpy()
    assert (d[indoor] <= 15.0).mean() > 0.4
    assert drop.coupling is not None
    sol = drop.solve("alm")
    assert sol.load_coupling is not None and sol.bound_kind == "fixed_loads"
    users, cells = drop.frames(sol)
    assert users["rate_mbps"].to_numpy()[drop.solvable] == pytest.approx(sol.user_rate_mbps)
    assert cells["load"].to_numpy() == pytest.approx(sol.load_coupling["load"], abs=1e-8)


def test_full_buffer_is_the_plain_solve(tmp_path):
    text = edit(RANDOM, 'interference = "load_coupled"', 'interference = "full"')
    drop = load_scenario(write(tmp_path, text)).build()
    assert drop.coupling is None
    a, b = drop.solve("alm"), solve(drop.problem, "alm")
    assert np.array_equal(a.x, b.x) and a.objective == b.objective and a.load_coupling is None


def test_default_drops_do_not_move():
    """The new keys at their defaults leave a shipped drop as it was (values frozen before
    the keys existed). `hetnet` itself has since taken TR 36.814 Case 1's penetration
    loss, minimum distance and correlated shadowing; with those set back, every draw is
    where it was."""
    drop = load_scenario("hetnet").with_overrides(
        users={"n": 50, "indoor_fraction": 0.0, "min_distance_m": 0.0},
        radio={"site_correlation": 0.0}).build(5)
    xy = np.column_stack([drop.network.users.geometry.x, drop.network.users.geometry.y])
    assert drop.coupling is None
    assert np.isfinite(xy).all() and drop.network.users["demand_mbps"].eq(np.inf).all()
    assert float(drop.links.rate_mbps.sum()) == FROZEN_HETNET_RATE_SUM


#: Sum of the link rates of hetnet's drop with seed 5 and 50 users, before random layouts,
#: co-located users, demand distributions and load coupling were added.
FROZEN_HETNET_RATE_SUM = 803.6296695239491


@pytest.mark.parametrize("old, new, message", [
    ("demand_mbps = {distribution", "demand_mbps = -1.0\n#", "demand_mbps"),
    ("median = 1.0", "median = -1.0", "median"),
    ('demand_mbps = {distribution = "lognormal", median = 1.0, sigma = 0.5}',
     'demand_mbps = {distribution = "uniform", low = 0.0, high = 2.0}', "low > 0"),
    ("colocated_fraction = 0.6", "colocated_fraction = 1.5", "colocated_fraction"),
    ("colocated_fraction = 0.6", "colocated_fraction = -0.1", "colocated_fraction"),
    ("density_per_km2 = 6.0", "density_per_km2 = 0.0", "density_per_km2"),
    ("density_per_km2 = 6.0", "density_per_km2 = -3.0", "density_per_km2"),
    ("density_per_km2 = 6.0", "density_per_km2 = 6.0\nsectors = 2", "sectors"),
    ("density_per_km2 = 6.0", "density_per_km2 = 6.0\nbeam = 2", "beam"),
    ("[network.tiers.macro]", "[network.tiers.giant]", "giant"),
    ("side_m = 800.0", "side_m = -5.0", "side_m"),
    ("macro = 3.5", "macro = 0.0", "pathloss_exponent"),
    ("macro = 3.5", "tower = 3.5", "tower"),
    ('interference = "load_coupled"', 'interference = "partial"', "interference"),
    ('interference = "load_coupled"', 'interference = "load_coupled"\nn_interferers = 0',
     "n_interferers"),
    ("[network.tiers.femto]\ndensity_per_km2 = 40.0", "", "colocated_fraction"),
    ("indoor_fraction = 0.8", "indoor_fraction = 0.8\ncluster_tier = \"giant\"", "cluster_tier"),
])
def test_bad_values_are_named(tmp_path, old, new, message):
    with pytest.raises(ValidationError, match=message):
        load_scenario(write(tmp_path, edit(RANDOM, old, new))).build()


def test_load_coupling_needs_one_band(tmp_path):
    text = """
    [network]
    builder = "hex_grid"
    n_rings = 1
    resource_mhz = [5.0, 5.0]
    [users]
    n = 10
    [problem]
    interference = "load_coupled"
    """
    with pytest.raises(ValidationError, match="one band"):
        load_scenario(write(tmp_path, text))


def test_served_share_counts_met_demands():
    rate = np.array([1.0, 0.9995, 0.5, 3.0])
    assert served_share(rate, np.array([1.0, 1.0, 1.0, np.inf])) == 0.5
    assert np.isnan(served_share(np.zeros(0), np.zeros(0)))


def test_demand_capacity_metric(tmp_path):
    text = edit(RANDOM, "n = 120", "density_per_km2 = 100.0")
    scn = load_scenario(write(tmp_path, text))
    res = capacity(scn, metric="demand", target_served_share=0.9, drops=1, method="max_rsrp",
                   first_guess_per_km2=100.0, rel_tol=0.3, max_evals=12)
    ev = res.evaluations
    assert res.metric == "demand" and res.status == "solved"
    assert 0 < res.capacity_per_km2 < res.upper_per_km2 < np.inf
    at = ev.set_index("density_per_km2")
    assert at.loc[res.capacity_per_km2, "served_share"] >= 0.9
    assert at.loc[res.upper_per_km2, "served_share"] < 0.9
    assert ev["meets_target"].tolist() == (ev["served_share"] >= 0.9).tolist()


def test_demand_metric_refuses_full_buffer(tmp_path):
    text = edit(RANDOM, 'demand_mbps = {distribution = "lognormal", median = 1.0, sigma = 0.5}',
                "demand_mbps = inf")
    scn = load_scenario(write(tmp_path, text))
    with pytest.raises(ValidationError, match="demand_mbps is inf"):
        capacity(scn, metric="demand")
    with pytest.raises(ValidationError, match="metric"):
        capacity(scn, metric="median")
    with pytest.raises(ValidationError, match="target_served_share"):
        capacity(scn, metric="p5_rate", target_served_share=1.5)


def test_demand_capacity_sweep_resumes(tmp_path):
    text = edit(RANDOM, "n = 120", "density_per_km2 = 100.0")
    scn = load_scenario(write(tmp_path, text))
    kwargs = dict(methods=["max_rsrp"], replicates=1, drops=1, metric="demand", progress=False,
                  first_guess_per_km2=100.0, rel_tol=0.5)
    table = capacity_sweep(scn, tmp_path / "cap", **kwargs)
    assert table["metric"].tolist() == ["demand"] and table["target_served_share"].tolist() == [0.95]
    again = capacity_sweep(scn, tmp_path / "cap", resume=True, **kwargs)
    assert again["capacity_per_km2"].tolist() == table["capacity_per_km2"].tolist()


def test_tier_schema_matches_the_builder():
    from cellopt.study.schema import POISSON_TIER_KEYS
    from cellopt.topology.poisson import TIER_KEYS

    assert set(POISSON_TIER_KEYS) == set(TIER_KEYS)


@pytest.mark.slow
def test_cellopt_run_writes_a_load_coupled_drop(tmp_path):
    import pandas as pd

    from cellopt.study.run import run_scenario

    scn = load_scenario(write(tmp_path, RANDOM))
    run_scenario(scn, tmp_path / "out", report=False)
    summary = pd.read_csv(tmp_path / "out" / "method_summary.csv")
    assert summary["method"].tolist() == ["max_rsrp", "alm"]
    assert set(summary["status"]) <= {"optimal", "solved"}
    cells = pd.read_csv(tmp_path / "out" / "cell_stats.csv")
    assert (cells["load"] < 1).any()  # cells with little traffic go quiet
    users = pd.read_csv(tmp_path / "out" / "user_rates.csv")
    assert (users["rate_mbps"] <= users["demand_mbps"] * (1 + 1e-9)).all()
