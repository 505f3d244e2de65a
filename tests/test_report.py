"""The HTML report: self-contained, escaped, complete; and it renders in a headless browser."""

import re
import shutil
import subprocess
import time
from collections import Counter
from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")

import geopandas as gpd
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from cellopt.errors import ValidationError
from cellopt.study import report
from cellopt.study.report import format_value, write_report

CRS = "EPSG:32610"
N_USERS, N_CELLS = 40, 3
NASTY_ID = "<b>&x"

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Scan(HTMLParser):
    """Counts class tokens and ids, and checks that the tags nest."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.classes: Counter[str] = Counter()
        self.ids: Counter[str] = Counter()
        self.tags: Counter[str] = Counter()
        self.attrs: list[tuple[str, str, str]] = []
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.text: list[str] = []

    def _open(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        for name, value in attrs:
            value = value or ""
            self.attrs.append((tag, name, value))
            if name == "class":
                self.classes.update(value.split())
            elif name == "id":
                self.ids[value] += 1

    def handle_starttag(self, tag, attrs):
        self._open(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self._open(tag, attrs)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            if tag in self.stack:
                while self.stack.pop() != tag:
                    pass
        else:
            self.stack.pop()

    def handle_data(self, data):
        if not {"script", "style"} & set(self.stack[-1:]):
            self.text.append(data)


def scan(text: str) -> _Scan:
    s = _Scan()
    s.feed(text)
    s.close()
    return s


def make_frames(n_users: int = N_USERS, seed: int = 0) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame]:
    rng = np.random.default_rng(seed)
    ids = np.array([NASTY_ID, "p1", "f2"], dtype=object)
    tiers = np.array(["macro", "pico", "femto"])
    cells = gpd.GeoDataFrame(
        {"cell_id": ids, "site_id": [0, 1, 2], "tier": tiers,
         "owner": ["operator", "operator", "third_party"], "azimuth_deg": [30.0, np.nan, np.nan],
         "tx_power_dbm": [46.0, 30.0, 20.0], "load": [0.8, np.nan, 0.1], "n_users": [20, 10, 2],
         "traffic_mbps": [50.0, 20.0, 3.5], "backhaul_mbps": [np.inf, np.inf, 10.0],
         "backhaul_use": [np.nan, np.nan, 0.35], "payment": [0.0, 0.0, 1.25]},
        geometry=gpd.points_from_xy([500_000.0, 500_600.0, 500_300.0],
                                    [4_100_000.0, 4_100_400.0, 4_099_700.0]),
        crs=CRS)
    serve = rng.integers(-1, N_CELLS, n_users)
    serve[:3] = [-1, 0, 2]
    served = serve >= 0
    users = gpd.GeoDataFrame(
        {"user_id": np.arange(n_users),
         "in_study_area": np.arange(n_users) % 5 != 0,
         "usable": np.arange(n_users) != 0,
         "serving_cell_id": pd.Series([ids[s] if s >= 0 else None for s in serve], dtype=object),
         "serving_tier": np.where(served, tiers[np.maximum(serve, 0)], "none"),
         "n_serving_cells": served.astype(int),
         "airtime_share": np.where(served, rng.uniform(0, 1, n_users), 0.0),
         "rate_mbps": np.where(served, rng.uniform(0.1, 20, n_users), 0.0),
         "sinr_db": np.where(served, rng.normal(5, 5, n_users), np.nan)},
        geometry=gpd.points_from_xy(500_000 + rng.uniform(-300, 900, n_users),
                                    4_100_000 + rng.uniform(-500, 600, n_users)),
        crs=CRS)
    return users, cells


def make_tables() -> dict[str, pd.DataFrame]:
    methods = pd.DataFrame(
        {"utility": [-171.923456, -228.6], "gap": [2.2e-5, np.nan], "iterations": [12, 1],
         "status": ["optimal", None]},
        index=pd.Index(["alm", "max_sinr"], name="method"))
    radio = pd.DataFrame({"cells": [1, 1, 1], "mean load": [0.8, np.nan, 0.1]},
                         index=pd.Index(["macro", "pico", "femto"], name="tier"))
    return {"Methods": methods, "Radio <summary>": radio}


@pytest.fixture
def figures():
    f1, a1 = plt.subplots(figsize=(4, 3))
    a1.plot([1, 2, 3], [0.1, 0.5, 1.0], label="alm")
    a1.legend()
    a1.set_title("Rate CDF")
    f2, a2 = plt.subplots(figsize=(4, 3))
    a2.semilogy([1, 2, 3], [3.0, 2.0, 1.5], "o-")
    yield {"Rate CDF": f1, "Convergence": f2}
    plt.close(f1)
    plt.close(f2)


@pytest.fixture
def page(tmp_path, figures):
    users, cells = make_frames()
    path = write_report(tmp_path / "out" / "report.html", title="Drop <1> & co", users=users, cells=cells,
                        tables=make_tables(), figures=figures, notes=["scenario: hex <grid>", "seed 7"])
    return path, users, cells


# ---------------------------------------------------------------------- content
def test_writes_one_valid_page(page, figures):
    path = page[0]
    assert path.name == "report.html" and path.is_file()
    assert [p.name for p in path.parent.iterdir()] == ["report.html"]  # no temporary file left
    text = path.read_text("utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert '<meta charset="utf-8">' in text
    s = scan(text)
    assert not s.errors and not s.stack
    duplicated = [i for i, n in s.ids.items() if n > 1]
    assert not duplicated
    assert s.ids["map"] == 1 and s.tags["svg"] >= 1
    for fig in figures.values():  # the caller closes the figures
        assert plt.fignum_exists(fig.number)


def test_nothing_is_fetched(page):
    text = page[0].read_text("utf-8")
    assert "http://" not in text and "https://" not in text
    s = scan(text)
    for tag, name, value in s.attrs:
        if name in ("src", "href", "xlink:href", "action", "poster", "data"):
            assert not re.match(r"\s*(https?:)?//", value, re.I), (tag, name, value)
            assert value.startswith(("#", "data:")), (tag, name, value)
    assert "@import" not in text
    assert set(re.findall(r"url\(\s*['\"]?(.)", text)) <= {"#"}  # only references inside the page
    assert "<link" not in text and "<iframe" not in text
    assert not re.search(r"<script[^>]*\bsrc=", text)
    assert "Content-Security-Policy" in text and "default-src 'none'" in text


def test_counts_match(page):
    path, users, _ = page
    s = scan(path.read_text("utf-8"))
    served = users["serving_cell_id"].notna().sum()
    assert s.classes["cell"] == N_CELLS
    assert s.classes["user"] == N_USERS
    assert s.classes["assoc"] == served
    guard = ~users["in_study_area"]
    assert s.classes["guard"] == guard.sum() + (guard & users["serving_cell_id"].notna()).sum()  # dots, lines
    assert s.classes["unusable"] == 1
    assert s.classes["summary-table"] == 2
    assert s.classes["figure"] == 2
    assert s.classes["third"] == 1
    assert s.tags["title"] == 1 + N_USERS + N_CELLS  # page title + one tooltip per marker


def test_escaping(page):
    text = page[0].read_text("utf-8")
    assert NASTY_ID not in text
    assert "&lt;b&gt;&amp;x" in text
    assert "<title>Drop &lt;1&gt; &amp; co</title>" in text
    assert "hex &lt;grid&gt;" in text and "Radio &lt;summary&gt;" in text
    # tooltip of a user served by that cell names it, escaped
    assert re.search(r"served by cell &lt;b&gt;&amp;x \(macro\)", text)


def test_missing_values_are_dashes(tmp_path):
    users, cells = make_frames()
    path = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables=make_tables(),
                        figures={})
    text = path.read_text("utf-8")
    s = scan(text)
    visible = "\n".join(s.text)
    assert not re.search(r"\b(nan|NaN|None|inf|<NA>)\b", visible)
    assert "–" in visible  # missing gap, status, load, SINR
    assert "SINR: –" in visible and "not served" in visible
    assert "backhaul: unlimited" in visible
    assert "load: –" in visible
    assert 'class="num">2.2e-05<' in text and 'class="num">-171.9<' in text


def test_tables_show_index_and_caption(page):
    text = page[0].read_text("utf-8")
    table = re.search(r'<table class="summary-table" id="table-methods">.*?</table>', text, re.S).group(0)
    assert "<caption>Methods</caption>" in table
    assert '<th scope="col">method</th>' in table
    assert '<th scope="row">alm</th>' in table and '<th scope="row">max_sinr</th>' in table
    assert '<td class="num">12</td>' in table  # integers in full


@pytest.mark.parametrize(("value", "text"), [
    (0.5, "0.5"), (3.14159, "3.142"), (12345.6, "12350"), (9.99996, "10"), (1e-9, "1e-09"),
    (2.5e7, "2.5e+07"), (-171.923, "-171.9"), (0.0, "0"), (np.float32(0.25), "0.25"), (np.int64(7), "7"),
    (10**12, "1000000000000"), (True, "yes"), (None, "–"), (np.nan, "–"), (pd.NA, "–"), (np.inf, "∞"),
    (-np.inf, "−∞"), ("a<b", "a<b"),
])
def test_format_value(value, text):
    assert format_value(value) == text


def test_association_lines_off_above_threshold(tmp_path, monkeypatch):
    users, cells = make_frames()
    monkeypatch.setattr(report, "ASSOCIATION_LINES_MAX_USERS", 10)
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={},
                        figures={}).read_text("utf-8")
    row = re.search(r'<div class="map-row ([^"]*)" id="map-row">', text).group(1).split()
    assert "show-assoc" not in row and "show-users" in row
    assert '<input type="checkbox" data-toggle="show-assoc">' in text
    assert scan(text).classes["assoc"] == users["serving_cell_id"].notna().sum()  # still there, hidden
    assert 'id="tables"' not in text and 'id="figures"' not in text


def test_minimal_columns_and_no_users(tmp_path):
    users, cells = make_frames()
    users = users[["user_id", "serving_cell_id", "geometry"]]
    cells = cells[["cell_id", "tier", "geometry"]]
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={},
                        figures={}).read_text("utf-8")
    s = scan(text)
    assert s.classes["user"] == N_USERS and s.classes["cell"] == N_CELLS and not s.errors
    assert s.classes["t-macro"] > 0  # tier taken from the serving cell
    empty = write_report(tmp_path / "e.html", title="t", users=users.iloc[:0], cells=cells, tables={},
                         figures={}).read_text("utf-8")
    assert scan(empty).classes["user"] == 0 and scan(empty).classes["cell"] == N_CELLS


def test_overwrites_atomically(tmp_path):
    users, cells = make_frames()
    path = tmp_path / "r.html"
    path.write_text("old")
    write_report(path, title="new", users=users, cells=cells, tables={}, figures={})
    assert "<title>new</title>" in path.read_text("utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_bad_input_is_refused(tmp_path):
    users, cells = make_frames()
    kw = {"title": "t", "tables": {}, "figures": {}}
    with pytest.raises(ValidationError, match="serving_cell_id"):
        write_report(tmp_path / "r.html", users=users.drop(columns="serving_cell_id"), cells=cells, **kw)
    dup = cells.copy()
    dup["cell_id"] = ["a", "a", "b"]
    with pytest.raises(ValidationError, match="duplicate cell_id"):
        write_report(tmp_path / "r.html", users=users, cells=dup, **kw)
    with pytest.raises(ValidationError, match="geographic"):
        write_report(tmp_path / "r.html", users=users.to_crs(4326), cells=cells.to_crs(4326), **kw)
    with pytest.raises(ValidationError, match="differs"):
        write_report(tmp_path / "r.html", users=users.to_crs(32611), cells=cells, **kw)
    with pytest.raises(ValidationError, match="GeoDataFrame"):
        write_report(tmp_path / "r.html", users=pd.DataFrame(users), cells=cells, **kw)
    assert not (tmp_path / "r.html").exists()


def test_unknown_serving_cell_warns(tmp_path):
    users, cells = make_frames()
    users.loc[1, "serving_cell_id"] = "nope"
    with pytest.warns(UserWarning, match="not in cells.cell_id"):
        text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={},
                            figures={}).read_text("utf-8")
    assert scan(text).classes["assoc"] == users["serving_cell_id"].notna().sum() - 1


# ---------------------------------------------------------------------- in a browser
CHROMIUM = shutil.which("chromium")
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # any network fetch would fail
    "--window-size=1400,1000", "--virtual-time-budget=2000", "--enable-logging=stderr", "--v=0",
]


def _chromium(tmp_path, name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / ('profile-' + name)}",
                           *args], capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_renders_in_headless_chromium(page, tmp_path):
    pil = pytest.importorskip("PIL.Image")
    path, users, _ = page
    url = path.resolve().as_uri()
    start = time.perf_counter()
    dom = _chromium(tmp_path, "dom", "--dump-dom", url)
    png = tmp_path / "shot.png"
    shot = _chromium(tmp_path, "shot", f"--screenshot={png}", url)
    elapsed = time.perf_counter() - start
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert shot.returncode == 0, shot.stderr[-2000:]
    for run in (dom, shot):
        console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
        assert not [c for c in console if "Uncaught" in c or "Content Security Policy" in c
                    or "Failed to load" in c], console

    s = scan(dom.stdout)
    assert 'data-ready="1"' in dom.stdout  # the script ran to its end
    assert s.ids["map"] == 1
    assert s.classes["cell"] == N_CELLS and s.classes["user"] == N_USERS
    assert s.classes["assoc"] == users["serving_cell_id"].notna().sum()
    assert s.classes["summary-table"] == 2 and s.classes["figure"] == 2
    assert re.search(r'id="scale-label">\d+(\.\d+)? k?m<', dom.stdout)
    assert re.search(r'<svg id="map"[^>]*style="--k: ?[0-9.]+', dom.stdout)

    image = np.asarray(pil.open(png).convert("RGB"), dtype=float)
    assert image.shape == (1000, 1400, 3)
    colours = np.unique(image.reshape(-1, 3).astype(np.uint8), axis=0)
    assert len(colours) > 100, len(colours)
    assert image.std() > 15
    # the map's markers are drawn: some pixels have the tier colours
    for hex_colour in (report.TIER_COLORS["macro"], report.TIER_COLORS["pico"]):
        rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
        assert (np.abs(image - rgb).sum(axis=2) < 30).sum() > 20, hex_colour
    assert elapsed < 60
