"""The web app in a real browser (headless system Chromium, driven by Playwright): a whole game
of each title played through the page by clicks, cards and keys; a game watched; a records
file stepped through forwards and backwards; every table fits a phone's width.

Skipped without Playwright or Chromium, unless CARD_ENVS_REQUIRE_BROWSER=1 (as .ci/run sets):
then a missing browser fails.
"""

from __future__ import annotations

import os

import pytest

from card_envs.cli import main
from card_envs.records import read_records
from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES

REQUIRED = os.environ.get("CARD_ENVS_REQUIRE_BROWSER", "") not in ("", "0")
if not REQUIRED:
    pytest.importorskip("starlette", reason="the web app needs the web extra")
    pytest.importorskip("playwright", reason="the browser tests need playwright")

from tests.browser import browser, chromium_path, deal, open_page, running_server, set_up  # noqa: E402

if chromium_path() is None and not REQUIRED:
    pytest.skip("no system chromium (apt-get install chromium)", allow_module_level=True)

BLUR = "() => document.activeElement && document.activeElement.blur()"
MOVES_LIMIT = 800  # a game's moves by the page's person, at most (Literature's cap is 400 steps)


@pytest.fixture(scope="module")
def url():
    with running_server() as base:
        yield base


@pytest.fixture(scope="module")
def chrome():
    with browser() as b:
        yield b


def _settle(page) -> None:
    """Wait until the page is not waiting for the server."""
    page.wait_for_function("() => !document.body.classList.contains('busy')")


def _one_move(page, k: int) -> None:
    """One move of the person, made in turn by a move button, the keyboard, or a card."""
    if k % 3 == 1 and page.locator(".move").count() <= 9:
        page.keyboard.press("1")
    elif k % 3 == 2 and page.locator(".card.pickable").count():
        page.locator(".card.pickable").first.click()  # pick a card, then where it goes
        if page.locator(".row.target").count():
            page.locator(".row.target").first.click()
        else:
            page.locator(".move").first.click()
    elif k % 3 == 2 and page.locator(".seat.me .card.clickable, .row.clickable").count():
        page.locator(".seat.me .card.clickable, .row.clickable").first.click()
    else:
        page.locator(".move").first.click()
    _settle(page)


def _fits_a_phone(page) -> bool:
    page.set_viewport_size({"width": 390, "height": 844})
    fits = page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.set_viewport_size({"width": 1200, "height": 900})
    return fits


@pytest.mark.parametrize("name", ENV_NAMES)
def test_a_whole_game_of_each_title_through_the_page(url, chrome, name):
    spec = load_spec(name)
    page = open_page(chrome, url)
    try:
        set_up(page, spec.name, agent=spec.strongest_agent)
        deal(page)
        assert page.locator("#board .card").count() > 0, "cards are drawn"
        assert _fits_a_phone(page), "the table fits a phone's width"
        before = page.locator("#status").text_content()
        for k in range(MOVES_LIMIT):
            if page.locator("#result:not([hidden])").count():
                break
            assert page.locator(".move").count() > 0, page.locator("#message").text_content()
            _one_move(page, k)
            assert page.locator("#message[hidden]").count(), page.locator("#message").text_content()
        else:
            raise AssertionError(f"{name}: no result after {MOVES_LIMIT} moves")
        result = page.locator("#result-text").text_content()
        assert any(w in result for w in ("You win", "You lose", "draw", "Game over", "You won",
                                         "step cap")), result
        assert page.locator("#news li").count() > 0 or spec.make_game().num_players == 1
        page.click("#open-hands")
        page.wait_for_selector("#board .seat")
        assert page.locator("#board .card.back").count() <= page.locator("#board .card").count()
        page.click("#again")
        page.wait_for_selector("#result[hidden]", state="attached")
        assert page.locator(".move").count() > 0 or before
    finally:
        page.close()


def test_watching_agents_play_a_game_at_a_chosen_speed(url, chrome):
    page = open_page(chrome, url)
    try:
        set_up(page, "simple_tricks", agent="heuristic", mode="watch")
        deal(page)
        page.fill("#speed", "5")  # the fastest speed
        page.evaluate(BLUR)
        page.keyboard.press(" ")  # pause
        page.wait_for_timeout(300)
        paused_at = page.locator("#status").text_content() + page.locator("#news").text_content()
        page.wait_for_timeout(400)
        assert paused_at == page.locator("#status").text_content() + \
            page.locator("#news").text_content(), "a paused game stands still"
        assert page.locator("#board .seat .card.back").count() == 0, "a watcher sees every hand"
        page.select_option("#watch-view", "1")  # the table as player_1 sees it
        page.wait_for_function("() => document.querySelector('#board .seat .card.back')")
        page.select_option("#watch-view", "")
        page.wait_for_function("() => !document.querySelector('#board .seat .card.back')")
        page.evaluate(BLUR)
        page.keyboard.press(" ")  # resume
        page.wait_for_selector("#result:not([hidden])", timeout=90_000)
        assert page.locator("#news li").count() > 0
    finally:
        page.close()


def test_loading_the_page_logs_nothing_and_asks_for_nothing_missing(url, chrome):
    """No console message and no failed request on a page load (a missing favicon was a 404
    in the console on every load)."""
    page = chrome.new_page()
    logged, failed = [], []
    page.on("console", lambda msg: logged.append(f"{msg.type}: {msg.text}"))
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    page.on("requestfailed", lambda r: failed.append(f"failed {r.url}"))
    try:
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        page.wait_for_load_state("networkidle")
    finally:
        page.close()
    assert not logged and not failed, logged + failed


def test_stepping_through_a_records_file_forwards_and_backwards(url, chrome, tmp_path, capsys):
    path = tmp_path / "games.jsonl"
    assert main(["evaluate", "palace", "heuristic", "lowest_first", "--games", "2",
                 "--record", str(path)]) == 0
    capsys.readouterr()
    moves = len(read_records(path)[1].actions)
    page = open_page(chrome, url)
    try:
        page.click("#tab-replay")
        page.set_input_files("#replay-file", str(path))
        page.wait_for_selector("#replay-step:has-text('step 0 of')")
        page.select_option("#replay-game", "1")
        page.wait_for_selector(f"#replay-step:has-text('step 0 of {moves}')")
        page.evaluate(BLUR)  # the keys step the game, not the list of games
        for _ in range(3):
            page.keyboard.press("ArrowRight")
            page.wait_for_load_state("networkidle")
        page.wait_for_selector(f"#replay-step:has-text('step 3 of {moves}')")
        page.click("#replay-prev")
        page.wait_for_selector(f"#replay-step:has-text('step 2 of {moves}')")
        assert page.locator("#news li").count() == 1, "the last move is told"
        page.keyboard.press("End")
        page.wait_for_selector(f"#replay-step:has-text('step {moves} of {moves}')")
        assert page.locator("#result:not([hidden])").count()
        page.select_option("#replay-view", "1")  # player_1's view: the others' hands face down
        page.wait_for_function("() => document.querySelector('#board .seat .card.back')")
        page.evaluate(BLUR)
        page.keyboard.press("Home")
        page.wait_for_selector(f"#replay-step:has-text('step 0 of {moves}')")
    finally:
        page.close()
