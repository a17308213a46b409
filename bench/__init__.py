"""The benches: figures on synthetic brains and on a vault like people have, printed, never asserted.

They run from a source checkout (`cortex bench`, or `python -m bench.<module>` at the
checkout's top); the wheel carries none of them. They may import any Cortex module;
Cortex imports none of them, except `cortex bench`'s guarded import in the cli.
"""

__all__: list[str] = []
