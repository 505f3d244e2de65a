import dataclasses
import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import shapely
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgba

import cellopt
from cellopt import radio, topology
from cellopt.errors import ValidationError
from cellopt.plotting import (
    TIER_COLORS,
    UNSERVED_COLOR,
    plot_convergence,
    plot_gain_curve,
    plot_network,
    plot_rate_cdf,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _polys(ax):
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


@pytest.fixture(scope="module")
def solutions():
    rng = np.random.default_rng(0)
    n = 10
    user, cell = np.repeat(np.arange(n), 2), np.tile([0, 1], n)
    problem = cellopt.Problem.from_links(user, cell, rng.uniform(1, 10, 2 * n), n_users=n,
                                         n_cells=2, rsrp_dbm=rng.uniform(-110, -70, 2 * n))
    return {m: cellopt.solve(problem, m) for m in ("alm", "max_rsrp")}


# ---------------------------------------------------------------------- rate CDF
def test_rate_cdf_one_monotone_line_per_method_ending_at_one():
    rng = np.random.default_rng(1)
    rates = {"a": rng.lognormal(0, 1, 50), "b": rng.lognormal(1, 1, 30)}
    ax = plot_rate_cdf(rates)
    assert isinstance(ax, Axes)
    assert len(ax.lines) == 2
    assert ax.get_xscale() == "log"
    for line in ax.lines:
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        assert y[0] == 0.0 and y[-1] == pytest.approx(1.0)
        assert np.all(np.diff(y) >= 0) and np.all(np.diff(x) >= 0)
    assert "[Mbit/s]" in ax.get_xlabel() and ax.get_ylabel() == "CDF"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("a") and labels[1].startswith("b")


def test_rate_cdf_percentile_markers_lie_on_the_curve():
    r = np.arange(1.0, 101.0)
    ax = plot_rate_cdf({"m": r}, percentiles=(5, 50))
    offsets = ax.collections[-1].get_offsets()
    np.testing.assert_allclose(offsets, [[5.0, 0.05], [50.0, 0.5]])
    assert len(ax.lines) == 1
    assert len(plot_rate_cdf({"m": r}, percentiles=()).collections) == 0


def test_rate_cdf_zero_rates_drawn_at_left_edge():
    r = np.array([0.0, 0.0, 0.5, 2.0, 8.0])
    ax = plot_rate_cdf({"m": r, "all zero": np.zeros(3)})
    ax.figure.canvas.draw()  # must not fail on the log scale
    left = ax.get_xlim()[0]
    assert 0 < left < 0.5
    x = np.asarray(ax.lines[0].get_xdata(), float)
    assert np.all(x > 0) and x[0] == pytest.approx(left)
    assert "40% at 0" in ax.get_legend().get_texts()[0].get_text()


def test_rate_cdf_linear_and_given_ax():
    _, ax0 = plt.subplots()
    ax = plot_rate_cdf({"m": np.array([0.0, 1.0, 2.0])}, ax0, log_x=False)
    assert ax is ax0 and ax.get_xscale() == "linear"
    assert ax.lines[0].get_xdata()[0] == 0.0


# ---------------------------------------------------------------------- gain curve
def test_gain_curve_single_drop_has_no_band():
    x = np.array([1.0, 2.0, 4.0])
    ax = plot_gain_curve(x, {"alm": np.array([1.1, 1.2, 1.3]), "dual": np.ones(3)},
                         xlabel="users per cell [-]")
    assert isinstance(ax, Axes)
    assert len(ax.lines) == 2 and not _polys(ax)
    assert ax.get_xlabel() == "users per cell [-]" and ax.get_ylabel() == "gain over max-RSRP"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["alm", "dual"]


def test_gain_curve_band_for_several_drops():
    rng = np.random.default_rng(2)
    x = np.linspace(100, 500, 5)
    g = 1.2 + 0.1 * rng.standard_normal((20, 5))
    _, ax0 = plt.subplots()
    ax = plot_gain_curve(x, {"alm": g, "single": g[0]}, ax0, xlabel="ISD [m]",
                         ylabel="5th-percentile gain [%]", band=0.9)
    assert ax is ax0
    assert len(ax.lines) == 2 and len(_polys(ax)) == 1
    np.testing.assert_allclose(ax.lines[0].get_ydata(), g.mean(axis=0))
    half = 1.6448536 * g.std(axis=0, ddof=1) / np.sqrt(20)
    verts = _polys(ax)[0].get_paths()[0].vertices
    assert verts[:, 1].max() == pytest.approx((g.mean(axis=0) + half).max())
    assert verts[:, 1].min() == pytest.approx((g.mean(axis=0) - half).min())


def test_gain_curve_shape_mismatch():
    with pytest.raises(ValueError, match="expected shape"):
        plot_gain_curve([1, 2, 3], {"a": np.ones((4, 2))}, xlabel="x [-]")


# ---------------------------------------------------------------------- convergence
def test_convergence_two_lines_per_method_with_bound(solutions):
    ax = plot_convergence(solutions)
    assert isinstance(ax, Axes)
    assert len(ax.lines) == 4
    obj, ub = ax.lines[0], ax.lines[1]
    assert obj.get_linestyle() == "-" and ub.get_linestyle() == "--"
    assert obj.get_color() == ub.get_color()
    assert ax.lines[2].get_color() != obj.get_color()
    np.testing.assert_allclose(obj.get_ydata(), solutions["alm"].history["objective"])
    assert ax.get_xlabel() == "iteration" and "[utility]" in ax.get_ylabel()
    assert "alm objective" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_convergence_single_solution_and_missing_bound(solutions):
    _, ax0 = plt.subplots()
    ax = plot_convergence(solutions["alm"], ax0)
    assert ax is ax0 and len(ax.lines) == 2
    assert ax.get_legend().get_texts()[0].get_text() == "alm objective"

    sol = solutions["alm"]
    no_col = _with_history(sol, sol.history.drop(columns="upper_bound"))
    nan_col = _with_history(sol, sol.history.assign(upper_bound=np.nan))
    ax = plot_convergence({"no column": no_col, "nan": nan_col})
    assert len(ax.lines) == 2
    assert all(line.get_linestyle() == "-" for line in ax.lines)


def _with_history(sol, history: pd.DataFrame):
    return dataclasses.replace(sol, history=history)


# ---------------------------------------------------------------------- network map
def test_network_with_sinr_map_has_colorbar():
    net = topology.drop_users(topology.hex_grid(1), 20, rng=0)
    x0, y0, x1, y1 = net.cells.total_bounds
    x_m, y_m = np.linspace(x0, x1, 6), np.linspace(y0, y1, 4)
    sinr = np.add.outer(np.arange(4.0), np.arange(6.0))
    sinr[0, 0] = -np.inf
    ax = plot_network(net, sinr_map_db=(x_m, y_m, sinr))
    assert len(ax.figure.axes) == 2
    assert ax.figure.axes[1].get_ylabel() == "SINR [dB]"
    assert ax.collections[0].get_zorder() < min(c.get_zorder() for c in ax.collections[1:])
    ax.figure.canvas.draw()


def test_network_without_sinr_map_unchanged():
    net = topology.drop_users(topology.hex_grid(1), 20, rng=0)
    _, ax0 = plt.subplots()
    ax = plot_network(net, ax0)
    assert ax is ax0 and len(ax.figure.axes) == 1
    assert "[m]" in ax.get_xlabel() and "[m]" in ax.get_ylabel()


def test_network_sinr_map_shape_checked():
    net = topology.hex_grid(1)
    with pytest.raises(ValueError, match="sinr_map_db"):
        plot_network(net, sinr_map_db=(np.arange(3.0), np.arange(2.0), np.zeros((3, 2))))


# ---------------------------------------------------------------------- readability
@pytest.fixture(scope="module")
def hetnet():
    net = topology.add_picos(topology.hex_grid(1), per_sector=1, rng=1)
    net = topology.drop_users(net, 120, clustered_fraction=0.5, rng=2)
    serving = radio.link_table(net, n_candidates=4, rng=3).best_by("rsrp_dbm")
    serving[:5] = -1  # a few users in outage
    return net, serving


def _users(ax):
    (dots,) = [c for c in ax.collections if c.get_gid() == "users"]
    return dots


def _disjoint(a, b):
    """Whether display-space boxes `a` and `b` do not overlap (touching edges allowed)."""
    return a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0


def _assert_legend_outside(ax, others=()):
    fig = ax.figure
    fig.canvas.draw()
    leg = ax.get_legend().get_window_extent()
    assert _disjoint(leg, ax.get_window_extent())
    for other in others:
        assert _disjoint(leg, other.get_window_extent())
    # Not cut when saved without bbox_inches="tight": the legend lies inside the figure.
    fb = fig.bbox
    assert fb.x0 <= leg.x0 and leg.x1 <= fb.x1 and fb.y0 <= leg.y0 and leg.y1 <= fb.y1


def test_network_users_coloured_by_serving_tier(hetnet):
    net, serving = hetnet
    ax = plot_network(net, serving_cell=serving)
    tiers = net.cells["tier"].to_numpy()
    assert {"macro", "pico"} <= set(tiers[serving[serving >= 0]])
    expected = np.array([to_rgba(TIER_COLORS[tiers[s]]) if s >= 0 else to_rgba(UNSERVED_COLOR)
                         for s in serving])
    np.testing.assert_allclose(_users(ax).get_facecolors(), expected)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"macro cell", "pico cell", "user served by macro", "user served by pico",
            "user not served"} <= set(labels)


def test_network_association_lines_coloured_like_users(hetnet):
    net, serving = hetnet
    ax = plot_network(net, serving_cell=serving, association_lines=True)
    (lines,) = [c for c in ax.collections if type(c).__name__ == "LineCollection"]
    user_rgba = _users(ax).get_facecolors()[serving >= 0]
    line_rgba = lines.get_colors()
    assert len(line_rgba) == int((serving >= 0).sum())
    np.testing.assert_allclose(line_rgba[:, :3], user_rgba[:, :3])
    assert np.all(line_rgba[:, 3] < 0.5)  # transparent


def test_network_color_by_load_has_colorbar(hetnet):
    net, serving = hetnet
    load = np.linspace(0.0, 1.0, net.n_cells)
    ax = plot_network(net, serving_cell=serving, color_by="load", cell_load=load)
    assert len(ax.figure.axes) == 2
    assert ax.figure.axes[1].get_ylabel() == "cell load (airtime share)"
    rgba = _users(ax).get_facecolors()
    served = serving >= 0
    # Users share their cell's colour: same cell, same colour; the grey of outage otherwise.
    lo, hi = serving[served].min(), serving[served].max()
    assert not np.allclose(rgba[serving == lo][0], rgba[serving == hi][0])
    np.testing.assert_allclose(rgba[~served], np.tile(to_rgba(UNSERVED_COLOR), ((~served).sum(), 1)))
    _assert_legend_outside(ax, [ax.figure.axes[1]])


def test_network_color_by_cell_keeps_per_cell_colours(hetnet):
    net, serving = hetnet
    ax = plot_network(net, serving_cell=serving, color_by="cell")
    served = serving >= 0
    np.testing.assert_allclose(_users(ax).get_facecolors()[served],
                               plt.get_cmap("tab20")(serving[served] % 20))


def test_network_guard_band_users_faded(hetnet):
    net, serving = hetnet
    x0, y0, x1, y1 = net.cells.total_bounds
    net = net.replace(study_area=shapely.box(x0, y0, (x0 + x1) / 2, y1))
    inside = net.in_study_area()
    assert inside.any() and (~inside).any()
    alpha = _users(plot_network(net, serving_cell=serving)).get_facecolors()[:, 3]
    assert np.all(alpha[inside] == 1.0) and np.all(alpha[~inside] < 0.5)


def test_network_legend_outside_axes(hetnet):
    net, serving = hetnet
    _assert_legend_outside(plot_network(net, serving_cell=serving))
    x0, y0, x1, y1 = net.cells.total_bounds
    sinr = (np.linspace(x0, x1, 5), np.linspace(y0, y1, 4), np.zeros((4, 5)))
    ax = plot_network(net, serving_cell=serving, sinr_map_db=sinr, color_by="load",
                      cell_load=np.full(net.n_cells, 0.5))
    assert len(ax.figure.axes) == 3
    _assert_legend_outside(ax, ax.figure.axes[1:])  # beyond both colorbars
    # Saved with and without bbox_inches="tight".
    for kw in ({}, {"bbox_inches": "tight"}):
        ax.figure.savefig(io.BytesIO(), format="png", **kw)


def test_network_bad_arguments(hetnet):
    net, serving = hetnet
    with pytest.raises(ValidationError, match="color_by"):
        plot_network(net, serving_cell=serving, color_by="colour")
    with pytest.raises(ValidationError, match="cell_load"):
        plot_network(net, serving_cell=serving, color_by="load")
    with pytest.raises(ValidationError, match="cell_load"):
        plot_network(net, serving_cell=serving, color_by="load", cell_load=np.ones(3))
    with pytest.raises(ValidationError, match="cell_load"):
        plot_network(net, serving_cell=serving, cell_load=np.ones(net.n_cells))
    with pytest.raises(ValidationError, match="serving_cell"):
        plot_network(net, serving_cell=serving[:-1])
    with pytest.raises(ValidationError, match="serving_cell"):
        plot_network(net, serving_cell=np.full(net.n_users, net.n_cells))


def test_rate_cdf_identical_curves_distinguishable():
    rng = np.random.default_rng(3)
    r = rng.lognormal(0, 1, 200)
    ax = plot_rate_cdf({"max-RSRP": r, "RE 0 dB": rng.permutation(r) * (1 + 1e-12),
                        "other": 2 * r})
    first, dup, _ = ax.lines
    styles = [line.get_linestyle() for line in ax.lines]
    assert len(set(styles)) == 3
    assert dup.get_linestyle() == "--" and dup.get_zorder() > first.get_zorder()
    assert first.get_marker() != dup.get_marker() and first.get_markevery() != dup.get_markevery()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[1] == "RE 0 dB (= max-RSRP)"
    assert "(=" not in labels[0] and "(=" not in labels[2]
    np.testing.assert_allclose(dup.get_ydata(), first.get_ydata())


def test_rate_cdf_different_curves_not_marked_identical():
    r = np.arange(1.0, 51.0)
    ax = plot_rate_cdf({"a": r, "b": r * (1 + 1e-6), "c": r[:-1]})
    assert not any("(=" in t.get_text() for t in ax.get_legend().get_texts())


def test_rate_cdf_legend_outside_axes():
    rng = np.random.default_rng(4)
    ax = plot_rate_cdf({f"method {k}": rng.lognormal(k, 1, 100) for k in range(5)})
    _assert_legend_outside(ax)


def test_gain_curve_and_convergence_legend_outside(solutions):
    ax = plot_gain_curve(np.arange(3.0), {"a": np.ones(3), "b": np.arange(3.0)}, xlabel="x [-]")
    _assert_legend_outside(ax)
    _assert_legend_outside(plot_convergence(solutions))


def test_network_boresight_ticks_in_metres_when_given():
    from matplotlib.quiver import Quiver

    net = topology.hex_grid(1)
    ax = plot_network(net, sector_length_m=100.0)
    (q,) = [c for c in ax.collections if isinstance(c, Quiver)]
    np.testing.assert_allclose(np.hypot(q.U, q.V), 100.0)
    (q,) = [c for c in plot_network(net).collections if isinstance(c, Quiver)]
    assert q.scale_units == "inches"  # default: a fixed length on the page
