"""Sweeps: many drops × a parameter grid, each task written once, atomically, resumable.

Layout of a results folder ``out_dir``::

    scenario.toml                 the scenario file's exact text
    meta.json                     cellopt version, seeds, grid points, drops, start time(s)
    drops/<grid-id>_drop<k>.npz   per-user rates of every method (written first)
    drops/<grid-id>_drop<k>.csv   per-method summary rows (written last: the task's marker)
    index.csv                     all summary rows; rebuilt from drops/*.csv by :func:`collect`

A task (one grid point × one drop) is finished iff its summary CSV exists. Both files are
written to a temporary file in ``drops/`` and moved into place with :func:`os.replace`, so a
killed run never leaves a half-written result; ``resume=True`` then runs the missing tasks.

Seeds: ``numpy.random.SeedSequence(seeds.base).spawn(drops)`` gives one child per drop; drop
``k`` is built with ``int(child_k.generate_state(1)[0])`` at every grid point, whatever the
worker count or the order of the tasks (and adding drops does not move the earlier ones).
"""

from __future__ import annotations

import concurrent.futures
import datetime
import itertools
import json
import multiprocessing
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cellopt.scenario import Scenario, drop_seeds

__all__ = ["SUMMARY_COLUMNS", "cached_frame", "collect", "grid_points", "load_rates", "rate_summary",
           "run_sweep", "run_tasks"]

#: Columns of the per-method summary rows (after ``grid_id, drop, seed`` and the grid keys);
#: rates, ``n_users`` and ``n_outage`` count the users of the study area only.
SUMMARY_COLUMNS = [
    "method", "solver", "objective", "upper_bound", "gap", "rate_p5_mbps", "rate_p50_mbps",
    "rate_mean_mbps", "n_users", "n_outage", "status", "wall_s",
]
_RESULT = re.compile(r"^(?P<gid>g\d+)_drop(?P<drop>\d+)\.csv$")


# ---------------------------------------------------------------------------- helpers
def grid_points(grid: Mapping[str, Sequence[Any]] | None) -> list[dict[str, Any]]:
    """The Cartesian product of `grid` ({"section.key": [values]}), keys in order; [{}] if None."""
    if not grid:
        return [{}]
    for key, values in grid.items():
        if not isinstance(key, str) or key.count(".") != 1:
            raise ValueError(f"grid key {key!r}; fix: name it 'section.key', e.g. 'picos.per_sector'")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
            raise ValueError(f"grid[{key!r}]={values!r}; fix: give a non-empty list of values")
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*grid.values())]


def _overrides(point: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """{"picos.per_sector": 2} → {"picos": {"per_sector": 2}} for Scenario.with_overrides."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in point.items():
        section, name = key.split(".")
        out.setdefault(section, {})[name] = value
    return out


def _atomic_write(path: Path, write: Any, mode: str = "w") -> None:
    """Call ``write(f)`` on a temporary file next to `path`, then move it onto `path`."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, mode, **({} if "b" in mode else {"encoding": "utf-8", "newline": ""})) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def cached_frame(path: str | Path, resume: bool, run: Callable[[], Any]) -> pd.DataFrame:
    """The table of one unit of work: read back from `path` when resuming and it exists,
    else ``pd.DataFrame(run())``, written to `path` at once (atomically) and returned."""
    path = Path(path)
    if resume and path.exists():
        return pd.read_csv(path)
    frame = pd.DataFrame(run())
    _atomic_write(path, lambda f: frame.to_csv(f, index=False))
    return frame


def _result_name(gid: str, drop: int) -> str:
    return f"{gid}_drop{drop}"


# ---------------------------------------------------------------------------- one task
def rate_summary(rate_mbps: np.ndarray) -> dict[str, float]:
    """5th percentile, median and mean of user rates [Mbit/s] (NaN for no users)."""
    r = np.asarray(rate_mbps, float)
    if not len(r):
        return {"rate_p5_mbps": np.nan, "rate_p50_mbps": np.nan, "rate_mean_mbps": np.nan}
    p5, p50 = np.percentile(r, [5, 50])
    return {"rate_p5_mbps": float(p5), "rate_p50_mbps": float(p50), "rate_mean_mbps": float(r.mean())}


def _run_task(raw: dict[str, Any], path: str, point: dict[str, Any], gid: str, drop: int,
              seed: int, drops_dir: str) -> str:
    """Build and solve one drop with every method; write its rates and summary. Module-level
    with plain arguments, so it runs in a spawned worker. Returns the summary file's path."""
    from cellopt.solvers import solve

    scenario = Scenario.from_dict(raw, path)
    net, links, problem = scenario.build(seed)
    served = links.users_with_rate()
    study = net.in_study_area()  # statistics leave out the users of a guard band
    rows, rates = [], np.zeros((len(scenario.methods), net.n_users))
    for i, spec in enumerate(scenario.methods):
        t0 = time.perf_counter()
        sol = solve(problem, method=spec.name, **spec.options)
        wall = time.perf_counter() - t0
        rates[i, served] = sol.user_rate_mbps  # users in outage count with rate 0
        rows.append({
            "grid_id": gid, "drop": drop, "seed": seed, **point,
            "method": spec.label, "solver": spec.name, "objective": sol.objective,
            "upper_bound": np.nan if sol.upper_bound is None else sol.upper_bound,
            "gap": np.nan if sol.gap is None else sol.gap,
            **rate_summary(rates[i, study]),
            "n_users": int(study.sum()), "n_outage": int((study & ~served).sum()),
            "status": sol.status, "wall_s": wall,
        })
    out = Path(drops_dir)
    name = _result_name(gid, drop)
    labels = np.array([s.label for s in scenario.methods], dtype=str)
    _atomic_write(out / f"{name}.npz", lambda f: np.savez(
        f, method=labels, rate_mbps=rates, served=served, study=study), "wb")
    _atomic_write(out / f"{name}.csv", lambda f: pd.DataFrame(rows).to_csv(f, index=False))
    return str(out / f"{name}.csv")


# ---------------------------------------------------------------------------- results
def collect(out_dir: str | Path) -> pd.DataFrame:
    """Read every finished summary in ``out_dir/drops``, write ``out_dir/index.csv``, return it.

    Rows are sorted by grid id and drop, in the scenario's method order within a drop.
    """
    out_dir = Path(out_dir)
    files = sorted((p for p in (out_dir / "drops").glob("*.csv") if _RESULT.match(p.name)),
                   key=lambda p: (_RESULT.match(p.name)["gid"], int(_RESULT.match(p.name)["drop"])))
    frames = [pd.read_csv(p) for p in files]
    if frames:
        index = pd.concat(frames, ignore_index=True)
    else:
        index = pd.DataFrame(columns=["grid_id", "drop", "seed", *SUMMARY_COLUMNS])
    _atomic_write(out_dir / "index.csv", lambda f: index.to_csv(f, index=False))
    return index


def load_rates(out_dir: str | Path, grid_id: str, drop: int) -> pd.DataFrame:
    """Per-user rates [Mbit/s] of one task: one column per method, one row per dropped user
    of the study area (users in outage have rate 0, guard-band users are left out), plus a
    boolean ``served`` column."""
    with np.load(Path(out_dir) / "drops" / f"{_result_name(grid_id, drop)}.npz") as z:
        frame = pd.DataFrame(z["rate_mbps"].T, columns=list(z["method"]))
        frame["served"] = z["served"]
        study = z["study"] if "study" in z.files else np.ones(len(frame), bool)
    return frame[study].reset_index(drop=True)


# ---------------------------------------------------------------------------- sweep
def run_sweep(
    scenario: Scenario,
    out_dir: str | Path,
    *,
    drops: int | None = None,
    grid: Mapping[str, Sequence[Any]] | None = None,
    workers: int = 1,
    resume: bool = False,
    progress: bool = True,
    scheduler: Any = None,
) -> pd.DataFrame:
    """Run `drops` drops at every point of `grid`, solving each with every scenario method.

    Parameters
    ----------
    scenario : Scenario
        From :func:`~cellopt.scenario.load_scenario`; its file's text is copied to the folder.
    out_dir : path
        Results folder (created). See the module docstring for its layout.
    drops : int, optional
        Number of drops (default the scenario's ``seeds.drops``).
    grid : dict, optional
        ``{"section.key": [values, ...]}``; every combination is one grid point, applied with
        :meth:`Scenario.with_overrides`. Grid points are named ``g000``, ``g001``, … in
        product order (listed in ``meta.json``).
    workers : int
        ``> 1``: run tasks in a spawn-context :class:`~concurrent.futures.ProcessPoolExecutor`.
    resume : bool
        Skip tasks whose result exists. Without it, a folder holding results is refused.
    progress : bool
        Show a tqdm progress bar.
    scheduler : str or dask.distributed.Client, optional
        Run the tasks on this Dask cluster instead (``workers`` is then ignored); the
        results are identical, drop by drop.

    Returns
    -------
    pandas.DataFrame
        The index: one row per (grid point, drop, method), see :data:`SUMMARY_COLUMNS`.

    Raises
    ------
    ValueError
        For bad `drops`/`workers`/`grid`, a folder with results and ``resume=False``, or a
        resume whose scenario text, seed base or grid differ from the folder's.
    """
    drops = scenario.drops if drops is None else drops
    if not isinstance(drops, int) or isinstance(drops, bool) or drops < 1:
        raise ValueError(f"drops={drops!r}; fix: give an integer ≥ 1")
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers={workers!r}; fix: give an integer ≥ 1")
    points = grid_points(grid)
    scenarios = [scenario.with_overrides(**_overrides(p)) if p else scenario for p in points]
    gids = [f"g{i:03d}" for i in range(len(points))]
    seeds = drop_seeds(scenario.seed_base, drops)

    out_dir = Path(out_dir)
    drops_dir = out_dir / "drops"
    existing = [p for p in drops_dir.glob("*.csv") if _RESULT.match(p.name)] if drops_dir.is_dir() else []
    if existing and not resume:
        raise ValueError(f"{out_dir} already holds {len(existing)} results; fix: pass resume=True to "
                         f"continue that sweep, or give another out_dir")
    drops_dir.mkdir(parents=True, exist_ok=True)
    for tmp in drops_dir.glob(".*.tmp"):  # leftovers of a killed run
        tmp.unlink()

    text = Path(scenario.path).read_text(encoding="utf-8")
    import cellopt

    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    meta = {
        "cellopt_version": cellopt.__version__, "scenario": str(Path(scenario.path).resolve()),
        "seed_base": scenario.seed_base, "drops": drops, "drop_seeds": seeds,
        "grid": {k: list(v) for k, v in (grid or {}).items()},
        "grid_points": dict(zip(gids, points, strict=True)),
        "methods": [s.label for s in scenario.methods], "started": now, "resumed": [],
    }
    meta_path = out_dir / "meta.json"
    if resume and meta_path.exists():
        old = json.loads(meta_path.read_text(encoding="utf-8"))
        old_text = (out_dir / "scenario.toml").read_text(encoding="utf-8") \
            if (out_dir / "scenario.toml").exists() else text
        same = (old_text == text and old.get("seed_base") == meta["seed_base"]
                and old.get("grid") == meta["grid"])
        if not same:
            raise ValueError(f"{out_dir} holds a sweep of another scenario text, seed base or grid; "
                             f"fix: give another out_dir")
        meta["started"] = old.get("started", now)
        meta["resumed"] = [*old.get("resumed", []), now]
        meta["drops"] = max(drops, old.get("drops", drops))
        meta["drop_seeds"] = drop_seeds(scenario.seed_base, meta["drops"])
    _atomic_write(out_dir / "scenario.toml", lambda f: f.write(text))
    _atomic_write(meta_path, lambda f: json.dump(meta, f, indent=2, default=str))

    tasks = [
        (sc.raw, str(sc.path), point, gid, k, seeds[k], str(drops_dir))
        for sc, point, gid in zip(scenarios, points, gids, strict=True)
        for k in range(drops)
        if not (resume and (drops_dir / f"{_result_name(gid, k)}.csv").exists())
    ]
    run_tasks(_run_task, tasks, workers=workers, scheduler=scheduler, progress=progress,
              unit="drop")
    return collect(out_dir)


def run_tasks(fn: Callable[..., Any], tasks: Sequence[tuple], *, workers: int = 1,
              scheduler: Any = None, progress: bool = True, unit: str = "task") -> None:
    """Call ``fn(*task)`` for every task: serially, on `workers` spawned processes, or on Dask.

    `fn` must be a module-level function (it is pickled to the workers) that writes its
    own results; the first exception stops the run and is raised.

    Parameters
    ----------
    fn : callable
    tasks : sequence of tuple
        Plain, picklable arguments.
    workers : int
        ``> 1``: a spawn-context :class:`~concurrent.futures.ProcessPoolExecutor`.
    scheduler : str or dask.distributed.Client, optional
        Run on this Dask cluster instead (``workers`` is then ignored).
    progress : bool
        Show a tqdm progress bar counting `unit`.
    """
    bar = _progress(len(tasks), unit) if progress else None
    try:
        if scheduler is not None:
            _run_on_dask(scheduler, fn, tasks, bar)
        elif workers == 1 or len(tasks) <= 1:
            for task in tasks:
                fn(*task)
                if bar is not None:
                    bar.update(1)
        else:
            ctx = multiprocessing.get_context("spawn")
            with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
                futures = [pool.submit(fn, *task) for task in tasks]
                try:
                    for fut in concurrent.futures.as_completed(futures):
                        fut.result()
                        if bar is not None:
                            bar.update(1)
                except BaseException:
                    for fut in futures:
                        fut.cancel()
                    raise
    finally:
        if bar is not None:
            bar.close()


def _run_on_dask(scheduler: Any, fn: Callable[..., Any], tasks: Sequence[tuple], bar: Any) -> None:
    """Run the tasks on a Dask distributed cluster (`scheduler`: an address or a Client).

    The workers write their results into the same folder, so it must be on a file system
    they share (always true for a ``LocalCluster``).
    """
    try:
        from dask.distributed import Client, as_completed
    except ImportError as err:  # an optional extra
        raise ImportError("--scheduler needs dask.distributed; fix: pip install 'cellopt[dask]'") \
            from err
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        futures = [client.submit(fn, *task, pure=False) for task in tasks]
        for fut in as_completed(futures):
            fut.result()
            if bar is not None:
                bar.update(1)
    finally:
        if client is not scheduler:
            client.close()


def _progress(total: int, unit: str) -> Any:
    """A tqdm progress bar over the tasks."""
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=unit)
