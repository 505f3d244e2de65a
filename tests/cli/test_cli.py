"""The command line: `cellopt run SCENARIO.toml` on the shipped HetNet scenario."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.small_scenario import small_scenario

from cellopt import cli
from cellopt.errors import StoreError
from cellopt.study.run import run_scenario
from cellopt.study.scenario import SHIPPED_DIR, load_scenario
from cellopt.study.store import check_owner, default_folder
from cellopt.study.summary import sweep_table

HETNET = SHIPPED_DIR / "hetnet.toml"


@pytest.mark.slow
def test_run_writes_summary_tables_and_figures(tmp_path, capsys):
    assert cli.main(["run", str(HETNET), "--out", str(tmp_path)]) == 0
    for name in ("method_summary.csv", "radio_summary.csv", "user_rates.csv",
                 "network_map.png", "rate_cdf.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    summary = pd.read_csv(tmp_path / "method_summary.csv", index_col="method")
    assert list(summary.index) == ["max_rsrp", "RE 0 dB", "RE 3 dB", "RE 6 dB", "RE 9 dB",
                                   "load_aware", "optimized (dual)", "per-cell offsets",
                                   "best per-tier bias"]
    best = summary.loc["optimized (dual)"]
    assert best["gap"] <= 1e-4
    # No method beats the optimizer's certified upper bound.
    assert (summary["objective"] <= best["upper_bound"] + 1e-9).all()
    assert "optimized (dual)" in capsys.readouterr().out


@pytest.mark.slow
def test_run_with_chosen_methods(tmp_path):
    assert cli.main(["run", str(HETNET), "--out", str(tmp_path), "--method", "max_rsrp",
                     "--method", "dual", "--seed", "3"]) == 0
    summary = pd.read_csv(tmp_path / "method_summary.csv", index_col="method")
    assert list(summary.index) == ["max_rsrp", "dual", "per-cell offsets", "best per-tier bias"]


def test_bad_input_is_a_clear_error_not_a_traceback(tmp_path, capsys):
    assert cli.main(["run", str(HETNET), "--out", str(tmp_path), "--method", "magic"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cellopt: error: ") and "'magic'" in err and "fix:" in err
    assert cli.main(["experiment", str(HETNET), "--out", str(tmp_path / "x"),
                     "--grid", "picos.per_sector"]) == 2
    assert "section.key=v1,v2" in capsys.readouterr().err


@pytest.mark.slow
def test_experiment_then_plot(tmp_path, capsys):
    scenario = tmp_path / "small.toml"
    scenario.write_text(HETNET.read_text().replace("n = 2000 ", "n = 150 "))
    out = tmp_path / "res"
    assert cli.main(["experiment", str(scenario), "--drops", "2", "--grid",
                     "picos.per_sector=1,2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "gain_p5" in text and "optimized (dual)" in text
    index = pd.read_csv(out / "index.csv")
    assert set(index["grid_id"]) == {"g000", "g001"} and set(index["drop"]) == {0, 1}
    for png in ("rate_cdf_g000.png", "rate_cdf_g001.png", "gain_p5.png", "gain_p50.png"):
        (out / png).unlink()
    assert cli.main(["plot", str(out)]) == 0
    assert (out / "gain_p50.png").stat().st_size > 0 and (out / "rate_cdf_g001.png").exists()


SMALL = small_scenario(drops=2)


def test_experiment_without_grid(tmp_path, capsys):
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL)
    out = tmp_path / "res"
    assert cli.main(["experiment", str(scenario), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 drop(s) x 1 grid point(s)" in text and "gain_p5" in text
    index = pd.read_csv(out / "index.csv")
    assert set(index["grid_id"]) == {"g000"} and list(index["method"]) == ["max_rsrp", "alm"] * 2
    table = sweep_table(index, [])
    assert list(table.index) == ["max_rsrp", "alm"]
    assert (table.loc["max_rsrp", ["gain_p5", "gain_p50"]] == 1.0).all()
    assert (out / "rate_cdf_g000.png").stat().st_size > 0 and not (out / "gain_p5.png").exists()
    assert cli.main(["plot", str(out)]) == 0


def test_sweep_table_gains_with_and_without_grid():
    index = pd.DataFrame({
        "grid_id": ["g000"] * 4 + ["g001"] * 4, "drop": [0, 0, 1, 1] * 2,
        "picos.per_sector": [1] * 4 + [2] * 4, "method": ["base", "opt"] * 4,
        "objective": np.arange(8.0), "upper_bound": np.arange(8.0), "gap": 0.0,
        "rate_p5_mbps": [1.0, 2.0, 3.0, 4.0, 2.0, 6.0, 2.0, 6.0],
        "rate_p50_mbps": [1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 2.0, 1.0], "rate_mean_mbps": 1.0,
    })
    table = sweep_table(index, ["picos.per_sector"])
    assert table.index.names == ["picos.per_sector", "method"]
    assert table["rate_p5_mbps"].tolist() == [2.0, 3.0, 2.0, 6.0]
    assert table["gain_p5"].tolist() == [1.0, 1.5, 1.0, 3.0]
    assert table["gain_p50"].tolist() == [1.0, 1.0, 1.0, 0.5]
    flat = sweep_table(index, [])  # every grid point pooled
    assert list(flat.index) == ["base", "opt"]
    assert flat["gain_p5"].tolist() == [1.0, 4.5 / 2.0]


def _two_scenarios(tmp_path):
    """Two small scenarios, ``a`` and ``b`` (named after their files), in `tmp_path`."""
    for name in ("a", "b"):
        (tmp_path / f"{name}.toml").write_text(small_scenario(drops=1), encoding="utf-8")
    return tmp_path / "a.toml", tmp_path / "b.toml"


def _files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_run_writes_each_scenario_to_its_own_folder_by_default(tmp_path, monkeypatch, capsys):
    a, b = _two_scenarios(tmp_path)
    monkeypatch.chdir(tmp_path)
    for scenario in (a, b):
        assert cli.main(["run", str(scenario), "--method", "max_rsrp", "--no-progress"]) == 0
        assert f"wrote results/{scenario.stem}/: " in capsys.readouterr().out
    for name in ("a", "b"):  # neither replaced the other
        record = json.loads((tmp_path / "results" / name / "run.json").read_text(encoding="utf-8"))
        assert record["scenario"] == name and record["scenario_path"] == str(tmp_path / f"{name}.toml")
        assert record["methods"] == ["max_rsrp"]
    assert not (tmp_path / "results" / "run").exists()


def test_run_refuses_another_scenarios_folder_without_force(tmp_path, monkeypatch, capsys):
    a, b = _two_scenarios(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", str(a), "--method", "max_rsrp", "--no-progress"]) == 0
    before = _files(tmp_path / "results" / "a")
    capsys.readouterr()
    assert cli.main(["run", str(b), "--out", "results/a", "--method", "max_rsrp"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cellopt: error: results/a holds the `cellopt run` results of scenario "
                          f"'a' ({a}, written ")
    assert f"this run is scenario 'b' ({b})" in err and "fix: write to another folder (--out" in err
    assert "--force" in err
    assert _files(tmp_path / "results" / "a") == before  # nothing replaced
    with pytest.raises(StoreError, match=r"scenario 'a'.*force=True"):  # the library alike
        run_scenario(load_scenario(b), tmp_path / "results" / "a", methods=[])
    # the same scenario runs again into its folder; --force lets another one in
    assert cli.main(["run", str(a), "--method", "max_rsrp", "--seed", "5", "--no-progress"]) == 0
    assert cli.main(["run", str(b), "--out", "results/a", "--method", "max_rsrp", "--force",
                     "--no-progress"]) == 0
    record = json.loads((tmp_path / "results" / "a" / "run.json").read_text(encoding="utf-8"))
    assert record["scenario"] == "b"


def test_run_refuses_a_folder_of_another_scenarios_sweep_or_an_unrecorded_run(tmp_path, capsys):
    a, b = _two_scenarios(tmp_path)
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "meta.json").write_text(json.dumps({"kind": "sweep", "scenario": str(a)}),
                                     encoding="utf-8")
    with pytest.raises(StoreError, match=r"holds a sweep of the scenario .*a\.toml"):
        check_owner(sweep, "b", b)
    check_owner(sweep, "a", a)  # its own sweep's folder
    old = tmp_path / "old"
    old.mkdir()
    for name in ("method_summary.csv", "user_rates.csv"):
        (old / name).write_text("method\n", encoding="utf-8")
    with pytest.raises(StoreError, match=r"did not record its scenario \(no run\.json"):
        check_owner(old, "a", a)
    check_owner(old, "a", a, force=True)


@pytest.mark.parametrize(("name", "folder"), [("hetnet", "hetnet"), ("../../etc", "etc"),
                                              ("my run/2", "my_run_2"), ("..", "scenario")])
def test_default_folder_stays_under_results(name, folder):
    assert default_folder(name) == Path("results") / folder


def test_force_of_run_is_not_refused_as_an_experiment_option(capsys):
    with pytest.raises(SystemExit):
        cli.main(["experiment", "hetnet", "--force"])
    assert "--force only applies with --resume" in capsys.readouterr().err
