"""cellopt: user association, bandwidth and power for cellular networks, with certified bounds."""

from cellopt import radio, topology
from cellopt.errors import ValidationError
from cellopt.linktable import LinkTable
from cellopt.network import Network

__version__ = "0.1.0"

__all__ = ["LinkTable", "Network", "ValidationError", "__version__", "radio", "topology"]
