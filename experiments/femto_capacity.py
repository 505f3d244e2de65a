"""Experiment (d) of docs/experiments.md: third-party femtocells on real base-station locations.

Scenario the shipped scenario ``sf_femto``: the OpenCelliD LTE sites of one operator in San
Francisco (``../shared/data``), 3 sectors each, a downtown study window with a 500 m guard
band, open-access femtocells at ``adoption`` × the WiFi AP density with lognormal
backhaul caps, 80 % indoor users. Where the data file is absent, its synthetic stand-in
the shipped scenario ``city_synthetic`` runs instead (with a warning).

1. Capacity gain vs adoption: the capacity (largest users per km² whose pooled
   5th-percentile rate is ≥ ``--target``) of max-RSRP and of the optimizer (``ipm``, the
   default method with backhaul caps) at each adoption, in ``--replicates`` independent
   replicates of ``--drops`` drops;
   gain = capacity ÷ capacity without femtocells, per replicate (the same drops).
2. Price sweep: at ``--price-adoption`` and the optimizer's capacity without femtocells
   (the operating point where the macro layer just meets the target), each access
   price: offloaded share of the traffic, payment, operator objective (utility −
   payment), rates and backhaul-cap use.
3. Sensitivity: the optimizer's capacity gain at the highest adoption with femtocells
   in 30 m buildings, as outdoor cells (no wall of their own), or at 4 × the WiFi AP
   density.

Per-task results go to ``--out`` as they finish; ``--resume`` continues an interrupted
run. Tables and figures go to ``--figures`` (default ``results/femto_capacity/figures/``;
``--figures docs/figures`` replaces the published ones, refused when the stand-in runs).

Run: ``python experiments/femto_capacity.py [--replicates 5] [--drops 4] [--workers 2] [--resume]``
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from _outputs import add_output_options, figures_folder, say_written, snapshot, stand_ins

from cellopt import solve
from cellopt.plotting import plot_gain_curve
from cellopt.study.capacity import capacity_sweep
from cellopt.study.scenario import Scenario, load_scenario
from cellopt.study.seeds import drop_seeds
from cellopt.study.store import cached_frame
from cellopt.study.summary import mean_ci, rate_summary
from cellopt.topology import WIFI_DENSITY_PER_KM2

KEY = "femtocells.adoption"


def capacity_table(table: pd.DataFrame, methods: list[str]) -> tuple[pd.DataFrame, dict, dict]:
    """Per adoption and method: capacity and gain (mean ± 95 %); and per method the
    per-replicate capacities and gains, shape (replicates, adoptions)."""
    rows, caps, gains = [], {}, {}
    for method in methods:
        wide = table[table["method"] == method].pivot(index="replicate", columns=KEY,
                                                      values="capacity_per_km2")
        cap = caps[method] = wide.to_numpy()
        gain = gains[method] = cap / cap[:, :1]
        for j, adoption in enumerate(wide.columns):
            c, c_ci = mean_ci(cap[:, j])
            g, g_ci = mean_ci(gain[:, j])
            rows.append(dict(adoption=adoption, method=method, capacity_per_km2=c,
                             capacity_ci=c_ci, gain=g, gain_ci=g_ci))
    return pd.DataFrame(rows), caps, gains


def non_decreasing(gain: np.ndarray) -> bool:
    """True if no step of the mean gain falls by more than its paired 95 % interval."""
    step = np.diff(gain, axis=1)
    mean, ci = mean_ci(step)
    return bool((mean + ci >= 0).all())


def offload_rows(scenario: Scenario, seeds: list[int], label: str, methods: list[str],
                 **overrides: dict) -> list[dict]:
    """One drop per seed at `overrides`: per method, the operator's economics and rates."""
    rows = []
    for k, seed in enumerate(seeds):
        built = scenario.with_overrides(**overrides).build(seed)
        problem, study = built.problem, built.in_study_area
        third = problem.third_party
        for method in methods:
            sol = solve(problem, method)
            rate = built.per_user(sol.user_rate_mbps)
            # Traffic the study-area users draw from third-party cells [Mbit/s].
            offloaded = built.per_user(np.bincount(
                problem.user, sol.x * problem.rate_mbps * third[problem.cell], minlength=problem.n_users))
            use = sol.cell_traffic_mbps[third] / problem.backhaul_mbps[third]
            rows.append(dict(
                label=label, drop=k, method=method, n_femtocells=int(third.sum()),
                objective=sol.objective, utility=sol.utility, payment=sol.cost,
                offload_share=sol.offload_share,
                study_offload_share=offloaded[study].sum() / max(rate[study].sum(), 1e-300),
                femtocells_used=float((sol.cell_traffic_mbps[third] > 1e-6).mean()) if third.any() else 0.0,
                max_cap_use=float(use.max()) if third.any() else 0.0,
                cap_violations=len(sol.exceeded_backhaul),
                **rate_summary(rate[study]), gap=sol.gap))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="sf_femto")
    parser.add_argument("--adoptions", type=float, nargs="+",
                        default=[0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2])
    parser.add_argument("--methods", nargs="+", default=["max_rsrp", "ipm"],
                        help="baselines, then the optimizer (last)")
    parser.add_argument("--target", type=float, default=1.0, help="5th-percentile rate [Mbit/s]")
    parser.add_argument("--replicates", type=int, default=5)
    parser.add_argument("--drops", type=int, default=4, help="drops pooled per density")
    parser.add_argument("--rel-tol", type=float, default=0.03)
    parser.add_argument("--first-guess", type=float, default=150.0, help="users per km²")
    parser.add_argument("--price-adoption", type=float, default=0.2)
    parser.add_argument("--prices", type=float, nargs="+",
                        default=[0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0])
    parser.add_argument("--price-drops", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--resume", action="store_true")
    add_output_options(parser, "femto_capacity")
    args = parser.parse_args()
    if args.adoptions[0] != 0.0:
        parser.error("--adoptions must start with 0 (the macro-only reference)")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scenario = load_scenario(args.scenario, use_stand_in=True)
    for w in caught:
        print(f"note: {w.message}")
    out = Path(args.out)
    figures = figures_folder(parser, args, stand_ins([args.scenario]))
    before = snapshot(figures)

    # 1. Capacity gain vs adoption.
    table = capacity_sweep(scenario, out / "capacity", grid={KEY: args.adoptions},
                           methods=args.methods, replicates=args.replicates, drops=args.drops,
                           target_p5_mbps=args.target, workers=args.workers, resume=args.resume,
                           rel_tol=args.rel_tol, first_guess_per_km2=args.first_guess)
    summary, caps, gains = capacity_table(table, args.methods)
    summary.to_csv(figures / "femto_capacity.csv", index=False, float_format="%.4f")
    print(f"\n{scenario.name}: capacity at a 5th-percentile rate of {args.target} Mbit/s, "
          f"{args.replicates} replicates × {args.drops} drops (mean ± 95 %):")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for method, gain in gains.items():
        print(f"{method}: gain non-decreasing in adoption within Monte-Carlo error: "
              f"{non_decreasing(gain)}")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    x = 100.0 * np.asarray(args.adoptions)
    plot_gain_curve(x, caps, ax=axes[0], xlabel="adoption [% of WiFi APs]",
                    ylabel=f"capacity [users/km²] at p5 ≥ {args.target:g} Mbit/s")
    plot_gain_curve(x, gains, ax=axes[1], xlabel="adoption [% of WiFi APs]",
                    ylabel="capacity gain over no femtocells")
    for ax in axes:
        ax.set_xscale("symlog", linthresh=0.5)
        ax.set_xticks(x, [f"{v:g}" for v in x])
        ax.set_title(f"mean over {args.replicates} replicates of {args.drops} drops, 95 % band",
                     fontsize="small")
    fig.suptitle(f"{scenario.name}: capacity vs third-party femtocell adoption")
    fig.savefig(figures / "femto_capacity.png", dpi=90, bbox_inches="tight")
    plt.close(fig)

    # 2. Price sweep at the macro layer's capacity.
    optimizer = args.methods[-1]
    opt = summary[(summary["method"] == optimizer) & (summary["adoption"] == 0.0)]
    density = float(opt["capacity_per_km2"].iloc[0]) if len(opt) else 2 * args.first_guess
    seeds = drop_seeds(scenario.seed_base + 1, args.price_drops)  # not the capacity drops
    (out / "price").mkdir(parents=True, exist_ok=True)
    prices = pd.concat([cached_frame(out / "price" / f"price_{p:g}.csv", args.resume,
                                    lambda p=p: offload_rows(
                                        scenario, seeds, f"{p:g}", args.methods,
                                        femtocells={"adoption": args.price_adoption,
                                                    "price_per_mbps": p},
                                        users={"density_per_km2": density}))
                        for p in args.prices], ignore_index=True)
    prices["price_per_mbps"] = prices["label"].astype(float)
    cols = ["offload_share", "study_offload_share", "payment", "objective", "rate_p5_mbps",
            "rate_p50_mbps", "femtocells_used", "max_cap_use", "cap_violations"]
    price_table = prices.groupby(["price_per_mbps", "method"], sort=False)[cols].mean()
    price_table.to_csv(figures / "femto_price.csv", float_format="%.5f")
    print(f"\nprice sweep at adoption {args.price_adoption:g}, {density:.0f} users/km², "
          f"{args.price_drops} drops (means):")
    print(price_table.to_string(float_format=lambda v: f"{v:.4f}"))
    for method, rows in prices.groupby("method", sort=False):
        print(f"{method}: largest T_j / C_j {rows['max_cap_use'].max():.9f}, drops with cells "
              f"over their cap before scaling {int((rows['cap_violations'] > 0).sum())} of {len(rows)}")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    xp = np.asarray(args.prices)
    for ax, col, label in ((axes[0], "study_offload_share", "offloaded share of the traffic"),
                           (axes[1], "objective", "operator objective (utility − payment)")):
        wide = prices.pivot_table(index="drop", columns=["method", "price_per_mbps"], values=col)
        curves = {m: wide[m][xp].to_numpy() for m in args.methods}
        plot_gain_curve(xp, curves, ax=ax, xlabel="access price [utility per Mbit/s]", ylabel=label)
        ax.set_xscale("symlog", linthresh=0.01)
        ax.set_title(f"mean over {args.price_drops} drops, 95 % band", fontsize="small")
    fig.suptitle(f"{scenario.name}: adoption {100 * args.price_adoption:g} %, {density:.0f} users/km²")
    fig.savefig(figures / "femto_price.png", dpi=90, bbox_inches="tight")
    plt.close(fig)

    # 3. Sensitivity: the capacity gain at the highest adoption under other assumptions.
    top = args.adoptions[-1]
    variants = {
        "as shipped (15 m buildings)": {},
        "femtocells in 30 m buildings": {"radio": {"building_radius_m": 30.0}},
        "femtocells outdoors (no own wall)": {"radio": {"indoor_tiers": []}},
        "4 × the WiFi AP density": {"femtocells": {"wifi_density_per_km2": 4 * WIFI_DENSITY_PER_KM2}},
    }
    sensitivity = []
    for i, (label, change) in enumerate(variants.items()):
        variant = scenario.with_overrides(**change) if change else scenario
        cap = capacity_sweep(variant, out / f"variant_{i}", grid={KEY: [0.0, top]},
                             methods=[optimizer],
                             replicates=args.replicates, drops=args.drops,
                             target_p5_mbps=args.target, workers=args.workers,
                             resume=args.resume, progress=False, rel_tol=args.rel_tol,
                             first_guess_per_km2=args.first_guess)
        table_i, _, gain_i = capacity_table(cap, [optimizer])
        g, g_ci = mean_ci(gain_i[optimizer][:, -1])
        sensitivity.append(dict(variant=label, capacity_without_per_km2=table_i["capacity_per_km2"].iloc[0],
                                capacity_with_per_km2=table_i["capacity_per_km2"].iloc[-1],
                                gain=g, gain_ci=g_ci))
    sensitivity = pd.DataFrame(sensitivity)
    sensitivity.to_csv(figures / "femto_sensitivity.csv", index=False, float_format="%.4f")
    print(f"\noptimized capacity gain at adoption {top:g} under other assumptions (mean ± 95 %):")
    print(sensitivity.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    say_written(figures, out, before)


if __name__ == "__main__":
    main()
