"""Capacity metric: largest user density meeting a 5th-percentile rate target."""

import json

import numpy as np
import pandas as pd
import pytest

from cellopt.errors import StoreError
from cellopt.study.capacity import CAPACITY_FILES, capacity, capacity_sweep, pooled_rates_mbps
from cellopt.study.scenario import load_scenario
from cellopt.study.seeds import drop_seeds
from cellopt.study.store import FOLDER_FILES

SCENARIO = """
name = "tiny"
[network]
builder = "hex_grid"
n_rings = 1
[users]
n = 50
[seeds]
base = 3
"""


@pytest.fixture
def scenario(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(SCENARIO)
    return load_scenario(path)


def test_bisection_brackets_the_capacity(scenario):
    res = capacity(scenario, target_p5_mbps=0.5, drops=2, method="max_rsrp",
                   first_guess_per_km2=20.0, rel_tol=0.05)
    assert res.status == "solved"
    ev = res.evaluations.set_index("density_per_km2")
    assert ev.loc[res.capacity_per_km2, "meets_target"]
    assert not ev.loc[res.upper_per_km2, "meets_target"]
    assert 1.0 < res.upper_per_km2 / res.capacity_per_km2 <= 1.05
    # Every density at or below the capacity that was tried met the target, and the
    # evaluation matches a direct computation with the same seeds.
    assert ev.loc[ev.index <= res.capacity_per_km2, "meets_target"].all()
    seeds = drop_seeds(scenario.seed_base, 2)
    rates, n = pooled_rates_mbps(scenario, res.capacity_per_km2, seeds, "max_rsrp")
    assert np.percentile(rates, 5) == pytest.approx(ev.loc[res.capacity_per_km2, "rate_p5_mbps"])
    assert n == ev.loc[res.capacity_per_km2, "n_users"]


def test_higher_target_lower_capacity(scenario):
    caps = [capacity(scenario, target_p5_mbps=t, drops=2, method="max_rsrp",
                     first_guess_per_km2=20.0, rel_tol=0.1).capacity_per_km2 for t in (0.3, 1.0)]
    assert caps[1] < caps[0]


def test_unreachable_target_gives_zero(scenario):
    res = capacity(scenario, target_p5_mbps=1e4, drops=1, method="max_rsrp",
                   first_guess_per_km2=4.0, min_density_per_km2=4.0)
    assert res.capacity_per_km2 == 0.0 and res.status == "solved"
    assert not res.evaluations["meets_target"].any()


def test_bad_capacity_inputs(scenario):
    with pytest.raises(ValueError, match="target_p5_mbps"):
        capacity(scenario, target_p5_mbps=0.0)
    with pytest.raises(ValueError, match="first_guess_per_km2"):
        capacity(scenario, first_guess_per_km2=0.5, min_density_per_km2=1.0)
    with pytest.raises(ValueError, match="rel_tol"):
        capacity(scenario, rel_tol=0.0)


def test_resumed_search_replays_its_evaluations(scenario, monkeypatch):
    first = capacity(scenario, target_p5_mbps=0.5, drops=1, method="max_rsrp",
                     first_guess_per_km2=20.0)
    # Every density the search asks for again is read back, none is solved.
    import cellopt.study.capacity as cap

    monkeypatch.setattr(cap, "pooled_rates_mbps", lambda *a, **k: pytest.fail("solved again"))
    again = capacity(scenario, target_p5_mbps=0.5, drops=1, method="max_rsrp",
                     first_guess_per_km2=20.0, evaluations=first.evaluations)
    assert again.capacity_per_km2 == first.capacity_per_km2
    assert again.upper_per_km2 == first.upper_per_km2
    # Rows of a different target are re-judged against the new target.
    strict = capacity(scenario, target_p5_mbps=1e4, drops=1, method="max_rsrp",
                      first_guess_per_km2=20.0, min_density_per_km2=20.0,
                      evaluations=first.evaluations)
    assert strict.capacity_per_km2 == 0.0


FEMTO_SCENARIO = SCENARIO + """
[femtocells]
adoption = 0.0
backhaul_mbps = 5.0
"""


def test_capacity_sweep_writes_resumes_and_refuses(tmp_path):
    path = tmp_path / "femto.toml"
    path.write_text(FEMTO_SCENARIO)
    scen = load_scenario(path)
    out = tmp_path / "sweep"
    kwargs = dict(grid={"femtocells.adoption": [0.0, 0.2]}, methods=["max_rsrp"], replicates=2,
                  drops=1, target_p5_mbps=0.5, progress=False, first_guess_per_km2=20.0,
                  rel_tol=0.1)
    table = capacity_sweep(scen, out, **kwargs)
    assert len(table) == 4
    assert list(table["femtocells.adoption"]) == [0.0, 0.0, 0.2, 0.2]
    assert list(table["replicate"]) == [0, 1, 0, 1]
    assert (table["capacity_per_km2"] > 0).all() and (table["status"] == "solved").all()
    assert (out / "capacity.csv").exists() and (out / "scenario.toml").read_text() == FEMTO_SCENARIO
    # Replicates use different drops; grid points the same ones (paired).
    meta = json.loads((out / "meta.json").read_text())
    assert len(set(meta["drop_seeds"])) == 2
    log = pd.read_csv(out / "evaluations" / "g000_max_rsrp_r0.csv")
    assert len(log) == table.loc[0, "n_evaluations"]
    written = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()]
    assert all(any(e.matches(name) for e in (*FOLDER_FILES, *CAPACITY_FILES)) for name in written), written

    # Kill one task after two evaluations: resume finishes it from there, same answer.
    (out / "results" / "g001_max_rsrp_r1.csv").unlink()
    log_path = out / "evaluations" / "g001_max_rsrp_r1.csv"
    lines = log_path.read_text().splitlines(keepends=True)
    log_path.write_text("".join(lines[:3]) + lines[3][:7])  # and a torn last line
    resumed = capacity_sweep(scen, out, resume=True, **kwargs)
    pd.testing.assert_frame_equal(resumed.drop(columns="wall_s"), table.drop(columns="wall_s"))
    assert len(pd.read_csv(log_path)) == resumed.loc[3, "n_evaluations"]  # no torn rows left

    with pytest.raises(StoreError, match="resume=True"):
        capacity_sweep(scen, out, **kwargs)
    with pytest.raises(StoreError, match="other settings"):
        capacity_sweep(scen, out, resume=True, **{**kwargs, "target_p5_mbps": 0.7})
    with pytest.raises(ValueError, match="unknown methods"):
        capacity_sweep(scen, tmp_path / "other", methods=["nope"])


def test_capacity_sweep_store_is_checked_on_resume(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(SCENARIO)
    scen = load_scenario(path)
    out = tmp_path / "sweep"
    kwargs = dict(methods=["max_rsrp"], replicates=2, drops=1, target_p5_mbps=0.5, progress=False,
                  first_guess_per_km2=20.0, rel_tol=0.2)
    table = capacity_sweep(scen, out, **kwargs)
    # A result cut short is computed again (its evaluations are replayed), with a warning.
    result = out / "results" / "g000_max_rsrp_r1.csv"
    result.write_bytes(result.read_bytes()[:-4])
    with pytest.warns(UserWarning, match=r"g000_max_rsrp_r1\.csv is damaged: its last line is cut"):
        again = capacity_sweep(scen, out, resume=True, **kwargs)
    pd.testing.assert_frame_equal(again.drop(columns="wall_s"), table.drop(columns="wall_s"),
                                  check_exact=True)
    # A log line cut inside its numbers (n_users "125" read as "1") is not replayed.
    log = out / "evaluations" / "g000_max_rsrp_r0.csv"
    before = pd.read_csv(log)
    (out / "results" / "g000_max_rsrp_r0.csv").unlink()
    *whole, last = log.read_text().splitlines(keepends=True)
    log.write_text("".join(whole) + ",".join(last.split(",")[:3]) + "," + last.split(",")[3][0])
    assert capacity_sweep(scen, out, resume=True, **kwargs)["capacity_per_km2"].tolist() \
        == table["capacity_per_km2"].tolist()
    pd.testing.assert_frame_equal(pd.read_csv(log).drop(columns="wall_s"),
                                  before.drop(columns="wall_s"), check_exact=True)
    # Without meta.json or scenario.toml the folder is refused unless forced.
    for lost in ("meta.json", "scenario.toml"):
        saved = (out / lost).read_bytes()
        (out / lost).unlink()
        with pytest.raises(StoreError, match=rf"no {lost}.*force=True"):
            capacity_sweep(scen, out, resume=True, **kwargs)
        forced = capacity_sweep(scen, out, resume=True, force=True, **kwargs)
        if lost == "scenario.toml":
            assert (out / lost).read_bytes() == saved
        else:  # the same meta.json, but for the times the run started and resumed
            times = ("started", "resumed")
            assert {k: v for k, v in json.loads(saved).items() if k not in times} == \
                {k: v for k, v in json.loads((out / lost).read_text()).items() if k not in times}
        pd.testing.assert_frame_equal(forced.drop(columns="wall_s"), table.drop(columns="wall_s"))
    with pytest.raises(StoreError, match="resume=True"):
        capacity_sweep(scen, out, **kwargs)
