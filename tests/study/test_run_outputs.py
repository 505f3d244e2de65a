"""Output folders: one run at a time (the lock), no stale files, no partial set, and the
errors of every writer as one line.

Runs are synchronised explicitly, never by timing: a process that holds a folder's lock
says so on its stdout and keeps it until the test closes its stdin.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pyogrio
import pytest
from helpers import ROOT
from helpers.checks import failing_raster_open, gdal_write_failed
from helpers.small_scenario import small_scenario

from cellopt import cli
from cellopt.study import atomic
from cellopt.study.lock import LOCK_GRACE_S, LOCK_NAME, FolderInUseError, FolderLock
from cellopt.study.run import OUTPUT_FILES, run_scenario
from cellopt.study.scenario import load_scenario

ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
       "PYTHONPATH": str(ROOT)}
#: Outputs of a run with a report and no power run.
WRITTEN = [n for n in OUTPUT_FILES if n != "power_patterns.csv"]
#: Holds the lock of the folder argv[1], says so, and keeps it until its stdin is closed.
HOLDER = ("import sys\n"
          "from cellopt.study.lock import FolderLock\n"
          "lock = FolderLock(sys.argv[1]).acquire()\n"
          "print('locked', flush=True)\n"
          "sys.stdin.read()\n")


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("scenario") / "small.toml"
    path.write_text(small_scenario(drops=2), encoding="utf-8")
    return str(path)


@contextlib.contextmanager
def holder(folder: Path) -> Iterator[subprocess.Popen[str]]:
    """A live process holding the lock of `folder` for the block (released as it exits)."""
    with subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          env=ENV) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline() == "locked\n"
            yield proc
        finally:
            if proc.poll() is None:
                proc.stdin.close()  # type: ignore[union-attr]
            proc.wait(timeout=120)


def dead_pid() -> int:
    """The id of a process that has exited (and was reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=60)
    return proc.pid


def write_lock(folder: Path, **fields: object) -> Path:
    """A lock file as a run writes it, with `fields` in place of this process's."""
    folder.mkdir(parents=True, exist_ok=True)
    record = {"pid": os.getpid(), "host": socket.gethostname(), "started": "2026-01-01T00:00:00+00:00",
              "command": "cellopt run other --out elsewhere", "token": "0" * 16, **fields}
    path = folder / LOCK_NAME
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def error_line(err: str) -> str:
    """The one error line of a failed command, after checking there is no traceback."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("cellopt: error: ")]
    assert len(lines) == 1, err
    return lines[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of `folder` (hidden ones too) with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def assert_complete(out: Path, names: list[str]) -> None:
    """`out` holds exactly the outputs `names` of one run, each whole and readable."""
    assert sorted(p.name for p in out.iterdir()) == sorted(names)
    users = pd.read_csv(out / "user_rates.csv")
    layers = pyogrio.list_layers(out / "results.gpkg")[:, 0]
    rows = {kind: sum(len(gpd.read_file(out / "results.gpkg", layer=name)) for name in layers
                      if name.startswith(f"{kind}_")) for kind in ("users", "cells")}
    assert rows["users"] == len(users) > 0
    assert rows["cells"] == len(pd.read_csv(out / "cell_stats.csv"))
    for name in names:
        if name.endswith(".png"):
            assert (out / name).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@pytest.fixture(scope="module")
def earlier(small: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a complete earlier run, with a report (copied by each test that changes it)."""
    out = tmp_path_factory.mktemp("earlier") / "run"
    assert cli.main(["run", small, "--out", str(out), "--no-progress"]) == 0
    assert_complete(out, WRITTEN)
    return out


@pytest.fixture
def copy(earlier: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    for p in earlier.iterdir():
        (out / p.name).write_bytes(p.read_bytes())
    return out


# ---------------------------------------------------------------------- the lock
@pytest.mark.slow
def test_a_run_is_refused_while_a_live_process_holds_the_folder(small, copy, capsys):
    before = snapshot(copy)
    with holder(copy) as proc:
        lock = (copy / LOCK_NAME).resolve()
        record = json.loads(lock.read_text(encoding="utf-8"))
        assert record["pid"] == proc.pid and record["host"] == socket.gethostname()
        assert record["started"] and "-c" in record["command"]
        for argv in (["run", small, "--out", str(copy)], ["run", small, "--out", str(copy), "--no-report"],
                     ["experiment", small, "--out", str(copy)],
                     ["experiment", small, "--out", str(copy), "--resume"]):
            assert cli.main(argv) == 1
            line = error_line(capsys.readouterr().err)
            for needle in (str(copy), "in use by another cellopt run", f"pid {proc.pid}",
                           "wait for that run to finish", "--out", f"delete {lock}"):
                assert needle in line, line
        with pytest.raises(FolderInUseError, match=f"pid {proc.pid}"):
            run_scenario(load_scenario(small), copy)
        held = snapshot(copy)
        assert held.pop(LOCK_NAME) == lock.read_bytes()
        assert held == before  # nothing written, nothing removed
    assert snapshot(copy) == before  # the holder released its lock as it exited


@pytest.mark.slow
def test_a_sweep_and_a_capacity_sweep_are_refused_too(small, tmp_path):
    from cellopt.study.capacity import capacity_sweep
    from cellopt.study.sweep import run_sweep

    scenario, out = load_scenario(small), tmp_path / "sweep"
    with holder(out) as proc:
        with pytest.raises(FolderInUseError, match=f"pid {proc.pid}"):
            run_sweep(scenario, out, drops=1, progress=False)
        with pytest.raises(FolderInUseError, match=f"pid {proc.pid}"):
            capacity_sweep(scenario, out, methods=["max_rsrp"], replicates=1, drops=1,
                           target_p5_mbps=0.5, progress=False)
        assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]
    assert list(out.iterdir()) == []  # the holder removed its lock as it exited


@pytest.mark.slow
def test_the_command_line_is_refused_while_this_process_holds_the_lock(small, tmp_path):
    out = tmp_path / "run"
    with FolderLock(out) as lock:
        proc = subprocess.run([sys.executable, "-m", "cellopt.cli", "run", small, "--out", str(out)],
                              capture_output=True, text=True, env=ENV, timeout=300)
        assert proc.returncode == 1, proc.stderr
        line = error_line(proc.stderr)
        assert f"pid {os.getpid()}" in line and str(lock.path.resolve()) in line
        assert proc.stdout == "" and sorted(p.name for p in out.iterdir()) == [LOCK_NAME]
    assert not out.exists()


@pytest.mark.slow
def test_the_lock_of_a_killed_run_is_taken_over(small, copy, capsys):
    with holder(copy) as proc:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    assert (copy / LOCK_NAME).is_file()  # killed: it could not remove its lock
    assert cli.main(["run", small, "--out", str(copy), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("cellopt: warning: ") and len(err.splitlines()) == 1, err
    for needle in (str(copy), "not running any more", f"pid {proc.pid} is not running",
                   "takes the folder over"):
        assert needle in err
    assert_complete(copy, WRITTEN)  # and the lock is gone


@pytest.mark.parametrize("case", ["dead pid", "own pid", "reused pid", "old unreadable"])
def test_stale_locks_are_taken_over_with_a_warning(case, tmp_path):
    folder = tmp_path / "out"
    if case == "dead pid":
        lock, why = write_lock(folder, pid=dead_pid()), "is not running"
    elif case == "own pid":  # left by an earlier process that had this process's id
        lock, why = write_lock(folder, pid=os.getpid()), "is this process"
    elif case == "reused pid":  # the pid runs, but it is not the process that took the lock
        if not Path("/proc/self/stat").is_file():
            pytest.skip("process start times need Linux /proc")
        lock, why = write_lock(folder, pid=os.getppid(), process_start="never"), "now another process"
    else:
        lock = folder / LOCK_NAME
        folder.mkdir()
        lock.write_bytes(b'{"pid": 12')  # cut while being written
        old = lock.stat().st_mtime - 2 * LOCK_GRACE_S
        os.utime(lock, (old, old))
        why = "unreadable"
    with pytest.warns(UserWarning, match=f"not running any more.*{why}"):
        with FolderLock(folder):
            record = json.loads(lock.read_text(encoding="utf-8"))
            assert record["pid"] == os.getpid() and record["token"] != "0" * 16
    assert not lock.exists()


@pytest.mark.parametrize("case", ["fresh unreadable", "other host"])
def test_locks_that_may_be_live_are_respected(case, tmp_path):
    folder = tmp_path / "out"
    if case == "fresh unreadable":  # a run between creating its lock and writing it
        folder.mkdir()
        lock = folder / LOCK_NAME
        lock.write_bytes(b"")
        needle = "just starting"
    else:  # a folder on a shared disk: a pid of another host cannot be checked
        lock = write_lock(folder, pid=dead_pid(), host="another-host.example")
        needle = "on another host"
    before = lock.read_bytes()
    with pytest.raises(FolderInUseError, match=needle):
        FolderLock(folder).acquire()
    assert lock.read_bytes() == before


def test_the_lock_is_released_on_errors_and_ctrl_c_and_taken_again_by_its_process(small, copy, capsys,
                                                                                   monkeypatch):
    before = snapshot(copy)

    def interrupted(*args, **kwargs):
        assert (copy / LOCK_NAME).is_file()  # held while the run lasts
        raise KeyboardInterrupt

    monkeypatch.setattr("cellopt.study.run._run", interrupted)
    assert cli.main(["run", small, "--out", str(copy)]) == 130
    assert capsys.readouterr().err == "cellopt: interrupted\n"
    monkeypatch.setattr("cellopt.study.run._run", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):  # a bug keeps its traceback; the lock still goes
        cli.main(["run", small, "--out", str(copy)])
    assert snapshot(copy) == before

    with FolderLock(copy) as outer:  # the same process may take it again (experiment, run_sweep)
        token = json.loads(outer.path.read_text(encoding="utf-8"))["token"]
        with FolderLock(copy):
            assert json.loads(outer.path.read_text(encoding="utf-8"))["token"] == token
        assert outer.path.is_file()  # the outer holder still has it
    assert not outer.path.exists()


def test_a_resume_after_a_killed_sweep_takes_its_lock_over(small, tmp_path, capsys):
    out = tmp_path / "sweep"
    assert cli.main(["experiment", small, "--out", str(out), "--drops", "1"]) == 0
    capsys.readouterr()
    write_lock(out, pid=dead_pid(), command="cellopt experiment small.toml")
    assert cli.main(["experiment", small, "--out", str(out), "--drops", "2", "--resume"]) == 0
    captured = capsys.readouterr()
    assert "cellopt: warning: " in captured.err and "takes the folder over" in captured.err
    assert len(pd.read_csv(out / "index.csv")) == 2 * 2  # two drops × two methods
    assert not (out / LOCK_NAME).exists() and not list(out.rglob(".*.tmp"))


# ---------------------------------------------------------------------- stale files
@pytest.mark.slow
def test_no_report_removes_the_earlier_report(small, copy, capsys):
    assert (copy / "report.html").is_file()
    assert cli.main(["run", small, "--out", str(copy), "--no-report", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "removed the earlier run's report.html (not written by this run)" in out
    assert_complete(copy, [n for n in WRITTEN if n != "report.html"])


@pytest.mark.slow
def test_files_of_that_name_cellopt_did_not_write_are_kept_with_a_warning(small, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    mine = {"report.html": b"<html>my own notes</html>\n", "notes.txt": b"keep\n",
            "power_patterns.csv": b"a,b\n1,2\n"}
    for name, data in mine.items():
        (out / name).write_bytes(data)
    assert cli.main(["run", small, "--out", str(out), "--no-report", "--no-progress"]) == 0
    err = capsys.readouterr().err
    for name in ("report.html", "power_patterns.csv"):
        assert f"cellopt: warning: {out / name} is not from this run, and not a file cellopt writes" in err
    assert {n: (out / n).read_bytes() for n in mine} == mine


@pytest.mark.slow
def test_power_patterns_of_an_earlier_power_run_are_removed(small, copy, capsys):
    header = "method,cell_id,x_m,y_m,pattern,pattern_share,tier,power_dbm,off\n"
    (copy / "power_patterns.csv").write_text(header + "power (ipm),c0,0,0,0,1.0,macro,46,False\n",
                                             encoding="utf-8")
    assert cli.main(["run", small, "--out", str(copy), "--no-progress"]) == 0
    assert "removed the earlier run's power_patterns.csv" in capsys.readouterr().out
    assert_complete(copy, WRITTEN)


@pytest.mark.slow
def test_a_killed_run_leaves_temporary_files_the_next_run_removes(small, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    pid = dead_pid()
    theirs = [f".user_rates.csv.{pid}.0123456789ab.tmp", f".results.{pid}.0123456789ab.tmp.gpkg",
              f".results.{pid}.0123456789ab.tmp.gpkg-journal"]
    others = [".my.tmp", ".hidden", f".notes.txt.{pid}.0123456789ab"]
    for name in theirs + others:
        (out / name).write_bytes(b"partial")
    assert cli.main(["run", small, "--out", str(out), "--no-progress"]) == 0
    assert hidden(out) == sorted(others)  # cellopt's own leftovers only


@pytest.mark.slow
def test_temporary_names_are_unique_per_process(tmp_path):
    target = tmp_path / "results.gpkg"
    code = ("import sys; from cellopt.study.atomic import temporary_path as t; "
            "print(t(sys.argv[1]).name); print(t(sys.argv[1], keep_suffix=True).name)")
    runs = [subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True,
                           env=ENV, timeout=120, check=True) for _ in range(2)]
    names = [r.stdout.split() for r in runs]
    pids = {atomic.temporary_target(n)[1] for pair in names for n in pair}
    assert len(pids) == 2 and os.getpid() not in pids  # the writing process is in the name
    assert {atomic.temporary_target(n)[0] for pair in names for n in pair} == {"results.gpkg"}
    assert len({n for pair in names for n in pair}) == 4
    assert atomic.temporary_target(atomic.temporary_path(target).name) == ("results.gpkg", os.getpid())
    assert atomic.temporary_target("results.gpkg") is None


@pytest.mark.slow
def test_a_run_leaves_no_temporary_file(small, tmp_path):
    out = tmp_path / "run"
    assert cli.main(["run", small, "--out", str(out), "--no-progress"]) == 0
    assert hidden(out) == [] and not list(tmp_path.rglob("*.tmp*"))
    assert_complete(out, WRITTEN)


# ---------------------------------------------------------------------- writer errors
def _failing_to_file(error: BaseException):
    """A GeoDataFrame.to_file that writes part of a file at its (temporary) path, then fails."""

    def to_file(self, path, *args, **kwargs):
        Path(path).write_bytes(b"SQLite format 3\x00 part of a GeoPackage")
        Path(f"{path}-journal").write_bytes(b"journal")
        raise error

    return to_file


@pytest.mark.parametrize("error, needles", [
    ("DataSourceError", ["could not write the file", "GDAL: DataSourceError: sqlite3_exec failed",
                         "check the disk"]),
    ("FieldError", ["could not write the file", "GDAL: FieldError"]),
    ("disk full in GDAL", ["No space left on device", "database or disk is full", "free space"]),
    ("ENOSPC", ["No space left on device", "free space"]),
])
@pytest.mark.slow
def test_a_failing_geopackage_writer_is_one_line_and_keeps_the_earlier_files(error, needles, small, copy,
                                                                              capsys, monkeypatch):
    import pyogrio.errors

    raised = {
        "DataSourceError": pyogrio.errors.DataSourceError("sqlite3_exec failed: I/O\nerror"),
        "FieldError": pyogrio.errors.FieldError("Error adding field 'rate_mbps' to layer"),
        "disk full in GDAL": pyogrio.errors.DataSourceError("sqlite3_exec(COMMIT) failed: database or "
                                                            "disk is full"),
        "ENOSPC": OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
    }[error]
    before = snapshot(copy)
    monkeypatch.setattr(gpd.GeoDataFrame, "to_file", _failing_to_file(raised))
    assert cli.main(["run", small, "--out", str(copy), "--no-progress"]) == 1
    captured = capsys.readouterr()
    line = error_line(captured.err)
    assert captured.err == line + "\n"
    for needle in [str(copy / "results.gpkg"), *needles]:
        assert needle in line, line
    assert snapshot(copy) == before  # every earlier file as it was: no partial set, no .tmp


@pytest.mark.slow
def test_a_failure_after_some_files_keeps_the_whole_earlier_set(small, copy, capsys, monkeypatch):
    """The tables and the GeoPackage are written, then a figure fails: none replaces its
    earlier file (a mix of two runs would be worse than either)."""
    from matplotlib.figure import Figure

    before, real, calls = snapshot(copy), Figure.savefig, []

    def savefig(self, f, *args, **kwargs):
        calls.append(kwargs.get("format"))
        if calls.count("png") == 2:
            f.write(b"\x89PNG half")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, f, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    assert cli.main(["run", small, "--out", str(copy), "--seed", "11", "--no-progress"]) == 1
    line = error_line(capsys.readouterr().err)
    assert f"No space left on device: {copy / 'rate_cdf.png'}; fix:" in line
    assert snapshot(copy) == before


@pytest.mark.parametrize("writer", ["geotiff ENOSPC", "geotiff GDAL", "csv ENOSPC"])
@pytest.mark.slow
def test_a_full_disk_in_any_writer_names_the_file_and_the_cause(writer, small, copy, capsys,
                                                                monkeypatch):
    """Every writer of a run (GeoTIFF, CSV; the GeoPackage and the figures above) fails as
    one line naming its file and "No space left on device", and the earlier files stay."""
    import cellopt.study.rasters as rasters

    before = snapshot(copy)
    if writer == "csv ENOSPC":
        name, real = "cell_stats.csv", pd.DataFrame.to_csv

        def to_csv(self, f=None, *args, **kwargs):
            if getattr(f, "name", "").startswith(str(copy / ".cell_stats.csv.")):
                f.write("cell_id,half a row")
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(self, f, *args, **kwargs)

        monkeypatch.setattr(pd.DataFrame, "to_csv", to_csv)
    else:
        name = "coverage_best_server.tif"
        if writer == "geotiff ENOSPC":
            failure = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        else:  # GDAL names no cause: the disk does (no space left on it)
            failure = gdal_write_failed()
            real_statvfs = os.statvfs
            monkeypatch.setattr(os, "statvfs", lambda p: os.statvfs_result(
                (4096, 4096, 1000, 0, 0, *real_statvfs(p)[5:])))
        monkeypatch.setattr(rasters.rasterio, "open", failing_raster_open(failure))
    assert cli.main(["run", small, "--out", str(copy), "--no-progress"]) == 1
    line = error_line(capsys.readouterr().err)
    assert "No space left on device" in line and str(copy / name) in line, line
    assert "free space" in line and "See previous exception" not in line, line
    if writer == "geotiff GDAL":
        assert "GDAL: RasterioIOError: Write failed." in line and "scanline 36" in line, line
    assert snapshot(copy) == before  # every earlier file as it was: no partial set, no .tmp


def test_writer_errors_of_libraries_name_the_target(tmp_path):
    import pyogrio.errors

    target = tmp_path / "results.gpkg"
    target.write_bytes(b"old")
    with pytest.raises(atomic.WriteError) as exc, atomic.atomic_path(target, keep_suffix=True) as tmp:
        tmp.write_bytes(b"half")
        raise pyogrio.errors.DataSourceError("Failed to write: File too large")
    assert isinstance(exc.value, OSError) and exc.value.errno == errno.EFBIG
    assert exc.value.filename == str(target) and "GDAL: DataSourceError" in exc.value.strerror
    assert target.read_bytes() == b"old" and hidden(tmp_path) == []


def test_a_set_of_files_replaces_its_targets_together(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.gpkg"
    a.write_text("old a\n", encoding="utf-8")
    with pytest.raises(OSError, match="No space"), atomic.atomic_files() as files:
        files.write(a, lambda f: f.write("new a\n"))
        assert a.read_text(encoding="utf-8") == "old a\n"  # nothing moves before the end
        with files.path(b, keep_suffix=True) as tmp:
            tmp.write_bytes(b"half")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert a.read_text(encoding="utf-8") == "old a\n" and not b.exists() and hidden(tmp_path) == []
    with atomic.atomic_files() as files:
        files.write(a, lambda f: f.write("new a\n"))
        with files.path(b, keep_suffix=True) as tmp:
            tmp.write_bytes(b"new b")
        files.write(a, lambda f: f.write("newer a\n"))  # written again: the last one wins
    assert a.read_text(encoding="utf-8") == "newer a\n"
    assert b.read_bytes() == b"new b" and hidden(tmp_path) == []
