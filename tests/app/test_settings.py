"""The settings: declared once, read and checked in one place, documented by the README's
table, which is generated from the declarations."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cortex.errors import BadInput
from cortex.settings import Settings, identity, read_setting, settings_table

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- settings-table:begin -->\n", "<!-- settings-table:end -->"


def declared() -> set[str]:
    return {n for f in Settings.__dataclass_fields__.values() for n in f.metadata["setting"].names}


def test_readme_table_is_the_generated_one():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    table = section.split(BEGIN, 1)[1].split(END, 1)[0]
    assert table == settings_table(), "README's settings table is stale: paste the output of `cortex settings`"


def test_every_variable_the_code_names_is_declared():
    named = {m for p in (ROOT / "cortex").rglob("*.py") for m in re.findall(r"\bCORTEX_[A-Z][A-Z_]*\b", p.read_text())}
    assert named <= declared(), f"read outside the settings: {sorted(named - declared())}"


def test_defaults_and_fallbacks():
    s = Settings.from_env({"CORTEX_HOME": "/tmp/h", "PORT": "9000", "GITHUB_TOKEN": "t", "CORTEX_MEANING": " OFF "})
    assert s.brain == Path("/tmp/h/brain") and s.port == 9000 and s.remote_token == "t" and s.meaning == "off"
    assert s.reader_timeout == 60 and s.build_workers is None and s.fetch_interval == 5.0
    assert Settings.from_env({"CORTEX_PORT": "8000", "PORT": "9000"}).port == 8000
    assert Settings.from_env({"CORTEX_ALLOWED_HOSTS": " a.example , ,b:* "}).allowed_hosts == ["a.example", "b:*"]
    # The command line's options win; None is "not given".
    s = Settings.from_env({"CORTEX_PORT": "abc", "CORTEX_HOST": "0.0.0.0"}, port=7000, host=None, brain="~/b")
    assert s.port == 7000 and s.host == "0.0.0.0" and s.brain == Path.home() / "b"


@pytest.mark.parametrize(
    "env,line",
    [
        ({"CORTEX_PORT": "abc"}, "CORTEX_PORT must be a whole number from 1 to 65535, not 'abc'"),
        ({"PORT": "70000"}, "PORT must be a whole number from 1 to 65535, not '70000'"),
        ({"CORTEX_BUILD_WORKERS": "0"}, "CORTEX_BUILD_WORKERS must be a whole number of at least 1, not '0'"),
        ({"CORTEX_ASK_SWEEP": "-1"}, "CORTEX_ASK_SWEEP must be a whole number of at least 0, not '-1'"),
        ({"CORTEX_FETCH_INTERVAL": "soon"}, "CORTEX_FETCH_INTERVAL must be a number of seconds above 0, not 'soon'"),
        ({"CORTEX_MEANING": "maybe"}, "CORTEX_MEANING must be on or off, not 'maybe'"),
        ({"CORTEX_READER": "me"}, "CORTEX_READER must be one of auto, server, client, offline, not 'me'"),
        ({"CORTEX_PERSIST_INDEX": "no"}, "CORTEX_PERSIST_INDEX must be on or off, not 'no'"),
        ({"CORTEX_INDEX": "Sometimes"}, "CORTEX_INDEX must be one of auto, on, off, not 'sometimes'"),
        (
            {"CORTEX_TZ": "Mars/Olympus"},
            "CORTEX_TZ must be a time zone zoneinfo knows, such as Europe/Paris, not 'Mars/Olympus'",
        ),
        (
            {"CORTEX_TZ": "../etc/passwd"},
            "CORTEX_TZ must be a time zone zoneinfo knows, such as Europe/Paris, not '../etc/passwd'",
        ),
        ({"CORTEX_AUTHOR": "Ada"}, "CORTEX_AUTHOR must look like 'Name <email>', not 'Ada'"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable(env, line):
    with pytest.raises(BadInput) as refused:
        Settings.from_env(env)
    assert str(refused.value) == line


def test_checked_values_reach_the_brain_and_the_store_as_read():
    s = Settings.from_env({"CORTEX_TZ": "Europe/Paris", "CORTEX_INDEX": " ON ", "CORTEX_AUTHOR": "Ada L <a@b.org>"})
    assert s.tz == "Europe/Paris" and s.index == "on" and s.author == "Ada L <a@b.org>"
    assert identity("CORTEX_AUTHOR", s.author) == ("Ada L", "a@b.org")
    # Values given in code (the command line's, a test's) are read by the same rules.
    with pytest.raises(BadInput, match="^CORTEX_TZ must be a time zone"):
        Settings.from_env({}, tz="Mars/Olympus")


def test_an_unknown_override_is_a_type_error_not_a_stray_attribute():
    with pytest.raises(TypeError, match="unexpected keyword argument 'brian'"):
        Settings.from_env({}, brian="/x")
    assert Settings.from_env({}, brain="/x").brain == Path("/x")


def test_one_setting_alone():
    assert read_setting("template", {"CORTEX_TEMPLATE": "/t"}) == Path("/t")
    assert read_setting("template", {}) is None and read_setting("port", {}) == 8765


@pytest.mark.parametrize(
    "name,value,line",
    [
        ("CORTEX_PORT", "abc", "CORTEX_PORT must be a whole number from 1 to 65535, not 'abc'"),
        (
            "CORTEX_TZ",
            "Mars/Olympus",
            "CORTEX_TZ must be a time zone zoneinfo knows, such as Europe/Paris, not 'Mars/Olympus'",
        ),
        ("CORTEX_INDEX", "sometimes", "CORTEX_INDEX must be one of auto, on, off, not 'sometimes'"),
    ],
)
def test_cortex_serve_with_a_bad_value_says_so_in_one_line(tmp_path: Path, name, value, line):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "PORT"))}
    env.update({"CORTEX_HOME": str(tmp_path / "state"), name: value})
    run = subprocess.run(
        [sys.executable, "-m", "cortex.cli", "serve"], env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 1
    assert run.stderr == f"cortex serve: {line}\n"
    assert run.stdout == "" and not (tmp_path / "state").exists()


def test_cortex_settings_prints_the_table(capsys):
    from cortex.cli import main

    assert main(["settings"]) == 0
    assert capsys.readouterr().out == settings_table()
