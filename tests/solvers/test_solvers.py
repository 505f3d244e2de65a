"""Tests of the optimizing methods (``alm``, ``dual``) against the ``reference`` oracle,
of the certificate, of the front door :func:`cellopt.solve`, of single association and
of problem validation.

Everything is seeded (numpy generators, and hypothesis with ``derandomize=True``).
Feasibility, objectives and gaps are recomputed from ``x`` with plain numpy (here and in
``checks.py`` / ``gap_oracle.py``), not with the package's own helpers, so a solver
cannot pass by misreporting.

The ``dual`` method is written concurrently with these tests: every test parametrized
over it is skipped (with the reason) while ``"dual"`` is not in :data:`cellopt.METHODS`.
"""

from __future__ import annotations

import dataclasses
import functools
import re

import numpy as np
import pandas as pd
import pytest
from helpers.checks import assert_feasible
from helpers.gap_oracle import gap_of, true_gap, utility_sum
from helpers.problems import ALPHAS, one_cell, random_problem
from hypothesis import given, settings
from hypothesis import strategies as st

import cellopt
from cellopt import Problem, ValidationError, radio, topology
from cellopt.solution import STATUSES
from cellopt.solvers.certificate import dual_bound

OPTIMIZERS = ("alm", "dual", "ipm")
BASELINES = ("max_rsrp", "max_sinr", "range_expansion", "load_aware", "random")
TOL = 1e-5          # gap asked of the optimizers on the random instances


def require(method: str) -> None:
    """Skip the calling test while `method` is not registered (``dual`` is being written)."""
    if method not in cellopt.METHODS:
        pytest.skip(f"method {method!r} is not in cellopt.METHODS (cellopt/solvers/{method}.py "
                    "does not import or register yet)")


def rel(value: float) -> float:
    return max(1.0, abs(value))


# ====================================================================== independent checks
def check_solution(sol: cellopt.Solution, p: Problem, method: str, *, min_iter: int = 0,
                   bound_at_prices: bool = True) -> None:
    """Every field of the Solution set, with the right type and shape, and consistent.

    `min_iter`: least ``n_iter`` accepted (0 allows "done at the start", e.g. a
    ``load_aware`` start that is already an equilibrium). `bound_at_prices`: the
    optimizers' ``upper_bound`` must be g at the reported prices (not so for single
    association, whose bound is the fractional one).
    """
    checked = {
        "status", "message", "method", "utility", "cost", "objective", "upper_bound", "gap",
        "n_iter", "wall_s", "history", "x", "user_rate_mbps", "cell_airtime",
        "cell_traffic_mbps", "prices", "serving_cell", "exceeded_backhaul",
        "energy_cost", "pattern_share", "bound_kind", "cell_payment", "offload_share",
        "load_coupling", "power", "network_fingerprint",
    }
    assert {f.name for f in dataclasses.fields(cellopt.Solution)} == checked, \
        "Solution has fields this test does not check; extend check_solution"
    assert sol.status in STATUSES, sol.status
    assert isinstance(sol.message, str) and sol.message
    assert sol.method == method
    assert sol.power is None  # only power optimization fills it
    assert sol.network_fingerprint == p.network_fingerprint  # the problem's network (or None)
    for name in ("utility", "cost", "objective", "wall_s"):
        assert isinstance(getattr(sol, name), float), name
    assert np.isfinite(sol.objective) and np.isfinite(sol.cost)
    assert sol.objective == pytest.approx(sol.utility - sol.cost, rel=1e-12, abs=1e-12)
    assert sol.wall_s >= 0
    assert isinstance(sol.n_iter, int) and sol.n_iter >= min_iter
    if sol.upper_bound is None:
        assert sol.gap is None
    else:
        assert isinstance(sol.upper_bound, float) and np.isfinite(sol.upper_bound)
        assert isinstance(sol.gap, float)
        assert sol.gap == pytest.approx(gap_of(sol, p), rel=1e-6, abs=1e-12)
    if sol.status == "optimal":
        assert sol.gap is not None
    # Fixed resources, fixed powers: no pattern fields, the bound is the problem's own.
    assert sol.energy_cost == 0.0 and sol.pattern_share is None
    assert sol.bound_kind == (None if sol.upper_bound is None else "problem")
    assert sol.load_coupling is None  # load-coupled solves only
    assert isinstance(sol.history, pd.DataFrame) and len(sol.history) >= 1
    assert {"iteration", "objective"} <= set(sol.history.columns)

    rate, airtime, traffic = assert_feasible(p, sol.x)
    assert sol.x.dtype == float
    for name, want, shape in (("user_rate_mbps", rate, (p.n_users,)),
                              ("cell_airtime", airtime, (p.n_cells, p.n_resources)),
                              ("cell_traffic_mbps", traffic, (p.n_cells,))):
        got = getattr(sol, name)
        assert isinstance(got, np.ndarray) and got.shape == shape, name
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)
    util = utility_sum(rate, p.weight, p.alpha)
    cost = float(np.dot(p.price_per_mbps, traffic))
    assert sol.utility == pytest.approx(util, rel=1e-9, abs=1e-9)
    assert sol.cost == pytest.approx(cost, rel=1e-9, abs=1e-12)
    assert sol.cell_payment.shape == (p.n_cells,)
    np.testing.assert_allclose(sol.cell_payment, p.price_per_mbps * traffic, rtol=1e-9, atol=1e-12)
    if p.third_party is None:
        assert sol.offload_share is None
    else:
        total = traffic.sum()
        assert sol.offload_share == pytest.approx(
            traffic[p.third_party].sum() / total if total > 0 else 0.0, rel=1e-9, abs=1e-12)

    assert isinstance(sol.prices, dict) and {"airtime", "backhaul"} <= set(sol.prices)
    mu, nu = sol.prices["airtime"], sol.prices["backhaul"]
    assert isinstance(mu, np.ndarray) and mu.shape == (p.n_cells, p.n_resources)
    assert isinstance(nu, np.ndarray) and nu.shape == (p.n_cells,)
    assert (mu >= 0).all() and (nu >= 0).all()
    if sol.upper_bound is not None and method not in BASELINES and bound_at_prices:
        # the optimizers' bound is g at the reported prices
        assert sol.upper_bound == pytest.approx(dual_bound(p, mu, nu), rel=1e-9, abs=1e-9)

    serving = sol.serving_cell
    assert isinstance(serving, np.ndarray) and serving.shape == (p.n_users,)
    assert np.issubdtype(serving.dtype, np.integer)
    assert ((serving >= -1) & (serving < p.n_cells)).all()
    assert (serving[rate <= 0] == -1).all() and (serving[rate > 0] >= 0).all()
    assert isinstance(sol.exceeded_backhaul, np.ndarray) and sol.exceeded_backhaul.ndim == 1
    assert np.issubdtype(sol.exceeded_backhaul.dtype, np.integer)
    if method not in BASELINES:
        assert len(sol.exceeded_backhaul) == 0


# ====================================================================== random instances
# problems.random_problem(rng, "calibrated", ...): caps, prices and demands set against
# the uncapped reference optimum, so that they bind.
def instance_spec(seed: int) -> dict:
    """Size and features of instance `seed`: mostly small, every 10th (7, 17, …) large.

    Caps / prices / demands cycle through all 8 combinations, α through (0.5, 1, 2).
    """
    rng = np.random.default_rng(10_000 + seed)
    if seed % 10 == 7:
        n_users, n_cells = int(rng.integers(200, 501)), int(rng.integers(10, 31))
    else:
        n_users, n_cells = int(rng.integers(5, 61)), int(rng.integers(1, 13))
    return dict(n_users=n_users, n_cells=n_cells, n_resources=int(rng.integers(1, 5)),
                alpha=ALPHAS[seed % 3], caps=bool(seed & 1), prices=bool(seed & 2),
                demands=bool(seed & 4))


def spec_id(seed: int) -> str:
    s = instance_spec(seed)
    feats = "-".join(k for k in ("caps", "prices", "demands") if s[k]) or "plain"
    return f"s{seed:02d}-u{s['n_users']}-c{s['n_cells']}-k{s['n_resources']}-a{s['alpha']:g}-{feats}"


SEEDS = list(range(60))
# alm certifies these instances in ≤ 10 outer iterations when it works; the cap keeps a
# failure at seconds instead of the 200-iteration default (≈ 40 s on the large ones).
MAX_ITER = {"alm": 50}
SEED_PARAMS = [pytest.param(s, id=spec_id(s)) for s in SEEDS]


@functools.cache
def instance(seed: int) -> tuple[Problem, cellopt.Solution]:
    """Instance `seed` and its reference optimum (computed once per session)."""
    p = random_problem(np.random.default_rng(seed), "calibrated", **instance_spec(seed))
    return p, cellopt.solve(p, method="reference", tol=1e-8)


# ---------------------------------------------------------------------- 1. vs the oracle
@pytest.mark.parametrize("seed", SEED_PARAMS)
def test_reference_is_certified(seed):
    p, ref = instance(seed)
    assert ref.status == "optimal", ref.message
    assert ref.gap <= 1e-8
    check_solution(ref, p, "reference")


@pytest.mark.parametrize("method", OPTIMIZERS)
@pytest.mark.parametrize("seed", SEED_PARAMS)
def test_optimizer_matches_reference(seed, method):
    require(method)
    p, ref = instance(seed)
    sol = cellopt.solve(p, method=method, tol=TOL, max_iter=MAX_ITER.get(method))
    assert sol.status == "optimal", sol.message
    assert sol.gap <= TOL and sol.gap <= 1e-4
    # The true rate-equivalent gap to the cvxpy optimum: within tol, and never above the
    # reported one (the certificate is honest).
    assert true_gap(sol, p, ref.objective) <= min(TOL, sol.gap) + 1e-9
    assert sol.objective <= ref.objective + 1e-9 * rel(ref.objective)
    assert sol.upper_bound >= ref.objective - 1e-9 * rel(ref.objective)
    check_solution(sol, p, method)


@pytest.mark.parametrize("method", BASELINES)
@pytest.mark.parametrize("seed", SEED_PARAMS)
def test_baseline_bound_and_feasibility(seed, method):
    p, ref = instance(seed)
    sol = cellopt.solve(p, method=method, tol=TOL)
    check_solution(sol, p, method)
    assert sol.objective <= ref.objective + 1e-9 * rel(ref.objective)  # feasible ⇒ ≤ optimum
    if sol.upper_bound is not None:
        assert sol.upper_bound >= ref.objective - 1e-9 * rel(ref.objective)


def test_instances_cover_the_cases():
    """The generator makes caps, prices and demands matter (else test 1 proves little)."""
    binding_caps = priced = binding_demand = large = 0
    for seed in SEEDS:
        p, ref = instance(seed)
        capped = np.isfinite(p.backhaul_mbps)
        binding_caps += bool((ref.cell_traffic_mbps[capped]
                              >= p.backhaul_mbps[capped] * (1 - 1e-6)).any())
        priced += bool((p.price_per_mbps > 0).any())
        limited = np.isfinite(p.demand_mbps)
        binding_demand += bool((ref.user_rate_mbps[limited]
                                >= p.demand_mbps[limited] * (1 - 1e-6)).any())
        large += p.n_users >= 200
    assert binding_caps >= 25 and priced >= 25 and binding_demand >= 25 and large >= 5


# ---------------------------------------------------------------------- 2. dual function
# caps+prices (α 0.5), prices+demands (α 0.5), caps+demands (α 1), all three (α 2 and α 1)
DUAL_SEEDS = (3, 6, 13, 23, 31)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    which=st.sampled_from(DUAL_SEEDS),
    scale_mu=st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 20.0)),
    scale_nu=st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 20.0)),
    noise=st.floats(0.0, 3.0),
    zero_share=st.floats(0.0, 1.0),
    independent=st.booleans(),
    draw_seed=st.integers(0, 2**32 - 1),
)
def test_dual_bound_never_below_optimum(which, scale_mu, scale_nu, noise, zero_share,
                                        independent, draw_seed):
    p, ref = instance(which)
    rng = np.random.default_rng(draw_seed)
    mu0, nu0 = ref.prices["airtime"].ravel(), ref.prices["backhaul"]
    if independent:  # prices on the scale of the optimum's, drawn afresh
        mu = scale_mu * rng.exponential(max(mu0.mean(), 1e-3), mu0.shape)
        nu = scale_nu * rng.exponential(max(nu0.mean(), 1e-3), nu0.shape)
    else:            # the optimum's prices, scaled and perturbed
        mu = scale_mu * mu0 * rng.lognormal(0.0, noise, mu0.shape)
        nu = scale_nu * nu0 * rng.lognormal(0.0, noise, nu0.shape)
    mu[rng.random(mu.shape) < zero_share] = 0.0
    nu[rng.random(nu.shape) < zero_share] = 0.0
    g = dual_bound(p, mu.reshape(p.n_cells, p.n_resources), nu)
    assert g >= ref.objective - 1e-9 * rel(ref.objective), (g, ref.objective)


@pytest.mark.parametrize("seed", DUAL_SEEDS)
def test_dual_bound_at_reference_prices_is_tight(seed):
    p, ref = instance(seed)
    g = dual_bound(p, ref.prices["airtime"], ref.prices["backhaul"])
    assert ref.objective - 1e-9 * rel(ref.objective) <= g <= ref.objective + 1e-7 * rel(ref.objective)


# ====================================================================== HetNet instance
@pytest.fixture(scope="module")
def hetnet():
    net = topology.hex_grid(1)
    net = topology.add_picos(net, per_sector=1, rng=1)
    net = topology.drop_users(net, 120, clustered_fraction=2 / 3, rng=2)
    links = radio.link_table(net, rng=3)
    return net, Problem.from_network(net, links)


@pytest.fixture(scope="module")
def hetnet_reference(hetnet):
    return cellopt.solve(hetnet[1], method="reference", tol=1e-8)


# ---------------------------------------------------------------------- 3. every field
@pytest.mark.parametrize("method", sorted({*cellopt.METHODS, *OPTIMIZERS, "reference", *BASELINES}))
def test_every_method_fills_every_field(hetnet, hetnet_reference, method):
    require(method)
    _, p = hetnet
    sol = cellopt.solve(p, method=method)
    check_solution(sol, p, method, min_iter=1)
    if sol.upper_bound is not None:
        assert sol.upper_bound >= hetnet_reference.objective - 1e-9 * rel(hetnet_reference.objective)
    if method in OPTIMIZERS or method == "reference":
        assert sol.status == "optimal", sol.message


# ---------------------------------------------------------------------- 4. front door
def test_unknown_method_lists_valid_ones(hetnet):
    with pytest.raises(ValueError, match="unknown method") as err:
        cellopt.solve(hetnet[1], method="simplex")
    for name in cellopt.METHODS:
        assert name in str(err.value)


@pytest.mark.parametrize("tol", [0.0, -1e-4, float("nan")])
def test_bad_tol(hetnet, tol):
    with pytest.raises(ValueError, match="tol"):
        cellopt.solve(hetnet[1], method="alm", tol=tol)


@pytest.mark.parametrize("method", BASELINES)
def test_single_association_rejects_baselines(hetnet, method):
    with pytest.raises(ValueError, match="single_association"):
        cellopt.solve(hetnet[1], method=method, single_association=True)


@pytest.mark.parametrize("method", OPTIMIZERS)
def test_callback_stops(hetnet, method):
    require(method)
    p = hetnet[1]
    calls = []

    def stop(info):
        calls.append(info)
        return True

    sol = cellopt.solve(p, method=method, tol=1e-8, callback=stop)
    assert sol.status == "stopped", sol.message
    assert len(calls) == 1 and {"iteration", "objective"} <= set(calls[0])
    check_solution(sol, p, method)


@pytest.mark.parametrize("method", OPTIMIZERS)
def test_max_iter_one(hetnet, method):
    require(method)
    p = hetnet[1]
    assert cellopt.solve(p, method=method, tol=1e-6).n_iter > 1  # not certified at once
    sol = cellopt.solve(p, method=method, tol=1e-6, max_iter=1)
    assert sol.status == "max_iter", sol.message
    check_solution(sol, p, method)


@pytest.mark.parametrize("method", [*OPTIMIZERS, "reference"])
def test_time_limit_zero(hetnet, method):
    require(method)
    p = hetnet[1]
    sol = cellopt.solve(p, method=method, tol=1e-6, time_limit_s=0)
    if not np.isfinite(sol.objective):  # stopped where some user has rate 0 (α = 1)
        assert sol.status == "failed" and "rate 0" in sol.message, sol.message
        return
    assert sol.status in ("time_limit", "optimal"), sol.message
    check_solution(sol, p, method)


# ---------------------------------------------------------------------- 5. hand-solved
# KKT of the association problem (docs/model.md, "Optimality conditions"): with
# λ_i = w_i U'(r_i), a link carrying traffic has λ_i R_e = μ_jk + (c_j + ν_j) R_e, an
# unused one ≤; μ_jk > 0 only on a full resource, ν_j > 0 only on a saturated backhaul.
HAND_TOL = 1e-9
XTOL = 1e-4  # a gap ε pins x and the prices to about sqrt(ε)


@pytest.mark.parametrize("method", OPTIMIZERS)
@pytest.mark.parametrize("weights", [None, [1.0, 2.0, 3.0, 0.5, 1.5]], ids=["equal", "weighted"])
def test_one_cell_log(method, weights):
    # max Σ w_i log(R_i x_i) s.t. Σ x_i ≤ 1: w_i / x_i = μ, so x_i = w_i / Σw and μ = Σw.
    require(method)
    rates = np.array([1.0, 4.0, 10.0, 0.3, 7.0])
    n = len(rates)
    w = np.ones(n) if weights is None else np.asarray(weights)
    p = one_cell(rates, weight=w)
    sol = cellopt.solve(p, method=method, tol=HAND_TOL)
    assert sol.status == "optimal", sol.message
    check_solution(sol, p, method)
    np.testing.assert_allclose(sol.x, w / w.sum(), rtol=XTOL)
    np.testing.assert_allclose(sol.user_rate_mbps, rates * w / w.sum(), rtol=XTOL)
    assert sol.prices["airtime"][0, 0] == pytest.approx(w.sum(), rel=XTOL)
    opt = float(np.sum(w * np.log(rates * w / w.sum())))
    assert sol.objective == pytest.approx(opt, abs=2 * HAND_TOL * rel(opt))


@pytest.mark.parametrize("method", OPTIMIZERS)
def test_one_user_two_cells(method):
    # max log(R1 x1 + R2 x2), x_j ≤ 1: U' > 0 so x = (1, 1), r = R1 + R2, λ = 1/r and the
    # KKT multipliers are μ_j = λ R_j = R_j / (R1 + R2).
    # g keeps r ≤ r̄ = R1 + R2 as a box, and that box makes its minimizer non-unique here:
    # π* = min_j μ_j / R_j, and for μ = t R, 0 ≤ t ≤ 1/(R1+R2), the user takes r = r̄ and
    # g = Σμ + log r̄ − π* r̄ = t r̄ + log r̄ − t r̄ = log r̄ = the optimum. Any point of
    # that segment is a correct dual answer (μ_j / R_j equal, ≤ 1/(R1+R2)).
    require(method)
    R = np.array([3.0, 5.0])
    p = Problem.from_links(np.zeros(2, np.int64), np.arange(2), R, n_users=1, n_cells=2)
    opt = np.log(R.sum())
    assert dual_bound(p, (R / R.sum())[:, None]) == pytest.approx(opt, abs=1e-12)
    sol = cellopt.solve(p, method=method, tol=HAND_TOL)
    assert sol.status == "optimal", sol.message
    check_solution(sol, p, method)
    np.testing.assert_allclose(sol.x, [1.0, 1.0], rtol=XTOL)
    t = sol.prices["airtime"][:, 0] / R
    assert t.max() - t.min() <= XTOL / R.sum() and t.max() <= (1 + XTOL) / R.sum(), t
    if method == "alm":  # from a cold start, the ALM multipliers are the KKT ones
        cold = cellopt.solve(p, method=method, tol=HAND_TOL, warm_start=None)
        np.testing.assert_allclose(cold.prices["airtime"][:, 0], R / R.sum(), rtol=XTOL)
    assert sol.objective == pytest.approx(opt, abs=2 * HAND_TOL)


@pytest.mark.parametrize("method", OPTIMIZERS)
def test_backhaul_capped_femto(method):
    # Cells: macro 0, femto 1 (backhaul cap C). User A: macro rate Ra, femto rate Rf > C;
    # user B: macro rate Rb only. Log utility, weights 1.
    # Femto: A alone, so it takes femto traffic up to the cap: T_f = C (airtime C/Rf < 1,
    # μ_f = 0). Macro, share x to A: max log(C + Ra x) + log(Rb (1 − x)) gives
    # Ra / (C + Ra x) = 1 / (1 − x), x = (Ra − C) / (2 Ra) (needs C < Ra). Then
    # r_A = (Ra + C)/2, r_B = Rb (Ra + C) / (2 Ra), λ_A = 2/(Ra + C),
    # μ_m = λ_B Rb = λ_A Ra = 2 Ra / (Ra + C), and on A's femto link
    # λ_A Rf = μ_f + ν_f Rf gives ν_f = λ_A = 2 / (Ra + C) > 0.
    # Dual check: π_A = min(μ_m/Ra, ν_f) = λ_A, π_B = μ_m/Rb = λ_B, so
    # g = μ_m + ν_f C + Σ (log r_i − 1) = 2 + obj − 2 = obj.
    require(method)
    Ra, Rf, C, Rb = 10.0, 50.0, 4.0, 8.0
    p = Problem.from_links(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([Ra, Rf, Rb]),
                           n_users=2, n_cells=2, backhaul_mbps=np.array([np.inf, C]))
    sol = cellopt.solve(p, method=method, tol=HAND_TOL)
    assert sol.status == "optimal", sol.message
    check_solution(sol, p, method)
    x_a = (Ra - C) / (2 * Ra)
    np.testing.assert_allclose(sol.x, [x_a, C / Rf, 1 - x_a], rtol=XTOL)
    r_a, r_b = (Ra + C) / 2, Rb * (Ra + C) / (2 * Ra)
    np.testing.assert_allclose(sol.user_rate_mbps, [r_a, r_b], rtol=XTOL)
    assert sol.cell_traffic_mbps[1] == pytest.approx(C, rel=XTOL)
    assert sol.prices["airtime"][0, 0] == pytest.approx(2 * Ra / (Ra + C), rel=XTOL)
    assert sol.prices["airtime"][1, 0] == pytest.approx(0.0, abs=XTOL)
    assert sol.prices["backhaul"][1] > 0
    assert sol.prices["backhaul"][1] == pytest.approx(2 / (Ra + C), rel=XTOL)
    opt = np.log(r_a) + np.log(r_b)
    assert sol.objective == pytest.approx(opt, abs=2 * HAND_TOL * rel(opt))


# ---------------------------------------------------------------------- 6. single association
def check_single(sol: cellopt.Solution, p: Problem) -> None:
    flow = p.rate_mbps * sol.x
    pair = pd.DataFrame({"u": p.user, "c": p.cell, "f": flow})
    per_pair = pair.groupby(["u", "c"])["f"].sum()
    cells_used = (per_pair > 0).groupby(level="u").sum()
    assert cells_used.max() <= 1, cells_used[cells_used > 1].index.tolist()[:10]


@pytest.mark.parametrize("method", ["alm", "reference", "dual", "ipm"])
def test_single_association_hetnet(hetnet, hetnet_reference, method):
    require(method)
    _, p = hetnet
    frac = cellopt.solve(p, method=method)
    sol = cellopt.solve(p, method=method, single_association=True)
    check_solution(sol, p, method, bound_at_prices=False)
    check_single(sol, p)
    assert sol.upper_bound == frac.upper_bound
    assert sol.gap >= -1e-9
    ref = hetnet_reference.objective
    assert sol.objective <= ref + 1e-9 * rel(ref)
    assert sol.objective >= cellopt.solve(p, method="max_rsrp").objective


@pytest.mark.parametrize("method", ["alm", "reference", "dual", "ipm"])
@pytest.mark.parametrize("seed", [pytest.param(s, id=spec_id(s)) for s in (3, 5, 13, 22, 27)])
def test_single_association_random(seed, method):
    require(method)
    p, ref = instance(seed)
    frac = cellopt.solve(p, method=method, tol=TOL)
    sol = cellopt.solve(p, method=method, tol=TOL, single_association=True)
    check_solution(sol, p, method, bound_at_prices=False)
    check_single(sol, p)
    assert sol.upper_bound == frac.upper_bound
    assert sol.gap >= -1e-9
    assert sol.objective <= ref.objective + 1e-9 * rel(ref.objective)


# ---------------------------------------------------------------------- 6b. documented edge cases
# The model allows a backhaul capacity of 0 (C_j ≥ 0: a cell that can carry nothing) and
# α = 0 (sum rate); both are cheap to check against the oracle.
EDGE_SEEDS = (1, 4, 7, 22)


@functools.cache
def edge_instance(kind: str, seed: int) -> tuple[Problem, cellopt.Solution]:
    spec = dict(instance_spec(seed), n_users=min(instance_spec(seed)["n_users"], 80))
    rng = np.random.default_rng(seed + 777)
    if kind == "sum_rate":
        spec["alpha"] = 0.0
    p = random_problem(rng, "calibrated", **spec)
    if kind == "zero_cap":
        # close the busiest cell whose users all have another cell (α ≥ 1 needs a link)
        n_open = np.bincount(p.user, minlength=p.n_users)
        order = np.argsort(-np.bincount(p.cell, p.rate_mbps, minlength=p.n_cells), kind="stable")
        for j in order:
            own = np.bincount(p.user, p.cell == j, minlength=p.n_users)
            if (n_open - own > 0).all():
                break
        backhaul = p.backhaul_mbps.copy()
        backhaul[j] = 0.0
        p = p.replace(backhaul_mbps=backhaul)
    ref = cellopt.solve(p, method="reference", tol=1e-7)
    assert ref.status == "optimal", ref.message
    return p, ref


@pytest.mark.parametrize("method", OPTIMIZERS)
@pytest.mark.parametrize("seed", EDGE_SEEDS)
@pytest.mark.parametrize("kind", ["zero_cap", "sum_rate"])
def test_edge_cases_match_reference(kind, seed, method):
    require(method)
    p, ref = edge_instance(kind, seed)
    sol = cellopt.solve(p, method=method, tol=TOL, max_iter=MAX_ITER.get(method))
    check_solution(sol, p, method)
    assert sol.upper_bound >= ref.objective - 1e-9 * rel(ref.objective)
    assert sol.status == "optimal", sol.message
    assert true_gap(sol, p, ref.objective) <= min(TOL, sol.gap) + 1e-9
    if kind == "zero_cap":
        closed = p.backhaul_mbps == 0
        assert (sol.cell_traffic_mbps[closed] == 0).all()


# ---------------------------------------------------------------------- 7. validation
def links3(**overrides):
    """Three users, two cells; override any argument of Problem.from_links."""
    kwargs = dict(user=np.array([0, 0, 1, 2]), cell=np.array([0, 1, 1, 0]),
                  rate_mbps=np.array([1.0, 2.0, 3.0, 4.0]), n_users=3, n_cells=2)
    kwargs.update(overrides)
    args = [kwargs.pop(k) for k in ("user", "cell", "rate_mbps")]
    return Problem.from_links(*args, **kwargs)


@pytest.mark.parametrize(("overrides", "words"), [
    pytest.param(dict(rate_mbps=np.array([1.0, np.nan, 3.0, 4.0])), ["rows [1]", "rate_mbps"],
                 id="nan-rate"),
    pytest.param(dict(rate_mbps=np.array([1.0, 2.0, 3.0, -4.0])), ["rows [3]", "rate_mbps"],
                 id="negative-rate"),
    pytest.param(dict(user=np.array([0, 0, 5, 2])), ["rows [2]", "user index"],
                 id="user-out-of-range"),
    pytest.param(dict(user=np.array([0, 0, 1, 0])), ["rows [0, 3]", "repeat"],
                 id="duplicate-link"),
    pytest.param(dict(backhaul_mbps=np.array([10.0, -1.0])), ["cells rows [1]", "backhaul_mbps"],
                 id="negative-backhaul"),
    pytest.param(dict(weight=np.array([1.0, 1.0, 0.0])), ["users rows [2]", "weight"],
                 id="weight-zero"),
    pytest.param(dict(alpha=-1.0), ["alpha=-1"], id="alpha-negative"),
    pytest.param(dict(rate_mbps=np.array([1.0, 2.0, 3.0, 0.0])), ["users rows [2]", "positive rate"],
                 id="no-positive-link-alpha-1"),
    pytest.param(dict(user=np.array([0, 0, 1, 1]), cell=np.array([0, 1, 1, 0])),
                 ["users rows [2]", "positive rate"], id="no-link-at-all-alpha-1"),
])
def test_validation_names_entries(overrides, words):
    with pytest.raises(ValidationError) as err:
        links3(**overrides)
    for word in words:
        assert word in str(err.value), (word, str(err.value))


def test_no_positive_link_allowed_below_alpha_one():
    p = links3(rate_mbps=np.array([1.0, 2.0, 3.0, 0.0]), alpha=0.5)
    assert p.n_links == 3 and p.n_users == 3
    for method in ("reference", "alm", "dual", "ipm"):
        if method not in cellopt.METHODS:
            continue
        sol = cellopt.solve(p, method=method, tol=1e-6)
        assert sol.status == "optimal", (method, sol.message)
        assert sol.user_rate_mbps[2] == 0.0
        check_solution(sol, p, method)


def test_validation_collects_several_problems():
    with pytest.raises(ValidationError) as err:
        links3(rate_mbps=np.array([np.nan, 2.0, 3.0, 4.0]), weight=np.array([1.0, -1.0, 1.0]),
               alpha=-1.0)
    text = str(err.value)
    assert re.search(r"rows \[0\].*rate_mbps", text) and "weight" in text and "alpha" in text


def test_one_blas_thread_governs_every_blas_library():
    """numpy and scipy each bundle an OpenBLAS; a controller that missed scipy's (made before
    it was loaded) left the solvers' dense steps multithreaded, their last digits then
    depending on the order in which modules happened to be imported."""
    import scipy.sparse.linalg  # noqa: F401  (whatever a solver may load)
    from threadpoolctl import threadpool_info

    from cellopt.solvers.common import _BLAS

    ours = {i["filepath"] for i in threadpool_info() if i["user_api"] == "blas"
            and ("numpy" in i["filepath"] or "scipy" in i["filepath"])}  # not cvxpy's solvers'
    assert ours and ours <= {i["filepath"] for i in _BLAS.info() if i["user_api"] == "blas"}


@pytest.mark.parametrize("n_resources", [1, 3])
def test_serving_cell_is_the_cell_carrying_most_traffic(n_resources):
    """``serving_cell`` against a per-user dictionary sum: a user's links to one cell
    (one per resource) count together; no traffic gives −1."""
    from cellopt.solvers.result import serving_cells
    rng = np.random.default_rng(7)
    p = random_problem(rng, "grouped", n_users=40, n_cells=6, n_resources=n_resources,
                       per_user=min(4, 6 * n_resources - 1))
    flow = rng.exponential(size=p.n_links) * (rng.random(p.n_links) < 0.7)
    expected = np.full(p.n_users, -1)
    for i in range(p.n_users):
        per_cell: dict[int, float] = {}
        for e in np.flatnonzero(p.user == i):
            per_cell[int(p.cell[e])] = per_cell.get(int(p.cell[e]), 0.0) + flow[e]
        if per_cell and max(per_cell.values()) > 0:
            expected[i] = max(per_cell, key=per_cell.get)
    np.testing.assert_array_equal(serving_cells(p, flow), expected)
    np.testing.assert_array_equal(serving_cells(p, np.zeros(p.n_links)), -1)
