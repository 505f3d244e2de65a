"""Experiment (g) of docs/experiments.md: what deployable settings keep on users they were not fitted to.

On four networks — ``hetnet`` (TR 36.814 HetNet, 2/3 of the users in pico hotspots),
``ye_random`` (Poisson macro/pico/femto tiers, uniform users), ``nr_hetnet`` (NR 3.5 GHz,
UMa macros + UMi small cells) and ``sf_femto`` (OpenCelliD sites of San Francisco with
femtocells; its synthetic stand-in ``city_synthetic`` where the data is absent) — each
replicate is what ``cellopt run`` does with its ``[deploy]`` section: the replicate's drop
(its cells and its first users), 16 training drops of the same cells, per-cell offsets and
the best per-tier bias fitted on them, and the two rules judged, with max-RSRP and the
optimizer, on held-out drops of the same cells (new users and shadowing). Reported per
network and rule: the **kept share** of the optimizer's gain over max-RSRP and the
certified rate-equivalent gap to each drop's bound, on the training and on the held-out
drops, and the time of the fit beside the optimizer's solve of the same drop.

Two more questions:

- **Users that move.** The held-out users are drawn again with a share of them moved: the
  hotspot share ``clustered_fraction`` changed by 1/3 and 2/3 (``hetnet``: 2/3 of the
  users in hotspots in training, 1/3 and none in the moved drops; ``ye_random`` and
  ``sf_femto``: uniform users in training, 1/3 and 2/3 in hotspots around the picos or the
  femtocells in the moved drops; ``nr_hetnet``: 1/2 → 1/4 and none, a shift of 1/4 and 1/2).
- **Training data.** On ``hetnet``, the per-cell offsets fitted on 1, 4, 16 and 64 drops,
  with the default penalty and without it (a plain coordinate search), judged on the same
  held-out drops.
- **Schedules.** On ``hetnet_power``, the power run's mixture rounded to P subframes (the
  patterns in use, 40 and 80) against the mixture and the bound, and the 40-subframe
  schedule on 3 held-out drops against each one's own power optimum.

Each unit of work (a network's replicate) writes its rows to ``--out`` when it finishes;
``--resume`` skips the units already there. Writes into ``--figures`` (default
``results/deployable/figures/``; ``--figures docs/figures`` replaces the published ones,
refused when a stand-in runs):
``deployable.csv`` (per network and rule), ``deployable_shift.csv``,
``deployable_training.csv``, ``deployable_time.csv``, ``deployable_power.csv``,
``deployable_kept.png``,
``deployable_shift.png`` and ``deployable_training.png``.

Run: ``python experiments/deployable.py [--replicates 3] [--held-out 10] [--resume]``
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from _outputs import add_output_options, figures_folder, say_written, snapshot, stand_ins

import cellopt
from cellopt import deploy
from cellopt.deploy.judge import judgement
from cellopt.study.deployment import (
    OFFSETS_RULE,
    TIER_RULE,
    deploy_run,
    extra_drop_seed,
    optimizer_of,
)
from cellopt.study.runkinds import MethodRun
from cellopt.study.scenario import load_scenario
from cellopt.study.summary import mean_ci

NETWORKS = ("hetnet", "ye_random", "nr_hetnet", "sf_femto")
#: The moved users of each network: (its training clustered_fraction, the tier of the
#: hotspots in the moved drops).
HOTSPOTS = {"hetnet": (2 / 3, "pico"), "ye_random": (0.0, "pico"), "nr_hetnet": (0.5, "pico"),
            "sf_femto": (0.0, "femto"), "city_synthetic": (0.0, "femto")}
#: Held-out drops per moved level.
MOVED_DROPS = 5
#: Training drops and penalties of the training-data question (hetnet).
TRAINING = (1, 4, 16, 64)
#: Held-out drops of the schedule question (each solves its own power problem).
POWER_HELD_OUT = 3
RULES = (TIER_RULE, OFFSETS_RULE)


def scenario_of(name: str) -> cellopt.Scenario:
    """The shipped scenario, or its stand-in (with a warning) where its data is absent."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        return load_scenario(name, use_stand_in=True)


def moved_levels(name: str) -> list[float]:
    """The hotspot shares of the moved drops (the training share first)."""
    base, _ = HOTSPOTS[name]
    steps = (0.25, 0.5) if name == "nr_hetnet" else (1 / 3, 2 / 3)
    return [base] + [abs(base - s) if base > 0 else s for s in steps]


def judge_moved(scenario: cellopt.Scenario, drop: cellopt.Drop, rules: dict[str, pd.Series],
                spec: MethodRun, fraction: float, tier: str, count: int) -> list[dict]:
    """The rules on `count` drops of the same cells whose users have hotspot share
    `fraction` (around cells of `tier`)."""
    moved = scenario.with_overrides(users={"clustered_fraction": fraction, "cluster_tier": tier})
    rows = []
    for k in range(count):  # a loop over drops
        d = moved.build(extra_drop_seed(drop.seed, "held_out", 1000 + k), cell_seed=drop.seed)
        best = spec.solve(moved, d)
        reference = d.solve("max_rsrp").objective
        for rule, offsets in rules.items():
            sol = deploy.evaluate(d, offsets, bound=best)
            rows.append({"rule": rule, "split": "moved", "drop": k, "hotspot_share": fraction,
                         **judgement(d.problem, sol, best, reference)})
    return rows


def replicate(name: str, k: int, held_out: int) -> pd.DataFrame:
    """One replicate of a network: `cellopt run`'s deployable settings and their judgement,
    and the same rules on moved users."""
    scenario = scenario_of(name).with_overrides(deploy={"held_out_drops": held_out})
    network = scenario.name
    seed = scenario.seeds[k]
    drop = scenario.build(seed)
    spec = optimizer_of(scenario.methods)
    solutions = {spec.label: spec.solve(scenario, drop)}
    t = time.perf_counter()
    deployment = deploy_run(scenario, drop, [spec], solutions, seed)
    deploy_s = time.perf_counter() - t
    rows = deployment.judgements.assign(hotspot_share=HOTSPOTS[network][0])
    rules = {OFFSETS_RULE: deployment.offsets,
             TIER_RULE: deploy.offsets_series(drop, deploy.tier_offsets_array(
                 drop.network.cells["tier"], deployment.tier_offsets))}
    base, tier = HOTSPOTS[network]
    moved = [row for level in moved_levels(network)[1:]
             for row in judge_moved(scenario, drop, rules, spec, level, tier, MOVED_DROPS)]
    table = pd.concat([rows, pd.DataFrame(moved)], ignore_index=True)
    attrs = deployment.offsets.attrs
    return table.assign(network=network, replicate=k, cell_seed=seed, fit_s=deployment.fit_s,
                        optimizer_s=deployment.optimizer_s, deploy_s=deploy_s,
                        rounds=attrs["rounds"], n_cells=drop.network.n_cells,
                        n_users=drop.network.n_users, n_links=drop.problem.n_links,
                        moved_from=base, tier_offsets=str(deployment.tier_offsets))


def training_question(k: int, held_out: int) -> pd.DataFrame:
    """Per-cell offsets on hetnet fitted on 1 … 64 drops, with and without the penalty."""
    scenario = load_scenario("hetnet")
    seed = scenario.seeds[k]
    drop = scenario.build(seed)
    spec = optimizer_of(scenario.methods)
    optimum = spec.solve(scenario, drop)
    extra = [scenario.build(extra_drop_seed(seed, "training", j), cell_seed=seed)
             for j in range(1, max(TRAINING))]
    judged = [drop, *extra]
    held = [scenario.build(extra_drop_seed(seed, "held_out", j), cell_seed=seed)
            for j in range(held_out)]
    best = {id(d): (optimum if d is drop else spec.solve(scenario, d)) for d in [*judged, *held]}
    reference = {id(d): d.solve("max_rsrp").objective for d in [*judged, *held]}
    rows = []
    tier = drop.network.cells["tier"].to_numpy()
    for n in TRAINING:
        for penalty in (deploy.offsets.DEFAULT_PENALTY_PER_DB, 0.0):
            t = time.perf_counter()
            offsets = deploy.cell_offsets(drop, optimum, drops=extra[:n - 1], penalty_per_db=penalty)
            fit_s = time.perf_counter() - t
            rules = {OFFSETS_RULE: offsets}
            if penalty:  # the per-tier bias of the same training drops, once
                biases = offsets.attrs["tier_offsets_db"]
                rules[TIER_RULE] = deploy.offsets_series(drop, deploy.tier_offsets_array(tier, biases))
            for rule, values in rules.items():
                for split, drops in (("training", judged[:n]), ("held_out", held)):
                    for j, d in enumerate(drops):
                        sol = deploy.evaluate(d, values, bound=best[id(d)])
                        rows.append({"rule": rule, "training_drops": n, "penalty_per_db": penalty,
                                     "split": split, "drop": j, "fit_s": fit_s, "replicate": k,
                                     **judgement(d.problem, sol, best[id(d)], reference[id(d)])})
    return pd.DataFrame(rows)


def power_question(k: int, held_out: int) -> pd.DataFrame:
    """``hetnet_power``: the power run's mixture as schedules of P subframes (P = the patterns
    in use, 40 and 80), each against the mixture and the bound on the run's drop, and the
    P = 40 schedule on held-out drops against each one's own power optimum."""
    scenario = load_scenario("hetnet_power").with_overrides(deploy={"held_out_drops": held_out})
    seed = scenario.seeds[k]
    drop = scenario.build(seed)
    spec, power = optimizer_of(scenario.methods), scenario.power
    solutions = {spec.label: spec.solve(scenario, drop), power.label: power.solve(scenario, drop)}
    deployment = deploy_run(scenario, drop, [spec, power], solutions, seed)
    rows = deployment.judgements[deployment.judgements["rule"].str.startswith("schedule")]
    rows = rows.assign(subframes=deploy.schedule.DEFAULT_SUBFRAMES)
    mixture = solutions[power.label]
    problem = scenario.power_problem(drop)
    in_use = int((mixture.power.pattern_share >= deploy.schedule.MIN_SHARE).sum())
    extra = []
    for subframes in sorted({in_use, 80}):
        schedule = deploy.subframe_schedule(problem, mixture, subframes=subframes)
        sol = deploy.evaluate_schedule(problem, schedule, upper_bound=mixture.upper_bound,
                                       bound_kind=mixture.power.bound_kind)
        reference = drop.solve("max_rsrp").objective - float(
            problem.space.energy_cost(problem.space.full_power()[None, :])[0])
        extra.append({"rule": f"schedule ({subframes} subframes)", "split": "training", "drop": 0,
                      "subframes": subframes, **judgement(drop.problem, sol, mixture, reference)})
    table = pd.concat([rows, pd.DataFrame(extra)], ignore_index=True)
    schedule = deployment.schedule
    return table.assign(replicate=k, cell_seed=seed, patterns_in_use=in_use,
                        mixture_patterns=len(mixture.power.pattern_share),
                        dropped_share=schedule.dropped_share, sleep=len(deployment.sleep),
                        off_runs_mean=float(schedule.off_runs()[schedule.share_off > 0].mean()))


def cached(path: Path, resume: bool, make) -> pd.DataFrame:
    """The unit's rows: read from `path` when resuming and present, else made and written."""
    if resume and path.exists():
        return pd.read_csv(path)
    table = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    table.to_csv(tmp, index=False)
    tmp.replace(path)
    return table


def summary_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per network and rule: kept share and gap on the training and held-out drops."""
    out = []
    for (network, rule), part in rows[rows["split"].isin(["training", "held_out"])].groupby(
            ["network", "rule"], sort=False):
        row = {"network": network, "rule": rule}
        for split in ("training", "held_out"):
            s = part[part["split"] == split]
            mean, ci = mean_ci(s["kept_share"].to_numpy())
            row |= {f"{split}_drops": len(s), f"{split}_kept_share": float(mean),
                    f"{split}_kept_share_ci95": float(ci),
                    f"{split}_kept_share_median": float(s["kept_share"].median()),
                    f"{split}_kept_share_worst": float(s["kept_share"].min()),
                    f"{split}_gap": float(s["gap"].mean()), f"{split}_gap_worst": float(s["gap"].max())}
        out.append(row)
    table = pd.DataFrame(out)
    # the per-cell offsets' advantage over the per-tier bias, paired by drop
    held = rows[rows["split"] == "held_out"].pivot_table(
        index=["network", "replicate", "drop"], columns="rule", values="kept_share")
    diff = (held[OFFSETS_RULE] - held[TIER_RULE]).groupby("network")
    advantage = pd.DataFrame({"network": diff.mean().index, "advantage": diff.mean().to_numpy(),
                              "advantage_ci95": (1.96 * diff.std() / np.sqrt(diff.count())).to_numpy(),
                              "advantage_worst": diff.min().to_numpy()})
    return table.merge(advantage, on="network")


def plot_kept(table: pd.DataFrame) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    networks = list(dict.fromkeys(table["network"]))
    width = 0.2
    x = np.arange(len(networks))
    for i, (rule, split, hatch) in enumerate([(TIER_RULE, "training", "//"), (TIER_RULE, "held_out", ""),
                                              (OFFSETS_RULE, "training", "//"),
                                              (OFFSETS_RULE, "held_out", "")]):
        part = table[table["rule"] == rule].set_index("network").loc[networks]
        ax.bar(x - 0.3 + i * width, part[f"{split}_kept_share"], width,
               yerr=part[f"{split}_kept_share_ci95"], capsize=2, hatch=hatch,
               color="C0" if rule == TIER_RULE else "C3", edgecolor="0.3",
               alpha=0.55 if split == "training" else 1.0,
               label=f"{rule}, {'training' if split == 'training' else 'held-out'} drops")
    ax.set_xticks(x, networks)
    ax.set_ylabel("kept share of the optimizer's gain\nover max-RSRP")
    ax.set_ylim(0, 1.05)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return fig


def plot_shift(rows: pd.DataFrame) -> plt.Figure:
    networks = list(dict.fromkeys(rows["network"]))
    fig, axes = plt.subplots(1, len(networks), figsize=(3.0 * len(networks), 3.2), sharey=True,
                             layout="constrained")
    for ax, network in zip(np.atleast_1d(axes), networks, strict=True):
        part = rows[(rows["network"] == network) & rows["split"].isin(["held_out", "moved"])]
        base = part["moved_from"].iloc[0]
        part = part.assign(moved=(part["hotspot_share"] - base).abs())
        for rule, colour in ((TIER_RULE, "C0"), (OFFSETS_RULE, "C3")):
            g = part[part["rule"] == rule].groupby("moved")["kept_share"]
            mean = g.mean()
            half = 1.96 * g.std() / np.sqrt(g.count())
            ax.errorbar(mean.index, mean.to_numpy(), yerr=half.to_numpy(), marker="o", capsize=3,
                        color=colour, label=rule)
        ax.set_title(network, fontsize=10)
        ax.set_xlabel("share of users moved\n(hotspot share changed by)")
        ax.grid(True, alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("kept share, held-out drops")
    np.atleast_1d(axes)[0].legend(fontsize=8)
    return fig


def plot_training(rows: pd.DataFrame) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for (rule, penalty, split), part in rows.groupby(["rule", "penalty_per_db", "split"]):
        g = part.groupby("training_drops")["kept_share"]
        mean = g.mean()
        what = "best per-tier bias" if rule == TIER_RULE else \
            f"per-cell, {'penalty ' + format(penalty, 'g') if penalty else 'no penalty'}"
        label = f"{what}, {'training' if split == 'training' else 'held-out'}"
        colour = "C0" if rule == TIER_RULE else "C3" if penalty else "C7"
        ax.plot(mean.index, mean.to_numpy(), marker="o", linestyle="--" if split == "training" else "-",
                color=colour, label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("training drops")
    ax.set_ylabel("kept share (hetnet)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=3)
    parser.add_argument("--held-out", type=int, default=10)
    parser.add_argument("--networks", nargs="*", default=list(NETWORKS))
    parser.add_argument("--resume", action="store_true")
    add_output_options(parser, "deployable")
    args = parser.parse_args()
    out = Path(args.out)
    figures = figures_folder(parser, args, stand_ins(args.networks))
    before = snapshot(figures)

    t0 = time.perf_counter()
    parts = []
    for name in args.networks:
        for k in range(args.replicates):
            part = cached(out / f"{name}_{k}.csv", args.resume,
                          lambda n=name, r=k: replicate(n, r, args.held_out))
            parts.append(part)
            print(f"{name} replicate {k}: done ({time.perf_counter() - t0:.0f} s)", flush=True)
    rows = pd.concat(parts, ignore_index=True)
    training = pd.concat([cached(out / f"training_{k}.csv", args.resume,
                                 lambda r=k: training_question(r, args.held_out))
                          for k in range(args.replicates)], ignore_index=True)

    power = pd.concat([cached(out / f"power_{k}.csv", args.resume,
                              lambda r=k: power_question(r, POWER_HELD_OUT))
                       for k in range(args.replicates)], ignore_index=True)
    power_table = (power.groupby(["rule", "split"])
                   .agg(drops=("kept_share", "count"), kept_share=("kept_share", "mean"),
                        kept_share_worst=("kept_share", "min"), gap=("gap", "mean"),
                        gap_worst=("gap", "max"), optimum_gap=("optimum_gap", "mean"),
                        optimum_gap_worst=("optimum_gap", "max"),
                        patterns_in_use=("patterns_in_use", "median"),
                        dropped_share=("dropped_share", "mean"), sleep=("sleep", "mean"),
                        off_runs=("off_runs_mean", "mean"))
                   .reset_index())
    power_table.to_csv(figures / "deployable_power.csv", index=False, float_format="%.4g")

    table = summary_table(rows)
    table.to_csv(figures / "deployable.csv", index=False, float_format="%.4g")
    shift = (rows[rows["split"].isin(["held_out", "moved"])]
             .assign(moved=lambda f: (f["hotspot_share"] - f["moved_from"]).abs().round(4))
             .groupby(["network", "rule", "moved"])["kept_share"].agg(["mean", "min", "count"])
             .reset_index())
    shift.to_csv(figures / "deployable_shift.csv", index=False, float_format="%.4g")
    train_table = (training.groupby(["rule", "training_drops", "penalty_per_db", "split"])
                   .agg(kept_share=("kept_share", "mean"), kept_share_worst=("kept_share", "min"),
                        gap=("gap", "mean"), fit_s=("fit_s", "mean")).reset_index())
    train_table.to_csv(figures / "deployable_training.csv", index=False, float_format="%.4g")
    times = (rows.groupby("network")
             .agg(n_cells=("n_cells", "first"), n_users=("n_users", "first"),
                  n_links=("n_links", "median"), rounds=("rounds", "median"),
                  fit_s_median=("fit_s", "median"), fit_s_worst=("fit_s", "max"),
                  optimizer_s_median=("optimizer_s", "median"))
             .reset_index())
    times["fit_over_optimizer"] = times["fit_s_median"] / times["optimizer_s_median"]
    times.to_csv(figures / "deployable_time.csv", index=False, float_format="%.4g")

    print(f"{args.replicates} replicates × {args.held_out} held-out drops, "
          f"{time.perf_counter() - t0:.0f} s")
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    print(shift.to_string(float_format=lambda v: f"{v:.3f}"))
    print(train_table.to_string(float_format=lambda v: f"{v:.4g}"))
    print(times.to_string(float_format=lambda v: f"{v:.3g}"))
    print(power_table.to_string(float_format=lambda v: f"{v:.4g}"))
    for name, fig in (("deployable_kept.png", plot_kept(table)),
                      ("deployable_shift.png", plot_shift(rows)),
                      ("deployable_training.png", plot_training(training))):
        fig.savefig(figures / name, dpi=90, bbox_inches="tight")
        plt.close(fig)
    say_written(figures, out, before)


if __name__ == "__main__":
    main()
