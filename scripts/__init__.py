"""p4scope: a P4 programmable-switch in-network telemetry testbed.

The package's parts are the repository's top-level folders: this folder
(scripts/) holds the entry points, `p4scope.compiler` is compiler/.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("p4scope")  # pyproject.toml's, as installed
except PackageNotFoundError:  # run from a tree that was never installed
    __version__ = "0+unknown"
