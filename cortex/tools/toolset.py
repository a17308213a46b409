"""The trusted tool set over one brain (`Tools`): what every owner tool's handler works on,
the brain, the asker, the working state, and what search keeps between calls (the name
map and the filters' verdicts). Each tool is its own module under `cortex/tools/`; this
holds only their shared parts and knows nothing of HTTP or MCP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cortex.brain.brain import Brain
from cortex.brain.working_state import Working
from cortex.index.name_map import NameMap

if TYPE_CHECKING:
    import numpy as np

    from cortex.ask.asker import Asker

__all__ = ["Tools"]


class Tools:
    """The trusted tool set over one brain."""

    def __init__(self, brain: Brain, asker: Asker):
        self.brain = brain
        self.working = Working(brain)
        self.asker = asker
        self.names = NameMap()  # names first: exact titles, aliases and file names, by head
        self.masks: dict[tuple, np.ndarray] = {}  # search filters' verdicts for the meaning arm
