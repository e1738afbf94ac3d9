"""The web app in a real browser: a server on 127.0.0.1 and the system's headless Chromium.

Used by tests/test_web_browser.py, and run as a script it takes the screenshots of the docs
(docs/img/web_<game>.png, a table of each game part way through; a phone-sized page; the
Replay tab)::

    python -m tests.browser --screenshots docs/img

Chromium is Debian's (``apt-get install chromium``), driven by Playwright's Python package;
nothing is downloaded (never ``playwright install``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parents[1]

# What each screenshot shows: the game, its setup (players, agents) and moves made first.
SHOTS = {
    "simple_tricks": {"players": 2, "agent": "heuristic", "moves": 3},
    "ninety_eight_cards": {"players": 1, "agent": None, "moves": 5},
    "thirty_one": {"players": 3, "agent": "expected_value", "moves": 3},
    "palace": {"players": 3, "agent": "heuristic", "moves": 6},
    "literature": {"players": 6, "agent": "heuristic", "moves": 3},
}


def chromium_path() -> str | None:
    """The system's Chromium, or None if it is not installed."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_server(**options) -> Iterator[str]:
    """The web app served by uvicorn on 127.0.0.1 in a thread; yields its base URL."""
    import uvicorn

    from card_envs.web.server import LOCAL_NAMES, create_app

    port = free_port()
    app = create_app(allowed_hosts=LOCAL_NAMES, **options)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the web app did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def browser() -> Iterator:
    """Headless system Chromium under Playwright."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError("no chromium: apt-get install chromium")
    with sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield chrome
        finally:
            chrome.close()


def open_page(chrome, url: str, width: int = 1200, height: int = 900):
    """A new page at the app, ready (the catalog loaded)."""
    page = chrome.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    return page


def set_up(page, game: str, players: int | None = None, agent: str | None = None,
           seat: int = 0, mode: str = "play") -> None:
    """Choose a game, its players, the person's seat and one agent for every other seat."""
    page.click(f"#tab-{mode}")
    page.select_option("#game", f"{game}_v0")
    if players is not None and page.locator("#players").is_enabled():
        page.select_option("#players", str(players))
    if mode == "play":
        page.select_option("#seat", str(seat))
    if agent is not None:
        for select in page.locator(".agent-select").all():
            select.select_option(agent)


def deal(page) -> None:
    """Press Deal (or Watch) and wait for the table."""
    page.click("#start")
    page.wait_for_selector("#table-area:not([hidden])")


def take_screenshots(folder: Path) -> list[Path]:
    """A screenshot of each game's page part way through a game, and one at phone size."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    with running_server() as url, browser() as chrome:
        for game, shot in SHOTS.items():
            page = open_page(chrome, url)
            set_up(page, game, shot["players"], shot["agent"])
            deal(page)
            for _ in range(shot["moves"]):
                if page.locator("#result:not([hidden])").count():
                    break
                page.locator(".move").first.click()
                page.wait_for_load_state("networkidle")
            path = folder / f"web_{game}.png"
            page.screenshot(path=str(path), full_page=True)
            written.append(path)
            page.close()
        page = open_page(chrome, url, 390, 844)
        set_up(page, "thirty_one", 2, "expected_value")
        deal(page)
        path = folder / "web_phone.png"
        page.screenshot(path=str(path), full_page=True)
        written.append(path)
        written.append(replay_screenshot(chrome, url, folder / "web_replay.png"))
    return written


def replay_screenshot(chrome, url: str, path: Path) -> Path:
    """The Replay tab half way through a recorded Palace game, every hand open."""
    import tempfile

    from card_envs.cli import main as cli

    with tempfile.TemporaryDirectory() as tmp:
        records = Path(tmp) / "palace.jsonl"
        with contextlib.redirect_stdout(None):
            cli(["evaluate", "palace", "heuristic", "lowest_first", "--games", "1",
                 "--record", str(records)])
        page = open_page(chrome, url)
        page.click("#tab-replay")
        page.set_input_files("#replay-file", str(records))
        page.wait_for_selector("#replay-step:has-text('step 0 of')")
        total = int(page.locator("#replay-step").text_content().split()[-1])
        page.fill("#replay-slider", str(total // 2))
        page.wait_for_selector(f"#replay-step:has-text('step {total // 2} of')")
        page.screenshot(path=str(path), full_page=True)
        page.close()
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--screenshots", metavar="FOLDER", type=Path, required=True,
                        help="write the screenshots there (the docs' are in docs/img)")
    args = parser.parse_args(argv)
    for path in take_screenshots(args.screenshots):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
