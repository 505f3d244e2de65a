"""Valid joint bounds at scale: today's cluster relaxation against the decomposition bound.

Run: ``python benchmarks/bench_power_bound.py [--only readme|family] [--max-iter 300]
[--scope-cells 4]``

For each network ``solve_power`` runs with its defaults but the cluster relaxation alone
(``ColumnGenerationOptions(scope_cells=None)``: :func:`~cellopt.power.bounds.relaxed_bound`,
clusters of 3 cells, prices optimized for the relaxation); the decomposition bound
(:func:`~cellopt.power.bounds.decomposition_bound`, which ``solve_power`` adds by default
and reports when smaller) then starts from the best master's prices (the ones
``relaxed_bound`` got). Printed per
network: cells, users, levels, energy price, α, the objective, the estimate factor,
and for both bounds the bound factor (1 + the rate-equivalent gap, as
``bound_info["bound_factor"]``) and the time. Both are valid for the physical model.

Networks: the README's (19 macro sites × 3 sectors + 4 picos per sector = 285 cells,
2,000 users, 2/3 clustered, shadowing seed 3; levels [0, −10 dB, off], 0.05 per W,
α = 1) and a family of smaller hex grids (1 ring: 21 sectors, 1–2 picos per sector,
300–600 users) varying the levels, the energy price and α.
"""

from __future__ import annotations

import argparse
import time
import types

import cellopt
import cellopt.power.column_generation as column_generation
from cellopt import radio, topology
from cellopt.power.bounds import decomposition_bound
from cellopt.solvers.certificate import certified_gap

#: (name, n_rings, picos per sector, users, levels, energy price per W, α)
FAMILY = [
    ("ring1-a", 1, 2, 500, [0.0, -10.0, None], 0.05, 1.0),
    ("ring1-b", 1, 1, 300, [0.0, None], 0.0, 1.0),
    ("ring1-c", 1, 2, 600, [0.0, -10.0, None], 0.5, 2.0),
    ("ring1-d", 1, 2, 400, [0.0, -6.0, None], 0.05, 0.5),
]


def drop_of(n_rings: int, picos: int, users: int) -> cellopt.Drop:
    net = topology.hex_grid(n_rings=n_rings)
    net = topology.add_picos(net, per_sector=picos, rng=1)
    net = topology.drop_users(net, users, clustered_fraction=2 / 3, rng=2)
    return cellopt.Drop.from_network(net, radio.link_table(net, n_candidates=8, rng=3))


def run(name: str, drop: cellopt.Drop, levels: list, price: float, alpha: float,
        max_iter: int, scope_cells: int) -> None:
    power = cellopt.power.PowerProblem.from_drop(drop, levels_db=levels, energy_price_per_w=price,
                                                 alpha=alpha)
    seen: dict = {}
    original = column_generation.relaxed_bound

    def spy(*args, **kwargs):  # records the best master's prices and times the bound
        t = time.perf_counter()
        out = original(*args, **kwargs)
        seen.update(prices=kwargs["prices"], time_s=time.perf_counter() - t)
        return out

    column_generation.relaxed_bound = spy
    try:
        t0 = time.perf_counter()
        sol = cellopt.solve_power(power, progress=False,  # the cluster relaxation alone
                                  options=cellopt.power.ColumnGenerationOptions(scope_cells=None))
        solve_s = time.perf_counter() - t0
    finally:
        column_generation.relaxed_bound = original
    info = sol.power.bound_info
    t0 = time.perf_counter()
    new = decomposition_bound(power, power.gains, power.space, power.alpha,
                              scope_cells=scope_cells, prices=seen["prices"], max_iter=max_iter)
    new_s = time.perf_counter() - t0
    users = types.SimpleNamespace(weight=power.weight, alpha=power.alpha, n_users=len(power.weight))
    factor = 1.0 + certified_gap(users, new["upper_bound"], sol.objective, sol.utility)
    levels_s = "/".join("off" if v is None else f"{v:g}" for v in levels)
    print(f"{name:>8} {power.gains.n_cells:>5} {len(power.weight):>5} {levels_s:>10} {price:>5g} "
          f"{alpha:>4g} {sol.objective:>11.2f} {solve_s:>7.1f} {info['estimate_factor']:>8.4f} "
          f"{info['bound_factor']:>9.4f} {seen['time_s']:>6.1f} {factor:>9.4f} {new_s:>6.1f}",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["readme", "family"], default=None)
    parser.add_argument("--max-iter", type=int, default=300,
                        help="L-BFGS-B iterations per temperature of the decomposition bound")
    parser.add_argument("--scope-cells", type=int, default=4)
    args = parser.parse_args()
    print(f"{'network':>8} {'cells':>5} {'users':>5} {'levels dB':>10} {'e/W':>5} {'α':>4} "
          f"{'objective':>11} {'solve s':>7} {'estimate':>8} {'relaxed':>9} {'s':>6} "
          f"{'decomp':>9} {'s':>6}")
    if args.only != "family":
        run("readme", drop_of(2, 4, 2000), [0.0, -10.0, None], 0.05, 1.0, args.max_iter,
            args.scope_cells)
    if args.only != "readme":
        for name, rings, picos, users, levels, price, alpha in FAMILY:
            run(name, drop_of(rings, picos, users), levels, price, alpha, args.max_iter,
                args.scope_cells)


if __name__ == "__main__":
    main()
