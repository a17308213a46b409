"""Cortex: a Git-backed, single-user brain of Markdown notes, served over MCP."""

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("cortex-brain")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0+unknown"
