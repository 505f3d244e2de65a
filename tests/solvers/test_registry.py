"""Tests of the method registry: declared capabilities match what the methods do, the
method table, option types and unknown options, and the option docs."""

from __future__ import annotations

import inspect
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from helpers.problems import random_problem

import cellopt
from cellopt import Problem, ValidationError
from cellopt.solvers import (
    BLOCK_METHODS,
    METHOD_INFO,
    METHODS,
    PATTERN_METHODS,
    MethodInfo,
    OptionInfo,
    method_info,
    method_options,
    method_table,
    register,
    solve,
)
from cellopt.solvers.arguments import check_arguments
from cellopt.solvers.registry import KINDS, methods_with

ALL = sorted(METHODS)
COMMON = {"tol", "max_iter", "time_limit_s", "callback"}


# ====================================================================== problems
def small_problem(seed: int, **options) -> Problem:
    """12 users, each seeing 2 of 4 cells, with RSRP, SINR and tiers so the baselines run."""
    return random_problem(seed, "radio", **{"n_users": 12, "n_cells": 4, "n_cand": 2, **options})


def pattern_problem(seed: int, blocks: bool = False) -> Problem:
    """Every user on every cell and power pattern, free pattern shares (one share block, or
    two: cells 0–1 and 2–3)."""
    rng = np.random.default_rng(seed)
    n_users, n_cells, n_patterns = 10, 4, 3
    shape = (n_users, n_cells, n_patterns)
    u, c, k = (np.broadcast_to(a, shape).ravel() for a in np.ix_(
        np.arange(n_users), np.arange(n_cells), np.arange(n_patterns)))
    rate = rng.lognormal(1.0, 1.0, u.size)
    cost = rng.uniform(0, 3, (2, n_patterns)) if blocks else rng.uniform(0, 3, n_patterns)
    return Problem.from_links(u, c, rate, n_users=n_users, n_cells=n_cells, resource=k,
                              n_resources=n_patterns, pattern_cost=cost, rsrp_dbm=-rate,
                              sinr_db=rate, cell_tier=np.zeros(n_cells, int),
                              share_block=np.array([0, 0, 1, 1]) if blocks else None)


# ====================================================================== declarations
def test_every_method_is_declared():
    assert set(METHOD_INFO) == set(METHODS)
    for name in ALL:
        info = method_info(name)
        assert isinstance(info, MethodInfo) and info is METHOD_INFO[name]
        assert info.name == name and info.function is METHODS[name]
        assert info.kind in KINDS
        assert all(isinstance(o, OptionInfo) for o in info.options.values())
        assert info.summary


def test_declared_capabilities():
    # What each method declares, written out once: a change here is a change of the API.
    expected = {
        "alm": ("optimizer", True, True, False, False, ("x0", "prices0", "theta0")),
        "dual": ("optimizer", True, True, True, False, ("prices0",)),
        "dual_dask": ("optimizer", False, False, False, True, ()),
        "ipm": ("optimizer", True, True, True, False, ()),
        "reference": ("reference", True, True, True, False, ()),
        "max_rsrp": ("baseline", False, False, False, False, ()),
        "max_sinr": ("baseline", False, False, False, False, ()),
        "range_expansion": ("baseline", False, False, False, False, ()),
        "load_aware": ("baseline", False, False, False, False, ()),
        "cell_offsets": ("baseline", False, False, False, False, ()),
        "random": ("baseline", False, False, False, False, ()),
    }
    assert set(expected) == set(METHODS)
    for name, want in expected.items():
        info = method_info(name)
        assert (info.kind, info.single_association, info.patterns, info.share_blocks,
                info.distributed, info.warm_start) == want, name
    assert methods_with("distributed") == ["dual_dask"]


def test_pattern_and_block_sets_are_derived_from_the_declarations():
    assert PATTERN_METHODS == set(methods_with("patterns"))
    assert BLOCK_METHODS == set(methods_with("share_blocks"))
    assert BLOCK_METHODS <= PATTERN_METHODS
    assert cellopt.solvers.PATTERN_METHODS is PATTERN_METHODS


def test_options_come_from_the_signature():
    for name in ALL:
        params = inspect.signature(METHODS[name]).parameters
        keyword = [p for p in params.values() if p.kind is inspect.Parameter.KEYWORD_ONLY
                   and p.name not in COMMON]
        options = method_info(name).options
        assert list(options) == [p.name for p in keyword]
        assert method_options(name) == sorted(options)
        for p in keyword:
            assert options[p.name].default == p.default or options[p.name].default is p.default


def test_option_annotations_are_readable():
    alm = method_info("alm").options
    assert alm["sigma0"].annotation == "float | None"
    assert alm["inner_steps"].annotation == "int"
    assert alm["x0"].annotation == "ndarray | None"
    assert alm["prices0"].annotation == "tuple[ndarray, ndarray] | None"
    reference = method_info("reference").options
    assert reference["solver_options"].annotation == "Mapping[str, Any] | None"
    assert reference["verbose"].annotation == "bool"
    assert str(alm["inner_steps"]) == "inner_steps: int = 50"
    assert str(alm["sigma0"]) == "sigma0: float | None = None"


def test_warm_start_options_exist_in_the_signature():
    for name in ALL:
        info = method_info(name)
        params = inspect.signature(info.function).parameters
        for option in info.warm_start:
            assert option in info.options
            assert params[option].kind is inspect.Parameter.KEYWORD_ONLY
            assert params[option].default is None  # a warm start is optional


@pytest.mark.parametrize("method", [n for n in ALL if method_info(n).warm_start])
def test_declared_warm_starts_are_taken(method):
    # Restarting from the optimum, every declared warm start is accepted and stays optimal.
    info = method_info(method)
    p = pattern_problem(3) if info.patterns else small_problem(3)
    cold = solve(p, method, tol=1e-6)
    assert cold.status == "optimal", cold.message
    start = {"x0": cold.x, "prices0": (cold.prices["airtime"], cold.prices["backhaul"]),
             "theta0": cold.pattern_share}
    warm = solve(p, method, tol=1e-6, **{k: start[k] for k in info.warm_start})
    assert warm.status == "optimal", warm.message
    assert warm.objective == pytest.approx(cold.objective, rel=1e-5, abs=1e-6)


def test_the_convex_methods_are_the_optimizers_and_the_reference():
    assert methods_with("convex") == sorted(n for n in METHODS
                                            if method_info(n).kind in ("optimizer", "reference"))
    assert "alm" in methods_with("convex") and "max_rsrp" not in methods_with("convex")


# ====================================================================== declared = behaviour
@pytest.mark.parametrize("method", ALL)
def test_single_association_as_declared(method):
    p = small_problem(1)
    if method_info(method).single_association:
        sol = solve(p, method, single_association=True)
        assert sol.status in ("optimal", "solved"), sol.message
        used = sol.x > 1e-12
        cells_per_user = pd.Series(p.cell[used]).groupby(p.user[used]).nunique()
        assert (cells_per_user <= 1).all()
    else:
        with pytest.raises(ValidationError, match="single_association applies to") as err:
            solve(p, method, single_association=True)
        for able in methods_with("single_association"):
            assert repr(able) in str(err.value)
        assert "fix" in str(err.value)


@pytest.mark.parametrize("method", ALL)
def test_free_pattern_shares_as_declared(method):
    p = pattern_problem(0)
    if method_info(method).patterns:
        sol = solve(p, method, tol=1e-5)
        assert sol.status == "optimal", sol.message
        assert sol.pattern_share.sum() == pytest.approx(1.0)
    else:
        with pytest.raises(ValidationError, match="power-pattern") as err:
            solve(p, method)
        assert str(methods_with("patterns")) in str(err.value)


@pytest.mark.parametrize("method", ALL)
def test_share_blocks_as_declared(method):
    p = pattern_problem(1, blocks=True)
    info = method_info(method)
    if info.share_blocks:
        sol = solve(p, method, tol=1e-5)
        assert sol.status == "optimal", sol.message
        np.testing.assert_allclose(sol.pattern_share.sum(axis=1), 1.0)
    else:
        with pytest.raises(ValidationError) as err:
            solve(p, method)
        want = "share_block" if info.patterns else "power-pattern"
        assert want in str(err.value)


def test_inner_method_is_checked_against_the_registry():
    p = small_problem(2, n_resources=2)
    with pytest.raises(ValidationError, match="is a baseline") as err:
        solve(p, "max_rsrp", inner_method="load_aware")
    assert str(methods_with("convex")) in str(err.value)
    with pytest.raises(ValidationError, match="unknown method 'simplex'"):
        solve(p, "max_rsrp", inner_method="simplex")
    sol = solve(p, "max_rsrp", inner_method="ipm")
    assert "'ipm'" in sol.message


# ====================================================================== table
def test_method_table_has_one_row_per_method():
    table = method_table()
    assert sorted(table.index) == ALL and table.index.name == "method"
    assert list(table.columns) == ["kind", "single_association", "patterns", "share_blocks",
                                   "distributed", "warm_start", "options", "summary"]
    assert list(table["kind"]) == sorted(table["kind"], key=KINDS.index)
    assert table.loc["alm", "warm_start"] == "x0, prices0, theta0"
    assert table.loc["ipm", "warm_start"] == "" and table.loc["ipm", "options"] == ""
    assert "inner_steps: int = 50" in table.loc["alm", "options"].split("; ")
    for name in ALL:
        info = method_info(name)
        row = table.loc[name]
        assert (row["kind"], row["single_association"], row["patterns"], row["share_blocks"],
                row["distributed"]) \
            == (info.kind, info.single_association, info.patterns, info.share_blocks, info.distributed)
        assert len([s for s in row["options"].split("; ") if s]) == len(info.options)


# ====================================================================== options
@pytest.mark.parametrize("method", ALL)
def test_unknown_option_fails_the_same_way_for_every_method(method):
    with pytest.raises(ValidationError) as err:
        solve(small_problem(0), method, bogus=1)
    text = str(err.value)
    assert err.value.problems == [text]  # one problem, one line
    assert f"unknown option(s) ['bogus'] for method {method!r}; fix:" in text
    for name in method_options(method):
        assert repr(name) in text


@pytest.mark.parametrize(("method", "options", "words"), [
    ("alm", dict(sigma0="1e-3"), ["sigma0='1e-3'", "'alm'", "expected float | None", "got str",
                                  "fix: give a real number, e.g. sigma0=0.001, or None"]),
    ("alm", dict(inner_steps=2.5), ["inner_steps=2.5", "expected int", "got float",
                                    "fix: give a whole number"]),
    ("alm", dict(inner_steps=20.0), ["inner_steps=20.0", "e.g. inner_steps=20"]),
    ("dual", dict(tau0="0.1"), ["tau0='0.1'", "expected float", "e.g. tau0=0.1"]),
    ("dual", dict(stage_maxiter=True), ["stage_maxiter=True", "expected int", "got bool"]),
    ("reference", dict(verbose="yes"), ["verbose='yes'", "expected bool", "True or False"]),
    ("reference", dict(max_links=1e5), ["max_links=100000.0", "e.g. max_links=100000"]),
    ("load_aware", dict(max_rounds=2.5), ["max_rounds=2.5", "expected int | None", ", or None"]),
])
def test_option_of_the_wrong_type(method, options, words):
    with pytest.raises(ValidationError) as err:
        solve(small_problem(0), method, **options)
    for word in words:
        assert word in str(err.value), (word, str(err.value))


@pytest.mark.parametrize(("method", "options"), [
    ("alm", dict(sigma0=None, inner_steps=np.int64(50), inner_tol=np.float32(1e-9))),
    ("alm", dict(sigma0=1, inner_tol=np.float64(1e-9))),   # an integer for a float
    ("dual", dict(tau0=np.float64(0.05), stage_maxiter=np.int32(60))),
    ("reference", dict(verbose=np.bool_(False), max_links=np.int64(1000))),
    ("load_aware", dict(max_rounds=None)),
    ("range_expansion", dict(bias_db={"pico": 3.0})),        # mappings are not type-checked
    ("range_expansion", dict(bias_db=3)),
])
def test_option_of_the_right_type_passes(method, options):
    sol = solve(small_problem(0), method, **options)
    assert sol.status in ("optimal", "solved"), sol.message


def test_argument_problems_are_reported_together():
    with pytest.raises(ValidationError) as err:
        solve(small_problem(0), "alm", tol=0.0, sigma0="big", bogus=1, inner_steps=1.5)
    problems = err.value.problems
    assert len(problems) == 4
    assert [p.split("=")[0].split(" ")[0] for p in problems] == [
        "tol", "unknown", "sigma0", "inner_steps"]


def test_check_arguments_types_without_a_problem():
    # What a scenario file's loader calls before any network is built.
    common = dict(tol=1e-4, max_iter=None, time_limit_s=None, callback=None)
    check_arguments("dual", **common, single_association=False, options={"tau0": 1})
    with pytest.raises(ValidationError, match="tau0='hot'"):
        check_arguments("dual", **common, single_association=False, options={"tau0": "hot"})
    with pytest.raises(ValidationError, match="single_association applies to"):
        check_arguments("max_sinr", **common, single_association=True, options={})


# ====================================================================== docs
@pytest.mark.parametrize("method", ["alm", "dual", "reference"])
def test_main_options_are_documented(method):
    for option in method_info(method).options.values():
        assert option.doc, f"{method}.{option.name} has no doc"
        assert "\n" not in option.doc and "``" not in option.doc


def test_every_option_of_every_method_is_documented():
    # The baselines document shared options once ("As for max_rsrp"): followed.
    for name in ALL:
        for option in method_info(name).options.values():
            assert option.doc and not option.doc.startswith("As for"), (name, option.name)
    assert method_info("alm").options["inner_steps"].doc == \
        "Most semismooth Newton steps per outer iteration."
    assert method_info("max_sinr").options["inner_method"].doc == \
        method_info("max_rsrp").options["inner_method"].doc


# ====================================================================== registry edges
def test_unknown_method_lists_the_valid_names():
    with pytest.raises(ValidationError, match="unknown method 'simplex'") as err:
        method_info("simplex")
    for name in ALL:
        assert repr(name) in str(err.value)


def test_a_function_set_into_methods_directly_declares_nothing(monkeypatch):
    def fake(problem, *, tol, max_iter, time_limit_s, callback, knob: float = 1.0):
        """A stand-in."""
        return solve(problem, "dual", tol=tol)

    monkeypatch.setitem(METHODS, "_fake", fake)
    info = method_info("_fake")
    assert (info.kind, info.single_association, info.patterns, info.share_blocks,
            info.distributed, info.warm_start) == ("optimizer", False, False, False, False, ())
    assert list(info.options) == ["knob"] and info.options["knob"].annotation == "float"
    assert "_fake" in method_table().index
    assert solve(small_problem(0), "_fake", knob=2).status == "optimal"
    with pytest.raises(ValidationError, match="knob='x'"):
        solve(small_problem(0), "_fake", knob="x")
    with pytest.raises(ValidationError, match="single_association applies to"):
        solve(small_problem(0), "_fake", single_association=True)


def test_register_refuses_bad_declarations():
    with pytest.raises(ValueError, match="kind="):
        register("_bad", kind="heuristic")
    with pytest.raises(ValueError, match="share_blocks=True needs patterns=True"):
        register("_bad", kind="optimizer", share_blocks=True)

    def fn(problem, *, tol, max_iter, time_limit_s, callback, x0=None):
        """A stand-in."""

    with pytest.raises(ValueError, match="warm_start names"):
        register("_bad", kind="optimizer", warm_start=("prices0",))(fn)
    with pytest.raises(ValueError, match=r"lacks the option\(s\) \['scheduler', 'user_xy_m'\]"):
        register("_bad", kind="optimizer", distributed=True)(fn)
    assert "_bad" not in METHODS and "_bad" not in METHOD_INFO


def test_importing_the_solvers_does_not_import_cvxpy():
    code = "import sys, cellopt.solvers; print('cvxpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_status_constants_are_the_strings():
    from cellopt import status
    from cellopt.solution import STATUSES

    assert STATUSES is status.STATUSES
    assert status.OPTIMAL == "optimal" and type(status.OPTIMAL) is str
    assert set(status.SUCCESSFUL) <= set(STATUSES)
    assert {getattr(status, n) for n in status.__all__ if n.isupper() and n not in
            ("STATUSES", "SUCCESSFUL")} == set(STATUSES)


# ---------------------------------------------------------------------------- the default
def test_solve_without_a_method_uses_the_default_for_the_problems_features(capsys):
    from cellopt.solvers.registry import DEFAULT_METHODS, default_method

    fixed = small_problem(3)
    assert default_method(fixed)[0] == "dual"
    sol = cellopt.solve(fixed, tol=1e-5)
    assert sol.method == "dual" and sol.status == "optimal"
    assert sol.objective == cellopt.solve(fixed, "dual", tol=1e-5).objective
    patterns = Problem.from_links(fixed.user, fixed.cell, fixed.rate_mbps, n_users=fixed.n_users,
                                  n_cells=fixed.n_cells, resource=np.arange(fixed.n_links) % 2,
                                  n_resources=2, pattern_cost=np.array([0.0, 0.1]))
    assert default_method(patterns)[0] == "ipm" and cellopt.solve(patterns).method == "ipm"
    caps = np.full(fixed.n_cells, np.inf)
    caps[0] = 5.0
    capped = fixed.replace(backhaul_mbps=caps)
    assert default_method(capped) == ("ipm", "backhaul caps: " + DEFAULT_METHODS[2][2])
    # every feature names a registered certified method, and `cellopt methods` shows them
    assert all(method_info(m).convex for _, m, _ in DEFAULT_METHODS)
    from cellopt import cli

    assert cli.main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "default (solve(problem) without a method)" in out and "fixed resources: dual" in out
