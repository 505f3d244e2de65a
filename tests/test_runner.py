"""Tests of cellopt.runner: sweeps of drops × grid points, atomic results, resume, SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from small_scenario import small_scenario

from cellopt.errors import StoreError, ValidationError
from cellopt.study.scenario import load_scenario
from cellopt.study.seeds import drop_seeds
from cellopt.study.store import cached_frame
from cellopt.study.sweep import collect, load_rates, run_sweep

SMALL = small_scenario(drops=4)


@pytest.fixture
def scenario_path(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL, encoding="utf-8")
    return path


def results(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "drops").glob("*.csv"))


def summaries(df: pd.DataFrame) -> pd.DataFrame:
    """The deterministic part of an index (wall time dropped), in a canonical order."""
    return (df.drop(columns="wall_s").sort_values(["grid_id", "drop", "method"])
            .reset_index(drop=True))


def test_serial_layout(scenario_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    df = run_sweep(load_scenario(scenario_path), out, progress=False)
    assert results(out) == [f"g000_drop{k}.csv" for k in range(4)]
    assert len(list((out / "drops").glob("*.npz"))) == 4
    assert not list((out / "drops").glob("*.tmp"))
    assert (out / "scenario.toml").read_text(encoding="utf-8") == SMALL
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    assert meta["drops"] == 4 and meta["settings"]["seed_base"] == 3 and meta["kind"] == "sweep"
    assert meta["drop_seeds"] == drop_seeds(3, 4)
    assert len(df) == 8 and list(df["method"][:2]) == ["max_rsrp", "alm"]
    assert set(df["status"]) <= {"optimal", "solved", "max_iter"}
    assert (df["rate_p5_mbps"] <= df["rate_p50_mbps"]).all()
    pd.testing.assert_frame_equal(pd.read_csv(out / "index.csv"), df)
    pd.testing.assert_frame_equal(collect(out), df)
    rates = load_rates(out, "g000", 2)
    assert rates.shape == (30, 3)
    row = df[(df["drop"] == 2) & (df["method"] == "alm")].iloc[0]
    assert np.isclose(rates["alm"].mean(), row["rate_mean_mbps"])
    # Results exist: refused without resume.
    with pytest.raises(StoreError, match="resume=True"):
        run_sweep(load_scenario(scenario_path), out, progress=False)


def test_workers_and_grid_identical(scenario_path: Path, tmp_path: Path) -> None:
    sc = load_scenario(scenario_path)
    grid = {"users.n": [20, 30]}
    one = run_sweep(sc, tmp_path / "w1", grid=grid, progress=False)
    two = run_sweep(sc, tmp_path / "w2", grid=grid, workers=2, progress=False)
    assert len(one) == 2 * 4 * 2
    pd.testing.assert_frame_equal(summaries(one), summaries(two))
    # The same child seed for a drop at every grid point; the grid point n=30 is the base run.
    assert (one.groupby("drop")["seed"].nunique() == 1).all()
    assert set(one[one["grid_id"] == "g000"]["n_users"]) == {20}
    base = run_sweep(sc, tmp_path / "base", progress=False)
    g1 = one[one["grid_id"] == "g001"].drop(columns=["users.n", "grid_id"])
    pd.testing.assert_frame_equal(summaries(g1.assign(grid_id="g000")[base.columns]), summaries(base))
    with pytest.raises(ValidationError, match=r"section\.key"):
        run_sweep(sc, tmp_path / "bad", grid={"n": [1]}, progress=False)


def test_resume_recomputes_only_missing(scenario_path: Path, tmp_path: Path) -> None:
    sc = load_scenario(scenario_path)
    out = tmp_path / "out"
    first = run_sweep(sc, out, progress=False)
    drops = out / "drops"
    (drops / "g000_drop2.csv").unlink()
    (drops / ".g000_drop2.csv.999.tmp").write_text("half-writ", encoding="utf-8")
    before = {p.name: p.stat().st_mtime_ns for p in drops.glob("*.csv")}
    time.sleep(0.01)
    again = run_sweep(sc, out, resume=True, progress=False)
    after = {p.name: p.stat().st_mtime_ns for p in drops.glob("*.csv")}
    assert set(after) == {f"g000_drop{k}.csv" for k in range(4)}
    assert all(after[n] == t for n, t in before.items())  # untouched
    assert "g000_drop2.csv" not in before
    assert not list(drops.glob("*.tmp"))
    pd.testing.assert_frame_equal(summaries(first), summaries(again))
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    assert len(meta["resumed"]) == 1
    # A different scenario text in the same folder is refused.
    other = scenario_path.with_name("other.toml")
    other.write_text(SMALL.replace("n = 30", "n = 31"), encoding="utf-8")
    with pytest.raises(StoreError, match="another out_dir"):
        run_sweep(load_scenario(other), out, resume=True, progress=False)


def test_sigkill_then_resume(scenario_path: Path, tmp_path: Path) -> None:
    out, ref = tmp_path / "killed", tmp_path / "ref"
    # Each task sleeps first so the kill lands while the sweep is still running.
    code = textwrap.dedent(f"""
        import time
        import cellopt.study.sweep as r
        from cellopt.study.scenario import load_scenario
        task = r._run_task
        def slow(*args):
            time.sleep(0.4)
            return task(*args)
        r._run_task = slow
        r.run_sweep(load_scenario({str(scenario_path)!r}), {str(out)!r}, drops=8, progress=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 30
        while len(results(out) if (out / "drops").is_dir() else []) < 2:
            assert proc.poll() is None, "the sweep ended before it was killed"
            assert time.monotonic() < deadline, "no results within 30 s"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    n_killed = len(results(out))
    assert 2 <= n_killed < 8
    resumed = run_sweep(load_scenario(scenario_path), out, drops=8, resume=True, progress=False)
    assert results(out) == sorted(f"g000_drop{k}.csv" for k in range(8))
    assert not list((out / "drops").glob("*.tmp"))
    assert sorted(resumed.groupby("drop").size().index) == list(range(8))
    assert (resumed.groupby(["drop", "method"]).size() == 1).all()
    full = run_sweep(load_scenario(scenario_path), ref, drops=8, progress=False)
    pd.testing.assert_frame_equal(summaries(resumed), summaries(full))


def test_dask_local_cluster_equals_serial(scenario_path: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    sc = load_scenario(scenario_path)
    serial = run_sweep(sc, tmp_path / "serial", drops=3, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = run_sweep(sc, tmp_path / "dask", drops=3, progress=False, scheduler=client)
    pd.testing.assert_frame_equal(summaries(serial), summaries(on_dask))


def test_cached_frame_writes_once_and_reads_back(tmp_path):
    path = tmp_path / "unit.csv"
    first = cached_frame(path, True, lambda: [{"a": 1.5, "b": "x"}])
    assert path.exists() and not list(tmp_path.glob(".*.tmp"))
    again = cached_frame(path, True, lambda: pytest.fail("computed again"))
    pd.testing.assert_frame_equal(again, first)
    fresh = cached_frame(path, False, lambda: [{"a": 2.0, "b": "y"}])  # no resume: recomputed
    assert fresh["a"].item() == 2.0 and pd.read_csv(path)["a"].item() == 2.0


def test_resume_checks_every_result_and_refuses_a_folder_without_metadata(
        scenario_path: Path, tmp_path: Path) -> None:
    sc = load_scenario(scenario_path)
    out = tmp_path / "out"
    first = run_sweep(sc, out, drops=2, progress=False)
    drops = out / "drops"
    npz = drops / "g000_drop1.npz"
    npz.write_bytes(npz.read_bytes()[:100])  # torn rates behind a sound summary
    with pytest.raises(StoreError, match=r"g000_drop1\.npz is damaged"):
        load_rates(out, "g000", 1)
    with pytest.warns(UserWarning, match=r"g000_drop1\.csv is damaged: g000_drop1\.npz cannot be read"):
        again = run_sweep(sc, out, drops=2, resume=True, progress=False)
    pd.testing.assert_frame_equal(summaries(again), summaries(first), check_exact=True)
    # A summary cut short is not read as a shorter one.
    csv = drops / "g000_drop0.csv"
    csv.write_bytes(csv.read_bytes()[:-5])
    with pytest.raises(StoreError, match=r"g000_drop0\.csv is damaged: its last line is cut"):
        collect(out)
    # Without meta.json nothing tells which scenario the drops belong to.
    (out / "meta.json").unlink()
    with pytest.raises(StoreError, match=r"no meta\.json.*force=True"):
        run_sweep(sc, out, drops=2, resume=True, progress=False)
    with pytest.warns(UserWarning, match=r"g000_drop0\.csv is damaged"):
        forced = run_sweep(sc, out, drops=2, resume=True, force=True, progress=False)
    pd.testing.assert_frame_equal(summaries(forced), summaries(first), check_exact=True)
    assert json.loads((out / "meta.json").read_text(encoding="utf-8"))["drops"] == 2
    with pytest.raises(ValidationError, match="existing file"):
        run_sweep(sc, scenario_path, progress=False)


def test_atomic_write_leaves_no_part_and_names_the_target(tmp_path: Path) -> None:
    from cellopt.study.atomic import atomic_write as _atomic_write

    target = tmp_path / "table.csv"
    target.write_text("old\n", encoding="utf-8")

    def half(f):
        f.write("new, half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left") as exc:
        _atomic_write(target, half)
    assert exc.value.filename == str(target) and exc.value.errno == 28
    assert target.read_text(encoding="utf-8") == "old\n" and not list(tmp_path.glob(".*.tmp"))


def test_cached_frame_recomputes_a_torn_file(tmp_path: Path) -> None:
    path = tmp_path / "unit.csv"
    cached_frame(path, True, lambda: [{"a": 1.5}, {"a": 2.5}])
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.warns(UserWarning, match=r"unit\.csv is damaged"):
        again = cached_frame(path, True, lambda: [{"a": 1.5}, {"a": 2.5}])
    assert again["a"].tolist() == [1.5, 2.5] and pd.read_csv(path)["a"].tolist() == [1.5, 2.5]


def test_interrupt_ends_the_worker_processes(capfd) -> None:
    import multiprocessing
    import threading

    from cellopt.study.tasks import run_tasks

    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_tasks(time.sleep, [(30,)] * 3, workers=2, progress=False)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 20  # not the 30 s the tasks would take
    deadline = time.monotonic() + 5
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not multiprocessing.active_children()
    assert "Traceback" not in capfd.readouterr().err


def test_scheduler_address_is_checked() -> None:
    from cellopt.study.tasks import run_tasks

    pytest.importorskip("dask.distributed")
    with pytest.raises(ValidationError, match="tcp://HOST:8786"):
        run_tasks(print, [(1,)], scheduler="")
    with pytest.raises(ValidationError, match="missing port"):
        run_tasks(print, [(1,)], scheduler="nowhere")
