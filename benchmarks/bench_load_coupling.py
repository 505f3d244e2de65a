"""Load-coupled solves: rounds, time and gain over full load, with cvxpy + Clarabel beside.

Run: ``python benchmarks/bench_load_coupling.py [--density 100] [--demand 1.0] [--seed 1]``

The drop: the shipped scenario ``ye_random`` (random macro/pico/femto tiers in a 2 km
torus, about 260 cells) with ``--density`` users per km², each wanting ``--demand``
Mbit/s. For each method the table gives the full-load solve (every cell always on), the
load-coupled solve (:func:`cellopt.load_coupling.solve_load_coupled`: its rounds, wall
time and the ratio to the full-load time), the share of users receiving their demand in
both, and the objective gained. ``reference`` (cvxpy + Clarabel) runs the same rounds,
so its row is the side-by-side check of the fast methods: equal objectives within the
tolerance, and the time ratio.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import cellopt
from cellopt.study.capacity import served_share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--density", type=float, default=100.0, help="users per km²")
    parser.add_argument("--demand", type=float, default=1.0, help="Mbit/s per user")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--methods", nargs="+", default=["max_rsrp", "ipm", "alm", "reference"])
    args = parser.parse_args()

    scenario = cellopt.load_scenario("ye_random").with_overrides(
        users={"density_per_km2": args.density, "demand_mbps": args.demand},
        problem={"interference": "load_coupled"})
    t0 = time.perf_counter()
    drop = scenario.build(seed=args.seed)
    print(f"ye_random, {drop.network.n_cells} cells, {drop.problem.n_users} users, "
          f"{drop.problem.n_links} links, {args.demand:g} Mbit/s each; build with coupling "
          f"{time.perf_counter() - t0:.2f} s")
    demand = drop.problem.demand_mbps
    print(f"{'method':>10} {'full [s]':>9} {'coupled [s]':>11} {'ratio':>6} {'rounds':>6} "
          f"{'served full':>11} {'served coupled':>14} {'mean load':>9} {'objective gain':>14} status")
    objective = {}
    for method in args.methods:
        t0 = time.perf_counter()
        full = cellopt.solve(drop.problem, method)
        t_full = time.perf_counter() - t0
        t0 = time.perf_counter()
        coupled = drop.solve(method)
        t_coupled = time.perf_counter() - t0
        objective[method] = coupled.objective
        info = coupled.load_coupling
        print(f"{method:>10} {t_full:9.2f} {t_coupled:11.2f} {t_coupled / t_full:6.1f} "
              f"{info['rounds']:6d} {served_share(full.user_rate_mbps, demand):11.3f} "
              f"{served_share(coupled.user_rate_mbps, demand):14.3f} {info['load'].mean():9.3f} "
              f"{coupled.objective - full.objective:14.3f} {coupled.status}")
    if "reference" in objective:
        for method, value in objective.items():
            print(f"{method:>10}: objective − reference's = {value - objective['reference']:+.2e}")
    print("(objectives of different methods differ where their rounds stop at different loads;"
          " each is certified for its own last round)")
    assert np.isfinite(list(objective.values())).all()


if __name__ == "__main__":
    main()
