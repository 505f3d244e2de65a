"""The command line: `cellopt run SCENARIO.toml` on the shipped HetNet scenario."""

from pathlib import Path

import pandas as pd

from cellopt import cli

HETNET = Path(__file__).resolve().parents[1] / "topologies" / "hetnet.toml"


def test_run_writes_summary_tables_and_figures(tmp_path, capsys):
    assert cli.main(["run", str(HETNET), "--out", str(tmp_path)]) == 0
    for name in ("method_summary.csv", "radio_summary.csv", "user_rates.csv",
                 "network_map.png", "rate_cdf.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    summary = pd.read_csv(tmp_path / "method_summary.csv", index_col="method")
    assert list(summary.index) == ["max_rsrp", "RE 0 dB", "RE 3 dB", "RE 6 dB", "RE 9 dB",
                                   "load_aware", "optimized (alm)"]
    best = summary.loc["optimized (alm)"]
    assert best["gap"] <= 1e-4
    # No method beats the optimizer's certified upper bound.
    assert (summary["utility"] <= best["upper_bound"] + 1e-9).all()
    assert "optimized (alm)" in capsys.readouterr().out


def test_run_with_chosen_methods(tmp_path):
    assert cli.main(["run", str(HETNET), "--out", str(tmp_path), "--method", "max_rsrp",
                     "--method", "dual", "--seed", "3"]) == 0
    summary = pd.read_csv(tmp_path / "method_summary.csv", index_col="method")
    assert list(summary.index) == ["max_rsrp", "dual"]


def test_bad_input_is_a_clear_error_not_a_traceback(tmp_path, capsys):
    assert cli.main(["run", str(HETNET), "--out", str(tmp_path), "--method", "magic"]) == 2
    assert "valid methods" in capsys.readouterr().err
    assert cli.main(["experiment", str(HETNET), "--out", str(tmp_path / "x"),
                     "--grid", "picos.per_sector"]) == 2
    assert "section.key=v1,v2" in capsys.readouterr().err


def test_experiment_then_plot(tmp_path, capsys):
    scenario = tmp_path / "small.toml"
    scenario.write_text(HETNET.read_text().replace("n = 2000 ", "n = 150 "))
    out = tmp_path / "res"
    assert cli.main(["experiment", str(scenario), "--drops", "2", "--grid",
                     "picos.per_sector=1,2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "gain_p5" in text and "optimized (alm)" in text
    index = pd.read_csv(out / "index.csv")
    assert set(index["grid_id"]) == {"g000", "g001"} and set(index["drop"]) == {0, 1}
    for png in ("rate_cdf_g000.png", "rate_cdf_g001.png", "gain_p5.png", "gain_p50.png"):
        (out / png).unlink()
    assert cli.main(["plot", str(out)]) == 0
    assert (out / "gain_p50.png").stat().st_size > 0 and (out / "rate_cdf_g001.png").exists()
