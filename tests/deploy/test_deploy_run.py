"""Deployable settings in `cellopt run`: cell_config.csv, the judgement, the tables, the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyogrio
import pytest

import cellopt
from cellopt import cli, deploy
from cellopt.errors import ResourceLimitError, ValidationError
from cellopt.study import run_scenario
from cellopt.study.deployment import OFFSETS_RULE, TIER_RULE, extra_drop_seed, schedule_rule

SMALL = {"network": {"n_rings": 1}, "picos": {"per_sector": 1}, "users": {"n": 90},
         "deploy": {"training_drops": 3, "held_out_drops": 2}, "coverage": {"enabled": False}}


def small(**changes):
    return cellopt.load_scenario("hetnet").with_overrides(**{**SMALL, **changes})


@pytest.fixture(scope="module")
def hetnet_run(tmp_path_factory):
    return run_scenario(small(), tmp_path_factory.mktemp("deploy") / "out", report=False)


@pytest.fixture(scope="module")
def power_run(tmp_path_factory):
    scenario = cellopt.load_scenario("hetnet_power").with_overrides(
        users={"n": 60}, power={"max_iter": 2}, coverage={"enabled": False},
        deploy={"training_drops": 2, "held_out_drops": 1, "subframes": 20})
    return run_scenario(scenario, tmp_path_factory.mktemp("deploy_power") / "out", report=False)


@pytest.mark.slow
def test_cell_config_is_written_with_offsets_from_the_value_set(hetnet_run):
    out = hetnet_run.files[0].parent
    config = pd.read_csv(out / "cell_config.csv")
    cells = hetnet_run.drop.network.cells
    assert list(config.columns) == ["cell_id", "site_id", "tier", "offset_db"]
    assert list(config["cell_id"]) == list(cells["cell_id"])
    assert list(config["site_id"]) == list(cells["site_id"])
    assert set(config["offset_db"]) <= set(deploy.Q_OFFSET_RANGE)
    np.testing.assert_array_equal(config["offset_db"], hetnet_run.deployment.offsets.to_numpy())
    # the file, read back by cell id, is a configuration evaluate() takes
    offsets = config.set_index("cell_id")["offset_db"]
    sol = deploy.evaluate(hetnet_run.drop, offsets, bound=hetnet_run.solutions["optimized (dual)"])
    assert sol.objective == hetnet_run.solutions[OFFSETS_RULE].objective


def test_the_rules_join_every_table(hetnet_run):
    out = hetnet_run.files[0].parent
    summary = pd.read_csv(out / "method_summary.csv", index_col="method")
    for rule in (OFFSETS_RULE, TIER_RULE):
        assert rule in summary.index
        row = summary.loc[rule]
        assert row["training_drops"] == 3 and row["held_out_drops"] == 2
        assert 0.0 <= row["held_out_gap"] and np.isfinite(row["held_out_kept_share"])
        assert row["upper_bound"] == pytest.approx(summary.loc["optimized (dual)", "upper_bound"])
    assert summary["held_out_kept_share"].isna()["max_rsrp"]
    drops = pd.read_csv(out / "deploy_drops.csv")
    assert list(drops.columns[:4]) == ["rule", "split", "drop", "seed"]
    assert sorted(drops.groupby(["rule", "split"]).size().unique()) == [2, 3]
    held = drops[drops["split"] == "held_out"]
    seed = hetnet_run.drop.seed
    assert set(held["seed"]) == {extra_drop_seed(seed, "held_out", k) for k in range(2)}
    layers = {name for name, _ in pyogrio.list_layers(out / "results.gpkg")}
    cells = pyogrio.read_dataframe(out / "results.gpkg", layer=next(
        n for n in layers if n.startswith("cells_") and "per_cell" in n))
    np.testing.assert_array_equal(cells["offset_db"], hetnet_run.deployment.offsets.to_numpy())
    stats = pd.read_csv(out / "cell_stats.csv")
    assert (stats.loc[stats["method"] == "max_rsrp", "offset_db"] == 0).all()
    assert stats.loc[stats["method"] == "optimized (dual)", "offset_db"].isna().all()
    tier6 = stats.loc[stats["method"] == "RE 6 dB"]
    assert (tier6.loc[tier6["tier"] == "pico", "offset_db"] == 6.0).all()


def test_held_out_drops_have_the_cells_and_new_users(hetnet_run):
    scenario, drop = hetnet_run.scenario, hetnet_run.drop
    held = scenario.build(extra_drop_seed(drop.seed, "held_out", 0), cell_seed=drop.seed)
    pd.testing.assert_frame_equal(held.network.cells, drop.network.cells)
    assert not np.array_equal(held.network.users.geometry.x, drop.network.users.geometry.x)


@pytest.mark.slow
def test_the_same_run_gives_the_same_settings(hetnet_run, tmp_path):
    again = run_scenario(small(), tmp_path / "again", report=False)
    pd.testing.assert_series_equal(again.deployment.offsets, hetnet_run.deployment.offsets)
    pd.testing.assert_frame_equal(again.deployment.judgements, hetnet_run.deployment.judgements)


@pytest.mark.slow
def test_deploy_can_be_switched_off_and_needs_an_optimizer(tmp_path):
    off = run_scenario(small(deploy={"enabled": False}), tmp_path / "off", report=False)
    assert off.deployment is None and not (tmp_path / "off" / "cell_config.csv").exists()
    plain = run_scenario(small(methods=["max_rsrp"]), tmp_path / "plain", report=False)
    assert plain.deployment is None
    with pytest.raises(ValidationError, match="name the deployable settings"):
        run_scenario(small(methods=["max_rsrp", {"name": "dual", "label": OFFSETS_RULE}]),
                     tmp_path / "clash", report=False)


@pytest.mark.slow
def test_a_rerun_without_deploy_removes_the_earlier_cell_config(tmp_path):
    out = tmp_path / "out"
    run_scenario(small(), out, report=False)
    assert (out / "cell_config.csv").exists()
    result = run_scenario(small(deploy={"enabled": False}), out, report=False)
    assert not (out / "cell_config.csv").exists() and not (out / "deploy_drops.csv").exists()
    assert {p.name for p in result.removed} >= {"cell_config.csv", "deploy_drops.csv"}


@pytest.mark.slow
def test_the_schedule_of_a_power_run(power_run):
    deployment = power_run.deployment
    schedule = deployment.schedule
    out = power_run.files[0].parent
    config = pd.read_csv(out / "cell_config.csv", dtype={"schedule": str})
    assert list(config.columns) == ["cell_id", "site_id", "tier", "offset_db", "schedule", "share_off",
                                    "mean_power_w", "energy_saved_w", "sleep"]
    assert (config["schedule"].str.len() == 20).all()
    assert set("".join(config["schedule"])) <= set("012-")
    off = np.array([s.count("-") for s in config["schedule"]]) / 20
    np.testing.assert_allclose(config["share_off"], off)
    np.testing.assert_array_equal(config["sleep"], off >= deployment.sleep_share_off)
    assert (config["energy_saved_w"] >= -1e-12).all()
    rule = schedule_rule(20)
    assert rule in power_run.solutions and schedule.n_subframes == 20
    summary = power_run.method_summary
    assert summary.loc[rule, "training_drops"] == 1 and summary.loc[rule, "held_out_drops"] == 1
    mixture = power_run.solutions["power + association (ipm)"]
    assert summary.loc[rule, "upper_bound"] == pytest.approx(mixture.upper_bound)
    assert power_run.solutions[rule].objective <= mixture.upper_bound


@pytest.mark.slow
def test_the_cli_prints_a_line_a_planner_can_act_on(tmp_path, capsys):
    path = tmp_path / "small.toml"
    path.write_text("""
methods = ["max_rsrp", "dual"]
[network]
builder = "hex_grid"
n_rings = 1
[picos]
per_sector = 1
[users]
n = 60
clustered_fraction = 0.5
[deploy]
training_drops = 2
held_out_drops = 2
""", encoding="utf-8")
    assert cli.main(["run", str(path), "--out", str(tmp_path / "out"), "--no-report"]) == 0
    printed = capsys.readouterr().out
    assert "per-cell offsets keep" in printed and "on 2 held-out drops" in printed
    assert "(best per-tier bias:" in printed and "cell_config.csv" in printed
    assert "offsets fitted on 2 drops in" in printed


def test_training_drops_that_would_not_fit_are_refused_before_solving(tmp_path, monkeypatch):
    scenario = small(deploy={"training_drops": 16})
    monkeypatch.setenv("CELLOPT_MAX_MEMORY_GB", "0.001")
    with pytest.raises(ResourceLimitError, match=r"\[deploy\] training_drops = 16 drops of 90 users"):
        run_scenario(scenario, tmp_path / "out", report=False)
    assert not (tmp_path / "out" / "method_summary.csv").exists()


def test_bad_deploy_keys_name_the_key(tmp_path):
    for section, match in (({"held_out_drops": -1}, "held_out_drops"),
                           ({"values_db": []}, "values_db is empty"),
                           ({"subframes": 0}, "subframes"),
                           ({"sleep_share_off": 1.5}, "sleep_share_off"),
                           ({"training_drop": 3}, "training_drop")):
        with pytest.raises(ValidationError, match=match):
            small(deploy=section)
