# The README's commands live here so CI and people run exactly the same thing.
PY ?= python3

.PHONY: serve test

# Quick start 1: install and serve the embedded default brain. Without redis-server
# (no root, no sudo) it still serves; only the guest door is disabled, and says so.
serve:
	-bash ops/system-deps.sh
	$(PY) -m pip install -q -e .
	cortex serve

# Quick start 2: install what the tests need (Python deps, redis-server, Chromium) and run them all.
test:
	bash ops/system-deps.sh --tests
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m pytest
