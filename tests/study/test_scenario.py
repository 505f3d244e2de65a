"""Tests of cellopt.scenario: TOML scenario files, validation, seeded drops."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellopt import ValidationError
from cellopt.study.scenario import SHIPPED_DIR, Distribution, load_scenario
from cellopt.study.seeds import drop_seeds

TOPOLOGIES = SHIPPED_DIR

SMALL = """
methods = ["max_rsrp", {name = "range_expansion", bias_db = 6, label = "RE 6 dB"}]

[network]
builder = "hex_grid"
n_rings = 1

[picos]
per_sector = 1

[users]
n = 40
clustered_fraction = 0.5

[radio]
n_candidates = 4

[seeds]
base = 7
drops = 2
"""


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def xy(frame) -> np.ndarray:
    return np.column_stack([frame.geometry.x, frame.geometry.y])


def test_small_scenario_parses_and_builds(tmp_path):
    scn = load_scenario(write(tmp_path, SMALL))
    assert scn.seeds == tuple(drop_seeds(7, 2))
    assert scn.users == {"n": 40, "clustered_fraction": 0.5}
    drop = scn.build(7)
    net, links, problem = drop.network, drop.links, drop.problem
    assert net.n_users == 40 and (net.cells["tier"] == "pico").sum() == 21
    assert links.n_users == 40 and links.n_cells == net.n_cells
    assert problem.n_users == int(links.users_with_rate().sum())


def test_same_seed_same_drop_different_seed_differs(tmp_path):
    scn = load_scenario(write(tmp_path, SMALL))
    a, b, c = ((d.network, d.links, d.problem) for d in (scn.build(3), scn.build(3), scn.build(4)))
    np.testing.assert_array_equal(xy(a[0].users), xy(b[0].users))
    np.testing.assert_array_equal(xy(a[0].cells), xy(b[0].cells))
    np.testing.assert_array_equal(a[1].rsrp_dbm, b[1].rsrp_dbm)
    np.testing.assert_array_equal(a[2].rate_mbps, b[2].rate_mbps)
    assert not np.array_equal(xy(a[0].users), xy(c[0].users))
    assert not np.array_equal(xy(a[0].cells), xy(c[0].cells))


def test_unknown_key_names_key_and_file(tmp_path):
    path = write(tmp_path, SMALL.replace("n = 40", "n_user = 40"))
    with pytest.raises(ValidationError, match=r"\[users\] unknown key 'n_user'; valid:") as err:
        load_scenario(path)
    assert str(path) in str(err.value)
    with pytest.raises(ValidationError, match="unknown key 'extra'"):
        load_scenario(write(tmp_path, "extra = 1\n" + SMALL))
    with pytest.raises(ValidationError, match=r"\[network\].*unknown key 'per_sector'"):
        load_scenario(write(tmp_path, SMALL.replace("n_rings = 1", "per_sector = 1")))


@pytest.mark.parametrize(("old", "new", "key", "expected", "got"), [
    ("n = 40", "n = 40.0", "n", "integer", "float"),
    ("n = 40", "n = true", "n", "integer", "boolean"),
    ("clustered_fraction = 0.5", "clustered_fraction = '0.5'", "clustered_fraction",
     "number", "string"),
    ("n_rings = 1", "n_rings = 1\nwraparound = 1", "wraparound", "boolean", "integer"),
    ("n_rings = 1", "n_rings = 1\nresource_mhz = 10", "resource_mhz", "array of numbers",
     "integer"),
    ("n_candidates = 4", "spectral_efficiency = 3", "spectral_efficiency", "string", "integer"),
])
def test_wrong_type_names_key_expected_and_got(tmp_path, old, new, key, expected, got):
    path = write(tmp_path, SMALL.replace(old, new))
    with pytest.raises(ValidationError, match=f"key '{key}' expected {expected}, got {got}") as e:
        load_scenario(path)
    assert str(path) in str(e.value)


def test_integer_accepted_for_number(tmp_path):
    scn = load_scenario(write(tmp_path, SMALL.replace("clustered_fraction = 0.5",
                                                      "clustered_fraction = 1")))
    assert scn.users["clustered_fraction"] == 1.0
    assert isinstance(scn.users["clustered_fraction"], float)


@pytest.mark.parametrize("section", ["network", "users"])
def test_missing_section(tmp_path, section):
    lines = SMALL.split("\n")
    start = lines.index(f"[{section}]")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("["))
    path = write(tmp_path, "\n".join(lines[:start] + lines[end:]))
    with pytest.raises(ValidationError, match=rf"\[{section}\] section is missing"):
        load_scenario(path)


def test_bad_builder_and_bad_toml(tmp_path):
    with pytest.raises(ValidationError, match="key 'builder' expected one of"):
        load_scenario(write(tmp_path, SMALL.replace('"hex_grid"', '"grid"')))
    with pytest.raises(ValidationError, match="not valid TOML"):
        load_scenario(write(tmp_path, "[users\nn = 1"))


def test_build_errors_are_prefixed_with_file_and_section(tmp_path):
    path = write(tmp_path, SMALL.replace("clustered_fraction = 0.5", "clustered_fraction = 2"))
    with pytest.raises(ValidationError, match=r"s\.toml: \[users\] clustered_fraction=2"):
        load_scenario(path).build(1)


def test_file_builder_resolves_relative_path(tmp_path):
    sub = tmp_path / "data"
    sub.mkdir()
    pd.DataFrame({"lon": [-122.42, -122.41, -122.40], "lat": [37.77, 37.78, 37.77]}).to_csv(
        sub / "cells.csv", index=False)
    folder = tmp_path / "scenarios"
    folder.mkdir()
    path = write(folder, """
        [network]
        builder = "file"
        path = "../data/cells.csv"
        tx_power_dbm = 40
        region_buffer_m = 300

        [users]
        n = 25
    """)
    scn = load_scenario(path)
    assert Path(scn.network["path"]) == (sub / "cells.csv").resolve()
    drop = scn.build(1)
    net, links = drop.network, drop.links
    assert net.n_cells == 3 and net.n_users == 25
    assert (net.cells["tx_power_dbm"] == 40.0).all()
    assert links.n_cells == 3
    with pytest.raises(ValidationError, match="key 'path' is required"):
        load_scenario(write(folder, '[network]\nbuilder = "file"\n[users]\nn = 1\n'))


FEMTO = """
[network]
builder = "hex_grid"
n_rings = 1

[femtocells]
density_per_km2 = 60
backhaul_mbps = {backhaul}
price_per_mbps = 0.5

[users]
n = 30
indoor_fraction = 0.5

[problem]
{problem}
"""


def femto(tmp_path, backhaul: str, problem: str = "") -> Path:
    return write(tmp_path, FEMTO.format(backhaul=backhaul, problem=problem))


def test_femto_backhaul_number_and_distributions(tmp_path):
    drop = load_scenario(femto(tmp_path, "25")).build(1)
    net, problem = drop.network, drop.problem
    f = (net.cells["tier"] == "femto").to_numpy()
    assert f.sum() > 5
    np.testing.assert_array_equal(net.cells["backhaul_mbps"][f], 25.0)
    np.testing.assert_array_equal(problem.price_per_mbps[f], 0.5)

    scn = load_scenario(femto(tmp_path, '{distribution = "uniform", low = 5, high = 15}'))
    assert scn.femtocells["backhaul_mbps"] == Distribution("uniform", (("low", 5.0), ("high", 15.0)))
    net = scn.build(1).network
    b = net.cells["backhaul_mbps"][net.cells["tier"] == "femto"].to_numpy()
    assert ((b >= 5) & (b <= 15)).all() and len(np.unique(b)) == len(b)

    scn = load_scenario(femto(tmp_path, '{distribution = "lognormal", median = 10, sigma = 0.5}'))
    net = scn.build(2).network
    b = net.cells["backhaul_mbps"][net.cells["tier"] == "femto"].to_numpy()
    assert (b > 0).all() and len(np.unique(b)) == len(b)
    assert 5 < np.median(b) < 20
    assert np.isinf(net.cells["backhaul_mbps"][net.cells["tier"] == "macro"]).all()


def test_distribution_call_shapes_and_law():
    rng = np.random.default_rng(0)
    d = Distribution("lognormal", (("median", 10.0), ("sigma", 0.5)))
    x = d(rng, 20000)
    assert x.shape == (20000,)
    assert np.median(x) == pytest.approx(10.0, rel=0.03)
    assert np.log(x).std() == pytest.approx(0.5, rel=0.03)


@pytest.mark.parametrize(("backhaul", "message"), [
    ('{distribution = "gamma", k = 1}', "needs distribution = one of"),
    ('{distribution = "uniform", low = 5}', "missing \\['high'\\]"),
    ('{distribution = "uniform", low = 5, high = 1}', "low ≤ high"),
    ('{distribution = "lognormal", median = 10, sigma = 1, mean = 3}', "unknown key 'mean'"),
    ('{distribution = "lognormal", median = -1, sigma = 1}', "median > 0"),
    ('"fast"', "expected number or distribution table"),
])
def test_bad_distributions(tmp_path, backhaul, message):
    with pytest.raises(ValidationError, match=message):
        load_scenario(femto(tmp_path, backhaul))


def test_problem_overrides_third_party_cells_only(tmp_path):
    drop = load_scenario(
        femto(tmp_path, "25", "alpha = 2\nbackhaul_mbps = 3\nprice_per_mbps = 0.1")).build(1)
    net, problem = drop.network, drop.problem
    f = (net.cells["owner"] == "third_party").to_numpy()
    assert f.any() and not f.all()
    np.testing.assert_array_equal(problem.backhaul_mbps[f], 3.0)
    np.testing.assert_array_equal(problem.price_per_mbps[f], 0.1)
    assert np.isinf(problem.backhaul_mbps[~f]).all()
    np.testing.assert_array_equal(problem.price_per_mbps[~f], 0.0)
    assert problem.alpha == 2.0


def test_adding_femtocells_does_not_move_users(tmp_path):
    with_f = load_scenario(femto(tmp_path, "25")).build(5).network
    without = load_scenario(femto(tmp_path, "25")).with_overrides(
        femtocells={"density_per_km2": 0.0}).build(5).network
    np.testing.assert_array_equal(xy(with_f.users), xy(without.users))


def test_methods_parsing(tmp_path):
    scn = load_scenario(write(tmp_path, SMALL))
    assert [(m.name, m.label, dict(m.options)) for m in scn.methods] == [
        ("max_rsrp", "max_rsrp", {}), ("range_expansion", "RE 6 dB", {"bias_db": 6})]
    scn = load_scenario(write(tmp_path, SMALL.replace(
        'label = "RE 6 dB"', "tol = 1e-3").replace("methods = [", "methods = [\"alm\", ")))
    assert [m.label for m in scn.methods] == ["alm", "max_rsrp", "range_expansion bias_db=6 tol=0.001"]
    aot = SMALL.split("\n", 2)[2] + '\n[[methods]]\nname = "load_aware"\n'
    assert [m.name for m in load_scenario(write(tmp_path, aot)).methods] == ["load_aware"]


@pytest.mark.parametrize(("methods", "message"), [
    ('["nope"]', "unknown method 'nope'; valid:"),
    ('"alm"', "expected array of method names or tables, got string"),
    ('[3]', r"methods\[0\] expected string or table, got integer"),
    ('[{bias_db = 3}]', "key 'name' expected string"),
    ('[{name = "alm", label = 3}]', "key 'label' expected string, got integer"),
    ('["alm", "alm"]', "duplicate labels \\['alm'\\]"),
    ('[{name = "alm", label = ""}]', r"methods\[0\] key 'label' = '' is blank.*fix: give a label "
                                     "with text"),
    ('["alm", {name = "dual", label = "   "}]', r"methods\[1\] key 'label' = '   ' is blank"),
    ('["alm", {name = "dual", label = " alm "}]', r"methods labels \[' alm ', 'alm'\] differ only "
                                                  "by spaces at their ends.*fix: give each a distinct"),
])
def test_bad_methods(tmp_path, methods, message):
    text = SMALL.replace(SMALL.split("\n")[1], f"methods = {methods}")
    with pytest.raises(ValidationError, match=message):
        load_scenario(write(tmp_path, text))


def test_seeds_validation(tmp_path):
    with pytest.raises(ValidationError, match=r"\[seeds\] key 'drops' must be ≥ 1"):
        load_scenario(write(tmp_path, SMALL.replace("drops = 2", "drops = 0")))
    with pytest.raises(ValidationError, match="seed="):
        load_scenario(write(tmp_path, SMALL)).build(-1)


def test_with_overrides_revalidates(tmp_path):
    scn = load_scenario(write(tmp_path, SMALL))
    assert scn.with_overrides(users={"n": 5}).users == {"n": 5, "clustered_fraction": 0.5}
    assert scn.users["n"] == 40
    with pytest.raises(ValidationError, match="unknown key 'm'"):
        scn.with_overrides(users={"m": 5})


@pytest.mark.parametrize("name", ["macro_3gpp", "hetnet", "femto_backhaul"])
def test_shipped_scenarios_build(name):
    scn = load_scenario(TOPOLOGIES / f"{name}.toml")
    assert scn.name == name and scn.drops >= 1 and scn.methods
    drop = scn.with_overrides(users={"n": 30}).build(scn.seeds[0])
    net, links, problem = drop.network, drop.links, drop.problem
    assert net.n_users == 30 and links.n_users == 30
    assert net.n_cells >= 57 and (net.cells["tier"] == "macro").sum() == 57
    assert 0 < problem.n_users <= 30
    if name == "hetnet":
        assert (net.cells["tier"] == "pico").sum() == 228
        assert [m.label for m in scn.methods][1:5] == ["RE 0 dB", "RE 3 dB", "RE 6 dB", "RE 9 dB"]
    if name == "femto_backhaul":
        f = (net.cells["tier"] == "femto").to_numpy()
        assert f.sum() > 50 and np.isfinite(problem.backhaul_mbps[f]).all()


# ---------------------------------------------------------------------- limits
@pytest.mark.parametrize("base", [0, 1, 7, 2**40])
def test_drop_seed_is_the_kth_spawned_child(base):
    from cellopt.study.seeds import DropSeeds, drop_seed

    spawned = [int(c.generate_state(1)[0]) for c in np.random.SeedSequence(base).spawn(20)]
    assert [drop_seed(base, k) for k in range(20)] == spawned == drop_seeds(base, 20)
    assert DropSeeds(base, 20) == spawned and DropSeeds(base, 20) != spawned[:-1]


def test_seeds_are_read_lazily(tmp_path):
    scn = load_scenario(write(tmp_path, SMALL.replace("drops = 2", "drops = 1_000_000")))
    assert len(scn.seeds) == 1_000_000 and scn.seeds[0] == drop_seeds(7, 1)[0]
    assert "DropSeeds(base=7, drops=1,000,000)" == repr(scn.seeds)
    with pytest.raises(ValidationError, match=r"\[seeds\] key 'drops' must be ≥ 1 and ≤ 1,000,000"):
        scn.with_overrides(seeds={"drops": 1_000_001})


def test_ranges_are_checked_at_load_time_with_the_build_prefix(tmp_path):
    path = write(tmp_path, SMALL.replace("n = 40", "n = 40\nindoor_fraction = -0.5"))
    with pytest.raises(ValidationError, match=r"s\.toml: \[users\] indoor_fraction=-0.5 is outside"):
        load_scenario(path)


def test_huge_counts_are_refused_at_load_time(tmp_path, monkeypatch):
    from cellopt import ResourceLimitError

    with pytest.raises(ResourceLimitError, match=r"\[users\] n=3,000,000,000: 3e\+09 users"):
        load_scenario(write(tmp_path, SMALL.replace("n = 40", "n = 3_000_000_000")))
    monkeypatch.setenv("CELLOPT_MAX_MEMORY_GB", "4e-5")  # 42 kB: the grid fits, its picos do not
    with pytest.raises(ResourceLimitError, match=r"\[picos\] per_sector=1 × 21 macro cells"):
        load_scenario(write(tmp_path, SMALL))


# The [network] keys are read from the builders' signatures; the other sections are written
# by hand (they need TOML types). These tests keep both in step with the functions they feed,
# in both directions.
def _parameters(fn) -> set[str]:
    import inspect

    return set(inspect.signature(fn).parameters)


#: Builder parameters a scenario file does not set: the network being built, the random
#: stream (spawned from the drop's seed), arrays, callables and per-tier mappings (set from
#: Python), and the worker count and progress display of the link computation.
NOT_IN_FILES = {"network", "rng", "region", "buildings", "polygon", "model", "power_dbm", "workers",
                "progress",
                "pathloss", "min_distance_m",
                "building_radius_m"}  # drop_users takes it from [radio]: one building size
#: Scenario keys handled by the scenario itself, not passed to the builder.
SCENARIO_ONLY = {"window", "area", "guard_m", "sectors", "region_buffer_m", "stand_in",
                 "pathloss_exponent", "pathloss_reference_db", "path_loss",  # RadioModel.pathloss
                 "links", "source_crs"}  # [users]: topology.read_measurements, not drop_users


@pytest.mark.parametrize("section", ["hex_grid", "poisson", "country", "file", "picos", "femtocells",
                                     "users", "radio"])
def test_schema_matches_the_builders_signatures(section):
    import dataclasses

    from cellopt import radio, topology
    from cellopt.study.builders import BUILDERS
    from cellopt.study.schema import SECTION_KEYS

    keys, builder = {
        "hex_grid": (BUILDERS["hex_grid"].keys, _parameters(topology.hex_grid)),
        "poisson": (BUILDERS["poisson"].keys, _parameters(topology.poisson_layout)),
        "country": (BUILDERS["country"].keys, _parameters(topology.country_layout)),
        "file": (BUILDERS["file"].keys, _parameters(topology.read_cells)),
        "picos": (SECTION_KEYS["picos"], _parameters(topology.add_picos)),
        "femtocells": (SECTION_KEYS["femtocells"], _parameters(topology.add_femtocells)),
        "users": (SECTION_KEYS["users"], _parameters(topology.drop_users)),
        "radio": (SECTION_KEYS["radio"], {f.name for f in dataclasses.fields(radio.RadioModel)}
                  | _parameters(radio.link_table) | {"propagation"}
                  | {f.name for f in dataclasses.fields(radio.ThreeGPP)} - {"scenario"}),
    }[section]
    assert set(keys) - SCENARIO_ONLY <= builder, "scenario keys the builder does not take"
    assert builder - NOT_IN_FILES <= set(keys), "builder parameters a scenario cannot set"


def test_schema_covers_the_problem_options():
    from cellopt import Problem
    from cellopt.study.schema import SECTION_KEYS

    scenario_only = {"alpha", "interference", "n_interferers"}  # the last two: Drop.solve
    assert set(SECTION_KEYS["problem"]) <= _parameters(Problem.from_links) | scenario_only


POWER = SMALL + "\n[power]\n"


@pytest.mark.parametrize(("power", "message"), [
    ('label = ""', r"\[power\] key 'label' = '' is blank"),
    ('label = " "', r"\[power\] key 'label' = ' ' is blank"),
    ('label = "max_rsrp "', r"\[power\] key 'label' labels \['max_rsrp', 'max_rsrp '\] differ only "
                            "by spaces"),
    ('label = "max_rsrp"', r"label 'max_rsrp' is a method's label too"),
    ('levels_db = ["off"]', r"\[power\] levels_db=\['off'\] holds only \"off\", so every cell would "
                            "be off in every pattern.*fix: add a level with power"),
    ('levels_db = ["off", "off"]', r"levels_db=\['off', 'off'\] holds only \"off\""),
    ('levels_db = {macro = [0], pico = ["off"]}', r"levels_db.pico=\['off'\] holds only \"off\", so "
                                                  "the pico cells would be off"),
])
def test_power_labels_and_levels_that_name_nothing_are_refused(tmp_path, power, message):
    with pytest.raises(ValidationError, match=message):
        load_scenario(write(tmp_path, POWER + power + "\n"))


def test_a_method_spec_and_a_run_refuse_labels_that_name_nothing(tmp_path):
    from cellopt.study.run import run_scenario
    from cellopt.study.runkinds import MethodRun

    with pytest.raises(ValidationError, match=r"MethodRun\('alm'\) label = '' is blank"):
        MethodRun("alm", "")
    scenario = load_scenario(write(tmp_path, SMALL))
    clash = [MethodRun("alm", "mine"), MethodRun("dual", "mine\t")]
    with pytest.raises(ValidationError, match=r"methods: labels \['mine', 'mine\\t'\] differ only"):
        run_scenario(scenario, tmp_path / "out", methods=clash)
    assert not (tmp_path / "out").exists()  # refused before anything is made
