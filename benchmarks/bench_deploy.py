"""The offset fit's cost against the optimizer's solve of the same drop, in one run.

For every member of a family — the shipped ``hetnet``, ``ye_random``, ``nr_hetnet``,
``sf_femto`` (its stand-in ``city_synthetic`` without the data) and ``hetnet_power``'s
association problem (finite demands: the member-list path), each on 3 seeds, with 16
training drops; ``hetnet`` also at α = 2 and with 4 and 64 training drops — it times, in
one process and one after the other:

- the scenario's optimizer on the member's drop (``dual`` or ``ipm``, as the scenario
  names it), the time ``cellopt run`` compares the fit with;
- the reference, cvxpy + Clarabel (``method="reference"``), on the same drop;
- :func:`cellopt.deploy.cell_offsets` on the training drops (the per-tier search included),
  warm: a first fit of the same member runs before (imports, caches).

and prints the ratios fit / optimizer and fit / reference per member, with the median and
the worst over the family. Building the training drops is not counted (it is the data,
like the drop itself).

Run: ``python benchmarks/bench_deploy.py [--seeds 3] [--load]`` (``--load``: two busy loops
beside the timings, killed at the end).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
import warnings

import numpy as np
import pandas as pd
from bench_solvers import busy_loops

import cellopt
from cellopt import deploy
from cellopt.study.deployment import extra_drop_seed, optimizer_of

#: (name, scenario overrides, training drops) of the family's members, before seeds.
FAMILY = [
    ("hetnet", {}, 16), ("hetnet α=2", {"problem": {"alpha": 2.0}}, 16),
    ("hetnet T=4", {}, 4), ("hetnet T=64", {}, 64),
    ("ye_random", {}, 16), ("nr_hetnet", {}, 16), ("sf_femto", {}, 16),
    ("hetnet_power demands", {}, 16),
]


def scenario_of(name: str, overrides: dict) -> cellopt.Scenario:
    base = name.split()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the stand-in's warning
        scenario = cellopt.load_scenario(base, use_stand_in=True)
    return scenario.with_overrides(**overrides) if overrides else scenario


def member(name: str, overrides: dict, training: int, k: int) -> dict:
    scenario = scenario_of(name, overrides)
    seed = scenario.seeds[k]
    drop = scenario.build(seed)
    extra = [scenario.build(extra_drop_seed(seed, "training", j), cell_seed=seed)
             for j in range(1, training)]
    spec = optimizer_of(scenario.methods)
    t = time.perf_counter()
    optimum = drop.solve(spec.name, **spec.options)
    optimizer_s = time.perf_counter() - t
    t = time.perf_counter()
    drop.solve("reference")
    reference_s = time.perf_counter() - t
    deploy.cell_offsets(drop, optimum, drops=extra, max_rounds=1)  # warm
    t = time.perf_counter()
    offsets = deploy.cell_offsets(drop, optimum, drops=extra)
    fit_s = time.perf_counter() - t
    return {"member": f"{scenario.name} {name.partition(' ')[2]}".strip(), "seed": k,
            "cells": drop.network.n_cells, "users": drop.problem.n_users,
            "links": drop.problem.n_links, "training_drops": training,
            "rounds": offsets.attrs["rounds"], "optimizer": spec.name, "optimizer_s": optimizer_s,
            "reference_s": reference_s, "fit_s": fit_s, "fit_over_optimizer": fit_s / optimizer_s,
            "fit_over_reference": fit_s / reference_s}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--load", action="store_true",
                        help="two busy loops beside the timings (killed at the end)")
    args = parser.parse_args(argv)
    print(f"cellopt {cellopt.__version__}; {os.cpu_count()} cores; load avg "
          f"{os.getloadavg()[0]:.1f}; {'two busy loops' if args.load else 'no busy loops'}")
    rows = []
    with busy_loops(2) if args.load else contextlib.nullcontext():
        for name, overrides, training in FAMILY:
            for k in range(args.seeds):
                rows.append(member(name, overrides, training, k))
                r = rows[-1]
                print(f"  {r['member']:<24} seed {k}: fit {r['fit_s']:.2f} s ({r['rounds']} rounds), "
                      f"{r['optimizer']} {r['optimizer_s']:.3f} s, reference {r['reference_s']:.2f} s",
                      flush=True)
    table = pd.DataFrame(rows)
    print(table.to_string(float_format=lambda v: f"{v:.3g}"))
    for column in ("fit_over_optimizer", "fit_over_reference"):
        values = table[column].to_numpy()
        print(f"{column}: median {np.median(values):.3g}, worst {values.max():.3g}, best "
              f"{values.min():.3g} over {len(values)} members")


if __name__ == "__main__":
    main()
