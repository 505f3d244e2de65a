"""Tests of the ``dual_dask`` method (cellopt/solvers/dask_dual.py) on a local Dask cluster.

One cluster of 2 worker processes serves the whole module. ``dual_dask`` is checked
against the single-process ``dual`` (same optimum to the tolerance, each bound above the
other's objective), for what crosses the network (per-iteration traffic set by the
cells, not the links), for its refusals, and :func:`partition_users` for balanced,
compact parts.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from helpers.checks import assert_feasible, raises
from helpers.problems import DEGENERATE_STEPS, near_linear_or_starved, random_problem

import cellopt
from cellopt import CelloptError, Problem, ValidationError
from cellopt.cluster import WORKER_MALLOC_ENV, local_client
from cellopt.solvers.certificate import dual_bound, utility_scale
from cellopt.solvers.dask_dual import partition_users

distributed = pytest.importorskip("dask.distributed")

TOL = 1e-5


@pytest.fixture(scope="module")
def client():
    # No warning filter: starting and closing this cluster emits no warning here (the
    # suite turns every warning into an error, so one would show). The scheduler's HTTP
    # server goes to a free port: on 8787 a second cluster (local_client below, another
    # test run) would warn that the port is in use.
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def links_bytes(p: Problem) -> int:
    return int(p.user.nbytes + p.cell.nbytes + p.resource.nbytes + p.rate_mbps.nbytes)


# ----------------------------------------------------------------------------- same answer
# "drawn" instances with caps, prices and demands, 2–3 resources and several cells.
SEEDS = [1, 4, 6, 7]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.slow
def test_same_optimum_as_dual(client, seed):
    p = random_problem(seed, "drawn")
    assert p.n_resources >= 2 and np.isfinite(p.backhaul_mbps).any() and p.price_per_mbps.any()
    ref = cellopt.solve(p, method="dual", tol=TOL)
    sol = cellopt.solve(p, method="dual_dask", tol=TOL, scheduler=client, n_parts=3)
    assert ref.status == sol.status == "optimal", sol.message
    assert sol.method == "dual_dask" and sol.gap <= TOL
    # The same optimum, to the tolerance in the rate-equivalent sense.
    scale = utility_scale(p, ref.utility)
    assert abs(sol.objective - ref.objective) <= TOL * scale
    # Each bound is above the other method's feasible objective.
    slack = 1e-9 * max(1.0, abs(ref.objective))
    assert sol.upper_bound >= ref.objective - slack
    assert ref.upper_bound >= sol.objective - slack
    assert_feasible(p, sol.x)
    # The certificate is the dual function at the returned prices (summed in another order).
    assert sol.upper_bound == pytest.approx(
        dual_bound(p, sol.prices["airtime"], sol.prices["backhaul"]), rel=1e-11, abs=1e-11)
    assert (sol.prices["backhaul"][~np.isfinite(p.backhaul_mbps)] == 0).all()


def test_parts_by_region_labels_not_consecutive_and_a_zero_capacity_cell(client):
    """Labels from partition_users, renumbered (0, 5, 9), more parts than workers; a cell
    with backhaul 0 (its ν is set so nobody buys there) and a scheduler address."""
    p = random_problem(2, "grouped", n_users=60, n_cells=6, n_resources=2)
    p = p.replace(backhaul_mbps=np.r_[0.0, p.backhaul_mbps[1:]])
    rng = np.random.default_rng(0)
    part = np.array([0, 5, 9])[partition_users(rng.random(p.n_users), rng.random(p.n_users), 3)]
    ref = cellopt.solve(p, method="dual", tol=TOL)
    sol = cellopt.solve(p, method="dual_dask", tol=TOL, scheduler=client.scheduler.address,
                        part=part)
    assert sol.status == "optimal", sol.message
    assert abs(sol.objective - ref.objective) <= TOL * utility_scale(p, ref.utility)
    assert "3 parts on 2 workers" in sol.message
    assert sol.x[p.cell == 0].max() == 0.0
    assert sol.upper_bound == pytest.approx(
        dual_bound(p, sol.prices["airtime"], sol.prices["backhaul"]), rel=1e-11, abs=1e-11)
    assert sol.prices["backhaul"][0] > 0
    assert client.status == "running"  # a Client passed in is left open


@pytest.mark.parametrize("case", ["alpha-1e-12", "caps-1e-9", "caps-1e-6"])
def test_near_degenerate_problems_take_few_rounds(client, case):
    """Every Newton step is a round trip to the cluster: an all-but-linear utility or caps
    near 0 must not take hundreds of them (they took 80 and 195 before)."""
    p = near_linear_or_starved(case)
    sol = cellopt.solve(p, method="dual_dask", scheduler=client, n_parts=2)
    assert sol.status == "optimal" and sol.n_iter <= DEGENERATE_STEPS, (sol.n_iter, sol.message)


def test_limits_are_statuses(client):
    p = random_problem(4, "drawn")
    sol = cellopt.solve(p, method="dual_dask", tol=1e-9, max_iter=2, scheduler=client)
    assert sol.status == "max_iter" and sol.n_iter == 2 and len(sol.history) == 3
    assert sol.objective <= sol.upper_bound
    assert_feasible(p, sol.x)
    rows = []
    sol = cellopt.solve(p, method="dual_dask", scheduler=client,
                        callback=lambda row: rows.append(row) or len(rows) >= 2)
    assert sol.status == "stopped" and len(rows) == 2
    assert {"bytes_sent", "bytes_received"} <= set(rows[0])


# ----------------------------------------------------------------------------- network traffic
@pytest.mark.slow
def test_bytes_per_iteration_follow_the_cells_not_the_links(client):
    """Same cells, twice the users: the links double, the bytes per iteration do not."""
    per_iteration = {}
    for n_users in (1000, 2000):
        p = random_problem(0, "grouped", n_users=n_users)
        sol = cellopt.solve(p, method="dual_dask", tol=1e-4, scheduler=client)
        assert sol.status == "optimal", sol.message
        h = sol.history
        assert (h["bytes_sent"] > 0).all() and (h["bytes_received"] > 0).all()
        per_iteration[n_users] = float((h["bytes_sent"] + h["bytes_received"])[1:].mean())
        assert per_iteration[n_users] < 0.1 * links_bytes(p)
        shipped = float(re.search(r"links shipped once ([\d.e+-]+) MB", sol.message).group(1))
        # The links went out once: a rate and three 32-bit indices each, at least; the
        # shares came back once, at the end.
        assert shipped * 1e6 >= 0.99 * 20 * p.n_links
        gathered = float(re.search(r"of which x ([\d.e+-]+) MB", sol.message).group(1))
        assert gathered * 1e6 == pytest.approx(8 * p.n_links, rel=1e-2)
    assert 0.67 < per_iteration[2000] / per_iteration[1000] < 1.5


@pytest.mark.slow
def test_local_client_starts_its_workers_with_the_allocator_settings():
    before = {k: os.environ.get(k) for k in WORKER_MALLOC_ENV}
    with local_client(n_workers=1) as own:
        seen = own.run(lambda: {k: os.environ.get(k) for k in WORKER_MALLOC_ENV})
        p = random_problem(3, "drawn")
        sol = cellopt.solve(p, method="dual_dask", tol=1e-4, scheduler=own)
        assert sol.status == "optimal" and "1 parts on 1 workers" in sol.message
    assert list(seen.values()) == [WORKER_MALLOC_ENV]
    assert {k: os.environ.get(k) for k in WORKER_MALLOC_ENV} == before  # put back


@pytest.mark.slow
def test_local_client_starts_while_port_8787_is_taken():
    """A Dask dashboard open elsewhere (port 8787 taken) made local clusters warn that the
    port is in use, an error in the tests: each cluster cellopt starts takes a free port."""
    import socket

    with socket.socket() as taken:
        try:
            taken.bind(("127.0.0.1", 8787))
            taken.listen()
        except OSError:  # taken already: the case under test
            pass
        with local_client(n_workers=1) as own:  # every warning is an error here
            assert own.run(lambda: 1) and own.dashboard_link is not None
            assert not own.dashboard_link.rstrip("/").rsplit(":", 1)[-1].startswith("8787")


# ----------------------------------------------------------------------------- refusals
@pytest.mark.parametrize(("options", "text"), [
    (dict(part=np.zeros(7, int)), "part has shape (7,); fix: one part label per user"),
    (dict(part=np.r_[-1, np.zeros(11, int), -3]), "users rows [0, 12]: part label negative"),
    (dict(part=np.zeros(13)), "part holds float64 values; fix: give integer labels"),
    (dict(part=np.zeros(13, int), n_parts=2), "both part and n_parts=2 given"),
    (dict(n_parts=0), "n_parts=0; fix: give a whole number ≥ 1"),
    (dict(scheduler=""), "scheduler=''; fix: give a dask.distributed.Client or the address"),
    (dict(scheduler=8786), "scheduler=8786; fix"),
    (dict(tau0=0.0), "tau0=0.0, tau_min=1e-09; fix: give temperatures > 0"),
    (dict(user_xy_m=np.zeros((12, 2))), "user_xy_m has shape (12, 2)"),
    (dict(user_xy_m=np.full((13, 2), np.nan)), "non-finite values"),
])
def test_bad_options_are_refused_before_any_work(options, text):
    p = random_problem(5, "drawn", n_users=13)
    with raises(ValidationError, text):
        cellopt.solve(p, method="dual_dask", **options)


def test_free_pattern_shares_point_to_dual():
    p = Problem.from_links([0, 0], [0, 0], [1.0, 2.0], resource=[0, 1], n_users=1, n_cells=1,
                           n_resources=2, pattern_cost=[0.0, 0.1])
    with pytest.raises(ValidationError, match="'dual'"):
        cellopt.solve(p, method="dual_dask")
    with raises(ValidationError, 'fix: use method="dual"'):
        cellopt.solvers.dask_dual.solve_dual_dask(p)


def test_an_unreachable_scheduler_is_a_cellopt_error(monkeypatch):
    monkeypatch.setattr(cellopt.solvers.dask_dual, "CONNECT_TIMEOUT_S", 0.5)
    with pytest.raises(CelloptError, match="cannot reach the Dask scheduler"):
        cellopt.solve(random_problem(5, "drawn"), method="dual_dask",
                      scheduler="tcp://127.0.0.1:1")


# ----------------------------------------------------------------------------- partition
@pytest.mark.parametrize("n_parts", [1, 2, 4, 7])
def test_partition_users_is_balanced_and_compact(n_parts):
    rng = np.random.default_rng(n_parts)
    n = 10_000
    x, y = rng.uniform(0, 4000, n), rng.uniform(0, 1000, n)   # a 4 km × 1 km strip
    part = partition_users(x, y, n_parts)
    assert part.shape == (n,) and part.dtype == np.int64
    count = np.bincount(part, minlength=n_parts)
    assert len(count) == n_parts
    assert count.max() - count.min() <= int(np.ceil(np.log2(n_parts)))
    # Axis-aligned boxes that overlap at most on their edges.
    boxes = np.array([[x[part == k].min(), x[part == k].max(), y[part == k].min(),
                       y[part == k].max()] for k in range(n_parts)])
    for i in range(n_parts):
        for j in range(i):
            overlap_x = min(boxes[i, 1], boxes[j, 1]) - max(boxes[i, 0], boxes[j, 0])
            overlap_y = min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 2], boxes[j, 2])
            assert overlap_x <= 0 or overlap_y <= 0
    # Compact: much closer to their part's centre than to a random part's.
    def spread(labels: np.ndarray) -> float:
        cx = np.bincount(labels, x) / np.bincount(labels)
        cy = np.bincount(labels, y) / np.bincount(labels)
        return float(np.mean(np.hypot(x - cx[labels], y - cy[labels])))

    if n_parts > 1:
        assert spread(part) < 0.6 * spread(rng.permutation(part))
    if n_parts == 2:  # the first cut is across the longer (x) extent, at the median
        assert x[part == 0].max() <= np.median(x) <= x[part == 1].min()


def test_partition_users_edges():
    assert partition_users([], [], 3).shape == (0,)
    few = partition_users([0.0, 1.0], [0.0, 0.0], 5)  # more parts than users
    assert few[0] != few[1] and few.max() < 5
    with raises(ValidationError, "users rows [1]: position NaN or infinite"):
        partition_users([0.0, np.nan], [0.0, 0.0], 2)
    with raises(ValidationError, "x_m has shape (2,) and y_m (3,)"):
        partition_users([0.0, 1.0], [0.0, 0.0, 0.0], 2)
    with raises(ValidationError, "n_parts=0; fix"):
        partition_users([0.0], [0.0], 0)


# ----------------------------------------------------------------------------- from a drop
@pytest.mark.slow
def test_a_scenario_drop_and_the_cli_split_users_by_region(client, tmp_path, monkeypatch, capsys):
    """Drop.solve hands dual_dask the users' positions (parts by region), and
    `cellopt run --method dual_dask --scheduler ADDRESS` reaches the cluster."""
    from cellopt.cli import main
    from cellopt.drop import Drop
    from cellopt.study import load_scenario

    drop: Drop = load_scenario("macro_3gpp").build()
    sol = drop.solve("dual_dask", tol=1e-4, scheduler=client)
    ref = drop.solve("dual", tol=1e-4)
    assert sol.status == "optimal"
    assert abs(sol.objective - ref.objective) <= 1e-4 * utility_scale(drop.problem, ref.utility)
    users = drop.network.users[drop.solvable]
    by_region = partition_users(users.geometry.x, users.geometry.y, 2)
    same = drop.solve("dual_dask", tol=1e-4, scheduler=client, part=by_region)
    assert same.objective == sol.objective and same.n_iter == sol.n_iter
    monkeypatch.chdir(tmp_path)
    address = client.scheduler.address
    assert main(["run", "macro_3gpp", "--method", "dual_dask", "--scheduler", address,
                 "--no-report", "--out", "out"]) == 0
    assert "dual_dask" in (tmp_path / "out" / "method_summary.csv").read_text()
    assert main(["run", "macro_3gpp", "--method", "dual", "--scheduler", address, "--out", "out"]) == 2
    assert "none of the methods ['dual'] runs on a Dask cluster" in capsys.readouterr().err
