"""Experiment (d′) of docs/experiments.md: third-party femtocells with traffic where people are.

The setting of experiment (d) — the shipped scenario ``sf_femto``: OpenCelliD LTE sites
of one operator in San Francisco (``../shared/data``; its synthetic stand-in
``city_synthetic`` where absent), open-access femtocells at ``adoption`` × the WiFi AP
density with lognormal backhaul caps, 80 % indoor users — with three changes:

- **finite demand**: every user wants ``--demand`` Mbit/s (1 by default);
- **load-coupled interference**: a cell interferes only on the share of the band it
  uses (``[problem] interference = "load_coupled"``, :mod:`cellopt.load_coupling`);
- **traffic where people are**: a share (``--colocated``: 0, 30 and 60 %) of the indoor
  users is inside the buildings of the femtocells (``[users] colocated_fraction``).

Capacity is demand-based: the largest users per km² at which ``--served`` (95 %) of the
study-area users receive their demand, for max-RSRP and the optimizer (``--optimizer``,
``ipm`` by default: the fastest certified method on these demand-bound problems), in
``--replicates`` replicates of ``--drops`` drops. The gain is the capacity ÷ the
capacity of the same replicate without femtocells (there, nobody is co-located).

A sensitivity table repeats the optimizer's gain at ``--sensitivity-adoption`` (5 %) with
60 % co-located users under other assumptions: full-buffer interference (every cell
always on), half and twice the demand, and femtocells outdoors.

Per-task results go to ``--out`` as they finish; ``--resume`` continues an interrupted
run. Tables and figures go to ``--figures`` (default ``results/femto_demand/figures/``;
``--figures docs/figures`` replaces the published ones, refused when the stand-in runs).

Run: ``python experiments/femto_demand.py [--replicates 3] [--drops 2] [--workers 2] [--resume]``
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

from cellopt.plotting import plot_gain_curve
from cellopt.study.capacity import capacity_sweep
from cellopt.study.scenario import Scenario, load_scenario
from cellopt.study.summary import mean_ci

KEY = "femtocells.adoption"


def traffic_scenario(scenario: Scenario, demand_mbps: float, colocated: float,
                     interference: str = "load_coupled") -> Scenario:
    """`scenario` with every user wanting `demand_mbps`, a `colocated` share of the indoor
    users in femtocell buildings, and the given interference model."""
    return scenario.with_overrides(
        users={"demand_mbps": demand_mbps, "colocated_fraction": colocated},
        problem={"interference": interference})


def capacities(scenario: Scenario, out: Path, adoptions: list[float], methods: list[str],
               args: argparse.Namespace) -> pd.DataFrame:
    """Capacity per (adoption, method, replicate) of `scenario`, demand metric."""
    coupled = scenario.problem.get("interference") == "load_coupled"
    rounds = {"load_tol": args.load_tol, "max_rounds": args.max_rounds} if coupled else {}
    return capacity_sweep(
        scenario, out, grid={KEY: adoptions}, methods=methods, replicates=args.replicates,
        drops=args.drops, metric="demand", target_served_share=args.served, workers=args.workers,
        resume=args.resume, rel_tol=args.rel_tol, first_guess_per_km2=args.first_guess, **rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="sf_femto")
    parser.add_argument("--adoptions", type=float, nargs="+",
                        default=[0.005, 0.01, 0.02, 0.05, 0.1, 0.2])
    parser.add_argument("--colocated", type=float, nargs="+", default=[0.0, 0.3, 0.6])
    parser.add_argument("--demand", type=float, default=1.0, help="Mbit/s per user")
    parser.add_argument("--served", type=float, default=0.95, help="share receiving its demand")
    parser.add_argument("--optimizer", default="ipm")
    parser.add_argument("--replicates", type=int, default=3)
    parser.add_argument("--drops", type=int, default=2, help="drops pooled per density")
    parser.add_argument("--rel-tol", type=float, default=0.05)
    parser.add_argument("--first-guess", type=float, default=200.0, help="users per km²")
    parser.add_argument("--load-tol", type=float, default=0.01)
    parser.add_argument("--max-rounds", type=int, default=10)
    parser.add_argument("--sensitivity-adoption", type=float, default=0.05)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--resume", action="store_true")
    add_output_options(parser, "femto_demand")
    args = parser.parse_args()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        base = load_scenario(args.scenario, use_stand_in=True)
    for w in caught:
        print(f"note: {w.message}")
    out = Path(args.out)
    figures = figures_folder(parser, args, stand_ins([args.scenario]))
    before = snapshot(figures)
    methods = ["max_rsrp", args.optimizer]
    t0 = time.perf_counter()

    # 1. Capacity without femtocells (nobody co-located), then with, per co-located share.
    plain = traffic_scenario(base, args.demand, 0.0)
    reference = capacities(plain, out / "no_femtocells", [0.0], methods, args)
    ref = {m: reference[reference["method"] == m].sort_values("replicate")["capacity_per_km2"]
           .to_numpy() for m in methods}
    rows, curves, tables = [], {}, {}
    for share in args.colocated:
        table = tables[share] = capacities(traffic_scenario(base, args.demand, share),
                                           out / f"colocated_{share:g}", args.adoptions, methods,
                                           args)
        for method in methods:
            wide = table[table["method"] == method].pivot(index="replicate", columns=KEY,
                                                          values="capacity_per_km2")
            gain = wide.to_numpy() / ref[method][:, None]
            curves[f"{method}, {100 * share:g} % co-located"] = np.column_stack(
                [np.ones(len(gain)), gain])
            c, c_ci = mean_ci(wide.to_numpy())
            g, g_ci = mean_ci(gain)
            rows.extend(dict(colocated=share, adoption=a, method=method, capacity_per_km2=c[j],
                             capacity_ci=c_ci[j], gain=g[j], gain_ci=g_ci[j])
                        for j, a in enumerate(wide.columns))
    for method in methods:
        c, c_ci = mean_ci(ref[method])
        rows.append(dict(colocated=0.0, adoption=0.0, method=method, capacity_per_km2=c,
                         capacity_ci=c_ci, gain=1.0, gain_ci=0.0))
    summary = pd.DataFrame(rows).sort_values(["colocated", "method", "adoption"])
    summary.to_csv(figures / "femto_demand.csv", index=False, float_format="%.4f")
    print(f"\n{base.name}: capacity at {100 * args.served:g} % of users receiving "
          f"{args.demand:g} Mbit/s, load-coupled, {args.replicates} replicates × {args.drops} "
          "drops (mean ± 95 %):")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))

    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = 100.0 * np.array([0.0, *args.adoptions])
    plot_gain_curve(x, curves, ax=ax, xlabel="adoption [% of WiFi APs]",
                    ylabel="capacity gain over no femtocells")
    ax.set_xscale("symlog", linthresh=0.5)
    ax.set_xticks(x, [f"{v:g}" for v in x])
    ax.set_xlim(x[0], x[-1])
    ax.set_title(f"{base.name}: {args.demand:g} Mbit/s per user, {100 * args.served:g} % served, "
                 f"load-coupled; mean of {args.replicates} replicates, 95 % band", fontsize="small")
    fig.savefig(figures / "femto_demand.png", dpi=90, bbox_inches="tight")
    plt.close(fig)

    # 2. Sensitivity of the optimizer's gain at one adoption with 60 % co-located users.
    top, share = args.sensitivity_adoption, 0.6
    variants = {
        "full-buffer interference (cells always on)": traffic_scenario(base, args.demand, share,
                                                                       "full"),
        "half the demand": traffic_scenario(base, args.demand / 2, share),
        "twice the demand": traffic_scenario(base, 2 * args.demand, share),
        "femtocells outdoors (no own wall)": traffic_scenario(base, args.demand, share)
        .with_overrides(radio={"indoor_tiers": []}),
    }
    sensitivity = []
    if share in tables and top in args.adoptions:  # the main result, from the sweep above
        main = tables[share]
        c1 = main[(main["method"] == args.optimizer) & (main[KEY] == top)].sort_values(
            "replicate")["capacity_per_km2"].to_numpy()
        g, g_ci = mean_ci(c1 / ref[args.optimizer])
        sensitivity.append(dict(variant=f"as above (load-coupled, {args.demand:g} Mbit/s)",
                                capacity_without_per_km2=ref[args.optimizer].mean(),
                                capacity_with_per_km2=c1.mean(), gain=g, gain_ci=g_ci))
    for i, (label, variant) in enumerate(variants.items()):
        without = variant.with_overrides(users={"colocated_fraction": 0.0})
        cap0 = capacities(without, out / f"variant_{i}_without", [0.0], [args.optimizer], args)
        cap1 = capacities(variant, out / f"variant_{i}_with", [top], [args.optimizer], args)
        c0 = cap0.sort_values("replicate")["capacity_per_km2"].to_numpy()
        c1 = cap1.sort_values("replicate")["capacity_per_km2"].to_numpy()
        g, g_ci = mean_ci(c1 / c0)
        sensitivity.append(dict(variant=label, capacity_without_per_km2=c0.mean(),
                                capacity_with_per_km2=c1.mean(), gain=g, gain_ci=g_ci))
    sensitivity = pd.DataFrame(sensitivity)
    sensitivity.to_csv(figures / "femto_demand_sensitivity.csv", index=False, float_format="%.4f")
    print(f"\n{args.optimizer} capacity gain at adoption {top:g} with {100 * share:g} % co-located "
          "users under other assumptions (mean ± 95 %):")
    print(sensitivity.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"\nwall time {time.perf_counter() - t0:.0f} s")
    say_written(figures, out, before)


if __name__ == "__main__":
    main()
