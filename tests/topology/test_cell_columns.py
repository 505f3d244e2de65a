"""Tests of cell files as planners write them: column aliases, units, the reading table,
swapped coordinates and where the data lies (hand-made CSVs, values checked by hand)."""

from __future__ import annotations

import logging
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from cellopt import ValidationError
from cellopt.topology import gazetteer
from cellopt.topology.cellfiles import ColumnReading, read_cells
from cellopt.topology.cellfiles.units import earfcn_to_mhz, nr_arfcn_to_mhz

# Two three-sector sites in Munich (Marienplatz, and 1.1 km east) and one omni site.
PLANNER = """Site,Sector,Latitude,Longitude,Azimuth,Height,Tilt,Power_W,Band
MUC001,1,48.1374,11.5755,0,30,4,20,B20
MUC001,2,48.1374,11.5755,120,30,6,20,B20
MUC001,3,48.1374,11.5755,240,30,8,40,B20
MUC002,1,48.1374,11.5905,30,25,2,10,B3
MUC002,2,48.1374,11.5905,150,25,2,10,B3
MUC002,3,48.1374,11.5905,270,25,2,10,B3
MUC003,A,48.1450,11.5600,,12,0,5,B7
"""

OTHER = """\
SITE_NAME,CELL,LAT,LONG,AZIMUTH (deg),HEIGHT (m),M-TILT,E-TILT,EIRP (dBm),ANT GAIN (dBi),EARFCN,Comment
SF-01,SF-01-A,37.7793,-122.4193,10,28,2,6,62,17,6300,roof
SF-01,SF-01-B,37.7793,-122.4193,130,28,2,6,62,17,6300,roof
SF-02,SF-02-A,37.7900,-122.4000,45,35.5,0,9,60.5,15.5,1300,mast
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def read_warning(path: Path, **options) -> tuple:
    """read_cells with the one UserWarning it gives; (network, reading, warning text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net, reading = read_cells(path, return_reading=True, **options)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(messages) == 1, messages
    return net, reading, messages[0]


def test_planner_header(tmp_path):
    net, reading, warning = read_warning(write(tmp_path, "plan.csv", PLANNER))
    c = net.cells
    assert c["site_id"].tolist() == ["MUC001"] * 3 + ["MUC002"] * 3 + ["MUC003"]
    assert net.cells["site_id"].nunique() == 3
    assert c["cell_id"].tolist() == ["MUC001-1", "MUC001-2", "MUC001-3", "MUC002-1",
                                     "MUC002-2", "MUC002-3", "MUC003-A"]
    # 20 W = 43.0103 dBm, 40 W = 46.0206 dBm, 10 W = 40 dBm, 5 W = 36.9897 dBm.
    np.testing.assert_allclose(c["tx_power_dbm"], [43.0103, 43.0103, 46.0206, 40, 40, 40, 36.9897],
                               atol=1e-4)
    assert c["azimuth_deg"].tolist()[:6] == [0, 120, 240, 30, 150, 270]
    assert np.isnan(c["azimuth_deg"].iloc[6])  # empty azimuth: omni
    assert c["height_m"].tolist() == [30, 30, 30, 25, 25, 25, 12]
    assert c["tilt_deg"].tolist() == [4, 6, 8, 2, 2, 2, 0]  # 'Tilt' is the mechanical tilt
    assert "electrical_tilt_deg" not in c.columns
    assert (c["antenna_gain_dbi"] == 14.0).all()  # the default
    assert c["band"].tolist() == ["B20"] * 3 + ["B3"] * 3 + ["B7"]
    assert not {"Power_W", "Site", "Sector", "Azimuth"} & set(c.columns)
    assert net.crs.to_epsg() == 32632  # UTM 32N
    # Sectors of a site share its position.
    assert c.geometry.iloc[:3].x.nunique() == 1
    assert warning == ("plan.csv: 1 column(s) not used by cellopt: 'Band' (kept as text; not "
                       "used by the radio model). read_cells(..., return_reading=True) gives "
                       "how every column was read")
    table = reading.to_frame()
    assert table["file column"].tolist()[:9] == PLANNER.splitlines()[0].split(",")
    assert table["cellopt column"].tolist()[:9] == [
        "site_id", "cell_id", "lat", "lon", "azimuth_deg", "height_m", "tilt_deg",
        "tx_power_dbm", "band"]
    how = dict(zip(table["file column"], table["how"], strict=True))
    assert how["Power_W"] == "10·log10(W) + 30 = dBm"
    assert "ambiguous: read as the mechanical downtilt" in how["Tilt"]
    assert "read as metres" in how["Height"]
    assert how["Sector"].startswith("cell id '{Site}-{Sector}'")
    assert "antenna_gain_dbi" in table["cellopt column"].tolist()[9:]
    text = str(reading)
    assert text.startswith("plan.csv: how the columns were read\n  file column")
    assert "sites: 3 for 7 cells (from the site column)" in text
    assert "from Munich, Germany" in text


def test_other_planner_header(tmp_path):
    net, reading, warning = read_warning(write(tmp_path, "sf.csv", OTHER))
    c = net.cells
    assert c["site_id"].tolist() == ["SF-01", "SF-01", "SF-02"]
    assert c["cell_id"].tolist() == ["SF-01-A", "SF-01-B", "SF-02-A"]
    # Transmit power = EIRP − gain: 62 − 17 = 45, 60.5 − 15.5 = 45 dBm.
    assert c["tx_power_dbm"].tolist() == [45.0, 45.0, 45.0]
    assert c["antenna_gain_dbi"].tolist() == [17.0, 17.0, 15.5]
    assert c["tilt_deg"].tolist() == [2, 2, 0]
    assert c["electrical_tilt_deg"].tolist() == [6, 6, 9]
    assert c["height_m"].tolist() == [28, 28, 35.5]
    assert c["azimuth_deg"].tolist() == [10, 130, 45]
    # EARFCN 6300: band 20, 791 + 0.1 (6300 − 6150) = 806 MHz; 1300: band 3, 1815 MHz.
    assert c["earfcn"].tolist() == [6300, 6300, 1300]
    assert c["frequency_mhz"].tolist() == [806.0, 806.0, 1815.0]
    assert c["Comment"].tolist() == ["roof", "roof", "mast"]
    assert "'EARFCN' (kept; not used by the radio model; downlink carrier" in warning
    assert "'Comment' (not recognised: kept as an extra column)" in warning
    how = dict(zip(reading.to_frame()["file column"], reading.to_frame()["how"], strict=True))
    assert how["EIRP (dBm)"] == "EIRP [dBm] − 'ANT GAIN (dBi)' [dBi] (cable losses taken as 0)"
    assert "from San Francisco, United States" in str(reading)


def test_reading_is_logged(tmp_path, caplog):
    path = write(tmp_path, "sf.csv", OTHER)
    with caplog.at_level(logging.INFO, logger="cellopt.topology.cellfiles"), \
            pytest.warns(UserWarning, match="not used by cellopt"):
        net = read_cells(path)
    assert net.n_cells == 3
    assert "sf.csv: how the columns were read" in caplog.text
    assert "M-TILT" in caplog.text and "tilt_deg" in caplog.text


def test_no_warning_when_every_column_is_used(tmp_path):
    text = "site,cell,lat,lon,azimuth,power_dbm\nA,A1,48.1374,11.5755,0,43\nA,A2,48.1374,11.5755,120,43\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net, reading = read_cells(write(tmp_path, "c.csv", text), return_reading=True)
    assert isinstance(reading, ColumnReading) and not reading.not_used
    assert net.cells["tx_power_dbm"].tolist() == [43.0, 43.0]


def test_sites_by_position_without_a_site_column(tmp_path):
    text = ("lat,lon,azimuth\n48.1374,11.5755,0\n48.1374,11.5755,120\n48.1374,11.5755,240\n"
            "48.1400,11.5800,0\n")
    net, reading = read_cells(write(tmp_path, "c.csv", text), return_reading=True)
    assert net.cells["site_id"].tolist() == [0, 0, 0, 1]
    assert "sites: 2 for 4 cells (no site column: cells at the same position are one site)" \
        in str(reading)


@pytest.mark.parametrize(("header", "column"), [("Power", "Power"), ("TX Power", "TX Power"),
                                                ("EIRP", "EIRP")])
def test_power_without_unit_refused(tmp_path, header, column):
    path = write(tmp_path, "c.csv", f"lat,lon,{header}\n48.1374,11.5755,43\n")
    with pytest.raises(ValidationError) as info:
        read_cells(path)
    text = str(info.value)
    assert f"column '{column}' is a" in text and "without a unit in its name" in text
    assert f"fix: rename it {column}_dBm (values in dBm) or {column}_W (values in watts)" in text


def test_eirp_without_gain_refused(tmp_path):
    path = write(tmp_path, "c.csv", "lat,lon,EIRP_dBm\n48.1374,11.5755,60\n")
    with pytest.raises(ValidationError, match=r"column 'EIRP_dBm' is an EIRP .* no antenna gain "
                       r"column.*fix: add the gain"):
        read_cells(path)


def test_two_columns_for_one_quantity_refused(tmp_path):
    path = write(tmp_path, "c.csv", "lat,lon,Azimuth,Bearing\n48.1374,11.5755,0,10\n")
    with pytest.raises(ValidationError, match=r"columns \['Azimuth', 'Bearing'\] all read as "
                       r"azimuth \(cellopt's 'azimuth_deg'\), so which to use is ambiguous; fix: "
                       r"keep one"):
        read_cells(path)


def test_bad_watts_refused(tmp_path):
    path = write(tmp_path, "c.csv", "cell_id,lat,lon,Power_W\na,48.1374,11.5755,20\n"
                 "b,48.1374,11.5855,0\nc,48.1374,11.5955,lots\n")
    with pytest.raises(ValidationError) as info:
        read_cells(path)
    text = str(info.value)
    assert "rows [2] (ids ['c']): Power_W is not a number" in text
    assert "rows [1] (ids ['b']): Power_W is not a power > 0 W" in text


def test_swapped_munich_refused(tmp_path):
    swapped = PLANNER.replace("Latitude,Longitude", "Longitude,Latitude")
    with pytest.raises(ValidationError) as info:
        read_cells(write(tmp_path, "plan.csv", swapped))
    text = str(info.value)
    assert text.startswith("plan.csv: 7 of 7 cells lie in the sea (rows [0, 1, 2, 3, 4, 5, 6] "
                           "(ids ['MUC001-1', ")
    assert "but 7 would be on land with longitude and latitude swapped" in text
    assert "fix: swap the values of 'Longitude' and 'Latitude', or their names" in text


def test_sea_not_fixable_by_swapping_warns(tmp_path):
    # The North Sea (55.5° N, 3.5° E) swapped is (3.5° N, 55.5° E): the Indian Ocean.
    path = write(tmp_path, "c.csv", "cell_id,lat,lon\nrig,55.5,3.5\nrig2,55.52,3.52\n")
    with pytest.warns(UserWarning, match=r"c.csv: rows \[0, 1\] \(ids \['rig', 'rig2'\]\) lie in "
                      r"the sea .* swapping longitude and latitude does not put the file on land; "
                      r"fix: check these positions"):
        net = read_cells(path)
    assert net.n_cells == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_cells(path, check_land=False).n_cells == 2


def test_one_cell_offshore_among_many_warns(tmp_path):
    text = PLANNER + "MUC004,1,54.5,7.0,0,30,0,20,B20\n"  # the German Bight
    with pytest.warns(UserWarning) as record:
        read_cells(write(tmp_path, "plan.csv", text), crs="EPSG:32632")
    messages = [str(w.message) for w in record]
    assert any("rows [7] (ids ['MUC004-1']) lie in the sea" in m for m in messages)


def test_gazetteer_munich_and_san_francisco():
    munich = gazetteer.nearest_town(11.5755, 48.1374)
    assert munich.country == "Germany" and munich.country_code == "DE"
    assert munich.name in ("Munich", "München") and munich.distance_km < 2
    sf = gazetteer.nearest_town(-122.4194, 37.7749)
    assert (sf.name, sf.country) == ("San Francisco", "United States")
    text = gazetteer.describe_location([11.57, 11.58], [48.13, 48.14])
    assert text.startswith("centre 48.1350° N, 11.5750° E: ") and "Munich, Germany" in text
    assert gazetteer.on_land([11.5755, 48.1374], [48.1374, 11.5755]).tolist() == [True, False]
    with pytest.raises(ValidationError, match="not lon in"):
        gazetteer.nearest_town(200.0, 0.0)


def test_carrier_numbers():
    # TS 36.101 Table 5.7.3-1: band 1 EARFCN 300 = 2140 MHz, band 7 3100 = 2655 MHz,
    # band 66 66786 = 2145 MHz; an uplink EARFCN (18300) has no downlink frequency.
    np.testing.assert_allclose(earfcn_to_mhz([300, 3100, 66786, 18300]),
                               [2140.0, 2655.0, 2145.0, np.nan])
    # TS 38.104 §5.4.2.1: 632628 = 3000 + 0.015 × 32628 = 3489.42 MHz (n78), 2079167 =
    # 24250.08 + 0.06 × 62500 = 28000.08 MHz (n257), 123400 = 0.005 × 123400 = 617 MHz.
    np.testing.assert_allclose(nr_arfcn_to_mhz([632628, 2079167, 123400, 3279166]),
                               [3489.42, 28000.08, 617.0, np.nan])


def test_frequency_units_and_beamwidth(tmp_path):
    text = ("lat,lon,Freq_GHz,HBW,NR-ARFCN\n48.1374,11.5755,3.5,65,632628\n")
    with pytest.warns(UserWarning) as record:
        net, reading = read_cells(write(tmp_path, "c.csv", text), return_reading=True)
    assert len(record) == 1
    assert net.cells["frequency_mhz"].tolist() == [3500.0]  # from the GHz column, not the ARFCN
    assert net.cells["beamwidth_deg"].tolist() == [65]
    assert net.cells["nr_arfcn"].tolist() == [632628]
    how = dict(zip(reading.to_frame()["file column"], reading.to_frame()["how"], strict=True))
    assert "kept; not used by the radio model (its beamwidth θ_3dB is a RadioModel" in how["HBW"]
    assert how["Freq_GHz"].startswith("carrier frequency, GHz → MHz")


@pytest.mark.parametrize("header", ["NodeB Name", "eNodeB Name", "gNB_Name", "gNodeB name"])
def test_node_names_are_site_columns(tmp_path, header):
    """Vendor exports name the site by its NodeB / eNodeB / gNB."""
    text = (f"{header},Cell Name,LAT_WGS84,LONG_WGS84,EIRP_dBm,Antenna Gain (dBi)\n"
            "LYO1,LYO1_1,45.7640,4.8357,60,17\nLYO1,LYO1_2,45.7640,4.8357,60,17\n"
            "LYO2,LYO2_1,45.7700,4.8500,60,17\n")
    net, reading = read_cells(write(tmp_path, "lyon.csv", text), return_reading=True)
    assert net.cells["site_id"].tolist() == ["LYO1", "LYO1", "LYO2"]
    assert reading.uses[0].target == "site_id"


def test_recorded_readings_collect_every_read_in_the_block(tmp_path):
    from cellopt.topology.cellfiles import recorded_readings

    path = write(tmp_path, "plan.csv", PLANNER)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with recorded_readings() as outer:
            read_cells(path)
            with recorded_readings() as inner:
                read_cells(path)
        read_cells(path)  # after the block: recorded nowhere
    assert [r.file for r in outer] == ["plan.csv", "plan.csv"]
    assert len(inner) == 1 and inner[0] == outer[1]


# ---------------------------------------------------------------------- one quantity, one column
@pytest.mark.parametrize(("header", "row", "columns", "quantity"), [
    ("cell_id,Lat,Latitude,lon", "1,48.1374,48.1374,11.5755", "['Lat', 'Latitude']", "lat"),
    ("cell_id,lat,Lat_deg,lon", "1,48.1374,48.1374,11.5755", "['lat', 'Lat_deg']", "lat"),
    ("cell_id,lat,lon,LONGITUDE", "1,48.1374,11.5755,11.5755", "['lon', 'LONGITUDE']", "lon"),
    ("cell_id,x,x_m,y", "1,0,0,0", "['x', 'x_m']", "x"),
    ("cell_id,lat,lon,Height,height_m", "1,48.1374,11.5755,30,30", "['Height', 'height_m']",
     "height"),
    ("cell_id,lat,lon,Power_W,tx_power_dbm", "1,48.1374,11.5755,20,43",
     "['Power_W', 'tx_power_dbm']", "power"),
])
def test_one_quantity_in_two_columns_refused(tmp_path, header, row, columns, quantity):
    path = write(tmp_path, "c.csv", f"{header}\n{row}\n")
    with pytest.raises(ValidationError, match=re.escape(
            f"c.csv: columns {columns} all read as {quantity} (cellopt's")) as err:
        read_cells(path, source_crs="EPSG:32632")
    assert "fix: keep one of them (drop or rename the others)" in str(err.value)


def test_positions_not_used_are_said_so(tmp_path):
    path = write(tmp_path, "c.csv", "cell_id,lat,lon,x,y\n1,48.1374,11.5755,691000,5334000\n")
    _, reading, warning = read_warning(path)
    table = reading.to_frame().set_index("file column")
    assert not table.loc["x", "used"] and not table.loc["y", "used"]
    assert table.loc["x", "how"] == ("not used: the positions come from 'lon', 'lat'; kept as an "
                                     "extra column")
    assert "'x' (not used: the positions come from 'lon', 'lat'" in warning
    # An EIRP beside cellopt's own power column is not used, and said so.
    path = write(tmp_path, "e.csv", "cell_id,lat,lon,tx_power_dbm,EIRP_dBm,Gain_dBi\n"
                                    "1,48.1374,11.5755,43,60,17\n")
    _, reading, warning = read_warning(path)
    assert "'EIRP_dBm' (not used: the transmit power comes from 'tx_power_dbm'" in warning


# ---------------------------------------------------------------------- units glued to names
@pytest.mark.parametrize(("name", "value", "column", "expected"), [
    ("PowerW", 20, "tx_power_dbm", 43.0103),
    ("TxPowerW", 20, "tx_power_dbm", 43.0103),
    ("Tx PowerW", 20, "tx_power_dbm", 43.0103),
    ("PowermW", 20_000, "tx_power_dbm", 43.0103),
    ("TxPowerDBm", 43, "tx_power_dbm", 43.0),
    ("PowerKW", 0.02, "tx_power_dbm", 43.0103),
    ("HeightM", 30, "height_m", 30.0),
    ("heightm", 30, "height_m", 30.0),
    ("AntennaHeightFt", 100, "height_m", 30.48),
    ("HeightKm", 0.03, "height_m", 30.0),
    ("Height_km", 0.03, "height_m", 30.0),
    ("AzimuthDeg", 120, "azimuth_deg", 120.0),
    ("Azim", 120, "azimuth_deg", 120.0),  # an azimuth, not 'Azi' in metres
    ("AntGainDBi", 17, "antenna_gain_dbi", 17.0),
])
def test_unit_glued_to_a_one_word_name(tmp_path, name, value, column, expected):
    path = write(tmp_path, "c.csv", f"cell_id,lat,lon,{name}\n1,48.1374,11.5755,{value}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net, reading = read_cells(path, return_reading=True)
    assert net.cells[column].iloc[0] == pytest.approx(expected, abs=1e-4)
    use = next(u for u in reading.uses if u.column == name)
    assert use.target == column and use.used


def test_name_like_a_quantity_but_not_read_is_named_with_a_hint(tmp_path):
    path = write(tmp_path, "c.csv", "cell_id,lat,lon,Power per port (W),Height above sea\n"
                                    "1,48.1374,11.5755,20,520\n")
    net, _, warning = read_warning(path)
    assert (net.cells["tx_power_dbm"] == 46.0).all()  # the default: said so below
    assert ("'Power per port (W)' (not recognised, though the name starts like power "
            "('tx_power_dbm'): kept as an extra column; rename it 'Power_dBm' or 'Power_W' (with "
            "its unit) to use it)") in warning
    assert "'Height above sea' (not recognised, though the name starts like height" in warning


# ---------------------------------------------------------------------- usual ranges
def one_warning(path: Path, **options) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_cells(path, **options)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages
    return messages[0]


def test_milliwatts_in_a_watt_column_warn(tmp_path):
    path = write(tmp_path, "c.csv", "cell_id,lat,lon,Power_W\nA,48.1374,11.5755,20000\n"
                                    "B,48.1374,11.5805,20\n")
    warning = one_warning(path)
    assert warning.startswith(
        "c.csv: rows [0] (ids ['A']): column 'Power_W' gives tx_power_dbm = 73.01 dBm, outside the "
        "usual range [33, 60] dBm for macro cells (cellopt.parameters.LIMITS['tx_power_dbm'], the "
        "range the scenario key tx_power_dbm is checked against; legal, so read as given); they "
        "look like mW given as W: read as mW they would be 43.01 dBm; fix: convert the values of "
        "'Power_W' from mW to W, or rename the column 'Power_mW'")


def test_macro_watts_in_a_dbm_column_warn_per_tier(tmp_path):
    text = ("cell_id,tier,lat,lon,Tx Power (dBm)\nM1,macro,48.1374,11.5755,20\n"
            "M2,macro,48.1374,11.5805,46\nP1,pico,48.1390,11.5755,20\nF1,femto,48.1400,11.5760,20\n")
    warning = one_warning(write(tmp_path, "c.csv", text))
    assert warning.startswith("c.csv: rows [0] (ids ['M1']): column 'Tx Power (dBm)' gives "
                              "tx_power_dbm = 20 dBm, outside the usual range [33, 60] dBm for "
                              "macro cells")
    assert ("they look like W or dBW given as dBm: read as W they would be 43.01 dBm; read as "
            "dBW they would be 50 dBm") in warning
    assert "(the tier is" not in warning  # the file has a tier column


def test_default_power_of_the_wrong_tier_warns(tmp_path):
    path = write(tmp_path, "c.csv", "cell_id,tier,lat,lon\nF1,femto,48.1374,11.5755\n")
    warning = one_warning(path)
    assert warning.startswith("c.csv: rows [0] (ids ['F1']): the default read_cells(..., "
                              "tx_power_dbm=46.0) gives tx_power_dbm = 46 dBm, outside the usual "
                              "range [5, 27] dBm for femto cells")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_cells(path, tx_power_dbm=20.0)


@pytest.mark.parametrize(("header", "value", "column", "slip"), [
    ("Height_m", 500, "height_m", "they look like ft or cm given as m: read as ft they would be "
     "152.4 m; read as cm they would be 5 m"),
    ("Gain_dBi", 50, "antenna_gain_dbi", "they look like linear (times) given as dBi"),
])
def test_other_columns_get_their_usual_range(tmp_path, header, value, column, slip):
    path = write(tmp_path, "c.csv", f"cell_id,lat,lon,{header}\n1,48.1374,11.5755,{value}\n")
    warning = one_warning(path)
    assert f"column '{header}' gives {column} = {value} " in warning
    assert f"(cellopt.parameters.LIMITS['{column}']" in warning and slip in warning


# ---------------------------------------------------------------------- sites
def test_one_site_id_for_two_masts_refused(tmp_path):
    path = write(tmp_path, "c.csv", "cell_id,site_id,lat,lon\n1,A,48.1374,11.5755\n"
                                    "2,A,48.1374,11.6430\n3,B,48.1374,11.5755\n")
    with pytest.raises(ValidationError) as err:
        read_cells(path)
    assert str(err.value) == (
        "c.csv: site_id 'A', rows [0, 1] (ids [1, 2]): the cells of this site are 5.02 km apart, "
        "more than the 200 m the sectors of one mast may be (a site's cells share its shadowing); "
        "fix: give the cells of different masts different site ids, or correct their positions "
        "(or drop the site column: cells at the same position are then one site)")
    # Antennas on the corners of one roof are one mast.
    path = write(tmp_path, "roof.csv", "cell_id,site_id,lat,lon\n1,A,48.1374,11.5755\n"
                                       "2,A,48.1380,11.5770\n")
    assert read_cells(path).cells["site_id"].tolist() == ["A", "A"]


# ---------------------------------------------------------------------- swapped rows
def test_rows_with_swapped_coordinates_refused_as_swaps(tmp_path):
    rows = "".join(f"{i},48.{130 + i},11.{570 + i}\n" for i in range(6))
    path = write(tmp_path, "c.csv", "cell_id,lat,lon\n" + rows + "6,11.5900,48.1500\n")
    with pytest.raises(ValidationError) as err:
        read_cells(path)
    message = str(err.value)
    assert message.startswith("c.csv: rows [6] (ids [6]): 'lon' and 'lat' look swapped in these "
                              "rows: as given they lie up to ")
    assert message.endswith("fix: swap the values of 'lon' and 'lat' in these rows (longitude is "
                            "east-west, x; latitude north-south, y)")
    assert "span" not in message  # not the extent of the file


# ---------------------------------------------------------------------- delimiters
def test_semicolon_export_with_a_comma_in_a_header_name(tmp_path):
    text = ("Site;Sector;Latitude;Longitude;Power, W;Height (m)\n"
            "MUC001;1;48,1374;11,5755;20;30\nMUC001;2;48,1374;11,5755;40;30\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net = read_cells(write(tmp_path, "c.csv", text))
    np.testing.assert_allclose(net.cells["tx_power_dbm"], [43.0103, 46.0206], atol=1e-4)
    assert net.cells["lat"].tolist() == [48.1374, 48.1374]
    assert net.cells["cell_id"].tolist() == ["MUC001-1", "MUC001-2"]


@pytest.mark.parametrize("sep", [",", ";"])
def test_excel_sep_line_is_honoured(tmp_path, sep):
    text = f"sep={sep}\ncell_id{sep}lat{sep}lon\n1{sep}48.1374{sep}11.5755\n"
    net = read_cells(write(tmp_path, "c.csv", text))
    assert net.cells["cell_id"].tolist() == [1]
    net = read_cells(write(tmp_path, "c2.csv", text), chunk_rows=1, progress=False)
    assert net.cells["lat"].tolist() == [48.1374]


# ---------------------------------------------------------------------- far from towns
def test_swapped_vienna_on_land_far_from_towns_warns_of_a_swap(tmp_path):
    # Vienna (48.21° N, 16.37° E) read swapped lies on land in Yemen.
    path = write(tmp_path, "c.csv", "cell_id,lat,lon\n1,16.3738,48.2082\n2,16.3800,48.2100\n")
    warning = one_warning(path)
    assert warning.startswith("c.csv: 2 of 2 cells lie more than 100 km from any town of the "
                              "GeoNames gazetteer (towns of 15,000 people or more; centre ")
    assert "km from Ghayl Bā Wazīr, Yemen" in warning
    assert ("with longitude and latitude swapped 2 of them would be near a town (centre 48.2091° "
            "N, 16.3769° E: 0.4 km from Vienna, Austria): the columns 'lon' (read as longitude) "
            "and 'lat' (read as latitude) look swapped; fix: swap the values of 'lon' and 'lat'"
            ) in warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_cells(path, check_land=False)


def test_far_from_towns_without_a_swap_warns(tmp_path):
    # The Greenland ice sheet: land, far from any town; swapped, the Southern Ocean.
    path = write(tmp_path, "c.csv", "cell_id,lat,lon\n1,72.5,-40.0\n")
    warning = one_warning(path)
    assert "c.csv: 1 of 1 cells lie more than 100 km from any town" in warning
    assert "swapped" not in warning and warning.endswith(
        "fix: check the positions ('lon' is read as longitude, 'lat' as latitude, WGS 84 "
        "degrees), or pass check_land=False for cells there on purpose")


def test_town_distance():
    d = gazetteer.town_distance_km([11.5755, 48.2082], [48.1374, 16.3738])
    assert d[0] < 1.0 and 200 < d[1] < 230
