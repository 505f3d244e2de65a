"""Command line: ``cellopt run`` solves the default HetNet scenario with the baselines and alm."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from cellopt import __version__, radio, topology
from cellopt.linktable import LinkTable
from cellopt.network import TIERS, Network
from cellopt.plotting import plot_network
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers import solve


def default_scenario(n_users: int, n_rings: int, picos_per_sector: int, seed: int) -> Network:
    """The HetNet default: 3GPP hex layout, 4 picos per sector, 2/3 of users near picos.

    TR 36.814 Case 1 macro layer with Config. 4b picos and user clustering. Independent
    random streams for the picos and the users come from one seed.
    """
    pico_rng, user_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    net = topology.hex_grid(n_rings=n_rings)
    if picos_per_sector:
        net = topology.add_picos(net, per_sector=picos_per_sector, rng=pico_rng)
    clustered = 2 / 3 if picos_per_sector else 0.0
    return topology.drop_users(net, n_users, clustered_fraction=clustered, rng=user_rng)


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


#: Methods of the default run: (label, method, options).
DEFAULT_METHODS = (
    ("max_rsrp", "max_rsrp", {}),
    ("range_expansion_6db", "range_expansion", {"bias_db": 6.0}),
    ("load_aware", "load_aware", {}),
    ("optimized (alm)", "alm", {}),
)


def method_summary(network: Network, solutions: dict[str, Solution], n_unserved: int) -> pd.DataFrame:
    """One row per method: utility, bound, gap, rate percentiles, tier shares, cap violations.

    Users without any usable link (outage) count with rate 0 in the percentiles.
    """
    tiers = network.cells["tier"].to_numpy()
    rows = {}
    for label, sol in solutions.items():
        rate = np.concatenate([sol.user_rate_mbps, np.zeros(n_unserved)])
        served = sol.serving_cell >= 0
        row = {
            "utility": sol.objective,
            "upper_bound": sol.upper_bound,
            "gap": sol.gap,
            "rate_p5_mbps": _percentile(rate, 5),
            "rate_p50_mbps": _percentile(rate, 50),
            "rate_mean_mbps": float(rate.mean()) if len(rate) else float("nan"),
        }
        for tier in TIERS:
            if (tiers == tier).any():
                row[f"share_{tier}"] = float((tiers[sol.serving_cell[served]] == tier).sum()
                                             / max(len(rate), 1))
        row["backhaul_violations"] = len(sol.exceeded_backhaul)
        row["time_s"] = sol.wall_s
        rows[label] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def _run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    net = default_scenario(args.users, args.rings, args.picos_per_sector, args.seed)
    t1 = time.perf_counter()
    links = radio.link_table(net, n_candidates=args.candidates, rng=args.seed)
    t2 = time.perf_counter()
    radio_summary = link_summary(net, links)
    # Users with no usable link (SINR below the efficiency map's floor on every candidate)
    # cannot be given a positive rate: they are left out of the problem, counted as 0.
    usable = links.users_with_rate()
    served_net = net.replace(users=net.users[usable].reset_index(drop=True))
    problem = Problem.from_network(served_net, links.select_users(usable))
    solutions = {label: solve(problem, method=method, **opts)
                 for label, method, opts in DEFAULT_METHODS}
    summary = method_summary(net, solutions, int((~usable).sum()))

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    radio_summary.to_csv(out / "radio_summary.csv", index_label="tier")
    summary.to_csv(out / "method_summary.csv", index_label="method")
    rates = pd.DataFrame({label: sol.user_rate_mbps for label, sol in solutions.items()})
    rates.insert(0, "user_id", served_net.users["user_id"].to_numpy())
    rates.to_csv(out / "user_rates.csv", index=False)
    optimized = solutions[DEFAULT_METHODS[-1][0]]
    serving = np.full(net.n_users, -1)
    serving[np.flatnonzero(usable)] = optimized.serving_cell
    ax = plot_network(net, serving_cell=serving)
    ax.set_title(f"HetNet default: {net.n_cells} cells, {net.n_users} users (optimized association)")
    ax.figure.savefig(out / "network_map.png", dpi=120, bbox_inches="tight")
    plt.close(ax.figure)

    print(f"cellopt {__version__} - HetNet default scenario (seed {args.seed})")
    print(f"{net}")
    print(f"network built in {t1 - t0:.2f} s; {len(links)} links "
          f"({args.candidates} candidates per user) in {t2 - t1:.2f} s; "
          f"{int((~usable).sum())} user(s) without a usable link (rate 0)")
    print("\nradio: max-RSRP cell, SINR and full-band peak rate of the serving link")
    print(radio_summary.to_string(float_format=lambda v: f"{v:.2f}"))
    print(f"\nassociation ({problem}):")
    print(summary.to_string(float_format=lambda v: f"{v:.4g}"))
    print(f"\nwrote {out / 'method_summary.csv'}, {out / 'radio_summary.csv'}, "
          f"{out / 'user_rates.csv'}, {out / 'network_map.png'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cellopt", description=__doc__)
    parser.add_argument("--version", action="version", version=f"cellopt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="solve the default HetNet scenario with the baselines and the "
                         "optimizer; print summaries, write tables and a network map")
    run.add_argument("--out", default="results/default", help="output folder (results/default)")
    run.add_argument("--users", type=int, default=2000, help="number of users (2000)")
    run.add_argument("--rings", type=int, default=2, help="rings of macro sites (2: 19 sites)")
    run.add_argument("--picos-per-sector", type=int, default=4, help="picos per macro sector (4)")
    run.add_argument("--candidates", type=int, default=8, help="candidate cells per user (8)")
    run.add_argument("--seed", type=int, default=1, help="random seed (1)")
    run.set_defaults(func=_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
