"""Experiment (c): power patterns — energy at low load, eICIC vs optimized patterns, a real city.

Part 1, density sweep: 7 sites × 3 sectors (ISD 500 m, wrap-around) + 2 picos per
sector (63 cells), uniform users at several densities, levels [0, −10 dB, off] for every
cell, energy prices 0 and ``--energy-price`` [utility per W]. Per drop: full-power
max-RSRP against ``solve_power``: energy saved (%), 5th-percentile and median rate.

Part 2, eICIC: one drop of the HetNet default (the shipped scenario ``hetnet``): the ABS grid
(pico bias {0, 3, 6, 9} dB × muted macro share {0, 1/8, 1/4, 1/2}) against
``solve_power`` with no energy price.

Part 3, a real city: the San Francisco window of the shipped scenario ``sf_femto`` (OpenCelliD
sites read from ``../shared/data/``, 3 sectors each, femtocells at 20 % adoption),
full-power max-RSRP against ``solve_power``, energy prices 0 and
``--energy-price``; rates of the study-area users. Skipped, with a message, where the
data file is absent.

``solve_power`` runs with its defaults (``ipm`` masters, the relaxed bound at this
size, its work budget of column-generation iterations, or ``--max-iter``), so the same
arguments give the same tables on any machine (a ``--time-limit-s`` is the explicit
exception: what it stops depends on the machine); every row records its status and,
as factors by which the weighted geometric-mean rate could still rise, its estimate and
its valid bound. Every run writes one CSV row file into ``--out`` as soon as it
finishes; ``--resume`` skips the finished ones. Tables and figures go to ``--figures``
(default ``results/power_energy/figures/``; ``--figures docs/figures`` replaces the
published ones).

Run: ``python experiments/power_energy.py [--drops 3] [--resume]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from _outputs import add_output_options, figures_folder, say_written, snapshot

import cellopt
from cellopt import topology
from cellopt.power import GainTable, PowerProblem, abs_grid, solve_abs
from cellopt.study.scenario import load_scenario
from cellopt.study.store import cached_frame
from cellopt.study.summary import rate_summary

LEVELS = [0.0, -10.0, None]
USERS = (15, 30, 60, 120, 240)  # on 1.52 km²: 10 to 160 users/km²
CITY = "sf_femto"


def certificate(sol: cellopt.Solution) -> dict[str, object]:
    """Status, wall time, patterns used, and the estimate and bound as rate factors."""
    info = sol.power.bound_info or {}
    return dict(status=sol.status, n_patterns=int((sol.pattern_share > 0).sum()),
                wall_s=sol.wall_s, estimate_factor=info.get("estimate_factor"),
                bound_factor=info.get("bound_factor"), bound_kind=sol.bound_kind)


def full_power_w(net) -> float:
    """Transmit power of every cell at full power [W]."""
    return float((10.0 ** (net.cells["tx_power_dbm"].to_numpy() / 10.0)).sum() * 1e-3)


def optimize(net, gains, energy_price: float, args):
    budget = {} if args.max_iter is None else {"max_iter": args.max_iter}
    power = PowerProblem.from_network(net, levels_db=LEVELS, gains=gains, energy_price_per_w=energy_price)
    return cellopt.solve_power(power, time_limit_s=args.time_limit_s, progress=False, **budget,
                               **({"method": args.method} if args.method else {}))


def density_run(n_users: int, drop: int, energy_price: float, args) -> pd.DataFrame:
    net = topology.hex_grid(n_rings=1)
    net = topology.add_picos(net, per_sector=2, rng=1000 + drop)
    net = topology.drop_users(net, n_users, rng=2000 + drop)
    gains = GainTable.from_network(net, rng=3000 + drop)
    full_w = full_power_w(net)
    base = solve_abs(net, 0.0, 0.0, gains=gains)  # = full-power max-RSRP
    sol = optimize(net, gains, energy_price, args)
    row = dict(n_users=n_users, density_per_km2=n_users / (net.region.area * 1e-6), drop=drop,
               energy_price_per_w=energy_price, **certificate(sol),
               energy_saved_pct=100.0 * (1 - sol.power.energy_w / full_w),
               cells_always_off_pct=100.0 * float(np.isneginf(sol.power.cell_power_dbm).mean()),
               objective=sol.objective, baseline_objective=base.objective)
    for name, s in (("", sol), ("baseline_", base)):
        row.update({name + k: v for k, v in rate_summary(s.user_rate_mbps).items()})
    return pd.DataFrame([row])


def abs_runs(args) -> pd.DataFrame:
    """The ABS grid rows (method "abs") and the optimized patterns' row (method "optimized")."""
    scenario = load_scenario("hetnet")
    net = scenario.build(seed=1).network
    gains = GainTable.from_network(net, model=scenario.radio_model(), rng=1)
    grid = abs_grid(net, gains=gains).assign(method="abs")
    sol = optimize(net, gains, 0.0, args)
    opt = dict(method="optimized", **certificate(sol), objective=sol.objective,
               energy_w=sol.power.energy_w, **rate_summary(sol.user_rate_mbps))
    return pd.concat([grid, pd.DataFrame([opt])], ignore_index=True)


def city_runs(args) -> pd.DataFrame:
    """Part 3: the SF window at 20 % femtocell adoption."""
    scenario = load_scenario(CITY).with_overrides(femtocells={"adoption": 0.2})
    net = scenario.build(seed=1).network
    gains = GainTable.from_network(net, model=scenario.radio_model(), rng=1)
    counted = net.in_study_area()
    # users without a usable link even at full power (outage) are left out of the
    # problems, as a Drop leaves them out, and count with rate 0
    served = gains.rates_mbps(10.0 ** (gains.max_power_dbm / 10.0)[None])[0].max(axis=1) > 0
    net, gains = net.replace(users=net.users[served].reset_index(drop=True)), gains.take_users(served)

    def summary(rate_mbps: np.ndarray) -> dict[str, float]:
        every = np.zeros(len(served))
        every[served] = rate_mbps
        return rate_summary(every[counted])

    base = solve_abs(net, 0.0, 0.0, gains=gains)  # = full-power max-RSRP
    rows = [dict(method="max-RSRP, full power", objective=base.objective,
                 energy_w=full_power_w(net), wall_s=base.wall_s,
                 **summary(base.user_rate_mbps))]
    for price in (0.0, args.energy_price):
        sol = optimize(net, gains, price, args)
        rows.append(dict(method="optimized patterns", energy_price_per_w=price,
                         **certificate(sol), objective=sol.objective, energy_w=sol.power.energy_w,
                         **summary(sol.user_rate_mbps)))
    tiers = net.cells["tier"].value_counts()
    return pd.DataFrame(rows).assign(n_cells=net.n_cells, n_femto=int(tiers.get("femto", 0)),
                                     n_users=len(served), n_counted=int(counted.sum()),
                                     n_outage=int((~served & counted).sum()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drops", type=int, default=3)
    parser.add_argument("--energy-price", type=float, default=0.05, help="utility per W")
    parser.add_argument("--method", default=None,
                        help="convex method inside solve_power (default: its own)")
    parser.add_argument("--max-iter", type=int, default=None,
                        help="column-generation iterations per solve_power (default: its own budget)")
    parser.add_argument("--time-limit-s", type=float, default=None,
                        help="wall-clock limit per solve_power (default none: results then "
                             "depend on the machine)")
    parser.add_argument("--resume", action="store_true")
    add_output_options(parser, "power_energy")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    figures = figures_folder(parser, args)  # part 3 is skipped, not replaced, without its data
    before = snapshot(figures)

    runs = [cached_frame(out / f"density_u{n}_d{d}_e{e:g}.csv", args.resume,
                   lambda n=n, d=d, e=e: density_run(n, d, e, args))
            for n in USERS for d in range(args.drops) for e in (0.0, args.energy_price)]
    runs = pd.concat(runs, ignore_index=True)
    runs["p5_kept"] = runs["rate_p5_mbps"] / runs["baseline_rate_p5_mbps"]
    runs["p50_kept"] = runs["rate_p50_mbps"] / runs["baseline_rate_p50_mbps"]
    table = runs.groupby(["energy_price_per_w", "n_users"]).agg(
        density_per_km2=("density_per_km2", "mean"), energy_saved_pct=("energy_saved_pct", "mean"),
        cells_always_off_pct=("cells_always_off_pct", "mean"), p5_kept=("p5_kept", "mean"),
        p5_kept_min=("p5_kept", "min"), p50_kept=("p50_kept", "mean"),
        n_patterns=("n_patterns", "mean"), wall_s=("wall_s", "mean"),
        estimate_factor=("estimate_factor", "mean"), bound_factor=("bound_factor", "mean"),
        estimate_factor_max=("estimate_factor", "max")).reset_index()
    table.to_csv(figures / "power_density.csv", index=False, float_format="%.4f")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))

    fig, (ax_e, ax_off, ax_r) = plt.subplots(1, 3, figsize=(14, 4), layout="constrained")
    for (price, part), color in zip(table.groupby("energy_price_per_w"), ("C0", "C1"), strict=False):
        label = f"e = {price:g} /W"
        ax_e.plot(part["density_per_km2"], part["energy_saved_pct"], "o-", color=color, label=label)
        ax_off.plot(part["density_per_km2"], part["cells_always_off_pct"], "o-", color=color,
                    label=label)
        ax_r.plot(part["density_per_km2"], part["p5_kept"], "o-", color=color,
                  label=f"5th percentile, {label}")
        ax_r.plot(part["density_per_km2"], part["p50_kept"], "s--", color=color,
                  label=f"median, {label}")
    ax_e.set(xscale="log", xlabel="users per km²", ylabel="transmit energy saved [%]")
    ax_off.set(xscale="log", xlabel="users per km²", ylabel="cells off in every pattern [%]")
    ax_r.axhline(1.0, color="k", lw=0.8)
    ax_r.set(xscale="log", yscale="log", xlabel="users per km²",
             ylabel="rate ÷ full-power max-RSRP rate")
    for ax in (ax_e, ax_off, ax_r):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.savefig(figures / "power_density.png", dpi=90, bbox_inches="tight")
    plt.close(fig)

    both = cached_frame(out / "abs.csv", args.resume, lambda: abs_runs(args))
    both.to_csv(figures / "power_abs.csv", index=False, float_format="%.4f")
    print(both.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    grid, opt = both[both["method"] == "abs"], both[both["method"] == "optimized"]

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for beta, part in grid.groupby("muted_share"):
        ax.plot(part["rate_p5_mbps"], part["rate_p50_mbps"], "o-", label=f"ABS, muted {beta:g}")
    ax.plot(opt["rate_p5_mbps"], opt["rate_p50_mbps"], "k*", ms=14, label="optimized patterns")
    ax.set(xlabel="5th-percentile rate [Mbit/s]", ylabel="median rate [Mbit/s]",
           title="HetNet default: ABS grid (bias 0→9 dB along each line)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.savefig(figures / "power_abs.png", dpi=90, bbox_inches="tight")
    plt.close(fig)

    if load_scenario(CITY).data_missing:
        print(f"part 3 skipped: the cell file of {CITY} is absent (see its comments)")
    else:
        city = cached_frame(out / "city.csv", args.resume, lambda: city_runs(args))
        city.to_csv(figures / "power_city.csv", index=False, float_format="%.4f")
        print(city.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    say_written(figures, out, before)


if __name__ == "__main__":
    main()
