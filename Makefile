# The README's commands live here so CI and people run exactly the same thing.
PY ?= python3

.PHONY: install serve test

install:
	$(PY) -m pip install -q -e '.[test]'

# Quick start 1: install and serve the embedded default brain.
serve: install
	cortex serve

# Quick start 2: install what the tests need (Python deps, redis-server) and run them all.
test:
	bash ops/test-deps.sh
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m pytest
