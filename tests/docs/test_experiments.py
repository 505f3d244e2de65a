"""The experiment scripts: results under results/<experiment>/ unless told, never the
published docs/figures/ by default, and never a stand-in's numbers there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

ROOT = ROOT
SCRIPTS = sorted(p for p in (ROOT / "experiments").glob("*.py") if not p.name.startswith("_"))
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(ROOT),
       "MPLBACKEND": "Agg"}


def script(path: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True,
                          env=ENV, cwd=cwd, timeout=600, check=False)


def published() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (ROOT / "docs" / "figures").iterdir() if p.is_file()}


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_every_script_writes_under_its_results_folder_by_default(path, tmp_path):
    proc = script(path, "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "default: figures/ in --out" in text and "--figures docs/figures replaces" in text
    assert f"results/{path.stem}" in text


@pytest.mark.slow
def test_a_script_writes_its_tables_and_figures_under_out_and_says_where(tmp_path):
    before = published()
    out = tmp_path / "out"
    proc = script(ROOT / "experiments" / "femto_backhaul.py", "--drops", "1", "--workers", "1",
                  "--backhaul", "1", "10", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out / 'figures'}/: femto_backhaul.csv, femto_backhaul.png" in proc.stdout
    assert f"per-drop results in {out}/" in proc.stdout
    assert sorted(p.name for p in (out / "figures").iterdir()) == ["femto_backhaul.csv",
                                                                   "femto_backhaul.png"]
    assert published() == before


@pytest.mark.parametrize("name", ["femto_capacity", "femto_demand"])
def test_a_stand_in_never_replaces_the_published_numbers(name, tmp_path):
    sf = (ROOT / "topologies" / "sf_femto.toml").read_text(encoding="utf-8")
    scenario = tmp_path / "sf_absent.toml"
    scenario.write_text(sf.replace('path = "../../shared/data/opencellid_sf_verizon_lte.csv"',
                                   f'path = "{tmp_path / "absent.csv"}"')
                        .replace('stand_in = "city_synthetic.toml"',
                                 f'stand_in = "{ROOT / "topologies" / "city_synthetic.toml"}"'),
                        encoding="utf-8")
    before = published()
    proc = script(ROOT / "experiments" / f"{name}.py", "--scenario", str(scenario), "--figures",
                  str(ROOT / "docs" / "figures"), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"the data of {scenario} is absent" in proc.stderr
    assert "would replace the published ones" in proc.stderr and "fix: put the data" in proc.stderr
    assert published() == before
