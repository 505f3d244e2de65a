"""Tests of cellopt.network: tables, validation messages, projection and array views."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyproj
import pytest
import shapely

from cellopt import ValidationError, topology
from cellopt.network import CELL_COLUMNS, TIERS, USER_COLUMNS, Network, cells_frame, users_frame

CRS = "EPSG:32631"
X0, Y0 = 500_000.0, 1_000_000.0


def make_cells(crs=CRS, **overrides) -> pd.DataFrame:
    """Three valid cells with ids 10, 11, 12 (sites 5, 5, 6)."""
    kwargs = dict(crs=crs, tier=np.array(["macro", "macro", "pico"], dtype=object),
                  tx_power_dbm=np.array([46.0, 46.0, 30.0]), antenna_gain_dbi=np.array([14.0, 14.0, 5.0]),
                  cell_id=np.array([10, 11, 12]), site_id=np.array([5, 5, 6]),
                  azimuth_deg=np.array([0.0, 120.0, np.nan]))
    kwargs.update(overrides)
    return cells_frame([X0, X0, X0 + 300.0], [Y0, Y0, Y0 + 100.0], **kwargs)


def make_users(crs=CRS, **overrides):
    """Three valid users with ids 100, 101, 102."""
    kwargs = dict(crs=crs, user_id=np.array([100, 101, 102]))
    kwargs.update(overrides)
    return users_frame([X0 + 50.0, X0 + 150.0, X0 + 250.0], [Y0, Y0 + 20.0, Y0 - 20.0], **kwargs)


def problems_of(net: Network) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        net.validate()
    return info.value


def test_valid_network_passes_and_validate_returns_self():
    net = Network(cells=make_cells(), users=make_users())
    assert net.validate() is net
    assert net.n_cells == 3 and net.n_users == 3 and net.n_resources == 1
    np.testing.assert_array_equal(net.resource_mhz, [10.0])
    assert np.isnan(net.area_km2)
    assert "3 cells" in repr(net)


def test_validation_error_is_a_value_error():
    bad = make_cells(tx_power_dbm=np.array([46.0, np.nan, 30.0]))
    with pytest.raises(ValueError):
        Network(cells=bad).validate()
    err = problems_of(Network(cells=bad))
    assert isinstance(err, ValueError) and err.problems == [str(err)]


def test_nan_coordinate():
    cells = cells_frame([X0, np.nan, X0], [Y0, Y0, Y0 + 1.0], crs=CRS, tier="macro", tx_power_dbm=46.0,
                        antenna_gain_dbi=14.0, cell_id=np.array([10, 11, 12]))
    msg = str(problems_of(Network(cells=cells)))
    assert "ids [11]" in msg and "rows [1]" in msg
    assert "coordinate" in msg and "NaN" in msg
    assert "[10" not in msg and "12]" not in msg


def test_non_point_geometry():
    cells = make_cells()
    cells.geometry = [shapely.Point(X0, Y0), shapely.LineString([(X0, Y0), (X0 + 1, Y0)]),
                      shapely.Point(X0, Y0)]
    msg = str(problems_of(Network(cells=cells)))
    assert "ids [11]" in msg and "Point" in msg


def test_duplicate_cell_id():
    msg = str(problems_of(Network(cells=make_cells(cell_id=np.array([10, 11, 11])))))
    assert "ids [11, 11]" in msg and "rows [1, 2]" in msg
    assert "duplicate cell_id" in msg


@pytest.mark.parametrize("column, values, words", [
    ("tier", np.array(["macro", "mega", "pico"], dtype=object), "tier"),
    ("owner", np.array(["operator", "somebody", "operator"], dtype=object), "owner"),
    ("backhaul_mbps", np.array([np.inf, -1.0, 100.0]), "backhaul_mbps"),
    ("backhaul_mbps", np.array([np.inf, np.nan, 100.0]), "backhaul_mbps"),
    ("tx_power_dbm", np.array([46.0, np.nan, 30.0]), "tx_power_dbm"),
    ("tx_power_dbm", np.array([46.0, np.inf, 30.0]), "tx_power_dbm"),
    ("antenna_gain_dbi", np.array([14.0, np.nan, 5.0]), "antenna_gain_dbi"),
    ("azimuth_deg", np.array([0.0, 400.0, np.nan]), "azimuth_deg"),
    ("azimuth_deg", np.array([0.0, 360.0, np.nan]), "azimuth_deg"),
    ("azimuth_deg", np.array([0.0, -10.0, np.nan]), "azimuth_deg"),
    ("height_m", np.array([25.0, -1.0, 10.0]), "height_m"),
    ("price_per_mbps", np.array([0.0, -0.5, 0.0]), "price_per_mbps"),
])
def test_bad_cell_value_names_row_and_column(column, values, words):
    msg = str(problems_of(Network(cells=make_cells(**{column: values}))))
    assert "ids [11]" in msg, msg
    assert "rows [1]" in msg
    assert words in msg
    assert "fix:" in msg


def test_valid_edge_values_pass():
    cells = make_cells(azimuth_deg=np.array([0.0, 359.9, np.nan]), backhaul_mbps=np.array([np.inf, 0.0, 5.0]),
                       owner=np.array(["operator", "third_party", "third_party"], dtype=object))
    users = make_users(demand_mbps=np.array([np.inf, 1e-3, 10.0]))
    Network(cells=cells, users=users).validate()


def test_negative_bandwidth():
    msg = str(problems_of(Network(cells=make_cells(), bandwidth_mhz=-5.0)))
    assert "bandwidth_mhz" in msg and "-5" in msg


def test_resource_widths_must_sum_to_the_band():
    msg = str(problems_of(Network(cells=make_cells(), bandwidth_mhz=10.0, resource_mhz=[3.0, 3.0])))
    assert "resource_mhz" in msg and "sums to 6" in msg and "10" in msg
    Network(cells=make_cells(), bandwidth_mhz=10.0, resource_mhz=[2.5, 2.5, 5.0]).validate()


def test_negative_resource_width():
    msg = str(problems_of(Network(cells=make_cells(), bandwidth_mhz=10.0, resource_mhz=[12.0, -2.0])))
    assert "resource_mhz" in msg and "[1]" in msg


def test_geographic_crs_is_refused_by_the_constructor():
    cells = cells_frame([2.35, 2.36], [48.85, 48.86], crs="EPSG:4326", tier="macro",
                        tx_power_dbm=46.0, antenna_gain_dbi=14.0)
    msg = str(problems_of(Network(cells=cells)))
    assert "geographic" in msg and "from_frames" in msg


def test_non_metric_projected_crs_is_refused():
    cells = cells_frame([6_000_000.0], [2_100_000.0], crs="EPSG:2227", tier="macro",  # US feet
                        tx_power_dbm=46.0, antenna_gain_dbi=14.0)
    msg = str(problems_of(Network(cells=cells)))
    assert "not metres" in msg


def test_missing_crs():
    msg = str(problems_of(Network(cells=make_cells(crs=None))))
    assert "no CRS" in msg


def test_users_in_another_crs():
    msg = str(problems_of(Network(cells=make_cells(), users=make_users().to_crs("EPSG:32632"))))
    assert "different CRSs" in msg


@pytest.mark.parametrize("column, values", [
    ("weight", np.array([1.0, 0.0, 1.0])),
    ("weight", np.array([1.0, np.nan, 1.0])),
    ("demand_mbps", np.array([np.inf, -1.0, 5.0])),
    ("demand_mbps", np.array([np.inf, 0.0, 5.0])),
])
def test_bad_user_value_names_row_and_column(column, values):
    msg = str(problems_of(Network(cells=make_cells(), users=make_users(**{column: values}))))
    assert "users rows [1] (ids [101])" in msg
    assert column in msg


def test_duplicate_user_id():
    users = make_users(user_id=np.array([100, 101, 100]))
    msg = str(problems_of(Network(cells=make_cells(), users=users)))
    assert "rows [0, 2] (ids [100, 100])" in msg and "duplicate user_id" in msg


def test_missing_cell_columns():
    msg = str(problems_of(Network(cells=make_cells().drop(columns=["owner", "backhaul_mbps"]))))
    assert "cells table lacks columns" in msg
    assert "owner" in msg and "backhaul_mbps" in msg
    assert "CELL_COLUMNS" in msg and "cells_frame" in msg


def test_missing_user_columns():
    msg = str(problems_of(Network(cells=make_cells(), users=make_users().drop(columns=["weight"]))))
    assert "users table lacks columns ['weight']" in msg
    assert "USER_COLUMNS" in msg and "users_frame" in msg


def test_several_problems_are_reported_together():
    cells = make_cells(tx_power_dbm=np.array([46.0, np.nan, 30.0]),
                       tier=np.array(["macro", "macro", "nano"], dtype=object))
    users = make_users(weight=np.array([0.0, 1.0, 1.0]))
    err = problems_of(Network(cells=cells, users=users, bandwidth_mhz=10.0, resource_mhz=[4.0, 4.0]))
    assert len(err.problems) == 4
    msg = str(err)
    assert "ids [11]" in msg and "tx_power_dbm" in msg
    assert "ids [12]" in msg and "tier" in msg
    assert "ids [100]" in msg and "weight" in msg
    assert "resource_mhz" in msg
    assert msg == "\n".join(err.problems)


def test_long_row_lists_are_shortened():
    n = 30
    cells = cells_frame(np.full(n, X0), np.full(n, Y0), crs=CRS, tier="giga", tx_power_dbm=46.0,
                        antenna_gain_dbi=14.0)
    msg = str(problems_of(Network(cells=cells)))
    assert "and 20 more" in msg


# ---------------------------------------------------------------------- from_frames
def test_from_frames_projects_geographic_input_to_utm():
    lon, lat = np.array([2.3500, 2.3600]), np.array([48.8500, 48.8600])  # Paris
    cells = cells_frame(lon, lat, crs="EPSG:4326", tier="macro", tx_power_dbm=46.0, antenna_gain_dbi=14.0)
    users = users_frame(np.array([2.3550]), np.array([48.8550]), crs="EPSG:4326")
    net = Network.from_frames(cells, users)
    assert net.crs.is_projected
    assert net.crs.to_epsg() == 32631  # UTM 31N
    assert net.users.crs == net.crs
    c = net.cell_arrays()
    metric = np.hypot(c["x_m"][1] - c["x_m"][0], c["y_m"][1] - c["y_m"][0])
    geodesic = pyproj.Geod(ellps="WGS84").inv(lon[0], lat[0], lon[1], lat[1])[2]
    assert metric == pytest.approx(geodesic, rel=1e-3)  # metres, not degrees
    assert cells.crs.to_epsg() == 4326  # input unchanged


def test_from_frames_keeps_a_projected_crs_and_accepts_a_target():
    net = Network.from_frames(make_cells(), make_users())
    assert net.crs == make_cells().crs
    np.testing.assert_allclose(net.cell_arrays()["x_m"], [X0, X0, X0 + 300.0])
    other = Network.from_frames(make_cells(), make_users(), crs="EPSG:32632")
    assert other.crs.to_epsg() == 32632 and other.users.crs == other.crs


def test_from_frames_validates_and_needs_a_crs():
    with pytest.raises(ValidationError, match="no CRS"):
        Network.from_frames(make_cells(crs=None))
    with pytest.raises(ValidationError, match="no CRS"):
        Network.from_frames(make_cells(), make_users(crs=None))
    with pytest.raises(ValidationError, match="tx_power_dbm"):
        Network.from_frames(make_cells(tx_power_dbm=np.array([46.0, np.nan, 30.0])))
    with pytest.raises(ValidationError, match="sums to"):
        Network.from_frames(make_cells(), bandwidth_mhz=10.0, resource_mhz=[1.0])


# ---------------------------------------------------------------------- arrays
def test_cell_arrays():
    cells = make_cells(owner=np.array(["operator", "third_party", "operator"], dtype=object),
                       tier=np.array(["femto", "macro", "pico"], dtype=object))
    a = Network(cells=cells).cell_arrays()
    for key in ("x_m", "y_m", "height_m", "azimuth_deg", "antenna_gain_dbi", "tx_power_dbm",
                "backhaul_mbps", "price_per_mbps", "tier", "site", "third_party"):
        assert a[key].shape == (3,), key
    np.testing.assert_array_equal(a["tier"], [TIERS.index("femto"), TIERS.index("macro"), 1])
    np.testing.assert_array_equal(a["tier"], [2, 0, 1])
    np.testing.assert_array_equal(a["site"], [0, 0, 1])
    np.testing.assert_array_equal(a["third_party"], [False, True, False])
    np.testing.assert_array_equal(a["x_m"], [X0, X0, X0 + 300.0])
    np.testing.assert_array_equal(a["azimuth_deg"], [0.0, 120.0, np.nan])
    assert a["x_m"].dtype == np.float64 and a["third_party"].dtype == bool


def test_user_arrays():
    users = make_users(indoor=np.array([True, False, True]), weight=np.array([1.0, 2.0, 3.0]))
    a = Network(cells=make_cells(), users=users).user_arrays()
    assert set(a) == {"x_m", "y_m", "indoor", "weight", "demand_mbps"}
    for v in a.values():
        assert v.shape == (3,)
    np.testing.assert_array_equal(a["indoor"], [True, False, True])
    np.testing.assert_array_equal(a["weight"], [1.0, 2.0, 3.0])
    assert np.isinf(a["demand_mbps"]).all()
    np.testing.assert_array_equal(a["y_m"], [Y0, Y0 + 20.0, Y0 - 20.0])


def test_frames_have_every_required_column():
    cells, users = make_cells(), make_users()
    assert set(CELL_COLUMNS) <= set(cells.columns)
    assert set(USER_COLUMNS) <= set(users.columns)
    with pytest.raises(ValidationError, match="expected a scalar or 3 values"):
        cells_frame([0.0, 1.0, 2.0], [0.0, 1.0, 2.0], crs=CRS, tier="macro",
                    tx_power_dbm=np.array([46.0, 46.0]), antenna_gain_dbi=14.0)


def test_default_users_are_empty_in_the_cells_crs():
    net = Network(cells=make_cells())
    assert net.n_users == 0
    assert net.users.crs == net.cells.crs
    assert set(USER_COLUMNS) <= set(net.users.columns)
    assert net.user_arrays()["x_m"].shape == (0,)


# ---------------------------------------------------------------------- appending
def test_add_cells_continues_integer_ids():
    net = Network(cells=make_cells())
    new = cells_frame([X0 + 1.0, X0 + 2.0], [Y0, Y0], crs=CRS, tier="femto", tx_power_dbm=20.0,
                      antenna_gain_dbi=0.0)
    out = net.add_cells(new)
    np.testing.assert_array_equal(out.cells["cell_id"], [10, 11, 12, 13, 14])
    np.testing.assert_array_equal(out.cells["site_id"], [5, 5, 6, 7, 8])
    out.validate()
    assert net.n_cells == 3  # input unchanged
    np.testing.assert_array_equal(new["cell_id"], [0, 1])
    assert out.crs == net.crs


def test_add_cells_reprojects_and_keeps_string_ids():
    cells = make_cells(cell_id=np.array(["a", "b", "c"], dtype=object))
    net = Network(cells=cells)
    new = make_cells(cell_id=np.array(["d", "e", "f"], dtype=object)).to_crs("EPSG:4326")
    out = net.add_cells(new)
    assert list(out.cells["cell_id"]) == ["a", "b", "c", "d", "e", "f"]
    assert out.crs == net.crs
    np.testing.assert_allclose(out.cell_arrays()["x_m"][3:], [X0, X0, X0 + 300.0], atol=1e-6)


def test_add_users_continues_integer_ids():
    net = Network(cells=make_cells(), users=make_users())
    out = net.add_users(make_users(user_id=np.array([0, 1, 2])))
    np.testing.assert_array_equal(out.users["user_id"], [100, 101, 102, 103, 104, 105])
    out.validate()
    empty = Network(cells=make_cells()).add_users(make_users())
    np.testing.assert_array_equal(empty.users["user_id"], [100, 101, 102])


# ---------------------------------------------------------------------- parameter checks
def test_check_real_limits_and_warnings():
    from cellopt.checks import check_real
    from cellopt.parameters import LIMITS

    assert check_real(46, "tx_power_dbm") == 46.0 and isinstance(check_real(46, "tx_power_dbm"), float)
    assert check_real(np.float32(0.5), "adoption") == 0.5
    assert check_real(np.inf, "demand_mbps") == np.inf
    with pytest.raises(ValidationError, match=r"isd_m=0 m is outside the possible range \(0, 1e\+06\] m"):
        check_real(0, "isd_m")
    with pytest.raises(ValidationError, match=r"\[0, inf\) per km²"):
        check_real(-1.0, "density_per_km2")
    with pytest.raises(ValidationError, match="is a bool"):
        check_real(True, "height_m")
    with pytest.warns(UserWarning, match=r"RadioModel.x=0.5 m is outside the usual range \[20, 50000\] m"):
        check_real(0.5, "RadioModel.x", "isd_m")
    check_real(0.5, "isd_m", warn=False)  # no warning asked for
    assert LIMITS["weight"].interval() == "(0, inf)" and LIMITS["demand_mbps"].interval() == "(0, inf] Mbit/s"


@pytest.mark.parametrize(("value", "message"), [
    (-1, "n=-1 is below 0"), (2.5, "n=2.5 is not a whole number"), (True, "n=True is a boolean"),
    ("3", "n='3' is a str"), (None, "n=None is a NoneType"), (np.nan, "n=nan is not a whole number"),
    (np.inf, "n=inf is not a whole number"),
])
def test_check_count_refuses_what_is_not_a_count(value, message):
    from cellopt.checks import check_count

    with pytest.raises(ValidationError, match=message.replace("(", r"\(")):
        check_count(value, "n", fix="give a whole number")


def test_check_count_accepts_integers_and_refuses_whole_floats():
    from cellopt.checks import check_count

    assert check_count(np.int64(4), "n", fix="") == 4 and type(check_count(np.int64(4), "n",
                                                                            fix="")) is int
    # a count is an int: 4.0 is refused (with the int to write instead), as in scenario files
    with pytest.raises(ValidationError, match=r"n=4.0 is a float, not an int; fix: .* \(e.g. n=4\)"):
        check_count(4.0, "n", fix="give a whole number")


@pytest.mark.parametrize(("column", "value"), [("tx_power_dbm", 101.0), ("tx_power_dbm", -101.0),
                                               ("antenna_gain_dbi", 51.0), ("height_m", 1001.0)])
def test_cell_values_beyond_their_possible_range(column, value):
    values = make_cells()[column].to_numpy(float).copy()
    values[1] = value
    msg = str(problems_of(Network(cells=make_cells(**{column: values}))))
    assert f"{column} is not finite or outside" in msg and "ids [11]" in msg


def test_bad_frames_and_arguments_are_validation_errors():
    with pytest.raises(ValidationError, match="cannot be read as numbers"):
        make_cells(tx_power_dbm=np.array(["high", "low", "mid"], dtype=object))
    with pytest.raises(ValidationError, match="not a CRS pyproj knows"):
        make_cells(crs="EPSG:999999")
    with pytest.raises(ValidationError, match="users is a DataFrame, not a GeoDataFrame"):
        Network(cells=make_cells(), users=pd.DataFrame({"x": [1]}))
    with pytest.raises(ValidationError, match="the rows to append are a list"):
        Network(cells=make_cells()).add_cells([1, 2])
    with pytest.raises(ValidationError, match="cells is a dict, not a GeoDataFrame"):
        Network.from_frames({"cells": 1})
    with pytest.raises(ValidationError, match="resource_mhz has shape"):
        Network(cells=make_cells(), resource_mhz=np.ones((2, 2)))


def test_from_frames_refuses_cells_on_two_continents():
    # San Francisco and Sydney: no local projection keeps their distance within 1 %.
    cells = cells_frame(np.array([-122.4, 151.2]), np.array([37.7, -33.9]), crs="EPSG:4326",
                        tier="macro", tx_power_dbm=46.0, antenna_gain_dbi=14.0)
    with pytest.raises(ValidationError, match="no single local projection"):
        Network.from_frames(cells)
    near = cells_frame(np.array([-122.4, -122.3]), np.array([37.7, 37.8]), crs="EPSG:4326",
                       tier="macro", tx_power_dbm=46.0, antenna_gain_dbi=14.0)
    assert Network.from_frames(near).cells.crs.to_epsg() == 32610  # UTM zone 10N


def test_nearest_image_is_the_wraparound_copy_closest_to_the_user():
    """Each user's nearest copy of a cell: never farther than the cell itself, and on a
    wrapped 2-ring grid within the cluster's radius of the user."""
    from cellopt.topology import drop_users, hex_grid

    net = drop_users(hex_grid(2, 500.0), 300, rng=1)
    cells = np.random.default_rng(0).integers(0, net.n_cells, net.n_users)
    users = np.arange(net.n_users)
    uxy = np.column_stack([net.users.geometry.x, net.users.geometry.y])
    cxy = np.column_stack([net.cells.geometry.x, net.cells.geometry.y])[cells]
    near = net.nearest_image_m(users, cells)
    d_near = np.hypot(*(near - uxy).T)
    assert (d_near <= np.hypot(*(cxy - uxy).T) + 1e-9).all()
    assert d_near.max() < 2.5 * 500.0  # the 19-site cluster's reach; direct lines go beyond
    shift = near - cxy  # each a wraparound shift
    assert (np.abs(shift[:, None, :] - net.wrap_shifts_m[None]).sum(axis=2).min(axis=1) < 1e-6).all()
    unwrapped = net.replace(wrap_shifts_m=None)
    assert np.array_equal(unwrapped.nearest_image_m(users, cells), cxy)


def test_the_fingerprint_names_the_cells_and_users_not_the_object():
    """Network.fingerprint digests cell and user ids and positions: a copy of the tables
    gives the same one, a moved user or renamed cell another, a subset of users the
    fingerprint of the network of those users, and a replaced table is seen."""
    net = topology.drop_users(topology.hex_grid(n_rings=1), 20, rng=1)
    copy = net.replace(cells=net.cells.copy(), users=net.users.copy())
    assert copy.fingerprint == net.fingerprint
    moved = net.users.copy()
    moved.geometry = moved.geometry.translate(xoff=0.01)
    assert net.replace(users=moved).fingerprint.users != net.fingerprint.users
    assert net.replace(users=moved).fingerprint.cells == net.fingerprint.cells
    renamed = net.cells.copy()
    renamed["cell_id"] = renamed["cell_id"] + 100
    assert net.replace(cells=renamed).fingerprint.cells != net.fingerprint.cells
    rows = np.array([1, 4, 7])
    subset = net.replace(users=net.users.iloc[rows].reset_index(drop=True))
    assert net.fingerprint_of_users(rows) == subset.fingerprint
    mask = np.zeros(net.n_users, bool)
    mask[rows] = True
    assert net.fingerprint_of_users(mask) == subset.fingerprint
    before = copy.fingerprint
    copy.users = moved
    assert copy.fingerprint != before
