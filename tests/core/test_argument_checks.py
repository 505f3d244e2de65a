"""Every public argument is checked where it enters: type, finite range, meaning.

Each bad value is refused with a ValidationError whose message names the argument and
carries a fix; the good values (numpy scalars included) still pass. The automatic
interference radius never refuses itself on a wrapped layout, and does not under-count
interference against the full table.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers.problems import random_problem

import cellopt
from cellopt import Problem, ValidationError, radio, solve, topology
from cellopt.checks import check_array, check_bool, check_count, check_number, check_real, check_seeds
from cellopt.network import users_frame
from cellopt.power import PowerProblem
from cellopt.power.eicic import solve_abs
from cellopt.power.patterns import local_search, reduced_values, top_patterns_exhaustive
from cellopt.power.search import search_patterns
from cellopt.radio.model import RadioModel
from cellopt.solvers.ipm import solve_ipm
from cellopt.study.scenario import load_scenario
from cellopt.topology.hexgrid import SYNTHETIC_CRS
from cellopt.topology.square import square_grid

HUGE = 10**400  # a Python int beyond float64: float(HUGE) raises OverflowError
NOT_BOOLS = ["false", "no", "False", 1, 0, None, 2.0, np.float64(0.0)]

NET = topology.drop_users(topology.hex_grid(1, wraparound=False), 30, rng=0)
WRAPPED = topology.drop_users(topology.hex_grid(1), 30, rng=0)  # wraparound: the default


def refused(call, name: str) -> str:
    """Assert `call()` raises a ValidationError naming `name` with a fix; return the text."""
    with pytest.raises(ValidationError) as err:
        call()
    text = str(err.value)
    assert name in text, f"the message does not name {name!r}: {text}"
    assert "fix" in text, f"the message has no fix: {text}"
    return text


@pytest.fixture(scope="module")
def problem() -> Problem:
    return random_problem(0, "radio", n_users=20, n_cells=4, n_resources=2, n_cand=2)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    path = tmp_path_factory.mktemp("scenario") / "tiny.toml"
    path.write_text('name = "tiny"\n[network]\nbuilder = "hex_grid"\nn_rings = 1\n'
                    "[users]\nn = 20\n[seeds]\nbase = 3\n")
    return load_scenario(path)


# ------------------------------------------------------------------ the shared helpers
@pytest.mark.parametrize("value", NOT_BOOLS)
def test_check_bool_refuses_what_is_not_a_bool(value):
    text = refused(lambda: check_bool(value, "flag"), "flag=")
    if value in ("false", "no", "False"):
        assert "counts as true" in text and "flag=False" in text


@pytest.mark.parametrize("value", [True, False, np.True_, np.False_])
def test_check_bool_passes_bools(value):
    assert check_bool(value, "flag") is bool(value)


@pytest.mark.parametrize("value", ["1", True, math.nan, math.inf, -math.inf, HUGE, None, [1.0],
                                   -1.0])
def test_check_number_refuses(value):
    refused(lambda: check_number(value, "x", low=0.0, fix="give x ≥ 0"), "x=")


def test_check_number_passes_numbers_in_range():
    assert check_number(np.float32(2.5), "x", low=0.0, fix="") == 2.5
    assert check_number(3, "x", low=0.0, high=3.0, fix="") == 3.0
    assert check_number(math.inf, "x", allow_inf=True, fix="") == math.inf


@pytest.mark.parametrize("value", [True, 1.5, 3.0, "3", -1, math.nan, math.inf, HUGE, None])
def test_counts_are_integers(value):
    refused(lambda: check_count(value, "count", fix="give a whole number"), "count=")


def test_a_whole_float_count_is_refused_with_the_int_to_write():
    assert "(e.g. n=3)" in refused(lambda: check_count(3.0, "n", fix="give a whole number"), "n=")
    assert check_count(np.int64(3), "n", fix="") == 3 and check_count(np.uint8(3), "n", fix="") == 3


def test_check_real_refuses_integers_beyond_float():
    assert "beyond the floating-point range" in refused(lambda: check_real(HUGE, "isd_m"), "isd_m")


@pytest.mark.parametrize(("value", "words"), [
    (np.ones(3), "shape (3,)"), (np.array([1.0, np.nan]), "NaN"),
    (np.array([1.0, -1.0]), "below 0"), (np.array([True, False]), "bool"),
    (np.array(["1", "2"]), "cannot be read as numbers"), ("ab", "str"), (None, "NoneType"),
])
def test_check_array_refuses(value, words):
    text = refused(lambda: check_array(value, "arr", shape=(2,), low=0.0, fix="give two"),
                   "arr")
    assert words in text


@pytest.mark.parametrize("value", [[], [1.5], [-1], "ab", [True], 5, [2**64], None])
def test_check_seeds_refuses(value):
    refused(lambda: check_seeds(value), "seeds")


# ------------------------------------------------------------------ radio
@pytest.mark.parametrize(("name", "value"), [
    *(("far_field", v) for v in NOT_BOOLS),
    # progress=None is its default: shown at a terminal (cellopt.progress)
    *(("progress", v) for v in NOT_BOOLS if v is not None),
])
def test_link_table_flags_are_bools(name, value):
    refused(lambda: radio.link_table(NET, rng=0, interference_radius_m=800.0, **{name: value}),
            f"{name}=")


def test_far_field_false_as_text_is_no_longer_read_as_true():
    # "false" used to be truthy: the far field was added, lowering SINRs by up to 5 dB
    refused(lambda: radio.link_table(NET, rng=0, interference_radius_m=800.0,
                                     far_field="false"), "far_field=")
    net = topology.drop_users(topology.hex_grid(3, wraparound=False), 30, rng=0)  # 111 cells
    off = radio.link_table(net, rng=0, interference_radius_m=800.0, far_field=np.False_)
    on = radio.link_table(net, rng=0, interference_radius_m=800.0, far_field=np.True_)
    assert not off.far_field_db.any() and on.far_field_db.any()


@pytest.mark.parametrize("value", [HUGE, math.nan, math.inf, -1.0, 0.0, "800", True, "AUTO"])
def test_interference_radius_is_a_radius(value):
    refused(lambda: radio.link_table(NET, rng=0, interference_radius_m=value),
            "interference_radius_m")


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(window_db=HUGE), "window_db"), (dict(window_db="3"), "window_db"),
    (dict(n_candidates=8.0), "n_candidates"), (dict(n_candidates=True), "n_candidates"),
    (dict(workers=0), "workers"), (dict(workers=HUGE), "workers"), (dict(rng=-1), "rng"),
    (dict(rng=True), "rng"), (dict(model="tr36814"), "model"),
    (dict(power_dbm=np.zeros(3)), "power_dbm"),
])
def test_link_table_arguments(kwargs, name):
    refused(lambda: radio.link_table(NET, **kwargs), name)


def test_link_table_accepts_numpy_scalars():
    a = radio.link_table(NET, n_candidates=np.int64(4), window_db=np.float32(30.0), rng=0,
                         interference_radius_m=np.float64(800.0), workers=np.int32(1))
    b = radio.link_table(NET, n_candidates=4, window_db=30.0, rng=0, interference_radius_m=800.0,
                         workers=1)
    np.testing.assert_array_equal(a.rate_mbps, b.rate_mbps)


@pytest.mark.parametrize(("call", "name"), [
    (lambda: RadioModel(noise_figure_db=HUGE), "noise_figure_db"),
    (lambda: RadioModel(theta_3db_deg="70"), "theta_3db_deg"),
    (lambda: radio.thermal_noise_dbm("10"), "bandwidth_mhz"),
    (lambda: radio.thermal_noise_dbm(True), "bandwidth_mhz"),
    (lambda: radio.thermal_noise_dbm(HUGE), "bandwidth_mhz"),
    (lambda: radio.pathloss.SingleSlope(HUGE), "SingleSlope.exponent"),
    (lambda: radio.spectral.tr36942(np.ones(2), attenuation=HUGE), "attenuation"),
    (lambda: radio.spectral.get_efficiency("shanon"), "spectral_efficiency"),
    (lambda: radio.far_field.auto_radius_m(NET, far_share=1.0), "far_share"),
    (lambda: radio.far_field.auto_radius_m(NET, far_share=True), "far_share"),
])
def test_radio_model_arguments(call, name):
    refused(call, name)


# ------------------------------------------------------------------ the automatic radius
def _poisson_torus(side_m: float, users: int) -> cellopt.Network:
    tiers = {"macro": {"density_per_km2": 1.0, "sectors": 3}, "pico": {"density_per_km2": 4.0}}
    return topology.drop_users(topology.poisson_layout(tiers, side_m=side_m, rng=1), users,
                               rng=2)


def _joined(table: cellopt.LinkTable) -> pd.DataFrame:
    out = pd.DataFrame(dict(user=table.user, cell=table.cell, resource=table.resource,
                            sinr_db=table.sinr_db, rate_mbps=table.rate_mbps))
    if table.far_field_db is not None:
        out["far_field_db"] = table.far_field_db
    return out


@pytest.mark.parametrize("net", [topology.drop_users(topology.hex_grid(), 200, rng=2),
                                 _poisson_torus(4000.0, 200)], ids=["hex-wrapped", "poisson-torus"])
def test_auto_radius_on_a_small_wrapped_layout_counts_every_cell(net):
    # the auto radius of these layouts is not below half their wraparound period
    shifts = net.wrap_shifts_m[1:]
    half_period = 0.5 * float(np.min(np.hypot(shifts[:, 0], shifts[:, 1])))
    assert radio.far_field.auto_radius_m(net) >= half_period
    auto = radio.link_table(net, rng=3, interference_radius_m="auto")
    full = radio.link_table(net, rng=3)
    assert auto.radius_m is None and auto.far_field_db is None
    for column in ("user", "cell", "resource", "sinr_db", "rate_mbps"):
        np.testing.assert_array_equal(getattr(auto, column), getattr(full, column))
    # a radius given in metres is still refused there (it could see two images of a cell)
    assert "half the wraparound period" in refused(
        lambda: radio.link_table(net, rng=3, interference_radius_m=half_period), "fix")


@pytest.mark.parametrize("net", [topology.drop_users(topology.hex_grid(4), 300, rng=2),
                                 _poisson_torus(8000.0, 300)], ids=["hex-4-rings", "poisson-8km"])
def test_auto_radius_on_a_larger_torus_does_not_under_count_interference(net):
    shifts = net.wrap_shifts_m[1:]
    half_period = 0.5 * float(np.min(np.hypot(shifts[:, 0], shifts[:, 1])))
    auto = radio.link_table(net, rng=3, interference_radius_m="auto")
    assert auto.radius_m is not None and auto.radius_m < half_period
    both = _joined(auto).merge(_joined(radio.link_table(net, rng=3)),
                               on=["user", "cell", "resource"], suffixes=("", "_full"))
    assert len(both) >= 0.9 * len(auto.user)
    # the near-only SINR counts a subset of the interferers: an upper bound on every link
    assert (both["sinr_db"] + both["far_field_db"] >= both["sinr_db_full"] - 1e-9).all()
    # with the far field, interference is not under-counted on average beyond the
    # documented tolerance (mean SINR error 0.1 dB, docs/model.md)
    assert (both["sinr_db"] - both["sinr_db_full"]).mean() <= 0.1


# ------------------------------------------------------------------ topology and network
@pytest.mark.parametrize(("call", "name"), [
    (lambda: topology.hex_grid(wraparound="false"), "wraparound="),
    (lambda: topology.hex_grid(wraparound=1), "wraparound="),
    (lambda: square_grid(3, wraparound="no"), "wraparound="),
    (lambda: topology.poisson_layout({"macro": {"density_per_km2": 1.0}}, wraparound="no",
                                     rng=0), "wraparound="),
    (lambda: topology.hex_grid(2.0), "n_rings="),
    (lambda: topology.hex_grid(HUGE), "n_rings="),
    (lambda: topology.hex_grid(1, isd_m=HUGE), "isd_m="),
    (lambda: topology.hex_grid(1, sectors=3.0), "sectors="),
    (lambda: topology.hex_grid(1, resource_mhz=[True]), "resource_mhz="),
    (lambda: topology.drop_users(NET, 10.0, rng=0), "n="),
    (lambda: topology.drop_users(NET, 10, weight=HUGE, rng=0), "weight="),
    (lambda: topology.add_picos(NET, 1, max_rounds=HUGE, rng=0), "max_rounds="),
    (lambda: topology.add_femtocells(NET, density_per_km2=5.0, backhaul_mbps="10", rng=0),
     "backhaul_mbps"),
    (lambda: topology.add_femtocells(NET, density_per_km2=5.0, price_per_mbps=True, rng=0),
     "price_per_mbps"),
    (lambda: topology.sectorize(NET, 3, first_azimuth_deg=HUGE), "first_azimuth_deg="),
    (lambda: topology.poisson_layout({"macro": {"density_per_km2": HUGE}}, rng=0),
     "density_per_km2="),
    (lambda: topology.poisson_layout({"macro": {"density_per_km2": 1.0, "sectors": 3.0}},
                                     rng=0), "sectors="),
    (lambda: topology.poisson_layout({"macro": {"density_per_km2": 1.0}}, side_m=HUGE, rng=0),
     "side_m="),
    (lambda: topology.country_layout(side_m=20_000.0, n_cities=1, city_radius_m=("1500", 3000.0),
                                     rng=0), "city_radius_m[0]="),
    (lambda: users_frame([0.0], [0.0], crs=SYNTHETIC_CRS, indoor="false"), "indoor"),
    (lambda: users_frame([0.0], [0.0], crs=SYNTHETIC_CRS, indoor=1), "indoor"),
    (lambda: users_frame([0.0], [0.0], crs=SYNTHETIC_CRS, weight="1"), "weight"),
    (lambda: NET.replace(wrap_shifts_m=np.zeros((2, 3))), "wrap_shifts_m"),
    (lambda: NET.replace(bandwidth=5.0), "bandwidth"),
])
def test_topology_and_network_arguments(call, name):
    refused(call, name)


def test_network_tables_refuse_text_and_flags_that_are_not_bools():
    users = NET.users.copy()
    users["indoor"] = users["indoor"].astype(object)
    users.loc[0, "indoor"] = "false"
    users["weight"] = users["weight"].astype(object)
    users.loc[1, "weight"] = "2"
    text = refused(lambda: NET.replace(users=users).validate(), "indoor")
    assert "weight" in text


def test_topology_accepts_numpy_scalars():
    net = topology.hex_grid(np.int64(1), np.float64(500.0), sectors=np.int32(3),
                            wraparound=np.False_)
    assert net.n_cells == 21 and net.wrap_shifts_m is None
    assert topology.drop_users(net, np.int64(5), rng=np.int64(1)).n_users == 5


# ------------------------------------------------------------------ problems
@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(weight=True), "weight"), (dict(weight=np.array([True, True])), "weight"),
    (dict(demand_mbps="5"), "demand_mbps"), (dict(alpha=HUGE), "alpha"),
    (dict(n_users=2.0), "n_users"), (dict(n_cells=HUGE), "n_cells"),
    (dict(third_party=np.array([1])), "third_party"), (dict(cell_tier=[0.5]), "cell_tier"),
    (dict(rate_mbps=np.array([True, True])), "rate_mbps"), (dict(user="ab"), "user"),
])
def test_problem_from_links_arguments(kwargs, name):
    args = dict(user=np.array([0, 1]), cell=np.array([0, 0]), rate_mbps=np.array([1.0, 2.0]),
                n_users=2, n_cells=1)
    args.update(kwargs)
    user, cell, rate = args.pop("user"), args.pop("cell"), args.pop("rate_mbps")
    refused(lambda: Problem.from_links(user, cell, rate, **args), name)


def test_problem_replace_restrict_and_overrides(problem):
    assert "did you mean ['weight']" in refused(lambda: problem.replace(weigth=1.0), "weigth")
    refused(lambda: problem.replace(alpha="1"), "alpha")
    refused(lambda: problem.replace(weight=np.ones(problem.n_users + 1)), "weight")
    refused(lambda: problem.restrict(np.array([problem.n_links])), "keep")
    refused(lambda: problem.restrict(np.array([0.5])), "keep")
    links = radio.link_table(NET, rng=0)
    refused(lambda: Problem.from_network(NET, links, backhaul=5.0), "backhaul")
    refused(lambda: Problem.from_network(NET, "links"), "links")
    assert problem.replace(weight=np.full(problem.n_users, 2.0)).weight[0] == 2.0
    assert problem.restrict(np.array([0, 1])).n_links == 2


# ------------------------------------------------------------------ solvers: warm starts
def _bad_prices(p: Problem) -> list:
    mu, nu = np.ones((p.n_cells, p.n_resources)), np.zeros(p.n_cells)
    return [(np.ones(3), nu), (mu, np.zeros(2)), (np.full_like(mu, np.nan), nu), (-mu, nu),
            (np.full_like(mu, np.inf), nu), (mu,), (mu, nu, nu), "ab", np.ones(3),
            (mu.astype(bool), nu)]


@pytest.mark.parametrize("method", ["alm", "dual"])
@pytest.mark.parametrize("k", range(10))
def test_warm_start_prices_are_checked(problem, method, k):
    refused(lambda: solve(problem, method=method, prices0=_bad_prices(problem)[k], max_iter=2),
            "prices0")


@pytest.mark.parametrize("bad", ["long", "column", "nan", "negative", "text", "bool", "scalar"])
def test_warm_start_shares_are_checked(problem, bad):
    n = problem.n_links
    x0 = {"long": np.ones(n + 1), "column": np.ones((n, 1)), "nan": np.full(n, np.nan),
          "negative": -np.ones(n), "text": "x", "bool": np.ones(n, bool), "scalar": 5.0}[bad]
    refused(lambda: solve(problem, method="alm", x0=x0, max_iter=2), "x0")


def test_pattern_shares_only_for_pattern_problems(problem):
    refused(lambda: solve(problem, method="alm", theta0=np.ones(problem.n_resources),
                          max_iter=2), "theta0")


def test_a_warm_start_from_a_solution_still_works(problem):
    first = solve(problem, method="dual", tol=1e-6)
    warm = solve(problem, method="alm", tol=1e-6, x0=first.x,
                 prices0=(first.prices["airtime"], first.prices["backhaul"]))
    flat = solve(problem, method="dual", tol=1e-6,
                 prices0=(first.prices["airtime"].ravel(), first.prices["backhaul"]))
    assert warm.status == "optimal" and flat.status == "optimal"


@pytest.mark.parametrize(("method", "options", "name"), [
    ("alm", dict(sigma0=0.0), "sigma0"), ("alm", dict(sigma0=math.inf), "sigma0"),
    ("alm", dict(inner_steps=0), "inner_steps"), ("alm", dict(inner_tol=math.nan), "inner_tol"),
    ("alm", dict(sigma0=HUGE), "sigma0"), ("alm", dict(warm_start=True), "warm_start"),
    ("dual", dict(tau0=math.inf), "tau0"), ("dual", dict(tau_min=1.0), "tau_min"),
    ("dual", dict(stage_maxiter=0), "stage_maxiter"),
    ("dual", dict(stage_accuracy=-1.0), "stage_accuracy"),
    ("dual", dict(tol=HUGE), "tol"), ("dual", dict(max_iter=HUGE), "max_iter"),
    ("reference", dict(time_limit_s=HUGE), "time_limit_s"),
    ("load_aware", dict(max_rounds=-1), "max_rounds"),
    ("load_aware", dict(max_rounds=2.0), "max_rounds"),
    ("range_expansion", dict(bias_db=True), "bias_db"),
    ("range_expansion", dict(bias_db={"pico": "3"}), "bias_db"),
    ("max_rsrp", dict(inner_method="nope"), "inner_method"),
    ("max_rsrp", dict(inner_method="max_sinr"), "inner_method"),
    ("max_rsrp", dict(inner_options=5), "inner_options"),
    ("max_rsrp", dict(inner_options={"nope": 1}), "nope"),
    ("max_rsrp", dict(inner_options={"tol": 1e-3}), "tol"),
    ("reference", dict(verbose="no"), "verbose"), ("reference", dict(solver=3), "solver"),
])
def test_solver_options(problem, method, options, name):
    refused(lambda: solve(problem, method=method, max_iter=options.pop("max_iter", 5),
                          **options), name)


def test_baselines_check_their_inner_solver_even_when_they_do_not_call_it():
    one = random_problem(0, "radio", n_users=10, n_cells=3, n_resources=1, n_cand=2)
    refused(lambda: solve(one, method="max_rsrp", inner_method="nope"), "inner_method")
    assert solve(one, method="max_rsrp", inner_method="ipm").status == "solved"


def test_register_flags_are_bools():
    from cellopt.solvers.registry import METHODS, register

    before = dict(METHODS)
    refused(lambda: register("never", kind="optimizer", patterns="no"), "patterns")
    assert METHODS == before


def test_direct_calls_are_checked_too(problem):
    refused(lambda: solve_ipm(problem, tol="1e-4"), "tol")
    refused(lambda: solve_ipm("problem"), "Problem")


@pytest.mark.parametrize(("options", "words"), [
    ({"max_iterz": 5}, ["'max_iterz'", "did you mean", "'max_iter'"]),
    ({"max_iter": "x"}, ["solver_options['max_iter']", "an int"]),
    ({"max_iter": True}, ["solver_options['max_iter']"]),
    ({"equilibrate_enable": 1}, ["solver_options['equilibrate_enable']", "True or False"]),
    ({"tol_gap_abs": -1.0}, ["solver_options['tol_gap_abs']", "≥ 0"]),
    ({"tol_feas": math.nan}, ["solver_options['tol_feas']"]),
    ({"accept_unknown": "yes"}, ["solver_options['accept_unknown']"]),
    (5, ["solver_options=5"]), ({1: 2}, ["solver_options"]),
])
def test_clarabel_settings_are_checked_before_the_solve(problem, options, words):
    text = refused(lambda: solve(problem, method="reference", solver_options=options),
                   "solver_options")
    assert all(w in text for w in words), text


def test_valid_clarabel_settings_pass(problem):
    sol = solve(problem, method="reference", solver_options={"max_step_fraction": 0.95,
                                                             "time_limit": math.inf})
    assert sol.status == "optimal"


def test_settings_another_solver_refuses_are_a_validation_error(problem):
    text = refused(lambda: solve(problem, method="reference", solver="SCS",
                                 solver_options={"max_iterz": 5}), "solver_options")
    assert "'max_iterz'" in text


# ------------------------------------------------------------------ capacity
@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(drops=0), "drops"), (dict(drops=2.0), "drops"), (dict(drops=True), "drops"),
    (dict(seeds=[]), "seeds"), (dict(seeds=[1.5]), "seeds"), (dict(seeds=[-1]), "seeds"),
    (dict(seeds="12"), "seeds"),
    (dict(target_p5_mbps=0.0), "target_p5_mbps"), (dict(target_p5_mbps=math.inf), "target_p5_mbps"),
    (dict(target_served_share=1.5), "target_served_share"),
    (dict(rel_tol=0.0), "rel_tol"), (dict(rel_tol=1.0), "rel_tol"), (dict(rel_tol="0.1"), "rel_tol"),
    (dict(max_evals=0), "max_evals"), (dict(max_evals=3.0), "max_evals"),
    (dict(min_density_per_km2=math.nan), "min_density_per_km2"),
    (dict(max_density_per_km2=math.inf), "max_density_per_km2"),
    (dict(min_density_per_km2=100.0, max_density_per_km2=100.0), "min_density_per_km2"),
    (dict(first_guess_per_km2=1e7), "first_guess_per_km2"),
    (dict(method="nope"), "method"), (dict(method=1), "method"),
    (dict(nope=1), "nope"), (dict(tol="x"), "tol"), (dict(callback=3), "callback"),
    (dict(metric="p50"), "metric"),
])
def test_capacity_arguments(scenario, kwargs, name):
    refused(lambda: cellopt.capacity(scenario, **kwargs), name)


def test_capacity_examples_no_longer_fail_deep_inside(scenario):
    # both used to end in numpy's "need at least one array to concatenate"
    assert "drops=0 is below 1" in refused(lambda: cellopt.capacity(scenario, drops=0), "drops")
    assert "seeds is empty" in refused(lambda: cellopt.capacity(scenario, seeds=[]), "seeds")
    res = cellopt.capacity(scenario, seeds=[np.int64(5)], method="max_rsrp", max_evals=1,
                           first_guess_per_km2=np.float64(10.0))
    assert len(res.evaluations) == 1


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(resume="no"), "resume"), (dict(progress=0), "progress"), (dict(force="False"), "force"),
    (dict(methods="dual"), "methods"), (dict(methods=[]), "methods"),
    (dict(methods=["nope"]), "nope"), (dict(rel_tol=2.0), "rel_tol"),
    (dict(max_evals=0), "max_evals"), (dict(tau0="x"), "tau0"), (dict(seeds=[1]), "seeds"),
    (dict(replicates=0), "replicates"),
])
def test_capacity_sweep_arguments(scenario, tmp_path, kwargs, name):
    refused(lambda: cellopt.capacity_sweep(scenario, tmp_path / "out", **kwargs), name)
    assert not (tmp_path / "out").exists()  # refused before the folder is made


# ------------------------------------------------------------------ power
@pytest.fixture(scope="module")
def power_problem() -> PowerProblem:
    net = topology.drop_users(topology.add_picos(topology.hex_grid(1, wraparound=False), 1,
                                                 rng=0), 20, rng=0)
    return PowerProblem.from_network(net, rng=0)


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(n_candidates=True), "n_candidates"), (dict(n_candidates=math.nan), "n_candidates"),
    (dict(n_interferers=4), "n_interferers"), (dict(n_interferers=HUGE), "n_interferers"),
    (dict(alpha=HUGE), "alpha"), (dict(energy_price_per_w="1"), "energy_price_per_w"),
    (dict(energy_price_per_w=True), "energy_price_per_w"), (dict(levels_db=["0"]), "levels_db"),
    (dict(levels_db=[HUGE]), "levels_db"), (dict(levels_db=[True]), "levels_db"),
    (dict(model=1), "model"), (dict(gains=1), "gains"),
])
def test_power_problem_arguments(kwargs, name):
    refused(lambda: PowerProblem.from_network(NET, rng=0, **kwargs), name)


def test_pattern_search_arguments(power_problem):
    g, space = power_problem.gains, power_problem.space
    coef = np.ones((g.n_users, g.n_candidates))
    full = space.full_power()
    # max_patterns=nan used to pass the size check and enumerate ~1e20 patterns
    refused(lambda: top_patterns_exhaustive(g, space, coef, max_patterns=math.nan), "max_patterns")
    refused(lambda: top_patterns_exhaustive(g, space, coef, k=0), "k=")
    refused(lambda: reduced_values(g, space, np.ones(3), full), "coef")
    refused(lambda: reduced_values(g, space, np.full(coef.shape, np.nan), full), "coef")
    refused(lambda: reduced_values(g, space, coef, np.full(space.n_cells, space.n_levels)),
            "patterns")
    refused(lambda: local_search(g, space, coef, full[:3]), "start")
    refused(lambda: local_search(g, space, coef, full, max_rounds=1.5), "max_rounds")
    refused(lambda: search_patterns(g, space, coef, full[None], threshold="x"), "threshold")
    refused(lambda: search_patterns(g, space, coef, full[None], hood_cells=0), "hood_cells")
    refused(lambda: power_problem.master(full[None], links_per_pattern=0), "links_per_pattern")
    refused(lambda: power_problem.master(full[None].astype(float) + 0.5), "patterns")
    value = reduced_values(g, space, coef, full)
    assert np.isfinite(value).all() and search_patterns(g, space, coef, full[None]).ndim == 2


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(bias_db="6"), "bias_db"), (dict(bias_db=HUGE), "bias_db"),
    (dict(muted_share=1.0), "muted_share"), (dict(muted_share=None), "muted_share"),
    (dict(inner_method="max_rsrp"), "inner_method"), (dict(tol=0.0), "tol"),
])
def test_abs_arguments(power_problem, kwargs, name):
    net = topology.drop_users(topology.add_picos(topology.hex_grid(1, wraparound=False), 1,
                                                 rng=0), 20, rng=0)
    refused(lambda: solve_abs(net, gains=power_problem.gains, **kwargs), name)


def test_abs_gain_options_are_checked():
    refused(lambda: solve_abs(NET, rng=0, n_candidatez=4), "n_candidatez")
