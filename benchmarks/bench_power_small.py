"""solve_power on small networks against the exhaustive optimum: status, error and time.

Run: ``python benchmarks/bench_power_small.py [--networks 20]``

Networks of at most 7 cells: alternately the 7-site omni hex layout (ISD 500 m) with
30–60 users, and 3–7 random macro/pico cells in 600 m × 600 m with 20–60 users; levels
[0, −10 dB, off] (2 networks in 3) or [0, off]; energy price 0, 0.02 or 0.1 per W.
``solve_power`` runs with its defaults and ``bound="exact"``. The oracle solves the
association problem over *every* pattern (up to 3⁷ = 2,187) with cvxpy + Clarabel, and
with ``ipm`` where Clarabel does not certify its answer. Printed per network: status,
the errors of the objective and of the bound against the oracle as rate-equivalent gaps
(like ``Solution.gap``), and time.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd

import cellopt
from cellopt import topology
from cellopt.network import Network, cells_frame, users_frame
from cellopt.power import GainTable, PatternSpace, master_problem
from cellopt.solvers.certificate import certified_gap
from cellopt.topology.hexgrid import SYNTHETIC_CRS


def random_cells(seed: int, n_cells: int, n_users: int, size_m: float = 600.0) -> Network:
    rng = np.random.default_rng(seed)
    n_macro = max(1, n_cells // 3)
    tier = np.array(["macro"] * n_macro + ["pico"] * (n_cells - n_macro), dtype=object)
    xy = rng.uniform(0, size_m, (n_cells, 2))
    cells = cells_frame(5e5 + xy[:, 0], 5e6 + xy[:, 1], crs=SYNTHETIC_CRS, tier=tier,
                        tx_power_dbm=np.where(tier == "macro", 46.0, 30.0),
                        antenna_gain_dbi=np.where(tier == "macro", 14.0, 5.0))
    uxy = rng.uniform(0, size_m, (n_users, 2))
    return Network(cells=cells, users=users_frame(5e5 + uxy[:, 0], 5e6 + uxy[:, 1],
                                                  crs=SYNTHETIC_CRS)).validate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", type=int, default=20)
    args = parser.parse_args()
    rows = []
    for seed in range(args.networks):
        rng = np.random.default_rng(500 + seed)
        if seed % 2 == 0:
            net = topology.hex_grid(n_rings=1, sectors=1)
            net = topology.drop_users(net, int(rng.integers(30, 61)), rng=seed)
        else:
            net = random_cells(seed, int(rng.integers(3, 8)), int(rng.integers(20, 60)))
        levels = [0.0, -10.0, None] if seed % 3 else [0.0, None]
        price = float(rng.choice([0.0, 0.02, 0.1]))
        t0 = time.perf_counter()
        sol = cellopt.solve_power(net, levels, energy_price_per_w=price, rng=1, bound="exact",
                                  progress=False)
        wall = time.perf_counter() - t0
        gains = GainTable.from_network(net, rng=1)
        space = PatternSpace.from_network(net, levels, price)
        every = np.array(list(itertools.product(range(len(levels)), repeat=net.n_cells)))
        problem = master_problem(gains, space, every, net)
        best = cellopt.solve(problem, "reference", tol=1e-8)
        oracle = "reference"
        if best.status != "optimal":
            best, oracle = cellopt.solve(problem, "ipm", tol=1e-8), "ipm"
        # Both errors as rate factors − 1, like the gap: how much every rate of the answer
        # would have to grow to reach the optimum, and of the optimum to reach the bound.
        rows.append(dict(network=seed, cells=net.n_cells, users=net.n_users,
                         levels=len(levels), energy_price=price, status=sol.status,
                         objective_error=certified_gap(problem, best.objective, sol.objective,
                                                       sol.utility),
                         bound_error=certified_gap(problem, sol.upper_bound, best.objective,
                                                   best.utility),
                         patterns=len(sol.patterns), iterations=len(sol.history), time_s=wall,
                         oracle=oracle))
        r = rows[-1]
        if len(rows) == 1:
            print(f"{'net':>3} {'cells':>5} {'users':>5} {'levels':>6} {'e/W':>5} {'status':>14} "
                  f"{'obj err':>9} {'bound err':>9} {'patterns':>8} {'iters':>5} {'time s':>6} oracle")
        print(f"{r['network']:>3} {r['cells']:>5} {r['users']:>5} {r['levels']:>6} "
              f"{r['energy_price']:>5.2f} {r['status']:>14} {r['objective_error']:>9.2e} "
              f"{r['bound_error']:>9.2e} {r['patterns']:>8} {r['iterations']:>5} "
              f"{r['time_s']:>6.2f} {r['oracle']}", flush=True)
    table = pd.DataFrame(rows)
    print(f"\n{(table['status'] == 'optimal').sum()}/{len(table)} optimal; largest objective "
          f"error {table['objective_error'].max():.2e}, largest bound error "
          f"{table['bound_error'].max():.2e}, slowest {table['time_s'].max():.2f} s")


if __name__ == "__main__":
    main()
