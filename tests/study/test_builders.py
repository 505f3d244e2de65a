"""Tests of the builder registry (cellopt.study.builders), square_grid, and the parameter and
key tables of the docs."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT

from cellopt import ValidationError, topology
from cellopt.parameters import parameter_table
from cellopt.study import scenario as scenario_module
from cellopt.study.builders import BUILDERS, scenario_keys
from cellopt.study.scenario import load_scenario
from cellopt.study.schema import SECTION_KEYS, key_table

ROOT = ROOT

SQUARE = """
methods = ["max_rsrp", "alm"]

[network]
builder = "square_grid"
n_side = 3
spacing_m = 400

[users]
n = 30

[radio]
n_candidates = 4

[seeds]
base = 3
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "square.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_square_grid_is_a_torus_of_omni_sites():
    net = topology.square_grid(3, 400.0)
    assert net.n_cells == 9 and (net.cells["tier"] == "macro").all()
    assert net.cells["azimuth_deg"].isna().all()
    xy = np.column_stack([net.cells.geometry.x, net.cells.geometry.y])
    steps = np.unique(np.round(np.diff(np.sort(np.unique(xy[:, 0]))), 6))
    np.testing.assert_allclose(steps, [400.0])
    assert net.region.area == pytest.approx(1200.0**2)
    assert net.wrap_shifts_m.shape == (9, 2) and not net.wrap_shifts_m[0].any()
    assert topology.square_grid(2, wraparound=False).wrap_shifts_m is None
    with pytest.raises(ValidationError, match="n_side=0 is below 1"):
        topology.square_grid(0)


def test_a_square_grid_scenario_builds_and_solves(tmp_path):
    scenario = load_scenario(write(tmp_path, SQUARE))
    drop = scenario.build()
    assert drop.network.n_cells == 9 and drop.network.n_users == 30
    solution = drop.solve("max_rsrp")
    assert np.isfinite(solution.user_rate_mbps).all() and (solution.user_rate_mbps > 0).any()
    assert set(np.unique(solution.serving_cell)) <= set(range(9))


def test_a_square_grid_scenario_refuses_a_key_of_another_builder(tmp_path):
    path = write(tmp_path, SQUARE.replace("n_side = 3", "n_side = 3\nisd_m = 500"))
    with pytest.raises(ValidationError, match=r"\[network\] \(builder 'square_grid'\) unknown key "
                                              r"'isd_m'; valid: \['antenna_gain_dbi', .*'n_side'"):
        load_scenario(path)
    with pytest.raises(ValidationError, match=r"key 'n_side' expected integer, got float"):
        load_scenario(write(tmp_path, SQUARE.replace("n_side = 3", "n_side = 3.5")))


def test_square_grid_counts_are_checked_at_load_time(tmp_path):
    from cellopt import ResourceLimitError

    with pytest.raises(ResourceLimitError, match=r"\[network\] n_side=1,000,000 \(1,000,000,000,000 sites\)"):
        load_scenario(write(tmp_path, SQUARE.replace("n_side = 3", "n_side = 1_000_000")))
    with pytest.raises(ValidationError, match=r"colocated_fraction > 0 places indoor users inside the "
                                              r"buildings of femto cells, but the network gets none"):
        load_scenario(write(tmp_path, SQUARE.replace("n = 30", "n = 30\ncolocated_fraction = 0.5")))


def test_builder_keys_come_from_the_signatures():
    assert dict(BUILDERS["square_grid"].keys) == {
        "n_side": "int", "spacing_m": "float", "wraparound": "bool", "tx_power_dbm": "float",
        "antenna_gain_dbi": "float", "height_m": "float", "bandwidth_mhz": "float",
        "origin_lonlat": "floats", "crs": "str"}
    assert BUILDERS["hex_grid"].keys["resource_mhz"] == "floats"
    assert BUILDERS["country"].keys["city_radius_m"] == "floats"
    file_keys = BUILDERS["file"].keys
    assert file_keys["path"] == file_keys["area"] == file_keys["stand_in"] == "path"
    assert file_keys["radio"] == "str|strs" and file_keys["mcc"] == "int|ints"
    assert file_keys["bbox"] == file_keys["window"] == "floats"
    assert "polygon" not in file_keys and "progress" not in file_keys
    assert BUILDERS["file"].required == ("path",) and BUILDERS["poisson"].required == ()


@pytest.mark.parametrize(("marker", "table", "source"), [
    ("parameters", parameter_table, "cellopt.parameters.parameter_table()"),
    ("keys", key_table, "cellopt.study.schema.key_table()"),
])
def test_the_generated_tables_of_the_docs_are_current(marker, table, source):
    text = (ROOT / "docs" / "scenarios.md").read_text()
    found = re.search(rf"<!-- {marker}:begin -->\n(.*?)<!-- {marker}:end -->", text, re.S)
    assert found, f"docs/scenarios.md has no {marker}:begin / {marker}:end markers"
    assert found.group(1) == table(), (
        f"docs/scenarios.md: the table between the {marker} markers is stale; regenerate it "
        f"from {source}")


def test_every_choice_takes_the_names_its_module_registered():
    from cellopt.network import OWNERS, TIERS
    from cellopt.parameters import CHOICES, Quantity
    from cellopt.radio.spectral import SPECTRAL_EFFICIENCY
    from cellopt.solvers import PATTERN_METHODS

    assert CHOICES["cluster_tier"].names() == TIERS and CHOICES["owner"].names() == OWNERS
    assert CHOICES["spectral_efficiency"].names() == tuple(sorted(SPECTRAL_EFFICIENCY))
    assert CHOICES["master_method"].names() == tuple(sorted(PATTERN_METHODS))  # filled later
    with pytest.raises(LookupError, match="register_choice"):
        Quantity("x", kind="str", choices="registered_by_no_module").names()


def test_the_scenario_module_names_every_section_and_lists_no_keys_by_hand():
    # its docstring points to the generated table for the keys
    doc = scenario_module.__doc__
    assert all(f"[{section}]" in doc for section in ("network", *SECTION_KEYS))
    assert "key_table" in doc


def test_scenario_keys_read_signatures_and_refuse_what_they_cannot_read():
    def feeds(n: int, share: float = 0.5, *, names: tuple[str, ...] = (), rng: object = None,
              callback: object = None) -> None:
        """A function a section feeds."""

    assert scenario_keys(feeds, exclude=("callback",), kinds={"names": "str|strs"},
                         rename={"share": "fraction"}) == {
        "n": "int", "fraction": "float", "names": "str|strs"}
    assert scenario_keys(feeds, only=("share",)) == {"share": "float"}
    with pytest.raises(TypeError, match=r"'callback'.*has no TOML kind"):
        scenario_keys(feeds, kinds={"names": "str|strs"})
    with pytest.raises(TypeError, match=r"takes no parameters \['size'\]"):
        scenario_keys(feeds, only=("n", "size"))
