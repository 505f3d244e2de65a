"""Per-cell offsets: the rule's utility engine against the solver, the fit, the value set."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pandas as pd
import pytest

import cellopt
from cellopt import deploy
from cellopt.deploy import rule as rule_module
from cellopt.deploy.judge import kept_share
from cellopt.deploy.offsets import _Search
from cellopt.deploy.rule import RuleDrops
from cellopt.errors import ValidationError
from cellopt.network import TIERS

#: TS 36.331 Q-OffsetRange, ENUMERATED {dB-24, dB-22, ..., dB-6, dB-5, ..., dB5, dB6, dB8, ..., dB24}.
TS_36331 = [-24, -22, -20, -18, -16, -14, -12, -10, -8, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5,
            6, 8, 10, 12, 14, 16, 18, 20, 22, 24]

#: Small variants of the HetNet: 7 sites, a pico per sector, clustered users.
SMALL = {"network": {"n_rings": 1}, "picos": {"per_sector": 1}, "users": {"n": 90}}
VARIANTS = {
    "full buffer": {},
    "demands": {"users": {"n": 90, "demand_mbps": 1.5}},
    "alpha 2": {"problem": {"alpha": 2.0}},
    "alpha 0.5": {"problem": {"alpha": 0.5}},
}


def small_drops(variant: str = "full buffer", seeds=(1, 2), cell_seed: int = 1, **extra):
    overrides = {**SMALL, **VARIANTS[variant], **extra}
    scenario = cellopt.load_scenario("hetnet").with_overrides(**overrides)
    return [scenario.build(s, cell_seed=cell_seed) for s in seeds]


def femto_drops(seeds=(1, 2)):
    """Third-party femtocells with backhaul caps and prices: the member path with prices."""
    scenario = cellopt.load_scenario("hetnet").with_overrides(
        **SMALL, femtocells={"density_per_km2": 20.0, "backhaul_mbps": 3.0, "price_per_mbps": 0.05})
    return [scenario.build(s, cell_seed=1) for s in seeds]


def random_offsets(n_cells: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.choice(np.array(TS_36331, float), n_cells) * (rng.random(n_cells) < 0.4)


def test_the_value_set_is_ts_36331():
    assert list(deploy.Q_OFFSET_RANGE) == TS_36331
    assert len(deploy.Q_OFFSET_RANGE) == 31


# ---------------------------------------------------------------------------- the engine
@pytest.mark.parametrize("variant", [*VARIANTS, "femtocells"])
def test_objectives_equal_the_baseline_solver(variant):
    """The engine's objective of an offset vector is the cell_offsets baseline's, exactly."""
    drops = femto_drops() if variant == "femtocells" else small_drops(variant)
    rule = RuleDrops.from_drops(drops)
    assert rule.additive == (variant in ("full buffer", "alpha 2", "alpha 0.5"))
    for seed in range(3):
        offsets = random_offsets(rule.n_cells, seed)
        got = rule.objectives(offsets[None, :])[0]
        want = [d.solve("cell_offsets", offsets_db=offsets).objective for d in drops]
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-9)


@pytest.mark.parametrize("variant", [*VARIANTS, "femtocells"])
def test_move_gains_equal_brute_force(variant):
    """Every single-cell move's gain is the objective after the move less the one before."""
    drops = femto_drops() if variant == "femtocells" else small_drops(variant)
    rule = RuleDrops.from_drops(drops)
    values = np.array(TS_36331, float)
    offsets = random_offsets(rule.n_cells, 7)
    gains = rule.move_gains(rule.state(offsets), values)
    assert gains.shape == (rule.n_cells, len(values), len(drops))
    now = rule.objectives(offsets[None, :])[0]
    rng = np.random.default_rng(0)
    cells = rng.choice(rule.n_cells, 10, replace=False)
    trials = np.repeat(offsets[None, :], len(cells) * len(values), axis=0)
    pairs = list(itertools.product(cells, range(len(values))))
    for row, (j, g) in enumerate(pairs):
        trials[row, j] = values[g]
    after = rule.objectives(trials)
    for row, (j, g) in enumerate(pairs):
        np.testing.assert_allclose(gains[j, g], after[row] - now, atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("variant", ["full buffer", "alpha 2", "alpha 0.5"])
def test_the_additive_and_member_paths_agree_and_chunks_change_nothing(monkeypatch, variant):
    drops = small_drops(variant)
    rule = RuleDrops.from_drops(drops)
    assert rule.additive
    values = np.array(TS_36331, float)
    offsets = random_offsets(rule.n_cells, 3)
    additive = rule.move_gains(rule.state(offsets), values)
    members = dataclasses.replace(rule, additive=False)
    np.testing.assert_allclose(members.move_gains(members.state(offsets), values), additive, atol=1e-8)
    np.testing.assert_allclose(members.objectives(offsets[None, :]), rule.objectives(offsets[None, :]),
                               rtol=1e-11)
    monkeypatch.setattr(rule_module, "CHUNK_ENTRIES", 64)  # a few cells per block
    np.testing.assert_array_equal(rule.move_gains(rule.state(offsets), values), additive)


def test_moves_beyond_the_neighbours_keep_their_gains():
    """After some cells move, only the gains of their neighbours change (the search
    recomputes those rows alone)."""
    for drops in (small_drops(), small_drops("demands")):
        rule = RuleDrops.from_drops(drops)
        values = np.array(TS_36331, float)
        offsets = random_offsets(rule.n_cells, 11)
        old = rule.state(offsets)
        moved = np.array([3, 17, 40])
        new_offsets = offsets.copy()
        new_offsets[moved] = [6.0, -4.0, 10.0]
        new = rule.state(new_offsets)
        near = rule.neighbours(moved, old, new)
        far = np.setdiff1d(np.arange(rule.n_cells), near)
        assert len(far)
        before = rule.move_gains(old, values)[far]
        after = rule.move_gains(new, values)[far]
        fixed = values[None, :] == new_offsets[far, None]  # the current value has gain 0
        np.testing.assert_allclose(np.where(fixed[..., None], 0.0, before),
                                   np.where(fixed[..., None], 0.0, after), atol=1e-9)


def test_best_pairs_per_tier_give_the_same_objectives():
    rule = RuleDrops.from_drops(small_drops())
    narrow = rule.tier_restricted()
    assert narrow.n_pairs < rule.n_pairs
    tier = rule.cell_tier
    for bias in itertools.product([-3.0, 0.0, 6.0], repeat=2):
        offsets = np.where(tier == TIERS.index("pico"), bias[1], bias[0])
        np.testing.assert_allclose(narrow.objectives(offsets[None, :]),
                                   rule.objectives(offsets[None, :]), rtol=1e-12)


# ---------------------------------------------------------------------------- evaluate
def test_zero_offsets_are_max_rsrp_and_tier_offsets_are_range_expansion():
    drop = small_drops()[0]
    ids = drop.network.cells["cell_id"].to_numpy()
    zero = deploy.evaluate(drop, pd.Series(0.0, index=ids))
    max_rsrp = drop.solve("max_rsrp")
    np.testing.assert_array_equal(zero.x, max_rsrp.x)
    assert zero.objective == max_rsrp.objective
    tier = drop.network.cells["tier"].to_numpy()
    biased = deploy.evaluate(drop, pd.Series(np.where(tier == "pico", 6.0, 0.0), index=ids))
    expansion = drop.solve("range_expansion", bias_db=6.0)
    np.testing.assert_array_equal(biased.x, expansion.x)


def test_evaluate_reports_the_certified_gap_to_the_drops_bound():
    drop = small_drops()[0]
    optimum = drop.solve("dual", tol=1e-6)
    offsets = deploy.cell_offsets(drop, optimum, max_rounds=5)
    sol = deploy.evaluate(drop, offsets, bound=optimum)
    assert sol.upper_bound == optimum.upper_bound
    assert sol.objective <= optimum.upper_bound  # no feasible utility exceeds a bound
    assert sol.gap == pytest.approx(np.exp((optimum.upper_bound - sol.objective)
                                           / drop.problem.weight.sum()) - 1.0, rel=1e-12)
    alone = deploy.evaluate(drop, offsets)  # the bound from the drop's own default solve
    assert alone.upper_bound == pytest.approx(optimum.upper_bound, rel=1e-3)
    number = deploy.evaluate(drop, offsets, bound=float(optimum.upper_bound))
    assert number.gap == sol.gap


# ---------------------------------------------------------------------------- the fit
def test_the_per_tier_search_finds_the_best_bias_of_the_range_expansion_solver():
    """An independent oracle: every bias of a small grid solved by range_expansion."""
    drops = small_drops()
    grid = [-2.0, 0.0, 3.0, 6.0, 9.0]
    found = deploy.tier_offsets(drops, values_db=grid)
    assert found["macro"] == 0.0 and set(found) == {"macro", "pico"}
    total = {b: sum(d.solve("range_expansion", bias_db={"macro": 0.0, "pico": b}).objective
                    for d in drops) for b in grid}
    assert total[found["pico"]] == pytest.approx(max(total.values()), rel=1e-12)


def test_the_per_tier_search_is_exhaustive_over_two_tiers():
    drops = femto_drops()
    grid = [-4.0, 0.0, 4.0, 8.0]
    found = deploy.tier_offsets(drops, values_db=grid)
    assert set(found) == {"macro", "pico", "femto"} and found["macro"] == 0.0
    total = {(p, f): sum(d.solve("range_expansion", bias_db={"pico": p, "femto": f}).objective
                         for d in drops) for p in grid for f in grid}
    assert total[(found["pico"], found["femto"])] == pytest.approx(max(total.values()), rel=1e-12)


@pytest.mark.parametrize("variant", ["full buffer", "demands"])
def test_fitted_offsets_are_a_coordinate_optimum_on_the_training_drops(variant):
    """Checked with the solver: no single cell's other value raises the penalized objective."""
    drops = small_drops(variant, seeds=(1, 2, 3))
    values = [-4.0, 0.0, 3.0, 6.0, 10.0]
    fitted = deploy.cell_offsets(drops[0], drops=drops[1:], values_db=values, penalty_per_db=0.0)
    assert fitted.attrs["status"] == "converged"
    assert fitted.index.name == "cell_id" and fitted.name == "offset_db"
    assert list(fitted.index) == list(drops[0].network.cells["cell_id"])
    assert set(fitted.unique()) <= set(values)
    offsets = fitted.to_numpy()

    def total(o):
        return sum(d.solve("cell_offsets", offsets_db=o).objective for d in drops)

    best = total(offsets)
    assert best == pytest.approx(sum(fitted.attrs["training_objective"]), rel=1e-11)
    tiers = fitted.attrs["tier_offsets_db"]
    start = np.array([tiers[t] for t in drops[0].network.cells["tier"]])
    assert best >= total(start) - 1e-9
    rng = np.random.default_rng(0)
    for j in rng.choice(len(offsets), 8, replace=False):
        for v in values:
            trial = offsets.copy()
            trial[j] = v
            assert total(trial) <= best + 1e-9 * max(1.0, abs(best))


def test_the_fit_is_deterministic_and_the_penalty_keeps_it_at_the_tier_bias():
    drops = small_drops(seeds=(1, 2, 3))
    first = deploy.cell_offsets(drops[0], drops=drops[1:])
    again = deploy.cell_offsets(drops[0], drops=drops[1:])
    pd.testing.assert_series_equal(first, again)
    assert first.attrs == again.attrs
    huge = deploy.cell_offsets(drops[0], drops=drops[1:], penalty_per_db=1e6)
    tiers = huge.attrs["tier_offsets_db"]
    np.testing.assert_array_equal(huge.to_numpy(), [tiers[t] for t in drops[0].network.cells["tier"]])
    assert huge.attrs["rounds"] == 0


def test_the_search_rises_every_round_and_stops_on_its_budget():
    drops = small_drops(seeds=(1, 2))
    one = deploy.cell_offsets(drops[0], drops=drops[1:], max_rounds=1, penalty_per_db=0.0)
    full = deploy.cell_offsets(drops[0], drops=drops[1:], penalty_per_db=0.0)
    assert one.attrs["status"] == "max_rounds" and one.attrs["rounds"] == 1
    assert full.attrs["rounds"] > 1
    assert sum(full.attrs["training_objective"]) >= sum(one.attrs["training_objective"])
    rule = RuleDrops.from_drops(drops)
    values = np.array(TS_36331, float)
    tiers = one.attrs["tier_offsets_db"]
    start = np.array([tiers[TIERS[t]] for t in rule.cell_tier], float)
    search = _Search(rule, values, start, 0.0)
    objective = [search.objective(start)]
    for budget in range(1, 6):
        offsets, _, _ = search.run(start, budget)
        objective.append(search.objective(offsets))
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(objective))


def test_prices_give_a_start():
    drop = small_drops()[0]
    optimum = drop.solve("dual")
    fitted = deploy.cell_offsets(drop, optimum, max_rounds=0)
    assert fitted.attrs["start"] in ("tier", "prices")


# ---------------------------------------------------------------------------- bad input
def test_bad_offsets_are_refused_with_the_fix():
    drop = small_drops()[0]
    ids = drop.network.cells["cell_id"].to_numpy()
    good = pd.Series(0.0, index=ids)
    with pytest.raises(ValidationError, match=r"not in the value set.*fix: use values of values_db"):
        deploy.evaluate(drop, good.replace(0.0, 7.0))  # 7 dB is not in Q-OffsetRange
    with pytest.raises(ValidationError, match="another network"):
        deploy.evaluate(drop, pd.Series(0.0, index=np.r_[ids, 10_000]))
    with pytest.raises(ValidationError, match="no offset for cells"):
        deploy.evaluate(drop, good.iloc[1:])
    with pytest.raises(ValidationError, match="more than once"):
        deploy.evaluate(drop, pd.concat([good, good.iloc[:1]]))
    with pytest.raises(ValidationError, match="values_db is empty"):
        deploy.evaluate(drop, good, values_db=[])
    with pytest.raises(ValidationError, match="repeats"):
        deploy.cell_offsets(drop, values_db=[0.0, 3.0, 3.0])
    with pytest.raises(ValidationError, match="values_db"):
        deploy.cell_offsets(drop, values_db=[0.0, float("nan")])
    with pytest.raises(ValidationError, match="penalty_per_db"):
        deploy.cell_offsets(drop, penalty_per_db=-1.0)
    with pytest.raises(ValidationError, match="max_rounds"):
        deploy.cell_offsets(drop, max_rounds=2.5)


def test_drops_of_other_cells_and_foreign_solutions_are_refused():
    drops = small_drops(seeds=(1, 2))
    other = small_drops(seeds=(3,), cell_seed=9)[0]  # other picos
    with pytest.raises(ValidationError, match="drop 1 has other cells"):
        deploy.cell_offsets(drops[0], drops=[other])
    with pytest.raises(ValidationError, match="given twice"):
        deploy.cell_offsets(drops[0], drops=[drops[0]])
    fewer = small_drops(seeds=(1,), users={"n": 50})[0]
    with pytest.raises(ValidationError, match=r"not a solution of drop\.problem"):
        deploy.cell_offsets(drops[0], fewer.solve("dual"))
    with pytest.raises(ValidationError, match="another problem"):
        deploy.evaluate(drops[0], deploy.cell_offsets(drops[0], max_rounds=0), bound=fewer.solve("dual"))
    fitted = deploy.cell_offsets(drops[0], max_rounds=0)
    with pytest.raises(ValidationError, match="another network"):
        deploy.evaluate(other, fitted.set_axis(fitted.index + 1000))
    with pytest.raises(ValidationError, match="fitted on another network"):
        deploy.evaluate(other, fitted)  # the same ids 0..n-1, other pico positions
    plain = fitted.copy()
    plain.attrs = {}
    assert deploy.evaluate(other, plain).objective  # by cell id alone, as from cell_config.csv


# ---------------------------------------------------------------------------- judging
def test_kept_share_by_hand():
    assert kept_share(-80.0, -100.0, -60.0) == 0.5
    assert kept_share(-60.0, -100.0, -60.0) == 1.0
    assert kept_share(-100.0, -100.0, -60.0) == 0.0
    assert np.isnan(kept_share(-100.0, -100.0, -100.0))  # nothing to keep


def test_no_rule_beats_the_bound_on_drops_it_was_not_fitted_to():
    drops = small_drops(seeds=(1, 2, 3, 4))
    fitted = deploy.cell_offsets(drops[0], drops=drops[1:2])
    for drop in drops[2:]:
        optimum = drop.solve("dual", tol=1e-6)
        sol = deploy.evaluate(drop, fitted, bound=optimum)
        assert sol.objective <= optimum.objective + 1e-6 <= optimum.upper_bound + 1e-6
        row = deploy.judgement(drop.problem, sol, optimum, drop.solve("max_rsrp").objective)
        assert row["kept_share"] <= 1.0 + 1e-6 and row["gap"] >= 0.0
