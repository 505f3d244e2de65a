"""One rule for statuses, wherever an answer leaves the solvers.

``"optimal"`` only when the reported ``upper_bound`` is finite and certifies
``certified_gap(upper_bound, objective) ≤ tol``; an objective of −inf or NaN is always
``"failed"`` (:func:`cellopt.solvers.result.apply_status_rule`). Checked for every
registered method (with its limits, single association, and a method whose own verdict
is wrong), for column generation (``solve_power``) and for the load-coupling rounds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers.problems import random_cells_network, random_problem

import cellopt
from cellopt import Drop, radio, topology
from cellopt.errors import ValidationError
from cellopt.load_coupling import LoadCoupling, solve_load_coupled
from cellopt.power import ColumnGenerationOptions, PowerProblem
from cellopt.power import column_generation as column_generation_module
from cellopt.problem import Problem
from cellopt.solvers.certificate import certified_gap
from cellopt.solvers.common import repair
from cellopt.solvers.registry import METHODS, method_info
from cellopt.solvers.result import apply_status_rule, build_solution
from cellopt.status import CONVERGED, FAILED, MAX_ITER, OPTIMAL, STATUSES, TIME_LIMIT

LEVELS = [0.0, -10.0, None]


def assert_rule(problem: Problem, sol: cellopt.Solution, tol: float) -> None:
    """The status rule on what the caller is given (problem and solution in its units)."""
    assert sol.status in STATUSES, sol.status
    gap = certified_gap(problem, sol.upper_bound, sol.objective, sol.utility)
    assert sol.gap == gap, (sol.gap, gap)  # the gap is the reported bound's
    if sol.status == OPTIMAL:
        assert sol.upper_bound is not None and np.isfinite(sol.upper_bound), sol.message
        assert gap is not None and gap <= tol, (gap, sol.message)
    if not np.isfinite(sol.objective):
        assert sol.status == FAILED, sol.message
        assert "not an answer" in sol.message


# ----------------------------------------------------------------------- every method
@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                       dashboard_address=":0")
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


#: Small random problems: the baselines' family (RSRP, SINR, tiers) at three α, one with
#: two resources, and one with binding caps, prices and demands.
PROBLEMS = [
    ("radio", 0, dict(alpha=1.0)),
    ("radio", 1, dict(alpha=2.0, n_resources=2)),
    ("radio", 2, dict(alpha=0.5)),
    ("calibrated", 3, dict(n_users=30, n_cells=5, n_resources=1, caps=True, prices=True,
                           demands=True)),
]
#: The call as given, then at its limits: the starting point, one iteration, a tight
#: tolerance, no time at all (whatever the clock gives, the rule holds).
SETTINGS = [dict(), dict(max_iter=0), dict(max_iter=1), dict(tol=1e-8), dict(time_limit_s=0)]


def method_options(method: str, request: pytest.FixtureRequest) -> dict:
    if method_info(method).distributed:
        return dict(scheduler=request.getfixturevalue("dask_client"))
    return {}


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_follows_the_rule(method, request):
    options = method_options(method, request)
    seen = set()
    for kind, seed, kw in PROBLEMS:
        p = random_problem(seed, kind, **kw)
        for setting in SETTINGS:
            tol = setting.get("tol", 1e-4)
            sol = cellopt.solve(p, method, **setting, **options)
            assert_rule(p, sol, tol)
            seen.add(sol.status)
    # The sweep reaches both sides of the rule for the certified methods.
    if method_info(method).kind != "baseline":
        assert OPTIMAL in seen and seen - {OPTIMAL}, seen


@pytest.mark.parametrize("method", sorted(m for m in METHODS if method_info(m).single_association))
def test_single_association_follows_the_rule(method):
    for kind, seed, kw in PROBLEMS[:2]:
        p = random_problem(seed, kind, **kw)
        for tol in (1e-4, 1e-9):
            assert_rule(p, cellopt.solve(p, method, tol=tol, single_association=True), tol)


@pytest.mark.parametrize("method", ["ipm", "reference"])
def test_starting_point_with_a_user_at_rate_0_is_failed(method):
    # Their starting point is x = 0: at α = 1 every user's utility is −inf. Before the
    # rule this came back as "max_iter" (a limit, not a success, so it was kept).
    p = random_problem(0, "radio", alpha=1.0)
    sol = cellopt.solve(p, method, max_iter=0)
    assert sol.objective == -np.inf
    assert sol.status == FAILED
    assert "rate 0" in sol.message and "alpha=1" in sol.message


def _lying_method(status: str, share: float, with_bound: bool):
    """A method that returns `share` × an even split of every cell with `status`,
    whatever it is worth (the front door must not trust it)."""
    def method(problem, *, tol, max_iter, time_limit_s, callback):
        x = repair(problem, np.full(problem.n_links, share))
        mu = np.ones(problem.n_groups) if with_bound else None
        sol = build_solution(problem, x, method="lying", status=status, message="as claimed",
                             mu=mu, nu=None, n_iter=1, wall_s=0.0)
        return sol if with_bound else _without_bound(sol)
    return method


def _without_bound(sol):
    sol.upper_bound = None
    return sol


@pytest.mark.parametrize("share", [0.0, 1e-3])
def test_a_method_claiming_optimal_is_checked_at_the_front_door(monkeypatch, share):
    p = random_problem(0, "radio", alpha=1.0)
    # With a bound that does not certify tol: "max_iter", and the message says why.
    monkeypatch.setitem(METHODS, "lying", _lying_method(OPTIMAL, share, with_bound=True))
    sol = cellopt.solve(p, "lying")
    assert_rule(p, sol, 1e-4)
    if share == 0.0:  # every user at rate 0: −inf, so "failed" even though it claimed optimal
        assert sol.status == FAILED and "rate 0" in sol.message
    else:
        assert sol.status == MAX_ITER and "not certified" in sol.message
        assert sol.gap > 1e-4
    # Without any bound: never optimal.
    monkeypatch.setitem(METHODS, "lying", _lying_method(OPTIMAL, share, with_bound=False))
    sol = cellopt.solve(p, "lying")
    assert sol.upper_bound is None and sol.gap is None
    assert sol.status == (FAILED if share == 0.0 else MAX_ITER)
    assert_rule(p, sol, 1e-4)


def test_a_limit_with_objective_minus_inf_is_failed(monkeypatch):
    # "reference" stopped by its time limit before any iterate served everyone returned
    # objective −inf with status "time_limit"; the same verdict, made deterministic here.
    p = random_problem(1, "radio", alpha=1.0)
    monkeypatch.setitem(METHODS, "limited", _lying_method(TIME_LIMIT, 0.0, with_bound=True))
    sol = cellopt.solve(p, "limited", time_limit_s=0)
    assert sol.objective == -np.inf and sol.status == FAILED
    assert sol.message.startswith("as claimed; the objective is -inf, not an answer: users rows")


# ----------------------------------------------------------------- the rule as a function
def _solution(problem, status, share=0.5, upper=None):
    x = repair(problem, np.full(problem.n_links, share))
    sol = build_solution(problem, x, method="m", status=status, message="m", mu=None, nu=None,
                         n_iter=0, wall_s=0.0, upper_bound=upper)
    return sol


def test_rule_on_hand_made_solutions():
    p = random_problem(0, "radio", alpha=1.0)
    base = _solution(p, OPTIMAL)
    # A bound exactly at the objective certifies gap 0.
    certified = apply_status_rule(p, _solution(p, OPTIMAL, upper=base.objective), 1e-4)
    assert certified.status == OPTIMAL and certified.gap == 0.0
    # +inf and NaN bounds certify nothing.
    for upper in (np.inf, np.nan):
        sol = apply_status_rule(p, _solution(p, OPTIMAL, upper=upper), 1e-4, uncertified=CONVERGED)
        assert sol.status == CONVERGED and "not certified" in sol.message
    # The rule never promotes: a certified "max_iter" stays "max_iter".
    sol = apply_status_rule(p, _solution(p, MAX_ITER, upper=base.objective), 1e-4)
    assert sol.status == MAX_ITER
    # NaN objective: failed.
    nan = _solution(p, OPTIMAL, upper=base.objective)
    nan.objective = np.nan
    sol = apply_status_rule(p, nan, 1e-4)
    assert sol.status == FAILED and "nan" in sol.message
    # The input is left as it was.
    assert nan.status == OPTIMAL
    with pytest.raises(ValidationError, match=r"uncertified='optimal'; fix: one of"):
        apply_status_rule(p, base, 1e-4, uncertified=OPTIMAL)


# ----------------------------------------------------------------------- solve_power
@pytest.fixture(scope="module")
def six_cells():
    net = random_cells_network(0, n_cells=6, n_users=12)
    return PowerProblem.from_network(net, levels_db=LEVELS, energy_price_per_w=0.05, rng=1)


@pytest.mark.parametrize("cluster_cells", [3, 1])
def test_solve_power_relaxed_reports_the_tightest_bound(six_cells, cluster_cells):
    # Before: the exact-pricing bound certified the stop ("optimal"), then the relaxed
    # bound replaced it, and "optimal" was reported with gap 0.2–0.6 (1.78 on another
    # network with cluster_cells=1).
    sol = cellopt.solve_power(six_cells, progress=False, options=ColumnGenerationOptions(
        bound="relaxed", cluster_cells=cluster_cells, scope_cells=None))
    assert_rule(sol.power.master, sol, 1e-4)
    bounds = sol.power.bound_info["bounds"]
    assert set(bounds) == {"exact", "relaxed"}
    assert sol.upper_bound == min(bounds.values())
    assert sol.bound_kind == min(bounds, key=bounds.get) == "exact"
    assert bounds["relaxed"] > sol.upper_bound
    assert sol.status == OPTIMAL and sol.gap <= 1e-4


def test_solve_power_without_final_bound_keeps_the_exact_pricing_bound(six_cells):
    # Before: "optimal" with upper_bound None and gap None.
    sol = cellopt.solve_power(six_cells, progress=False,
                              options=ColumnGenerationOptions(bound=None))
    assert_rule(sol.power.master, sol, 1e-4)
    assert sol.bound_kind == "exact" and sol.upper_bound is not None
    assert sol.status == OPTIMAL
    # Search pricing computes no bound: never "optimal".
    search = cellopt.solve_power(six_cells, progress=False, options=ColumnGenerationOptions(
        bound=None, pricing="search"))
    assert search.upper_bound is None and search.gap is None
    assert search.status != OPTIMAL
    assert_rule(search.power.master, search, 1e-4)


def test_solve_power_that_loses_its_certificate_is_converged(six_cells, monkeypatch):
    # The run stops on its certificate; finishing the best master then halves every
    # share (a feasible but worse answer). The reported bound no longer certifies tol:
    # "converged", not "optimal".
    def halved(problem, sol, tol):
        x = repair(problem, 0.5 * sol.x, sol.pattern_share)
        return build_solution(problem, x, method=sol.method, status=sol.status,
                              message=sol.message, mu=sol.prices["airtime"].ravel(),
                              nu=sol.prices["backhaul"], n_iter=sol.n_iter, wall_s=sol.wall_s,
                              theta=sol.pattern_share)

    monkeypatch.setattr(column_generation_module, "_without_small_shares", halved)
    sol = cellopt.solve_power(six_cells, progress=False)
    assert_rule(sol.power.master, sol, 1e-4)
    assert sol.status == CONVERGED and "not certified" in sol.message
    assert sol.power.bound_info["bound_factor"] == pytest.approx(1.0 + sol.gap)
    assert sol.gap > 0.5


# ----------------------------------------------------------------------- load coupling
@pytest.fixture(scope="module")
def coupled_drop():
    net = topology.hex_grid(n_rings=1, wraparound=False)
    net = topology.drop_users(net, 90, demand_mbps=3.0, rng=5)
    drop = Drop.from_network(net, radio.link_table(net, n_candidates=4, rng=6))
    return dataclasses.replace(drop, coupling=LoadCoupling.from_drop(drop, n_interferers=8))


@pytest.mark.parametrize("method", ["dual", "alm", "ipm", "reference", "max_rsrp", "load_aware"])
def test_load_coupled_solves_follow_the_rule(coupled_drop, method):
    for options in (dict(), dict(max_rounds=1), dict(tol=1e-8)):
        sol = coupled_drop.solve(method, **options)
        assert sol.load_coupling is not None
        assert_rule(coupled_drop.problem, sol, options.get("tol", 1e-4))


def test_load_coupled_lying_method_is_failed(coupled_drop, monkeypatch):
    # A method that claims "optimal" for x = 0: every round gets "failed" at the front
    # door, and so does the answer (every user at rate 0, α = 1).
    monkeypatch.setitem(METHODS, "lying", _lying_method(OPTIMAL, 0.0, with_bound=True))
    sol = solve_load_coupled(coupled_drop.problem, coupled_drop.coupling, "lying")
    assert sol.objective == -np.inf and sol.status == FAILED
    assert_rule(coupled_drop.problem, sol, 1e-4)
