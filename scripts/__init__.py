"""p4scope: a P4 programmable-switch in-network telemetry testbed.

The package's parts are the repository's top-level folders: this folder
(scripts/) holds the entry points, `p4scope.compiler` is compiler/.
"""

__version__ = "0.1.0"
