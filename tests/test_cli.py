"""The command line: `cellopt run SCENARIO.toml` on the shipped HetNet scenario."""


import numpy as np
import pandas as pd
import pytest
from small_scenario import small_scenario

from cellopt import cli
from cellopt.study.scenario import SHIPPED_DIR
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
    assert (summary["utility"] <= best["upper_bound"] + 1e-9).all()
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
