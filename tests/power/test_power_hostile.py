"""Joint power attacked as a careless or hostile user would, and objects of different
networks meeting.

Every ``[power]`` key with unit slips, wrong types, repeats and keys that do nothing, each
refused (naming the file, the key and the fix) or warned about when the file is loaded;
every argument of :func:`~cellopt.power.solve_power` and :class:`~cellopt.power.PowerProblem`;
every place where an object made from one network meets another (other seed, same
counts with other positions, same positions with other ids); Ctrl+C in every phase of a
power run and of a power sweep; and degenerate power problems, each ending with a true
status and finite numbers or a refusal that says what to do.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.problems import random_cells_network

import cellopt
from cellopt import cli, deploy, radio, topology
from cellopt.coverage import coverage_map
from cellopt.drop import Drop
from cellopt.errors import ValidationError
from cellopt.load_coupling import LoadCoupling
from cellopt.power import ColumnGenerationOptions, GainTable, PowerProblem, solve_power
from cellopt.power.patterns import LEVEL_USUAL_MIN_DB, UnusualLevelWarning
from cellopt.study.scenario import load_scenario
from cellopt.study.summary import sweep_table
from cellopt.study.sweep import load_rates

#: 4 omni macros on a square (16 on/off patterns: exact pricing), 24 users, 3 drops.
POWER_SCENARIO = """
methods = ["max_rsrp"]

[network]
builder = "square_grid"
n_side = 2
spacing_m = 400.0

[users]
n = 24

[radio]
n_candidates = 4

[power]
{power}

[seeds]
base = 5
drops = 3
{rest}"""
GOOD_POWER = 'levels_db = [0, "off"]\nenergy_price_per_w = 0.01'


def scenario_file(tmp_path: Path, power: str = GOOD_POWER, rest: str = "",
                  name: str = "power.toml") -> Path:
    path = tmp_path / name
    path.write_text(POWER_SCENARIO.format(power=power, rest=rest), encoding="utf-8")
    return path


def refused(path: Path, *needles: str) -> str:
    """Loading `path` raises one ValidationError naming the file and every needle."""
    with pytest.raises(ValidationError) as err:
        load_scenario(path)
    text = str(err.value)
    assert str(path) in text, text
    assert any(w in text for w in ("fix", "expected", "valid:")), text  # the fix, or what is valid
    for needle in needles:
        assert needle in text, text
    return text


# ============================================================================ [power] keys
BAD_POWER_KEYS = [
    # levels: unit slips (absolute dBm, W, mW, linear factors), repeats, typos, types
    ('levels_db = [46, 30, "off"]', ["levels_db", "≤ 0 dB"]),
    ('levels_db = [40.0, 20.0, 0]', ["levels_db", "≤ 0 dB"]),
    ('levels_db = [40000, "off"]', ["levels_db", "≤ 0 dB"]),
    ("levels_db = [1.0, 0.5, 0.0]", ["levels_db", "≤ 0 dB"]),
    ('levels_db = [0, 0, "off"]', ["levels_db", "gives 0 more than once", "each level once",
                                  '[0, "off"]']),
    ('levels_db = [0, "off", "off"]', ["levels_db", 'gives "off" more than once']),
    ('levels_db = [0, -10, "off", -inf]', ['gives "off" more than once']),
    ('levels_db = [0, -10, "OFF"]', ["[power] key 'levels_db'", "expected array of levels"]),
    ('levels_db = [0, "of"]', ["[power] key 'levels_db'", "expected array of levels"]),
    ('levels_db = "off"', ["[power] key 'levels_db'", "got string"]),
    ("levels_db = 0", ["[power] key 'levels_db'", "got integer"]),
    ("levels_db = [true, 0]", ["[power] key 'levels_db'", "got array"]),
    ('levels_db = ["0", "off"]', ["[power] key 'levels_db'"]),
    ("levels_db = []", ["levels_db is empty"]),
    ('levels_db = ["off"]', ["only \"off\"", "add a level with power"]),
    ("levels_db = [0, nan]", ["levels_db", "≤ 0 dB"]),
    ("levels_db = {}", ["no level list for tiers ['macro']"]),
    ('levels_db = {macro = [0, "off"], pico = [0, "off"]}', ["tiers ['pico']", "does not get"]),
    ('levels_db = {macro = [0, "off"], Macro = [0]}', ["unknown tiers ['Macro']"]),
    ('levels_db = {macro = []}', ["levels_db.macro is empty"]),
    # energy price: sign, type, non-finite values
    ("energy_price_per_w = -0.01", ["energy_price_per_w", "≥ 0"]),
    ('energy_price_per_w = "0.01"', ["[power] key 'energy_price_per_w'", "expected number"]),
    ("energy_price_per_w = [0.01, 0.02]", ["energy_price_per_w", "expected number"]),
    ("energy_price_per_w = true", ["energy_price_per_w", "got boolean"]),
    ("energy_price_per_w = inf", ["energy_price_per_w", "not finite"]),
    ("energy_price_per_w = nan", ["energy_price_per_w", "not finite"]),
    # the solver's keys
    ("tol = 0.0", ["tol"]), ("tol = 2.0", ["tol", "(0, 1]"]), ("tol = nan", ["tol"]),
    ("max_iter = 0", ["max_iter", "≥ 1"]), ("max_iter = -1", ["max_iter"]),
    ("max_iter = 2.5", ["max_iter", "integer"]), ('max_iter = "auto"', ["max_iter", "integer"]),
    ("max_iter = true", ["max_iter", "boolean"]),
    ("time_limit_s = 0.0", ["time_limit_s", "> 0"]), ("time_limit_s = -5.0", ["time_limit_s"]),
    ("time_limit_s = inf", ["time_limit_s", "max_iter decides"]),
    ('master_method = "max_rsrp"', ["master_method", "'ipm'"]),
    ('master_method = "IPM"', ["master_method", "'ipm'"]),
    ('master_method = "dual_dask"', ["master_method"]),
    ("n_interferers = 0", ["n_interferers"]),
    ("n_interferers = 2", ["n_interferers", "n_candidates = 4"]),
    ('label = ""', ["label", "blank"]), ('label = "max_rsrp"', ["label 'max_rsrp'", "distinct"]),
    # keys that belong elsewhere, or nowhere
    ('bound = "exact"', ["unknown key 'bound'", "valid:"]),
    ('pricing = "search"', ["unknown key 'pricing'"]),
    ("progress = true", ["unknown key 'progress'"]),
    ('levels = [0, "off"]', ["unknown key 'levels'"]),
    ("energy_price_per_kw = 10.0", ["unknown key 'energy_price_per_kw'"]),
]


@pytest.mark.parametrize(("line", "needles"), BAD_POWER_KEYS, ids=[b[0] for b in BAD_POWER_KEYS])
def test_bad_power_keys_are_refused_when_the_file_is_loaded(tmp_path, line, needles):
    key = line.split("=")[0].strip()
    kept = [g for g in GOOD_POWER.splitlines() if g.split("=")[0].strip() != key]
    text = refused(scenario_file(tmp_path, "\n".join([*kept, line])), *needles)
    assert "[power]" in text


def test_power_that_cannot_run_here_is_refused_when_loaded(tmp_path):
    refused(scenario_file(tmp_path, rest="[problem]\ninterference = \"load_coupled\"\n"),
            "[power] needs interference = 'full'")
    path = tmp_path / "bands.toml"
    path.write_text(POWER_SCENARIO.format(power=GOOD_POWER, rest="").replace(
        'builder = "square_grid"\nn_side = 2\nspacing_m = 400.0',
        'builder = "hex_grid"\nn_rings = 1\nresource_mhz = [5.0, 5.0]'), encoding="utf-8")
    refused(path, "[power] needs one band")


def test_levels_far_below_full_power_warn_when_loaded_naming_the_file(tmp_path):
    path = scenario_file(tmp_path, 'levels_db = [0, -300, "off"]')
    with pytest.warns(UnusualLevelWarning) as record:
        scenario = load_scenario(path)
    assert len(record) == 1
    text = str(record[0].message)
    for needle in (str(path), "[power] levels_db", "-300 dB", f"[{LEVEL_USUAL_MIN_DB:g}, 0] dB",
                   "tx_power_dbm", "fix"):
        assert needle in text, text
    assert scenario.power.options["levels_db"] == [0.0, -300.0, None]  # legal: used as given
    # Building the power problem of a drop does not say it again.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scenario.power_problem(scenario.build(5))
    # Per tier too, and in Python (where the key is an argument)
    with pytest.warns(UnusualLevelWarning, match=r"levels_db\.macro holds -60 dB"):
        load_scenario(scenario_file(tmp_path, 'levels_db = {macro = [0, -60, "off"]}'))
    with pytest.warns(UnusualLevelWarning, match=r"levels_db holds -90 dB"):
        PowerProblem.from_network(random_cells_network(0), levels_db=[0, -90, None], rng=1)


def test_unsorted_levels_and_minus_inf_for_off_are_used(tmp_path):
    scenario = load_scenario(scenario_file(tmp_path, 'levels_db = ["off", -10, 0]'))
    problem = scenario.power_problem(scenario.build(5))
    assert problem.space.n_levels == 3
    row = problem.space.level_dbm[0]
    np.testing.assert_array_equal(row - row[0], [0.0, -10.0, -np.inf])  # sorted, highest first
    scenario = load_scenario(scenario_file(tmp_path, "levels_db = [0, -inf]", name="inf.toml"))
    assert np.isneginf(scenario.power_problem(scenario.build(5)).space.level_dbm[:, 1]).all()


@pytest.mark.parametrize(("line", "needle"), [("tol = 0.5", "tol=0.5 is outside the usual range "
                                                               "[1e-08, 0.1]"),
                                             ("tol = 1e-12", "tol=1e-12 is outside")])
def test_unusual_solver_keys_warn_when_loaded(tmp_path, line, needle):
    path = scenario_file(tmp_path, GOOD_POWER + "\n" + line)
    with pytest.warns(UserWarning) as record:
        load_scenario(path)
    assert len(record) == 1
    text = str(record[0].message)
    assert str(path) in text and "[power]" in text and needle in text and "fix" in text, text


@pytest.mark.parametrize(("rest", "needles"), [
    ("[deploy]\nsubframes = 20\nsleep_share_off = 0.5\n",
     ["[deploy]", "'sleep_share_off', 'subframes'", "no [power] section", "fix: add a [power]"]),
    ("[problem]\nn_interferers = 16\n", ["[problem]", "'n_interferers'", "ignored",
                                          "interference = 'full'", "[power] n_interferers"]),
])
def test_keys_the_power_setup_does_not_use_warn_as_ignored(tmp_path, rest, needles):
    text = POWER_SCENARIO.format(power=GOOD_POWER, rest=rest)
    if "[deploy]" in rest:  # the schedule keys without a [power] section
        text = text.replace("[power]\n" + GOOD_POWER, "")
    path = tmp_path / "ignored.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.warns(UserWarning) as record:
        load_scenario(path)
    messages = [str(r.message) for r in record]
    assert len(messages) == 1, messages
    for needle in (str(path), *needles):
        assert needle in messages[0], messages[0]


def test_the_cli_prints_one_warning_line_for_an_ignored_key(tmp_path, capsys):
    path = tmp_path / "cli.toml"
    path.write_text(POWER_SCENARIO.format(power=GOOD_POWER, rest="[problem]\nn_interferers = 16\n"),
                    encoding="utf-8")
    assert cli.main(["experiment", str(path), "--drops", "1", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("cellopt: warning: ")]
    assert len(lines) == 1 and "n_interferers" in lines[0] and "Traceback" not in err


# ============================================================================ energy prices
@pytest.fixture(scope="module")
def net5():
    """5 cells (1 macro, 4 picos), 20 users."""
    return random_cells_network(0)


def test_an_energy_price_that_switches_everything_down_warns_with_the_unit(net5):
    with pytest.warns(UserWarning, match="energy_price_per_w") as record:
        PowerProblem.from_network(net5, levels_db=[0, None], energy_price_per_w=10.0, rng=1)
    text = str(record[0].message)
    assert "per mW" in text and "fix" in text and "users' total weight" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a usual price says nothing
        PowerProblem.from_network(net5, levels_db=[0, None], energy_price_per_w=0.05, rng=1)
    with pytest.raises(ValidationError, match="rounding, not the users"):
        PowerProblem.from_network(net5, levels_db=[0, None], energy_price_per_w=1e12, rng=1)


# ============================================================================ PowerProblem
BAD_PROBLEM_ARGS = [
    (dict(levels_db="off"), ["levels_db='off'", "fix"]),
    (dict(levels_db=[0, "off"]), ["\"off\" is the scenario file's word", "None"]),
    (dict(levels_db=[0, 0, None]), ["gives 0 more than once"]),
    (dict(levels_db=[0, None, -np.inf]), ['gives "off" more than once']),
    (dict(levels_db=[10 * math.log10(40_000), None]), ["levels_db", "≤ 0 dB"]),  # 40 W in dBm
    (dict(levels_db={"macro": [0, None]}), ["missing tiers ['pico']"]),
    (dict(levels_db={"macro": [0], "pico": [0], "femto": [0]}), ["femto", "lacks"]),
    (dict(energy_price_per_w=-1.0), ["energy_price_per_w"]),
    (dict(energy_price_per_w=[0.1, 0.2]), ["energy_price_per_w has shape (2,)"]),
    (dict(energy_price_per_w=np.nan), ["energy_price_per_w"]),
    (dict(energy_price_per_w="cheap"), ["energy_price_per_w"]),
    (dict(n_candidates=0), ["n_candidates"]),
    (dict(n_candidates=2.5), ["n_candidates"]),
    (dict(n_interferers=2, n_candidates=4), ["n_interferers", "≥ n_candidates (4)"]),
    (dict(model="uma"), ["model is a str", "RadioModel"]),
    (dict(gains="table"), ["gains is a str", "GainTable"]),
    (dict(alpha=-1.0), ["alpha"]), (dict(alpha=np.nan), ["alpha"]), (dict(alpha="1"), ["alpha"]),
]


@pytest.mark.parametrize(("kwargs", "needles"), BAD_PROBLEM_ARGS,
                         ids=[str(sorted(k)) + str(i) for i, (k, _) in enumerate(BAD_PROBLEM_ARGS)])
def test_bad_power_problem_arguments_are_named(net5, kwargs, needles):
    with pytest.raises(ValidationError) as err:
        PowerProblem.from_network(net5, **{"levels_db": [0, None], "rng": 1, **kwargs})
    for needle in needles:
        assert needle in str(err.value), str(err.value)


def test_power_problem_constructors_refuse_what_is_not_theirs(net5):
    with pytest.raises(ValidationError, match="network is a NoneType"):
        PowerProblem.from_network(None)
    with pytest.raises(ValidationError, match="drop is a Network; fix"):
        PowerProblem.from_drop(net5)
    with pytest.raises(ValidationError, match="needs both; fix"):
        PowerProblem.from_network(net5.replace(users=net5.users.iloc[:0]), levels_db=[0, None])


# ============================================================================ solve_power
@pytest.fixture(scope="module")
def problem(net5):
    return PowerProblem.from_network(net5, levels_db=[0, -10, None], energy_price_per_w=0.01, rng=1)


BAD_SOLVE_ARGS = [
    (dict(method="max_rsrp"), ["cannot solve over power patterns", "'ipm'"]),
    (dict(method=None), ["method=None"]), (dict(method="IPM"), ["method='IPM'"]),
    (dict(tol=0.0), ["tol=0"]), (dict(tol="1e-4"), ["tol='1e-4'"]), (dict(tol=np.nan), ["tol=nan"]),
    (dict(max_iter=0), ["max_iter=0", "≥ 1, 'auto' or None"]), (dict(max_iter=-1), ["max_iter"]),
    (dict(max_iter=2.0), ["max_iter=2.0"]), (dict(max_iter=True), ["max_iter=True"]),
    (dict(max_iter="AUTO"), ["max_iter='AUTO'"]),
    (dict(time_limit_s=0.0), ["time_limit_s=0"]), (dict(time_limit_s=-1.0), ["time_limit_s"]),
    (dict(time_limit_s=np.nan), ["time_limit_s=nan"]), (dict(time_limit_s=True), ["time_limit_s"]),
    (dict(progress=1), ["progress=1", "True (a bar per phase)"]),
    (dict(progress="no"), ["progress='no'"]),
    (dict(callback=1), ["callback=1", "returns True to stop"]),
    (dict(options={"bound": "exact"}), ["ColumnGenerationOptions"]),
]


@pytest.mark.parametrize(("kwargs", "needles"), BAD_SOLVE_ARGS,
                         ids=[f"{k}={v!r}" for k, v in (next(iter(a.items())) for a, _ in BAD_SOLVE_ARGS)])
def test_bad_solve_power_arguments_are_named(problem, kwargs, needles):
    with pytest.raises(ValidationError) as err:
        solve_power(problem, **{"progress": False, **kwargs})
    for needle in needles:
        assert needle in str(err.value), str(err.value)


def test_solve_power_refuses_what_is_not_a_power_problem(problem):
    for bad in (None, "problem", problem.master(problem.space.full_power()[None])):
        with pytest.raises(ValidationError, match="fix: pass a PowerProblem"):
            solve_power(bad, progress=False)


@pytest.mark.parametrize("name", ["bound", "pricing", "cluster_cells"])
def test_column_generation_options_given_as_arguments_say_where_they_go(problem, name):
    value = {"bound": "exact", "pricing": "search", "cluster_cells": 2}[name]
    with pytest.raises(ValidationError) as err:
        solve_power(problem, progress=False, **{name: value})
    assert isinstance(err.value, TypeError)  # what Python raises for an unknown keyword
    assert f"options=ColumnGenerationOptions({name}={value!r})" in str(err.value)
    with pytest.raises(ValidationError, match=r"unknown argument\(s\) \['colour'\]; fix: use the "
                                              r"arguments of solve_power: \['method'"):
        solve_power(problem, colour="red")


@pytest.mark.parametrize("answer", ["yes", 1, 0.0, [True], np.array([True, False]), {}])
def test_a_callback_returning_junk_is_refused_not_guessed(problem, answer):
    with pytest.raises(ValidationError, match=r"callback returned .* fix: return True to stop"):
        solve_power(problem, progress=False, callback=lambda row: answer)
    # the same rule for every association solve (the masters' callbacks included)
    with pytest.raises(ValidationError, match="callback returned"):
        cellopt.solve(problem.master(problem.space.full_power()[None]), "ipm",
                      callback=lambda row: answer)


def test_callbacks_that_answer_properly_stop_or_go_on(problem):
    go = solve_power(problem, progress=False, callback=lambda row: None)
    assert go.status == "optimal" and len(go.history) > 1
    for stop in (True, np.bool_(True)):
        stopped = solve_power(problem, progress=False, callback=lambda row, s=stop: s)
        assert stopped.status == "stopped" and len(stopped.history) == 1
        assert np.isfinite([stopped.objective, stopped.upper_bound]).all()
    assert solve_power(problem, progress=False, callback=lambda row: np.bool_(False)).status == "optimal"


def test_a_callback_or_progress_that_raises_passes_its_own_error_on(problem):
    class Mine(Exception):
        pass

    def boom(_):
        raise Mine("the user's own bug")

    with pytest.raises(Mine, match="own bug"):
        solve_power(problem, progress=False, callback=boom)
    with pytest.raises(Mine, match="own bug"):
        solve_power(problem, progress=boom)
    # a progress function's return value is only displayed, never read
    assert solve_power(problem, progress=lambda e: "junk").status == "optimal"


def test_budget_edges_end_with_a_true_status_and_finite_numbers(problem):
    one = solve_power(problem, progress=False, max_iter=1)
    assert one.status == "max_iter" and len(one.history) == 1
    tiny = solve_power(problem, progress=False, time_limit_s=1e-12)
    assert tiny.status == "time_limit" and len(tiny.history) == 1
    for sol in (one, tiny, solve_power(problem, progress=False, max_iter=None),
                solve_power(problem, progress=False, max_iter=np.int64(3)),
                solve_power(problem, progress=False, time_limit_s=math.inf)):
        assert np.isfinite([sol.objective, sol.upper_bound, sol.gap, sol.power.energy_w]).all()
        assert sol.upper_bound >= sol.objective - 1e-9 * abs(sol.objective)


# ============================================================================ mixed networks
@pytest.fixture(scope="module")
def drops():
    """A drop and three of other networks with its counts: another seed (other users),
    the same positions with other user ids, the same ids with the cells moved 50 m."""
    net = topology.hex_grid(n_rings=1, wraparound=False)
    a, b = topology.drop_users(net, 40, rng=1), topology.drop_users(net, 40, rng=2)
    users = a.users.copy()
    users["user_id"] = users["user_id"] + 1000
    cells = a.cells.copy()
    cells.geometry = cells.geometry.translate(50.0, 0.0)
    made = {"own": a, "other seed": b, "other ids": a.replace(users=users),
            "moved cells": a.replace(cells=cells)}
    out = {k: Drop.from_network(n, radio.link_table(n, rng=1)) for k, n in made.items()}
    assert len({(d.problem.n_users, d.problem.n_cells) for d in out.values()}) == 1  # same counts
    return out


@pytest.fixture(scope="module")
def solutions(drops):
    return {k: d.solve() for k, d in drops.items()}


OTHERS = ["other seed", "other ids", "moved cells"]
DIFFER = {"other seed": "users", "other ids": "users", "moved cells": "cells"}


def assert_other_network(err, *names):
    text = str(err.value)
    assert "describe different networks" in text and "(ids and positions) differ" in text, text
    assert "fix" in text, text
    for name in names:
        assert name in text, text


@pytest.mark.parametrize("other", OTHERS)
def test_a_bound_from_another_network_is_refused(drops, solutions, other):
    own = drops["own"]
    offsets = deploy.cell_offsets(own, max_rounds=0)
    with pytest.raises(ValidationError) as err:
        deploy.evaluate(own, offsets, bound=solutions[other])
    assert_other_network(err, "bound (dual)", "the drop's problem", DIFFER[other])
    assert deploy.evaluate(own, offsets, bound=solutions["own"]).gap >= 0


@pytest.mark.parametrize("other", OTHERS)
def test_a_solution_from_another_network_is_refused_by_cell_offsets(drops, solutions, other):
    with pytest.raises(ValidationError) as err:
        deploy.cell_offsets(drops["own"], solutions[other], max_rounds=0)
    assert_other_network(err, "solution (dual)", DIFFER[other])


@pytest.mark.parametrize("other", OTHERS)
def test_tables_and_maps_refuse_a_solution_from_another_network(drops, solutions, other):
    own = drops["own"]
    with pytest.raises(ValidationError) as err:
        own.frames(solutions[other])
    assert_other_network(err, "solution (dual)")
    with pytest.raises(ValidationError) as err:
        coverage_map(own, solutions[other], resolution_m=400.0)
    assert_other_network(err, "solution (dual)")
    users, cells = own.frames(solutions["own"])
    assert len(users) == own.network.n_users and len(cells) == own.network.n_cells


def test_a_solution_of_other_counts_is_refused_as_such(drops, solutions):
    net = topology.drop_users(topology.hex_grid(n_rings=1, wraparound=False), 30, rng=1)
    fewer = Drop.from_network(net, radio.link_table(net, rng=1))
    with pytest.raises(ValidationError, match=r"not a solution of drop\.problem but of another "
                                              r"problem: 30 users and 21 cells"):
        drops["own"].frames(fewer.solve())
    with pytest.raises(ValidationError, match="solution is a str; fix"):
        drops["own"].frames("sol")


@pytest.mark.parametrize("other", OTHERS)
def test_drop_parts_of_another_network_are_refused(drops, other):
    own, theirs = drops["own"], drops[other]
    with pytest.raises(ValidationError) as err:
        dataclasses.replace(own, links=theirs.links)
    assert_other_network(err, "link table")
    with pytest.raises(ValidationError) as err:
        dataclasses.replace(own, problem=theirs.problem)
    assert_other_network(err, "the drop's problem")


@pytest.mark.parametrize("other", OTHERS)
def test_a_load_coupling_of_another_network_is_refused(drops, other):
    own, theirs = drops["own"], drops[other]
    coupling = LoadCoupling.from_drop(theirs)
    with pytest.raises(ValidationError) as err:
        dataclasses.replace(own, coupling=coupling)
    assert_other_network(err, "coupling")
    with pytest.raises(ValidationError) as err:
        coupling.check(own.problem)
    assert_other_network(err, "the coupling", "the problem")
    LoadCoupling.from_drop(own).check(own.problem)
    # a load-coupled solution records its network like any other, and is checked where read
    coupled = dataclasses.replace(theirs, coupling=coupling).solve()
    assert coupled.network_fingerprint == theirs.problem.network_fingerprint is not None
    with pytest.raises(ValidationError) as err:
        own.frames(coupled)
    assert_other_network(err, "solution (dual)")


@pytest.mark.parametrize("other", OTHERS)
def test_power_objects_of_another_network_are_refused(drops, other):
    own, theirs = drops["own"], drops[other]
    space = PowerProblem.from_drop(own, levels_db=[0, None]).space
    with pytest.raises(ValidationError) as err:
        PowerProblem.from_parts(own.network, GainTable.from_network(theirs.network, rng=1), space)
    assert_other_network(err, "gain table")
    with pytest.raises(ValidationError) as err:
        PowerProblem.from_network(own.network, gains=GainTable.from_network(theirs.network, rng=1))
    assert_other_network(err, "gain table")
    # a pattern space holds for any users of its cells, and for none of other cells
    their_space = PowerProblem.from_drop(theirs, levels_db=[0, None]).space
    gains = GainTable.from_network(own.network, rng=1)
    if other == "moved cells":
        with pytest.raises(ValidationError) as err:
            PowerProblem.from_parts(own.network, gains, their_space)
        assert_other_network(err, "the pattern space (space)", "tx_power_dbm")
    else:
        assert PowerProblem.from_parts(own.network, gains, their_space).n_cells == own.network.n_cells


@pytest.fixture(scope="module")
def power_solutions(drops):
    """Power problems and their solutions of the own drop and of another seed's."""
    problems = {k: PowerProblem.from_drop(drops[k], levels_db=[0, None], energy_price_per_w=0.01)
                for k in ("own", "other seed")}
    options = ColumnGenerationOptions(bound=None, pricing="search")
    return problems, {k: solve_power(p, max_iter=2, progress=False, options=options)
                      for k, p in problems.items()}


def test_a_power_solution_of_another_network_is_refused_everywhere(drops, power_solutions):
    problems, sols = power_solutions
    own, theirs = drops["own"], sols["other seed"]
    assert theirs.network_fingerprint == theirs.power.network_fingerprint is not None
    with pytest.raises(ValidationError) as err:
        own.frames(theirs)
    assert_other_network(err, "solution (power+ipm)")
    with pytest.raises(ValidationError) as err:
        deploy.subframe_schedule(problems["own"], theirs)
    assert_other_network(err, "power solution")
    with pytest.raises(ValidationError) as err:
        deploy.cell_offsets(own, theirs, max_rounds=0)
    assert_other_network(err, "solution (power+ipm)")
    with pytest.raises(ValidationError, match=r"bound is a power solution \(power\+ipm\): its "
                                              r"upper bound is of the joint power problem"):
        deploy.evaluate(own, deploy.cell_offsets(own, max_rounds=0), bound=sols["own"])
    users, _ = own.frames(sols["own"])  # its own solution is read
    assert len(users) == own.network.n_users


def test_offsets_fitted_on_moved_cells_are_refused(drops):
    fitted = deploy.cell_offsets(drops["moved cells"], max_rounds=0)
    with pytest.raises(ValidationError, match="fitted on another network"):
        deploy.evaluate(drops["own"], fitted, bound=1e9)


def test_a_problem_made_link_by_link_records_no_network_and_is_matched_by_counts(drops):
    own = drops["own"]
    p = own.problem
    plain = cellopt.Problem.from_links(p.user, p.cell, p.rate_mbps, n_users=p.n_users,
                                       n_cells=p.n_cells)
    sol = cellopt.solve(plain, "dual")
    assert plain.network_fingerprint is None and sol.network_fingerprint is None
    assert own.solve().network_fingerprint == p.network_fingerprint is not None
    assert len(own.frames(sol)[0]) == own.network.n_users


# ============================================================================ Ctrl+C
PHASES = ["column generation", "finishing the answer", "relaxed bound", "decomposition bound"]


@pytest.fixture(scope="module")
def relaxed():
    """A problem whose run goes through every phase, and its options."""
    problem = PowerProblem.from_network(random_cells_network(3, n_cells=6, n_users=40),
                                        levels_db=[0, -10, None], energy_price_per_w=0.05, rng=1)
    return problem, ColumnGenerationOptions(bound="relaxed", pricing="search", cluster_cells=2,
                                            scope_cells=2)


def interrupt_at(phase: str, after: int = 1):
    """A progress function that presses Ctrl+C at the `after`-th event of `phase`."""
    seen = []

    def progress(event):
        if event["phase"] == phase:
            seen.append(event)
            if len(seen) == after:
                raise KeyboardInterrupt
    return progress


@pytest.mark.parametrize("phase", PHASES)
def test_ctrl_c_in_every_phase_propagates_and_leaves_nothing_behind(relaxed, phase):
    problem, options = relaxed
    with pytest.raises(KeyboardInterrupt):
        solve_power(problem, max_iter=3, options=options, progress=interrupt_at(phase, after=2))
    again = solve_power(problem, max_iter=3, options=options, progress=False)
    fresh = solve_power(dataclasses.replace(problem), max_iter=3, options=options, progress=False)
    assert again.status == fresh.status
    assert again.objective == fresh.objective and again.upper_bound == fresh.upper_bound
    np.testing.assert_array_equal(again.power.patterns, fresh.power.patterns)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """A power scenario of 3 drops and its uninterrupted sweep."""
    base = tmp_path_factory.mktemp("power_sweep")
    path = scenario_file(base)
    out = base / "reference"
    assert cli.main(["experiment", str(path), "--out", str(out)]) == 0
    return path, out


def same_results(out: Path, ref: Path) -> None:
    got, want = pd.read_csv(out / "index.csv"), pd.read_csv(ref / "index.csv")
    pd.testing.assert_frame_equal(got.drop(columns="wall_s"), want.drop(columns="wall_s"),
                                  check_exact=True)
    pd.testing.assert_frame_equal(sweep_table(got, []), sweep_table(want, []), check_exact=True)
    for k in range(3):
        pd.testing.assert_frame_equal(load_rates(out, "g000", k), load_rates(ref, "g000", k),
                                      check_exact=True)
    assert not list(out.rglob(".*.tmp")) and not list(out.rglob("*.tmp"))


@pytest.mark.parametrize("phase", ["column generation", "finishing the answer"])
def test_ctrl_c_in_a_power_sweep_is_one_line_and_resume_gives_the_same_results(
        sweep, tmp_path, capsys, monkeypatch, phase):
    path, reference = sweep
    real, calls = solve_power, []

    def interrupted(problem, **options):  # Ctrl+C in the power run of the second drop
        calls.append(1)
        if len(calls) == 2:
            options["progress"] = interrupt_at(phase)
        return real(problem, **options)

    monkeypatch.setattr("cellopt.study.runkinds.solve_power", interrupted)
    out = tmp_path / "out"
    assert cli.main(["experiment", str(path), "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[-1] == (f"cellopt: interrupted; finished drops are kept in {out}: "
                                    f"continue with `cellopt experiment {path} --out {out} --resume`")
    assert sorted(p.name for p in out.glob("drops/*.csv")) == ["g000_drop0.csv"]
    assert not list(out.rglob("*.tmp"))
    monkeypatch.setattr("cellopt.study.runkinds.solve_power", real)
    assert cli.main(["experiment", str(path), "--out", str(out), "--resume"]) == 0
    same_results(out, reference)


# ============================================================================ degenerate problems
def finite_and_true(sol) -> None:
    assert sol.status in ("optimal", "converged"), sol.message
    values = [sol.objective, sol.upper_bound, sol.gap, sol.power.energy_w, sol.utility, sol.energy_cost]
    assert np.isfinite(values).all(), values
    assert np.isfinite(sol.power.pattern_share).all() and sol.power.pattern_share.sum() == pytest.approx(1)


def test_one_cell(net5):
    one = random_cells_network(0, n_cells=1, n_users=10)
    sol = solve_power(PowerProblem.from_network(one, levels_db=[0, -10, None],
                                                energy_price_per_w=0.05, rng=1), progress=False)
    finite_and_true(sol)
    assert sol.power.patterns.shape[1] == 1


def test_every_cell_at_one_level_is_the_fixed_power_answer(net5):
    for levels in ([0], {"macro": [-10], "pico": [-10]}):
        sol = solve_power(PowerProblem.from_network(net5, levels_db=levels, rng=1), progress=False)
        finite_and_true(sol)
        assert len(sol.power.patterns) == 1 and sol.energy_cost == 0.0


def test_zero_energy_price(net5):
    sol = solve_power(PowerProblem.from_network(net5, levels_db=[0, -10, None],
                                                energy_price_per_w=0.0, rng=1), progress=False)
    finite_and_true(sol)
    assert sol.energy_cost == 0.0 and sol.objective == pytest.approx(sol.utility)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 2.0])
def test_an_enormous_energy_price_still_ends_true_and_finite(net5, alpha):
    with pytest.warns(UserWarning, match="energy_price_per_w"):
        problem = PowerProblem.from_network(net5, levels_db=[0, -10, None],
                                            energy_price_per_w=1e5, rng=1, alpha=alpha)
    sol = solve_power(problem, progress=False)
    finite_and_true(sol)
    cheap = solve_power(PowerProblem.from_network(net5, levels_db=[0, -10, None], rng=1,
                                                  alpha=alpha), progress=False)
    assert sol.power.energy_w < 1e-2 * cheap.power.energy_w  # the price turns the power down
    if alpha == 0.0:  # rates are worth little next to energy: everything off
        assert np.isneginf(sol.power.cell_power_dbm).all()


def test_only_off_and_nobody_in_reach_are_refused_with_the_fix(net5):
    with pytest.raises(ValidationError, match=r"has no level that is on.*fix"):
        PowerProblem.from_network(net5, levels_db=[None], rng=1)
    far = net5.users.copy()
    far.geometry = far.geometry.translate(60_000.0, 0.0)
    away = net5.replace(users=far)
    with pytest.raises(ValidationError, match=r"users rows \[0, 1, .*\] and 10 more of 20 have no "
                                              r"candidate link .* fix: build the problem with "
                                              r"PowerProblem.from_drop"):
        PowerProblem.from_network(away, levels_db=[0, None], rng=1)  # refused when built
    some = far.copy()
    some.geometry = net5.users.geometry.where(np.arange(20) >= 3, some.geometry)
    with pytest.raises(ValidationError, match=r"users rows \[0, 1, 2\] of 20"):
        PowerProblem.from_network(net5.replace(users=some), levels_db=[-10, None], rng=1)
    assert PowerProblem.from_network(away, levels_db=[0, None], rng=1, alpha=0.5).n_users == 20
    drop = Drop.from_network(away, radio.link_table(away, rng=1))
    with pytest.raises(ValidationError, match="no user with a usable link; fix"):
        PowerProblem.from_drop(drop, levels_db=[0, None])


@pytest.mark.parametrize("phase", ["column generation", "finishing the answer"])
def test_ctrl_c_in_the_power_run_of_cellopt_run_is_one_line_and_writes_nothing(
        tmp_path, capsys, monkeypatch, phase):
    path = tmp_path / "one.toml"
    path.write_text(POWER_SCENARIO.format(power=GOOD_POWER, rest="").replace("drops = 3", "drops = 1"),
                    encoding="utf-8")
    real = solve_power

    def interrupted(problem, **options):
        options["progress"] = interrupt_at(phase)
        return real(problem, **options)

    monkeypatch.setattr("cellopt.study.runkinds.solve_power", interrupted)
    out = tmp_path / "out"
    assert cli.main(["run", str(path), "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "cellopt: interrupted" and "Traceback" not in err
    assert not [p for p in out.rglob("*") if p.is_file()]  # no table, layer or partial file
