"""Settings a live network takes, in a run: fitted on training drops, judged on held-out ones.

:func:`deploy_run` is what ``cellopt run`` does after solving a drop when the scenario has
an optimizer among its methods (and ``[deploy] enabled``, the default):

1. **Training drops.** The run's drop and ``training_drops − 1`` more of the same cells
   (``Scenario.build(seed, cell_seed=...)``: new users and shadowing).
2. **Fit.** Per-cell offsets (:func:`cellopt.deploy.cell_offsets`, started from the
   optimizer's prices) and the best per-tier bias found by the same search over the
   training drops.
3. **Schedule.** With a ``[power]`` section, the power run's mixture of patterns rounded to
   a schedule of ``subframes`` subframes (:func:`cellopt.deploy.subframe_schedule`) and
   evaluated exactly, and the cells to sleep.
4. **Judgement.** On every training drop and on ``held_out_drops`` drops of the same cells
   whose users and shadowing the fit never saw: each rule's objective, certified gap to
   the drop's bound, and kept share of the optimizer's gain over max-RSRP
   (:mod:`cellopt.deploy.judge`). With power, each held-out drop's own power optimum is
   computed under the ``[power]`` section, and the schedule is held fixed while the
   association of the new users is solved under it.

The seeds of the extra drops derive from the run's seed (:func:`extra_drop_seed`), so the
same scenario and seed give the same settings and the same judgement on any machine.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from cellopt.deploy import (
    Schedule,
    cell_offsets,
    evaluate,
    evaluate_schedule,
    judgement,
    offsets_series,
    sleep_candidates,
    subframe_schedule,
    summarize,
    tier_offsets_array,
)
from cellopt.drop import Drop
from cellopt.errors import ValidationError, check_memory
from cellopt.solution import Solution
from cellopt.solvers.baselines import tier_bias_db
from cellopt.study.runkinds import PowerRun, RunKind

if TYPE_CHECKING:
    from cellopt.study.scenario import Scenario

__all__ = ["OFFSETS_RULE", "TIER_RULE", "Deployment", "applies", "check_memory_of", "deploy_run",
           "extra_drop_seed", "optimizer_of", "rule_offsets", "schedule_rule"]

#: The labels of the deployable rules among a run's methods.
OFFSETS_RULE = "per-cell offsets"
TIER_RULE = "best per-tier bias"
#: Spawn keys of the extra drops' seeds.
_TRAINING, _HELD_OUT = 1, 2


def schedule_rule(subframes: int) -> str:
    """The label of the schedule's row: ``schedule (40 subframes)``."""
    return f"schedule ({subframes} subframes)"


def extra_drop_seed(seed: int, kind: str, k: int) -> int:
    """The seed of the users and shadowing of the `k`-th extra drop of a run of seed `seed`.

    ``SeedSequence(seed, spawn_key=(1, k))`` for training drop k ≥ 1 (``kind="training"``),
    ``(2, k)`` for held-out drop k ≥ 0 (``kind="held_out"``): independent of each other and
    of the scenario's own drops. Every extra drop has the cells of the run's drop
    (``cell_seed=seed``).
    """
    key = {"training": _TRAINING, "held_out": _HELD_OUT}[kind]
    return int(np.random.SeedSequence(seed, spawn_key=(key, k)).generate_state(1)[0])


def optimizer_of(methods: Sequence[RunKind]) -> RunKind | None:
    """The optimizer among a run's methods: the last that solves the convex problem to a
    certified gap with fractional association (:attr:`RunKind.optimizer
    <cellopt.study.runkinds.RunKind.optimizer>`; None: there is none)."""
    convex = [m for m in methods if m.optimizer]
    return convex[-1] if convex else None


@dataclasses.dataclass(eq=False)
class Deployment:
    """The deployable settings of a run and their judgement.

    Attributes
    ----------
    offsets : pandas.Series
        Per-cell offsets [dB] by ``cell_id`` (:func:`cellopt.deploy.cell_offsets`; its
        ``attrs`` record the fit).
    tier_offsets : dict of str to float
        The best per-tier bias [dB] on the training drops.
    solutions : dict of str to Solution
        Each rule on the run's drop, by label (:data:`OFFSETS_RULE`, :data:`TIER_RULE` and
        :func:`schedule_rule`): they join the run's methods in every table.
    judgements : pandas.DataFrame
        One row per (rule, split, drop): ``rule``, ``split`` (``"training"`` or
        ``"held_out"``), ``drop`` (its number in the split), ``seed``, then
        :data:`cellopt.deploy.judge.JUDGEMENT_COLUMNS`.
    summary : pandas.DataFrame
        :func:`cellopt.deploy.judge.summarize` of the judgements, indexed by rule.
    schedule : Schedule or None
        With a ``[power]`` section: the schedule of the power run's mixture.
    sleep : pandas.DataFrame or None
        With a schedule: the sleep candidates (:func:`cellopt.deploy.sleep_candidates`).
    optimizer : str
        The label of the optimizer whose solution the offsets start from.
    fit_s : float
        Time of the offset fit (search of the per-tier bias included) [s].
    optimizer_s : float
        Time of the optimizer's solve of the run's drop, in the same run [s].
    sleep_share_off : float
        The ``[deploy]`` threshold of the ``sleep`` column.
    """

    offsets: pd.Series
    tier_offsets: dict[str, float]
    solutions: dict[str, Solution]
    judgements: pd.DataFrame
    summary: pd.DataFrame
    schedule: Schedule | None
    sleep: pd.DataFrame | None
    optimizer: str
    fit_s: float
    optimizer_s: float
    sleep_share_off: float

    def cell_config(self, drop: Drop) -> pd.DataFrame:
        """``cell_config.csv``: one row per cell of the network (docs/conventions.md).

        Columns ``cell_id``, ``site_id``, ``tier``, ``offset_db``; with a schedule also
        ``schedule`` (one character per subframe: the level's index in the cell's
        ``[power] levels_db`` list, ``-`` for off), ``share_off``, ``mean_power_w``,
        ``energy_saved_w`` (full power less the schedule's mean [W]) and ``sleep``.
        """
        cells = drop.network.cells
        table = pd.DataFrame({"cell_id": cells["cell_id"].to_numpy(),
                              "site_id": cells["site_id"].to_numpy(),
                              "tier": cells["tier"].to_numpy(),
                              "offset_db": self.offsets.to_numpy()})
        if self.schedule is not None:
            table["schedule"] = self.schedule.strings()
            table["share_off"] = self.schedule.share_off
            table["mean_power_w"] = self.schedule.mean_power_w
            table["energy_saved_w"] = self.schedule.energy_saved_w
            table["sleep"] = self.schedule.share_off >= self.sleep_share_off
        return table

    def judgement_table(self) -> pd.DataFrame:
        """The summary's main columns, for a printout: drops, mean and worst kept share and
        mean gap to the bound, on the training and on the held-out drops."""
        columns = [f"{split}_{name}" for split in ("training", "held_out")
                   for name in ("drops", "kept_share", "kept_share_min", "gap")]
        return self.summary[[c for c in columns if c in self.summary.columns]]

    def summary_line(self) -> str:
        """One line a planner can act on: what the rules keep on the held-out drops."""
        split = "held_out" if "held_out_kept_share" in self.summary else "training"
        n = int(self.summary.get(f"{split}_drops", pd.Series([0])).max())
        where = f"on {n} held-out drop{'s' * (n != 1)}" if split == "held_out" else \
            f"on the {n} training drop{'s' * (n != 1)} (no held-out drops)"
        kept = self.summary[f"{split}_kept_share"]

        def pct(rule: str) -> str:
            value = kept.get(rule, np.nan)
            return "n/a" if not np.isfinite(value) else f"{100 * value:.0f} %"

        line = (f"per-cell offsets keep {pct(OFFSETS_RULE)} of the optimizer's gain {where} "
                f"(best per-tier bias: {pct(TIER_RULE)})")
        if self.schedule is not None:
            rule = schedule_rule(self.schedule.n_subframes)
            sleep = 0 if self.sleep is None else len(self.sleep)
            line += (f"; the {self.schedule.n_subframes}-subframe schedule keeps {pct(rule)} of the "
                     f"power optimum's gain, {sleep} cell{'s' * (sleep != 1)} to sleep")
        return line + "; cell_config.csv"


def applies(scenario: Scenario, drop: Drop, methods: Sequence[RunKind]) -> bool:
    """Whether a run fits deployable settings: ``[deploy] enabled``, an optimizer among
    `methods`, full-buffer interference and users to serve."""
    return (scenario.deploy.enabled and optimizer_of(methods) is not None
            and drop.coupling is None and drop.problem.n_users > 0)


def check_memory_of(scenario: Scenario, drop: Drop, methods: Sequence[RunKind]) -> None:
    """Refuse, before a run solves anything, deployable settings whose training drops
    would not fit in memory together (each about as large as the run's drop).

    Raises
    ------
    ResourceLimitError
        Naming ``[deploy] training_drops``, the estimate and the fix.
    """
    if not applies(scenario, drop, methods):
        return
    arrays = [*vars(drop.links).values(), *vars(drop.problem).values()]
    one = sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))
    one += int(drop.network.users.memory_usage(index=True).sum())
    n = scenario.deploy.training_drops
    check_memory(2.0 * n * one, f"{scenario.path}: [deploy] training_drops = {n} drops of "
                 f"{drop.network.n_users:,} users", "fewer [deploy] training_drops, a study "
                 "window of the network, or [deploy] enabled = false")


def deploy_run(scenario: Scenario, drop: Drop, methods: Sequence[RunKind],
               solutions: dict[str, Solution], seed: int, *, progress: bool = False
               ) -> Deployment | None:
    """Fit the deployable settings of a run's drop and judge them (see the module notes).

    Parameters
    ----------
    scenario : Scenario
    drop : Drop
        The run's drop (built with `seed`).
    methods : sequence of RunKind
        What the run solved the drop with.
    solutions : dict of str to Solution
        The run's solutions by label: the optimizer's (:func:`optimizer_of`) is read, and
        the ``[power]`` run's if there is one.
    seed : int
        The run's build seed.
    progress : bool
        Say each stage on stderr.

    Returns
    -------
    Deployment or None
        None when ``[deploy] enabled = false``, the run has no optimizer, or the drop is
        load-coupled (the rules are judged at full-buffer interference only).

    Raises
    ------
    ValidationError
        When a method's label is one of the rules' (:data:`OFFSETS_RULE`, ...).
    """
    if not applies(scenario, drop, methods):
        return None
    settings = scenario.deploy
    spec = optimizer_of(methods)
    taken = {OFFSETS_RULE, TIER_RULE, schedule_rule(settings.subframes)} & set(solutions)
    if taken:
        raise ValidationError(f"{scenario.path}: methods: the label(s) {sorted(taken)} name the "
                              "deployable settings' rows; fix: give the method another label, or "
                              "set [deploy] enabled = false")
    optimum = solutions[spec.label]
    t = time.perf_counter()
    training = [drop] + [scenario.build(extra_drop_seed(seed, "training", k), cell_seed=seed)
                         for k in range(1, settings.training_drops)]
    _say(progress, f"deploy: {len(training)} training drops", t)
    t = time.perf_counter()
    offsets = cell_offsets(drop, optimum, drops=training[1:],
                           values_db=settings.values_db, penalty_per_db=settings.penalty_per_db,
                           max_rounds=settings.max_rounds)
    fit_s = time.perf_counter() - t
    _say(progress, f"deploy: per-cell offsets, {offsets.attrs['rounds']} rounds "
         f"({offsets.attrs['status']})", t)
    tiers = offsets.attrs["tier_offsets_db"]
    per_tier = offsets_series(drop, tier_offsets_array(drop.network.cells["tier"], tiers))
    rules = {OFFSETS_RULE: offsets, TIER_RULE: per_tier}
    t = time.perf_counter()
    held_out = [scenario.build(extra_drop_seed(seed, "held_out", k), cell_seed=seed)
                for k in range(settings.held_out_drops)]
    rows: list[dict[str, Any]] = []
    mine: dict[str, Solution] = {}
    max_rsrp: dict[int, float] = {}  # each drop's max-RSRP objective, by id(drop)
    for split, drops in (("training", training), ("held_out", held_out)):
        for k, d in enumerate(drops):  # a loop over drops
            best = optimum if d is drop else spec.solve(scenario, d)
            reference = max_rsrp[id(d)] = d.solve("max_rsrp").objective
            for rule, values in rules.items():
                sol = evaluate(d, values, values_db=settings.values_db, bound=best)
                if d is drop:
                    mine[rule] = dataclasses.replace(sol, method=rule)
                rows.append({"rule": rule, "split": split, "drop": k, "seed": d.seed,
                             **judgement(d.problem, sol, best, reference)})
    _say(progress, f"deploy: offsets judged on {len(training)} training and {len(held_out)} "
         "held-out drops", t)
    schedule = sleep = None
    power = next((m for m in methods if m.patterns), None)
    if power is not None and power.label in solutions:
        t = time.perf_counter()
        schedule, sleep, power_rows, mine_power = _judge_schedule(
            scenario, power, drop, solutions[power.label], held_out, max_rsrp, settings.subframes,
            settings.sleep_share_off)
        rows += power_rows
        mine |= mine_power
        _say(progress, f"deploy: {schedule.n_subframes}-subframe schedule judged", t)
    judgements = pd.DataFrame(rows)
    order = [OFFSETS_RULE, TIER_RULE] + ([schedule_rule(settings.subframes)] if schedule else [])
    result = Deployment(offsets=offsets, tier_offsets=tiers, solutions=mine, judgements=judgements,
                        summary=summarize(judgements, order), schedule=schedule, sleep=sleep,
                        optimizer=spec.label, fit_s=fit_s, optimizer_s=optimum.wall_s,
                        sleep_share_off=settings.sleep_share_off)
    return result


def rule_offsets(label: str, methods: Sequence[RunKind], deployment: Deployment,
                 cells: pd.DataFrame) -> np.ndarray:
    """The offset [dB] each cell gets under the method of `label`, shape (n_cells,).

    The fitted offsets for :data:`OFFSETS_RULE`, the best per-tier bias for
    :data:`TIER_RULE`, 0 for ``max_rsrp``, the tier's bias for ``range_expansion``, the
    given offsets for ``cell_offsets``; NaN for a method that is not an offset rule.
    """
    tier = cells["tier"].to_numpy()
    if label == OFFSETS_RULE:
        return deployment.offsets.to_numpy()
    if label == TIER_RULE:
        return tier_offsets_array(tier, deployment.tier_offsets)
    spec = next((m for m in methods if m.label == label), None)
    if spec is None or spec.name not in ("max_rsrp", "range_expansion", "cell_offsets"):
        return np.full(len(cells), np.nan)
    if spec.name == "range_expansion":
        return tier_offsets_array(tier, tier_bias_db(spec.options.get("bias_db")))
    offsets = spec.options.get("offsets_db") if spec.name == "cell_offsets" else None
    return np.zeros(len(cells)) if offsets is None else np.asarray(offsets, float)


def _judge_schedule(scenario: Scenario, power: PowerRun, drop: Drop, mixture: Solution,
                    held_out: list[Drop], max_rsrp: dict[int, float], subframes: int,
                    sleep_share_off: float
                    ) -> tuple[Schedule, pd.DataFrame, list[dict[str, Any]], dict[str, Solution]]:
    """The schedule of the power run's mixture, judged on the run's drop (against the
    mixture) and on the held-out drops (against each one's own power optimum); `max_rsrp`
    holds each drop's max-RSRP objective, by ``id(drop)``, from the offsets' judgement."""
    ids = drop.network.cells["cell_id"].to_numpy()
    problem = scenario.power_problem(drop, power)
    try:
        schedule = subframe_schedule(problem, mixture, subframes=subframes, cell_id=ids)
    except ValidationError as err:  # a period too short for the power run's patterns
        raise ValidationError([f"{scenario.path}: [deploy] {p}" for p in err.problems]) from err
    rule = schedule_rule(schedule.n_subframes)
    rows, mine = [], {}
    cases = [("training", 0, drop, mixture)] + [("held_out", k, h, None) for k, h in enumerate(held_out)]
    for split, k, d, best in cases:  # a loop over drops
        p = problem if d is drop else scenario.power_problem(d, power)
        best = power.solve(scenario, d) if best is None else best
        sol = evaluate_schedule(p, schedule, upper_bound=best.upper_bound,
                                bound_kind=best.power.bound_kind)
        full_cost = float(p.space.energy_cost(p.space.full_power()[None, :])[0])
        reference = max_rsrp[id(d)] - full_cost
        if d is drop:
            mine[rule] = dataclasses.replace(sol, method=rule)
        rows.append({"rule": rule, "split": split, "drop": k, "seed": d.seed,
                     **judgement(d.problem, sol, best, reference)})
    sleep = sleep_candidates(problem, schedule, share_off=sleep_share_off)
    return schedule, sleep, rows, mine


def _say(progress: bool, what: str, since: float) -> None:
    if progress:
        print(f"  {what} ({time.perf_counter() - since:.1f} s)", file=sys.stderr, flush=True)

