"""The distribution's name and metadata: a name nobody else publishes, the `cortex` command,
complete wheel metadata, `cortex --version`, and the README's install line naming it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import cortex
from cortex.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_distribution_is_not_the_name_another_project_publishes():
    assert PROJECT["name"] == cortex.DISTRIBUTION == "cortex-git-brain"
    assert PROJECT["scripts"] == {"cortex": "cortex.cli:main"}


def test_the_wheel_metadata_is_complete():
    assert PROJECT["license"] and (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert {"Homepage", "Source", "Issues", "Documentation"} <= set(PROJECT["urls"])
    classifiers = PROJECT["classifiers"]
    assert "License :: OSI Approved :: MIT License" in classifiers
    assert any(c.startswith("Development Status ::") for c in classifiers)
    assert any(c == "Programming Language :: Python :: 3.11" for c in classifiers)
    # The version is kept once, in cortex/__init__.py, and read by the build.
    assert PROJECT["dynamic"] == ["version"] and "version" not in PROJECT


def test_cortex_version_prints_the_version(capsys):
    try:
        main(["--version"])
    except SystemExit as exc:
        assert exc.code == 0
    assert capsys.readouterr().out.strip() == f"cortex {cortex.__version__} (cortex-git-brain)"
    done = subprocess.run([sys.executable, "-m", "cortex.cli", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and cortex.__version__ in done.stdout


def test_the_readme_installs_the_distribution_by_its_name():
    readme = (ROOT / "README.md").read_text()
    assert "pipx install cortex-git-brain" in readme and "pip install cortex-git-brain" in readme
    assert "install cortex-brain" not in readme
