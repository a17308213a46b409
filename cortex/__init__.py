"""Cortex: a Git-backed, single-user brain of Markdown notes, served over MCP.

The distribution is `cortex-git-brain` (`cortex-brain` on the package index is another
project's); the command and the import name stay `cortex`. The version is kept here, once:
the wheel's metadata reads it (pyproject's `dynamic`), so a checkout that was never
installed prints the same version as the wheel.
"""

__all__ = ["DISTRIBUTION", "__version__"]

DISTRIBUTION = "cortex-git-brain"
__version__ = "0.1.0"
