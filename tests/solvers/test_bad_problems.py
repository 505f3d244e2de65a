"""Bad and degenerate problems, solver arguments and power settings: each has an exact outcome.

Every bad input ends in a cellopt error (a :class:`~cellopt.errors.CelloptError`) whose
message names the bad value; every degenerate input is an answer, the same kind from
every method; and the certificate means the same at every α.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.gap_oracle import true_gap, utility_sum
from helpers.problems import DEGENERATE_STEPS, near_linear_or_starved
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cellopt
from cellopt import Problem, topology
from cellopt.errors import CelloptError, ResourceLimitError, ValidationError
from cellopt.power import ColumnGenerationOptions, PowerProblem
from cellopt.solvers.common import loads

METHODS = sorted(cellopt.METHODS)
OPTIMIZERS = ["alm", "dual", "ipm", "reference"]
BASELINES = ["max_rsrp", "max_sinr", "range_expansion", "load_aware", "random"]


def small(**overrides) -> Problem:
    """Three users, two cells, one resource, with RSRP, SINR and tiers (every method runs)."""
    kwargs = dict(user=np.array([0, 0, 1, 2]), cell=np.array([0, 1, 1, 0]),
                  rate_mbps=np.array([1.0, 2.0, 3.0, 4.0]), n_users=3, n_cells=2,
                  rsrp_dbm=np.array([-80.0, -90.0, -85.0, -70.0]),
                  sinr_db=np.array([5.0, 0.0, 3.0, 10.0]), cell_tier=np.array([0, 1]))
    kwargs.update(overrides)
    args = [kwargs.pop(k) for k in ("user", "cell", "rate_mbps")]
    return Problem.from_links(*args, **kwargs)


def empty(n_users: int, alpha: float = 1.0, n_cells: int = 2) -> Problem:
    none = np.zeros(0, np.int64)
    return Problem.from_links(none, none, np.zeros(0), n_users=n_users, n_cells=n_cells,
                              alpha=alpha, rsrp_dbm=np.zeros(0), sinr_db=np.zeros(0),
                              cell_tier=np.zeros(n_cells, np.int64))


# ============================================================== Problem.from_links
BAD_PROBLEMS = [
    # counts and α
    ("n_users-negative", dict(n_users=-1), ValidationError, "n_users=-1"),
    ("n_users-fraction", dict(n_users=8.5), ValidationError, "n_users=8.5"),
    ("n_users-bool", dict(n_users=True), ValidationError, "n_users=True"),
    ("n_users-text", dict(n_users="3"), ValidationError, "n_users='3'"),
    ("n_users-none", dict(n_users=None), ValidationError, "n_users=None"),
    ("n_cells-negative", dict(n_cells=-2), ValidationError, "n_cells=-2"),
    ("n_cells-fraction", dict(n_cells=2.5), ValidationError, "n_cells=2.5"),
    ("n_resources-zero", dict(n_resources=0), ValidationError, "n_resources=0"),
    ("n_resources-negative", dict(n_resources=-1), ValidationError, "n_resources=-1"),
    ("alpha-text", dict(alpha="1"), ValidationError, "alpha='1'"),
    ("alpha-none", dict(alpha=None), ValidationError, "alpha=None"),
    ("alpha-bool", dict(alpha=True), ValidationError, "alpha=True"),
    ("alpha-negative", dict(alpha=-1.0), ValidationError, "alpha=-1.0"),
    ("alpha-nan", dict(alpha=float("nan")), ValidationError, "alpha=nan"),
    ("alpha-inf", dict(alpha=float("inf")), ValidationError, "alpha=inf"),
    ("users-too-many", dict(n_users=10**13), ResourceLimitError, "CELLOPT_MAX_MEMORY_GB"),
    # links
    ("rate-nan", dict(rate_mbps=np.array([1.0, np.nan, 3.0, 4.0])), ValidationError, "rows [1]"),
    ("rate-negative", dict(rate_mbps=np.array([1.0, 2.0, 3.0, -4.0])), ValidationError,
     "rows [3]"),
    ("rate-inf", dict(rate_mbps=np.array([np.inf, 2.0, 3.0, 4.0])), ValidationError, "rows [0]"),
    ("rate-text", dict(rate_mbps=np.array(["a", "b", "c", "d"])), ValidationError,
     "rate_mbps holds values that are not numbers"),
    ("rate-short", dict(rate_mbps=np.array([1.0, 2.0])), ValidationError, "rate_mbps has shape"),
    ("user-out-of-range", dict(user=np.array([0, 0, 5, 2])), ValidationError, "user index"),
    ("user-negative", dict(user=np.array([0, 0, -1, 2])), ValidationError, "user index"),
    ("user-float", dict(user=np.array([0.0, 0.0, 1.0, 2.0])), ValidationError,
     "not integers"),
    ("cell-out-of-range", dict(cell=np.array([0, 1, 2, 0])), ValidationError, "cell index"),
    ("resource-out-of-range", dict(resource=np.array([0, 0, 1, 0])), ValidationError,
     "resource index"),
    ("duplicate-link", dict(user=np.array([0, 0, 1, 1]), cell=np.array([0, 0, 1, 0])),
     ValidationError, "repeat the same"),
    ("rsrp-nan", dict(rsrp_dbm=np.array([np.nan, -90.0, -85.0, -70.0])), ValidationError,
     "rsrp_dbm is NaN"),
    ("rsrp-text", dict(rsrp_dbm=["x"] * 4), ValidationError, "rsrp_dbm holds values"),
    ("sinr-shape", dict(sinr_db=np.zeros(3)), ValidationError, "sinr_db has shape"),
    # per-user and per-cell parameters
    ("weight-zero", dict(weight=np.array([1.0, 0.0, 1.0])), ValidationError, "weight invalid"),
    ("weight-negative", dict(weight=-1.0), ValidationError, "weight invalid"),
    ("weight-nan", dict(weight=np.array([1.0, np.nan, 1.0])), ValidationError, "weight invalid"),
    ("weight-inf", dict(weight=np.inf), ValidationError, "weight invalid"),
    ("weight-shape", dict(weight=np.ones(2)), ValidationError, "weight has shape"),
    ("weight-text", dict(weight="heavy"), ValidationError, "weight holds values"),
    ("demand-zero", dict(demand_mbps=0.0), ValidationError, "demand_mbps invalid"),
    ("demand-negative", dict(demand_mbps=np.array([1.0, -2.0, 1.0])), ValidationError,
     "demand_mbps invalid"),
    ("demand-nan", dict(demand_mbps=np.nan), ValidationError, "demand_mbps invalid"),
    ("backhaul-negative", dict(backhaul_mbps=np.array([-1.0, 5.0])), ValidationError,
     "backhaul_mbps invalid"),
    ("backhaul-nan", dict(backhaul_mbps=np.nan), ValidationError, "backhaul_mbps invalid"),
    ("backhaul-shape", dict(backhaul_mbps=np.ones(5)), ValidationError, "backhaul_mbps has shape"),
    ("price-negative", dict(price_per_mbps=-0.1), ValidationError, "price_per_mbps invalid"),
    ("price-inf", dict(price_per_mbps=np.inf), ValidationError, "price_per_mbps invalid"),
    ("tier-shape", dict(cell_tier=np.zeros(3, np.int64)), ValidationError, "cell_tier has shape"),
    ("tier-code", dict(cell_tier=np.array([0, 9])), ValidationError, "cell_tier is not a code"),
    ("third-party-shape", dict(third_party=np.ones(5, bool)), ValidationError,
     "third_party has shape"),
    ("pattern-cost-negative", dict(pattern_cost=np.array([-1.0])), ValidationError,
     "pattern_cost"),
    ("users-without-links-log", dict(user=np.array([0, 0, 1, 1]), cell=np.array([0, 1, 1, 0])),
     ValidationError, "rows [2]"),
]


@pytest.mark.parametrize(("overrides", "error", "words"),
                         [pytest.param(o, e, w, id=i) for i, o, e, w in BAD_PROBLEMS])
def test_bad_problem_is_refused_with_the_value_and_a_fix(overrides, error, words):
    with pytest.raises(error) as err:
        small(**overrides)
    assert words in str(err.value)
    assert "fix" in str(err.value)
    assert isinstance(err.value, CelloptError)


# ============================================================== solve() arguments
BAD_ARGUMENTS = [
    ("method-unknown", dict(method="ALM"), "unknown method 'ALM'"),
    ("method-empty", dict(method=""), "unknown method ''"),
    ("method-number", dict(method=3), "unknown method 3"),
    ("method-list", dict(method=["alm"]), "unknown method ['alm']"),
    ("tol-zero", dict(tol=0.0), "tol=0.0"),
    ("tol-negative", dict(tol=-1e-4), "tol=-0.0001"),
    ("tol-nan", dict(tol=float("nan")), "tol=nan"),
    ("tol-inf", dict(tol=float("inf")), "tol=inf"),
    ("tol-text", dict(tol="1e-4"), "tol='1e-4'"),
    ("tol-bool", dict(tol=True), "tol=True"),
    ("tol-none", dict(tol=None), "tol=None"),
    ("max_iter-negative", dict(max_iter=-5), "max_iter=-5"),
    ("max_iter-fraction", dict(max_iter=2.5), "max_iter=2.5"),
    ("max_iter-text", dict(max_iter="10"), "max_iter='10'"),
    ("max_iter-bool", dict(max_iter=True), "max_iter=True"),
    ("max_iter-reference-negative", dict(method="reference", max_iter=-5), "max_iter=-5"),
    ("time_limit-negative", dict(time_limit_s=-1.0), "time_limit_s=-1.0"),
    ("time_limit-nan", dict(time_limit_s=float("nan")), "time_limit_s=nan"),
    ("time_limit-text", dict(time_limit_s="5"), "time_limit_s='5'"),
    ("callback-not-callable", dict(callback=3), "callback=3 is not callable"),
    ("single-text", dict(single_association="yes"), "single_association='yes'"),
    ("single-baseline", dict(method="max_rsrp", single_association=True),
     "single_association applies to"),
    ("several-problems", dict(tol=0.0, max_iter=-1), "max_iter=-1"),
    *[(f"unknown-option-{m}", dict(method=m, warm=1), f"unknown option(s) ['warm'] for method "
       f"{m!r}") for m in METHODS],
    ("alm-option-of-dual", dict(method="alm", tau0=0.1), "['tau0']"),
    ("dual-option-of-alm", dict(method="dual", sigma0=1.0), "['sigma0']"),
    ("reference-clarabel-setting", dict(method="reference", max_step_fraction=0.9),
     "solver_options"),
    ("baseline-bias-on-max-rsrp", dict(method="max_rsrp", bias_db=3.0), "['bias_db']"),
    ("reference-too-large", dict(method="reference", max_links=3), "more than max_links=3"),
    ("reference-max-links-text", dict(method="reference", max_links="many"),
     "max_links='many'"),
]


@pytest.mark.parametrize(("kwargs", "words"),
                         [pytest.param(k, w, id=i) for i, k, w in BAD_ARGUMENTS])
def test_bad_solver_argument_is_a_validation_error(kwargs, words):
    with pytest.raises(ValidationError) as err:
        cellopt.solve(small(), **kwargs)
    assert words in str(err.value)
    assert "fix" in str(err.value)


@pytest.mark.parametrize("method", METHODS)
def test_unknown_option_lists_the_methods_options(method):
    with pytest.raises(ValidationError) as err:
        cellopt.solve(small(), method, no_such_option=1)
    for name in cellopt.solvers.registry.method_options(method):
        assert repr(name) in str(err.value)


@pytest.mark.parametrize("thing", [None, {"user": [0]}, "problem", np.zeros(3)],
                         ids=["none", "dict", "text", "array"])
def test_not_a_problem(thing):
    with pytest.raises(ValidationError, match=r"expected a cellopt\.Problem"):
        cellopt.solve(thing)


# ============================================================== degenerate problems
@pytest.mark.parametrize("method", METHODS)
def test_no_users_no_links(method):
    sol = cellopt.solve(empty(0), method)
    assert (sol.status, sol.objective, sol.upper_bound, sol.gap) == ("optimal", 0.0, 0.0, 0.0)
    assert sol.user_rate_mbps.shape == (0,) and sol.x.shape == (0,)
    assert sol.cell_airtime.shape == (2, 1) and not sol.cell_airtime.any()
    assert "no links" in sol.message and sol.method == method


@pytest.mark.parametrize("case", ["alpha-1e-12", "caps-1e-9", "caps-1e-6"])
def test_near_degenerate_problems_take_few_steps_and_are_certified(case):
    p = near_linear_or_starved(case)
    sol = cellopt.solve(p, "dual")
    assert sol.status == "optimal" and sol.n_iter <= DEGENERATE_STEPS, (sol.n_iter, sol.message)
    ref = cellopt.solve(p, "ipm", tol=1e-9)
    assert ref.status == "optimal"
    assert true_gap(sol, p, ref.objective) <= sol.gap + 1e-9  # the certificate holds


def test_tiny_alpha_is_certified_at_its_own_alpha():
    """Below LINEAR_ALPHA the model is linear, but the bound is the problem's own."""
    from cellopt.solvers.certificate import dual_bound
    from cellopt.solvers.dual_model import LINEAR_ALPHA

    p = near_linear_or_starved("alpha-1e-12")
    assert p.alpha < LINEAR_ALPHA
    sol = cellopt.solve(p, "dual")
    assert sol.upper_bound == pytest.approx(dual_bound(p, sol.prices["airtime"],
                                                       sol.prices["backhaul"]), rel=1e-12)


@pytest.mark.parametrize("alpha", [0.0, 0.5])
@pytest.mark.parametrize("method", METHODS)
def test_users_but_no_links_below_alpha_one(method, alpha):
    # Everyone at rate 0: Σ w U(0) = −Σ w / (1 − α), and the bound says the same.
    sol = cellopt.solve(empty(4, alpha=alpha), method)
    want = -4.0 / (1.0 - alpha)
    assert (sol.status, sol.gap) == ("optimal", 0.0)
    assert sol.objective == pytest.approx(want) and sol.upper_bound == pytest.approx(want)
    assert (sol.serving_cell == -1).all() and not sol.user_rate_mbps.any()


def test_users_without_links_at_alpha_one_are_refused():
    with pytest.raises(ValidationError, match="no link with a positive rate"):
        empty(3, alpha=1.0)


def test_zero_rate_links_only_are_no_links():
    p = small(rate_mbps=np.zeros(4), alpha=0.0)
    assert p.n_links == 0
    sol = cellopt.solve(p, "alm")
    assert sol.status == "optimal" and sol.objective == -3.0


@pytest.mark.parametrize("method", METHODS)
def test_single_user_single_cell(method):
    # One user alone on one cell gets the whole band: rate 5, utility log 5.
    p = Problem.from_links([0], [0], [5.0], n_users=1, n_cells=1, rsrp_dbm=[-80.0],
                           sinr_db=[10.0], cell_tier=[0])
    sol = cellopt.solve(p, method)
    assert sol.status in ("optimal", "solved")
    assert sol.objective == pytest.approx(np.log(5.0), abs=1e-6)
    assert sol.user_rate_mbps == pytest.approx([5.0], rel=1e-6)
    assert sol.gap is not None and sol.gap <= 1e-4


@pytest.mark.parametrize("method", ["alm", "dual", "ipm", "reference", "load_aware"])
def test_max_iter_zero_returns_the_starting_point(method):
    sol = cellopt.solve(small(), method, max_iter=0)
    assert sol.n_iter == 0
    if np.isfinite(sol.objective):
        assert sol.status in ("max_iter", "solved", "optimal")
    else:  # a starting point with a user at rate 0 (α = 1) is no answer (ipm's x = 0)
        assert sol.status == "failed" and "rate 0" in sol.message, sol.message
    _, air, _ = loads(small(), sol.x)
    assert (air <= 1 + 1e-9).all() and (sol.x >= 0).all()


# ============================================================== extreme numbers
def _random(seed: int, alpha: float = 1.0) -> Problem:
    rng = np.random.default_rng(seed)
    n_users, n_cells = 30, 4
    user = np.repeat(np.arange(n_users), 2)
    cell = np.stack([rng.permutation(n_cells)[:2] for _ in range(n_users)]).ravel()
    rate = rng.uniform(0.5, 20.0, len(user))
    return Problem.from_links(user, cell, rate, n_users=n_users, n_cells=n_cells, alpha=alpha,
                              rsrp_dbm=-rate, sinr_db=rate, cell_tier=np.zeros(n_cells, int),
                              backhaul_mbps=np.r_[15.0, np.full(n_cells - 1, np.inf)],
                              price_per_mbps=np.r_[0.0, 0.01, 0.0, 0.0])


def _rescaled(p: Problem, weight: float, rate: float) -> Problem:
    """The same problem in other units: weights × `weight`, rates × `rate` (α = 1)."""
    return p.replace(weight=p.weight * weight, rate_mbps=p.rate_mbps * rate,
                     backhaul_mbps=p.backhaul_mbps * rate,
                     price_per_mbps=p.price_per_mbps * weight / rate)


@pytest.mark.parametrize(("weight", "rate"), [(1e300, 1.0), (1e-300, 1.0), (1.0, 1e300),
                                              (1.0, 1e-300), (1e150, 1e-150)],
                         ids=["w1e300", "w1e-300", "r1e300", "r1e-300", "both"])
@pytest.mark.parametrize("method", ["dual", "alm", "ipm", "max_rsrp", "load_aware"])
def test_units_do_not_matter(method, weight, rate):
    # Weights and rates in any units: the same shares, the same gap, finite numbers.
    p = _random(1)
    a = cellopt.solve(p, method)
    b = cellopt.solve(_rescaled(p, weight, rate), method)
    assert b.status == a.status
    assert np.isfinite([b.objective, b.upper_bound]).all()
    assert b.gap == pytest.approx(a.gap, rel=1e-6, abs=1e-12)
    np.testing.assert_allclose(b.x, a.x, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(b.user_rate_mbps, a.user_rate_mbps * rate, rtol=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_a_utility_that_overflows_is_refused(method):
    # A best rate of 2e-100 Mbit/s gives U = (1 − r^−4)/4 ≈ −1e399 at α = 5: not a float.
    p = small(rate_mbps=np.array([1e-100, 2e-100, 3.0, 4.0]), alpha=5.0)
    with pytest.raises(ValidationError, match=r"rows \[0\].*overflows at alpha=5"):
        cellopt.solve(p, method)


@pytest.mark.parametrize("method", METHODS)
def test_a_rate_beyond_float_range_of_the_others_is_refused(method):
    # 1e-310 next to 3 Mbit/s: 1/R overflows whatever the units.
    p = small(rate_mbps=np.array([1e-310, 1e-311, 3.0, 4.0]))
    with pytest.raises(ValidationError, match=r"rows \[0, 1\].*set these rates to 0"):
        cellopt.solve(p, method)


@pytest.mark.parametrize("method", ["dual", "reference", "max_rsrp"])
def test_a_tiny_rate_is_ordinary_at_alpha_one(method):
    # A user at 1e-200 of the others: log(1e-200) = −460.5 is an ordinary number.
    p = small(rate_mbps=np.array([1e-200, 2e-200, 3.0, 4.0]))
    sol = cellopt.solve(p, method)
    assert sol.status in ("optimal", "solved") and np.isfinite(sol.objective)
    assert sol.objective < -450 and sol.gap <= (1e-4 if method != "max_rsrp" else np.inf)


# ============================================================== solve_power
@pytest.fixture(scope="module")
def tiny_network():
    net = topology.hex_grid(1)
    return topology.drop_users(net, 40, rng=2)


BAD_POWER = [
    ("price-shape", dict(energy_price_per_w=np.ones(3)), "energy_price_per_w has shape (3,)"),
    ("price-text", dict(energy_price_per_w="cheap"), "energy_price_per_w"),
    ("price-negative", dict(energy_price_per_w=-1.0), "energy_price_per_w invalid"),
    ("price-nan", dict(energy_price_per_w=float("nan")), "energy_price_per_w invalid"),
    ("price-absurd", dict(energy_price_per_w=1e300), "rounding, not the users"),
    ("levels-positive", dict(levels_db=[3.0, None]), "levels are offsets ≤ 0 dB"),
    ("levels-empty", dict(levels_db=[]), "levels_db is empty"),
    ("levels-number", dict(levels_db=5), "levels_db=5"),
    ("levels-text", dict(levels_db=["loud"]), "levels_db=['loud']"),
    ("levels-unknown-tier", dict(levels_db={"macro": [0], "mega": [0]}), "unknown tiers"),
    ("levels-absent-tier", dict(levels_db={"macro": [0], "pico": [0]}),
     "tiers ['pico'], which the network lacks; fix"),
    ("method-baseline", dict(method="max_rsrp"), "cannot solve over power patterns"),
    ("tol-zero", dict(tol=0.0), "tol=0.0"),
    ("alpha-text", dict(alpha="1"), "alpha='1'"),
    ("retire-zero", dict(retire_after=0), "retire_after=0"),
    ("max-patterns-fraction", dict(max_patterns=2.5), "max_patterns=2.5"),
    ("stabilization-one", dict(stabilization=1.0), "stabilization=1.0"),
    ("pricing-unknown", dict(pricing="greedy"), "pricing='greedy'"),
    ("bound-unknown", dict(bound="tight"), "bound='tight'"),
    ("time-limit-negative", dict(time_limit_s=-1), "time_limit_s=-1"),
    ("time-limit-zero", dict(time_limit_s=0), "time_limit_s=0; fix: seconds > 0"),
    ("progress-text", dict(progress="no"), "progress='no'; fix: True"),
    ("callback-number", dict(callback=5), "callback=5; fix: a function"),
    ("levels-all-off", dict(levels_db=[None]), "levels_db=[None] has no level that is on"),
    ("levels-tier-all-off", dict(levels_db={"macro": [None, None]}),
     "levels_db['macro']=[None, None] has no level that is on"),
    ("levels-off-word", dict(levels_db=["off"]), "None means off"),
    ("clusters-zero", dict(cluster_cells=0), "cluster_cells=0"),
    ("gain-tol-negative", dict(gain_tol=-1.0), "gain_tol=-1.0"),
]


@pytest.mark.parametrize(("kwargs", "words"), [pytest.param(k, w, id=i) for i, k, w in BAD_POWER])
def test_bad_power_settings(tiny_network, kwargs, words):
    """Each setting is refused where it is given: the PowerProblem, the options record or
    solve_power itself."""
    problem_keys = {"energy_price_per_w", "levels_db", "alpha"}
    run_keys = {"method", "tol", "time_limit_s", "progress", "callback"}
    with pytest.raises(ValidationError) as err:
        if problem_keys & set(kwargs):
            PowerProblem.from_network(tiny_network, **kwargs)
        elif run_keys & set(kwargs):
            cellopt.solve_power(PowerProblem.from_network(tiny_network),
                                **{"progress": False, "time_limit_s": 5.0, **kwargs})
        else:
            ColumnGenerationOptions(**kwargs)
    assert words in str(err.value)


def test_every_bad_run_argument_is_listed_at_once(tiny_network):
    """solve_power checks its own arguments before any work: one error lists each bad one
    and its fix (a callback that is not callable used to fail deep inside the run)."""
    problem = PowerProblem.from_network(tiny_network)
    with pytest.raises(ValidationError) as err:
        cellopt.solve_power(problem, tol=0.0, time_limit_s=0, callback=5, progress="no")
    assert len(err.value.problems) == 4
    for words in ("tol=0.0; fix", "time_limit_s=0; fix", "callback=5; fix", "progress='no'; fix"):
        assert words in str(err.value)


def test_a_high_energy_price_is_an_answer(tiny_network):
    # 1e6 per W: cells are on as little as the users allow; the answer is finite.
    with pytest.warns(UserWarning, match="energy_price_per_w makes full power cost"):
        problem = PowerProblem.from_network(tiny_network, energy_price_per_w=1e6, rng=1)
    sol = cellopt.solve_power(problem, progress=False, time_limit_s=20)
    assert np.isfinite(sol.objective) and sol.status != "failed"
    assert sol.upper_bound >= sol.objective


# ============================================================== the certificate at every α
ALPHAS = [0.0, 0.5, 1 - 1e-9, 1.0, 1 + 1e-9, 2.0, 5.0, 20.0]


@pytest.fixture(scope="module")
def references():
    out = {}
    for alpha in ALPHAS:
        for seed in range(3):
            p = _random(seed, alpha)
            out[alpha, seed] = (p, cellopt.solve(p, "reference", tol=1e-9))
    return out


@pytest.mark.parametrize("method", ["dual", "alm", "ipm", "max_rsrp", "load_aware", "random"])
@pytest.mark.parametrize("alpha", ALPHAS, ids=[f"a{a:.10g}" for a in ALPHAS])
def test_reported_gap_is_never_below_the_true_gap(references, alpha, method):
    checked = 0
    for seed in range(3):
        p, ref = references[alpha, seed]
        if ref.status != "optimal":  # no trusted optimum for this instance
            continue
        sol = cellopt.solve(p, method, tol=1e-4)
        if sol.gap is None or not np.isfinite(sol.gap):
            continue
        checked += 1
        # The reference's own gap (≤ 1e-9) is the slack of the oracle.
        assert true_gap(sol, p, ref.objective) <= sol.gap + 1e-9, (seed, sol.status)
        if sol.status == "optimal":
            assert true_gap(sol, p, ref.objective) <= 1e-4 + 1e-9
    # The optimizers certify something on every α; a baseline's bound may be too loose for
    # any finite factor at large α (gap inf, which is true).
    assert checked >= 1 or method in BASELINES


@pytest.mark.parametrize("alpha", [1 - 1e-9, 1 + 1e-9])
def test_alpha_next_to_one_behaves_like_one(references, alpha):
    _, ref1 = references[1.0, 0]
    p, ref = references[alpha, 0]
    assert ref.objective == pytest.approx(ref1.objective, abs=1e-6)
    np.testing.assert_allclose(ref.user_rate_mbps, ref1.user_rate_mbps, rtol=1e-5)
    assert utility_sum(ref.user_rate_mbps, p.weight, alpha) == pytest.approx(ref.utility, abs=1e-9)


# ============================================================== properties
@st.composite
def problems(draw):
    n_users = draw(st.integers(0, 12))
    n_cells = draw(st.integers(1, 4))
    n_res = draw(st.integers(1, 2))
    alpha = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 5.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    pairs = [(u, c, k) for u in range(n_users) for c in range(n_cells) for k in range(n_res)]
    keep = rng.random(len(pairs)) < draw(st.floats(0.0, 1.0))
    links = np.array([pr for pr, k in zip(pairs, keep, strict=True) if k], np.int64).reshape(-1, 3)
    rate_scale = 10.0 ** draw(st.integers(-200, 200))
    rate = rng.uniform(0.0, 10.0, len(links)) * rate_scale
    rate[rng.random(len(links)) < 0.1] = 0.0
    weight = rng.uniform(0.5, 2.0, n_users) * 10.0 ** draw(st.integers(-200, 200))
    return dict(user=links[:, 0], cell=links[:, 1], resource=links[:, 2], rate_mbps=rate,
                n_users=n_users, n_cells=n_cells, n_resources=n_res, alpha=alpha, weight=weight,
                backhaul_mbps=np.where(rng.random(n_cells) < 0.3, 5.0 * rate_scale, np.inf),
                rsrp_dbm=rng.uniform(-120, -60, len(links)), sinr_db=rng.uniform(-5, 20, len(links)),
                cell_tier=np.zeros(n_cells, np.int64))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=problems(), method=st.sampled_from(["dual", "alm", "ipm", "max_rsrp", "load_aware"]))
def test_any_problem_gets_an_honest_answer_or_a_cellopt_error(spec, method):
    args = [spec.pop(k) for k in ("user", "cell", "rate_mbps")]
    try:
        p = Problem.from_links(*args, **spec)
        sol = cellopt.solve(p, method, time_limit_s=5.0)
    except CelloptError:
        return
    _, air, traffic = loads(p, sol.x)
    assert (sol.x >= 0).all() and (air <= 1 + 1e-9).all()
    assert (traffic <= p.backhaul_mbps * (1 + 1e-9)).all()
    if np.isfinite(sol.objective):
        assert sol.status != "failed" or sol.gap is None or sol.gap > 0
        if sol.upper_bound is not None:
            assert sol.upper_bound >= sol.objective - 1e-9 * max(1.0, abs(sol.objective))
        if sol.status == "optimal":
            assert sol.gap <= 1e-4
    else:
        assert sol.status == "failed"


@pytest.mark.parametrize("method", ["dual", "ipm", "alm"])
def test_users_behind_closed_backhaul_are_refused_alike_by_every_optimizer(method):
    """Users whose only links go to cells with backhaul_mbps = 0 get utility −inf at α ≥ 1:
    every optimizer refuses them with the same message, naming the users and cells."""
    p = Problem.from_links([0, 0, 1, 2], [1, 2, 0, 1], [5.0, 3.0, 4.0, 2.0], n_users=3, n_cells=3,
                           backhaul_mbps=[np.inf, 0.0, 0.0])
    with pytest.raises(ValidationError, match=r"users rows \[0, 2\] have links only to cells with "
                       r"backhaul_mbps = 0 \(cells rows \[1, 2\]\).*alpha=1; fix: give those cells"):
        cellopt.solve(p, method)
    # below α = 1 they keep a finite utility at rate 0: solved
    assert cellopt.solve(p.replace(alpha=0.5), method).status == "optimal"
