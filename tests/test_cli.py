"""The command line: `cellopt run SCENARIO.toml` on the shipped HetNet scenario."""

from pathlib import Path

import pandas as pd
import pytest

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


def test_unknown_method_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="valid methods"):
        cli.main(["run", str(HETNET), "--out", str(tmp_path), "--method", "magic"])
