"""What a release carries: the licence, the citation, the changelog and one version number
everywhere; and the installed package never writes into a checkout's docs/ unless told where
the checkout is."""

from __future__ import annotations

import datetime
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import card_envs
from card_envs.cli import main as cli_main
from card_envs.doctables import BEGIN, END, tables
from card_envs.doctables import main as doctables_main
from tests.conftest import ENV_NAMES

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_version() -> str:
    return re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]


def _citation() -> dict:
    yaml = pytest.importorskip("yaml", reason="reading CITATION.cff needs pyyaml (train extra)")
    return yaml.safe_load((ROOT / "CITATION.cff").read_text())


def test_the_licence_is_the_mit_licence_pyproject_names():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) ")
    assert "Permission is hereby granted, free of charge" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'license = "MIT"' in pyproject and 'license-files = ["LICENSE"]' in pyproject


def test_one_version_everywhere():
    version = _pyproject_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert card_envs.__version__ == version
    assert str(_citation()["version"]) == version
    assert f"## [{version}] - " in (ROOT / "CHANGELOG.md").read_text()


# Citation File Format 1.2.0: its required keys, and the keys it knows at the top level
CFF_REQUIRED = {"cff-version", "message", "title", "authors"}
CFF_KEYS = CFF_REQUIRED | {
    "abstract", "commit", "contact", "date-released", "doi", "identifiers", "keywords",
    "license", "license-url", "preferred-citation", "references", "repository",
    "repository-artifact", "repository-code", "type", "url", "version",
}


def test_the_citation_file_follows_the_citation_file_format():
    cff = _citation()
    assert CFF_REQUIRED <= set(cff) <= CFF_KEYS, set(cff) ^ CFF_KEYS
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert all(isinstance(cff[k], str) and cff[k].strip() for k in ("message", "title"))
    assert cff["authors"] and all(
        isinstance(a, dict) and (a.get("name") or a.get("family-names")) for a in cff["authors"])
    released = cff["date-released"]
    date = released if isinstance(released, datetime.date) else datetime.date.fromisoformat(
        released)
    assert f"## [{cff['version']}] - {date.isoformat()}" in (ROOT / "CHANGELOG.md").read_text()
    assert cff["license"] == "MIT"
    assert all(isinstance(k, str) for k in cff.get("keywords", []))
    # the reference validator, where it is installed (it pins an old jsonschema, so it is no
    # extra of ours: pip install cffconvert in an environment of its own)
    cffconvert = shutil.which("cffconvert")
    if cffconvert:
        run = subprocess.run([cffconvert, "--validate", "-i", str(ROOT / "CITATION.cff")],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stdout + run.stderr


def test_the_changelog_keeps_a_changelog_form():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n")
    versions = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.M)
    headings = re.findall(r"^## .*$", text, re.M)
    assert len(versions) == len(headings), headings  # every release heading in the form
    assert versions[0] == ("Unreleased", "")
    released = [(v, d) for v, d in versions[1:]]
    assert all(d for _, d in released), "every release has its date"
    assert [d for _, d in released] == sorted((d for _, d in released), reverse=True)
    assert released[0][0] == _pyproject_version() and released[-1][0] == "0.1.0"
    kinds = set(re.findall(r"^### (.*)$", text, re.M))
    assert kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, kinds


def test_the_readme_opens_with_an_env_and_says_how_to_cite():
    text = (ROOT / "README.md").read_text()
    first_block = re.search(r"```(\w+)\n(.*?)```", text, re.S)
    assert first_block[1] == "python" and "action_mask" in first_block[2], first_block[0]
    code_lines = [line for line in first_block[2].strip().splitlines() if line.strip()]
    assert len(code_lines) <= 12, "the opening example is about ten lines"
    headings = re.findall(r"^## (.*)$", text, re.M)
    assert headings.index("Install") < headings.index("Quickstart")
    assert text.index(first_block[0]) < text.index("## Install")
    # it runs as printed: one line of result per seat
    run = subprocess.run([sys.executable, "-c", first_block[2]], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    assert sorted(line.split()[0] for line in run.stdout.splitlines()) == [
        "player_0", "player_1", "player_2"], run.stdout
    citing = text.split("## Citing", 1)[1]
    assert "CITATION.cff" in citing and "@software{" in citing
    assert f"version = {{{_pyproject_version()}}}" in citing
    # the docs site's home cites the same version
    assert f"version = {{{_pyproject_version()}}}" in (ROOT / "docs" / "index.md").read_text()


def test_the_versions_page_says_what_bumps_an_environment_and_the_package():
    text = (ROOT / "docs" / "versioning.md").read_text()
    for word in ("rules", "observations", "actions", "rewards", "-vN", "MAJOR", "MINOR",
                 "PATCH"):
        assert word in text, word


# --- the package never writes where it is installed -----------------------------------------
def _climbs_out(path: Path, text: str) -> list[str]:
    """The lines of a module of card_envs that make a path above the package from its own
    ``__file__`` (a checkout beside it, which an installed package does not have)."""
    depth = len(path.relative_to(ROOT / "card_envs").parts)  # card_envs/x.py: 1
    bad = []
    for line in text.splitlines():
        if "__file__" not in line:
            continue
        up = [int(k) + 1 for k in re.findall(r"parents\[(\d+)\]", line)]
        up += [len(m) // len(".parent") for m in re.findall(r"(?:\.parent)+", line)]
        if any(u > depth for u in up):
            bad.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    return bad


def test_no_module_of_the_package_looks_for_a_checkout_above_itself():
    bad = []
    for path in sorted((ROOT / "card_envs").rglob("*.py")):
        bad += _climbs_out(path, path.read_text())
    assert not bad, "\n".join(bad)
    assert _climbs_out(ROOT / "card_envs" / "x.py", "R = Path(__file__).resolve().parents[1]")
    assert not _climbs_out(ROOT / "card_envs" / "web" / "s.py", "Path(__file__).parent.parent")


def test_the_ladder_writes_docs_only_into_a_checkout_it_is_given(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no docs/ here
    argv = ["ladder", "simple_tricks", "--games", "1", "--set", "num_values=3"]
    assert cli_main([*argv, "--write"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--write .: no docs/ folder there" in err[0], err
    checkout = tmp_path / "checkout"
    assert cli_main([*argv, "--write", str(checkout)]) == 2  # nor a folder without docs/
    capsys.readouterr()
    (checkout / "docs" / "games").mkdir(parents=True)
    page = checkout / "docs" / "games" / "simple_tricks.md"
    page.write_text("# Simple tricks\n\n## Trained baselines\n\nx\n")
    assert cli_main([*argv, "--write", str(checkout)]) == 0
    out = capsys.readouterr().out
    assert "wrote docs/ladder.md" in out and "wrote docs/games/simple_tricks.md" in out
    assert (checkout / "docs" / "ladder.md").read_text().startswith("# Strength ladder")
    assert "BEGIN LADDER simple_tricks_v0-3" in page.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkout"]


def test_the_docs_tables_are_written_only_into_a_checkout_it_is_given(tmp_path, monkeypatch,
                                                                      capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        doctables_main(["--write"])
    assert stop.value.code == 2 and "no docs/ folder in ." in capsys.readouterr().err
    name = ENV_NAMES[0]
    page = tmp_path / "docs" / "games" / f"{card_envs.load_spec(name).name}.md"
    page.parent.mkdir(parents=True)
    page.write_text(f"# A game\n\n{BEGIN}\n{END}\n")
    assert doctables_main(["--write", "--root", str(tmp_path), name]) == 0
    assert tables(name) in page.read_text()


def test_the_docs_tables_command_runs_as_a_module():
    """``python -m card_envs.doctables`` (the command the docs give) prints the tables."""
    run = subprocess.run([sys.executable, "-m", "card_envs.doctables", ENV_NAMES[0]],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0 and BEGIN in run.stdout, run.stderr
