"""3GPP large-scale calibration: coupling loss and geometry against 3GPP's published curves.

Runs the calibration set-ups of TR 36.873 §8.2 (phase 1: 3D-UMa and 3D-UMi at 2 GHz, with
K = M = 1 and K = M = 10) and TR 38.901 §7.8.1 (UMa, UMi street canyon and indoor office
at 6, 30 and 70 GHz) from the shipped scenarios, and prints for each the 5th, 50th and
95th percentiles of

- the coupling loss to the serving cell [dB], a positive loss: path loss, shadowing and
  O2I loss less the base station's antenna gain (the user antenna is isotropic);
- the geometry, S/I without noise [dB], the serving cell being the one of least
  coupling loss and every other cell interfering at the same power;
- SINR with thermal noise [dB] (TR 38.901 only, as published),

next to the reference (``calibration_reference.json``: the mean over companies of
R1-165974 for TR 38.901 and of R1-143469 for TR 36.873; docs/calibration.md cites the
sources), with the standard error of each percentile: the spread of a bootstrap over
drops (drops resampled with replacement, so that users of one drop, who share its
shadowing fields, stay together). Usage::

    python benchmarks/calibration.py                   # all 13 set-ups, ≥ 57,000 users each
    python benchmarks/calibration.py --users 5000 --only 38901_uma_6ghz
    python benchmarks/calibration.py --drops 20        # 20 drops each instead
    python benchmarks/calibration.py --json results.json --figure cdf.png
    python benchmarks/calibration.py --seed-offset 1000   # other drops, same set-ups

By default each set-up runs enough drops for 57,000 users (100 drops of 570 users; 159
of 360 indoors): the standard errors are then 0.02–0.25 dB. Every draw is seeded: the
same command prints the same numbers on any machine.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from cellopt import radio
from cellopt.study.scenario import Scenario, load_scenario
from cellopt.study.seeds import drop_seeds

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "calibration_reference.json"
#: The scenario files of this checkout (read before any installed copy of cellopt's).
TOPOLOGIES = HERE.parent / "topologies"
PERCENTILES = (5, 50, 95)
METRICS = ("coupling_loss_db", "geometry_db", "sinr_db")
#: Users per set-up by default: 100 drops of the 570-user set-ups (the sample of the
#: standard errors quoted in docs/calibration.md).
DEFAULT_USERS = 57_000
#: Bootstrap resamples of the drops for the standard errors.
BOOTSTRAP = 100
#: Set-up name → (shipped scenario, [network] overrides, [radio] overrides).
_NR_HIGH = {"bandwidth_mhz": 100.0}
SETUPS: dict[str, tuple[str, dict, dict]] = {
    "36873_uma_k1": ("lte3d_uma_calibration",
                     {"panel_rows": 1, "electrical_tilt_deg": 0.0}, {}),
    "36873_uma_k10": ("lte3d_uma_calibration", {}, {}),
    "36873_umi_k1": ("lte3d_umi_calibration",
                     {"panel_rows": 1, "electrical_tilt_deg": 0.0}, {}),
    "36873_umi_k10": ("lte3d_umi_calibration", {}, {}),
    **{f"38901_{kind}_{f}ghz": (
        f"nr_{kind}_calibration",
        {} if f == 6 else {**_NR_HIGH, **({} if kind == "inh" else {"tx_power_dbm": 35.0})},
        {"frequency_ghz": float(f), **({} if f == 6 else {"subcarrier_spacing_khz": 60.0})})
       for kind in ("uma", "umi", "inh") for f in (6, 30, 70)},
}


def measure(setup: str, drops: int, seed_offset: int = 0) -> np.ndarray:
    """Serving-cell coupling loss, geometry and SINR [dB] of every user of `drops` drops.

    Returns
    -------
    ndarray, shape (drops, 3, users per drop)
        Per drop, the rows of :data:`METRICS`.
    """
    scenario = setup_scenario(setup)
    model = scenario.radio_model()
    out = []
    for seed in drop_seeds(scenario.seeds.base + seed_offset, drops):
        net = scenario.build(seed).network
        gain = radio.coupling_db(net, model=model, rng=seed)                 # (U, C) [dB]
        power_mw = 10.0 ** (net.cells["tx_power_dbm"].to_numpy(float) / 10.0)
        received = 10.0 ** (gain / 10.0) * power_mw                          # (U, C) [mW]
        serving = np.argmax(gain, axis=1)
        rows = np.arange(len(gain))
        signal = received[rows, serving]
        interference = received.sum(axis=1) - signal
        noise = 10.0 ** (radio.thermal_noise_dbm(net.bandwidth_mhz, model.noise_figure_db) / 10.0)
        out.append(np.stack([-gain[rows, serving], 10.0 * np.log10(signal / interference),
                             10.0 * np.log10(signal / (interference + noise))]))
    return np.stack(out) if out else np.empty((0, len(METRICS), 0))


def setup_scenario(setup: str) -> Scenario:
    """The shipped scenario of `setup` (this checkout's file, else the installed one) with
    the set-up's overrides."""
    name, network, radio_section = SETUPS[setup]
    path = TOPOLOGIES / f"{name}.toml"
    scenario = load_scenario(path if path.is_file() else name)
    return scenario.with_overrides(network={**scenario.network, **network},
                                   radio={**scenario.radio, **radio_section})


def drops_for(setup: str, users: int) -> int:
    """The drops of `setup` that hold at least `users` users (at least 2, for the errors)."""
    per_drop = setup_scenario(setup).users["n"]
    return max(2, math.ceil(users / per_drop))


def percentiles(values: np.ndarray, n_boot: int = BOOTSTRAP, seed: int = 0
                ) -> tuple[np.ndarray, np.ndarray]:
    """The percentiles of each metric over all users, and their bootstrap standard errors.

    Parameters
    ----------
    values : ndarray, shape (drops, metrics, users per drop)
        As :func:`measure` returns them [dB].
    n_boot : int
        Resamples of the drops (with replacement); 0 gives NaN errors.
    seed : int
        Seed of the resampling.

    Returns
    -------
    (ndarray, ndarray), each of shape (metrics, len(PERCENTILES))
        The percentiles [dB] and their standard errors [dB].
    """
    drops, metrics, _ = values.shape
    pooled = values.transpose(1, 0, 2).reshape(metrics, -1)
    point = np.percentile(pooled, PERCENTILES, axis=1).T
    if n_boot < 2 or drops < 2:
        return point, np.full_like(point, np.nan)
    rng = np.random.default_rng(seed)
    boots = np.empty((n_boot, *point.shape))
    for b in range(n_boot):
        pick = values[rng.integers(0, drops, drops)].transpose(1, 0, 2).reshape(metrics, -1)
        boots[b] = np.percentile(pick, PERCENTILES, axis=1).T
    return point, boots.std(axis=0, ddof=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=DEFAULT_USERS,
                        help=f"users per set-up: as many drops as that takes ({DEFAULT_USERS:,})")
    parser.add_argument("--drops", type=int, help="drops per set-up instead of --users")
    parser.add_argument("--seed-offset", type=int, default=0,
                        help="add this to the scenarios' base seeds: other drops (0)")
    parser.add_argument("--bootstrap", type=int, default=BOOTSTRAP,
                        help=f"resamples of the drops for the standard errors ({BOOTSTRAP}; 0: none)")
    parser.add_argument("--only", nargs="*", choices=sorted(SETUPS), help="run these set-ups")
    parser.add_argument("--json", type=Path, help="write the percentiles to this JSON file")
    parser.add_argument("--figure", type=Path, help="write the CDFs against the reference here")
    parser.add_argument("--markdown", type=Path,
                        help="write the comparison as a Markdown table (docs/calibration.md)")
    args = parser.parse_args(argv)
    reference = json.loads(REFERENCE.read_text())
    names = args.only or list(SETUPS)
    results: dict[str, dict] = {}
    samples: dict[str, dict[str, np.ndarray]] = {}
    worst, beyond = 0.0, []
    print(f"{'set-up':16} {'metric':17} " + " ".join(f"{'p' + str(p):>25}" for p in PERCENTILES)
          + "   (cellopt ± standard error / 3GPP / difference, dB)")
    started = time.perf_counter()
    for setup in names:
        t0 = time.perf_counter()
        drops = args.drops if args.drops is not None else drops_for(setup, args.users)
        values = measure(setup, drops, args.seed_offset)
        point, error = percentiles(values, args.bootstrap)
        samples[setup] = {m: values[:, k].ravel() for k, m in enumerate(METRICS)}
        n_users = values.shape[0] * values.shape[2]
        results[setup] = {"users": n_users, "drops": drops}
        for k, metric in enumerate(METRICS):
            ref = reference[setup].get(metric)
            if ref is None:
                continue
            ours = {str(p): round(float(point[k, j]), 2) for j, p in enumerate(PERCENTILES)}
            results[setup][metric] = ours
            results[setup][metric + "_se"] = {str(p): round(float(error[k, j]), 3)
                                              for j, p in enumerate(PERCENTILES)}
            cells = []
            for j, p in enumerate(PERCENTILES):
                diff = ours[str(p)] - ref[str(p)]
                if metric != "sinr_db":
                    worst = max(worst, abs(diff))
                    if abs(diff) > 1.0:
                        beyond.append(f"{setup} {metric} p{p} {diff:+.2f} ± {error[k, j]:.2f}")
                cells.append(f"{ours[str(p)]:6.1f} ±{error[k, j]:4.2f} {ref[str(p)]:6.1f} {diff:+5.1f}")
            print(f"{setup:16} {metric:17} " + " ".join(f"{c:>25}" for c in cells))
        print(f"{'':16} {n_users:,} users ({drops} drops) in {time.perf_counter() - t0:.1f} s")
    print(f"\nlargest |difference| of coupling loss and geometry: {worst:.2f} dB")
    print("beyond 1 dB: " + ("; ".join(beyond) if beyond else "none"))
    print(f"{len(names)} set-ups in {time.perf_counter() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    if args.markdown:
        args.markdown.write_text(markdown(results, reference))
    if args.figure:
        figure(samples, reference, args.figure)
    return 0


def markdown(results: dict[str, dict], reference: dict) -> str:
    """One row per set-up and metric: cellopt ± standard error, 3GPP and the difference at
    each percentile."""
    head = " | ".join(f"p{p}: cellopt / 3GPP / Δ" for p in PERCENTILES)
    lines = [f"| set-up | metric [dB] | {head} |", "|---|---|" + "---|" * len(PERCENTILES)]
    for setup, metrics in results.items():
        for metric in METRICS:
            if metric not in metrics:
                continue
            ours, error, ref = metrics[metric], metrics[metric + "_se"], reference[setup][metric]
            cells = " | ".join(f"{ours[str(p)]:.1f} ± {error[str(p)]:.2f} / {ref[str(p)]:.1f} / "
                               f"{ours[str(p)] - ref[str(p)]:+.2f}" for p in PERCENTILES)
            name = metric.removesuffix("_db").replace("_", " ")
            lines.append(f"| `{setup}` | {name} | {cells} |")
    return "\n".join(lines) + "\n"


def figure(samples: dict[str, dict[str, np.ndarray]], reference: dict, path: Path) -> None:
    """The CDFs of coupling loss and geometry, cellopt (lines) against 3GPP (dots)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(samples), 2, figsize=(9, 2.2 * len(samples)), squeeze=False)
    for row, (setup, values) in zip(axes, samples.items(), strict=True):
        for ax, metric in zip(row, ("coupling_loss_db", "geometry_db"), strict=True):
            v = np.sort(values[metric])
            ax.plot(v, np.arange(1, len(v) + 1) / len(v), lw=1.2, label="cellopt")
            ref = reference[setup][metric]
            ax.plot(list(ref.values()), [int(p) / 100 for p in ref], "o", ms=3, label="3GPP")
            ax.set_title(f"{setup}: {metric.removesuffix('_db').replace('_', ' ')} [dB]",
                         fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
