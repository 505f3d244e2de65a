"""Command line: ``cellopt run`` (one drop), ``cellopt experiment`` (sweeps), ``cellopt plot``."""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from cellopt import __version__
from cellopt.linktable import LinkTable
from cellopt.network import TIERS, Network
from cellopt.plotting import plot_gain_curve, plot_network, plot_rate_cdf
from cellopt.runner import collect, load_rates, rate_summary, run_sweep
from cellopt.scenario import MethodSpec, load_scenario
from cellopt.solution import Solution
from cellopt.solvers import METHODS, solve


def link_summary(network: Network, links: LinkTable) -> pd.DataFrame:
    """Per-tier summary of the max-RSRP association: cells, users, SINR and peak rate.

    Returns
    -------
    pandas.DataFrame
        Index: tiers present and ``all``; columns ``cells``, ``users``, ``user_share``,
        ``sinr_p5_db``, ``sinr_p50_db``, ``rate_p5_mbps``, ``rate_p50_mbps``, where SINR
        and rate are those of each user's max-RSRP link on resource 0.
    """
    first = links.resource == 0
    best = links.best_by("rsrp_dbm")
    on_best = first & (links.cell == best[links.user])
    sinr = np.full(links.n_users, np.nan)
    rate = np.full(links.n_users, np.nan)
    sinr[links.user[on_best]] = links.sinr_db[on_best]
    rate[links.user[on_best]] = links.rate_mbps[on_best] / links.resource_mhz[0] * links.resource_mhz.sum()
    cell_tier = network.cells["tier"].to_numpy()
    user_tier = np.where(best >= 0, cell_tier[np.maximum(best, 0)], "none")
    rows = {}
    for tier in [*(t for t in TIERS if (cell_tier == t).any()), "all"]:
        m = np.ones(links.n_users, bool) if tier == "all" else user_tier == tier
        rows[tier] = {
            "cells": int((cell_tier == tier).sum()) if tier != "all" else network.n_cells,
            "users": int(m.sum()),
            "user_share": float(m.mean()) if links.n_users else np.nan,
            "sinr_p5_db": _percentile(sinr[m], 5),
            "sinr_p50_db": _percentile(sinr[m], 50),
            "rate_p5_mbps": _percentile(rate[m], 5),
            "rate_p50_mbps": _percentile(rate[m], 50),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def _percentile(values: np.ndarray, q: float) -> float:
    return float(np.nanpercentile(values, q)) if len(values) else float("nan")


def method_summary(network: Network, solutions: dict[str, Solution],
                   usable: np.ndarray) -> pd.DataFrame:
    """One row per method: utility, bound, gap, rate percentiles, tier shares, payment,
    offloaded share and cap violations.

    Rates and tier shares are over the users of the study area; users without any
    usable link (``usable`` False, outage) count with rate 0 in the percentiles.
    """
    tiers = network.cells["tier"].to_numpy()
    study = network.in_study_area()
    rows = {}
    for label, sol in solutions.items():
        rate = _all_users(sol.user_rate_mbps, usable)[study]
        serving = _all_users(sol.serving_cell, usable, fill=-1)[study]
        row = {
            "utility": sol.objective,
            "upper_bound": sol.upper_bound,
            "gap": sol.gap,
            **rate_summary(rate),
        }
        for tier in TIERS:
            if (tiers == tier).any():
                row[f"share_{tier}"] = float((tiers[serving[serving >= 0]] == tier).sum()
                                             / max(len(rate), 1))
        if sol.offload_share is not None and (network.cells["owner"] == "third_party").any():
            row["payment"] = sol.cost
            row["offload_share"] = sol.offload_share
        row["backhaul_violations"] = len(sol.exceeded_backhaul)
        row["time_s"] = sol.wall_s
        rows[label] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def _all_users(values: np.ndarray, usable: np.ndarray, fill: float = 0.0) -> np.ndarray:
    """Per-user values of the usable users spread over all users, `fill` for the others."""
    out = np.full(len(usable), fill, dtype=np.asarray(values).dtype)
    out[usable] = values
    return out


def _run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario)
    seed = scenario.seeds[0] if args.seed is None else args.seed
    methods = (scenario.methods if not args.method
               else tuple(MethodSpec(name=m, label=m) for m in args.method))
    t0 = time.perf_counter()
    net, links, problem = scenario.build(seed)
    t_build = time.perf_counter() - t0
    usable = links.users_with_rate()
    solutions = {m.label: solve(problem, method=m.name, **m.options) for m in methods}
    summary = method_summary(net, solutions, usable)
    radio_summary = link_summary(net, links)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    radio_summary.to_csv(out / "radio_summary.csv", index_label="tier")
    summary.to_csv(out / "method_summary.csv", index_label="method")
    served_ids = net.users["user_id"].to_numpy()[usable]
    rates = pd.DataFrame({label: sol.user_rate_mbps for label, sol in solutions.items()})
    rates.insert(0, "user_id", served_ids)
    rates.to_csv(out / "user_rates.csv", index=False)
    last = solutions[methods[-1].label]
    serving = _all_users(last.serving_cell, usable, fill=-1)
    ax = plot_network(net, serving_cell=serving)
    ax.set_title(f"{scenario.name}: {net.n_cells} cells, {net.n_users} users ({methods[-1].label})")
    ax.figure.savefig(out / "network_map.png", dpi=120, bbox_inches="tight")
    plt.close(ax.figure)
    n_out = int((~usable).sum())
    study = net.in_study_area()
    ax = plot_rate_cdf({label: _all_users(sol.user_rate_mbps, usable)[study]
                        for label, sol in solutions.items()})
    ax.set_title(f"{scenario.name}: user rates (seed {seed})")
    ax.figure.savefig(out / "rate_cdf.png", dpi=120, bbox_inches="tight")
    plt.close(ax.figure)

    print(f"cellopt {__version__} - scenario {scenario.name!r} ({scenario.path}), seed {seed}")
    print(f"{net}")
    print(f"built in {t_build:.2f} s: {len(links)} candidate links, {problem}; "
          f"{n_out} user(s) without a usable link (rate 0)")
    if net.study_area is not None:
        print(f"statistics over the {int(study.sum())} users of the study area "
              f"({net.study_area.area / 1e6:.2f} km²); {int((~study).sum())} guard-band users "
              "are solved for but not counted")
    print("\nradio: max-RSRP cell, SINR and full-band peak rate of the serving link")
    print(radio_summary.to_string(float_format=lambda v: f"{v:.2f}"))
    print("\nassociation, one row per method:")
    print(summary.to_string(float_format=lambda v: f"{v:.4g}"))
    print(f"\nwrote {out}/: method_summary.csv, radio_summary.csv, user_rates.csv, "
          "network_map.png, rate_cdf.png")
    return 0


def _resolve_scenario(name: str) -> Path:
    """A scenario file path, or the name of a shipped one (``topologies/<name>.toml``)."""
    path = Path(name)
    if path.suffix != ".toml":
        shipped = Path("topologies") / f"{name}.toml"
        if shipped.exists():
            return shipped
    return path


def _parse_grid(items: Sequence[str] | None) -> dict[str, list[Any]]:
    """``section.key=v1,v2,...`` items (values read as TOML scalars) into a grid."""
    grid: dict[str, list[Any]] = {}
    for item in items or []:
        key, sep, values = item.partition("=")
        if not sep or "." not in key:
            raise ValueError(f"--grid {item!r}; fix: write section.key=v1,v2 (e.g. picos.per_sector=0,2,4)")
        grid[key.strip()] = [tomllib.loads(f"v = {v.strip()}")["v"] for v in values.split(",")]
    return grid


def sweep_table(index: pd.DataFrame, grid_keys: Sequence[str]) -> pd.DataFrame:
    """Mean over drops per grid point and method, with gains over the first method."""
    keys = [*grid_keys, "method"]
    table = index.groupby(keys, sort=False)[["objective", "upper_bound", "gap", "rate_p5_mbps",
                                              "rate_p50_mbps", "rate_mean_mbps"]].mean()
    base = index["method"].iloc[0]
    for col, name in (("rate_p5_mbps", "gain_p5"), ("rate_p50_mbps", "gain_p50")):
        ref = table.xs(base, level="method")[col]
        ref = ref.reindex(table.index.droplevel("method")) if grid_keys else float(ref.iloc[0])
        table[name] = table[col].to_numpy() / np.asarray(ref)
    return table


def _experiment(args: argparse.Namespace) -> int:
    path = _resolve_scenario(args.scenario)
    scenario = load_scenario(path)
    grid = _parse_grid(args.grid)
    out = Path(args.out or Path("results") / scenario.name)
    t0 = time.perf_counter()
    index = run_sweep(scenario, out, drops=args.drops, grid=grid, workers=args.workers,
                      resume=args.resume, scheduler=args.scheduler)
    print(f"cellopt {__version__} - experiment {scenario.name!r}: {index['drop'].nunique()} drop(s)"
          f" x {index['grid_id'].nunique()} grid point(s) in {time.perf_counter() - t0:.1f} s -> {out}")
    print(sweep_table(index, list(grid)).to_string(float_format=lambda v: f"{v:.4g}"))
    _plot_results(out)
    return 0


def _plot_results(out: Path) -> list[Path]:
    """Rate CDFs per grid point (all drops pooled) and, for a one-key grid, gain curves."""
    index = collect(out)
    meta = json.loads((out / "meta.json").read_text())
    written = []
    for gid in index["grid_id"].unique():
        drops = index.loc[index["grid_id"] == gid, "drop"].unique()
        rates = pd.concat([load_rates(out, gid, int(k)) for k in drops], ignore_index=True)
        ax = plot_rate_cdf({m: rates[m].to_numpy() for m in rates.columns if m != "served"})
        ax.set_title(f"{gid}: {meta['grid_points'].get(gid) or 'scenario as given'}, "
                     f"{len(drops)} drop(s)")
        written.append(out / f"rate_cdf_{gid}.png")
        ax.figure.savefig(written[-1], dpi=110, bbox_inches="tight")
        plt.close(ax.figure)
    keys = list(meta["grid"])
    if len(keys) == 1 and index["grid_id"].nunique() > 1:
        key, base = keys[0], index["method"].iloc[0]
        x = np.asarray(meta["grid"][key], dtype=float)
        for col, label, name in (("rate_p5_mbps", "5th-percentile", "p5"),
                                 ("rate_p50_mbps", "median", "p50")):
            wide = index.pivot_table(index=["drop", key], columns="method", values=col)
            gains = {m: (wide[m] / wide[base]).unstack(key).to_numpy() for m in wide.columns
                     if m != base}
            ax = plot_gain_curve(x, gains, xlabel=key, ylabel=f"{label} rate gain over {base}")
            written.append(out / f"gain_{name}.png")
            ax.figure.savefig(written[-1], dpi=110, bbox_inches="tight")
            plt.close(ax.figure)
    return written


def _plot(args: argparse.Namespace) -> int:
    written = _plot_results(Path(args.results))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cellopt", description=__doc__)
    parser.add_argument("--version", action="version", version=f"cellopt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="solve one drop of a scenario with its methods; print a summary "
                         "per method, write tables, a network map and a rate CDF")
    run.add_argument("scenario", help="scenario file (TOML), e.g. topologies/hetnet.toml")
    run.add_argument("--method", action="append", metavar="M",
                     help=f"method to run instead of the scenario's (repeatable): {sorted(METHODS)}")
    run.add_argument("--out", default="results/run", help="output folder (results/run)")
    run.add_argument("--seed", type=int, default=None,
                     help="build seed of the drop (default: the scenario's first drop)")
    run.set_defaults(func=_run)

    exp = sub.add_parser("experiment", help="drops x a parameter grid, in parallel, resumable; "
                         "writes one file per drop, an index, a summary and figures")
    exp.add_argument("scenario", help="a shipped scenario name (topologies/NAME.toml) or a TOML file")
    exp.add_argument("--drops", type=int, default=None, help="number of drops (scenario's seeds.drops)")
    exp.add_argument("--grid", action="append", metavar="SECTION.KEY=V1,V2",
                     help="a parameter to sweep (repeatable; the grid is the product)")
    where = exp.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=1, help="worker processes (1)")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run on this Dask distributed scheduler (pip install 'cellopt[dask]')")
    exp.add_argument("--resume", action="store_true", help="skip drops already in --out")
    exp.add_argument("--out", default=None, help="results folder (results/<scenario name>)")
    exp.set_defaults(func=_experiment)

    plot = sub.add_parser("plot", help="regenerate the figures of a results folder without solving")
    plot.add_argument("results", help="a folder written by `cellopt experiment`")
    plot.set_defaults(func=_plot)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as err:  # bad input: the message says the fix
        print(f"cellopt: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
