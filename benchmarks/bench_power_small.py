"""solve_power on small networks against the exhaustive optimum: status, error and time.

Run: ``python benchmarks/bench_power_small.py [--networks 32]``

A family of random networks small enough to enumerate every pattern: network k has
4–9 macro/pico cells in 600 m × 600 m (a third of them macro), 25–200 users, levels
[0, off] or [0, −10 dB, off] (16 to 19,683 patterns), an energy price uniform in
[0, 1] per W and α ∈ {0.5, 1, 2}, all drawn from seed 900 + k (:func:`member`).
``solve_power`` runs with its defaults (exact pricing and the exact bound at these sizes).
The oracle is the association problem over *every* pattern at once (each pattern a
resource with a free share): up to :data:`FULL_MASTER_PATTERNS` patterns one master with
all of them, solved by ``ipm`` to 1e-9 ("full"); beyond, where that master is too big,
column generation with exact pricing, no stabilization, no pattern ever leaving and
tol = 1e-7, certified by the Lagrangian bound over every pattern enumerated ("cg": its
objective and that bound agree within 1e-7). Printed per network: cells,
levels, patterns, users, α, energy price, status, the relative error of the objective
against the oracle's, the same error as a rate-equivalent gap (like ``Solution.gap``: how
much every rate of the answer would have to grow to reach the optimum; ≤ the certified
gap when the bound is valid), the certified gap, iterations, wall and CPU time
(``time.process_time``: on a shared machine the wall time measures the load too); then
the count not optimal, the largest errors and the slowest time.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import cellopt
from cellopt.network import Network, cells_frame, users_frame
from cellopt.power import ColumnGenerationOptions, GainTable, PatternSpace, PowerProblem, master_problem
from cellopt.power.patterns import enumerate_patterns
from cellopt.solvers.certificate import certified_gap
from cellopt.topology.hexgrid import SYNTHETIC_CRS

#: Most patterns for which the oracle is one master over all of them.
FULL_MASTER_PATTERNS = 729


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


def member(k: int) -> dict:
    """Network k of the family: the network, its levels, energy price and α."""
    rng = np.random.default_rng(900 + k)
    n_cells = int(rng.integers(4, 10))
    levels = [0.0, None] if rng.choice([2, 3]) == 2 else [0.0, -10.0, None]
    n_users = int(rng.integers(25, 201))
    alpha = float(rng.choice([0.5, 1.0, 2.0]))
    price = float(rng.uniform(0, 1))
    return dict(network=random_cells(k, n_cells, n_users), levels=levels, alpha=alpha,
                energy_price_per_w=price)


def exhaustive_optimum(net: Network, levels: list, price: float, alpha: float
                       ) -> tuple[cellopt.Solution, cellopt.Problem, str]:
    """The joint optimum over every pattern (one master with all of them), that master,
    and the solver used."""
    gains = GainTable.from_network(net, rng=1)
    space = PatternSpace.from_network(net, levels, price)
    if space.n_patterns <= FULL_MASTER_PATTERNS:
        every = enumerate_patterns(space, 0, int(space.n_patterns))
        problem = master_problem(gains, space, every, net, alpha)
        return cellopt.solve(problem, "ipm", tol=1e-9), problem, "full"
    power = PowerProblem.from_network(net, levels_db=levels, energy_price_per_w=price, alpha=alpha,
                                      gains=gains)
    best = cellopt.solve_power(power, tol=1e-7, max_iter=None, progress=False,
                               options=ColumnGenerationOptions(pricing="exact", bound="exact",
                                                               stabilization=0.0, retire_after=None))
    problem = master_problem(gains, space, np.zeros((1, net.n_cells), np.int64), net, alpha)
    return best, problem, "cg"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", type=int, default=32)
    args = parser.parse_args()
    rows = []
    for k in range(args.networks):
        m = member(k)
        net, levels, alpha, price = m["network"], m["levels"], m["alpha"], m["energy_price_per_w"]
        t0, c0 = time.perf_counter(), time.process_time()
        power = PowerProblem.from_network(net, levels_db=levels, energy_price_per_w=price, alpha=alpha,
                                          rng=1)
        sol = cellopt.solve_power(power, progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        best, problem, oracle = exhaustive_optimum(net, levels, price, alpha)
        rows.append(dict(network=k, cells=net.n_cells, levels=len(levels),
                         patterns=len(levels) ** net.n_cells, users=net.n_users, alpha=alpha,
                         energy_price=price, status=sol.status,
                         rel_error=(best.objective - sol.objective) / max(1.0, abs(best.objective)),
                         rate_error=certified_gap(problem, best.objective, sol.objective,
                                                  sol.utility),
                         gap=sol.gap, iterations=len(sol.history), time_s=wall, cpu_s=cpu,
                         oracle=oracle,
                         oracle_status=best.status))
        r = rows[-1]
        if len(rows) == 1:
            print(f"{'net':>3} {'cells':>5} {'levels':>6} {'patterns':>8} {'users':>5} {'α':>4} "
                  f"{'e/W':>5} {'status':>10} {'rel err':>9} {'rate err':>9} {'gap':>9} {'iters':>5} "
                  f"{'time s':>6} {'cpu s':>6} oracle")
        print(f"{r['network']:>3} {r['cells']:>5} {r['levels']:>6} {r['patterns']:>8} "
              f"{r['users']:>5} {r['alpha']:>4g} {r['energy_price']:>5.2f} {r['status']:>10} "
              f"{r['rel_error']:>9.1e} {r['rate_error']:>9.1e} {r['gap']:>9.1e} "
              f"{r['iterations']:>5} {r['time_s']:>6.2f} {r['cpu_s']:>6.2f} "
              f"{r['oracle']} ({r['oracle_status']})", flush=True)
    table = pd.DataFrame(rows)
    print(f"\n{(table['status'] != 'optimal').sum()} of {len(table)} not optimal; largest "
          f"relative error {table['rel_error'].abs().max():.2e} (rate-equivalent "
          f"{table['rate_error'].abs().max():.2e}), largest gap "
          f"{table['gap'].max():.2e}, slowest {table['time_s'].max():.2f} s "
          f"({table['cpu_s'].max():.2f} s of CPU)")


if __name__ == "__main__":
    main()
