"""Association rules side by side on the default HetNet: rates, utility, bound, pico share.

Run: ``python benchmarks/compare_association.py [--users 2000] [--seed 1] [--rings 2]
[--picos-per-sector 4] [--tol 1e-4]``

The scenario is the HetNet default (TR 36.814 Config. 4b): a hexagonal layout of
``--rings`` rings of 3-sector macro sites, ``--picos-per-sector`` picos per sector, users
with 2/3 of them clustered around picos, 8 candidate cells per user, log utility. It is
solved by

- ``max_rsrp`` (each user on its strongest cell),
- ``range_expansion`` with a pico bias of 0, 3, 6, 9 and 12 dB,
- ``load_aware`` (selfish best response to the cell loads),
- ``dual`` (the certified optimum, fractional: time sharing / carrier aggregation), and
- ``dual`` with ``single_association=True`` (one cell per user, rounded and improved),

and one table shows, per method: the 5th percentile, median and mean user rate
[Mbit/s], the utility Σ log r (the objective), the upper bound and relative gap, the
share of users served by a pico, the wall time, and the gains of the 5th percentile and
the median over ``max_rsrp``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import cellopt
from cellopt import Problem, radio, topology
from cellopt.network import TIERS


def build(n_users: int, seed: int, n_rings: int, picos_per_sector: int) -> Problem:
    net = topology.hex_grid(n_rings)
    net = topology.add_picos(net, per_sector=picos_per_sector, rng=seed)
    net = topology.drop_users(net, n_users, clustered_fraction=2 / 3, rng=seed + 1)
    links = radio.link_table(net, n_candidates=8, rng=seed + 2)
    return Problem.from_network(net, links)


def runs() -> list[tuple[str, str, dict]]:
    """(label, method, options) of every row."""
    rows = [("max_rsrp", "max_rsrp", {})]
    rows += [(f"range_expansion {b:g} dB", "range_expansion", {"bias_db": float(b)})
             for b in (0, 3, 6, 9, 12)]
    rows += [("load_aware", "load_aware", {}),
             ("dual (fractional)", "dual", {}),
             ("dual single association", "dual", {"single_association": True})]
    return rows


def summarize(problem: Problem, sol: cellopt.Solution, seconds: float) -> dict:
    rate = sol.user_rate_mbps
    pico = TIERS.index("pico")
    served = sol.serving_cell >= 0
    on_pico = np.zeros(problem.n_users, bool)
    on_pico[served] = problem.cell_tier[sol.serving_cell[served]] == pico
    return {
        "p5 [Mbit/s]": float(np.percentile(rate, 5)),
        "median [Mbit/s]": float(np.median(rate)),
        "mean [Mbit/s]": float(np.mean(rate)),
        "utility": sol.objective,
        "upper bound": np.nan if sol.upper_bound is None else sol.upper_bound,
        "gap": np.nan if sol.gap is None else sol.gap,
        "on picos": float(on_pico.mean()),
        "status": sol.status,
        "time [s]": seconds,
    }


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rings", type=int, default=2)
    parser.add_argument("--picos-per-sector", type=int, default=4)
    parser.add_argument("--tol", type=float, default=1e-4, help="gap asked of dual")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    problem = build(args.users, args.seed, args.rings, args.picos_per_sector)
    n_pico = int((problem.cell_tier == TIERS.index("pico")).sum())
    print(f"{problem}: {problem.n_cells - n_pico} macro cells, {n_pico} picos; built in "
          f"{time.perf_counter() - t0:.1f} s\n")

    rows = {}
    for label, method, options in runs():
        t = time.perf_counter()
        sol = cellopt.solve(problem, method=method, tol=args.tol, **options)
        rows[label] = summarize(problem, sol, time.perf_counter() - t)
    table = pd.DataFrame.from_dict(rows, orient="index")
    base = table.loc["max_rsrp"]
    table["p5 gain"] = table["p5 [Mbit/s]"] / base["p5 [Mbit/s]"] - 1.0
    table["median gain"] = table["median [Mbit/s]"] / base["median [Mbit/s]"] - 1.0

    shown = table.copy()
    for col in ("p5 [Mbit/s]", "median [Mbit/s]", "mean [Mbit/s]"):
        shown[col] = shown[col].map("{:.3f}".format)
    for col in ("utility", "upper bound"):
        shown[col] = shown[col].map(lambda v: "—" if np.isnan(v) else f"{v:.2f}")
    shown["gap"] = shown["gap"].map(lambda v: "—" if np.isnan(v) else f"{v:.2e}")
    for col in ("on picos", "p5 gain", "median gain"):
        shown[col] = shown[col].map("{:+.1%}".format if "gain" in col else "{:.1%}".format)
    shown["time [s]"] = shown["time [s]"].map("{:.2f}".format)
    with pd.option_context("display.width", 250, "display.max_columns", None):
        print(shown.to_string())
    return table


if __name__ == "__main__":
    main()
