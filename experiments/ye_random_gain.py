"""Experiment (a′) of docs/experiments.md: association gain on a random multi-tier layout.

Drops of the shipped scenario ``ye_random`` (our reading of the set-up of Ye et al. 2013:
Poisson macro / pico / femto tiers at 46 / 35 / 20 dBm with densities 1 : 5 : 10,
single-slope path loss, uniform users, a torus) solved by max-RSRP, range expansion at
every pico bias × femto bias in {0, 3, 6, 9, 12} dB, the optimizer (``dual``, fractional
association) and the optimizer with single association. Gains over max-RSRP are taken
per drop (paired), then averaged with a normal 95 % interval over drops.

Per-drop results go to ``--out`` as they finish (``--resume`` continues an interrupted
run). Writes into ``--figures`` (default ``results/ye_random_gain/figures/``; ``--figures
docs/figures`` replaces the published ones): ``ye_random_gain.csv`` (one row per method),
``ye_random_bias.csv`` (the 25 bias pairs), ``ye_random_compare.csv`` (this layout, the
hexagonal default of ``hetnet_gain.csv`` and the published gains),
``ye_random_rate_cdf.png``, ``ye_random_gain.png`` and ``ye_random_bias.png``.

Run: ``python experiments/ye_random_gain.py [--drops 10] [--workers 2] [--resume]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from _outputs import add_output_options, figures_folder, say_written, snapshot

from cellopt.plotting import plot_rate_cdf
from cellopt.study.scenario import load_scenario
from cellopt.study.summary import mean_ci
from cellopt.study.sweep import load_rates, run_sweep

ROOT = Path(__file__).resolve().parents[1]
#: Range-expansion biases searched, per tier [dB].
BIASES_DB = (0.0, 3.0, 6.0, 9.0, 12.0)
BASE = "max_rsrp"
OPT = "optimized (dual)"
OPT_SINGLE = "optimized, single association"
#: Ye et al. 2013: utility-optimal association over max received power.
PUBLISHED_P5_GAIN = 3.5
PUBLISHED_P50_GAIN = 2.0
#: Table of experiment (a), the hexagonal default (read, not recomputed).
HEXAGONAL_TABLE = ROOT / "docs" / "figures" / "hetnet_gain.csv"


def re_label(pico_bias_db: float, femto_bias_db: float) -> str:
    """Method label of range expansion with these per-tier biases.

    Parameters
    ----------
    pico_bias_db, femto_bias_db : float
        Range-expansion bias of the pico and of the femto tier [dB].

    Returns
    -------
    str
    """
    return f"RE pico {pico_bias_db:g} / femto {femto_bias_db:g} dB"


def method_specs() -> list[str | dict]:
    """The scenario's ``methods`` list of this experiment: max-RSRP, range expansion at
    every bias pair of :data:`BIASES_DB`, the optimizer, the optimizer with single
    association."""
    expansion = [{"name": "range_expansion", "bias_db": {"pico": p, "femto": f},
                  "label": re_label(p, f)} for p in BIASES_DB for f in BIASES_DB]
    return [BASE, *expansion, {"name": "dual", "label": OPT},
            {"name": "dual", "single_association": True, "label": OPT_SINGLE}]


def gain_table(index: pd.DataFrame) -> pd.DataFrame:
    """Per method: mean rates, and mean gains over max-RSRP per drop with 95 % intervals.

    Parameters
    ----------
    index : pandas.DataFrame
        The sweep's index (one row per drop and method).

    Returns
    -------
    pandas.DataFrame
        Indexed by method label, in the sweep's method order.
    """
    wide = index.pivot_table(index="drop", columns="method",
                             values=["rate_p5_mbps", "rate_p50_mbps", "objective", "wall_s"])
    methods = list(dict.fromkeys(index["method"]))
    table = pd.DataFrame(index=pd.Index(methods, name="method"))
    for col, name in (("rate_p5_mbps", "p5"), ("rate_p50_mbps", "p50")):
        rates_mbps = wide[col][methods].to_numpy()  # (drops, methods)
        gain, gain_ci = mean_ci(rates_mbps / wide[col][[BASE]].to_numpy())
        table[f"{name}_mbps"] = rates_mbps.mean(axis=0)
        table[f"{name}_gain"] = gain
        table[f"{name}_gain_ci95"] = gain_ci
    table["utility"] = wide["objective"][methods].mean().to_numpy()
    table["wall_s"] = wide["wall_s"][methods].mean().to_numpy()
    return table


def bias_grid(table: pd.DataFrame) -> pd.DataFrame:
    """The range-expansion rows of `table`, with their pico and femto biases.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`gain_table`.

    Returns
    -------
    pandas.DataFrame
        One row per bias pair: ``pico_bias_db``, ``femto_bias_db`` and the columns of `table`.
    """
    rows = [{"pico_bias_db": p, "femto_bias_db": f, **table.loc[re_label(p, f)].to_dict()}
            for p in BIASES_DB for f in BIASES_DB]
    return pd.DataFrame(rows)


def hexagonal_gains(path: Path) -> pd.Series:
    """Gains of the hexagonal default (experiment (a)) read from its table: the optimizer
    and the range-expansion bias best at the 5th percentile.

    Parameters
    ----------
    path : Path
        The table ``hetnet_gain.csv`` of experiment (a).

    Returns
    -------
    pandas.Series
        ``best_re`` (its label) and the mean gains with their 95 % half-widths.
    """
    hexa = pd.read_csv(path, index_col="method")
    expansion = hexa[hexa.index.str.startswith("RE ")]
    best = expansion["p5_gain"].idxmax()
    return pd.Series({"best_re": best,
                      "re_p5_gain": hexa.loc[best, "p5_gain"],
                      "re_p5_gain_ci95": hexa.loc[best, "p5_gain_ci95"],
                      "re_p50_gain": hexa.loc[best, "p50_gain"],
                      "re_p50_gain_ci95": hexa.loc[best, "p50_gain_ci95"],
                      "opt_p5_gain": hexa.loc[OPT, "p5_gain"],
                      "opt_p5_gain_ci95": hexa.loc[OPT, "p5_gain_ci95"],
                      "opt_p50_gain": hexa.loc[OPT, "p50_gain"],
                      "opt_p50_gain_ci95": hexa.loc[OPT, "p50_gain_ci95"]})


def plot_gains(table: pd.DataFrame, shown: dict[str, str], hexa: pd.Series) -> plt.Figure:
    """Bar chart of the 5th-percentile and median gains (± 95 %) with the published marks.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`gain_table`.
    shown : dict
        Legend label → method label of `table`, in bar order.
    hexa : pandas.Series
        From :func:`hexagonal_gains`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = plt.subplots(figsize=(7, 4.2))
    n_bars = len(shown) + 1
    width = 0.8 / n_bars
    groups = np.arange(2.0)
    for i, (legend, method) in enumerate(shown.items()):
        x = groups - 0.4 + (i + 0.5) * width
        ax.bar(x, table.loc[method, ["p5_gain", "p50_gain"]].to_numpy(float), width,
               yerr=table.loc[method, ["p5_gain_ci95", "p50_gain_ci95"]].to_numpy(float),
               capsize=3, label=legend)
    x = groups - 0.4 + (n_bars - 0.5) * width
    ax.bar(x, [hexa["opt_p5_gain"], hexa["opt_p50_gain"]], width,
           yerr=[hexa["opt_p5_gain_ci95"], hexa["opt_p50_gain_ci95"]], capsize=3,
           color="0.75", hatch="//", edgecolor="0.4", label="hexagonal default, optimized (dual)")
    ax.hlines([PUBLISHED_P5_GAIN, PUBLISHED_P50_GAIN], groups - 0.45, groups + 0.45,
              colors="k", linestyles="--", label="published (Ye et al. 2013)")
    ax.axhline(1.0, color="0.3", linewidth=0.8)
    ax.set_xticks(groups, ["5th-percentile rate", "median rate"])
    ax.set_ylabel("gain over max-RSRP")
    ax.set_ylim(0.0, max(PUBLISHED_P5_GAIN, float(table["p5_gain"].max())) * 1.12)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)  # outside the bars
    return fig


def plot_bias(grid: pd.DataFrame) -> plt.Figure:
    """Heat maps of the mean 5th-percentile and median gains over the bias pairs.

    Parameters
    ----------
    grid : pandas.DataFrame
        From :func:`bias_grid`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.6), layout="constrained")
    ticks = [f"{b:g}" for b in BIASES_DB]
    for ax, col, title in zip(axes, ("p5_gain", "p50_gain"), ("5th-percentile gain", "median gain"),
                              strict=True):
        values = grid.pivot(index="pico_bias_db", columns="femto_bias_db", values=col)
        image = ax.imshow(values.to_numpy(), origin="lower", cmap="viridis")
        peak = np.unravel_index(np.nanargmax(values.to_numpy()), values.shape)
        text = np.char.mod("%.2f", values.to_numpy())
        for (r, c), label in np.ndenumerate(text):
            ax.text(c, r, label, ha="center", va="center", fontsize=7,
                    color="k" if (r, c) == peak else "w", weight="bold" if (r, c) == peak else None)
        ax.set_xticks(range(len(ticks)), ticks)
        ax.set_yticks(range(len(ticks)), ticks)
        ax.set_xlabel("femto bias [dB]")
        ax.set_ylabel("pico bias [dB]")
        ax.set_title(f"range expansion: {title}", fontsize=10)
        fig.colorbar(image, ax=ax, shrink=0.85)
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drops", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--resume", action="store_true")
    add_output_options(parser, "ye_random_gain")
    args = parser.parse_args()

    figures = figures_folder(parser, args)
    before = snapshot(figures)
    t0 = time.perf_counter()
    scenario = load_scenario("ye_random").with_overrides(methods=method_specs())
    index = run_sweep(scenario, args.out, drops=args.drops, workers=args.workers,
                      resume=args.resume)
    index = index[index["drop"] < args.drops]  # leave out the extra drops of a longer run
    wall_s = time.perf_counter() - t0

    table = gain_table(index)
    grid = bias_grid(table)
    best_p5 = re_label(*grid.loc[grid["p5_mbps"].idxmax(), ["pico_bias_db", "femto_bias_db"]])
    best_p50 = re_label(*grid.loc[grid["p50_mbps"].idxmax(), ["pico_bias_db", "femto_bias_db"]])
    grid.to_csv(figures / "ye_random_bias.csv", index=False, float_format="%.4f")

    roles = {BASE: ["baseline"], OPT: ["optimizer"], OPT_SINGLE: ["optimizer, single association"]}
    roles.setdefault(best_p5, []).append("best RE for p5")
    roles.setdefault(best_p50, []).append("best RE for median")
    chosen = list(dict.fromkeys([BASE, best_p5, best_p50, OPT, OPT_SINGLE]))
    gains = table.loc[chosen].copy()
    gains.insert(0, "role", ["; ".join(roles[m]) for m in chosen])
    gains.to_csv(figures / "ye_random_gain.csv", float_format="%.4f")

    hexa = hexagonal_gains(HEXAGONAL_TABLE)
    compare = pd.DataFrame([
        {"layout": "random (ye_random), optimized (dual)", "p5_gain": gains.loc[OPT, "p5_gain"],
         "p5_gain_ci95": gains.loc[OPT, "p5_gain_ci95"], "p50_gain": gains.loc[OPT, "p50_gain"],
         "p50_gain_ci95": gains.loc[OPT, "p50_gain_ci95"]},
        {"layout": f"random (ye_random), {best_p5}", "p5_gain": gains.loc[best_p5, "p5_gain"],
         "p5_gain_ci95": gains.loc[best_p5, "p5_gain_ci95"],
         "p50_gain": gains.loc[best_p5, "p50_gain"],
         "p50_gain_ci95": gains.loc[best_p5, "p50_gain_ci95"]},
        {"layout": "hexagonal default (hetnet), optimized (dual)", "p5_gain": hexa["opt_p5_gain"],
         "p5_gain_ci95": hexa["opt_p5_gain_ci95"], "p50_gain": hexa["opt_p50_gain"],
         "p50_gain_ci95": hexa["opt_p50_gain_ci95"]},
        {"layout": f"hexagonal default (hetnet), {hexa['best_re']}", "p5_gain": hexa["re_p5_gain"],
         "p5_gain_ci95": hexa["re_p5_gain_ci95"], "p50_gain": hexa["re_p50_gain"],
         "p50_gain_ci95": hexa["re_p50_gain_ci95"]},
        {"layout": "published (Ye et al. 2013)", "p5_gain": PUBLISHED_P5_GAIN,
         "p5_gain_ci95": np.nan, "p50_gain": PUBLISHED_P50_GAIN, "p50_gain_ci95": np.nan},
    ])
    compare.to_csv(figures / "ye_random_compare.csv", index=False, float_format="%.4f")

    n_drops = index["drop"].nunique()
    n_users = int(index.loc[index["method"] == BASE, "n_users"].mean())
    outage = index.groupby("method")["n_outage"].sum().loc[chosen] / index.groupby("method")[
        "n_users"].sum().loc[chosen]
    print(f"{n_drops} drops of {scenario.name} (about {n_users} users each), {wall_s:.0f} s:")
    print(gains.to_string(float_format=lambda v: f"{v:.3f}"))
    print(f"best range expansion for p5: {best_p5}; for the median: {best_p50}")
    print("outage fraction:", outage.round(4).to_dict())
    print(compare.to_string(float_format=lambda v: f"{v:.3f}"))

    rates = pd.concat([load_rates(args.out, "g000", int(k)) for k in sorted(index["drop"].unique())],
                      ignore_index=True)
    ax = plot_rate_cdf({m: rates[m].to_numpy() for m in chosen})
    ax.set_title(f"random three-tier layout, {n_drops} drops × about {n_users:,} users")
    ax.figure.savefig(figures / "ye_random_rate_cdf.png", dpi=90, bbox_inches="tight")
    plt.close(ax.figure)

    shown = {f"best range expansion ({best_p5.removeprefix('RE ')})": best_p5,
             "optimized (dual)": OPT, "optimized, single association": OPT_SINGLE}
    fig = plot_gains(gains, shown, hexa)
    fig.savefig(figures / "ye_random_gain.png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    fig = plot_bias(grid)
    fig.savefig(figures / "ye_random_bias.png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    say_written(figures, args.out, before)


if __name__ == "__main__":
    main()
