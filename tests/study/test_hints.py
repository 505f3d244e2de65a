"""Error messages and hints that lead somewhere: each test does what a user did and checks
that the message names what is wrong and a fix that works as printed."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from helpers import ROOT
from helpers.small_scenario import small_scenario

import cellopt
from cellopt import cli
from cellopt.errors import StoreError, ValidationError
from cellopt.study.scenario import load_scenario
from cellopt.study.sweep import run_sweep

ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
       "PYTHONPATH": str(ROOT)}
#: Far longer than any wait here takes: reached only when something is stuck.
SAFETY_S = 600.0


@pytest.fixture
def small(tmp_path: Path) -> str:
    """The small scenario, 6 drops by its [seeds]."""
    path = tmp_path / "small.toml"
    path.write_text(small_scenario(drops=6), encoding="utf-8")
    return str(path)


def error_line(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 2) -> str:
    """Run the CLI, expecting exit `code` and exactly one ``cellopt: error:`` line; return it."""
    assert cli.main(argv) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("cellopt: error: ")]
    assert len(lines) == 1, err
    return lines[0]


def command_in(line: str) -> list[str]:
    """The command a message prints between backticks, split as a shell would (one only)."""
    quoted = line.split("`")[1::2]
    commands = [q for q in quoted if q.startswith("cellopt experiment")]
    assert len(commands) == 1, line
    return shlex.split(commands[0])


def index_shape(out: Path) -> tuple[set[str], set[int]]:
    index = pd.read_csv(out / "index.csv")
    return set(index["grid_id"]), set(index["drop"])


# ------------------------------------------------------------- Ctrl+C, then the printed command
#: The task of g000 drop 1 says so on stdout and holds, so that Ctrl+C lands while the sweep
#: runs, after g000 drop 0 is written.
HELD = '''\
import sys
import threading

import cellopt.study.sweep as sweep

_run_task = sweep._run_task


def held(*args):
    if args[3] == "g000" and args[4] == 1:
        print("held", flush=True)
        threading.Event().wait({safety!r})  # until SIGINT raises KeyboardInterrupt here
    return _run_task(*args)


sweep._run_task = held
'''


@pytest.mark.slow
def test_ctrl_c_prints_a_resume_command_that_works_as_printed(small, tmp_path, capsys):
    out = tmp_path / "sweep"
    (tmp_path / "held.py").write_text(HELD.format(safety=SAFETY_S), encoding="utf-8")
    argv = ["experiment", small, "--out", str(out), "--grid", "users.n=20,30", "--drops", "3"]
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import held
        from cellopt.cli import main
        sys.exit(main({argv!r}))
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV, start_new_session=True)
    try:
        assert proc.stdout.readline() == "held\n", proc.communicate()  # the event: blocks until then
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=SAFETY_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, err
    last = err.splitlines()[-1]
    assert last == (f"cellopt: interrupted; finished drops are kept in {out}: continue with "
                    f"`cellopt experiment {small} --out {out} --resume --grid users.n=20,30 "
                    "--drops 3`"), err
    assert sorted(p.name for p in out.glob("drops/*.csv")) == ["g000_drop0.csv"]
    words = command_in(last)
    assert cli.main(words[1:]) == 0  # exactly as printed
    assert index_shape(out) == ({"g000", "g001"}, {0, 1, 2})


def test_keyboard_interrupt_names_grid_drops_and_force(small, tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("cellopt.study.sweep.run_sweep", interrupted)
    out = tmp_path / "out dir"  # a space: the printed command quotes it
    argv = ["experiment", small, "--out", str(out), "--grid", 'network.builder="hex_grid"',
            "--grid", "users.n=20,30", "--drops", "2", "--resume", "--force"]
    assert cli.main(argv) == 130
    err = capsys.readouterr().err
    words = shlex.split(err.split("`")[1])
    assert words == ["cellopt", "experiment", small, "--out", str(out), "--resume", "--grid",
                     'network.builder="hex_grid"', "--grid", "users.n=20,30", "--drops", "2",
                     "--force"]


@pytest.mark.slow
def test_resume_with_another_grid_names_both_and_the_command_that_continues(small, tmp_path,
                                                                            capsys):
    out = tmp_path / "sweep"
    assert cli.main(["experiment", small, "--out", str(out), "--grid", "users.n=20,30",
                     "--drops", "2"]) == 0
    capsys.readouterr()
    (out / "drops" / "g001_drop1.csv").unlink()  # as if interrupted
    # The command printed before this fix: without the grid.
    line = error_line(["experiment", small, "--out", str(out), "--resume"], capsys)
    assert ("holds a sweep of another grid (other settings than this run's: grid: stored --grid "
            "users.n=20,30, requested no grid)") in line
    assert "the folder holds a sweep of 2 drop(s), this run asked for 2" in line
    words = command_in(line)
    assert words[words.index("--grid") + 1] == "users.n=20,30"
    assert words[words.index("--drops") + 1] == "2"
    assert cli.main(words[1:]) == 0
    assert (out / "drops" / "g001_drop1.csv").is_file()
    assert index_shape(out) == ({"g000", "g001"}, {0, 1})
    # Another grid than the stored one: both named.
    line = error_line(["experiment", small, "--out", str(out), "--resume", "--grid",
                       "users.n=20,40"], capsys)
    assert "grid: stored --grid users.n=20,30, requested --grid users.n=20,40" in line
    # Another scenario: the stored copy of its text and the file asked for.
    other = tmp_path / "other.toml"
    other.write_text(small_scenario(drops=6).replace("n = 30", "n = 31"), encoding="utf-8")
    line = error_line(["experiment", str(other), "--out", str(out), "--resume", "--grid",
                       "users.n=20,30"], capsys)
    assert (f"another scenario text (other settings than this run's: scenario text: stored "
            f"{out / 'scenario.toml'} (from {Path(small).resolve()}), requested {other.resolve()})"
            ) in line


def test_library_refusal_names_stored_and_requested(small, tmp_path):
    scenario = load_scenario(small)
    out = tmp_path / "sweep"
    run_sweep(scenario, out, drops=1, grid={"users.n": [20, 30]}, progress=False)
    with pytest.raises(StoreError, match=r"grid: stored --grid users\.n=20,30, requested no grid"):
        run_sweep(scenario, out, resume=True, progress=False)


# ------------------------------------------------------------- the drop count
@pytest.mark.slow
def test_without_drops_a_new_sweep_takes_the_scenarios_whatever_the_grid(small, tmp_path, capsys):
    out = tmp_path / "grid"
    assert cli.main(["experiment", small, "--out", str(out), "--grid", "users.n=20,30"]) == 0
    text = capsys.readouterr().out
    assert "(drops: 6, the scenario's [seeds] drops)" in text
    assert index_shape(out) == ({"g000", "g001"}, set(range(6)))


@pytest.mark.slow
def test_a_resume_without_drops_finishes_the_stored_sweep_and_does_not_grow_it(small, tmp_path,
                                                                              capsys):
    out = tmp_path / "sweep"
    assert cli.main(["experiment", small, "--out", str(out), "--drops", "2", "--grid",
                     "users.n=20,30"]) == 0
    (out / "drops" / "g001_drop1.csv").unlink()
    capsys.readouterr()
    assert cli.main(["experiment", small, "--out", str(out), "--resume", "--grid",
                     "users.n=20,30"]) == 0
    assert f"(drops: 2, as in the sweep being resumed in {out})" in capsys.readouterr().out
    assert index_shape(out) == ({"g000", "g001"}, {0, 1})  # not the scenario's 6
    assert json.loads((out / "meta.json").read_text(encoding="utf-8"))["drops"] == 2
    # --drops adds drops to it.
    assert cli.main(["experiment", small, "--out", str(out), "--resume", "--grid",
                     "users.n=20,30", "--drops", "3"]) == 0
    assert index_shape(out) == ({"g000", "g001"}, {0, 1, 2})


def test_run_sweep_resumed_without_drops_keeps_the_stored_count(small, tmp_path):
    scenario = load_scenario(small)
    out = tmp_path / "sweep"
    run_sweep(scenario, out, drops=2, progress=False)
    (out / "drops" / "g000_drop1.csv").unlink()
    index = run_sweep(scenario, out, resume=True, progress=False)
    assert set(index["drop"]) == {0, 1}


def test_drops_help_says_what_is_used(capsys):
    with pytest.raises(SystemExit):
        cli.main(["experiment", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default: the scenario's [seeds] drops, whatever --grid says" in text
    assert "with --resume, the number of the sweep in --out" in text


# ------------------------------------------------------------- solver options
def test_option_errors_list_the_common_options_and_guess_tol(small):
    problem = load_scenario(small).build().problem
    with pytest.raises(ValidationError) as err:
        cellopt.solve(problem, method="alm", tolerance=1e-4)
    text = str(err.value)
    assert text.startswith("unknown option(s) ['tolerance'] for method 'alm'; fix: did you mean "
                           "'tol'? every method takes ['callback', 'max_iter', "
                           "'single_association', 'time_limit_s', 'tol']; 'alm' also takes "
                           "['inner_steps', ")
    with pytest.raises(ValidationError, match=r"did you mean 'time_limit_s'\?"):
        cellopt.solve(problem, method="ipm", time_limit=5)
    with pytest.raises(ValidationError, match=r"did you mean 'max_iter' for 'max_iterations'\?"):
        cellopt.solve(problem, method="dual", max_iterations=5, bogus=1)
    assert cellopt.solve(problem, method="alm", tol=1e-4).status == "optimal"  # the fix works


# ------------------------------------------------------------- cellopt plot on a run folder
@pytest.mark.slow
def test_plot_on_a_run_folder_says_what_it_is(small, tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["run", small, "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    before = sorted(p.name for p in out.iterdir())
    line = error_line(["plot", str(out)], capsys)
    assert line == (f"cellopt: error: {out} is a `cellopt run` folder (one drop); `cellopt plot` "
                    "redraws the figures of `cellopt experiment` folders; its figures are already "
                    "in it: rate_cdf.png, network_map.png, convergence.png, report.html; fix: open "
                    f"those, or run `cellopt run SCENARIO --out {out}` again to draw them anew")
    assert "damaged" not in line
    assert sorted(p.name for p in out.iterdir()) == before


# ------------------------------------------------------------- --grid mistakes
@pytest.mark.parametrize(("item", "message"), [
    ("picos.per_sectr=1,2", "--grid picos.per_sectr=1,2: [picos] has no key 'per_sectr'; fix: did "
                            "you mean --grid picos.per_sector=1,2? the keys of [picos] are "),
    ("pico.per_sector=1", "--grid pico.per_sector=1: there is no scenario section [pico]; fix: did "
                          "you mean --grid picos.per_sector=1? "),
    ("network.n_ringz=1", "--grid network.n_ringz=1: builder 'hex_grid' has no key 'n_ringz'; fix: "
                          "did you mean --grid network.n_rings=1? "),
    ('network.builder="hex_gird"', "--grid network.builder=\"hex_gird\": there is no builder "
                                   "'hex_gird'; fix: did you mean 'hex_grid'? "),
    ("seeds.base=1,2", "--grid seeds.base=1,2: the seeds are not a grid parameter"),
    ("users.n=10,-1", "--grid users.n=10,-1: the value -1: [users] n=-1 is below 0; fix: "),
])
def test_grid_mistakes_name_the_argument_not_the_file(item, message, tmp_path, capsys):
    line = error_line(["experiment", "hetnet", "--grid", item, "--out", str(tmp_path / "x")], capsys)
    assert line.startswith(f"cellopt: error: {message}"), line
    assert "hetnet.toml" not in line
    assert not (tmp_path / "x").exists()


def test_the_guessed_grid_key_works(small, tmp_path, capsys):
    line = error_line(["experiment", small, "--grid", "users.nn=20,30", "--drops", "1", "--out",
                       str(tmp_path / "x")], capsys)
    guess = line.split("did you mean ")[1].split("? ")[0].split()
    assert guess == ["--grid", "users.n=20,30"]
    assert cli.main(["experiment", small, *guess, "--drops", "1", "--out", str(tmp_path / "x")]) == 0


# ------------------------------------------------------------- Problem.from_network
def test_from_network_without_links_says_how_to_make_them(small):
    net = load_scenario(small).build().network
    with pytest.raises(TypeError) as err:
        cellopt.Problem.from_network(net)
    assert isinstance(err.value, ValidationError)
    assert str(err.value).startswith(
        "Problem.from_network(network, links) is missing links; fix: make the links with "
        "cellopt.radio.link_table(network) and pass them: Problem.from_network(network, "
        "cellopt.radio.link_table(network))")
    with pytest.raises(ValidationError, match="is missing network and links"):
        cellopt.Problem.from_network()
    problem = cellopt.Problem.from_network(net, cellopt.radio.link_table(net))  # the fix works
    assert problem.n_users == net.n_users


# ------------------------------------------------------------- a cell file given to cellopt run
CELLS = "cell_id,lon,lat\n1,2.35,48.85\n2,2.36,48.855\n3,2.345,48.86\n4,2.355,48.845\n"


@pytest.mark.parametrize("command", ["run", "experiment"])
@pytest.mark.slow
def test_a_cell_file_is_answered_with_the_scenario_that_runs_it(command, tmp_path, capsys):
    cells = tmp_path / "cells.csv"
    cells.write_text(CELLS, encoding="utf-8")
    line = error_line([command, str(cells)], capsys)
    assert "not valid TOML" not in line
    assert line.startswith(f"cellopt: error: {cells} is a cell file, not a scenario (TOML)")
    shell = line.split("`")[1]
    assert 'builder = "file"' in shell and 'path = "cells.csv"' in shell
    assert shell.endswith(f"&& cellopt {command} {tmp_path / 'cells.toml'}")
    # Run the printed command as printed (cellopt on the PATH, as installed).
    env = {**ENV, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    extra = " --drops 1" if command == "experiment" else " --no-progress --no-report"
    done = subprocess.run(["sh", "-c", f"{shell} --out {shlex.quote(str(tmp_path / 'out'))}{extra}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=SAFETY_S)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cells.toml").read_text(encoding="utf-8") == (
        '[network]\nbuilder = "file"\npath = "cells.csv"\nsectors = 3\n[users]\nn = 1000\n')
    # A scenario file beside it is never overwritten: the hint names a free name.
    line = error_line([command, str(cells)], capsys)
    assert f"> {tmp_path / 'cells_scenario.toml'} && " in line


def test_run_help_says_what_a_cell_file_does(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    assert 'builder = "file"' in " ".join(capsys.readouterr().out.split())


def test_sf_femto_from_an_installed_package_names_the_editable_install(tmp_path, monkeypatch,
                                                                         capsys):
    """After `pip install .` the hint said to put the data into site-packages/shared/data/."""
    from cellopt.study import scenario as scenario_module

    shipped = scenario_module.SHIPPED_DIR
    package = tmp_path / "site-packages" / "cellopt" / "topologies"  # as a wheel lays it out
    package.mkdir(parents=True)
    for name in ("sf_femto.toml", "city_synthetic.toml"):
        (package / name).write_text((shipped / name).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(scenario_module, "SHIPPED_DIR", package)
    line = error_line(["run", "sf_femto", "--out", str(tmp_path / "out")], capsys)
    assert f"the cell file {tmp_path / 'site-packages' / 'shared'}" in line
    assert ("reads ../../shared/data/opencellid_sf_verizon_lte.csv relative to topologies/ in a "
            "checkout of the cellopt repository") in line
    assert f"this cellopt is an installed package ({package})" in line
    assert "fix: install cellopt from a clone" in line and "`pip install -e .`" in line
    assert f"or copy {package / 'sf_femto.toml'} and set its [network] path" in line
    assert "or run its synthetic stand-in city_synthetic" in line
    assert "put the file there" not in line  # not the site-packages folder
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_checkouts_missing_data_keeps_the_plain_hint(tmp_path):
    text = (ROOT / "topologies" / "sf_femto.toml").read_text(
        encoding="utf-8")
    path = tmp_path / "sf.toml"
    path.write_text(text.replace('stand_in = "city_synthetic.toml"', "")
                    .replace("../../shared/data/", "absent/"), encoding="utf-8")
    with pytest.raises(ValidationError, match=r"absent/opencellid.*does not exist; fix: put the "
                                              r"file there or set \[network\] path"):
        load_scenario(path).build(0)
