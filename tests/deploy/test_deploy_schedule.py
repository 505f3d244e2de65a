"""A power mixture as a periodic subframe schedule (cellopt.deploy.schedule)."""

import dataclasses
import itertools

import numpy as np
import pytest
from helpers.checks import raises

import cellopt
from cellopt import Problem, ValidationError
from cellopt.deploy.schedule import (
    DEFAULT_SUBFRAMES,
    MIN_SHARE,
    Schedule,
    _cycle_cost,
    _hamming,
    _largest_remainder,
    _order_blocks,
    evaluate_schedule,
    sleep_candidates,
    subframe_schedule,
)
from cellopt.power import ColumnGenerationOptions, PowerProblem
from cellopt.solvers.certificate import certified_gap
from cellopt.topology import add_picos, drop_users, hex_grid

LEVELS = {"macro": [0, -6, None], "pico": [0, None]}


@pytest.fixture(scope="module")
def drop():
    """7 sites × 3 sectors and one pico per sector (42 cells), 60 users of 1 Mbit/s."""
    net = add_picos(hex_grid(n_rings=1), per_sector=1, rng=1)
    net = drop_users(net, 60, demand_mbps=1.0, rng=2)
    links = cellopt.radio.link_table(net, n_candidates=4, rng=3)
    return cellopt.Drop.from_network(net, links)


@pytest.fixture(scope="module")
def problem(drop):
    return PowerProblem.from_drop(drop, levels_db=LEVELS, energy_price_per_w=0.02)


@pytest.fixture(scope="module")
def mixture(problem):
    """The power solution; its masters keep every candidate link, as evaluate_schedule's
    master does, so that the mixture is optimal over the same links."""
    return cellopt.solve_power(problem, progress=False, max_iter=5,
                               options=ColumnGenerationOptions(links_per_pattern=None))


@pytest.fixture(scope="module")
def schedule(problem, mixture, drop):
    return subframe_schedule(problem, mixture, cell_id=drop.network.cells["cell_id"].to_numpy())


def hand_mixture(problem, mixture, levels, share):
    """The power solution with its patterns and shares replaced (level indices → dBm)."""
    power = dataclasses.replace(mixture.power, patterns=problem.space.power_dbm(np.asarray(levels)),
                                pattern_share=np.asarray(share, float))
    return dataclasses.replace(mixture, power=power)


def three_patterns(problem):
    """Full power, macros at -6 dB, macros off (picos at full power)."""
    macro = problem.tier_names == "macro"
    full = problem.space.full_power()
    return np.stack([full, np.where(macro, 1, full), np.where(macro, 2, full)])


# ---------------------------------------------------------------------- rounding
def test_largest_remainder_known_answers():
    assert _largest_remainder(np.array([0.5, 0.3, 0.2]), 40).tolist() == [20, 12, 8]
    assert _largest_remainder(np.array([0.33, 0.33, 0.34]), 10).tolist() == [3, 3, 4]
    # equal remainders and shares: the lower index first
    assert _largest_remainder(np.full(4, 0.25), 10).tolist() == [3, 3, 2, 2]
    # equal remainders (0.5, 0.5): the larger share first
    assert _largest_remainder(np.array([0.1, 0.3, 0.6]), 5).tolist() == [0, 2, 3]
    # shares are renormalized
    assert _largest_remainder(np.array([1.0, 3.0]), 8).tolist() == [2, 6]


def test_largest_remainder_sums_and_rounds():
    for seed in range(200):
        rng = np.random.default_rng(seed)
        share = rng.dirichlet(np.full(rng.integers(1, 12), 0.7))
        n = int(rng.integers(1, 80))
        counts = _largest_remainder(share, n)
        quota = share / share.sum() * n
        assert counts.sum() == n
        assert (counts >= np.floor(quota - 1e-9)).all() and (counts <= np.ceil(quota + 1e-9)).all()
        np.testing.assert_array_equal(counts, _largest_remainder(share, n))  # deterministic


@pytest.mark.slow
def test_a_hand_made_mixture_gets_its_subframes(problem, mixture):
    levels = three_patterns(problem)
    sch = subframe_schedule(problem, hand_mixture(problem, mixture, levels, [0.5, 0.3, 0.2]))
    assert sch.n_subframes == DEFAULT_SUBFRAMES == 40
    by_share = np.argsort(-sch.mixture_share)
    assert sch.subframes[by_share].tolist() == [20, 12, 8]
    np.testing.assert_array_equal(sch.patterns[by_share], levels)
    assert sch.dropped_share == 0.0
    assert sch.share.sum() == pytest.approx(1.0)
    # a pattern below MIN_SHARE is not in use: dropped, its share reported
    small = MIN_SHARE / 2
    sch = subframe_schedule(problem, hand_mixture(problem, mixture, levels,
                                                  [0.5, 0.5 - small, small]), subframes=10)
    assert sch.subframes.sum() == 10 and len(sch.subframes) == 2
    assert sch.dropped_share == pytest.approx(small)
    # a pattern in use whose rounding gives it no subframe is dropped too
    sch = subframe_schedule(problem, hand_mixture(problem, mixture, levels, [0.62, 0.34, 0.04]),
                            subframes=3)
    assert sorted(sch.subframes.tolist()) == [1, 2] and sch.dropped_share == pytest.approx(0.04)


def test_the_schedule_of_a_power_solution(problem, mixture, schedule, drop):
    theta = mixture.pattern_share
    in_use = theta >= MIN_SHARE
    assert schedule.n_subframes == 40 and (schedule.subframes >= 1).all()
    assert len(schedule.subframes) <= in_use.sum()
    quota = schedule.mixture_share / theta[in_use].sum() * 40
    assert (np.abs(schedule.subframes - quota) < 1).all()
    assert schedule.dropped_share == pytest.approx(1.0 - schedule.mixture_share.sum())
    np.testing.assert_array_equal(schedule.cell_id, drop.network.cells["cell_id"].to_numpy())
    np.testing.assert_array_equal(schedule.level_dbm, problem.space.level_dbm)
    # each scheduled pattern is one of the mixture's, with its own share
    power = problem.space.power_dbm(schedule.patterns)
    for row, share in zip(power, schedule.mixture_share, strict=True):
        same = (mixture.power.patterns == row).all(axis=1)
        assert same.any() and share in theta[same]
    # the blocks: one per pattern, in order
    assert schedule.subframe_pattern.tolist() == list(itertools.chain.from_iterable(
        [k] * n for k, n in enumerate(schedule.subframes.tolist())))
    assert schedule.levels.shape == schedule.power_dbm.shape == (problem.n_cells, 40)
    np.testing.assert_array_equal(schedule.power_dbm,
                                  problem.space.power_dbm(schedule.levels.T).T)
    np.testing.assert_allclose(schedule.share_off, np.isneginf(schedule.power_dbm).mean(axis=1))
    np.testing.assert_allclose(schedule.mean_power_w,
                               (10.0 ** (schedule.power_dbm / 10.0) * 1e-3).mean(axis=1))
    with pytest.raises(ValueError):
        schedule.subframes[0] = 3  # the record is frozen, its arrays read-only


# ---------------------------------------------------------------------- refusals
def test_too_few_subframes_names_the_key_and_max_patterns(problem, mixture):
    n_in_use = int((mixture.pattern_share >= MIN_SHARE).sum())
    assert n_in_use >= 2
    with pytest.raises(ValidationError) as err:
        subframe_schedule(problem, mixture, subframes=n_in_use - 1)
    text = str(err.value)
    for part in ("subframes", f"subframes ≥ {n_in_use}",
                 f"ColumnGenerationOptions(max_patterns={n_in_use - 1})", "; fix: "):
        assert part in text, text
    assert len(subframe_schedule(problem, mixture, subframes=n_in_use).subframes) >= 1


@pytest.mark.parametrize("bad", [0, -4, 2.5, 40.0, True, "40", None])
def test_bad_subframes_are_refused(problem, mixture, bad):
    with raises(ValidationError, "subframes="):
        subframe_schedule(problem, mixture, subframes=bad)


def test_a_solution_without_power_is_refused(problem, mixture, drop):
    plain = cellopt.solve(drop.problem, "dual")
    with raises(ValidationError, "fix: give the power solution of this problem"):
        subframe_schedule(problem, plain)
    with raises(ValidationError, "solution is a str"):
        subframe_schedule(problem, "mixture")
    with raises(ValidationError, "problem is a Problem"):
        subframe_schedule(drop.problem, mixture)
    # a power that is not one of the cell's levels
    power = mixture.power.patterns.copy()
    power[0, 0] = 45.0
    off_level = dataclasses.replace(mixture, power=dataclasses.replace(mixture.power, patterns=power))
    with raises(ValidationError, "gives cell 0 45.0 dBm, not one of its levels"):
        subframe_schedule(problem, off_level)
    with raises(ValidationError, "cell_id has shape (3,)"):
        subframe_schedule(problem, mixture, cell_id=[1, 2, 3])


def test_a_schedule_refuses_a_problem_of_other_levels(drop, problem, mixture, schedule):
    other = PowerProblem.from_drop(drop, levels_db={"macro": [0, -3, None], "pico": [0, None]},
                                   energy_price_per_w=0.02)
    text = "the schedule was made for another network or other levels; fix: "
    with raises(ValidationError, text):
        evaluate_schedule(other, schedule)
    with raises(ValidationError, text):
        sleep_candidates(other, schedule, share_off=0.5)
    with raises(ValidationError, "not one of its levels"):  # -6 dB is not a level of `other`
        subframe_schedule(other, mixture)


def test_a_schedule_refuses_a_problem_of_other_cells(drop, schedule):
    """A schedule holds for any users of its cells: a problem of other cells with the same
    count, tiers and levels (all that was compared before) is refused, naming both."""
    net = add_picos(hex_grid(n_rings=1, isd_m=400), per_sector=1, rng=1)
    net = drop_users(net, 60, demand_mbps=1.0, rng=2)
    other_drop = cellopt.Drop.from_network(net, cellopt.radio.link_table(net, n_candidates=4, rng=3))
    other = PowerProblem.from_drop(other_drop, levels_db=LEVELS, energy_price_per_w=0.02)
    assert np.array_equal(other.space.level_dbm, schedule.level_dbm)
    text = ("the schedule and the problem describe different networks: their cells (ids and "
            "positions) differ")
    with raises(ValidationError, text):
        evaluate_schedule(other, schedule)
    with raises(ValidationError, text):
        sleep_candidates(other, schedule, share_off=0.5)
    # New users of the same cells: the schedule applies.
    net = drop_users(drop.network.replace(users=None), 60, demand_mbps=1.0, rng=7)
    new_users = cellopt.Drop.from_network(net, cellopt.radio.link_table(net, n_candidates=4, rng=8))
    fresh = PowerProblem.from_drop(new_users, levels_db=LEVELS, energy_price_per_w=0.02)
    assert evaluate_schedule(fresh, schedule).status == "solved"


def test_a_power_solution_of_another_network_is_refused(drop, mixture):
    """A power solution of other users with the same counts (all that was compared before)
    is refused where a schedule is made from it, naming both."""
    net = drop_users(drop.network.replace(users=None), drop.network.n_users, demand_mbps=1.0,
                     rng=7)
    other_drop = cellopt.Drop.from_network(net, cellopt.radio.link_table(net, n_candidates=4,
                                                                         rng=8))
    other = PowerProblem.from_drop(other_drop, levels_db=LEVELS, energy_price_per_w=0.02)
    assert other.n_users == len(mixture.user_rate_mbps)  # the counts agree: only the users differ
    with raises(ValidationError, "the power solution and the problem describe different "
                                 "networks: their users (ids and positions) differ"):
        subframe_schedule(other, mixture)


def test_a_hand_made_schedule_is_checked():
    level = np.array([[46.0, -np.inf], [30.0, -np.inf]])
    good = dict(cell_id=np.arange(2), level_dbm=level, patterns=[[0, 1], [1, 0]],
                subframes=[3, 1], mixture_share=[0.7, 0.3], dropped_share=0.0)
    assert Schedule(**good).n_subframes == 4
    for change, text in ((dict(subframes=[3, 0]), "subframes"),
                         (dict(subframes=[3.5, 1]), "subframes"),
                         (dict(patterns=[[0, 2], [1, 0]]), "patterns"),
                         (dict(patterns=[[0, 1]]), "patterns"),
                         (dict(mixture_share=[0.7, 1.3]), "mixture_share"),
                         (dict(dropped_share=-0.1), "dropped_share"),
                         (dict(cell_id=np.arange(3)), "cell_id")):
        with raises(ValidationError, text):
            Schedule(**{**good, **change})


# ---------------------------------------------------------------------- ordering
def brute_force_cost(dist):
    m = len(dist)
    return min(_cycle_cost(dist, np.array((0, *p))) for p in itertools.permutations(range(1, m)))


def test_hamming_distances():
    masks = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], bool)
    np.testing.assert_array_equal(_hamming(masks), [[0, 1, 3], [1, 0, 2], [3, 2, 0]])


def test_the_order_is_optimal_for_few_patterns():
    for seed in range(40):
        rng = np.random.default_rng(seed)
        m = int(rng.integers(3, 7))
        masks = rng.random((m, int(rng.integers(2, 12)))) < rng.uniform(0.2, 0.8)
        dist = _hamming(masks)
        first = int(rng.integers(m))
        order = _order_blocks(masks, first)
        assert sorted(order.tolist()) == list(range(m)) and order[0] == first
        assert _cycle_cost(dist, order) <= _cycle_cost(dist, np.arange(m))
        assert _cycle_cost(dist, order) == brute_force_cost(dist)


def test_the_heuristic_order_is_a_2opt_optimum():
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        m = int(rng.integers(8, 30))
        masks = rng.random((m, 40)) < 0.4
        dist = _hamming(masks)
        order = _order_blocks(masks, 0)  # more than 7 patterns: nearest neighbour + 2-opt
        assert sorted(order.tolist()) == list(range(m)) and order[0] == 0
        cost = _cycle_cost(dist, order)
        assert cost <= _cycle_cost(dist, np.arange(m))
        for i, j in itertools.combinations(range(m), 2):  # no segment reversal improves
            moved = np.r_[order[:i + 1], order[i + 1:j + 1][::-1], order[j + 1:]]
            assert _cycle_cost(dist, moved) >= cost
        np.testing.assert_array_equal(order, _order_blocks(masks, 0))  # deterministic
    # forced onto the heuristic, few patterns: never worse than the given order
    masks = np.array([[1, 0, 1, 0], [0, 0, 0, 0], [1, 0, 1, 1], [0, 1, 0, 0], [1, 1, 1, 0]], bool)
    order = _order_blocks(masks, 0, exact_max=0)
    dist = _hamming(masks)
    assert _cycle_cost(dist, order) <= _cycle_cost(dist, np.arange(5))
    assert _cycle_cost(dist, _order_blocks(masks, 0)) == brute_force_cost(dist)


def test_a_schedule_orders_its_blocks(problem, mixture, schedule):
    off = np.isneginf(problem.space.power_dbm(schedule.patterns))
    dist = _hamming(off)
    cost = _cycle_cost(dist, np.arange(len(off)))
    # the mixture's own order of the same patterns is no better
    power = problem.space.power_dbm(schedule.patterns)
    mixture_row = [int(np.flatnonzero((mixture.power.patterns == p).all(axis=1))[0]) for p in power]
    assert cost <= _cycle_cost(dist, np.argsort(mixture_row))
    if len(off) <= 6:
        assert cost == brute_force_cost(dist)
    # the first block is the largest
    assert schedule.subframes[0] == schedule.subframes.max()
    # every cell's off runs: at most the changes of its off-state around the cycle
    changes = (off != np.roll(off, -1, axis=0)).sum(axis=0)
    assert (schedule.off_runs() <= np.maximum(changes // 2, 1)).all()


# ---------------------------------------------------------------------- as text
def test_strings_and_off_runs_by_hand():
    level = np.array([[46.0, -np.inf]] * 3 + [[30.0, 24.0]])
    sch = Schedule(cell_id=np.array([10, 11, 12, 13]), level_dbm=level,
                   patterns=[[1, 1, 1, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 1, 1]],
                   subframes=[1, 2, 1, 1], mixture_share=[0.2, 0.4, 0.2, 0.2], dropped_share=0.0)
    assert sch.strings().tolist() == ["-00-0", "-000-", "-----", "01101"]
    assert sch.off_runs().tolist() == [2, 1, 1, 0]  # cell 1's run wraps around the period
    np.testing.assert_allclose(sch.share_off, [0.4, 0.4, 1.0, 0.0])
    assert sch.share_off[2] == 1.0
    np.testing.assert_allclose(sch.mean_power_w, [0.6 * 39.81071705534972, 0.6 * 39.81071705534972,
                                                  0.0, 0.4 + 0.6 * 10 ** 2.4 * 1e-3])


def test_strings_decode_to_the_levels(problem, schedule):
    text = schedule.strings()
    assert text.shape == (problem.n_cells,)
    assert all(len(s) == schedule.n_subframes for s in text)
    assert set("".join(text)) <= set("0123456789abcdefghijklmnopqrstuvwxyz-")
    first_off = np.argmax(np.isneginf(problem.space.level_dbm), axis=1)
    decoded = np.array([[first_off[j] if ch == "-" else int(ch, 36) for ch in s]
                        for j, s in enumerate(text)])
    np.testing.assert_array_equal(decoded, schedule.levels)
    assert schedule.off_runs().tolist() == [_cyclic_runs(s) for s in text]


def _cyclic_runs(s: str) -> int:
    """Off runs of a cyclic string, counted one character at a time."""
    if set(s) == {"-"}:
        return 1
    return sum(1 for k, ch in enumerate(s) if ch == "-" and s[k - 1] != "-")


# ---------------------------------------------------------------------- the exact value
def test_a_fine_schedule_is_worth_the_mixture(problem, mixture):
    sch = subframe_schedule(problem, mixture, subframes=10_000)
    sol = evaluate_schedule(problem, sch, upper_bound=mixture.upper_bound,
                            bound_kind=mixture.power.bound_kind)
    assert sol.status == "solved" and sol.method == "schedule"
    master = mixture.power.master
    # the mixture is optimal (to its tol, 1e-4) over a superset of these patterns with
    # free shares: the schedule cannot beat it by more, and loses little
    assert certified_gap(master, sol.objective, mixture.objective, mixture.utility) <= 2e-4
    assert certified_gap(master, mixture.objective, sol.objective, sol.utility) <= 5e-3
    assert sol.objective <= mixture.upper_bound
    assert sol.upper_bound == mixture.upper_bound and sol.bound_kind == mixture.power.bound_kind
    assert sol.power.bound_kind == sol.bound_kind
    assert sol.gap == pytest.approx(certified_gap(sol.power.master, mixture.upper_bound,
                                                  sol.objective, sol.utility))
    # the schedule's own bound is in bound_info
    assert sol.power.bound_info["fixed_share_bound"] >= sol.objective - 1e-9
    assert sol.power.bound_info["subframes"] == 10_000


def test_the_schedule_solution_is_feasible_and_consistent(problem, schedule):
    sol = evaluate_schedule(problem, schedule)
    share = schedule.share
    p = sol.power.master
    assert sol.status == "solved" and sol.bound_kind == "problem" == sol.power.bound_kind
    assert "schedule of 40 subframes" in sol.message and "fixed-share problem" in sol.message
    assert sol.upper_bound >= sol.objective and sol.gap <= 1e-5
    air = np.bincount(p.cell * p.n_resources + p.resource, sol.x,
                      minlength=p.n_groups).reshape(p.n_cells, p.n_resources)
    assert (sol.x >= 0).all() and (air <= share[None, :] + 1e-9).all()
    np.testing.assert_allclose(sol.cell_airtime, air, atol=1e-12)
    rate = np.bincount(p.user, p.rate_mbps * sol.x, minlength=p.n_users)
    np.testing.assert_allclose(sol.user_rate_mbps, rate)
    assert (rate <= problem.demand_mbps * (1 + 1e-9)).all()
    energy = share @ problem.space.energy_cost(schedule.patterns)
    assert sol.energy_cost == pytest.approx(energy)
    assert sol.objective == pytest.approx(sol.utility - sol.cost - sol.energy_cost)
    np.testing.assert_allclose(sol.pattern_share, share)
    power = sol.power
    np.testing.assert_array_equal(power.patterns, problem.space.power_dbm(schedule.patterns))
    np.testing.assert_allclose(10.0 ** (power.cell_power_dbm / 10.0) * 1e-3, schedule.mean_power_w)
    assert power.energy_w == pytest.approx(schedule.mean_power_w.sum())
    assert np.isnan(power.estimate) and power.history.empty
    with raises(ValidationError, "bound_kind=None with upper_bound"):
        evaluate_schedule(problem, schedule, upper_bound=1.0)
    with raises(ValidationError, "bound_kind='exact' without upper_bound"):
        evaluate_schedule(problem, schedule, bound_kind="exact")
    with raises(ValidationError, "schedule is a Solution"):
        evaluate_schedule(problem, sol)


def test_the_value_matches_a_fixed_share_problem_built_by_hand(problem, schedule):
    """The fixed-share problem built from the gains (abs_problem-style: each pattern a
    resource whose rates are scaled by its share), solved by cvxpy + Clarabel."""
    share, g = schedule.share, problem.gains
    rate = g.rates_mbps(problem.space.power_mw(schedule.patterns)) * share[:, None, None]
    shape = rate.shape  # (patterns, users, candidates)
    by_hand = Problem.from_links(
        np.broadcast_to(np.arange(g.n_users)[None, :, None], shape).ravel(),
        np.broadcast_to(g.cell[None, :, :g.n_candidates], shape).ravel(), rate.ravel(),
        n_users=g.n_users, n_cells=g.n_cells,
        resource=np.broadcast_to(np.arange(shape[0])[:, None, None], shape).ravel(),
        n_resources=shape[0], weight=problem.weight, alpha=problem.alpha,
        demand_mbps=problem.demand_mbps, backhaul_mbps=problem.backhaul_mbps,
        price_per_mbps=problem.price_per_mbps)
    ref = cellopt.solve(by_hand, "reference", tol=1e-8)
    assert ref.status == "optimal"
    energy = float(share @ problem.space.energy_cost(schedule.patterns))
    sol = evaluate_schedule(problem, schedule, tol=1e-8)
    assert sol.objective == pytest.approx(ref.objective - energy, rel=1e-6)
    assert sol.upper_bound >= ref.objective - energy - 1e-6 * abs(ref.objective - energy)


def test_drop_frames_of_a_schedule(drop, problem, schedule):
    sol = evaluate_schedule(problem, schedule)
    users, cells = drop.frames(sol)
    assert len(users) == drop.network.n_users and len(cells) == drop.network.n_cells
    assert (cells["load"] <= 1 + 1e-9).all() and (cells["load"] >= 0).all()
    np.testing.assert_allclose(cells["share_off"], schedule.share_off, atol=1e-12)
    np.testing.assert_allclose(cells["mean_power_w"], schedule.mean_power_w, rtol=1e-9)
    np.testing.assert_allclose(users["rate_mbps"].to_numpy()[drop.solvable], sol.user_rate_mbps)


# ---------------------------------------------------------------------- sleep
def test_sleep_candidates(problem, schedule, drop):
    every = sleep_candidates(problem, schedule, share_off=0.0)
    assert list(every.columns) == ["cell", "cell_id", "tier", "share_off", "energy_saved_w"]
    assert sorted(every["cell"]) == list(range(problem.n_cells))
    assert (every["energy_saved_w"] >= 0).all()
    saved = every["energy_saved_w"].to_numpy()
    assert (np.diff(saved) <= 0).all()
    ties = every.groupby("energy_saved_w", sort=False)["cell"]
    assert ties.apply(lambda c: c.is_monotonic_increasing).all()
    np.testing.assert_array_equal(every["cell_id"],
                                  drop.network.cells["cell_id"].to_numpy()[every["cell"]])
    np.testing.assert_array_equal(every["tier"], problem.tier_names[every["cell"]])
    full_w = 10.0 ** (problem.space.level_dbm.max(axis=1) / 10.0) * 1e-3
    np.testing.assert_allclose(saved, (full_w - schedule.mean_power_w)[every["cell"]], atol=1e-12)
    always = sleep_candidates(problem, schedule, share_off=1)
    assert sorted(always["cell"]) == np.flatnonzero(schedule.share_off == 1.0).tolist()
    assert (always["share_off"] == 1.0).all()
    np.testing.assert_allclose(always["energy_saved_w"], full_w[always["cell"]])
    half = sleep_candidates(problem, schedule, share_off=0.5)
    assert sorted(half["cell"]) == np.flatnonzero(schedule.share_off >= 0.5).tolist()
    for bad in (1.5, -0.1, float("nan"), "0.5"):
        with raises(ValidationError, "share_off"):
            sleep_candidates(problem, schedule, share_off=bad)
