"""RasterPathLoss: a planner's per-cell predictions as the links of a network, hand-checked
on planes (which bilinear sampling reproduces exactly), and every refusal."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import Affine

from cellopt import ValidationError, radio
from cellopt.coverage import coverage_map
from cellopt.drop import Drop
from cellopt.network import Network, cells_frame, users_frame
from cellopt.study.scenario import load_scenario

CRS = "EPSG:32632"
X0, Y0 = 690_000.0, 5_336_000.0  # upper-left corner of every raster [m]
RES, SIZE = 10.0, 100  # 1 km × 1 km at 10 m
CELL_XY = np.array([[X0 + 300.0, Y0 - 500.0], [X0 + 700.0, Y0 - 500.0]])


def plane(a: float, b: float, c: float) -> np.ndarray:
    """a + b (x − X0) + c (Y0 − y) at the pixel centres [dB]."""
    jj, ii = np.mgrid[0:SIZE, 0:SIZE]
    return a + b * (ii + 0.5) * RES + c * (jj + 0.5) * RES


def truth(a: float, b: float, c: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return a + b * (x - X0) + c * (Y0 - y)


PLANES = {"A": (90.0, 0.02, 0.01), "B": (95.0, -0.01, 0.03)}


def write(folder: Path, values: dict[str, np.ndarray], *, crs: str | None = CRS,
          nodata: float = -9999.0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for cell_id, data in values.items():
        profile = {"driver": "GTiff", "height": SIZE, "width": SIZE, "count": 1,
                   "dtype": "float32", "transform": Affine(RES, 0, X0, 0, -RES, Y0),
                   "nodata": nodata}
        if crs is not None:
            profile["crs"] = crs
        with rasterio.open(folder / f"{cell_id}.tif", "w", **profile) as dst:
            dst.write(data.astype("float32")[None])
    return folder


def network(users_xy: np.ndarray, *, azimuth=np.nan) -> Network:
    cells = cells_frame(CELL_XY[:, 0], CELL_XY[:, 1], crs=CRS, tier="macro", tx_power_dbm=40.0,
                        antenna_gain_dbi=10.0, cell_id=np.array(["A", "B"]), height_m=25.0,
                        azimuth_deg=azimuth)
    users = users_frame(users_xy[:, 0], users_xy[:, 1], crs=CRS)
    return Network(cells=cells, users=users, bandwidth_mhz=10.0)


def users_inside(n: int = 60, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([X0 + rng.uniform(20, 980, n), Y0 - rng.uniform(20, 980, n)])


@pytest.fixture
def planes(tmp_path) -> Path:
    return write(tmp_path / "rasters", {k: plane(*p) for k, p in PLANES.items()})


def coupling_loss(net: Network, model: radio.RadioModel) -> np.ndarray:
    """(users, cells) coupling loss from a link table with every cell a candidate."""
    links = radio.link_table(net, n_candidates=net.n_cells, model=model, rng=0)
    out = np.full((net.n_users, net.n_cells), np.inf)
    frame = links.to_frame()
    out[frame["user"], frame["cell"]] = frame["coupling_loss_db"]
    return out


@pytest.mark.parametrize("kind", ["path_loss_db", "gain_db", "rsrp_dbm"])
def test_links_hold_the_predictions_at_the_users(planes, tmp_path, kind):
    """Bilinear sampling reproduces a plane: the coupling loss of every link is the plane at
    the user, whatever the unit the pixels are in (gains negated, RSRP from the power
    per resource element)."""
    xy = users_inside()
    net = network(xy)
    model = radio.RadioModel()
    re_power = 40.0 - model.rsrp_offset_db(10.0)
    convert = {"path_loss_db": lambda v: v, "gain_db": lambda v: -v,
               "rsrp_dbm": lambda v: re_power - v}[kind]
    source = write(tmp_path / kind, {k: convert(plane(*p)) for k, p in PLANES.items()})
    rasters = radio.RasterPathLoss(source, kind=kind)
    loss = coupling_loss(net, radio.RadioModel(pathloss={"macro": rasters}))
    for j, cell in enumerate("AB"):
        np.testing.assert_allclose(loss[:, j], truth(*PLANES[cell], xy[:, 0], xy[:, 1]),
                                   atol=1e-4)  # float32 pixels


def test_without_antenna_the_cells_pattern_is_applied(planes):
    xy = users_inside()
    with_pattern = network(xy, azimuth=np.array([90.0, 270.0]))
    model = radio.RadioModel(pathloss={"macro": radio.RasterPathLoss(planes,
                                                                     includes_antenna=False)})
    loss = coupling_loss(with_pattern, model)
    bearing = np.degrees(np.arctan2(xy[:, 0, None] - CELL_XY[None, :, 0],
                                    xy[:, 1, None] - CELL_XY[None, :, 1]))
    pattern = radio.sector_gain_db(radio.angle_off_boresight_deg(bearing, np.array([90.0, 270.0])))
    for j, cell in enumerate("AB"):
        expected = truth(*PLANES[cell], xy[:, 0], xy[:, 1]) - 10.0 - pattern[:, j]
        np.testing.assert_allclose(loss[:, j], expected, atol=1e-4)
    # with the antenna in the predictions, the same network's pattern is not added
    held = coupling_loss(with_pattern, radio.RadioModel(
        pathloss={"macro": radio.RasterPathLoss(planes)}))
    np.testing.assert_allclose(held[:, 0], truth(*PLANES["A"], xy[:, 0], xy[:, 1]), atol=1e-4)


def test_nodata_and_outside_mean_no_link_and_are_counted(tmp_path):
    """Cell B has nodata on its east half: users there have no link with B; a user outside
    both rasters has no link at all and is counted in the warning."""
    b = plane(*PLANES["B"])
    b[:, SIZE // 2:] = -9999.0
    source = write(tmp_path / "r", {"A": plane(*PLANES["A"]), "B": b})
    xy = np.array([[X0 + 200.0, Y0 - 400.0], [X0 + 800.0, Y0 - 400.0], [X0 + 5000.0, Y0 - 400.0]])
    net = network(xy)
    with pytest.warns(UserWarning, match=r"1 of 3 users .* no link"):
        loss = coupling_loss(net, radio.RadioModel(pathloss={"macro": radio.RasterPathLoss(source)}))
    assert np.isfinite(loss[0]).all()
    assert np.isfinite(loss[1, 0]) and loss[1, 1] == np.inf
    assert np.isinf(loss[2]).all()


def test_refusals_name_the_file_and_the_fix(planes, tmp_path):
    net = network(users_inside(5))
    outside = network(users_inside(5) + 50_000.0)
    with pytest.raises(ValidationError, match=r"no user .* inside a raster.*fix"):
        coupling_loss(outside, radio.RadioModel(pathloss={"macro": radio.RasterPathLoss(planes)}))
    only_a = write(tmp_path / "only_a", {"A": plane(*PLANES["A"])})
    with pytest.raises(ValidationError, match=r"1 cells without a raster: B; fix"):
        coupling_loss(net, radio.RadioModel(pathloss={"macro": radio.RasterPathLoss(only_a)}))
    extra = write(tmp_path / "extra", {**{k: plane(*p) for k, p in PLANES.items()},
                                       "Z9": plane(90.0, 0.0, 0.0)})
    with pytest.raises(ValidationError, match=r"rasters for no cell of the network: Z9"):
        coupling_loss(net, radio.RadioModel(pathloss={"macro": radio.RasterPathLoss(extra)}))
    with pytest.raises(ValidationError, match=r"kind='gain_db'"):  # losses given as gains
        coupling_loss(net, radio.RadioModel(pathloss={"macro": radio.RasterPathLoss(
            write(tmp_path / "neg", {k: -plane(*p) for k, p in PLANES.items()}))}))
    with pytest.raises(ValidationError, match="CRS"):
        radio.RasterPathLoss(write(tmp_path / "nocrs", {"A": plane(*PLANES["A"])}, crs=None))
    with pytest.raises(ValidationError, match="kind="):
        radio.RasterPathLoss(planes, kind="loss")
    with pytest.raises(ValidationError, match="includes_antenna=True"):
        radio.RasterPathLoss(planes, kind="rsrp_dbm", includes_antenna=False)


def test_added_shadowing_is_seeded_and_the_median_drops_it(planes):
    xy = users_inside(400)
    net = network(xy)
    loud = radio.RasterPathLoss(planes, shadowing_std_db=6.0, decorrelation_m=0.0)
    quiet = coupling_loss(net, radio.RadioModel(pathloss={"macro": radio.RasterPathLoss(planes)}))
    shadowed = coupling_loss(net, radio.RadioModel(pathloss={"macro": loud}))
    z = (shadowed - quiet) / 6.0
    assert abs(z.mean()) < 0.15 and 0.85 < z.std() < 1.15
    assert loud.median().shadowing_std_db == 0.0 and loud.median().source == loud.source


def test_far_field_law_follows_the_predictions(tmp_path):
    """The far field's mean law is the log-distance fit of the sampled links: a raster
    that is exactly 30 + 35 log10 d gives that law back."""
    jj, ii = np.mgrid[0:SIZE, 0:SIZE]
    x, y = X0 + (ii + 0.5) * RES, Y0 - (jj + 0.5) * RES
    law = {c: 30.0 + 35.0 * np.log10(np.maximum(np.hypot(x - cx, y - cy), 1.0))
           for c, (cx, cy) in zip("AB", CELL_XY, strict=True)}
    source = write(tmp_path / "law", law)
    net = network(users_inside(300))
    coupling = radio.model.CouplingGains(net, radio.RadioModel(
        pathloss={"macro": radio.RasterPathLoss(source)}), 0)
    bound = coupling.propagation["macro"]
    d = np.array([100.0, 1000.0, 5000.0])
    np.testing.assert_allclose(bound.mean_loss_db(d), 30.0 + 35.0 * np.log10(d), atol=0.05)


def test_coverage_maps_take_the_rasters_grid(planes):
    net = network(users_inside(50))
    model = radio.RadioModel(pathloss={"macro": radio.RasterPathLoss(planes)})
    links = radio.link_table(net, model=model, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # pixels outside the rasters
        cmap = coverage_map(Drop.from_network(net, links))
    assert cmap.resolution_m == RES


SCENARIO = """
[network]
builder = "file"
path = "cells.csv"
region_buffer_m = 150.0

[users]
n = 40

[radio]
{radio}
"""


@pytest.fixture
def scenario_dir(tmp_path, planes) -> Path:
    """A cell file of the two cells (lon/lat) next to the rasters."""
    import pyproj
    to_lonlat = pyproj.Transformer.from_crs(CRS, "EPSG:4326", always_xy=True)
    lon, lat = to_lonlat.transform(CELL_XY[:, 0], CELL_XY[:, 1])
    rows = "\n".join(f"{c},{la:.7f},{lo:.7f},40,macro" for c, lo, la in zip("AB", lon, lat,
                                                                            strict=True))
    (tmp_path / "cells.csv").write_text(f"cell_id,lat,lon,power_w,tier\n{rows}\n")
    return tmp_path


@pytest.mark.parametrize("radio_keys", [
    'path_loss = "rasters/"',
    'path_loss = { source = "rasters", kind = "path_loss_db", includes_antenna = true }',
    'path_loss = { macro = "rasters/" }',
    'path_loss = { macro = { source = "rasters/" } }\npropagation = { pico = "umi" }\n'
    'frequency_ghz = 3.5',
], ids=["short", "table", "per-tier", "per-tier-beside-3gpp"])
def test_scenario_forms_give_the_same_links(scenario_dir, radio_keys):
    path = scenario_dir / "s.toml"
    path.write_text(SCENARIO.format(radio=radio_keys))
    scenario = load_scenario(path)
    assert isinstance(scenario.radio_model().pathloss["macro"], radio.RasterPathLoss)
    drop = scenario.build(seed=1)
    frame = drop.links.to_frame()
    assert np.isfinite(frame["coupling_loss_db"]).all() and len(frame) > 0


@pytest.mark.parametrize(("radio_keys", "match"), [
    ('path_loss = "nowhere/"', "nowhere"),
    ('path_loss = { source = "rasters", colour = 1 }', "unknown key 'colour'"),
    ('path_loss = { macro = { kind = "gain_db" } }', "has no 'source'"),
    ('path_loss = { macros = "rasters" }', "neither 'source' nor a tier"),
    ('path_loss = "rasters"\npropagation = "uma"\nfrequency_ghz = 3.5',
     r"path_loss and \[radio\] propagation both"),
    ('path_loss = { macro = "rasters" }\npathloss_exponent = { macro = 3.5 }',
     r"path_loss and \[radio\] pathloss_exponent both"),
])
def test_scenario_refusals_name_the_key(scenario_dir, radio_keys, match):
    path = scenario_dir / "s.toml"
    path.write_text(SCENARIO.format(radio=radio_keys))
    with pytest.raises(ValidationError, match=match):
        load_scenario(path).build(seed=1)


def test_loss_table_dense_and_sparse_agree():
    """The two storages of the sampled pairs give the same lookups (inf where unsampled)."""
    from cellopt.radio.predictions import LossTable

    rng = np.random.default_rng(4)
    cells, n_users = np.array([2, 5, 9]), 50
    for share in (0.3, 0.8):  # sparse, then dense
        keep = rng.random((3, n_users)) < share
        c_pos, user = np.nonzero(keep)
        loss = rng.uniform(80, 140, len(user))
        table = LossTable(cells[c_pos], user, loss, cells, n_users)
        assert table.dense == (share > 0.5)
        expected = np.full((3, n_users), np.inf)
        expected[c_pos, user] = loss
        got = table(cells[:, None], np.arange(n_users)[None, :])
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(table(cells[c_pos], user), loss)


def test_load_coupling_reads_the_same_predictions(planes):
    """Load coupling rebuilds the gains from the drop's model and checks them against the
    link table's rates: with rasters it agrees, and each link's signal at full power is
    the cell's 40 dBm less the link's coupling loss."""
    from cellopt.load_coupling import LoadCoupling

    net = network(users_inside(40))
    links = radio.link_table(net, model=radio.RadioModel(
        pathloss={"macro": radio.RasterPathLoss(planes)}), rng=0)
    drop = Drop.from_network(net, links)
    coupling = LoadCoupling.from_drop(drop)
    frame = links.to_frame()
    expected = 10.0 ** ((40.0 - frame["coupling_loss_db"].to_numpy()) / 10.0)
    # the problem keeps the links of positive rate: each of them is one of the table's
    closest = np.abs(coupling.signal_mw[:, None] / expected[None, :] - 1.0).min(axis=1)
    assert len(coupling.signal_mw) > 0 and closest.max() < 1e-9
