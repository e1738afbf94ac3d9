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
    "## Trained baselines",
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


def _baseline_sections() -> dict[str, list[str]]:
    """docs/baselines.md split into its settings' sections, by setting name."""
    lines = (ROOT / "docs" / "baselines.md").read_text().split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("## `")]
    return {
        lines[i].split("`")[1]: lines[i : j]
        for i, j in zip(starts, [*starts[1:], len(lines)], strict=True)
    }


@pytest.mark.parametrize("name", ENV_NAMES)
def test_each_game_page_shows_its_trained_baselines_from_the_results_page(name):
    pytest.importorskip("sb3_contrib")
    from baselines.common import game_config, settings
    from baselines.reproduce import game_page_block

    sections = _baseline_sections()
    mine = [s for s in settings() if game_config(s)["env"] == name]
    assert mine and all(s in sections for s in mine), f"docs/baselines.md lacks {mine}"
    block = game_page_block([line for s in mine for line in sections[s]])
    assert block in page_path(name).read_text(), (
        f"{page_path(name)} is stale: rerun python -m baselines.reproduce --budget full --collect"
    )
