"""Sectorized sites: give omni sites of real data a standard 3-sector layout."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cellopt.checks import check_count, check_number, check_real
from cellopt.errors import ValidationError, check_memory
from cellopt.network import CELL_BYTES, Network

__all__ = ["sectorize"]


def sectorize(network: Network, sectors: int = 3, first_azimuth_deg: float = 30.0,
              antenna_gain_dbi: float = 14.0) -> Network:
    """Replace the cells of every site without azimuths by `sectors` sectors.

    Real cell lists (OpenCelliD) give measured cells at their site's position but no
    antenna directions. A site none of whose cells has an ``azimuth_deg`` gets
    `sectors` new cells at its position with boresights ``first_azimuth_deg + k ·
    360° / sectors`` (30°, 150°, 270° by default, as :func:`~cellopt.topology.hex_grid`)
    and the 3GPP sector antenna gain; the other columns are copied from the site's first
    cell. Sites with at least one azimuth keep their cells as they are.

    Parameters
    ----------
    network : Network
    sectors : int
        Sectors per site (≥ 1).
    first_azimuth_deg : float
        Boresight of sector 0 [degrees clockwise from north].
    antenna_gain_dbi : float
        Boresight gain of the new sectors [dBi] (TR 36.814: 14 dBi).

    Returns
    -------
    Network
        New cells get ``cell_id`` ``'{site_id}-s{k}'``; users are kept.

    Raises
    ------
    ValidationError
        `sectors` not a whole number ≥ 1, a non-finite `first_azimuth_deg`, or an
        antenna gain out of its possible range (outside the usual range it warns).
    ResourceLimitError
        When the new sectors would not fit in memory.
    """
    if not isinstance(network, Network):
        raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt Network")
    sectors = check_count(sectors, "sectors", fix="a whole number ≥ 1", minimum=1)
    first_azimuth_deg = check_number(first_azimuth_deg, "first_azimuth_deg", unit="deg",
                                     fix="give a finite bearing in degrees clockwise from north")
    antenna_gain_dbi = check_real(antenna_gain_dbi, "antenna_gain_dbi")
    cells = network.cells
    omni_site = cells["azimuth_deg"].isna().groupby(cells["site_id"]).transform("all").to_numpy()
    first = ~cells["site_id"].duplicated().to_numpy()
    base = cells[omni_site & first]
    check_memory(float(len(base)) * sectors * CELL_BYTES + network.n_cells * CELL_BYTES,
                 f"sectorize: {len(base):,} sites × sectors={sectors:,}", "use fewer sectors")
    k = np.tile(np.arange(sectors), len(base))
    new = base.loc[base.index.repeat(sectors)].copy()
    new["azimuth_deg"] = (first_azimuth_deg + k * 360.0 / sectors) % 360.0
    new["antenna_gain_dbi"] = antenna_gain_dbi
    new["cell_id"] = (new["site_id"].astype(str) + "-s").to_numpy() + k.astype(str).astype(object)
    out = pd.concat([cells[~omni_site], new], ignore_index=True)
    out["cell_id"] = out["cell_id"].astype(str)
    return network.replace(cells=out.set_crs(cells.crs, allow_override=True)).validate()
