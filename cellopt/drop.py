"""The one bridge from a network to a problem and back to tables: :class:`Drop`.

A drop is a network, the link table of its users and the association problem of the
users that have a usable link. Users without one (outage) are left out of the problem
and come back, at rate 0, in every table: :meth:`Drop.frames` is the only way from a
:class:`~cellopt.solution.Solution` to per-user and per-cell tables, whether the drop was
built by hand (:meth:`Drop.from_network`) or from a scenario file.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd

from cellopt.errors import ValidationError
from cellopt.linktable import LinkTable
from cellopt.load_coupling import LoadCoupling, solve_load_coupled
from cellopt.network import Network
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers import solve
from cellopt.solvers.registry import method_info

__all__ = ["Drop"]


@dataclasses.dataclass(frozen=True, eq=False)
class Drop:
    """What a scenario builds for one draw, and the map from a solution back to its rows.

    The problem holds the *solvable* users only (those with a usable link, in network
    order); users in outage are left out of it and count with rate 0.
    :meth:`per_user` and :meth:`frames` spread a solution's per-user values back over
    every user of the network.

    Attributes
    ----------
    network : Network
        All cells and all dropped users.
    links : LinkTable
        The links of every user of `network`.
    problem : Problem
        The association problem of the solvable users.
    solvable : ndarray of bool, shape (n_users,)
        Users with a usable link (``links.users_with_rate()``).
    in_study_area : ndarray of bool, shape (n_users,)
        Users counted in statistics (``network.in_study_area()``; False in a guard band).
    seed : int or None
        The build seed (None for a drop built by hand).
    coupling : LoadCoupling or None
        With ``[problem] interference = "load_coupled"``: the link rates as functions of
        the cells' loads (:class:`~cellopt.load_coupling.LoadCoupling`); :meth:`solve`
        then iterates the loads. None: every cell interferes at full power.
    """

    network: Network
    links: LinkTable
    problem: Problem
    solvable: np.ndarray
    in_study_area: np.ndarray
    seed: int | None = None
    coupling: LoadCoupling | None = None

    def solve(self, method: str = "alm", **options: Any) -> Solution:
        """Solve :attr:`problem` with `method`, load-coupled if the drop has a coupling.

        Without :attr:`coupling` (full-buffer interference, the default) this is exactly
        ``cellopt.solve(drop.problem, method, **options)``; with one it is
        :func:`~cellopt.load_coupling.solve_load_coupled`. A method that runs on a cluster
        (``dual_dask``) gets the users' positions, to split them by region.
        """
        if "user_xy_m" in method_info(method).options and not {"part", "user_xy_m"} & set(options):
            users = self.network.users[self.solvable]  # a cluster method splits them by region
            options = {**options, "user_xy_m": np.column_stack([users.geometry.x, users.geometry.y])}
        if self.coupling is None:
            return solve(self.problem, method=method, **options)
        return solve_load_coupled(self.problem, self.coupling, method, **options)

    @classmethod
    def from_network(cls, network: Network, links: LinkTable, *, seed: int | None = None,
                     **problem_options: Any) -> Drop:
        """The drop of a network built by hand: its problem leaves out users in outage.

        Parameters
        ----------
        network : Network
        links : LinkTable
            Of every user of `network` (:func:`cellopt.radio.link_table`).
        seed : int, optional
            Recorded only.
        **problem_options
            Passed to :meth:`cellopt.Problem.from_network` (``alpha``, overrides).
        """
        solvable = links.users_with_rate()
        served = network.replace(users=network.users[solvable].reset_index(drop=True))
        problem = Problem.from_network(served, links.select_users(solvable), **problem_options)
        return cls(network=network, links=links, problem=problem, solvable=solvable,
                   in_study_area=network.in_study_area(), seed=seed)

    def per_user(self, values: np.ndarray, fill: float = 0.0) -> np.ndarray:
        """Values of the solvable users spread over all users, `fill` for the others.

        Parameters
        ----------
        values : ndarray, shape (problem.n_users,)
            E.g. ``solution.user_rate_mbps`` or ``solution.serving_cell`` (fill −1).

        Returns
        -------
        ndarray, shape (network.n_users,)
        """
        values = np.asarray(values)
        if values.shape != (self.problem.n_users,):
            raise ValidationError(f"per_user got {values.shape[0] if values.ndim else 0} values, the "
                                  f"drop has {self.problem.n_users} solvable users; fix: pass a "
                                  "per-user array of a solution of this drop's problem")
        out = np.full(self.network.n_users, fill, dtype=np.result_type(values, fill))
        out[self.solvable] = values
        return out

    def frames(self, solution: Solution) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame]:
        """Per-user and per-cell tables of `solution`, one row per network user and cell.

        Parameters
        ----------
        solution : Solution
            A solution of :attr:`problem`.

        Returns
        -------
        users : geopandas.GeoDataFrame
            The network's user columns and ``in_study_area``, ``usable``,
            ``serving_cell_id`` (the cell carrying most of the user's rate; missing when
            none), ``serving_tier`` (``"none"`` when none), ``n_serving_cells``,
            ``airtime_share`` (the user's share of its cells' time-frequency resources,
            summed over them), ``sinr_db`` (of the link carrying most of its rate; NaN
            when none), ``rate_mbps`` (0 in outage).
        cells : geopandas.GeoDataFrame
            The network's cell columns and ``load`` (share of the cell's time-frequency
            resources in use, 0–1), ``n_users`` (users it serves most), ``traffic_mbps``,
            ``backhaul_use`` (traffic over backhaul capacity; 0 for unlimited backhaul),
            ``payment`` (what the cell's owner is paid, in utility units).
        """
        columns = self.user_columns(solution)
        return self.user_frame(columns), self.cell_frame(solution, columns)

    def user_columns(self, solution: Solution) -> dict[str, np.ndarray]:
        """The per-user result columns of :meth:`frames` as arrays over every network user.

        Returns
        -------
        dict of str to ndarray, each of shape (network.n_users,)
            ``in_study_area, usable, serving_cell_id, serving_tier, n_serving_cells,
            airtime_share, sinr_db, rate_mbps`` (``serving_cell_id`` a pandas array with
            <NA> for none when the ids are integers), and ``serving_cell`` (the serving
            cell's row, −1 for none; not a column of the tables).
        """
        p, net = self.problem, self.network
        if len(solution.x) != p.n_links or len(solution.user_rate_mbps) != p.n_users:
            raise ValidationError(f"the solution has {len(solution.x)} links and "
                                  f"{len(solution.user_rate_mbps)} users, this drop's problem "
                                  f"{p.n_links} and {p.n_users}; fix: pass a solution of drop.problem")
        if solution.load_coupling is not None:  # the rates and SINRs at the solution's loads
            p = p.replace(rate_mbps=solution.load_coupling["rate_mbps"],
                          sinr_db=solution.load_coupling["sinr_db"])
        band_share = self.links.resource_mhz / self.links.resource_mhz.sum()  # (n_resources,)
        carried = solution.x * p.rate_mbps
        # the link carrying most of each user's rate: sort by user, then by carried rate
        order = np.lexsort((-carried, p.user))
        first = order[np.r_[True, p.user[order][1:] != p.user[order][:-1]]] if p.n_links else order
        top = np.full(p.n_users, -1)
        top[p.user[first]] = np.where(carried[first] > 0, first, -1)
        sinr = np.full(p.n_users, np.nan)
        if p.sinr_db is not None:
            sinr[top >= 0] = p.sinr_db[top[top >= 0]]
        used = solution.x > 1e-9
        pairs = np.unique(p.user[used].astype(np.int64) * p.n_cells + p.cell[used])
        n_cells_used = np.bincount(pairs // p.n_cells, minlength=p.n_users)
        airtime = np.bincount(p.user, weights=solution.x * band_share[p.resource], minlength=p.n_users)

        serving = self.per_user(solution.serving_cell, fill=-1)
        cell_ids = net.cells["cell_id"].to_numpy()
        tiers = net.cells["tier"].to_numpy()
        serving_id = pd.Series(cell_ids[np.maximum(serving, 0)])
        if serving_id.dtype.kind in "iu":  # integer ids stay integers, with <NA> for none
            serving_id = serving_id.astype("Int64")
        return {
            "in_study_area": self.in_study_area,
            "usable": self.solvable,
            "serving_cell_id": serving_id.where(serving >= 0).array,
            "serving_tier": np.where(serving >= 0, tiers[np.maximum(serving, 0)], "none"),
            "n_serving_cells": self.per_user(n_cells_used, fill=0),
            "airtime_share": self.per_user(airtime),
            "sinr_db": self.per_user(sinr, fill=np.nan),
            "rate_mbps": self.per_user(solution.user_rate_mbps),
            "serving_cell": serving,
        }

    def user_frame(self, columns: dict[str, np.ndarray], rows: np.ndarray | slice | None = None
                   ) -> gpd.GeoDataFrame:
        """The per-user table of :meth:`frames` from :meth:`user_columns`, for some rows.

        Parameters
        ----------
        columns : dict
            :meth:`user_columns` of a solution.
        rows : slice or ndarray of int, optional
            Network user rows (default all): large runs write their tables a slice at a
            time, so that no table of every user is held twice.
        """
        rows = slice(None) if rows is None else rows
        users = self.network.users.iloc[rows].reset_index(drop=True).copy()
        for name, values in columns.items():
            if name != "serving_cell":
                users[name] = values[rows]
        return users

    def cell_frame(self, solution: Solution, columns: dict[str, np.ndarray]) -> gpd.GeoDataFrame:
        """The per-cell table of :meth:`frames`."""
        net = self.network
        band_share = self.links.resource_mhz / self.links.resource_mhz.sum()
        serving = columns["serving_cell"]
        cells = net.cells.reset_index(drop=True).copy()
        cells["load"] = solution.cell_airtime @ band_share
        cells["n_users"] = np.bincount(serving[serving >= 0], minlength=net.n_cells)
        cells["traffic_mbps"] = solution.cell_traffic_mbps
        cap = cells["backhaul_mbps"].to_numpy(float)
        cells["backhaul_use"] = np.where(np.isfinite(cap), solution.cell_traffic_mbps
                                         / np.where(cap > 0, cap, np.inf), 0.0)
        cells["payment"] = (np.zeros(net.n_cells) if solution.cell_payment is None
                            else solution.cell_payment)
        return cells
