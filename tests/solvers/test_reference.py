"""Tests of the ``reference`` method (cvxpy + Clarabel) on instances with known optima.

Every hand-solved instance below states its primal AND dual solution, derived from the
KKT conditions of the association problem (docs/model.md, "Optimality conditions"):
with λ_i = w_i U'(r_i) the user's marginal utility, a link e = (i, j, k) carrying
traffic (x_e > 0) satisfies ``λ_i R_e = μ_jk + (c_j + ν_j) R_e`` and an unused one
``λ_i R_e ≤ μ_jk + (c_j + ν_j) R_e`` (for users below their demand); μ_jk > 0 only on a
full resource, ν_j > 0 only on a saturated backhaul.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from helpers.gap_oracle import gap_of
from helpers.problems import one_cell, random_problem

from cellopt.problem import Problem
from cellopt.solution import STATUSES
from cellopt.solvers import METHODS, solve
from cellopt.solvers import reference as reference_module
from cellopt.solvers.certificate import dual_bound
from cellopt.solvers.common import loads, objective_terms, repair

TOL = 1e-8  # the reference certifies gaps of ~1e-12; ask for far less than that
# An objective within ε of the optimum pins x down to about sqrt(ε) only (the objective is
# flat to first order at the optimum): at certified gaps of ~1e-12, shares and rates are
# good to ~1e-6, prices to ~1e-7.
XTOL = 1e-5
HISTORY = ["iteration", "objective", "upper_bound", "gap", "solve_time_s", "compile_time_s"]


def ref(problem: Problem, **kwargs):
    return solve(problem, method="reference", tol=kwargs.pop("tol", TOL), **kwargs)


def assert_certified(sol, tol: float = 1e-6) -> None:
    assert sol.status == "optimal", sol.message
    assert sol.upper_bound >= sol.objective - 1e-9 * max(1.0, abs(sol.objective))
    assert sol.gap <= tol


def test_registered():
    assert METHODS["reference"] is reference_module.solve_reference


# ---------------------------------------------------------------------- 1. equal shares
def test_one_cell_log_equal_shares():
    # max Σ log(R_i x_i) s.t. Σ x_i ≤ 1: KKT 1/x_i = μ for all i, so x_i = 1/n and
    # μ = n = Σ w_i; objective Σ log(R_i / n). Dual: π_i = μ / R_i, r_i = w_i/π_i = R_i/n,
    # g = μ + Σ (log(R_i/n) − 1) = objective (strong duality).
    rates = np.array([2.0, 5.0, 11.0, 30.0])
    n = len(rates)
    sol = ref(one_cell(rates))
    assert_certified(sol)
    np.testing.assert_allclose(sol.x, 1 / n, rtol=XTOL)
    np.testing.assert_allclose(sol.user_rate_mbps, rates / n, rtol=XTOL)
    np.testing.assert_allclose(sol.prices["airtime"], [[n]], rtol=1e-6)
    assert sol.objective == pytest.approx(np.log(rates / n).sum(), rel=1e-9, abs=1e-9)
    assert sol.upper_bound >= sol.objective
    assert sol.gap <= 1e-6


def test_one_cell_log_weighted_shares():
    # KKT w_i / x_i = μ and Σ x_i = 1 give x_i = w_i / Σw and μ = Σw.
    rates = np.array([3.0, 8.0, 20.0])
    w = np.array([1.0, 2.0, 5.0])
    sol = ref(one_cell(rates, weight=w))
    assert_certified(sol)
    np.testing.assert_allclose(sol.x, w / w.sum(), rtol=XTOL)
    np.testing.assert_allclose(sol.prices["airtime"], [[w.sum()]], rtol=1e-6)
    assert sol.objective == pytest.approx(np.sum(w * np.log(rates * w / w.sum())), rel=1e-9)


# ---------------------------------------------------------------------- 2. aggregation
def test_one_user_two_cells_uses_both():
    # One user, cells 0 and 1 with rates R1, R2: log(R1 x1 + R2 x2) increases in both, so
    # x = (1, 1), r = R1 + R2. KKT: w U'(r) R_j = μ_j, i.e. μ_j = R_j / (R1 + R2).
    r1, r2 = 4.0, 6.0
    p = Problem.from_links([0, 0], [0, 1], [r1, r2], n_users=1, n_cells=2)
    sol = ref(p)
    assert_certified(sol)
    np.testing.assert_allclose(sol.x, [1.0, 1.0], rtol=XTOL)
    assert sol.user_rate_mbps[0] == pytest.approx(r1 + r2, rel=XTOL)
    assert sol.objective == pytest.approx(np.log(r1 + r2), rel=1e-7)
    np.testing.assert_allclose(sol.prices["airtime"].ravel(), [r1 / (r1 + r2), r2 / (r1 + r2)],
                               rtol=1e-6)
    assert sol.serving_cell[0] == 1  # the cell carrying most of the rate


# ---------------------------------------------------------------------- 3. femto backhaul
def test_backhaul_capped_femto():
    # User A (0) has a macro link (cell 0, rate a) and a femto link (cell 1, rate Rf,
    # backhaul cap C < Rf); user B (1) only the macro (rate b). Log utility, weights 1.
    # The femto serves only A, so A takes all it may: x_Af = C / Rf (airtime 0.2 < 1, so
    # μ_femto = 0 and the cap binds: T_femto = C). On the macro, with t = x_Am:
    #   max log(C + a t) + log(b (1 − t))  ⇒  a / (C + a t) = 1 / (1 − t)
    #   ⇒ t = (a − C) / (2a) = 0.3 (a > C), x_Bm = 0.7,
    #   r_A = (a + C) / 2 = 7, r_B = b (a + C) / (2a) = 4.2.
    # Prices: μ_macro = λ_B b = b / r_B = 2a / (a + C) = 10/7 (and λ_A a = a / r_A agrees);
    # femto link: λ_A Rf = μ_femto + ν Rf ⇒ ν = λ_A = 1 / r_A = 1/7.
    a, rf, c, b = 10.0, 20.0, 4.0, 6.0
    p = Problem.from_links([0, 0, 1], [0, 1, 0], [a, rf, b], n_users=2, n_cells=2,
                           backhaul_mbps=[np.inf, c])
    sol = ref(p)
    assert_certified(sol)
    np.testing.assert_allclose(sol.x, [(a - c) / (2 * a), c / rf, (a + c) / (2 * a)], rtol=XTOL)
    np.testing.assert_allclose(sol.user_rate_mbps, [(a + c) / 2, b * (a + c) / (2 * a)], rtol=XTOL)
    assert sol.cell_traffic_mbps[1] == pytest.approx(c, rel=1e-9)
    assert sol.cell_traffic_mbps[1] <= c
    np.testing.assert_allclose(sol.prices["airtime"].ravel(), [2 * a / (a + c), 0.0], rtol=1e-6,
                               atol=1e-9)
    nu = sol.prices["backhaul"]
    assert nu[1] > 0
    np.testing.assert_allclose(nu, [0.0, 2 / (a + c)], rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------------- 4. other α
def test_sum_rate_gives_all_airtime_to_best_user():
    # α = 0: max Σ w_i R_i x_i on the simplex: everything to argmax w_i R_i; μ = max w_i R_i.
    rates = np.array([3.0, 7.0, 5.0])
    sol = ref(one_cell(rates, alpha=0.0))
    assert_certified(sol)
    np.testing.assert_allclose(sol.x, [0.0, 1.0, 0.0], atol=1e-8)
    assert sol.objective == pytest.approx(7.0 - 3.0, rel=1e-9)  # U(r) = r − 1, three users
    np.testing.assert_allclose(sol.prices["airtime"], [[7.0]], rtol=1e-6)
    weighted = ref(one_cell(rates, alpha=0.0, weight=[3.0, 1.0, 1.0]))  # w R = (9, 7, 5)
    np.testing.assert_allclose(weighted.x, [1.0, 0.0, 0.0], atol=1e-8)
    assert weighted.objective == pytest.approx(9.0 - 5.0, rel=1e-9)  # Σ w = 5


def test_alpha_two_one_cell():
    # α = 2: U(r) = −1/r. KKT: w_i R_i (R_i x_i)^−2 = w_i / (R_i x_i²) = μ, so
    # x_i = sqrt(w_i / R_i) / S with S = Σ_k sqrt(w_k / R_k), and μ = S².
    # R = (1, 4, 9), w = 1: S = 1 + 1/2 + 1/3 = 11/6, x = (6, 3, 2)/11, μ = 121/36,
    # R x = (6, 12, 18)/11, objective −Σ 1/(R x) = −11 (1/6 + 1/12 + 1/18) = −121/36.
    sol = ref(one_cell([1.0, 4.0, 9.0], alpha=2.0))
    assert_certified(sol)
    np.testing.assert_allclose(sol.x, np.array([6, 3, 2]) / 11, rtol=XTOL)
    np.testing.assert_allclose(sol.prices["airtime"], [[121 / 36]], rtol=1e-6)
    assert sol.objective == pytest.approx(3 - 121 / 36, rel=1e-8)  # U(r) = 1 − 1/r


def test_alpha_half_one_cell():
    # α = 1/2: U(r) = 2 sqrt(r). KKT: w_i R_i (R_i x_i)^−1/2 = w_i sqrt(R_i / x_i) = μ, so
    # x_i ∝ w_i² R_i. R = (1, 2, 5), w = 1: x = (1, 2, 5)/8, μ = sqrt(8),
    # objective Σ 2 sqrt(R_i² / 8) = 2 · 8 / sqrt(8) = 2 sqrt(8).
    sol = ref(one_cell([1.0, 2.0, 5.0], alpha=0.5))
    assert_certified(sol)
    np.testing.assert_allclose(sol.x, np.array([1, 2, 5]) / 8, rtol=XTOL)
    np.testing.assert_allclose(sol.prices["airtime"], [[np.sqrt(8)]], rtol=1e-6)
    assert sol.objective == pytest.approx(2 * np.sqrt(8) - 3 * 2, rel=1e-8)  # U = 2√r − 2


def test_user_without_links_alpha_below_one():
    # α < 1 allows a user with no link: it gets rate 0, U(0) = 0, and serving cell −1;
    # the two others (R = 4, 4) split the cell: with α = 1/2, x ∝ R: (1/2, 1/2).
    p = Problem.from_links([0, 2], [0, 0], [4.0, 4.0], n_users=3, n_cells=1, alpha=0.5)
    sol = ref(p)
    assert_certified(sol)
    np.testing.assert_allclose(sol.x, [0.5, 0.5], rtol=XTOL)
    assert sol.user_rate_mbps[1] == 0.0
    assert sol.serving_cell.tolist() == [0, -1, 0]
    assert sol.objective == pytest.approx(2 * 2 * np.sqrt(2.0) - 3 * 2, rel=1e-8)  # U = 2√r − 2


def test_no_links_at_all():
    p = Problem.from_links(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0),
                           n_users=2, n_cells=1, alpha=0.0)
    sol = ref(p)
    assert sol.status == "optimal"
    assert sol.objective == -2.0 and sol.upper_bound == -2.0  # U(0) = −1 for each user
    assert sol.x.shape == (0,) and sol.serving_cell.tolist() == [-1, -1]


# ---------------------------------------------------------------------- 5. demands
def test_demand_below_equal_share():
    # R = (10, 20, 30), demands (inf, inf, 3). Equal shares would give user 2 a rate of 10
    # > 3, so it gets exactly its demand: x_2 = 3/30 = 0.1, and the two others split the
    # remaining 0.9: x = 0.45 each (KKT 1/x = μ ⇒ μ = 1/0.45). User 2 would like more at
    # that price (1/x_2 = 10 > μ): its demand multiplier, not μ, absorbs the difference.
    sol = ref(one_cell([10.0, 20.0, 30.0], demand_mbps=[np.inf, np.inf, 3.0]))
    assert_certified(sol)
    np.testing.assert_allclose(sol.x, [0.45, 0.45, 0.1], rtol=XTOL)
    np.testing.assert_allclose(sol.user_rate_mbps, [4.5, 9.0, 3.0], rtol=XTOL)
    assert sol.user_rate_mbps[2] <= 3.0
    np.testing.assert_allclose(sol.prices["airtime"], [[1 / 0.45]], rtol=1e-6)


# ---------------------------------------------------------------------- 6. third-party price
@pytest.mark.parametrize(
    ("price", "rate", "x2", "mu"),
    [
        # c = 0.5 > 1/R1: the marginal utility at r = R1 (1/4) is below c: nothing bought.
        # μ_1 = λ R1 = 1 and the third-party cell is idle (μ_2 = 0).
        (0.5, 4.0, 0.0, [1.0, 0.0]),
        # c = 0.125: buy y = 1/c − R1 = 4 < R2 (x_2 = 4/6): r = 1/c = 8, cost c y = 1 − c R1;
        # μ_1 = R1 / r = c R1 = 0.5; the third-party resource is not full: μ_2 = 0.
        (0.125, 8.0, 4.0 / 6.0, [0.5, 0.0]),
        # c = 0.05: 1/c = 20 > R1 + R2: buy all of it, r = 10; μ_1 = R1/r = 0.4 and
        # μ_2 = R2 (1/r − c) = 0.3.
        (0.05, 10.0, 1.0, [0.4, 0.3]),
    ],
    ids=["expensive", "partial", "saturated"],
)
def test_third_party_price(price, rate, x2, mu):
    # One user, operator cell 0 (R1 = 4, free) and third-party cell 1 (R2 = 6, price c):
    # max log(R1 x1 + y) − c y with y = R2 x2 ∈ [0, R2]: x1 = 1 and the user buys while
    # 1/r > c, so r = max(R1, min(R1 + R2, 1/c)).
    r1, r2 = 4.0, 6.0
    p = Problem.from_links([0, 0], [0, 1], [r1, r2], n_users=1, n_cells=2,
                           price_per_mbps=[0.0, price])
    sol = ref(p)
    assert_certified(sol)
    assert rate == pytest.approx(max(r1, min(r1 + r2, 1 / price)))
    np.testing.assert_allclose(sol.x, [1.0, x2], rtol=XTOL, atol=XTOL)
    assert sol.user_rate_mbps[0] == pytest.approx(rate, rel=XTOL)
    assert sol.cost == pytest.approx(price * r2 * x2, rel=XTOL, abs=XTOL)
    assert sol.objective == pytest.approx(np.log(rate) - price * r2 * x2, rel=1e-7, abs=1e-8)
    np.testing.assert_allclose(sol.prices["airtime"].ravel(), mu, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------- 7. Solution fields
def test_solution_fields_and_feasibility():
    p = random_problem(3, "grouped")
    # Make sure one (cell, resource) has no link, to check that its price is 0.
    p = p.restrict(p.group != p.n_groups - 1)
    calls = []
    sol = ref(p, callback=lambda row: calls.append(row) or True)  # True: changes nothing
    assert_certified(sol)
    assert sol.method == "reference" and sol.status in STATUSES and sol.success
    assert sol.message
    assert sol.n_iter > 0 and sol.wall_s > 0
    assert sol.objective == pytest.approx(sol.utility - sol.cost, rel=1e-12)
    assert sol.gap == pytest.approx(gap_of(sol, p), rel=1e-6, abs=1e-12)
    assert sol.x.shape == (p.n_links,)
    assert sol.user_rate_mbps.shape == (p.n_users,)
    assert sol.cell_airtime.shape == (p.n_cells, p.n_resources)
    assert sol.cell_traffic_mbps.shape == (p.n_cells,)
    assert sol.prices["airtime"].shape == (p.n_cells, p.n_resources)
    assert sol.prices["backhaul"].shape == (p.n_cells,)
    assert sol.serving_cell.shape == (p.n_users,) and sol.serving_cell.dtype == np.int64
    assert sol.exceeded_backhaul.shape == (0,)
    # Feasibility of the returned x (after repair).
    rate, airtime, traffic = loads(p, sol.x)
    assert (sol.x >= 0).all()
    assert airtime.max() <= 1 + 1e-9
    assert (traffic <= p.backhaul_mbps * (1 + 1e-12)).all()
    assert (rate <= p.demand_mbps * (1 + 1e-12)).all()
    np.testing.assert_allclose(sol.user_rate_mbps, rate)
    # Prices: ≥ 0, 0 on groups without links and on uncapped cells; the bound is g there.
    mu, nu = sol.prices["airtime"], sol.prices["backhaul"]
    assert (mu >= 0).all() and (nu >= 0).all()
    assert mu[-1, -1] == 0.0
    assert (nu[~np.isfinite(p.backhaul_mbps)] == 0).all()
    assert sol.upper_bound == pytest.approx(dual_bound(p, mu, nu), rel=1e-12)
    # History: one row; the callback saw it once.
    assert list(sol.history.columns) == HISTORY and len(sol.history) == 1
    row = sol.history.iloc[0]
    assert row["iteration"] == sol.n_iter
    assert row["objective"] == pytest.approx(sol.objective)
    assert row["upper_bound"] == pytest.approx(sol.upper_bound)
    assert row["solve_time_s"] >= 0 and row["compile_time_s"] >= 0
    assert len(calls) == 1 and set(calls[0]) == set(HISTORY)
    assert sol.user_rate_mbps.shape == (p.n_users,) and sol.cell_airtime.shape[0] == p.n_cells


def test_unknown_solver_lists_installed():
    p = one_cell([1.0, 2.0])
    with pytest.raises(ValueError, match=r"installed cvxpy solvers.*CLARABEL"):
        ref(p, solver="NO_SUCH_SOLVER")


def test_solver_without_the_cones_is_a_value_error():
    # HiGHS solves linear programs: fine for α = 0, not for log utility (exponential cones).
    p = one_cell([3.0, 7.0, 5.0], alpha=0.0)
    sol = ref(p, solver="highs")
    assert_certified(sol)
    np.testing.assert_allclose(sol.x, [0.0, 1.0, 0.0], atol=1e-8)
    with pytest.raises(ValueError, match="cannot solve this problem"):
        ref(p.replace(alpha=1.0), solver="HIGHS")


def test_other_conic_solver_scs():
    p = random_problem(4, "grouped")
    sol = ref(p, solver="scs", tol=1e-3)
    exact = ref(p)
    assert sol.status in STATUSES and "SCS" in sol.message
    _, airtime, traffic = loads(p, sol.x)
    assert airtime.max() <= 1 + 1e-9 and (traffic <= p.backhaul_mbps * (1 + 1e-12)).all()
    # Any prices ≥ 0 give a valid bound, and SCS's answer cannot beat the optimum.
    assert sol.upper_bound >= exact.objective - 1e-9 * abs(exact.objective)
    assert sol.objective <= exact.upper_bound + 1e-9 * abs(exact.objective)


def test_max_iter_is_a_status():
    p = random_problem(5, "grouped")
    sol = ref(p, max_iter=2)
    assert sol.status == "max_iter", sol.message
    assert sol.n_iter == 2
    _, airtime, _ = loads(p, sol.x)
    assert airtime.max() <= 1 + 1e-9
    assert sol.upper_bound >= ref(p).objective  # still a valid bound


def test_time_limit_is_a_status():
    # 3,000 users: one Clarabel iteration takes far longer than the 1 ms budget it gets.
    p = random_problem(6, "grouped", n_users=3000, n_cells=60, n_resources=1, per_user=6)
    sol = ref(p, time_limit_s=1e-6)
    assert "stopped at the solver's limit" in sol.message
    if np.isfinite(sol.objective):
        assert sol.status == "time_limit", sol.message
        assert sol.upper_bound >= sol.objective
    else:  # stopped before any iterate served everyone: x = 0 is no answer at α = 1
        assert sol.status == "failed" and "rate 0" in sol.message, sol.message


def test_optimal_claim_not_confirmed_by_our_bound_is_failed(monkeypatch):
    # If the solver says "optimal" but g(μ, ν) at its prices leaves a gap > tol, the status
    # must not be "optimal": simulate a bound that is off by 1.
    monkeypatch.setattr(reference_module, "dual_bound",
                        lambda problem, mu, nu: dual_bound(problem, mu, nu) + 1.0)
    sol = ref(one_cell([2.0, 5.0]))
    assert sol.status == "failed"
    assert "status 'optimal" in sol.message and f"{sol.gap:.3e}" in sol.message
    assert str(TOL) in sol.message or f"{TOL:g}" in sol.message


# ---------------------------------------------------------------------- units / scaling
@pytest.mark.parametrize("alpha", [1.0, 2.0, 0.5])
def test_answer_does_not_depend_on_rate_units(alpha):
    # Rates, caps and demands × s (kbit/s instead of Mbit/s) and prices × s^−α give the
    # same problem: the utility scales by s^(1−α) (α ≠ 1; shifts by Σ w log s for α = 1)
    # and so does the cost c s^−α · s T. Rates scale by s (x itself need not be unique: a
    # user with several links can shift traffic between them); λ = w U'(r) scales by
    # s^−α, so μ = λ R scales by s^(1−α) and ν by s^−α.
    s = 1000.0
    p = random_problem(7, "grouped", alpha=alpha)
    q = p.replace(rate_mbps=p.rate_mbps * s, backhaul_mbps=p.backhaul_mbps * s,
                  demand_mbps=p.demand_mbps * s, price_per_mbps=p.price_per_mbps * s ** -alpha)
    a, b = ref(p), ref(q)
    assert_certified(a)
    assert_certified(b)
    np.testing.assert_allclose(b.user_rate_mbps, a.user_rate_mbps * s, rtol=XTOL)
    if alpha == 1:
        assert b.utility == pytest.approx(a.utility + p.weight.sum() * np.log(s), rel=1e-9)
    else:
        # U(s r) = s^(1−α) U(r) + U(s), with U(s) = (s^(1−α) − 1) / (1−α)
        shift = p.weight.sum() * (s ** (1 - alpha) - 1) / (1 - alpha)
        assert b.utility == pytest.approx(a.utility * s ** (1 - alpha) + shift, rel=1e-9)
    assert b.cost == pytest.approx(a.cost * s ** (1 - alpha), rel=1e-6)
    mu_a, mu_b = a.prices["airtime"] * s ** (1 - alpha), b.prices["airtime"]
    np.testing.assert_allclose(mu_b, mu_a, rtol=1e-5, atol=1e-6 * mu_a.max())
    nu_a, nu_b = a.prices["backhaul"] * s ** -alpha, b.prices["backhaul"]
    assert nu_a.max() > 0
    np.testing.assert_allclose(nu_b, nu_a, rtol=1e-5, atol=1e-6 * nu_a.max())


# ---------------------------------------------------------------------- 8. independent check
def slsqp_optimum(p: Problem) -> float:
    """The objective of the same problem (log utility) solved by scipy's SLSQP, without cvxpy.

    SLSQP's x is made exactly feasible by :func:`repair` before it is evaluated.
    """
    n = p.n_links
    links = np.arange(n)
    a_user = sp.csr_array((p.rate_mbps, (p.user, links)), shape=(p.n_users, n))
    a_group = sp.csr_array((np.ones(n), (p.group, links)), shape=(p.n_groups, n))
    a_cell = sp.csr_array((p.rate_mbps, (p.cell, links)), shape=(p.n_cells, n))
    capped, limited = np.isfinite(p.backhaul_mbps), np.isfinite(p.demand_mbps)
    a = sp.vstack([a_group, a_cell[capped], a_user[limited]]).toarray()
    b = np.r_[np.ones(p.n_groups), p.backhaul_mbps[capped], p.demand_mbps[limited]]
    cost = p.price_per_mbps[p.cell] * p.rate_mbps
    a_user = a_user.toarray()

    def neg(x):
        r = np.maximum(a_user @ x, 1e-12)
        return -(p.weight @ np.log(r)) + cost @ x, -(a_user.T @ (p.weight / r)) + cost

    # Feasible start: a tenth of an equal share of every resource, scaled into the caps.
    x0 = 0.1 / np.bincount(p.group, minlength=p.n_groups)[p.group]
    x0 = x0 * min(1.0, float(np.min(b / np.maximum(a @ x0, 1e-300))))
    res = scipy.optimize.minimize(
        neg, x0, jac=True, method="SLSQP", bounds=[(0.0, 1.0)] * n,
        constraints=[{"type": "ineq", "fun": lambda x: b - a @ x, "jac": lambda x: -a}],
        options={"ftol": 1e-14, "maxiter": 2000})
    # 8 ("positive directional derivative for linesearch"): no progress left at machine
    # precision, which is where SLSQP ends on these instances.
    assert res.status in (0, 8), res.message
    assert (a @ res.x <= b + 1e-5).all()  # SLSQP's own feasibility is ~1e-7 here
    util, cost = objective_terms(p, repair(p, res.x))  # feasible, so ≤ the optimum
    return util - cost


@pytest.mark.parametrize("seed", [0, 1])
def test_random_instance_against_slsqp(seed):
    p = random_problem(seed, "grouped")
    sol = ref(p)
    assert_certified(sol, tol=1e-9)
    other = slsqp_optimum(p)
    assert sol.objective == pytest.approx(other, rel=1e-5, abs=1e-5)
    assert sol.upper_bound >= other  # our bound holds for SLSQP's (repaired) point too


@pytest.mark.parametrize("alpha", [1.0, 0.0, 0.5, 2.0, 5.0, np.sqrt(2)])  # √2: power cones
def test_random_instance_kkt(alpha):
    # Stationarity and complementary slackness of the returned primal-dual pair.
    p = random_problem(11, "grouped", alpha=alpha)
    sol = ref(p)
    assert_certified(sol, tol=1e-9)
    x, rate = sol.x, sol.user_rate_mbps
    mu = sol.prices["airtime"].ravel()[p.group]
    nu = sol.prices["backhaul"][p.cell]
    lam = p.weight * (rate ** -alpha if alpha else np.ones_like(rate))
    # Reduced value per unit airtime of each link (0 where used, ≤ 0 where not).
    reduced = lam[p.user] * p.rate_mbps - mu - (p.price_per_mbps[p.cell] + nu) * p.rate_mbps
    scale = np.abs(mu).max() + (lam[p.user] * p.rate_mbps).max()
    at_demand = rate >= p.demand_mbps * (1 - 1e-7)
    free = ~at_demand[p.user]
    assert reduced[free].max() <= 1e-5 * scale
    used = free & (x > 1e-4)
    assert np.abs(reduced[used]).max() <= 1e-5 * scale
    # Demand-bound users would buy more at these prices.
    assert (reduced[at_demand[p.user] & (x > 1e-4)] >= -1e-5 * scale).all()
    _, airtime, traffic = loads(p, x)
    priced = sol.prices["airtime"].ravel() > 1e-6 * scale
    np.testing.assert_allclose(airtime[priced], 1.0, atol=1e-6)
    priced_cells = sol.prices["backhaul"] > 1e-6 * scale / p.rate_mbps.max()
    np.testing.assert_allclose(traffic[priced_cells], p.backhaul_mbps[priced_cells], rtol=1e-6)
