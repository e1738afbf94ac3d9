"""The docs site (mkdocs.yml) builds strictly: a broken link or anchor, a page left out of the
navigation, or a docstring the API reference cannot read fails here. Then the built site has
every page, the API reference of every game and the images. Needs the docs extra."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _require_docs_tools() -> None:
    for name in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        pytest.importorskip(name, reason="the docs site needs the docs extra "
                                         "(pip install -e '.[docs]')")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    _require_docs_tools()
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--clean",
                          "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    problems = [line for line in (run.stdout + run.stderr).splitlines()
                if line.startswith(("WARNING", "ERROR"))]
    assert run.returncode == 0 and not problems, "\n".join(problems) or run.stderr[-4000:]
    return out


def test_the_site_builds_strictly_with_a_page_for_every_docs_page(site):
    pages = sorted(p.relative_to(DOCS).with_suffix("") for p in DOCS.rglob("*.md"))
    for page in pages:
        html = site / (page.parent if page.name == "index" else page) / "index.html"
        assert html.is_file(), f"{page}.md has no page in the site"
    index = json.loads((site / "search" / "search_index.json").read_text())
    searched = {doc["location"].split("#")[0] for doc in index["docs"]}
    assert "games/palace/" in searched and "reference/core/" in searched


def test_every_game_is_in_the_navigation_and_has_an_api_reference(site):
    config = (ROOT / "mkdocs.yml").read_text()
    for name in ENV_NAMES:
        game = load_spec(name).name
        assert f"games/{game}.md" in config and f"reference/games/{game}.md" in config, game
        html = (site / "reference" / "games" / game / "index.html").read_text()
        package = load_spec(name).package
        for module in ("env", "rules", "encoding", "agents"):
            assert f'id="{package}.{module}"' in html, f"{package}.{module}"
    core = (site / "reference" / "core" / "index.html").read_text()
    for name in ("card_envs.core.game.Game", "card_envs.core.spec.GameSpec",
                 "card_envs.core.gym_env.SingleAgentEnv"):
        assert f'id="{name}"' in core, name


def test_every_image_of_the_docs_is_in_the_site_and_shown(site):
    shown = set()
    for html in site.rglob("*.html"):
        for src in re.findall(r'<img [^>]*src="([^"]+)"', html.read_text()):
            if not src.startswith(("http:", "https:", "data:")):
                shown.add((html.parent / src).resolve())
    for image in (DOCS / "img").iterdir():
        copied = site / "img" / image.name
        assert copied.is_file(), image.name
        assert copied.resolve() in shown, f"no page shows {image.name}"
