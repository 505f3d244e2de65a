"""The propagation interface: a user-written model (the one in docs/architecture.md) plugs
into the link table, the far field and coverage maps like the built-in ones."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import ROOT

from cellopt import ValidationError, radio, topology
from cellopt.radio.far_field import auto_radius_m
from cellopt.radio.model import CouplingGains

DOC = ROOT / "docs" / "architecture.md"


@pytest.fixture(scope="module")
def documented() -> dict:
    """The namespace of the documented model's code block, run as written."""
    text = DOC.read_text()
    section = text[text.index("## A propagation model of your own"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    return namespace


def _network(n_users: int = 150, seed: int = 1):
    return topology.drop_users(topology.hex_grid(1, wraparound=False), n_users, rng=seed)


def test_documented_model_runs_and_is_a_propagation(documented):
    assert isinstance(documented["friis"], radio.Propagation)
    links = documented["links"]
    frame = links.to_frame()
    assert len(links) > 0 and np.isfinite(frame["coupling_loss_db"]).all()


def test_documented_model_without_shadowing_equals_its_distance_law(documented):
    """σ = 0: the same numbers as the median law given as a plain callable (the radio
    model's shadowing and walls off), to rounding: heights and antennas come through."""
    net = _network()
    heights = net.cells["height_m"].to_numpy(float)
    assert np.all(heights == heights[0])
    quiet = documented["Friis"](sigma_db=0.0)
    law = radio.RadioModel(
        pathloss={"macro": lambda d: quiet.median_db(d, heights[0], 1.5)},
        shadowing_std_db={"macro": 0.0, "pico": 0.0, "femto": 0.0}, wall_loss_db=0.0)
    mine = radio.link_table(net, model=radio.RadioModel(pathloss={"macro": quiet}), rng=3)
    theirs = radio.link_table(net, model=law, rng=3)
    np.testing.assert_array_equal(mine.cell, theirs.cell)
    np.testing.assert_allclose(mine.to_frame()["coupling_loss_db"],
                               theirs.to_frame()["coupling_loss_db"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(mine.sinr_db, theirs.sinr_db, rtol=0, atol=1e-9)


def test_documented_model_shadowing_is_seeded_and_unit_variance(documented):
    """The model's own shadowing: σ z with z ~ N(0, 1) from the link's seed, the same in
    the dense path and the pairs path, and the same again for the same seed."""
    net = _network(400)
    friis, quiet = documented["Friis"](sigma_db=6.0), documented["Friis"](sigma_db=0.0)
    users = np.arange(net.n_users)
    loud = CouplingGains(net, radio.RadioModel(pathloss={"macro": friis}), 7)
    flat = CouplingGains(net, radio.RadioModel(pathloss={"macro": quiet}), 7)
    z = (flat.gain_db(users) - loud.gain_db(users)) / 6.0
    assert abs(z.mean()) < 0.1 and 0.85 < z.std() < 1.15
    again = CouplingGains(net, radio.RadioModel(pathloss={"macro": friis}), 7).gain_db(users)
    np.testing.assert_array_equal(again, loud.gain_db(users))
    u = np.repeat(users[:5], net.n_cells)
    c = np.tile(np.arange(net.n_cells), 5)
    dx, dy = loud.displacement_m(users[:5])
    pairs = loud.pair_gain_db(u, c, dx.ravel(), dy.ravel())
    np.testing.assert_array_equal(pairs, loud.gain_db(users[:5]).ravel())


class _Omni:
    """A model whose values hold the antenna (a planner's prediction): 100 dB + 30 log10 d;
    no link at all with cell 0."""

    includes_fading = True
    includes_antenna = True

    def loss_db(self, links):
        loss = 100.0 + 30.0 * np.log10(links.distance_m / 1000.0)
        return np.where(np.asarray(links.cells) == 0, np.inf, loss)

    def mean_loss_db(self, distance_m):
        return 100.0 + 30.0 * np.log10(np.asarray(distance_m) / 1000.0)


def test_a_model_with_its_antenna_and_missing_links():
    """includes_antenna: no pattern or boresight gain added; an infinite loss is no link:
    no user gets cell 0, and the others' RSRP is the law's."""
    net = _network()
    links = radio.link_table(net, model=radio.RadioModel(pathloss={"macro": _Omni()}), rng=1)
    assert 0 not in links.cell
    frame = links.to_frame()
    c = net.cell_arrays()
    u = net.user_arrays()
    d = np.maximum(np.hypot(u["x_m"][links.user] - c["x_m"][links.cell],
                            u["y_m"][links.user] - c["y_m"][links.cell]), 35.0)
    np.testing.assert_allclose(frame["coupling_loss_db"], 100.0 + 30.0 * np.log10(d / 1000.0),
                               atol=1e-9)


def test_far_field_and_radius_use_the_models_mean_law(documented):
    """The automatic interference radius integrates mean_loss_db: a steeper law gives a
    smaller radius, and a link table with it is built."""
    net = topology.drop_users(topology.hex_grid(3, wraparound=False), 300, rng=2)

    class Steep(_Omni):
        def mean_loss_db(self, distance_m):
            return 100.0 + 45.0 * np.log10(np.asarray(distance_m) / 1000.0)

    shallow = auto_radius_m(net, radio.RadioModel(pathloss={"macro": _Omni()}))
    steep = auto_radius_m(net, radio.RadioModel(pathloss={"macro": Steep()}))
    assert steep < shallow
    model = radio.RadioModel(pathloss={"macro": documented["friis"]})
    links = radio.link_table(net, model=model, rng=1, interference_radius_m="auto")
    assert links.radius_m is not None and links.far_field_db is not None


def test_not_a_model_is_refused_by_name():
    with pytest.raises(ValidationError, match=r"pathloss\['macro'\].*loss_db"):
        radio.RadioModel(pathloss={"macro": 3.5})
