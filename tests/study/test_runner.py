"""Tests of cellopt.runner: sweeps of drops × grid points, atomic results, resume, SIGKILL."""

from __future__ import annotations

import contextlib
import importlib
import json
import multiprocessing
import os
import secrets
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
from helpers.small_scenario import small_scenario

from cellopt.errors import StoreError, ValidationError
from cellopt.study.scenario import load_scenario
from cellopt.study.seeds import drop_seeds
from cellopt.study.store import FOLDER_FILES, cached_frame
from cellopt.study.sweep import SWEEP_FILES, collect, load_rates, plot_sweep, run_sweep

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


#: Far longer than any wait of these tests takes: reached only when something is stuck.
SAFETY_S = 600.0

MARKER_TASKS = '''\
"""Tasks and a worker initializer that tell, by empty files in MARKS, how far they got."""
import os
import time
from pathlib import Path

MARKS = Path({marks!r})
SAFETY_S = {safety!r}
HOLD_FROM = {hold_from!r}
_RUN_TASK = []


def mark(name):
    (MARKS / name).touch()


def slow_start(*args):
    """Worker initializer: say so, wait for the file "go", then run the real initializer."""
    mark(f"{{os.getpid()}}.starting")
    t0 = time.monotonic()
    while not (MARKS / "go").exists() and time.monotonic() - t0 < SAFETY_S:
        time.sleep(0.01)
    from cellopt.study.tasks import _start_worker

    _start_worker(*args)


def hold(*args):
    """A task that says it runs, then runs far longer than any test waits."""
    mark(f"{{os.getpid()}}.running")
    time.sleep(SAFETY_S)
    mark(f"{{os.getpid()}}.done")


def sweep_task(*args):
    """The sweep's task for the drops below HOLD_FROM; the others say so and hold."""
    drop = args[4]
    if drop >= HOLD_FROM:
        mark(f"drop{{drop}}.held")
        time.sleep(SAFETY_S)
    if not _RUN_TASK:  # a spawned worker, whose sweep module is not patched
        from cellopt.study.sweep import _run_task

        _RUN_TASK.append(_run_task)
    return _RUN_TASK[0](*args)


def patch_sweep():
    """Make the sweep of this process run sweep_task."""
    import cellopt.study.sweep as sweep

    _RUN_TASK.append(sweep._run_task)
    sweep._run_task = sweep_task
'''


def write_marker_tasks(folder: Path, hold_from: int = 0) -> tuple[str, Path]:
    """Write a module of MARKER_TASKS (a fresh name) into `folder`; its name and marks folder.

    Spawned workers import it by name: the parent's sys.path goes with them.
    """
    name = f"marker_tasks_{secrets.token_hex(4)}"
    marks = folder / "marks"
    marks.mkdir()
    (folder / f"{name}.py").write_text(
        MARKER_TASKS.format(marks=str(marks), safety=SAFETY_S, hold_from=hold_from), encoding="utf-8")
    return name, marks


@pytest.fixture
def marker_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    name, _ = write_marker_tasks(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module(name)
    sys.modules.pop(name, None)


def marked(marks: Path, kind: str) -> set[int]:
    """The process ids that left a mark of `kind` ("starting", "running", "done")."""
    return {int(p.name.split(".")[0]) for p in marks.glob(f"*.{kind}")}


def alive(pid: int) -> bool:
    """Whether process `pid` exists (a zombie not yet waited for counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for(condition: Callable[[], bool], what: str, stop: threading.Event | None = None,
             alive: Callable[[], bool] = lambda: True) -> bool:
    """Poll `condition` until it holds (True) or `stop` is set (False); fail if `alive()` turns
    False first or after SAFETY_S, which only a stuck run reaches."""
    t0 = time.monotonic()
    while not condition():
        if stop is not None and stop.is_set():
            return False
        assert alive(), f"ended before {what}"
        assert time.monotonic() - t0 < SAFETY_S, f"stuck: no {what} within {SAFETY_S:g} s"
        time.sleep(0.01)
    return True


@contextlib.contextmanager
def beside(conduct: Callable[[threading.Event], None]) -> Iterator[None]:
    """Run ``conduct(stop)`` on a thread while the block runs in the main thread; `stop` is set
    when the block ends. An error of `conduct` interrupts the block and is raised after it."""
    stop, errors = threading.Event(), []

    def run() -> None:
        try:
            conduct(stop)
        except BaseException as err:
            errors.append(err)
            os.kill(os.getpid(), signal.SIGINT)  # get the main thread out of what it waits for

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        if errors:
            raise errors[0]


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
    plot_sweep(out)
    written = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()]
    assert all(any(e.matches(name) for e in (*FOLDER_FILES, *SWEEP_FILES)) for name in written), written
    # Results exist: refused without resume.
    with pytest.raises(StoreError, match="resume=True"):
        run_sweep(load_scenario(scenario_path), out, progress=False)


@pytest.mark.slow
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
    for p in drops.glob("*.csv"):  # a date no rewrite can give, whatever the clock's resolution
        os.utime(p, ns=(10**18, 10**18))
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in drops.glob("*.csv")}
    again = run_sweep(sc, out, resume=True, progress=False)
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in drops.glob("*.csv")}
    assert set(after) == {f"g000_drop{k}.csv" for k in range(4)}
    assert all(after[n] == t for n, t in before.items())  # untouched: same file, same date
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


@pytest.mark.slow
def test_sigkill_then_resume(scenario_path: Path, tmp_path: Path) -> None:
    out, ref = tmp_path / "killed", tmp_path / "ref"
    # Drops 0 and 1 run; drop 2 says so and holds, so the kill lands mid-sweep, after 2 drops.
    name, marks = write_marker_tasks(tmp_path, hold_from=2)
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import {name}
        {name}.patch_sweep()
        import cellopt.study.sweep as r
        from cellopt.study.scenario import load_scenario
        r.run_sweep(load_scenario({str(scenario_path)!r}), {str(out)!r}, drops=8, progress=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        wait_for(lambda: (marks / "drop2.held").exists(), "drop 2 started",
                 alive=lambda: proc.poll() is None)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert results(out) == ["g000_drop0.csv", "g000_drop1.csv"]
    with pytest.warns(UserWarning, match="locked by a run that is not running any more"):
        resumed = run_sweep(load_scenario(scenario_path), out, drops=8, resume=True, progress=False)
    assert results(out) == sorted(f"g000_drop{k}.csv" for k in range(8))
    assert not list((out / "drops").glob("*.tmp"))
    assert sorted(resumed.groupby("drop").size().index) == list(range(8))
    assert (resumed.groupby(["drop", "method"]).size() == 1).all()
    full = run_sweep(load_scenario(scenario_path), ref, drops=8, progress=False)
    pd.testing.assert_frame_equal(summaries(resumed), summaries(full))


@pytest.mark.slow
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


@pytest.mark.slow
def test_interrupt_ends_the_worker_processes(marker_tasks, capfd) -> None:
    """Ctrl+C while every worker runs a task: KeyboardInterrupt at once, the workers ended
    (their tasks cut short, not waited for) before it is raised, nothing printed."""
    from cellopt.study.tasks import run_tasks

    marks = marker_tasks.MARKS

    def ctrl_c(stop: threading.Event) -> None:
        if wait_for(lambda: len(marked(marks, "running")) == 2, "2 running tasks", stop):
            os.kill(os.getpid(), signal.SIGINT)

    with beside(ctrl_c), pytest.raises(KeyboardInterrupt):
        run_tasks(marker_tasks.hold, [(k,) for k in range(3)], workers=2, progress=False)
    workers = marked(marks, "running")
    assert len(workers) == 2 and not marked(marks, "done")
    assert not multiprocessing.active_children()
    assert not [pid for pid in workers if alive(pid)]
    assert "Traceback" not in capfd.readouterr().err


def test_interrupt_while_a_worker_is_started(marker_tasks, monkeypatch, capfd) -> None:
    """Ctrl+C while the parent is starting a worker process: the interrupt is held until the
    pool knows every worker it started, then ends them all. Taken at once, it left a
    worker behind, unknown to the pool, which printed a traceback (EOFError) for its
    start-up data, cut short."""
    import multiprocessing.util

    from cellopt.study.tasks import run_tasks

    spawn, started = multiprocessing.util.spawnv_passfds, []

    def spawn_then_ctrl_c(path, args, passfds):
        pid = spawn(path, args, passfds)
        if "--multiprocessing-fork" in args:  # a worker, not the resource tracker
            started.append(pid)
            signal.raise_signal(signal.SIGINT)
        return pid

    monkeypatch.setattr(multiprocessing.util, "spawnv_passfds", spawn_then_ctrl_c)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_tasks(marker_tasks.hold, [(k,) for k in range(3)], workers=2, progress=False)
        assert started
        assert not [pid for pid in started if alive(pid)]
        assert not multiprocessing.active_children()
        assert "Traceback" not in capfd.readouterr().err
    finally:  # what a failure left behind
        for pid in started:
            with contextlib.suppress(ChildProcessError, ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)


@pytest.mark.slow
def test_ctrl_c_reaching_workers_as_they_start(marker_tasks, monkeypatch, capfd) -> None:
    """Ctrl+C goes to the whole process group; a worker still starting up (it ignores SIGINT
    from its initializer on) neither dies nor prints a traceback, and goes on to its task;
    the parent's own interrupt then ends it."""
    import cellopt.study.tasks as tasks

    marks = marker_tasks.MARKS
    monkeypatch.setattr(tasks, "_start_worker", marker_tasks.slow_start)

    def conduct(stop: threading.Event) -> None:
        if not wait_for(lambda: len(marked(marks, "starting")) == 2, "2 workers starting", stop):
            return
        for pid in marked(marks, "starting"):
            os.kill(pid, signal.SIGINT)  # what Ctrl+C sends each process of the group
        (marks / "go").touch()
        if wait_for(lambda: len(marked(marks, "running")) == 2, "2 running tasks", stop):
            os.kill(os.getpid(), signal.SIGINT)

    with beside(conduct), pytest.raises(KeyboardInterrupt):
        tasks.run_tasks(marker_tasks.hold, [(k,) for k in range(3)], workers=2, progress=False)
    assert marked(marks, "running") == marked(marks, "starting")
    assert not [pid for pid in marked(marks, "starting") if alive(pid)]
    assert "Traceback" not in capfd.readouterr().err


def test_scheduler_address_is_checked() -> None:
    from cellopt.study.tasks import run_tasks

    pytest.importorskip("dask.distributed")
    with pytest.raises(ValidationError, match="tcp://HOST:8786"):
        run_tasks(print, [(1,)], scheduler="")
    with pytest.raises(ValidationError, match="missing port"):
        run_tasks(print, [(1,)], scheduler="nowhere")
