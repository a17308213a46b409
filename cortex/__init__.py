"""Cortex: a Git-backed, single-user brain of Markdown notes, served over MCP."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("cortex-brain")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0+unknown"
