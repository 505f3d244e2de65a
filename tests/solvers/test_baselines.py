"""Tests of the baseline association rules (cellopt.solvers.baselines).

All instances are seeded. The in-cell closed form is checked against the KKT conditions
and against an independent cvxpy model of the association-restricted problem.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from helpers import problems
from helpers.gap_oracle import gap_of
from helpers.problems import random_problem

from cellopt import radio, topology
from cellopt.errors import ValidationError
from cellopt.problem import Problem, utility
from cellopt.solvers import METHODS, solve
from cellopt.solvers.association import in_cell_shares
from cellopt.solvers.common import objective_terms, repair
from cellopt.solvers.result import build_solution

BASELINES = ["max_rsrp", "max_sinr", "range_expansion", "load_aware", "random"]


# ---------------------------------------------------------------------- instances
def one_cell(rate, **kwargs) -> Problem:
    """:func:`problems.one_cell` with RSRPs, so that the baselines run."""
    return problems.one_cell(rate, rsrp_dbm=np.zeros(len(rate)), **kwargs)


@pytest.fixture(scope="module")
def hetnet() -> Problem:
    net = topology.hex_grid(2)
    net = topology.add_picos(net, rng=1)
    net = topology.drop_users(net, 600, clustered_fraction=2 / 3, rng=2)
    return Problem.from_network(net, radio.link_table(net, rng=3))


def link_frame(problem: Problem) -> pd.DataFrame:
    return pd.DataFrame({"user": problem.user, "cell": problem.cell, "rate": problem.rate_mbps,
                         "rsrp": problem.rsrp_dbm, "sinr": problem.sinr_db})


def argmax_cell(frame: pd.DataFrame, column: str, n_users: int) -> np.ndarray:
    best = frame.loc[frame.groupby("user")[column].idxmax()]
    out = np.full(n_users, -1)
    out[best["user"].to_numpy()] = best["cell"].to_numpy()
    return out


def cvx_restricted(problem: Problem, serving: np.ndarray) -> tuple[float, np.ndarray]:
    """Optimum of the problem restricted to the serving cells, backhaul caps dropped.

    Returns the objective of the solver's shares after :func:`repair` (interior-point
    answers are slightly infeasible) and those shares.
    """
    keep = problem.cell == serving[problem.user]
    p = problem.restrict(keep)
    x = cp.Variable(p.n_links, nonneg=True)
    a_user = np.zeros((p.n_users, p.n_links))
    a_user[p.user, np.arange(p.n_links)] = p.rate_mbps
    a_group = np.zeros((p.n_groups, p.n_links))
    a_group[p.group, np.arange(p.n_links)] = 1.0
    r = a_user @ x
    has = np.bincount(p.user, minlength=p.n_users) > 0
    if p.alpha == 1:
        util = cp.sum(cp.multiply(p.weight[has], cp.log(r[has])))
    elif p.alpha == 0:
        util = cp.sum(cp.multiply(p.weight, r))
    elif p.alpha < 1:
        util = cp.sum(cp.multiply(p.weight[has] / (1 - p.alpha), cp.power(r[has], 1 - p.alpha)))
    else:
        util = cp.sum(cp.multiply(p.weight[has] / (1 - p.alpha), cp.power(r[has], 1 - p.alpha)))
    cost = p.price_per_mbps[p.cell] @ cp.multiply(p.rate_mbps, x)
    cons = [a_group @ x <= 1, x <= 1]
    finite = np.isfinite(p.demand_mbps)
    if finite.any():
        cons.append(r[finite] <= p.demand_mbps[finite])
    prob = cp.Problem(cp.Maximize(util - cost), cons)
    prob.solve(solver=cp.CLARABEL)
    full = np.zeros(problem.n_links)
    full[keep] = np.clip(x.value, 0, 1)
    free = problem.replace(backhaul_mbps=np.full(problem.n_cells, np.inf))
    full = repair(free, full)
    util, cost = objective_terms(free, full)
    return util - cost, full


def assert_at_least_cvx(objective: float, value: float) -> None:
    """Exact answer: at least as good as the repaired conic one, and close to it."""
    assert objective >= value - 1e-9 * max(1.0, abs(value))
    assert objective == pytest.approx(value, rel=1e-6, abs=1e-9)


def kkt_residual(problem: Problem, x: np.ndarray, mu: np.ndarray) -> float:
    """Largest violation of the in-cell KKT conditions (K = 1, one link per user)."""
    r = problem.rate_mbps * x
    w = problem.weight[problem.user]
    c = problem.price_per_mbps[problem.cell]
    m = mu.reshape(-1)[problem.group]
    with np.errstate(divide="ignore"):
        marginal = w * problem.rate_mbps * (r ** -problem.alpha if problem.alpha else 1.0) \
            - c * problem.rate_mbps - m  # d Lagrangian / d x_e
    cap = np.minimum(1.0, problem.demand_mbps[problem.user] / problem.rate_mbps)
    scale = np.abs(m) + c * problem.rate_mbps + 1e-12
    interior = (x > 1e-9) & (x < cap - 1e-9)
    res = [np.abs(marginal[interior] / scale[interior]).max(initial=0.0),
           np.maximum(-marginal[x >= cap - 1e-9] / scale[x >= cap - 1e-9], 0).max(initial=0.0),
           np.maximum(marginal[x <= 1e-9] / scale[x <= 1e-9], 0).max(initial=0.0)]
    airtime = np.bincount(problem.group, x, minlength=problem.n_groups)
    res.append(np.maximum(airtime - 1, 0).max())
    res.append(np.abs(mu.reshape(-1) * (1 - airtime)).max() / (np.abs(mu).max() + 1e-12))
    return float(max(res))


def nash_violation(problem: Problem, serving: np.ndarray) -> float:
    """Largest log payoff gain any user could get by moving alone (equal sharing)."""
    f = link_frame(problem).groupby(["user", "cell"], as_index=False)["rate"].sum()
    w = problem.weight
    load = np.bincount(serving, w, minlength=problem.n_cells)
    own = f["cell"].to_numpy() == serving[f["user"].to_numpy()]
    u, c, rate = f["user"].to_numpy(), f["cell"].to_numpy(), f["rate"].to_numpy()
    with np.errstate(divide="ignore"):
        pay = np.where(own, rate / load[c], rate / (load[c] + w[u]))
    here = pd.Series(pay[own], index=u[own]).reindex(np.arange(problem.n_users)).to_numpy()
    gain = np.log(pay[~own]) - np.log(here[u[~own]])
    return float(gain.max(initial=-np.inf))


# ---------------------------------------------------------------------- association rules
def test_max_rsrp_picks_argmax_rsrp_cell():
    p = random_problem(0, "radio", n_users=60, n_cells=8)
    sol = solve(p, method="max_rsrp")
    np.testing.assert_array_equal(sol.serving_cell, argmax_cell(link_frame(p), "rsrp", p.n_users))
    assert "max RSRP" in sol.message


def test_range_expansion_zero_bias_equals_max_rsrp(hetnet):
    ref = solve(hetnet, method="max_rsrp")
    for bias in (0.0, {"pico": 0.0, "femto": 0.0}):
        sol = solve(hetnet, method="range_expansion", bias_db=bias)
        np.testing.assert_array_equal(sol.serving_cell, ref.serving_cell)
        np.testing.assert_array_equal(sol.x, ref.x)
    assert sol.objective == ref.objective


def test_range_expansion_large_pico_bias_sends_users_to_their_best_pico(hetnet):
    sol = solve(hetnet, method="range_expansion", bias_db={"pico": 200.0})
    f = link_frame(hetnet)
    pico = f[hetnet.cell_tier[f["cell"]] == 1]
    best_pico = argmax_cell(pico, "rsrp", hetnet.n_users)
    has_pico = best_pico >= 0
    assert has_pico.sum() > 100
    np.testing.assert_array_equal(sol.serving_cell[has_pico], best_pico[has_pico])
    macro_only = argmax_cell(f, "rsrp", hetnet.n_users)
    np.testing.assert_array_equal(sol.serving_cell[~has_pico], macro_only[~has_pico])


def test_range_expansion_default_bias_offloads_to_picos(hetnet):
    base = solve(hetnet, method="max_rsrp")
    sol = solve(hetnet, method="range_expansion")  # 6 dB
    pico = hetnet.cell_tier == 1
    assert pico[sol.serving_cell].sum() > pico[base.serving_cell].sum()
    assert "pico 6 dB" in sol.message


def test_max_sinr_picks_max_mean_linear_sinr(cvx_inner):
    p = random_problem(1, "radio", n_users=50, n_cells=7, n_resources=2)
    f = link_frame(p)
    f["lin"] = 10 ** (f["sinr"] / 10)
    mean = f.groupby(["user", "cell"], as_index=False)["lin"].sum()
    expected = argmax_cell(mean, "lin", p.n_users)
    assert (expected != argmax_cell(f, "rsrp", p.n_users)).any()
    sol = solve(p, method="max_sinr", inner_method=cvx_inner)
    np.testing.assert_array_equal(sol.serving_cell, expected)
    p1 = random_problem(2, "radio", n_users=50, n_cells=7)
    sol = solve(p1, method="max_sinr")
    np.testing.assert_array_equal(sol.serving_cell, argmax_cell(link_frame(p1), "sinr", p1.n_users))
    assert "max SINR" in sol.message


def test_missing_rsrp_or_sinr_or_tier_raise_helpful_errors():
    p = random_problem(3, "radio").replace(rsrp_dbm=None, sinr_db=None)
    for method in ("max_rsrp", "range_expansion"):
        with pytest.raises(ValueError, match=r"Problem\.from_network.*rsrp_dbm="):
            solve(p, method=method)
    with pytest.raises(ValueError, match="sinr_db="):
        solve(p, method="max_sinr")
    with pytest.raises(ValueError, match="cell_tier="):
        solve(random_problem(3, "radio").replace(cell_tier=None), method="range_expansion")
    # zero bias needs no tiers; load_aware starts from max rate without RSRP
    solve(random_problem(3, "radio").replace(cell_tier=None), method="range_expansion", bias_db=0.0)
    assert "max full-band rate" in solve(p, method="load_aware").message
    with pytest.raises(ValueError, match="unknown option"):
        solve(random_problem(3, "radio"), method="max_rsrp", bias_db=3.0)
    with pytest.raises(ValueError, match="unknown tiers"):
        solve(random_problem(3, "radio"), method="range_expansion", bias_db={"micro": 3.0})


# ---------------------------------------------------------------------- in-cell closed form
def test_log_utility_gives_equal_and_weight_proportional_shares():
    sol = solve(one_cell([1.0, 5.0, 20.0, 2.0]), method="max_rsrp")
    np.testing.assert_allclose(sol.x, 0.25, rtol=1e-12)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    sol = solve(one_cell([1.0, 5.0, 20.0, 2.0], weight=w), method="max_rsrp")
    np.testing.assert_allclose(sol.x, w / w.sum(), rtol=1e-12)
    assert sol.prices["airtime"][0, 0] == pytest.approx(w.sum(), rel=1e-12)


def test_demand_cap_water_filling():
    rate = np.array([10.0, 10.0, 10.0, 10.0])
    demand = np.array([0.5, np.inf, np.inf, np.inf])  # 0.05 of the airtime
    sol = solve(one_cell(rate, demand_mbps=demand), method="max_rsrp")
    assert sol.user_rate_mbps[0] == pytest.approx(0.5, rel=1e-12)
    np.testing.assert_allclose(sol.x[1:], 0.95 / 3, rtol=1e-12)
    # Everyone's demand fits: μ = 0 and every user gets exactly its demand.
    sol = solve(one_cell(rate, demand_mbps=1.0), method="max_rsrp")
    np.testing.assert_allclose(sol.user_rate_mbps, 1.0)
    assert sol.prices["airtime"].max() == 0


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0])
def test_closed_form_satisfies_kkt_and_matches_cvxpy(alpha):
    rng = np.random.default_rng(4)
    n_cells = 5
    p = random_problem(5, "radio", n_users=30, n_cells=n_cells, alpha=alpha,
                       weight=rng.uniform(0.5, 2, 30), price_per_mbps=rng.uniform(0, 0.05, n_cells),
                       demand_mbps=np.where(rng.uniform(size=30) < 0.3, 0.2, np.inf))
    sol = solve(p, method="max_rsrp")
    serving = sol.serving_cell
    x, mu, _, _ = in_cell_shares(p, serving)
    keep = p.cell == serving[p.user]
    assert kkt_residual(p.restrict(keep), x[keep], mu) < 1e-8
    value, _ = cvx_restricted(p, serving)
    assert_at_least_cvx(sol.objective, value)
    assert (mu > 0).any()


def test_closed_form_kkt_with_prices_binding():
    """High prices: some cells keep airtime unused (μ = 0), users stop at (w/c)^(1/α)."""
    p = one_cell([4.0, 8.0], alpha=2.0, price_per_mbps=2.0)
    sol = solve(p, method="max_rsrp")
    np.testing.assert_allclose(sol.user_rate_mbps, np.sqrt(1 / 2.0), rtol=1e-12)
    assert sol.prices["airtime"][0, 0] == 0


def test_alpha_zero_gives_all_airtime_to_best_user():
    p = one_cell([1.0, 5.0, 3.0], alpha=0.0)
    sol = solve(p, method="max_rsrp")
    np.testing.assert_allclose(sol.x, [0.0, 1.0, 0.0])
    assert sol.prices["airtime"][0, 0] == pytest.approx(5.0)
    # demand-capped best user: the next best fills the rest; weights and prices count
    p = one_cell([1.0, 5.0, 3.0], alpha=0.0, demand_mbps=[np.inf, 2.5, np.inf],
                 weight=[1.0, 1.0, 1.0])
    sol = solve(p, method="max_rsrp")
    np.testing.assert_allclose(sol.x, [0.0, 0.5, 0.5])
    p = one_cell([1.0, 5.0, 3.0], alpha=0.0, weight=[10.0, 1.0, 1.0], price_per_mbps=0.5)
    sol = solve(p, method="max_rsrp")  # values (w − c) R = 9.5, 2.5, 1.5
    np.testing.assert_allclose(sol.x, [1.0, 0.0, 0.0])
    p = one_cell([1.0, 5.0], alpha=0.0, price_per_mbps=2.0)  # w < c: nothing is worth it
    sol = solve(p, method="max_rsrp")
    np.testing.assert_allclose(sol.x, 0.0)


def test_alpha_zero_multi_cell_matches_cvxpy():
    p = random_problem(6, "radio", n_users=40, n_cells=6, alpha=0.0,
                       demand_mbps=np.random.default_rng(6).uniform(0.5, 3, 40))
    sol = solve(p, method="max_rsrp")
    value, _ = cvx_restricted(p, argmax_cell(link_frame(p), "rsrp", p.n_users))
    assert_at_least_cvx(sol.objective, value)
    serving = argmax_cell(link_frame(p), "rsrp", p.n_users)
    x, mu, _, _ = in_cell_shares(p, serving)
    keep = p.cell == serving[p.user]
    assert kkt_residual(p.restrict(keep), x[keep], mu) < 1e-12


def test_users_without_links_get_cell_minus_one_and_rate_zero():
    user = np.array([0, 0, 2, 3])
    cell = np.array([0, 1, 1, 0])
    p = Problem.from_links(user, cell, [2.0, 1.0, 3.0, 1.0], n_users=5, n_cells=2, alpha=0.5,
                           rsrp_dbm=[-80.0, -90.0, -85.0, -70.0], sinr_db=[5.0, 1.0, 3.0, 9.0],
                           cell_tier=[0, 1])
    for method in BASELINES:
        sol = solve(p, method=method)
        np.testing.assert_array_equal(sol.serving_cell[[1, 4]], -1)
        np.testing.assert_array_equal(sol.user_rate_mbps[[1, 4]], 0.0)
        assert np.isfinite(sol.objective)


# ---------------------------------------------------------------------- several resources
@pytest.fixture
def cvx_inner(monkeypatch):
    """An inner solver for K > 1 written here, independent of the package's solvers."""

    def fn(problem, *, tol, max_iter=None, time_limit_s=None, callback=None, **options):
        serving = np.full(problem.n_users, -1)
        serving[problem.user] = problem.cell
        p = problem
        x = cp.Variable(p.n_links, nonneg=True)
        a_user = np.zeros((p.n_users, p.n_links))
        a_user[p.user, np.arange(p.n_links)] = p.rate_mbps
        a_group = np.zeros((p.n_groups, p.n_links))
        a_group[p.group, np.arange(p.n_links)] = 1.0
        airtime = a_group @ x <= 1
        prob = cp.Problem(cp.Maximize(p.weight @ cp.log(a_user @ x)
                                      - p.price_per_mbps[p.cell] @ cp.multiply(p.rate_mbps, x)),
                          [airtime, x <= 1])
        prob.solve(solver=cp.CLARABEL)
        return build_solution(p, np.clip(x.value, 0, 1), method="_test_cvx", status="optimal",
                              message="", mu=np.maximum(airtime.dual_value, 0), nu=None, n_iter=1,
                              wall_s=0.0)

    monkeypatch.setitem(METHODS, "_test_cvx", fn)
    return "_test_cvx"


def test_several_resources_use_the_inner_solver(cvx_inner):
    p = random_problem(7, "radio", n_users=30, n_cells=5, n_resources=3,
                       price_per_mbps=np.r_[0.0, 0.01, 0.0, 0.02, 0.0])
    for method in ("max_rsrp", "max_sinr", "load_aware"):
        sol = solve(p, method=method, inner_method=cvx_inner)
        value, _ = cvx_restricted(p, sol.serving_cell)
        assert sol.objective == pytest.approx(value, rel=1e-6)
        assert sol.cell_airtime.shape == (5, 3)
        assert sol.upper_bound >= sol.objective - 1e-6
        assert "'_test_cvx'" in sol.message
    # Off the serving cells nothing is used.
    assert (sol.x[p.cell != sol.serving_cell[p.user]] == 0).all()
    with pytest.raises(ValueError, match="is a baseline"):
        solve(p, method="max_rsrp", inner_method="load_aware")


@pytest.mark.skipif("reference" not in METHODS, reason="reference solver not available")
def test_several_resources_with_reference_inner_solver():
    p = random_problem(8, "radio", n_users=20, n_cells=4, n_resources=2)
    sol = solve(p, method="max_rsrp", inner_method="reference")
    value, _ = cvx_restricted(p, sol.serving_cell)
    assert sol.objective == pytest.approx(value, rel=1e-5)


# ---------------------------------------------------------------------- backhaul
def test_backhaul_cap_exceeded_is_reported_and_repaired():
    p = random_problem(9, "radio", n_users=40, n_cells=4, backhaul_mbps=np.r_[np.inf, 1.0, np.inf, 0.5])
    free = solve(p.replace(backhaul_mbps=np.full(4, np.inf)), method="max_rsrp")
    sol = solve(p, method="max_rsrp")
    np.testing.assert_array_equal(sol.serving_cell, free.serving_cell)  # caps ignored
    over = np.flatnonzero(free.cell_traffic_mbps > p.backhaul_mbps)
    assert len(over) == 2
    np.testing.assert_array_equal(sol.exceeded_backhaul, over)
    assert (sol.cell_traffic_mbps <= p.backhaul_mbps * (1 + 1e-12)).all()
    np.testing.assert_allclose(sol.cell_traffic_mbps[over], p.backhaul_mbps[over], rtol=1e-12)
    scale = p.backhaul_mbps[over] / free.cell_traffic_mbps[over]
    users = sol.serving_cell
    for j, s in zip(over, scale, strict=True):
        np.testing.assert_allclose(sol.user_rate_mbps[users == j],
                                   s * free.user_rate_mbps[users == j], rtol=1e-12)
    ok = ~np.isin(users, over)
    np.testing.assert_allclose(sol.user_rate_mbps[ok], free.user_rate_mbps[ok], rtol=1e-12)
    assert "backhaul" in sol.message
    assert sol.upper_bound >= sol.objective


# ---------------------------------------------------------------------- load aware
@pytest.mark.parametrize("seed", [10, 11, 12])
def test_load_aware_reaches_a_nash_equilibrium(seed):
    p = random_problem(seed, "radio", n_users=200, n_cells=10, n_cand=4)
    sol = solve(p, method="load_aware")
    assert sol.status == "solved"
    assert "Nash equilibrium" in sol.message and "equal weights" in sol.message
    assert nash_violation(p, sol.serving_cell) <= 1e-9
    hist = sol.history
    assert len(hist) == sol.n_iter + 1 and hist["moves"].iloc[1:].gt(0).all()
    assert (np.diff(hist["potential"]) > 0).all()  # the potential strictly increases
    assert sol.n_iter >= 1
    start = solve(p, method="max_rsrp")
    assert sol.objective >= start.objective


def test_load_aware_with_unequal_weights_and_caps():
    rng = np.random.default_rng(13)
    p = random_problem(13, "radio", n_users=200, n_cells=10, n_cand=4, weight=rng.uniform(0.5, 2, 200))
    sol = solve(p, method="load_aware")
    assert "unequal weights" in sol.message
    if sol.status == "solved":
        assert nash_violation(p, sol.serving_cell) <= 1e-9
    else:
        assert sol.status == "max_iter"
    capped = solve(p, method="load_aware", max_rounds=1)
    assert capped.n_iter == 1 and capped.status == "max_iter" and "round cap" in capped.message
    assert solve(p, method="load_aware", max_iter=0).n_iter == 0
    calls = []
    stopped = solve(p, method="load_aware", callback=lambda info: calls.append(info) or True)
    assert stopped.status == "stopped" and len(calls) == 1 and calls[0]["iteration"] == 0
    assert calls[0]["upper_bound"] is None
    timed = solve(p, method="load_aware", time_limit_s=0.0)
    assert timed.status == "time_limit" and timed.n_iter == 0 and "time limit" in timed.message


def test_load_aware_beats_max_rsrp_on_hetnet(hetnet):
    base = solve(hetnet, method="max_rsrp")
    calls = []
    sol = solve(hetnet, method="load_aware", callback=calls.append)
    assert sol.status == "solved"
    assert sol.objective > base.objective
    assert np.percentile(sol.user_rate_mbps, 5) > np.percentile(base.user_rate_mbps, 5)
    assert nash_violation(hetnet, sol.serving_cell) <= 1e-9
    assert len(calls) == sol.n_iter + 1
    assert f"after {sol.n_iter} rounds and {int(sol.history['moves'].sum())} moves" in sol.message


# ---------------------------------------------------------------------- random
def two_users() -> Problem:
    """User 0 reaches cell 0 at 2 and cell 1 at 3 Mbit/s, user 1 only cell 0 at 4 (α = 1).

    User 0 on cell 0: the two share it equally, rates 1 and 2, objective log 2. On cell 1:
    rates 3 and 4, log 12 — the optimum (giving user 0 airtime of cell 0 too lowers it:
    d/dt [log(3 + 2t) + log(4(1 − t))] = −1/3 < 0 at t = 0).
    """
    return Problem.from_links([0, 0, 1], [0, 1, 0], [2.0, 3.0, 4.0], n_users=2, n_cells=2)


def test_random_on_a_hand_solved_instance():
    p = two_users()
    optimum = {0: np.log(2.0), 1: np.log(12.0)}
    seen = set()
    for seed in range(12):
        sol = solve(p, "random", rng=seed)
        # User 0's cell is the rank floor(2 u_0) among its cells 0 and 1; user 1 has one.
        want = int(np.random.default_rng(seed).random(2)[0] * 2)
        np.testing.assert_array_equal(sol.serving_cell, [want, 0])
        assert sol.objective == pytest.approx(optimum[want], rel=1e-12)
        assert sol.status == "solved" and f"seed {seed}" in sol.message
        assert sol.upper_bound >= np.log(12.0) - 1e-12  # a bound on the optimum, whatever the draw
        seen.add(want)
    assert seen == {0, 1}


def test_no_feasible_objective_exceeds_any_bound():
    # Every method's feasible objective (random at several seeds among them) is at most
    # every method's upper bound, on the same problem.
    for seed, kind, kw in [(20, "radio", dict(alpha=1.0)), (21, "radio", dict(alpha=2.0)),
                           (22, "calibrated", dict(n_users=30, n_cells=5, n_resources=1, caps=True,
                                                   prices=True, demands=True))]:
        p = random_problem(seed, kind, **kw)
        sols = [solve(p, m) for m in ("dual", "ipm", "max_rsrp", "load_aware")]
        sols += [solve(p, "random", rng=s) for s in range(5)]
        lowest = min(s.upper_bound for s in sols)
        for sol in sols:
            assert sol.objective <= lowest + 1e-9 * max(1.0, abs(lowest)), (sol.method, seed)
        randoms = [s for s in sols if s.method == "random"]
        assert len({s.serving_cell.tobytes() for s in randoms}) > 1  # the seeds draw differently


def test_random_draws_uniformly_and_reproducibly():
    n = 3000  # every user reaches cells 0, 1 and 2
    p = Problem.from_links(np.repeat(np.arange(n), 3), np.tile([2, 0, 1], n),
                           np.ones(3 * n), n_users=n, n_cells=3, rsrp_dbm=np.zeros(3 * n))
    a = solve(p, "random", rng=7)
    counts = np.bincount(a.serving_cell, minlength=3)
    assert (np.abs(counts - n / 3) < 6 * np.sqrt(n * 2 / 9)).all(), counts  # 6 σ
    np.testing.assert_array_equal(solve(p, "random", rng=7).x, a.x)
    gen = np.random.default_rng(7)
    np.testing.assert_array_equal(solve(p, "random", rng=gen).serving_cell, a.serving_cell)
    assert not np.array_equal(solve(p, "random", rng=gen).serving_cell, a.serving_cell)
    assert "a given generator" in solve(p, "random", rng=gen).message


@pytest.mark.parametrize("rng", [-1, 2.0, "3", True, None])
def test_random_refuses_a_bad_rng(rng):
    with pytest.raises(ValidationError, match=r"rng=.*fix: give an integer seed"):
        solve(two_users(), "random", rng=rng)


# ---------------------------------------------------------------------- Solution fields
@pytest.mark.parametrize("method", BASELINES)
def test_every_field_filled(method):
    p = random_problem(14, "radio", n_users=50, n_cells=6,
                       backhaul_mbps=np.r_[np.inf, 2.0, *[np.inf] * 4], price_per_mbps=0.01)
    calls = []
    sol = solve(p, method=method, callback=calls.append)
    assert sol.method == method and sol.status == "solved" and sol.success
    assert sol.message.startswith(method)
    assert sol.x.shape == (p.n_links,) and (sol.x >= 0).all() and (sol.x <= 1).all()
    assert sol.user_rate_mbps.shape == (p.n_users,)
    assert sol.cell_airtime.shape == (p.n_cells, 1) and (sol.cell_airtime <= 1 + 1e-12).all()
    assert sol.cell_traffic_mbps.shape == (p.n_cells,)
    assert (sol.cell_traffic_mbps <= p.backhaul_mbps * (1 + 1e-12)).all()
    assert sol.prices["airtime"].shape == (p.n_cells, 1) and (sol.prices["airtime"] >= 0).all()
    np.testing.assert_array_equal(sol.prices["backhaul"], np.zeros(p.n_cells))
    assert sol.serving_cell.shape == (p.n_users,) and sol.serving_cell.dtype == np.int64
    assert sol.exceeded_backhaul.dtype == np.int64
    assert sol.upper_bound is not None and sol.gap is not None
    assert sol.upper_bound >= sol.objective
    assert sol.gap == pytest.approx(gap_of(sol, p), rel=1e-6)
    assert sol.utility == pytest.approx(np.sum(utility(sol.user_rate_mbps, p.alpha)))
    assert sol.cost == pytest.approx(0.01 * sol.cell_traffic_mbps.sum())
    assert sol.wall_s > 0 and sol.n_iter >= (0 if method == "load_aware" else 1)
    assert {"iteration", "objective", "upper_bound", "gap", "moves"} <= set(sol.history.columns)
    assert len(sol.history) >= 1 and len(calls) == len(sol.history)
    assert sol.user_rate_mbps.shape == (p.n_users,) and sol.cell_airtime.shape[0] == p.n_cells
    # each user is served by one cell only
    used = pd.DataFrame({"u": p.user, "c": p.cell})[sol.x > 0].groupby("u")["c"].nunique()
    assert (used == 1).all()
