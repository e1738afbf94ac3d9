"""The docs are true: generated tables match the code, result blocks match their commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from card_envs.core.doctables import current_block, page_path, result_blocks, run_command, tables
from tests.conftest import ENV_NAMES

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = [
    "## Rules",
    "## Actions and observations",
    "## Rewards",
    "## Variants",
    "## Agents",
    "## Version history",
]


@pytest.mark.parametrize("name", ENV_NAMES)
def test_every_game_has_a_page_with_every_section(name):
    text = page_path(name).read_text()
    for heading in SECTIONS:
        assert heading in text, f"{page_path(name)} lacks {heading}"
    assert f"`{name}`" in text.split("\n")[0]


@pytest.mark.parametrize("name", ENV_NAMES)
def test_action_and_observation_tables_match_the_code(name):
    block = current_block(page_path(name).read_text())
    assert block == tables(name), (
        f"{page_path(name)} is stale: run python -m card_envs.core.doctables --write"
    )


def _all_result_blocks():
    out = []
    for path in sorted((ROOT / "docs").rglob("*.md")):
        for m in result_blocks(path.read_text()):
            marks = [pytest.mark.slow] if m.group("slow") else []
            out.append(
                pytest.param(
                    path.name,
                    m.group("command"),
                    m.group("output"),
                    marks=marks,
                    id=f"{path.stem}:{m.group('command')[10:60]}",
                )
            )
    return out


@pytest.mark.parametrize("page,command,output", _all_result_blocks())
def test_result_blocks_are_what_their_commands_print(page, command, output):
    assert run_command(command) == output, (
        f"{page}: the output of `{command}` changed; "
        "run python -m card_envs.core.doctables --results"
    )


def test_readme_quickstart_has_exactly_two_commands():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(?:bash|sh)\n(.*?)```", section, re.S)
    commands = [line for b in blocks for line in b.strip().splitlines() if not line.startswith("#")]
    assert len(commands) == 2, commands
    ci = (ROOT / ".ci" / "run").read_text()
    test_command = commands[1].split("&&")[-1].strip()
    assert test_command in ci, "CI runs the README's test command"
