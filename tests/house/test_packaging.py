"""The build lists every package, and the shipped scenarios install with the package."""

from __future__ import annotations

import tomllib
from pathlib import Path

from helpers import ROOT

import cellopt
from cellopt.study.scenario import SHIPPED_DIR, shipped_scenarios

ROOT = ROOT


def test_pyproject_lists_every_package_of_the_tree():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    folders = [d for d in (ROOT / "cellopt").rglob("*") if d.is_dir() and d.name != "__pycache__"]
    in_tree = {".".join(d.relative_to(ROOT).parts) for d in [ROOT / "cellopt", *folders]}
    mapped = set(setuptools["package-dir"])
    assert set(setuptools["packages"]) == in_tree | mapped, "update [tool.setuptools] packages"
    data = {name for name in in_tree if not (ROOT / name.replace(".", "/") / "__init__.py").exists()}
    assert data <= set(setuptools["package-data"]), f"data folders {data} need package-data globs"
    assert setuptools["package-dir"] == {"cellopt.topologies": "topologies"}


def test_the_shipped_scenarios_are_the_top_level_topologies_folder():
    on_disk = sorted(p.stem for p in (ROOT / "topologies").glob("*.toml"))
    assert on_disk and shipped_scenarios() == on_disk
    if Path(cellopt.__file__).resolve().parent == ROOT / "cellopt":  # this checkout is installed
        assert SHIPPED_DIR.resolve() == (ROOT / "topologies").resolve()
