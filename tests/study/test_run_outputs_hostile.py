"""`cellopt run` and its coverage GeoTIFFs under hostile input: a grid, not examples.

- a full disk (ENOSPC) and a file-size limit (EFBIG) at the lowest write call of *every*
  file a run writes (the cases are made from :data:`~cellopt.study.run.OUTPUT_FILES`, and
  a run is checked to write exactly those, so a new output file cannot go untested);
- Ctrl+C in every stage: building, solving, the coverage maps, the deployable settings
  and each writer;
- outputs that would be empty: a drop with no users, every user in outage, one cell,
  coverage settings that give no pixel of data;
- every ``[coverage]`` key with unit slips, misspelt names and edge values;
- hostile results folders: a symbolic link that loops or points nowhere, a folder where
  a file is written, another scenario's folder, read-only GeoTIFFs.

Each case ends with exit 0 (with a ``cellopt: warning:`` line where the output is
empty), 1 (a failed write), 2 (refused input) or 130 (interrupted), one line and no
traceback; a failure leaves the earlier results exactly as they were, with no temporary
file and no lock, and the next run works. The drop, its solutions, the coverage maps and
the deployable settings are computed once: the cases that test writers replay them.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from helpers.checks import failing_raster_open
from helpers.small_scenario import small_scenario

import cellopt.study.atomic as atomic
import cellopt.study.run as run_module
from cellopt import cli
from cellopt.errors import ValidationError
from cellopt.study.lock import LOCK_NAME
from cellopt.study.rasters import COVERAGE_FILES
from cellopt.study.run import OUTPUT_FILES, run_scenario
from cellopt.study.scenario import Scenario, load_scenario

#: The scenario every writer runs in: an optimizer, [deploy] and [power], so that a run
#: writes every file of OUTPUT_FILES.
FULL = small_scenario(drops=1) + "\n[power]\nmax_iter = 20\n"
#: A cheap scenario for the cases that build and solve for real.
CHEAP = small_scenario(drops=1, deploy="[deploy]\nenabled = false\n").replace(
    '["max_rsrp", "alm"]', '["max_rsrp"]')

#: How each output file is written: "file" (an open file of the atomic writer: the CSVs,
#: the figures, the report, run.json), "gpkg" (GDAL through geopandas) or "tif" (GDAL
#: through rasterio). Every name of OUTPUT_FILES must have one.
WRITERS = {name: ("tif" if name.endswith(".tif") else "gpkg" if name.endswith(".gpkg") else "file")
           for name in OUTPUT_FILES}
ERRORS = {"ENOSPC": (errno.ENOSPC, "No space left on device", "free space"),
          "EFBIG": (errno.EFBIG, "File too large", "ulimit -f")}


def error_line(err: str) -> str:
    """The one error line of a failed command (and nothing else on stderr but warnings)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("cellopt: error: ")]
    assert len(lines) == 1, err
    assert all(line.startswith("cellopt: warning: ") for line in err.splitlines() if line not in lines)
    return lines[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every entry of `folder` (hidden ones too), files with their bytes."""
    return {p.name: p.read_bytes() if p.is_file() else b"<folder>" for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, run_module.RunResult]:
    """The scenario file, the folder of its complete run, and the run's result."""
    base = tmp_path_factory.mktemp("full")
    path = base / "full.toml"
    path.write_text(FULL, encoding="utf-8")
    out = base / "run"
    result = run_scenario(load_scenario(path), out)
    return path, out, result


@pytest.fixture
def replay(full, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """Make every run replay the full run's drop, solutions, coverage maps and deployable
    settings (the writers run for real); ``stop[stage] = exception`` raises it there."""
    _, _, result = full
    stop: dict[str, object] = {}

    def stage(name, value):
        if name in stop:
            raise stop[name]
        return value

    monkeypatch.setattr(Scenario, "build", lambda self, seed, **kw: stage("build", result.drop))
    monkeypatch.setattr(run_module, "_solve",
                        lambda scenario, drop, spec, progress: stage(f"solve {spec.label}",
                                                                     result.solutions[spec.label]))
    monkeypatch.setattr(run_module, "coverage_map",
                        lambda *a, **k: stage("coverage", result.coverage))
    monkeypatch.setattr(run_module, "deploy_run", lambda *a, **k: stage("deploy", result.deployment))
    return stop


@pytest.fixture
def copy(full, tmp_path: Path) -> Path:
    """A copy of the full run's folder (the earlier results of a case)."""
    _, out, _ = full
    folder = tmp_path / "run"
    folder.mkdir()
    for p in out.iterdir():
        (folder / p.name).write_bytes(p.read_bytes())
    return folder


def run(path: Path, out: Path, *extra: str) -> int:
    return cli.main(["run", str(path), "--out", str(out), "--no-progress", *extra])


def assert_untouched(out: Path, before: dict[str, bytes]) -> None:
    """The earlier results exactly as they were: no new, torn, temporary or lock file."""
    assert snapshot(out) == before
    assert not (out / LOCK_NAME).exists() and atomic.leftover_temporaries(out) == []


# --------------------------------------------------------------- every writer, every file
def test_a_run_writes_exactly_the_output_files_each_with_a_writer_case(full):
    """The grid below is made from OUTPUT_FILES: a run writing a file not listed there (or
    not writing one listed) fails here, so no output file escapes the full-disk cases."""
    _, out, result = full
    assert [p.name for p in result.files] == list(OUTPUT_FILES)
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)
    assert set(WRITERS) == set(OUTPUT_FILES) and set(WRITERS.values()) == {"file", "gpkg", "tif"}


def _failing(monkeypatch: pytest.MonkeyPatch, name: str, failure: BaseException) -> list[str]:
    """Make the lowest write call of file `name` write a few bytes and raise `failure`, once
    (later runs write it); return the list each failure is recorded in."""
    failed: list[str] = []

    def mine(path: object) -> bool:
        target = atomic.temporary_target(Path(os.fspath(path)).name)
        return not failed and target is not None and target[0] == name

    if WRITERS[name] == "file":
        real_open = atomic._open_temporary

        class Full:
            def __init__(self, f):
                self._f = f

            def write(self, data):
                self._f.write(data[:8])
                failed.append(name)
                raise failure

            def __getattr__(self, attr):
                return getattr(self._f, attr)

        @contextlib.contextmanager
        def open_temporary(tmp, mode):
            with real_open(tmp, mode) as f:
                yield Full(f) if mine(tmp) else f

        monkeypatch.setattr(atomic, "_open_temporary", open_temporary)
    elif WRITERS[name] == "gpkg":
        real_to_file = gpd.GeoDataFrame.to_file

        def to_file(self, path, *args, **kwargs):
            if not mine(path):
                return real_to_file(self, path, *args, **kwargs)
            Path(path).write_bytes(b"SQLite format 3\x00 part")
            failed.append(name)
            raise failure

        monkeypatch.setattr(gpd.GeoDataFrame, "to_file", to_file)
    else:
        real_open, failing = rasterio.open, failing_raster_open(failure)

        def raster_open(path, mode="r", **profile):
            if mode == "w" and mine(path):
                failed.append(name)
                return failing(path, mode, **profile)
            return real_open(path, mode, **profile)

        monkeypatch.setattr(rasterio, "open", raster_open)
    return failed


#: The cases of the fast set, one per kind of writer; the others are marked slow.
FAST_WRITES = {("user_rates.csv", "ENOSPC"), ("results.gpkg", "EFBIG"),
               ("coverage_best_server.tif", "ENOSPC")}
#: (file, error) of every case: ENOSPC for every file; EFBIG for the GDAL writers and two of
#: those through an open file (which go the same way for every errno).
WRITE_CASES = [pytest.param(name, error, id=f"{name}-{error}",
                            marks=() if (name, error) in FAST_WRITES else pytest.mark.slow)
               for name in OUTPUT_FILES for error in ERRORS
               if error == "ENOSPC" or WRITERS[name] != "file" or name in ("user_rates.csv", "report.html")]


@pytest.mark.parametrize("name, error", WRITE_CASES)
def test_a_failed_write_of_any_file_is_one_line_and_keeps_the_earlier_set(name, error, full, replay,
                                                                          copy, capsys, monkeypatch):
    path = full[0]
    code, cause, fix = ERRORS[error]
    before = snapshot(copy)
    failed = _failing(monkeypatch, name, OSError(code, os.strerror(code)))
    assert run(path, copy) == 1
    line = error_line(capsys.readouterr().err)
    assert failed == [name]
    assert f"{cause}: {copy / name}; fix:" in line and fix in line, line
    assert_untouched(copy, before)


# --------------------------------------------------------------- Ctrl+C in every stage
#: Every stage of a run of FULL: the replayed computations, then each file's writer.
STAGES = ["build", "solve max_rsrp", "solve alm", "solve power (ipm)", "coverage", "deploy",
          *(f"write {n}" for n in OUTPUT_FILES)]


def test_the_stages_are_those_of_the_full_run(full):
    _, _, result = full
    solved = [label for label in result.solutions if label not in result.deployment.solutions]
    assert [s for s in STAGES if s.startswith("solve ")] == [f"solve {label}" for label in solved]


#: The stages of the fast set; the others are marked slow.
FAST_STAGES = ("solve alm", "write results.gpkg")


@pytest.mark.parametrize("stage", [pytest.param(s, marks=() if s in FAST_STAGES else pytest.mark.slow)
                                   for s in STAGES])
def test_ctrl_c_in_any_stage_is_one_line_and_the_next_run_works(stage, full, replay, copy, capsys,
                                                               monkeypatch):
    path = full[0]
    before = snapshot(copy)
    failed = None
    if stage.startswith("write "):  # as the file is half written, at its lowest write call
        failed = _failing(monkeypatch, stage.removeprefix("write "), KeyboardInterrupt())
    else:
        replay[stage] = KeyboardInterrupt()
    assert run(path, copy) == 130
    assert capsys.readouterr().err == "cellopt: interrupted\n"
    assert failed is None or failed == [stage.removeprefix("write ")]
    assert_untouched(copy, before)
    replay.clear()  # the next run writes the whole set
    assert run(path, copy) == 0
    assert sorted(p.name for p in copy.iterdir()) == sorted(OUTPUT_FILES)
    assert atomic.leftover_temporaries(copy) == [] and not (copy / LOCK_NAME).exists()


# --------------------------------------------------------------- outputs that would be empty
def scenario_file(folder: Path, text: str, name: str = "s.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("change, needles", [
    (("n = 30", "n = 0"), ["has no users", "user_rates.csv", "rate_cdf.png", "fix: give [users] n"]),
    pytest.param(("n_rings = 1", "n_rings = 1\nisd_m = 5000.0\ntx_power_dbm = -30.0"),
                 ["none of the 30 users has a usable link", "fix: check the cells' tx_power_dbm"],
                 marks=pytest.mark.slow),
])
def test_a_drop_whose_user_tables_would_be_empty_is_warned_with_the_fix(change, needles, tmp_path,
                                                                          capsys):
    path = scenario_file(tmp_path, CHEAP.replace(*change))
    out = tmp_path / "out"
    assert run(path, out, "--no-report") == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if str(path) in line and needles[0] in line]
    assert len(lines) == 1 and lines[0].startswith("cellopt: warning: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]
    with rasterio.open(out / COVERAGE_FILES["rsrp_dbm"]) as raster:  # the maps hold data
        assert np.isfinite(raster.read(1)).any()


@pytest.mark.slow
def test_a_network_of_one_cell_maps_that_cell_everywhere(tmp_path, capsys):
    path = scenario_file(tmp_path, CHEAP.replace("n_rings = 1", "n_rings = 0\nsectors = 1"))
    out = tmp_path / "out"
    assert run(path, out, "--no-report") == 0
    assert "cellopt: warning" not in capsys.readouterr().err
    with rasterio.open(out / COVERAGE_FILES["best_server"]) as raster:
        values = raster.read(1)
        assert set(np.unique(values[values != raster.nodata])) == {0}
        assert raster.tags()["CELL_IDS"].count(",") == 0


@pytest.mark.parametrize("lines, needles", [
    ("resolution_m = 1e5", ["[coverage] resolution_m=100000 m is larger than the coverage area",
                            "fix: give resolution_m below"]),
    ("resolution_m = 1e-300", ["[coverage] resolution_m=1e-300 m is too fine", "fix: give resolution_m "
                               "in metres"]),
    ("max_pixels = 1", ["[coverage] max_pixels=1 makes the pixels", "fix: give a larger max_pixels"]),
    ("resolution_m = 0.001\nmax_pixels = 9_000_000_000_000", ["a coverage map of", "max_pixels"]),
])
def test_coverage_settings_that_give_no_map_are_refused_before_solving(lines, needles, tmp_path,
                                                                        capsys, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("solved before the coverage settings were checked")

    monkeypatch.setattr(run_module, "_solve", never)
    path = scenario_file(tmp_path, CHEAP + f"\n[coverage]\n{lines}\n")
    out = tmp_path / "out"
    assert run(path, out) == 2
    err = capsys.readouterr().err
    line = error_line(err)
    for needle in [str(path), *needles]:
        assert needle in line, line
    assert not out.exists() or list(out.iterdir()) == []
    warned = [w for w in err.splitlines() if w.startswith("cellopt: warning: ")]
    assert all(w.startswith(f"cellopt: warning: {path}: [coverage] ") for w in warned), err
    assert len(warned) == len(set(warned)) <= 1, err  # once, when the file is loaded
    if "1e5" in lines or "0.001" in lines:
        assert len(warned) == 1 and "outside the usual range" in warned[0], err


# --------------------------------------------------------------- every [coverage] key
@pytest.mark.parametrize("lines, needle", [
    ("resolution = 25", "[coverage] unknown key 'resolution'; valid: ['enabled', 'max_pixels', "
                        "'resolution_m']"),
    ('quantities = ["rsrp"]', "[coverage] unknown key 'quantities'"),
    ("nodata = -9999", "[coverage] unknown key 'nodata'"),
    ('crs = "EPSG:4326"', "[coverage] unknown key 'crs'"),
    ('resolution_m = "25 m"', "[coverage] key 'resolution_m' expected number, got string ('25 m')"),
    ("resolution_m = 0", "[coverage] resolution_m=0 m is outside the possible range (0, 1e+06] m; fix:"),
    ("resolution_m = -25", "[coverage] resolution_m=-25 m is outside the possible range"),
    ("resolution_m = nan", "[coverage] resolution_m=nan m is not finite; fix:"),
    ("resolution_m = inf", "[coverage] resolution_m=inf m is not finite; fix:"),
    ("resolution_m = 2e6", "[coverage] resolution_m=2e+06 m is outside the possible range"),
    ("max_pixels = 0", "[coverage] max_pixels=0 is below 1; fix:"),
    ("max_pixels = -5", "[coverage] max_pixels=-5 is below 1; fix:"),
    ("max_pixels = 1e6", "[coverage] key 'max_pixels' expected integer, got float (1000000.0); fix: "
                         "write a whole number"),
    ("max_pixels = 1.5", "[coverage] key 'max_pixels' expected integer, got float"),
    ('max_pixels = "1M"', "[coverage] key 'max_pixels' expected integer, got string ('1M')"),
    ('enabled = "no"', "[coverage] key 'enabled' expected boolean, got string ('no')"),
    ("enabled = 1", "[coverage] key 'enabled' expected boolean, got integer (1)"),
    ("[coverage.resolution_m]\nx = 1", "[coverage] key 'resolution_m' expected number, got table"),
])
def test_bad_coverage_keys_are_refused_naming_file_key_and_fix(lines, needle, tmp_path, capsys):
    path = scenario_file(tmp_path, CHEAP + f"\n[coverage]\n{lines}\n")
    assert run(path, tmp_path / "out") == 2
    line = error_line(capsys.readouterr().err)
    assert line.startswith(f"cellopt: error: {path}: ") and needle in line, line


@pytest.mark.parametrize("lines, needle", [
    ("resolution_m = 0.025", "[coverage] resolution_m=0.025 m is outside the usual range [1, 10000] m "
                             "(legal, but check the unit)"),  # kilometres
    ("resolution_m = 0.0002", "[coverage] resolution_m=0.0002 m is outside the usual range"),  # degrees
    ("resolution_m = 25000", "[coverage] resolution_m=25000 m is outside the usual range"),  # mm
    ("enabled = false\nresolution_m = 10", "[coverage] enabled = false, so resolution_m is not used "
                                           "(no coverage map is made); fix: remove it, or set "
                                           "enabled = true"),
    ("enabled = false\nresolution_m = 10\nmax_pixels = 100", "[coverage] enabled = false, so "
                                                             "resolution_m, max_pixels are not used"),
])
def test_unit_slips_and_unused_coverage_keys_are_warned_naming_the_file(lines, needle, tmp_path):
    path = scenario_file(tmp_path, CHEAP + f"\n[coverage]\n{lines}\n")
    with pytest.warns(UserWarning) as caught:
        load_scenario(path)
    messages = [str(w.message) for w in caught]
    assert any(m.startswith(f"{path}: [coverage] ") and needle in m for m in messages), messages


def test_every_coverage_key_is_used(tmp_path):
    """Each key the section takes changes what is computed (none is read and dropped)."""
    from cellopt.study.schema import SECTION_KEYS

    assert set(SECTION_KEYS["coverage"]) == {"enabled", "resolution_m", "max_pixels"}
    path = scenario_file(tmp_path, CHEAP)
    drop = load_scenario(path).build(3)
    for lines, check in (("enabled = false", lambda s, g: not s.coverage.enabled),
                         ("resolution_m = 50", lambda s, g: g[0] == 50.0),
                         ("max_pixels = 100", lambda s, g: g[1] * g[2] <= 100)):
        scenario = load_scenario(scenario_file(tmp_path, CHEAP + f"\n[coverage]\n{lines}\n", "k.toml"))
        grid = run_module.check_coverage(drop, resolution_m=scenario.coverage.resolution_m,
                                         max_pixels=scenario.coverage.max_pixels)
        assert check(scenario, grid), lines


# --------------------------------------------------------------- hostile results folders
def test_a_symbolic_link_that_loops_or_points_nowhere_is_refused(full, tmp_path, capsys):
    loop, nowhere = tmp_path / "loop", tmp_path / "nowhere"
    loop.symlink_to(loop)
    nowhere.symlink_to(tmp_path / "missing" / "x")
    for link, what in ((loop, "which loops"), (nowhere, "which points to nothing")):
        assert run(full[0], link) == 2
        line = error_line(capsys.readouterr().err)
        assert f"--out {link} is a symbolic link to {os.readlink(link)}, {what}" in line, line
        assert "; fix: give a folder, or point the link at one" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loop", "nowhere"]


@pytest.mark.parametrize("name", ["report.html", "coverage_best_server.tif", "run.json"])
def test_a_folder_where_a_file_is_written_is_refused_before_anything_is_built(name, full, replay, copy,
                                                                             capsys):
    (copy / name).unlink()
    (copy / name).mkdir()
    before = snapshot(copy)
    replay["build"] = AssertionError("built before the folder was checked")
    assert run(full[0], copy, "--force") == 2
    line = error_line(capsys.readouterr().err)
    assert f"{copy / name}: a folder where cellopt run writes a file of that name; fix: move or " \
           "rename it, or give another --out" in line, line
    assert_untouched(copy, before)


def test_a_folder_target_never_leaves_a_mix_of_two_runs(tmp_path):
    """The set's commit checks every target before it moves any: a folder among them fails
    the whole set, which stays the earlier one."""
    a, b = tmp_path / "a.csv", tmp_path / "b.tif"
    a.write_text("old\n", encoding="utf-8")
    b.mkdir()
    with pytest.raises(IsADirectoryError) as exc, atomic.atomic_files() as files:
        files.write(a, lambda f: f.write("new\n"))
        files.write(b, lambda f: f.write("new\n"))
    assert exc.value.filename == str(b)
    assert a.read_text(encoding="utf-8") == "old\n" and b.is_dir()
    assert atomic.leftover_temporaries(tmp_path) == [] and sorted(os.listdir(tmp_path)) == ["a.csv", "b.tif"]


def test_another_scenarios_folder_needs_force(full, replay, copy, tmp_path, capsys):
    other = scenario_file(tmp_path, FULL, "other.toml")
    before = snapshot(copy)
    assert run(other, copy) == 2
    line = error_line(capsys.readouterr().err)
    assert "holds the `cellopt run` results of scenario 'full'" in line and "--force" in line, line
    assert_untouched(copy, before)


@pytest.mark.slow
def test_read_only_geotiffs_of_an_earlier_run_are_replaced(full, replay, copy, capsys):
    for name in COVERAGE_FILES.values():
        (copy / name).chmod(0o444)
    assert run(full[0], copy) == 0
    for name in COVERAGE_FILES.values():
        with rasterio.open(copy / name) as raster:
            assert raster.tags()["SOFTWARE"].startswith("cellopt ")
    assert atomic.leftover_temporaries(copy) == []


def test_files_of_output_names_cellopt_did_not_write_need_force(full, replay, tmp_path, capsys):
    """``--out`` into a folder of one's own (a source tree, ``--out docs``): a file there of a
    name the run writes, not written by cellopt, is not replaced without --force; the
    folder's other files are never touched."""
    out = tmp_path / "docs"
    out.mkdir()
    mine = {"README.md": b"# my notes\n", "method_summary.csv": b"a,b\n1,2\n",
            "network_map.png": b"\x89PNG\r\n\x1a\n my own figure", "results.gpkg": b"not a GeoPackage"}
    for name, data in mine.items():
        (out / name).write_bytes(data)
    before = snapshot(out)
    assert run(full[0], out) == 2
    line = error_line(capsys.readouterr().err)
    assert f"{out} holds method_summary.csv, results.gpkg, network_map.png, which cellopt did not " \
           "write" in line and "fix: write to another folder" in line and "--force" in line, line
    assert_untouched(out, before)


@pytest.mark.slow
def test_force_replaces_files_cellopt_did_not_write_and_keeps_the_others(full, replay, tmp_path):
    out = tmp_path / "docs"
    out.mkdir()
    mine = {"README.md": b"# my notes\n", "method_summary.csv": b"a,b\n1,2\n",
            "network_map.png": b"\x89PNG\r\n\x1a\n my own figure", "results.gpkg": b"not a GeoPackage"}
    (out / "README.md").write_bytes(mine["README.md"])  # beside a file of another name: not refused
    assert run(full[0], out) == 0
    assert (out / "README.md").read_bytes() == mine["README.md"]
    for name, data in mine.items():  # replaced with --force; the others kept
        (out / name).write_bytes(data)
    (out / "run.json").unlink()
    assert run(full[0], out, "--force") == 0
    assert (out / "README.md").read_bytes() == mine["README.md"]
    assert (out / "method_summary.csv").read_bytes().startswith(b"method,objective,")


def test_ctrl_c_while_the_set_is_moved_waits_for_the_last_move(tmp_path, monkeypatch):
    """The moves onto the targets are the one stage a Ctrl+C could cut in two (a mix of two
    sets): it is held until the last move, then raised."""
    targets = [tmp_path / f"{i}.csv" for i in range(4)]
    for t in targets:
        t.write_text("old\n", encoding="utf-8")
    real_replace, moved = os.replace, []

    def replace(src, dst):
        real_replace(src, dst)
        moved.append(dst)
        if len(moved) == 2:
            signal.raise_signal(signal.SIGINT)  # Ctrl+C between the second and third moves

    monkeypatch.setattr(atomic.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt), atomic.atomic_files() as files:
        for t in targets:
            files.write(t, lambda f: f.write("new\n"))
    assert [t.read_text(encoding="utf-8") for t in targets] == ["new\n"] * 4
    assert atomic.leftover_temporaries(tmp_path) == [] and hidden(tmp_path) == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_while_a_run_moves_its_files_is_one_line_and_leaves_the_new_set(full, replay, copy,
                                                                             capsys, monkeypatch):
    real_replace, moved = os.replace, []

    def replace(src, dst):
        real_replace(src, dst)
        moved.append(Path(dst).name)
        if len(moved) == 3:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(atomic.os, "replace", replace)
    assert run(full[0], copy, "--seed", "11") == 130
    assert capsys.readouterr().err == "cellopt: interrupted\n"
    assert moved == list(OUTPUT_FILES)  # every file moved: the new set, whole
    assert json.loads((copy / "run.json").read_text(encoding="utf-8"))["seed"] == 11
    assert atomic.leftover_temporaries(copy) == [] and not (copy / LOCK_NAME).exists()


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# --------------------------------------------------------------- write_geotiff on its own
@pytest.mark.parametrize("where, code", [("missing/x.tif", errno.ENOENT), ("file/x.tif", errno.ENOTDIR)])
def test_a_geotiff_into_a_missing_folder_or_a_file_says_so(where, code, full, tmp_path):
    """GDAL's own message names the cause: it is the error's errno (not "could not write the
    file", nor a full disk read from the disk of a folder that is not there)."""
    from cellopt.study.rasters import write_geotiff

    (tmp_path / "file").write_text("a file\n", encoding="utf-8")
    with pytest.raises(atomic.WriteError) as exc:
        write_geotiff(tmp_path / where, full[2].coverage, "rsrp_dbm")
    assert exc.value.errno == code and exc.value.filename == str(tmp_path / where)
    assert exc.value.strerror.startswith(os.strerror(code)), exc.value.strerror


@pytest.mark.parametrize("path", ["", ".", "..", "/"])
def test_a_geotiff_path_that_names_no_file_is_refused(path, full):
    from cellopt.study.rasters import write_geotiff

    with pytest.raises(ValidationError) as exc:
        write_geotiff(path, full[2].coverage, "sinr_db")
    assert f"path={path!r} names no file; fix: give a file path, e.g. 'coverage_sinr_db.tif'" \
        in str(exc.value)
