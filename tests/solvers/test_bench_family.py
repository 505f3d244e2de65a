"""The smallest members of the solver benchmark's family (benchmarks/bench_solvers.py).

Correctness only, nothing timed: every member builds the same problem from its seeds,
and on each of the smallest members ``alm``, ``dual`` and ``ipm`` reach a certified
gap ≤ tol and agree with the reference (the benchmark's own check finds no flag).
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from helpers import ROOT

PATH = ROOT / "benchmarks" / "bench_solvers.py"
TOL = 1e-4


def _bench():
    spec = importlib.util.spec_from_file_location("bench_solvers", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = _bench()
SMALLEST = [m for m in bench.family() if m.quick]


def test_family_names_are_unique_and_cover_the_kinds():
    names = [m.name for m in bench.family()]
    assert len(names) == len(set(names))
    for kind in ("hex", "ye_", "sf_femto", "city"):
        assert any(n.startswith(kind) for n in names), kind
    assert any(m.quick for m in bench.family() if m.name.startswith("city"))


def _member(name):
    return next(m for m in SMALLEST if m.name == name)


def test_members_are_deterministic():
    member = SMALLEST[0]
    a, b = member.build(), member.build()
    for field in ("user", "cell", "rate_mbps", "weight", "demand_mbps", "backhaul_mbps",
                  "price_per_mbps"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


@pytest.mark.parametrize("name", [m.name for m in SMALLEST])
@pytest.mark.slow
def test_smallest_members_agree_with_the_reference(name):
    member = _member(name)
    if member.needs_sf_data and bench.sf_data_missing():
        pytest.skip(bench.sf_data_missing())
    problem = member.build()
    _, ref = bench.solve_timed(problem, "reference", TOL, blas=None, repeat=1,
                               ref_max_links=10**9)
    assert ref["status"] == "optimal", ref
    for method in bench.CERTIFIED:
        _, row = bench.solve_timed(problem, method, TOL, blas=None, repeat=1,
                                   ref_max_links=10**9)
        assert row["status"] == "optimal" and row["gap"] <= TOL, row
        check = bench.compare(problem, row, ref, TOL)
        assert check["flags"] == [], (method, check, row, ref)
        assert check["delta"] <= TOL


def test_compare_flags_a_disagreement():
    problem = SMALLEST[0].build()
    _, ref = bench.solve_timed(problem, "reference", TOL, blas=None, repeat=1,
                               ref_max_links=10**9)
    worse = dict(ref, method="alm", objective=ref["objective"] - 0.01 * problem.weight.sum(),
                 upper_bound=ref["upper_bound"])
    assert "DIFF" in bench.compare(problem, worse, ref, TOL)["flags"]
    above = dict(ref, method="alm", objective=ref["upper_bound"] + 0.01 * problem.weight.sum())
    assert "BOUND" in bench.compare(problem, above, ref, TOL)["flags"]
    skipped = bench.solve_timed(problem, "reference", TOL, blas=None, repeat=1,
                                ref_max_links=10)[1]
    assert skipped["status"] == "skipped"
