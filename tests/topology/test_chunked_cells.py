"""read_cells(..., chunk_rows=N): the same network, and the same errors, as a read in one go.

Every test reads a file twice, in one go and in chunks (often of a few rows, so that rows
of one cell, bad rows and filtered rows fall into different chunks), and compares the
whole cell table (every column, dtype and value, exactly), the CRS and the positions, or
the full error message. Files are a few dozen rows written into ``tmp_path``, plus the
shared San Francisco extract when it is there.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from helpers import ROOT
from helpers.checks import raises
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cellopt import Network
from cellopt.errors import ValidationError
from cellopt.topology.cellfiles import OPENCELLID_COLUMNS, read_cells

SF_CSV = (ROOT.parent / "shared" / "data"
          / "opencellid_sf_verizon_lte.csv")
UTM = "EPSG:32610"  # UTM 10N, San Francisco
BOX = (-122.43, 37.73, -122.38, 37.80)  # lon/lat, inside the synthetic exports' extent


def export(n: int = 60, seed: int = 0, **overrides) -> pd.DataFrame:
    """A synthetic OpenCelliD export in San Francisco: three radios, two operators, and
    cells seen in several areas (duplicates, with different samples and dates)."""
    rng = np.random.default_rng(seed)
    data = {
        "radio": rng.choice(["LTE", "GSM", "UMTS"], n), "mcc": rng.choice([311, 310], n),
        "net": rng.choice([480, 260], n), "area": rng.integers(1, 5, n),
        "cell": rng.integers(0, 40, n) * 256 + rng.integers(0, 3, n), "unit": 0,
        "lon": np.round(-122.45 + rng.uniform(0, 0.1, n), 6),
        "lat": np.round(37.72 + rng.uniform(0, 0.1, n), 6), "range": 1000,
        "samples": rng.integers(1, 4, n), "changeable": 1, "created": 1_458_613_761,
        "updated": rng.integers(1_491_242_559, 1_491_242_562, n), "averageSignal": 0,
    }
    data.update(overrides)
    return pd.DataFrame(data)[list(OPENCELLID_COLUMNS)]


def plain(n: int = 60, seed: int = 1) -> pd.DataFrame:
    """A plain cell table: integer ids, sites of three cells (at the site's position), an
    operator column."""
    rng = np.random.default_rng(seed)
    site = np.arange(n) // 3
    lon, lat = rng.uniform(0, 0.1, (2, site[-1] + 1))
    return pd.DataFrame({
        "cell_id": np.arange(n), "lon": np.round(-122.45 + lon[site], 6),
        "lat": np.round(37.72 + lat[site], 6), "mcc": rng.choice([311, 310], n),
        "site_id": site,
    })


def write(path: Path, frame: pd.DataFrame, **options) -> Path:
    frame.to_csv(path, index=False, **options)
    return path


def assert_same_network(net: Network, ref: Network) -> None:
    """Every column (dtype and value) and every position exactly, the same CRS."""
    assert net.crs == ref.crs
    pd.testing.assert_frame_equal(pd.DataFrame(net.cells).drop(columns="geometry"),
                                  pd.DataFrame(ref.cells).drop(columns="geometry"),
                                  check_exact=True)
    np.testing.assert_array_equal(net.cells.geometry.x, ref.cells.geometry.x)
    np.testing.assert_array_equal(net.cells.geometry.y, ref.cells.geometry.y)


def read_both(path: Path, chunk_rows: int, **options) -> Network:
    """The chunked read, after checking it against the read in one go."""
    ref = read_cells(path, **options)
    net = read_cells(path, chunk_rows=chunk_rows, progress=False, **options)
    assert_same_network(net, ref)
    return net


def same_error(path: Path, chunk_rows: int, **options) -> str:
    """The message of the chunked read's error, after checking it is the one-go read's."""
    with pytest.raises(ValidationError) as whole:
        read_cells(path, **options)
    with pytest.raises(ValidationError) as chunked:
        read_cells(path, chunk_rows=chunk_rows, progress=False, **options)
    assert str(chunked.value) == str(whole.value)
    return str(chunked.value)


# ---------------------------------------------------------------------- the SF extract
@pytest.mark.parametrize("options", [
    {},
    {"radio": "LTE", "mcc": 311, "mnc": 480, "bbox": (-122.45, 37.75, -122.39, 37.80)},
    {"polygon": shapely.box(-122.42, 37.76, -122.40, 37.79).buffer(0.01), "cluster_sites": False},
    {"merge_distance_m": 0.0, "crs": UTM},
], ids=["all", "filters+bbox", "polygon", "no-merge"])
def test_sf_extract_read_in_chunks_is_the_same(options):
    if not SF_CSV.exists():
        pytest.skip(f"shared data not found at {SF_CSV}")
    net = read_both(SF_CSV, 137, **options)
    assert net.n_cells > 100


# ---------------------------------------------------------------------- synthetic files
@pytest.mark.parametrize(("chunk_rows", "options"), [
    (1, {}),
    (7, {"radio": "lte"}),
    (10, {"mcc": 311, "mnc": [480, 260], "bbox": BOX}),
    (13, {"polygon": gpd.GeoSeries([shapely.box(*BOX)], crs="EPSG:4326").to_crs(UTM),
          "radio": ["LTE", "GSM"]}),
    (8, {"bbox": BOX, "polygon": shapely.box(-122.42, 37.70, -122.30, 37.78), "mcc": 310}),
    (11, {"cluster_sites": False}),
    (9, {"merge_distance_m": 3000.0}),
    (1000, {}),  # one chunk
])
def test_exports_read_in_chunks_are_the_same(tmp_path, chunk_rows, options):
    read_both(write(tmp_path / "cells.csv", export()), chunk_rows, **options)


def test_a_cell_whose_best_row_lies_outside_the_bbox_is_dropped_in_chunks_too(tmp_path):
    # De-duplication comes before the bbox: cell 25601 is best seen (most samples) at row
    # 40, outside the bbox, so its row 2 inside the bbox is dropped, though the rows are
    # in different chunks.
    frame = export(50, lon=-122.40, lat=37.78, cell=np.arange(50) * 256 + 1, radio="LTE",
                   mcc=311, net=480, samples=5)
    frame.loc[[2, 40], "cell"] = 25601
    frame.loc[40, ["lon", "samples"]] = (-122.20, 50)
    net = read_both(write(tmp_path / "cells.csv", frame), 10, bbox=BOX)
    assert net.n_cells == 48 and 25601 not in set(net.cells["cell"])
    assert read_cells(tmp_path / "cells.csv", chunk_rows=10, progress=False).n_cells == 49


def test_headerless_and_compressed_exports(tmp_path):
    frame = export(seed=3)
    ref = read_cells(write(tmp_path / "cells.csv", frame), radio="LTE")
    with gzip.open(tmp_path / "headerless.csv.gz", "wt") as handle:
        frame.to_csv(handle, index=False, header=False)
    write(tmp_path / "headerless.csv", frame, header=False)
    write(tmp_path / "cells.csv.bz2", frame)
    for name in ("headerless.csv.gz", "headerless.csv", "cells.csv.bz2"):
        assert_same_network(read_both(tmp_path / name, 7, radio="LTE"), ref)


@pytest.mark.filterwarnings("ignore:.*not used by cellopt:UserWarning")  # note, floors: extra columns
def test_plain_tables(tmp_path):
    frame = plain()
    frame["note"] = np.where(np.arange(60) == 45, None, "roof")  # a gap in a later chunk
    frame["floors"] = np.where(np.arange(60) == 50, np.nan, 3.0)
    net = read_both(write(tmp_path / "cells.csv", frame), 10, mcc=311, bbox=BOX)
    assert net.cells["cell_id"].dtype == np.int64  # integers in every chunk
    # A text id in a later chunk, in a row the filter drops, keeps every id text.
    frame["cell_id"] = frame["cell_id"].astype(object)
    frame.loc[55, ["cell_id", "mcc"]] = ("roof-55", 1)
    net = read_both(write(tmp_path / "text_ids.csv", frame), 10, mcc=311)
    assert isinstance(net.cells["cell_id"].iloc[0], str)
    # A trailing comma on every line (an unnamed column), with a value on one line only.
    lines = (tmp_path / "cells.csv").read_text().splitlines()
    lines = [line + ("," if i != 40 else ",x") for i, line in enumerate(lines)]
    (tmp_path / "trailing.csv").write_text("\n".join(lines) + "\n")
    read_both(tmp_path / "trailing.csv", 10)


def test_projected_coordinates(tmp_path):
    frame = plain()
    points = gpd.GeoSeries.from_xy(frame.pop("lon"), frame.pop("lat"), crs="EPSG:4326").to_crs(UTM)
    frame["x"], frame["y"] = points.x, points.y
    read_both(write(tmp_path / "xy.csv", frame), 9, source_crs=UTM)


# ---------------------------------------------------------------------- errors
def test_bad_rows_are_named_by_their_row_in_the_file(tmp_path):
    frame = export()
    frame["lon"] = frame["lon"].astype(object)
    frame.loc[[45, 58], "lon"] = "?"
    frame.loc[33, "lat"] = 95.0
    message = same_error(write(tmp_path / "cells.csv", frame), 10)
    assert f"rows [45, 58] (ids {frame.loc[[45, 58], 'cell'].tolist()}): lon is not a number" in message
    assert "cells.csv: rows [33] " in message and "lat is outside [-90, 90]" in message


def test_problems_spread_over_chunks_make_one_line_each(tmp_path):
    frame = export()
    frame["radio"] = frame["radio"].astype(object)
    bad = [1, 5, 12, 13, 20, 27, 33, 38, 41, 44, 49, 52, 59]  # 13 rows in 6 chunks
    frame.loc[bad, "radio"] = "WIFI"
    frame.loc[[8, 50], "mcc"] = 1000
    message = same_error(write(tmp_path / "cells.csv", frame), 10)
    lines = message.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("cells.csv: rows [8, 50] ") and "mcc is missing or not" in lines[0]
    assert lines[1].startswith(f"cells.csv: rows {bad[:10]} and 3 more ")
    # Rows that the filters drop are not checked, in chunks either.
    read_both(tmp_path / "cells.csv", 10, radio=["LTE", "GSM", "UMTS"], mcc=[310, 311])


def test_missing_cell_codes_and_bad_rows_of_a_headerless_gzip_export(tmp_path):
    frame = export()
    frame["cell"] = frame["cell"].astype("Int64")
    frame.loc[[3, 47], "cell"] = pd.NA  # empty: the column is float in some chunks only
    with gzip.open(tmp_path / "cells.csv.gz", "wt") as handle:
        frame.to_csv(handle, index=False, header=False)
    message = same_error(tmp_path / "cells.csv.gz", 10)
    assert "rows [3, 47] (ids [nan, nan]): cell is missing" in message


def test_duplicate_cell_ids_in_different_chunks(tmp_path):
    frame = plain()
    frame["cell_id"] = frame["cell_id"].astype(str)
    frame.loc[55, "cell_id"] = " 3 "  # the same id as row 3, with spaces
    frame.loc[[7, 40], "cell_id"] = None
    message = same_error(write(tmp_path / "cells.csv", frame), 10, bbox=(-122.5, 37.0, -122.0, 38.0))
    assert "rows [3, 55] (ids [3, 3]): duplicate cell_id" in message
    assert "rows [7, 40] (ids [nan, nan]): cell_id is missing" in message
    # Found across the file even where one of the two lies outside the bbox.
    frame = plain()
    frame.loc[55, ["cell_id", "lon"]] = (3, -122.2)
    message = same_error(write(tmp_path / "outside.csv", frame), 10, bbox=BOX)
    assert "rows [3, 55] (ids [3, 3]): duplicate cell_id" in message


@pytest.mark.parametrize(("options", "text"), [
    ({"radio": "NR"}, "no rows left after filter radio=['NR'] (60 rows before it"),
    ({"mcc": 999}, "no rows left after filter mcc=[999] (60 rows before it"),
    ({"radio": "LTE", "mnc": 1}, "no rows left after filter mnc=[1] ("),
    ({"bbox": (0, 0, 1, 1)}, "no rows left after filter bbox=(0.0, 0.0, 1.0, 1.0)"),
    ({"polygon": shapely.box(0, 0, 1, 1), "mcc": 311}, "no rows left after filter polygon"),
])
def test_filters_that_leave_nothing(tmp_path, options, text):
    message = same_error(write(tmp_path / "cells.csv", export()), 7, **options)
    assert text in message


def test_files_without_rows(tmp_path):
    (tmp_path / "header.csv").write_text(",".join(OPENCELLID_COLUMNS) + "\n")
    assert "header.csv: the file has no data rows" in same_error(tmp_path / "header.csv", 5)


@pytest.mark.parametrize("chunk_rows", [0, -5, 2.5, True, "100", float("nan")])
def test_bad_chunk_rows(tmp_path, chunk_rows):
    path = write(tmp_path / "cells.csv", export())
    with raises(ValidationError, f"chunk_rows={chunk_rows!r}") as error:
        read_cells(path, chunk_rows=chunk_rows)
    assert "; fix: give the rows to read at a time, e.g. chunk_rows=500_000" in str(error.value)


def test_chunk_rows_is_an_int_not_a_whole_float(tmp_path):
    path = write(tmp_path / "cells.csv", export())
    read_both(path, np.int64(20))
    with raises(ValidationError, "chunk_rows=20.0 is a float, not an int") as error:
        read_cells(path, chunk_rows=20.0)
    assert "(e.g. chunk_rows=20)" in str(error.value)


def test_vector_files_refuse_chunk_rows(tmp_path):
    frame = plain()
    gpd.GeoDataFrame(frame, geometry=gpd.points_from_xy(frame["lon"], frame["lat"]),
                     crs="EPSG:4326").to_file(tmp_path / "cells.geojson")
    with raises(ValidationError, "cells.geojson: chunk_rows applies to CSV and OpenCelliD "
                                 "files; vector files are read whole; fix: drop chunk_rows"):
        read_cells(tmp_path / "cells.geojson", chunk_rows=10)


def test_progress_bar_on_stderr(tmp_path, capsys):
    path = write(tmp_path / "cells.csv", export())
    read_cells(path, chunk_rows=10, progress=True)
    err = capsys.readouterr().err
    assert "reading cells.csv" in err and "100%" in err and "rows=60" in err
    read_cells(path, chunk_rows=10, progress=False)
    read_cells(path, chunk_rows=10)  # the default: a bar at a terminal, and stderr is captured
    read_cells(path, progress=True)  # one pandas call: no bar
    assert capsys.readouterr().err == ""
    with raises(ValidationError, "progress='yes' is a str, not True, False or None"):
        read_cells(path, chunk_rows=10, progress="yes")


# ---------------------------------------------------------------------- any file
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(1, 40), chunk_rows=st.integers(1, 45),
       filters=st.sampled_from([{}, {"radio": "LTE"}, {"mcc": 310, "mnc": 260}, {"bbox": BOX}]))
def test_any_chunk_size_gives_the_same_result(tmp_path, seed, n, chunk_rows, filters):
    path = write(tmp_path / f"cells_{seed}_{n}.csv", export(n, seed))
    try:
        read_cells(path, crs=UTM, **filters)
    except ValidationError:
        same_error(path, chunk_rows, crs=UTM, **filters)  # e.g. a filter that leaves nothing
    else:
        read_both(path, chunk_rows, crs=UTM, **filters)
