"""The command line under hostile conditions: bad arguments, unwritable or full disks, an
unreachable scheduler, interrupts and damaged results folders.

Every case ends with one ``cellopt: error: ...`` line and a documented exit code (2: input
refused, 1: an OSError, 130: interrupted), never a traceback, and loses no finished drop:
after ``--resume`` the index and the means equal those of an uninterrupted run, exactly.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import ROOT
from helpers.small_scenario import small_scenario

from cellopt import cli
from cellopt.study.summary import sweep_table
from cellopt.study.sweep import load_rates

SMALL = small_scenario(drops=6)
N_DROPS = 6
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0  # root ignores file permissions
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
       "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("scenarios")
    small, other = base / "small.toml", base / "other.toml"
    small.write_text(SMALL, encoding="utf-8")
    other.write_text(SMALL.replace("n = 30", "n = 31"), encoding="utf-8")
    return {"small": small, "other": other}


@pytest.fixture(scope="module")
def reference(scenarios: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted sweep, the yardstick of every repaired folder."""
    out = tmp_path_factory.mktemp("reference") / "ref"
    assert cli.main(["experiment", str(scenarios["small"]), "--out", str(out)]) == 0
    return out


@pytest.fixture
def small(scenarios: dict[str, Path]) -> str:
    return str(scenarios["small"])


@pytest.fixture
def copy(reference: Path, tmp_path: Path) -> Path:
    """A copy of the reference folder, to damage."""
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    return out


def fails(argv: list[str], capsys: pytest.CaptureFixture[str], code: int, *needles: str) -> str:
    """Run the CLI, expecting exit `code` and one error line containing every needle."""
    assert cli.main(argv) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("cellopt: error: ")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str], needle: str) -> None:
    """argparse's own refusal: usage, the message, exit status 2."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: cellopt") and needle in err and "Traceback" not in err


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a folder with its bytes, to show that a refusal changed nothing."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_same_results(out: Path, ref: Path) -> None:
    """The index, the means per method and the per-user rates equal the reference's, exactly."""
    got, want = pd.read_csv(out / "index.csv"), pd.read_csv(ref / "index.csv")
    pd.testing.assert_frame_equal(got.drop(columns="wall_s"), want.drop(columns="wall_s"),
                                  check_exact=True)
    pd.testing.assert_frame_equal(sweep_table(got, []), sweep_table(want, []), check_exact=True)
    for k in range(N_DROPS):
        pd.testing.assert_frame_equal(load_rates(out, "g000", k), load_rates(ref, "g000", k),
                                      check_exact=True)
    assert not list(out.rglob(".*.tmp"))


# ---------------------------------------------------------------------- bad arguments
BAD_EXPERIMENT_ARGS = [
    (["--drops", "0"], ["drops=0", "integer ≥ 1"]),
    (["--drops", "-1"], ["drops=-1", "integer ≥ 1"]),
    (["--workers", "0"], ["workers=0", "integer ≥ 1"]),
    (["--workers", "-3"], ["workers=-3", "integer ≥ 1"]),
    (["--grid", "users.n"], ["'users.n'", "section.key=v1,v2"]),
    (["--grid", "users.n="], ["value ''", "no empty values"]),
    (["--grid", "users.n=10,,20"], ["value ''", "no empty values"]),
    (["--grid", "users.n=abc"], ["value 'abc'", "strings in quotes"]),
    (["--grid", "n=10"], ["'n=10'", "section.key=v1,v2"]),
    (["--grid", "a.b.c=1"], ["'a.b.c=1'", "section.key=v1,v2"]),
    (["--grid", ".n=1"], ["'.n=1'", "section.key=v1,v2"]),
    (["--grid", "users.n=10", "--grid", "users.n=20"], ["users.n is given twice"]),
    (["--grid", "nosuch.key=1"], ["nosuch"]),
    (["--scheduler", ""], ["scheduler=''", "tcp://HOST:8786"]),
    (["--scheduler", "garbage"], ["scheduler='garbage'", "tcp://HOST:8786"]),
    (["--scheduler", "foo://x:1"], ["scheduler='foo://x:1'", "unknown address scheme"]),
]


@pytest.mark.parametrize("args, needles", BAD_EXPERIMENT_ARGS,
                         ids=[" ".join(a) for a, _ in BAD_EXPERIMENT_ARGS])
def test_experiment_refuses_bad_arguments(args, needles, small, tmp_path, capsys):
    out = tmp_path / "out"
    fails(["experiment", small, "--out", str(out), *args], capsys, 2, *needles)
    assert not list(out.glob("drops/*.csv"))  # refused before any drop was solved


@pytest.mark.parametrize("args, needle", [
    (["--drops", "abc"], "invalid int value: 'abc'"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "not allowed with argument"),
    (["--force"], "--force only applies with --resume"),
])
def test_experiment_usage_errors(args, needle, small, tmp_path, capsys):
    usage_error(["experiment", small, "--out", str(tmp_path / "out"), *args], capsys, needle)


def test_run_refuses_bad_arguments(small, tmp_path, capsys):
    out = str(tmp_path / "out")
    fails(["run", small, "--out", out, "--seed", "-1"], capsys, 2, "seed=-1", "integer ≥ 0")
    fails(["run", small, "--out", out, "--method", "magic"], capsys, 2, "magic", "fix:")
    usage_error(["run", small, "--seed", "x"], capsys, "invalid int value: 'x'")


@pytest.mark.parametrize("coverage, needles", [
    ("resolution_m = 2000", ["[coverage] resolution_m=2000 m is larger than the coverage area",
                             "(the network's region, 1,443.38 m × 1,500 m)", "fix: give resolution_m"]),
    ("resolution_m = 1000", ["[coverage] resolution_m=1000 m: no pixel centre of the 2 × 2 grid",
                             "every pixel would be nodata", "fix: give a finer resolution_m"]),
    ("resolution_m = 5e-324", ["[coverage] resolution_m=4.94066e-324 m is too fine", "fix:"]),
])
def test_run_refuses_coverage_settings_that_give_no_map_before_solving(coverage, needles, tmp_path,
                                                                       capsys, monkeypatch):
    """No run reports success with rasters that hold nothing: the settings are refused once
    the drop is built, before any method is solved, and nothing is written."""
    import cellopt.study.run as run

    def solve(*args, **kwargs):
        raise AssertionError("solved before the [coverage] settings were refused")

    monkeypatch.setattr(run, "_solve", solve)
    path = tmp_path / "coverage.toml"
    path.write_text(small_scenario(drops=1) + f"\n[coverage]\n{coverage}\n", encoding="utf-8")
    out = tmp_path / "out"
    line = fails(["run", str(path), "--out", str(out), "--no-progress"], capsys, 2, str(path),
                 *needles)
    assert "OverflowError" not in line
    assert not out.exists() or list(out.iterdir()) == []  # a pixel finer than any area's: at load


@pytest.mark.parametrize("content, needles", [
    (None, ["does not exist", "give"]),
    ("this is [not toml", ["not valid TOML"]),
    (b"\x89PNG\r\n\x1a\n\x00\xff\xfe", ["not a text (UTF-8) file"]),
    ("", ["section is missing"]),
    ("[network]\nbuilder = 'hex_grid'\nbogus = 1\n[users]\nn = 3\n", ["bogus"]),
])
def test_run_refuses_missing_or_garbage_scenarios(content, needles, tmp_path, capsys):
    path = tmp_path / "scenario.toml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    line = fails(["run", str(path), "--out", str(tmp_path / "out")], capsys, 2, *needles)
    assert str(path) in line
    assert not (tmp_path / "out").exists()


def test_scenario_that_is_a_folder(tmp_path, capsys):
    for command in ("run", "experiment"):
        fails([command, str(tmp_path), "--out", str(tmp_path / "out")], capsys, 2, str(tmp_path),
              "is a folder", "scenario file")


def test_out_that_is_an_existing_file(small, tmp_path, capsys):
    file = tmp_path / "file.txt"
    file.write_text("keep me", encoding="utf-8")
    fails(["run", small, "--out", str(file)], capsys, 2, str(file), "existing file", "give a folder")
    fails(["experiment", small, "--out", str(file)], capsys, 2, str(file), "existing file")
    assert file.read_text(encoding="utf-8") == "keep me"


# ---------------------------------------------------------------------- cellopt plot
def test_plot_refuses_what_is_not_a_results_folder(reference, tmp_path, capsys):
    fails(["plot", str(tmp_path / "missing")], capsys, 2, "missing", "is not a folder")
    file = tmp_path / "file.txt"
    file.write_text("x", encoding="utf-8")
    fails(["plot", str(file)], capsys, 2, "file.txt", "is not a folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    fails(["plot", str(empty)], capsys, 2, "meta.json is missing", "cellopt experiment")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    fails(["plot", str(other)], capsys, 2, "meta.json is missing")
    assert snapshot(other) == {"notes.txt": b"mine"}  # no index.csv or figure written there
    # A sweep folder without a finished drop yet.
    shutil.copy(reference / "meta.json", empty / "meta.json")
    (empty / "drops").mkdir()
    fails(["plot", str(empty)], capsys, 2, "no finished drop", "--resume")


@pytest.mark.parametrize("damage, needle", [
    ("truncate_csv", "its last line is cut"),
    ("drop_csv_row", "one row per method"),
    ("garble_npz", "cannot be read"),
    ("delete_npz", "are missing"),
])
def test_plot_names_a_damaged_file_and_changes_nothing(damage, needle, copy, capsys):
    damaged = _damage(copy, damage)
    before = snapshot(copy)
    fails(["plot", str(copy)], capsys, 2, str(damaged), needle, "--resume")
    after = snapshot(copy)
    after.pop("index.csv", None)
    before.pop("index.csv", None)
    assert after == before


# ---------------------------------------------------------------------- damaged folders
def _damage(out: Path, how: str) -> Path:
    """Damage drop 3 of a results folder as a crash, a full disk or a careless hand would."""
    csv, npz = out / "drops" / "g000_drop3.csv", out / "drops" / "g000_drop3.npz"
    if how == "truncate_csv":  # the last line cut short
        csv.write_bytes(csv.read_bytes()[:-9])
        return csv
    if how == "drop_csv_row":  # cut at a line end: parses, one row short
        csv.write_text("".join(csv.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]),
                       encoding="utf-8")
        return csv
    if how == "empty_csv":
        csv.write_bytes(b"")
        return csv
    if how == "garble_npz":
        raw = bytearray(npz.read_bytes())
        raw[200:260] = bytes(range(60))
        npz.write_bytes(bytes(raw))
        return npz
    if how == "empty_npz":
        npz.write_bytes(b"")
        return npz
    if how == "delete_npz":
        npz.unlink()
        return npz
    if how == "foreign_seed":  # a summary of another drop under this drop's name
        csv.write_text(csv.read_text(encoding="utf-8").replace(
            str(pd.read_csv(csv)["seed"].iloc[0]), "12345"), encoding="utf-8")
        return csv
    raise AssertionError(how)


@pytest.mark.parametrize("damage", ["truncate_csv", "drop_csv_row", "empty_csv", "garble_npz",
                                    "empty_npz", "delete_npz", "foreign_seed"])
def test_resume_recomputes_a_damaged_drop(damage, small, copy, reference, capsys):
    _damage(copy, damage)
    kept = {p.name: p.stat().st_mtime_ns for p in (copy / "drops").glob("g000_drop[!3].*")}
    assert cli.main(["experiment", small, "--out", str(copy), "--resume"]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "cellopt: error" not in err
    warned = [line for line in err.splitlines() if line.startswith("cellopt: warning: ")]
    assert len(warned) == 1 and "g000_drop3.csv is damaged" in warned[0], err
    assert {p.name: p.stat().st_mtime_ns for p in (copy / "drops").glob("g000_drop[!3].*")} == kept
    assert_same_results(copy, reference)


@pytest.mark.parametrize("lost", ["meta.json", "scenario.toml"])
def test_resume_refuses_a_folder_without_its_metadata(lost, scenarios, copy, reference, capsys):
    (copy / lost).unlink()
    before = snapshot(copy)
    small, other = str(scenarios["small"]), str(scenarios["other"])
    fails(["experiment", other, "--out", str(copy), "--resume"], capsys, 2, str(copy))
    # Another scenario is refused even with --force: what is left (the copy, or the checksum
    # in meta.json) says so.
    fails(["experiment", other, "--out", str(copy), "--resume", "--force"], capsys, 2,
          "another scenario text")
    fails(["experiment", small, "--out", str(copy), "--resume"], capsys, 2, str(copy), f"no {lost}",
          "--force")
    assert snapshot(copy) == before  # refused before anything was written
    assert cli.main(["experiment", small, "--out", str(copy), "--resume", "--force"]) == 0
    assert (copy / lost).is_file()
    assert_same_results(copy, reference)


def test_resume_refuses_another_scenario_and_a_folder_with_results(scenarios, copy, capsys):
    before = snapshot(copy)
    fails(["experiment", str(scenarios["other"]), "--out", str(copy), "--resume"], capsys, 2,
          "another scenario text", "another out_dir")
    fails(["experiment", str(scenarios["small"]), "--out", str(copy)], capsys, 2,
          "already holds 6 results", "--resume")
    fails(["experiment", str(scenarios["small"]), "--out", str(copy), "--resume", "--grid",
           "users.n=20,30"], capsys, 2, "another grid")
    assert snapshot(copy) == before


def test_resume_with_garbled_meta_needs_force(small, copy, reference, capsys):
    (copy / "meta.json").write_text('{"seed_base": 3, "gri', encoding="utf-8")
    fails(["experiment", small, "--out", str(copy), "--resume"], capsys, 2, "meta.json cannot be read",
          "--force")
    assert cli.main(["experiment", small, "--out", str(copy), "--resume", "--force"]) == 0
    assert_same_results(copy, reference)


# ---------------------------------------------------------------------- the file system
@pytest.mark.skipif(IS_ROOT, reason="root ignores file permissions")
def test_read_only_output_folder(small, tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        fails(["run", small, "--out", str(folder)], capsys, 1, str(folder), "Permission denied",
              "--out")
        fails(["experiment", small, "--out", str(folder / "sweep")], capsys, 1, "Permission denied")
    finally:
        folder.chmod(0o700)


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs Linux sysfs")
def test_folder_nobody_may_write(small, capsys):
    """sysfs refuses new folders even to root (EPERM), so this runs where root ignores
    permissions too."""
    folder = Path("/sys/cellopt-read-only-test")
    fails(["run", small, "--out", str(folder)], capsys, 1, str(folder), "not permitted")
    fails(["experiment", small, "--out", str(folder / "sweep")], capsys, 1, "not permitted")
    assert not folder.exists()


def test_output_under_a_regular_file(small, tmp_path, capsys):
    """NotADirectoryError, which root meets as well."""
    file = tmp_path / "file.txt"
    file.write_text("x", encoding="utf-8")
    fails(["run", small, "--out", str(file / "out")], capsys, 1, str(file / "out"), "Not a directory",
          "a part of this path is a file")
    fails(["experiment", small, "--out", str(file / "out")], capsys, 1, "Not a directory")
    fails(["plot", str(file / "out")], capsys, 2, "is not a folder")


def test_disk_full_while_writing_a_drop(small, tmp_path, reference, capsys, monkeypatch):
    """ENOSPC halfway through a drop's rates: no partial file, the drops before it are kept."""
    import cellopt.study.sweep as runner

    real, calls = np.savez, []

    def savez(f, **arrays):
        calls.append(1)
        if len(calls) == 3:
            f.write(b"PK\x03\x04 half a file")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(f, **arrays)

    monkeypatch.setattr(runner.np, "savez", savez)
    out = tmp_path / "full"
    fails(["experiment", small, "--out", str(out)], capsys, 1, "No space left on device",
          str(out / "drops" / "g000_drop2.npz"), "free space", "--resume")
    assert sorted(p.name for p in (out / "drops").iterdir()) == [
        "g000_drop0.csv", "g000_drop0.npz", "g000_drop1.csv", "g000_drop1.npz"]
    monkeypatch.setattr(runner.np, "savez", real)
    assert cli.main(["experiment", small, "--out", str(out), "--resume"]) == 0
    assert_same_results(out, reference)


@pytest.mark.slow
def test_file_size_limit_efbig(small, tmp_path, reference):
    """A real write error: RLIMIT_FSIZE below the index's size, SIGXFSZ ignored so that the
    write fails with EFBIG. Every drop is written; the index is not, and no part of it is."""
    out = tmp_path / "limited"
    code = textwrap.dedent(f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
        from cellopt.cli import main
        sys.exit(main(["experiment", {small!r}, "--out", {str(out)!r}]))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV,
                          timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"cellopt: error: File too large: {out / 'index.csv'}; fix:" in proc.stderr
    assert "ulimit -f" in proc.stderr and "--resume" in proc.stderr
    assert len(list((out / "drops").glob("*.csv"))) == N_DROPS
    assert not (out / "index.csv").exists() and not list(out.rglob(".*.tmp"))
    assert cli.main(["experiment", small, "--out", str(out), "--resume"]) == 0
    assert_same_results(out, reference)


# ---------------------------------------------------------------------- scheduler, interrupts
@pytest.mark.slow
def test_unreachable_scheduler_fails_fast(small, tmp_path, capsys):
    # fast: it gives up after the connect timeout the message names (not timed here)
    fails(["experiment", small, "--out", str(tmp_path / "out"), "--scheduler", "tcp://127.0.0.1:1"],
          capsys, 2, "cannot reach the Dask scheduler at 'tcp://127.0.0.1:1' within 5 s", "fix:")


def test_keyboard_interrupt_is_one_line(small, tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("cellopt.study.sweep.run_sweep", interrupted)
    out = tmp_path / "out"
    assert cli.main(["experiment", small, "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert err == (f"cellopt: interrupted; finished drops are kept in {out}: continue with "
                   f"`cellopt experiment {small} --out {out} --resume`\n")


#: Drop 0 runs; every later drop says so (a file in MARKS) and holds far longer than any
#: test waits, so that Ctrl+C lands while the sweep runs, with exactly one drop finished.
HELD_DROPS = '''\
import time
from pathlib import Path

MARKS = Path({marks!r})
SAFETY_S = {safety!r}
_RUN_TASK = []


def run_task(*args):
    drop = args[4]
    if drop >= 1:
        (MARKS / f"drop{{drop}}.held").touch()
        time.sleep(SAFETY_S)
    if not _RUN_TASK:  # a spawned worker, whose sweep module is not patched
        from cellopt.study.sweep import _run_task

        _RUN_TASK.append(_run_task)
    return _RUN_TASK[0](*args)
'''
#: Far longer than any wait of the interrupt test takes: reached only when something is stuck.
SAFETY_S = 600.0


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.slow
def test_ctrl_c_during_a_sweep_then_resume(workers, small, tmp_path, reference):
    """SIGINT to the process group, as a terminal sends it (to the worker processes too):
    exit 130, one line, no traceback; the finished drop is kept and --resume completes
    the sweep."""
    out, marks = tmp_path / "interrupted", tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "held_drops.py").write_text(HELD_DROPS.format(marks=str(marks), safety=SAFETY_S),
                                            encoding="utf-8")
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})  # spawned workers get this path too
        import cellopt.study.sweep as r
        import held_drops
        from cellopt.cli import main
        held_drops._RUN_TASK.append(r._run_task)
        r._run_task = held_drops.run_task
        sys.exit(main(["experiment", {small!r}, "--out", {str(out)!r}, "--workers", "{workers}"]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV, start_new_session=True)
    try:
        # Drop 0 written, and every worker (the process itself when serial) holding a drop.
        t0 = time.monotonic()
        while not ((out / "drops" / "g000_drop0.csv").exists()
                   and len(list(marks.glob("*.held"))) == workers):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - t0 < SAFETY_S, f"stuck: no held drops in {SAFETY_S:g} s"
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=SAFETY_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert err.splitlines()[-1] == (f"cellopt: interrupted; finished drops are kept in {out}: "
                                    f"continue with `cellopt experiment {small} --out {out} --resume`")
    assert sorted(p.name for p in out.glob("drops/*.csv")) == ["g000_drop0.csv"]
    assert cli.main(["experiment", small, "--out", str(out), "--resume"]) == 0
    assert_same_results(out, reference)


def test_a_real_bug_keeps_its_traceback(small, tmp_path, monkeypatch):
    def bug(*args, **kwargs):
        return np.zeros(2)[5]

    monkeypatch.setattr("cellopt.study.sweep.run_sweep", bug)
    with pytest.raises(IndexError):
        cli.main(["experiment", small, "--out", str(tmp_path / "out")])
