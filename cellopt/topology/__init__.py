"""Topology builders: standard 3GPP layouts, real cell sites, femtocells and users."""

from cellopt.topology.hexgrid import add_picos, hex_grid
from cellopt.topology.users import drop_users

__all__ = ["add_picos", "drop_users", "hex_grid"]
