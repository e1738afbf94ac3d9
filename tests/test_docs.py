"""The docs are true: generated tables match the code, result blocks match their commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from card_envs.core.text import rules_page
from card_envs.doctables import current_block, result_blocks, run_command, tables
from card_envs.doctables import page_path as _page_path
from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES

ROOT = Path(__file__).resolve().parents[1]


def page_path(name: str) -> Path:
    """The game's page in this checkout."""
    return _page_path(name, ROOT)


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
        f"{page_path(name)} is stale: run python -m card_envs.doctables --write"
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
        "run python -m card_envs.doctables --results"
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


def _games_with_baselines() -> list[str]:
    """The games that have a baseline setting (configs/games.yaml); a game needs none."""
    try:
        from baselines.config import game_config, settings
    except ImportError:  # the train extra
        return []
    return [n for n in ENV_NAMES if any(game_config(s)["env"] == n for s in settings())]


@pytest.mark.parametrize("name", _games_with_baselines())
def test_each_game_page_shows_its_trained_baselines_from_the_results_page(name):
    pytest.importorskip("sb3_contrib")
    from baselines.config import game_config, settings
    from baselines.render import game_page_block

    sections = _baseline_sections()
    mine = [s for s in settings() if game_config(s)["env"] == name]
    assert all(s in sections for s in mine), f"docs/baselines.md lacks {mine}"
    block = game_page_block([line for s in mine for line in sections[s]])
    assert block in page_path(name).read_text(), (
        f"{page_path(name)} is stale: rerun python -m baselines.reproduce --budget full --collect"
    )


# --- facts in the docs that the code can check ----------------------------------------------
def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _header_row(name: str, key: str) -> str:
    """The ``| key | ... |`` row of a game page's table at its top."""
    for line in page_path(name).read_text().splitlines():
        if line.startswith(f"| {key} |"):
            return line
    raise AssertionError(f"{page_path(name)} has no '{key}' row")


def _action_counts(name: str) -> set[int]:
    """The action counts of every variant of a game, with every player count it allows."""
    spec = load_spec(name)
    counts = set()
    for variant in spec.variants:
        for players in (None, *spec.num_players):
            kwargs = dict(variant) if players is None else {**variant, "num_players": players}
            try:
                counts.add(spec.make_game(**kwargs).num_actions)
            except ValueError:  # e.g. a player count that variant does not allow
                continue
    return counts


@pytest.mark.parametrize("name", ENV_NAMES)
def test_the_observation_and_action_rows_of_each_game_page_match_the_code(name):
    spec = load_spec(name)
    game, encoder, _ = spec.build({})
    row = _header_row(name, "Observation")
    shapes = [int(n) for n in re.findall(r"Box\((\d+),\)", row)]
    assert shapes[0] == encoder.size, f"{page_path(name)}: observation {row}"
    if len(shapes) > 1:
        assert shapes[1] == game.num_actions, f"{page_path(name)}: mask {row}"
    players = re.search(r"\((\d+) players\)", row)
    if players:
        assert int(players.group(1)) == game.num_players, row
    row = _header_row(name, "Actions")
    numbers = [int(n) for n in re.findall(r"(?<!\w)\d+(?!\w)", row)]  # not the 2 of "2N"
    assert numbers[0] == game.num_actions, f"{page_path(name)}: the default first: {row}"
    for n in re.findall(r"Discrete\((\d+)\)", row):
        assert int(n) in _action_counts(name), f"{page_path(name)}: no setting has {n}: {row}"
    agents = _header_row(name, "Agents")
    counts = re.search(r"n = (\d+)\.\.(\d+) \((\d+) by default\)", agents)
    if counts:
        low, high, default = (int(g) for g in counts.groups())
        assert (low, high) == (spec.num_players[0], spec.num_players[-1]), agents
        assert default == game.num_players, agents


def _player_counts(text: str) -> tuple[int, ...]:
    """``2``, ``2-7`` or ``4, 6, 8`` as the counts they name."""
    if "-" in text:
        low, high = (int(x) for x in text.split("-"))
        return tuple(range(low, high + 1))
    return tuple(int(x) for x in text.split(","))


def test_the_readme_table_names_each_game_with_its_player_counts():
    rows = [line for line in (ROOT / "README.md").read_text().splitlines()
            if re.match(r"\| \[.*\]\(docs/games/", line)]
    assert len(rows) == len(ENV_NAMES)
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        env_name = cells[1].strip("`")
        assert _player_counts(cells[2]) == load_spec(env_name).num_players, row
        assert f"docs/games/{load_spec(env_name).name}.md" in cells[0], row


@pytest.mark.parametrize("name", ENV_NAMES)
def test_each_game_page_states_its_player_counts_in_its_first_lines(name):
    spec = load_spec(name)
    intro = " ".join(page_path(name).read_text().split("\n\n")[1].split())
    stated = re.search(r"for (\d+)-(\d+) players", intro)
    if stated:
        assert (int(stated.group(1)), int(stated.group(2))) == (
            spec.num_players[0], spec.num_players[-1]
        ), intro


SOURCE_MENTION = re.compile(r"\[?\b[Ss]ource 00(\d)\b(\]\(([^)]*)\))?")
BASELINES_BLOCK = re.compile(r"<!-- BEGIN BASELINES -->.*?<!-- END BASELINES -->", re.S)


def _unlinked_sources(text: str, path: Path) -> list[str]:
    """Each "source 00N" in ``text`` that is not a link to its entry in docs/sources.md."""
    bad = []
    for m in SOURCE_MENTION.finditer(text):
        target = m.group(3)
        if target is None:
            bad.append(f"{path.name}: {text[max(0, m.start() - 40) : m.end() + 20]!r}")
            continue
        file, _, anchor = target.partition("#")
        if (path.parent / file).resolve() != (ROOT / "docs" / "sources.md").resolve():
            bad.append(f"{path.name}: {m.group(0)} links {target}")
        elif anchor != f"source-00{m.group(1)}":
            bad.append(f"{path.name}: {m.group(0)} links anchor {anchor!r}")
    return bad


def test_sources_page_has_an_entry_for_each_source():
    text = (ROOT / "docs" / "sources.md").read_text()
    for k in range(5):
        entry = text.split(f"### source 00{k}\n", 1)[1].split("\n### ", 1)[0]
        for field in ("- Title:", "- Author:", "- Date:", "- Address:", "- What we took:"):
            assert field in entry, f"source 00{k} lacks {field}"


def test_every_source_mention_in_the_docs_links_to_the_sources_page():
    bad = []
    for path in _pages():
        if path.name in ("sources.md", "baselines.md"):
            continue  # sources.md is the target; baselines.md is checked below
        bad += _unlinked_sources(BASELINES_BLOCK.sub("", path.read_text()), path)
    assert not bad, "\n".join(bad)


def test_the_cli_text_names_where_each_source_is_described():
    # what `card-envs play` shows for ? and what evaluate prints never name a source without
    # the page that describes it
    for name in ENV_NAMES:
        text = rules_page(load_spec(name))
        for line in text.splitlines():
            if SOURCE_MENTION.search(line):
                assert "docs/sources.md" in line, line


def test_every_source_mention_in_the_baseline_results_links_to_the_sources_page():
    bad = _unlinked_sources((ROOT / "docs" / "baselines.md").read_text(), ROOT / "docs/x.md")
    for name in ENV_NAMES:
        for block in BASELINES_BLOCK.findall(page_path(name).read_text()):
            bad += _unlinked_sources(block, page_path(name))
    assert not bad, "\n".join(bad)


def _cited_files(text: str) -> tuple[list[str], list[str]]:
    """(link targets, file names and paths) that a page cites, leaving out web addresses."""
    text = re.sub(r"<?https?://[^\s>)]+>?", "", text)
    # in code spans "](" is code, e.g. spec.encoders[name](game), not a link
    bare = re.sub(r"`[^`\n]*`", lambda m: m.group(0).replace("](", "] ("), text)
    links = [m.group(1) for m in re.finditer(r"\]\(([^)#\s]*)(?:#[^)]*)?\)", bare)
             if m.group(1) and not m.group(1).startswith("mailto:")]
    names = re.findall(
        r"(?<![\w/.<>-])((?:[\w.-]+/)*[\w.-]+\.(?:md|py|yaml|toml|txt|json|cfg))\b", text
    )
    return links, names


# Files a training run writes into its run folder (baselines/common.py, Run): the docs may
# name them, as outputs, although no run folder is in the repository.
RUN_FOLDER_FILES = ("config.json", "command.txt", "versions.json", "eval.json", "model.json",
                    "pretrain.json")


def test_the_docs_cite_only_files_that_are_in_the_repository():
    tracked = {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if ".git" not in p.parts}
    baselines_code = "".join(p.read_text() for p in (ROOT / "baselines").glob("*.py"))
    assert all(name in baselines_code for name in RUN_FOLDER_FILES)
    basenames = {Path(p).name for p in tracked} | set(RUN_FOLDER_FILES)
    bad = []
    for page in _pages():
        links, names = _cited_files(page.read_text())
        for target in links:
            if not (page.parent / target).exists():
                bad.append(f"{page.relative_to(ROOT)} links {target}")
        for name in names:
            if "/" in name:
                if not ((ROOT / name).exists() or (page.parent / name).exists()):
                    bad.append(f"{page.relative_to(ROOT)} cites {name}")
            elif name not in basenames:
                bad.append(f"{page.relative_to(ROOT)} cites {name}")
    assert not bad, "\n".join(bad)
    assert "RULES.md" not in basenames  # the file the docs used to cite


def test_the_baselines_page_is_rendered_from_its_results_file():
    pytest.importorskip("sb3_contrib")
    from baselines.final import RESULTS, load_results
    from baselines.render import render_text

    text, _ = render_text(load_results(RESULTS), "img")
    assert (ROOT / "docs" / "baselines.md").read_text() == text, (
        "docs/baselines.md differs from docs/baselines.json (or from the ladder figures it "
        "quotes): rerun python -m baselines.reproduce --render"
    )


@pytest.mark.parametrize("name", ENV_NAMES)
def test_each_game_page_lists_every_agent_in_its_agents_table(name):
    """Every agent the registry builds by name (search agents included) has a row in the game
    page's agents table, and the table names no agent the registry lacks."""
    text = page_path(name).read_text()
    section = text.split("## Agents", 1)[1].split("\n## ", 1)[0]
    table = section.split("| name | behaviour |", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"^\| `([a-z_0-9]+)` \|", table, flags=re.M)
    assert sorted(listed) == sorted(["random", *load_spec(name).agents]), page_path(name)
