"""Power optimization from scenario files: the [power] section, its checks, and its outputs.

The power run of a scenario (a :class:`~cellopt.study.runkinds.PowerRun`) is solved beside
the association methods; its tables (per-user, per-cell with mean power and share off, per-pattern) and
summary columns are checked against the solution's own power record.
"""

from __future__ import annotations

import dataclasses
import sqlite3

import numpy as np
import pandas as pd
import pytest
from helpers import problems

import cellopt
from cellopt import cli
from cellopt.drop import Drop
from cellopt.power import GainTable, PowerProblem, solve_power
from cellopt.study.run import run_scenario
from cellopt.study.runkinds import PowerRun
from cellopt.study.scenario import Scenario, load_scenario
from cellopt.study.tables import POWER_PATTERN_COLUMNS

#: 4 omni macros and 4 picos (256 patterns of on/off: exact pricing), 40 users.
TINY = """
methods = ["max_rsrp", "alm"]

[network]
builder = "square_grid"
n_side = 2
spacing_m = 400.0

[picos]
per_sector = 1

[users]
n = 40
clustered_fraction = 0.5
demand_mbps = 3.0

[radio]
n_candidates = 4

[power]
levels_db = {macro = [0, "off"], pico = [0, "off"]}
energy_price_per_w = 0.01
{extra}

[seeds]
base = 5

[deploy]     # the deployable settings on few drops (tests/deploy/test_deploy_run.py: the defaults)
training_drops = 2
held_out_drops = 1
"""


def tiny(tmp_path, extra: str = "", name: str = "tiny.toml") -> Scenario:
    path = tmp_path / name
    path.write_text(TINY.replace("{extra}", extra))
    return load_scenario(path)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """The tiny scenario run into a folder: (scenario, RunResult)."""
    folder = tmp_path_factory.mktemp("power_run")
    scenario = tiny(folder)
    return scenario, run_scenario(scenario, folder / "out")


# ---------------------------------------------------------------------- the section
def test_the_section_reads_off_levels_and_defaults(tmp_path):
    scenario = tiny(tmp_path)
    spec = scenario.power
    assert isinstance(spec, PowerRun) and spec.name == "power" and spec.label == "power (ipm)"
    assert spec.options["levels_db"] == {"macro": [0.0, None], "pico": [0.0, None]}
    assert spec.options["energy_price_per_w"] == 0.01
    assert [s.label for s in scenario.runs] == ["max_rsrp", "alm", "power (ipm)"]
    assert load_scenario("hetnet").power is None  # the shipped default has none
    one_list = tiny(tmp_path, "", "b.toml").with_overrides(
        power={"levels_db": [0, -10, "off"], "label": "mine", "master_method": "dual"}).power
    assert one_list.options["levels_db"] == [0.0, -10.0, None] and one_list.label == "mine"


@pytest.mark.parametrize(("power", "expected"), [
    ({"levels_db": [3, "off"]}, ["levels_db", "≤ 0 dB"]),
    ({"levels_db": []}, ["levels_db is empty"]),
    ({"levels_db": [0, "of"]}, ["[power] key 'levels_db'", "expected array of levels"]),
    ({"levels_db": {"macro": [0], "pico": [0], "femto": [0, "off"]}},
     ["femto", "does not get"]),
    ({"levels_db": {"pico": [0, "off"]}}, ["no level list for tiers ['macro']"]),
    ({"levels_db": {"macro": [0], "relay": [0]}}, ["unknown tiers ['relay']"]),
    ({"energy_price_per_w": -0.1}, ["energy_price_per_w", "price ≥ 0"]),
    ({"max_iter": 0}, ["max_iter", "≥ 1"]),
    ({"max_iter": 2.5}, ["max_iter", "whole number"]),
    ({"tol": 0.0}, ["tol"]),
    ({"time_limit_s": 0.0}, ["time_limit_s", "> 0"]),
    ({"master_method": "newton"}, ["master_method", "newton"]),
    ({"n_interferers": 2}, ["n_interferers", "n_candidates = 4"]),
    ({"label": "alm"}, ["label 'alm'", "distinct"]),
    ({"levels": [0]}, ["unknown key 'levels'"]),
])
def test_bad_power_input_names_the_key_and_the_fix(tmp_path, power, expected):
    scenario = tiny(tmp_path)
    with pytest.raises(cellopt.ValidationError) as err:
        scenario.with_overrides(power=power)
    text = str(err.value)
    assert "[power]" in text and any(w in text for w in ("fix", "expected", "valid:")), text
    for part in expected:
        assert part in text, text


@pytest.mark.parametrize(("override", "expected"), [
    ({"problem": {"interference": "load_coupled"}}, "interference = 'full'"),
    ({"methods": ["max_rsrp", "power"]}, "describe it in a [power] section"),
])
def test_power_that_cannot_run_is_refused_when_loaded(tmp_path, override, expected):
    with pytest.raises(cellopt.ValidationError, match="fix") as err:
        tiny(tmp_path).with_overrides(**override)
    assert expected in str(err.value)


def test_subbands_are_refused(tmp_path):
    with pytest.raises(cellopt.ValidationError, match=r"\[power\] needs one band"):
        load_scenario("macro_3gpp").with_overrides(
            network={"resource_mhz": [5.0, 5.0]}, power={"levels_db": [0, "off"]})


# ---------------------------------------------------------------------- solving and tables
@pytest.mark.slow
def test_the_power_run_is_exact_and_its_tables_agree_with_its_record(tiny_run):
    _, result = tiny_run
    sol = result.solutions["power (ipm)"]
    power = sol.power
    assert sol.status == "optimal" and power.bound_kind == "exact"  # 64 patterns: enumerated
    assert power.bound_info["bound_factor"] <= 1 + 1e-4
    users = result.users[result.users["method"] == "power (ipm)"]
    cells = result.cells[result.cells["method"] == "power (ipm)"]
    np.testing.assert_allclose(users["rate_mbps"], result.drop.per_user(sol.user_rate_mbps))
    # every share of the band a user gets is a share some cell gives
    np.testing.assert_allclose(users["airtime_share"].sum(), cells["load"].sum(), rtol=1e-9)
    assert (cells["load"] <= 1 + 1e-9).all() and (users["airtime_share"] >= 0).all()
    off = power.pattern_share @ np.isneginf(power.patterns)
    np.testing.assert_allclose(cells["share_off"], off)
    mean_w = power.pattern_share @ (10.0 ** (power.patterns / 10.0) * 1e-3)
    np.testing.assert_allclose(cells["mean_power_w"], mean_w, rtol=1e-12)
    np.testing.assert_allclose(cells["mean_power_w"].sum(), power.energy_w, rtol=1e-12)
    served = users["serving_cell_id"].notna()
    assert np.isfinite(users.loc[served, "sinr_db"]).all()
    # a fixed-power method: every cell at full power, never off
    fixed = result.cells[result.cells["method"] == "alm"]
    np.testing.assert_array_equal(fixed["mean_power_dbm"], fixed["tx_power_dbm"])
    assert (fixed["share_off"] == 0).all()


def test_the_summary_has_the_power_columns(tiny_run):
    _, result = tiny_run
    summary = result.method_summary
    sol = result.solutions["power (ipm)"]
    row = summary.loc["power (ipm)"]
    assert row["energy_w"] == pytest.approx(sol.power.energy_w)
    assert row["energy_cost"] == pytest.approx(sol.energy_cost)
    assert row["bound_factor"] == pytest.approx(sol.power.bound_info["bound_factor"])
    assert row["estimate_factor"] == pytest.approx(sol.power.bound_info["estimate_factor"])
    assert row["n_patterns"] == (sol.power.pattern_share > 0).sum()
    full_w = (10.0 ** (result.drop.network.cells["tx_power_dbm"] / 10.0)).sum() * 1e-3
    assert summary.loc["alm", "energy_w"] == pytest.approx(full_w)
    assert summary.loc["alm", "n_patterns"] == 1 and np.isnan(summary.loc["alm", "estimate_factor"])
    assert summary.loc["alm", "bound_factor"] == pytest.approx(1 + result.solutions["alm"].gap)


def test_the_pattern_table_and_layer_hold_every_cell_of_every_pattern(tiny_run):
    _, result = tiny_run
    out = result.files[0].parent
    sol = result.solutions["power (ipm)"]
    both = pd.read_csv(out / "power_patterns.csv")
    # the power run's mixture, and the schedule of subframes rounded from it (docs/deploy.md)
    assert list(dict.fromkeys(both["method"])) == ["power (ipm)", "schedule (40 subframes)"]
    table = both[both["method"] == "power (ipm)"]
    n_patterns, n_cells = sol.power.patterns.shape
    assert len(table) == n_patterns * n_cells
    assert list(table.columns) == ["method", "cell_id", "x_m", "y_m",  # the declared columns
                                   *(c.name for c in POWER_PATTERN_COLUMNS[1:])]
    shares = table.groupby("pattern")["pattern_share"].first().to_numpy()
    np.testing.assert_allclose(shares, sol.power.pattern_share)
    np.testing.assert_allclose(table["power_dbm"].to_numpy().reshape(n_patterns, n_cells),
                               sol.power.patterns)
    assert (table["off"] == np.isneginf(table["power_dbm"])).all()
    with sqlite3.connect(out / "results.gpkg") as db:
        layers = {r[0] for r in db.execute("SELECT table_name FROM gpkg_contents")}
        n_rows = db.execute("SELECT COUNT(*) FROM power_patterns_power_ipm").fetchone()[0]
        power_dbm = [r[0] for r in db.execute("SELECT power_dbm FROM power_patterns_power_ipm ORDER BY fid")]
    # a layer per method; power patterns only for the power run; off (−inf dBm) is null
    assert {"users_alm", "cells_alm", "users_power_ipm", "cells_power_ipm",
            "power_patterns_power_ipm"} <= layers and "power_patterns_alm" not in layers
    assert n_rows == len(table)
    assert [v is None for v in power_dbm] == list(table["off"])


def test_the_report_colours_cells_by_mean_power_and_share_off(tiny_run):
    _, result = tiny_run
    html = (result.files[0].parent / "report.html").read_text(encoding="utf-8")
    for key in ("by-load", "by-power", "by-off"):
        assert f'data-toggle="{key}"' in html and f'id="{key}-legend"' in html
    assert "mean power:" in html and "of the band" in html


@pytest.mark.slow
def test_a_run_without_power_offers_no_power_colouring(tmp_path):
    scenario = dataclasses.replace(tiny(tmp_path), power=None)
    result = run_scenario(scenario, tmp_path / "out", methods=scenario.methods)
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert 'data-toggle="by-load"' in html and 'data-toggle="by-power"' not in html
    assert not (tmp_path / "out" / "power_patterns.csv").exists()
    assert "energy_w" not in result.method_summary.columns


@pytest.mark.slow
def test_the_same_scenario_gives_the_same_power_answer(tmp_path, tiny_run):
    scenario, result = tiny_run
    again = scenario.power.solve(scenario, scenario.build(result.drop.seed))
    first = result.solutions["power (ipm)"]
    assert again.objective == first.objective and again.upper_bound == first.upper_bound
    np.testing.assert_array_equal(again.power.pattern_share, first.power.pattern_share)


@pytest.mark.slow
def test_a_search_run_stops_on_its_work_budget(tmp_path):
    scenario = tiny(tmp_path).with_overrides(power={"max_iter": 2, "levels_db": [0, -3, -6, "off"]})
    drop = scenario.build()
    sol = scenario.power.solve(scenario, drop)
    assert sol.status in ("max_iter", "optimal")
    assert len(sol.power.history) <= 2


# ---------------------------------------------------------------------- the power problem of a drop
@pytest.fixture(scope="module")
def outage_drop() -> Drop:
    """7 sites, 60 users of whom the last 3 are 30 km away (no usable link)."""
    return problems.outage_drop()


@pytest.mark.slow
def test_the_power_problem_of_a_drop_has_the_drops_users(outage_drop):
    drop = outage_drop
    problem = PowerProblem.from_drop(drop, levels_db=[0, None], n_interferers=8)
    assert problem.n_users == drop.problem.n_users == drop.network.n_users - 3
    np.testing.assert_array_equal(problem.weight, drop.problem.weight)
    sol = solve_power(problem, max_iter=3, progress=False)
    users, _ = drop.frames(sol)
    assert (users["rate_mbps"].iloc[-3:] == 0).all() and not users["usable"].iloc[-3:].any()
    # the full-power pattern's rates are the link table's (same gains, same users)
    full = problem.master(problem.space.full_power()[None])
    best = np.zeros(problem.n_users)
    np.maximum.at(best, full.user, full.rate_mbps)
    top = np.zeros(problem.n_users)
    np.maximum.at(top, drop.problem.user, drop.problem.rate_mbps)
    np.testing.assert_allclose(best, top, rtol=1e-9)


def test_gain_rows_and_sinrs_agree_with_the_rates(outage_drop):
    gains = GainTable.from_drop(outage_drop, n_interferers=8)
    power_mw = 10.0 ** (np.array([[46.0] * 21, [46.0, -np.inf] * 10 + [30.0]]) / 10.0)
    sinr = gains.sinr(power_mw)
    np.testing.assert_allclose(gains.rates_mbps(power_mw),
                               gains.bandwidth_mhz * gains.efficiency(sinr))
    kept = gains.take_users(outage_drop.solvable)
    assert kept.n_users == int(outage_drop.solvable.sum())
    np.testing.assert_array_equal(kept.sinr(power_mw), sinr[:, outage_drop.solvable])


# ---------------------------------------------------------------------- the command line
@pytest.mark.slow
def test_cli_runs_only_the_power_section_with_method_power(tmp_path, capsys):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY.replace("{extra}", ""))
    assert cli.main(["run", str(path), "--out", str(tmp_path / "o"), "--method", "power",
                     "--no-report"]) == 0
    summary = pd.read_csv(tmp_path / "o" / "method_summary.csv", index_col="method")
    assert list(summary.index) == ["power (ipm)"] and "bound_factor" in summary.columns
    assert "power_patterns.csv" in capsys.readouterr().out


def test_cli_method_power_without_a_section_names_the_fix(tmp_path, capsys):
    assert cli.main(["run", "macro_3gpp", "--out", str(tmp_path / "o"), "--method", "power"]) == 2
    err = capsys.readouterr().err
    assert "no [power] section" in err and "fix" in err


def test_capacity_runs_the_power_section_when_asked(tmp_path):
    scenario = tiny(tmp_path).with_overrides(power={"levels_db": [0, "off"], "max_iter": 2})
    result = cellopt.capacity(scenario, method="power", metric="demand", drops=1,
                              first_guess_per_km2=20.0, max_evals=2)
    assert len(result.evaluations) == 2
    with pytest.raises(cellopt.ValidationError, match=r"has none; fix"):
        cellopt.capacity(load_scenario("macro_3gpp"), method="power")
    with pytest.raises(cellopt.ValidationError, match=r"options \['tol'\] are not used; fix"):
        cellopt.capacity(scenario, method="power", tol=1e-3)


def test_the_shipped_power_scenario_loads_and_says_what_it_runs():
    scenario = load_scenario("hetnet_power")
    assert scenario.power is not None and scenario.power.options["max_iter"] == 20
    assert scenario.runs[-1] is scenario.power


def test_cli_progress_explains_what_stopped_column_generation(tmp_path, capsys):
    """With --progress the power run shows a bar per phase and ends with the stop in
    words: what ended column generation after how many of its iterations, and the bound."""
    path = tmp_path / "tiny.toml"
    path.write_text(TINY.replace("{extra}", "max_iter = 2"))
    assert cli.main(["run", str(path), "--out", str(tmp_path / "o"), "--method", "power",
                     "--no-report", "--progress"]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if "power (ipm):" in x and "stopped after" in x)
    assert "column generation stopped after" in line and "of at most 2 iterations" in line
    assert "master iterations" in line and "bound factor" in line
    assert "solve_power: column generation" in err
