"""Where synthetic layouts lie: `origin_lonlat`, its default city, and its refusals."""

from __future__ import annotations

import numpy as np
import pyproj
import pytest

from cellopt import ValidationError
from cellopt.topology import (
    DEFAULT_ORIGIN_LONLAT,
    country_layout,
    hex_grid,
    indoor_office,
    poisson_layout,
    square_grid,
    synthetic_crs,
)
from cellopt.topology.gazetteer import describe_location

BUILDERS = {
    "hex_grid": lambda **kw: hex_grid(1, **kw),
    "poisson": lambda **kw: poisson_layout({"macro": {"density_per_km2": 4.0}}, side_m=2000.0, rng=1, **kw),
    "square_grid": lambda **kw: square_grid(3, **kw),
    "indoor_office": lambda **kw: indoor_office(**kw),
    "country": lambda **kw: country_layout(side_m=20_000.0, n_cities=1, city_radius_m=(1000.0, 2000.0),
                                           rng=1, **kw),
}


def _centre_lonlat(net):
    """The lon/lat of the middle of the cells' bounding box."""
    x0, y0, x1, y1 = net.cells.total_bounds
    lon, lat = pyproj.Transformer.from_crs(net.crs, "EPSG:4326", always_xy=True).transform(
        (x0 + x1) / 2, (y0 + y1) / 2)
    return lon, lat


def test_default_origin_is_munich_and_the_where_line_says_so():
    net = hex_grid(1)
    lon, lat = _centre_lonlat(net)
    assert (lon, lat) == pytest.approx(DEFAULT_ORIGIN_LONLAT, abs=1e-6)
    assert "Munich" in describe_location([lon], [lat])


@pytest.mark.parametrize("name", list(BUILDERS))
def test_every_synthetic_builder_takes_an_origin_and_keeps_its_metres(name):
    """The layout moves to the origin; its coordinates in metres do not change."""
    build = BUILDERS[name]
    here, there = build(), build(origin_lonlat=(-0.1276, 51.5072))  # London
    assert np.array_equal(here.cells.geometry.x, there.cells.geometry.x)
    assert np.array_equal(here.cells.geometry.y, there.cells.geometry.y)
    lon, lat = pyproj.Transformer.from_crs(there.crs, "EPSG:4326", always_xy=True).transform(
        500_000.0, 1_000_000.0)
    assert (lon, lat) == pytest.approx((-0.1276, 51.5072), abs=1e-9)


def test_synthetic_crs_keeps_distances():
    """Transverse Mercator of scale 1 at the centre: 10 km east is 10 km on the ellipsoid
    to 1e-5 (the scale grows as 1 + x²/2R²: 1.2e-6 at 10 km)."""
    crs = synthetic_crs((139.6917, 35.6895))  # Tokyo
    to_lonlat = pyproj.Transformer.from_crs(crs, "EPSG:4326", always_xy=True)
    lon, lat = to_lonlat.transform([500_000.0, 510_000.0], [1_000_000.0, 1_000_000.0])
    _, _, d = pyproj.Geod(ellps="WGS84").inv(lon[0], lat[0], lon[1], lat[1])
    assert d == pytest.approx(10_000.0, rel=1e-5)


@pytest.mark.parametrize(("kw", "match"), [
    ({"origin_lonlat": (11.6, 148.1)}, "swapped"),
    ({"origin_lonlat": (200.0, 10.0)}, "origin_lonlat"),
    ({"origin_lonlat": "Munich"}, "origin_lonlat"),
    ({"origin_lonlat": (11.6, np.nan)}, "origin_lonlat"),
    ({"origin_lonlat": (11.6, 48.1), "crs": "EPSG:32632"}, "not both"),
    ({"crs": "EPSG:999999"}, "not a CRS"),
])
def test_bad_origins_are_refused_with_the_key_and_the_fix(kw, match):
    with pytest.raises(ValidationError, match=match) as err:
        hex_grid(1, **kw)
    assert "fix:" in str(err.value)


def test_scenario_key_origin_lonlat(tmp_path):
    """``[network] origin_lonlat`` places a scenario's layout; a bad one names the key."""
    from cellopt.study.scenario import load_scenario

    text = ('name = "t"\nmethods = ["max_rsrp"]\n[network]\nbuilder = "hex_grid"\nn_rings = 1\n'
            'origin_lonlat = [2.3522, 48.8566]\n[users]\nn = 30\n')
    path = tmp_path / "paris.toml"
    path.write_text(text)
    drop = load_scenario(path).build(1)
    assert _centre_lonlat(drop.network) == pytest.approx((2.3522, 48.8566), abs=1e-6)
    path.write_text(text.replace("[2.3522, 48.8566]", "[48.8566, 2.3522, 1.0]"))
    with pytest.raises(ValidationError, match="origin_lonlat"):
        load_scenario(path).build(1)


def test_the_place_and_the_traffic_in_words():
    from cellopt.study.summary import network_place, traffic_model

    assert "London, United Kingdom" in network_place(hex_grid(1, origin_lonlat=(-0.1276, 51.5072)))
    assert traffic_model(np.full(4, np.inf)).startswith("full buffer")
    assert "1 by construction" in traffic_model(np.full(4, np.inf))
    assert traffic_model(np.array([1.0, 3.0])).startswith("finite demands (mean 2 Mbit/s")
    assert traffic_model(np.array([1.0, np.inf])).startswith("mixed: 1 full-buffer users and 1")
