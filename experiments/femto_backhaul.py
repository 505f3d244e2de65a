"""Experiment (b) of docs/experiments.md: utility and rates vs the backhaul capacity of femtocells.

Drops of the shipped scenario ``femto_backhaul`` (57 macro cells, open-access femtocells at
40 per km², 80 % indoor users) with every femtocell's backhaul cap set to each value of
``--backhaul`` [Mbit/s]; max-RSRP and load-aware ignore the caps when choosing (their
capped cells are scaled down), the optimizer respects them. Writes the per-drop results
into ``--out`` (resumable), and the curves and the table into ``--figures`` (default
``results/femto_backhaul/figures/``; ``--figures docs/figures`` replaces the published ones).

Run: ``python experiments/femto_backhaul.py [--drops 5] [--workers 2] [--resume]``
"""

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np
from _outputs import add_output_options, figures_folder, say_written, snapshot

from cellopt.plotting import plot_gain_curve
from cellopt.study.scenario import load_scenario
from cellopt.study.sweep import run_sweep

KEY = "femtocells.backhaul_mbps"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drops", type=int, default=5)
    parser.add_argument("--backhaul", type=float, nargs="+", default=[0.5, 1, 2, 5, 10, 20, 50])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--resume", action="store_true")
    add_output_options(parser, "femto_backhaul")
    args = parser.parse_args()

    figures = figures_folder(parser, args)
    before = snapshot(figures)
    scenario = load_scenario("femto_backhaul")
    index = run_sweep(scenario, args.out, drops=args.drops, grid={KEY: args.backhaul},
                      workers=args.workers, resume=args.resume)
    table = index.groupby([KEY, "method"], sort=False)[
        ["objective", "upper_bound", "rate_p5_mbps", "rate_p50_mbps"]].mean()
    table.to_csv(figures / "femto_backhaul.csv", float_format="%.4f")
    print(f"{args.drops} drops of {scenario.name}, mean over drops:")
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))

    x = np.asarray(args.backhaul, float)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, col, label in ((axes[0], "objective", "utility Σ log r"),
                           (axes[1], "rate_p5_mbps", "5th-percentile rate [Mbit/s]")):
        wide = index.pivot_table(index=["drop", KEY], columns="method", values=col)
        curves = {m: wide[m].unstack(KEY).to_numpy() for m in dict.fromkeys(index["method"])}
        plot_gain_curve(x, curves, ax=ax, xlabel="femtocell backhaul [Mbit/s]", ylabel=label)
        ax.set_xscale("log")
    fig.savefig(figures / "femto_backhaul.png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    say_written(figures, args.out, before)


if __name__ == "__main__":
    main()
