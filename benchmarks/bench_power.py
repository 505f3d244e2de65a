"""Joint power optimization on the HetNet default (issue 5 benchmark), alm vs reference per pattern set.

Run: ``python benchmarks/bench_power.py [--users 2000] [--time-limit-s 60] [--gain-tol 1e-2]``

19 macro sites × 3 sectors + 4 picos per sector (285 cells), 2/3 of the users clustered
near picos, levels [0, −10 dB, off]. Runs ``solve_power`` once with each convex method
inside (``alm`` and the cvxpy ``reference``), each within the time limit, and prints
its column-generation history (time in the convex solves and in the pattern search),
pattern count and objective against full power and the best ABS grid point; then, side
by side on the alm run's final pattern set, the ``alm`` and ``reference`` solve times
and their ratio.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import cellopt
from cellopt import topology
from cellopt.power import GainTable, PatternSpace, abs_grid, master_problem

LEVELS = [0.0, -10.0, None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--max-patterns", type=int, default=60)
    parser.add_argument("--time-limit-s", type=float, default=60.0)
    parser.add_argument("--gain-tol", type=float, default=1e-2)
    parser.add_argument("--energy-price", type=float, default=0.0, help="utility per W")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    net = topology.hex_grid(n_rings=2)
    net = topology.add_picos(net, per_sector=4, rng=args.seed)
    net = topology.drop_users(net, args.users, clustered_fraction=2 / 3, rng=args.seed + 1)
    t0 = time.perf_counter()
    gains = GainTable.from_network(net, rng=args.seed + 2)
    print(f"{net.n_cells} cells, {net.n_users} users; gains in {time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    best_abs = abs_grid(net, gains=gains).sort_values("objective").iloc[-1]
    print(f"ABS grid (16 points) in {time.perf_counter() - t0:.1f} s; best: bias "
          f"{best_abs.bias_db:g} dB, muted {best_abs.muted_share:g}, objective "
          f"{best_abs.objective:.1f}")

    cols = ["iteration", "n_patterns", "n_new", "objective", "candidate_value",
            "inner_time_s", "search_time_s", "time_s"]
    runs = {}
    for method in ("alm", "reference"):
        t0 = time.perf_counter()
        sol = cellopt.solve_power(net, LEVELS, gains=gains, method=method,
                                  energy_price_per_w=args.energy_price, bound="relaxed",
                                  max_patterns=args.max_patterns, gain_tol=args.gain_tol,
                                  time_limit_s=args.time_limit_s)
        total = time.perf_counter() - t0
        runs[method] = sol
        print(f"\nsolve_power(method={method!r}):")
        print(sol.history[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        first = float(sol.history["objective"].iloc[0])
        print(f"{total:.1f} s, {len(sol.patterns)} patterns, status {sol.status} ({sol.message}); "
              f"objective {sol.objective:.1f} (full power {first:.1f}, best ABS "
              f"{best_abs.objective:.1f}), energy {sol.energy_w:.0f} W, {sol.bound_kind} bound "
              f"{sol.upper_bound:.1f}")

    sol = runs["alm"]
    space = PatternSpace.from_network(net, LEVELS, args.energy_price)
    levels = np.argmin(np.abs(np.nan_to_num(sol.patterns[:, :, None], neginf=-1e9)
                              - np.nan_to_num(space.level_dbm[None], neginf=-1e9)), axis=2)
    problem = master_problem(gains, space, levels, net, links_per_pattern=3)
    timings = {}
    for method in ("alm", "reference"):
        t0 = time.perf_counter()
        s = cellopt.solve(problem, method=method, tol=1e-4)
        timings[method] = time.perf_counter() - t0
        print(f"final pattern set, {method:9s}: {timings[method]:6.1f} s, objective "
              f"{s.objective:.3f}, gap {s.gap:.1e}")
    print(f"ratio reference / alm: {timings['reference'] / timings['alm']:.2f}")


if __name__ == "__main__":
    main()
