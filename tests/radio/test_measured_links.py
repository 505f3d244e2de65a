"""Measured link tables: RSRP or path loss per (position, cell) → users, links, a drop.

By hand (2 cells, 3 users), the round trip through a computed link table, every bad input,
and the scenario key ``[users] links`` end to end through ``cellopt run``.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

import cellopt
from cellopt import ValidationError, radio, topology
from cellopt.drop import Drop
from cellopt.network import Network, cells_frame
from cellopt.study.scenario import load_scenario

CRS = "EPSG:32631"  # UTM 31N: Paris
X0, Y0 = 452_000.0, 5_411_000.0
#: LTE at 10 MHz: 50 PRBs × 12 subcarriers, and the noise over 10 MHz with a 9 dB figure.
OFFSET_DB = 10 * np.log10(600)
NOISE_DBM = -174 + 10 * np.log10(10e6) + 9


def two_cells(resource_mhz=None) -> Network:
    cells = cells_frame(np.array([X0, X0 + 500.0]), np.array([Y0, Y0]), crs=CRS, tier="macro",
                        tx_power_dbm=46.0, antenna_gain_dbi=14.0, cell_id=np.array(["A", "B"]))
    return Network(cells=cells, bandwidth_mhz=10.0, resource_mhz=resource_mhz).validate()


#: User 0 hears A best, user 1 B best, user 2 only B (A unmeasured there).
ROWS = [((X0 + 100, Y0), "A", -80.0), ((X0 + 100, Y0), "B", -95.0),
        ((X0 + 300, Y0), "A", -90.0), ((X0 + 300, Y0), "B", -85.0),
        ((X0 + 400, Y0 + 100), "B", -100.0)]


def frame_of(rows=ROWS, **columns) -> gpd.GeoDataFrame:
    data = {"cell_id": [c for _, c, _ in rows], "rsrp_dbm": [r for _, _, r in rows], **columns}
    return gpd.GeoDataFrame(data, geometry=[shapely.Point(p) for p, _, _ in rows], crs=CRS)


def mw(dbm):
    return 10.0 ** (np.asarray(dbm) / 10.0)


def tr36942_mbps(sinr_db, width_mhz):
    """TR 36.942 by hand: 0.6 log2(1 + γ), 0 below −10 dB, at most 4.4 bit/s/Hz."""
    sinr_db = np.asarray(sinr_db)
    eff = np.minimum(0.6 * np.log2(1 + 10 ** (sinr_db / 10)), 4.4)
    return width_mhz * np.where(sinr_db >= -10, eff, 0.0)


def expected_one_band():
    """(user, cell, SINR [dB]) in table order, computed from the RSRPs and the noise."""
    s = {k: mw(r + OFFSET_DB) for k, r in {"0A": -80, "0B": -95, "1A": -90, "1B": -85,
                                           "2B": -100}.items()}
    n = mw(NOISE_DBM)
    return [(0, 0, 10 * np.log10(s["0A"] / (n + s["0B"]))),
            (0, 1, 10 * np.log10(s["0B"] / (n + s["0A"]))),
            (1, 1, 10 * np.log10(s["1B"] / (n + s["1A"]))),
            (1, 0, 10 * np.log10(s["1A"] / (n + s["1B"]))),
            (2, 1, 10 * np.log10(s["2B"] / n))]


# ------------------------------------------------------------------ by hand
def test_two_cells_three_users_by_hand():
    net, links = radio.link_table_from_frame(two_cells(), frame_of())
    user, cell, sinr = (np.array(v) for v in zip(*expected_one_band(), strict=True))
    np.testing.assert_array_equal(links.user, user)
    np.testing.assert_array_equal(links.cell, cell)
    np.testing.assert_array_equal(links.resource, 0)
    np.testing.assert_array_equal(links.rsrp_dbm, [-80, -95, -85, -90, -100])
    np.testing.assert_allclose(links.sinr_db, sinr, rtol=0, atol=1e-10)
    np.testing.assert_allclose(links.rate_mbps, tr36942_mbps(sinr, 10.0), rtol=1e-12, atol=1e-12)
    assert links.rate_mbps[1] == 0  # −15 dB: below TR 36.942's −10 dB
    assert net.n_users == 3 and list(net.users["user_id"]) == [0, 1, 2]
    np.testing.assert_allclose(net.users.geometry.x, [X0 + 100, X0 + 300, X0 + 400])
    assert (net.users["weight"] == 1).all() and np.isinf(net.users["demand_mbps"]).all()
    assert links.model is None and links.radius_m is None


def test_path_loss_rows_are_the_cells_power_per_resource_element_minus_the_loss():
    rows = frame_of()
    loss = 46.0 - OFFSET_DB - rows.pop("rsrp_dbm")  # the RSRPs of ROWS, as losses
    _, by_rsrp = radio.link_table_from_frame(two_cells(), frame_of())
    _, by_loss = radio.link_table_from_frame(two_cells(), rows.assign(path_loss_db=loss))
    np.testing.assert_allclose(by_loss.rsrp_dbm, by_rsrp.rsrp_dbm, rtol=0, atol=1e-10)
    np.testing.assert_allclose(by_loss.sinr_db, by_rsrp.sinr_db, rtol=0, atol=1e-10)
    # the frame's coupling loss is the measured path loss, row for row
    frame = by_loss.to_frame()
    assert len(frame) == len(loss)
    np.testing.assert_allclose(np.sort(frame["coupling_loss_db"]), np.sort(loss), atol=1e-10)


def test_two_subbands_share_the_power_and_the_noise_by_width():
    widths = np.array([4.0, 6.0])
    _, links = radio.link_table_from_frame(two_cells(widths), frame_of())
    assert len(links) == 2 * 5
    np.testing.assert_array_equal(links.resource, np.tile([0, 1], 5))
    for k, w in enumerate(widths):
        on_k = links.resource == k
        share, noise = mw(10 * np.log10(w / 10)), mw(-174 + 10 * np.log10(w * 1e6) + 9)
        s = {c: mw(np.array(r) + OFFSET_DB) * share for c, r in
             {"0A": -80, "0B": -95, "1A": -90, "1B": -85, "2B": -100}.items()}
        sinr = 10 * np.log10([s["0A"] / (noise + s["0B"]), s["0B"] / (noise + s["0A"]),
                              s["1B"] / (noise + s["1A"]), s["1A"] / (noise + s["1B"]),
                              s["2B"] / noise])
        np.testing.assert_allclose(links.sinr_db[on_k], sinr, rtol=0, atol=1e-10)
        np.testing.assert_allclose(links.rate_mbps[on_k], tr36942_mbps(sinr, w), rtol=1e-12)


def test_candidates_and_window_keep_links_but_every_measured_cell_interferes():
    _, every = radio.link_table_from_frame(two_cells(), frame_of())
    _, best = radio.link_table_from_frame(two_cells(), frame_of(), n_candidates=1)
    np.testing.assert_array_equal(best.cell, [0, 1, 1])
    np.testing.assert_array_equal(best.sinr_db, every.sinr_db[[0, 2, 4]])
    _, window = radio.link_table_from_frame(two_cells(), frame_of(), window_db=10.0)
    np.testing.assert_array_equal(window.cell, [0, 1, 0, 1])  # user 0's B is 15 dB down


def test_user_id_column_weights_and_demands():
    rows = [*ROWS[:2], ((X0 + 100, Y0), "A", -81.0)]
    frame = frame_of(rows, user_id=["u1", "u1", "u2"], weight=[2.0, 2.0, 3.0],
                     demand_mbps=[5.0, 5.0, np.inf])
    net, links = radio.link_table_from_frame(two_cells(), frame)
    assert list(net.users["user_id"]) == ["u1", "u2"]  # two users at one position
    np.testing.assert_array_equal(net.users["weight"], [2.0, 3.0])
    np.testing.assert_array_equal(net.users["demand_mbps"], [5.0, np.inf])
    np.testing.assert_array_equal(links.user, [0, 0, 1])
    net, _ = radio.link_table_from_frame(two_cells(), frame_of(), weight=4.0, demand_mbps=2.0)
    assert (net.users["weight"] == 4).all() and (net.users["demand_mbps"] == 2).all()


# ------------------------------------------------------------------ round trip
@pytest.fixture(scope="module")
def computed():
    """A small network, its link table of every cell, and that table as a long frame."""
    net = topology.hex_grid(n_rings=1, wraparound=False, resource_mhz=np.array([3.0, 7.0]))
    net = topology.drop_users(net, n=25, rng=4)
    links = radio.link_table(net, n_candidates=net.n_cells, interference_radius_m=None, rng=5)
    first = links.resource == 0  # the RSRP is wideband: one row per (user, cell)
    users = net.users.geometry.iloc[links.user[first]]
    frame = gpd.GeoDataFrame({"cell_id": net.cells["cell_id"].to_numpy()[links.cell[first]],
                              "rsrp_dbm": links.rsrp_dbm[first]}, geometry=users.values, crs=net.crs)
    return net, links, frame


def assert_same_links(a, b):
    for col in ("user", "cell", "resource"):
        np.testing.assert_array_equal(getattr(a, col), getattr(b, col))
    np.testing.assert_allclose(b.rsrp_dbm, a.rsrp_dbm, rtol=0, atol=1e-9)
    np.testing.assert_allclose(b.sinr_db, a.sinr_db, rtol=0, atol=1e-9)
    np.testing.assert_allclose(b.rate_mbps, a.rate_mbps, rtol=1e-9, atol=1e-9)


def test_round_trip_of_a_computed_link_table(computed):
    net, links, frame = computed
    assert len(frame) == net.n_users * net.n_cells
    net2, back = radio.link_table_from_frame(net.replace(users=None), frame)
    assert_same_links(links, back)
    np.testing.assert_allclose(net2.users.geometry.x, net.users.geometry.x)


def test_round_trip_through_a_lon_lat_csv_file(computed, tmp_path):
    net, links, frame = computed
    lonlat = frame.to_crs("EPSG:4326")
    table = pd.DataFrame({"Latitude": lonlat.geometry.y, "Longitude": lonlat.geometry.x,
                          "Cell ID": frame["cell_id"], "RSRP (dBm)": frame["rsrp_dbm"],
                          "Speed_kmh": 3.0})
    path = tmp_path / "drive_test.csv"
    table.to_csv(path, index=False)
    read = topology.read_measurements(path, crs=net.crs)
    assert read.attrs["source"] == "drive_test.csv" and list(read.columns[:2]) == ["cell_id",
                                                                                     "rsrp_dbm"]
    net2, back = radio.link_table_from_frame(net, read)
    assert_same_links(links, back)
    np.testing.assert_allclose(net2.users.geometry.x, net.users.geometry.x, atol=1e-6)


def test_a_solver_runs_on_the_measured_drop(computed):
    net, _, frame = computed
    drop = Drop.from_network(*radio.link_table_from_frame(net, frame))
    solution = drop.solve("dual")
    assert solution.status == "optimal"
    again = cellopt.solve(drop.problem, method="dual")
    np.testing.assert_allclose(again.user_rate_mbps, solution.user_rate_mbps)
    users, cells = drop.frames(solution)
    assert len(users) == net.n_users and len(cells) == net.n_cells


def test_parquet_files(computed, tmp_path):
    net, links, frame = computed
    path = tmp_path / "mdt.parquet"
    table = pd.DataFrame({"x": frame.geometry.x, "y": frame.geometry.y, "cell_id": frame["cell_id"],
                          "rsrp_dbm": frame["rsrp_dbm"]})
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        path.write_bytes(b"PAR1 not really")
        with pytest.raises(ValidationError, match=r"mdt.parquet: reading Parquet needs the package "
                                                  r"pyarrow.*fix: pip install pyarrow"):
            topology.read_measurements(path, crs=net.crs)
        return
    table.to_parquet(path)
    read = topology.read_measurements(path, crs=net.crs)  # x, y: in the network's CRS
    assert_same_links(links, radio.link_table_from_frame(net, read)[1])


# ------------------------------------------------------------------ bad input
def raises(match, fn, *args, **kwargs):
    with pytest.raises(ValidationError, match=match) as info:
        fn(*args, **kwargs)
    return str(info.value)


def test_missing_and_ambiguous_columns_are_named():
    frame = frame_of()
    raises(r"frame: no column 'cell_id'.*columns found: \['rsrp_dbm', 'geometry'\].*fix:",
           radio.link_table_from_frame, two_cells(), frame.drop(columns="cell_id"))
    raises(r"no column 'rsrp_dbm' \(RSRP \[dBm\]\) or 'path_loss_db'",
           radio.link_table_from_frame, two_cells(), frame.drop(columns="rsrp_dbm"))
    raises("has both 'rsrp_dbm' and 'path_loss_db'.*fix: drop one",
           radio.link_table_from_frame, two_cells(), frame.assign(path_loss_db=100.0))
    plain = pd.DataFrame({"lon": [2.35], "lat": [48.85], "cell_id": ["A"], "rsrp_dbm": [-80.0]})
    raises("frame: no positions.*fix: read the file or frame with cellopt.topology."
           "read_measurements", radio.link_table_from_frame, two_cells(), plain)
    raises("the table has no rows", radio.link_table_from_frame, two_cells(), frame.iloc[:0])
    raises("frame: the geometry has no CRS", radio.link_table_from_frame, two_cells(),
           frame.set_crs(None, allow_override=True))


def test_nans_and_text_name_their_rows_and_column():
    frame = frame_of()
    frame["rsrp_dbm"] = frame["rsrp_dbm"].astype(object)
    frame.loc[1, "rsrp_dbm"] = np.nan
    frame.loc[3, "rsrp_dbm"] = "weak"
    frame.loc[4, "cell_id"] = None
    frame.loc[2, "geometry"] = None
    text = raises("rsrp_dbm is missing", radio.link_table_from_frame, two_cells(), frame,
                  name="dt.csv")
    assert "dt.csv: rows [1] (cell ids ['B']): rsrp_dbm is missing; fix:" in text
    assert "dt.csv: rows [3] (cell ids ['B']): rsrp_dbm is not a number" in text
    assert "dt.csv: rows [4] (cell ids [nan]): cell_id is missing" in text
    assert "dt.csv: rows [2] (cell ids ['A']): the geometry is missing" in text
    frame = frame_of().drop(columns="geometry").assign(x_m=X0, y_m=[Y0, np.nan, Y0, Y0, np.inf])
    text = raises("y_m is missing", radio.link_table_from_frame, two_cells(), pd.DataFrame(frame))
    assert "rows [4] (cell ids ['B']): x_m or y_m is infinite" in text


def test_values_in_the_wrong_unit_or_column():
    frame = frame_of()
    raises(r"rows \[0, 2\] \(cell ids \['A', 'A'\]\): rsrp_dbm is positive.*path loss.*fix: "
           "give RSRP in dBm", radio.link_table_from_frame, two_cells(),
           frame.assign(rsrp_dbm=[80.0, -95, 90, -85, -100]))
    raises(r"rows \[4\] .*rsrp_dbm is outside \[-160, -20\] dBm", radio.link_table_from_frame,
           two_cells(), frame.assign(rsrp_dbm=[-80.0, -95, -90, -85, -200]))
    raises(r"rows \[1\] .*rsrp_dbm is outside", radio.link_table_from_frame, two_cells(),
           frame.assign(rsrp_dbm=[-80.0, -10, -90, -85, -100]))
    loss = frame.drop(columns="rsrp_dbm").assign(path_loss_db=[-80.0, 120, 110, 100, 130])
    raises(r"rows \[0\] .*path_loss_db is negative.*name the column rsrp_dbm",
           radio.link_table_from_frame, two_cells(), loss)
    raises(r"rows \[0, 1\] .*weight is not finite and > 0", radio.link_table_from_frame,
           two_cells(), frame.assign(weight=[0.0, 0.0, 1, 1, 1]))
    raises(r"rows \[4\] .*demand_mbps is not > 0", radio.link_table_from_frame, two_cells(),
           frame.assign(demand_mbps=[1.0, 1, 1, 1, -1]))
    raises("weight is given both as a column and as an argument", radio.link_table_from_frame,
           two_cells(), frame.assign(weight=1.0), weight=2.0)


def test_duplicates_and_inconsistent_users():
    frame = frame_of([*ROWS, ROWS[1]])
    raises(r"rows \[1, 5\] \(cell ids \['B', 'B'\]\): the same position and cell_id appear in "
           "more than one row; fix: keep one row per", radio.link_table_from_frame, two_cells(),
           frame)
    by_id = frame_of(user_id=["a", "a", "b", "b", "a"])
    text = raises("rows of one user_id are at different positions", radio.link_table_from_frame,
                  two_cells(), by_id)
    assert "users at rows [0] (user ids ['a'])" in text
    text = raises("rows of one user have different weight", radio.link_table_from_frame,
                  two_cells(), frame_of(weight=[1.0, 2.0, 1, 1, 1]))
    assert "users at rows [0]" in text
    raises("user_id is missing", radio.link_table_from_frame, two_cells(),
           frame_of(user_id=["a", "a", None, "b", "c"]))


def test_unknown_cells_are_counted_and_left_out():
    rows = [*ROWS, ((X0 + 100, Y0), "Z9", -70.0), ((X0 + 300, Y0), "Z9", -99.0),
            ((X0 + 300, Y0), "Y1", -99.0)]
    with pytest.warns(UserWarning, match=r"frame: 3 of 8 rows measure 2 cells the network does "
                      r"not have \(cell ids \['Z9', 'Y1'\]\): they are left out"):
        _, links = radio.link_table_from_frame(two_cells(), frame_of(rows))
    _, known = radio.link_table_from_frame(two_cells(), frame_of())
    np.testing.assert_array_equal(links.sinr_db, known.sinr_db)
    raises(r"no row's cell_id is a cell of the network \(the table has ids such as \['Z9'\], the "
           r"network \['A', 'B'\]\)", radio.link_table_from_frame, two_cells(),
           frame_of([((X0, Y0), "Z9", -80.0)]))


def test_ids_read_as_numbers_match_text_ids_and_back():
    frame = frame_of()
    net = two_cells()
    numbered = net.replace(cells=net.cells.assign(cell_id=[7, 8]))
    _, links = radio.link_table_from_frame(numbered, frame.assign(cell_id=frame["cell_id"].map(
        {"A": "7", "B": "8"})))
    np.testing.assert_array_equal(links.cell, [0, 1, 1, 0, 1])


def test_users_without_a_serving_candidate_are_counted():
    rows = [*ROWS, ((X0 + 200, Y0 + 50), "Z9", -70.0),  # only an unknown cell
            ((X0 + 250, Y0 + 50), "A", -135.0),  # both below −10 dB SINR
            ((X0 + 250, Y0 + 50), "B", -136.0)]
    with pytest.warns(UserWarning) as record:
        net, links = radio.link_table_from_frame(two_cells(), frame_of(rows))
    text = [str(w.message) for w in record]
    assert any("2 of 5 users have no link of positive rate (rows [5, 6] (ids [3, 4]))" in t
               and "outage" in t for t in text), text
    drop = Drop.from_network(net, links)
    assert drop.solvable.tolist() == [True, True, True, False, False]
    users, _ = drop.frames(drop.solve("dual"))
    assert users["rate_mbps"].iloc[3:].tolist() == [0.0, 0.0]


def test_positions_far_from_every_cell():
    far = [*ROWS, ((X0 + 80_000, Y0), "A", -120.0)]
    text = raises(r"frame: users at rows \[5\] \(cell ids \['A'\]\): the position is more than 50 "
                  r"km from every cell \(up to 79.5 km\); fix: check the position columns and their "
                  "CRS", radio.link_table_from_frame, two_cells(), frame_of(far))
    assert "max_distance_m=None" in text
    net, _ = radio.link_table_from_frame(two_cells(), frame_of(far), max_distance_m=None)
    assert net.n_users == 4
    region = shapely.box(X0 - 1000, Y0 - 1000, X0 + 90_000, Y0 + 1000)
    net, _ = radio.link_table_from_frame(two_cells().replace(region=region), frame_of(far))
    assert net.n_users == 4  # inside the network's area: no complaint


# ------------------------------------------------------------------ reading files
PARIS = pd.DataFrame({"lon": [2.3510, 2.3510, 2.3570, 2.3570, 2.3550],
                      "lat": [48.8510, 48.8510, 48.8520, 48.8520, 48.8490],
                      "cell_id": ["A", "B", "A", "B", "B"],
                      "rsrp_dbm": [-80.0, -95, -90, -85, -100]})


def paris_cells(tmp_path: Path) -> Network:
    path = tmp_path / "cells.csv"
    path.write_text("cell_id,lon,lat,azimuth_deg\nA,2.3500,48.8500,0\nB,2.3600,48.8500,120\n")
    return topology.read_cells(path)


def test_read_measurements_finds_columns_by_their_names(tmp_path):
    net = paris_cells(tmp_path)
    path = tmp_path / "mdt.csv"
    PARIS.rename(columns={"lon": "LONG", "lat": "lat_deg", "cell_id": "ECGI",
                          "rsrp_dbm": "SS-RSRP [dBm]"}).assign(UE=[1, 1, 2, 2, 3]).to_csv(
        path, index=False)
    read = topology.read_measurements(path, crs=net.crs)
    assert list(read.columns) == ["user_id", "cell_id", "rsrp_dbm", "geometry"]
    assert read.crs == net.crs and read["user_id"].tolist() == [1, 1, 2, 2, 3]
    from cellopt.topology.cellfiles import recorded_readings

    with recorded_readings() as readings:
        topology.read_measurements(path, crs=net.crs)
    table = str(readings[0])
    assert "SS-RSRP [dBm]  rsrp_dbm" in table and "LONG" in table and "longitude" in table


def test_read_measurements_refuses_bad_files(tmp_path):
    net = paris_cells(tmp_path)

    def write(frame, name="dt.csv"):
        path = tmp_path / name
        frame.to_csv(path, index=False)
        return path

    with pytest.raises(FileNotFoundError, match="no such file"):
        topology.read_measurements(tmp_path / "none.csv", crs=net.crs)
    raises("dt.csv: columns .*'RSRP'.*all read as rsrp_dbm", topology.read_measurements,
           write(PARIS.assign(RSRP=-80.0)), crs=net.crs)
    raises("dt.csv: column 'RSRP_W' has the unit W in its name, which is not dBm",
           topology.read_measurements, write(PARIS.rename(columns={"rsrp_dbm": "RSRP_W"})),
           crs=net.crs)
    raises("dt.csv: has both an RSRP column .* and a path loss column", topology.read_measurements,
           write(PARIS.assign(PathLoss_dB=100.0)), crs=net.crs)
    raises(r"dt.csv: lacks a cell id column .*columns found: \['lon', 'lat', 'rsrp_dbm'\]",
           topology.read_measurements, write(PARIS.drop(columns="cell_id")), crs=net.crs)
    raises("dt.csv: lacks coordinate columns", topology.read_measurements,
           write(PARIS.drop(columns="lat")), crs=net.crs)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    raises("empty.csv: the file is empty", topology.read_measurements, empty, crs=net.crs)
    bad = PARIS.astype({"lon": object})
    bad.loc[2, "lon"] = "east"
    raises(r"dt.csv: rows \[2\]: lon is not a number", topology.read_measurements, write(bad),
           crs=net.crs)


def test_swapped_lon_lat_are_refused(tmp_path):
    net = paris_cells(tmp_path)
    swapped = PARIS.rename(columns={"lon": "lat", "lat": "lon"})
    path = tmp_path / "dt.csv"
    swapped.to_csv(path, index=False)
    raises("dt.csv: 5 of 5 cells lie in the sea .* columns 'lon' .* and 'lat' .* look swapped",
           topology.read_measurements, path, crs=net.crs)
    flipped = PARIS.assign(lon=PARIS["lat"], lat=PARIS["lon"] + 90)  # lat 92.35: impossible
    flipped.to_csv(path, index=False)
    raises("lat is outside \\[-90, 90\\] while lon is within \\[-90, 90\\]: the lon/lat columns "
           "look swapped", topology.read_measurements, path, crs=net.crs)


def test_measured_frame_far_from_the_cells_through_the_reader(tmp_path):
    net = paris_cells(tmp_path)
    frame = topology.read_measurements(PARIS.assign(lon=PARIS["lon"] + 3.0), crs=net.crs)
    raises(r"frame: users at rows \[0, 2, 4\].*more than 50 km from every cell",
           radio.link_table_from_frame, net, frame)


# ------------------------------------------------------------------ scenario files
SCENARIO = """
name = "drive test"
methods = ["max_rsrp", "dual"]

[network]
builder = "file"
path = "cells.csv"

[users]
links = "data/drive_test.csv"
"""


@pytest.fixture()
def measured_scenario(tmp_path):
    paris_cells(tmp_path)
    (tmp_path / "data").mkdir()
    PARIS.rename(columns={"lon": "Longitude", "lat": "Latitude", "rsrp_dbm": "RSRP"}).to_csv(
        tmp_path / "data" / "drive_test.csv", index=False)
    path = tmp_path / "measured.toml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


def test_scenario_key_end_to_end_through_cellopt_run(measured_scenario, capsys):
    from cellopt.cli import main

    out = measured_scenario.parent / "out"
    assert main(["run", str(measured_scenario), "--out", str(out), "--no-report",
                 "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "drive_test.csv: how the columns were read" in printed
    assert re.search(r"RSRP\s+rsrp_dbm\s+RSRP \[dBm\]", printed) and "3 users" in printed
    rates = pd.read_csv(out / "user_rates.csv")
    assert sorted(rates["method"].unique()) == ["dual", "max_rsrp"]
    assert len(rates) == 2 * 3 and (rates["rate_mbps"] > 0).all()
    assert not (out / "cell_config.csv").exists()  # [deploy] is off with links
    assert not list(out.glob("coverage_*.tif"))  # so is [coverage]


def test_scenario_drop_is_the_measured_one_whatever_the_seed(measured_scenario):
    scenario = load_scenario(measured_scenario)
    assert not scenario.coverage.enabled and not scenario.deploy.enabled
    one, two = scenario.build(1), scenario.build(2)
    assert one.network.n_users == 3 and len(one.links) == 5
    np.testing.assert_array_equal(one.links.sinr_db, two.links.sinr_db)


@pytest.mark.parametrize("extra, where", [
    ("[users]\nn = 10", "[users] key 'n' conflicts with [users] links"),
    ("[users]\ndensity_per_km2 = 10.0", "[users] key 'density_per_km2' conflicts"),
    ("[users]\nclustered_fraction = 0.5", "[users] key 'clustered_fraction' conflicts"),
    ("[users]\ndemand_mbps = {distribution = 'uniform', low = 1, high = 2}",
     "[users] key 'demand_mbps' is a distribution"),
    ("[radio]\nshadowing_std_db = 8.0", "[radio] key 'shadowing_std_db' conflicts"),
    ("[radio]\ninterference_radius_m = 'auto'", "[radio] key 'interference_radius_m' conflicts"),
    ("[picos]\nper_sector = 1", "[picos] conflicts"),
    ("[femtocells]\ndensity_per_km2 = 5.0", "[femtocells] conflicts"),
    ("[problem]\ninterference = 'load_coupled'", "[problem] key 'interference' conflicts"),
    ("[power]\nlevels_db = [0, 'off']", "[power] conflicts"),
    ("[seeds]\ndrops = 2", "[seeds] key 'drops' conflicts"),
    ("[coverage]\nresolution_m = 50.0", "[coverage] conflicts"),
    ("[deploy]\nenabled = true", "[deploy] conflicts"),
])
def test_scenario_keys_that_conflict_with_links_are_refused(measured_scenario, extra, where):
    text = measured_scenario.read_text()
    section = extra.split("\n", 1)[0]
    text = text.replace(section, extra) if section in text else f"{text}\n{extra}\n"
    measured_scenario.write_text(text)
    with pytest.raises(ValidationError) as info:
        load_scenario(measured_scenario)
    assert f"measured.toml: {where}" in str(info.value)
    assert "fix:" in str(info.value)


def test_scenario_keys_that_apply_to_links(measured_scenario):
    text = measured_scenario.read_text().replace(
        "[users]", "[users]\nweight = 2.0\ndemand_mbps = 5.0") + textwrap.dedent("""
        [radio]
        noise_figure_db = 7.0
        n_candidates = 1

        [coverage]
        enabled = false
        """)
    measured_scenario.write_text(text)
    drop = load_scenario(measured_scenario).build()
    assert (drop.network.users["weight"] == 2).all() and (drop.network.users["demand_mbps"] == 5).all()
    assert len(drop.links) == 3  # one candidate per user


def test_scenario_with_a_missing_links_file_or_a_stray_source_crs(measured_scenario):
    (measured_scenario.parent / "data" / "drive_test.csv").unlink()
    scenario = load_scenario(measured_scenario)
    with pytest.raises(ValidationError, match=r"\[users\] key 'links': the file .*drive_test.csv "
                       "does not exist"):
        scenario.build()
    measured_scenario.write_text(measured_scenario.read_text().replace(
        'links = "data/drive_test.csv"', 'n = 5\nsource_crs = "EPSG:4326"'))
    with pytest.raises(ValidationError, match="key 'source_crs' is the CRS of the x, y columns"):
        load_scenario(measured_scenario)


def test_scenario_errors_name_the_file_and_the_section(measured_scenario):
    data = measured_scenario.parent / "data" / "drive_test.csv"
    data.write_text(data.read_text().replace("-100.0", "100.0"))
    with pytest.raises(ValidationError, match=r"measured.toml: \[users\] drive_test.csv: rows \[4\] "
                       r"\(cell ids \['B'\]\): rsrp_dbm is positive"):
        load_scenario(measured_scenario).build()


def test_measurements_read_as_cell_files_are(tmp_path):
    """The cell reader's rules for other delimiters, one quantity in two columns, and rows
    with lon / lat swapped apply to measurement files too."""
    net = paris_cells(tmp_path)
    path = tmp_path / "dt.csv"
    PARIS.to_csv(path, index=False, sep=";", decimal=",")
    read = topology.read_measurements(path, crs=net.crs)
    ref = topology.read_measurements(PARIS, crs=net.crs)
    np.testing.assert_allclose(shapely.get_coordinates(read.geometry.values),
                               shapely.get_coordinates(ref.geometry.values))
    path.write_text("sep=,\n" + PARIS.to_csv(index=False))
    assert len(topology.read_measurements(path, crs=net.crs)) == len(PARIS)
    PARIS.assign(Latitude=PARIS["lat"]).to_csv(path, index=False)
    raises(re.escape("dt.csv: columns ['lat', 'Latitude'] all read as lat"), topology.read_measurements,
           path, crs=net.crs)
    swapped = PARIS.copy()
    swapped.loc[3, ["lon", "lat"]] = PARIS.loc[3, ["lat", "lon"]].to_numpy()
    swapped.to_csv(path, index=False)
    raises(re.escape("dt.csv: rows [3]: 'lon' and 'lat' look swapped in these rows"),
           topology.read_measurements, path, crs=net.crs)
