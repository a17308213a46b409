"""Shared fixtures: real Git repositories in temp folders and a real server on an ephemeral
port (the helpers they use, and tests import, are in serverkit.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from serverkit import RunningServer, make_settings

from cortex.app.brain_setup import init_brain
from cortex.app.server import assemble, make_app

# The test kits' fixtures (a real Redis, a settable clock, a guest server, the reader stub,
# the embedding model, Chromium, a brain with a working tree and its watcher), registered here so a test names them without importing.
pytest_plugins = ["guestkit", "readerkit", "meaningkit", "browserkit", "watcherkit"]


@pytest.fixture
def brain_path(tmp_path: Path) -> Path:
    path = tmp_path / "brain.git"
    init_brain(path, bare=True)
    return path


@pytest.fixture
def server(tmp_path: Path, brain_path: Path):
    parts = assemble(make_settings(tmp_path, brain_path))
    with RunningServer(make_app(parts), parts.settings) as running:
        running.parts = parts
        yield running
