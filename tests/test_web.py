"""The web app over HTTP: games, watching, records and replays; bad requests get a 4xx with a
one-line reason and change nothing; what a seat is sent passes the twin-worlds leak test for
every game; dozens of concurrent games run without errors and in bounded memory."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import pickle
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web app needs the web extra")
httpx = pytest.importorskip("httpx", reason="the web tests need the test extra")

with warnings.catch_warnings():  # newer Starlette asks for its httpx fork; httpx works alike
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from card_envs.records import parse_records, replay  # noqa: E402
from card_envs.registry import load_spec  # noqa: E402
from card_envs.web import server as web_server  # noqa: E402
from card_envs.web.server import LOCAL_NAMES, create_app, exposure, is_local  # noqa: E402
from card_envs.web.tables import MAX_BUDGET, Store, Table, TableError, offered_agents  # noqa: E402
from tests.conftest import ENV_NAMES  # noqa: E402


@pytest.fixture
def client():
    with TestClient(create_app()) as c:
        yield c


def new_game(client, env="simple_tricks", seat=0, agents="random", rules=None, status=201):
    body = {"env": env, "seat": seat, "agents": agents, "rules": rules or {}}
    r = client.post("/api/tables", json=body)
    assert r.status_code == status, r.text
    return r.json()


def play_out(client, data, rng, limit=5000):
    """Random legal moves until the game ends; the last answer."""
    for _ in range(limit):
        if data["over"]:
            return data
        action = data["moves"][int(rng.integers(len(data["moves"])))]["action"]
        r = client.post(f"/api/tables/{data['id']}/move",
                        json={"action": action, "step": data["step"]})
        assert r.status_code == 200, r.text
        data = {**r.json(), "id": data["id"]}
    raise AssertionError("the game did not end")


def test_the_catalog_offers_every_game_and_never_a_model_path(client):
    games = client.get("/api/catalog").json()["games"]
    assert [g["env"] for g in games] == ENV_NAMES
    for g in games:
        spec = load_spec(g["env"])
        assert g["agents"] == offered_agents(spec) and "best" in g["agents"]
        assert not any(a.startswith("model") for a in g["agents"])
        assert [v["rules"] for v in g["variants"]] == [dict(v) for v in spec.variants]
        for v in g["variants"]:  # every count offered makes a game; the default is one of them
            assert v["default_players"] in v["players"]
            for n in v["players"]:
                rules = {**v["rules"], "num_players": n} if len(v["players"]) > 1 else v["rules"]
                assert spec.make_game(**rules).num_players == n
        assert g["how_to_play"].strip()
    literature = next(g for g in games if g["name"] == "literature")
    original = next(v for v in literature["variants"] if v["rules"] == {"rules": "original"})
    assert original["players"] == [4], "Literature's original rules are for 4 players only"


@pytest.mark.parametrize("name", ENV_NAMES)
def test_a_whole_game_of_each_title_and_its_record_replays(client, name):
    rng = np.random.default_rng(1)
    spec = load_spec(name)
    game = spec.make_game()
    seat = game.num_players - 1
    data = new_game(client, name, seat=seat, agents=spec.strongest_agent)
    assert data["seat"] == seat and data["names"][seat] == "you"
    assert data["to_act"] == seat, "the agents before the person's seat moved at once"
    assert data["board"]["seats"] and data["text"]
    end = play_out(client, data, rng)
    assert end["result"] and end["moves"] == []
    r = client.get(f"/api/tables/{data['id']}/record")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    (record,) = parse_records(r.text)
    assert record.agents[seat] == "human" and record.source == "serve" and record.finished
    assert replay(record).final.steps == end["step"]
    everything = client.get(f"/api/tables/{data['id']}?view=all").json()
    assert everything["view"] is None


def test_watching_agents_one_move_at_a_time(client):
    data = new_game(client, "thirty_one", seat=None, agents="greedy", rules={"num_players": 2})
    assert data["mode"] == "watch" and data["moves"] == [] and data["step"] == 0
    key = data["id"]
    for step in range(5):
        r = client.post(f"/api/tables/{key}/advance?view=all", json={"step": step})
        assert r.status_code == 200, r.text
        assert r.json()["step"] == step + 1 and r.json()["view"] is None
    seat_view = client.get(f"/api/tables/{key}?view=1").json()
    assert seat_view["view"] == 1 and seat_view["news"]
    r = client.post(f"/api/tables/{key}/advance", json={"step": 2})
    assert r.status_code == 409 and "at step 5, not 2" in r.json()["error"]
    r = client.get(f"/api/tables/{key}/record")  # a watcher may take the record at any time
    assert r.status_code == 200 and not parse_records(r.text)[0].finished


def _error(r, status, says):
    assert r.status_code == status, r.text
    reason = r.json()["error"]
    assert says in reason and "\n" not in reason, reason


@pytest.mark.parametrize("body,says", [
    ({"env": "chess"}, "unknown game 'chess'"),
    ({"env": "palace", "seat": 7}, "seat must be 0..2"),
    ({"env": "palace", "seat": "0"}, "seat must be 0..2"),
    ({"env": "palace", "rules": {"num_players": 9}}, "num_players=9 is not valid"),
    ({"env": "palace", "rules": {"colour": "red"}}, "unknown argument 'colour'"),
    ({"env": "palace", "rules": {"num_players": [1]}}, "give an integer"),
    ({"env": "palace", "rules": "x"}, "rules must be an object"),
    ({"env": "palace", "agents": "wizard"}, "unknown agent 'wizard'"),
    ({"env": "palace", "agents": "model:/etc/passwd"}, "unknown agent 'model:/etc/passwd'"),
    ({"env": "palace", "agents": "model+search:x.zip"}, "unknown agent"),
    ({"env": "palace", "agents": f"ismcts:{MAX_BUDGET + 1}"}, f"budget must be 1..{MAX_BUDGET}"),
    ({"env": "palace", "agents": ["random"]}, "a list of 3"),
    ({"env": "palace", "file": "/etc/passwd"}, "unknown fields file"),
])
def test_a_bad_new_game_gets_a_400_naming_what_is_wrong(client, body, says):
    _error(client.post("/api/tables", json={"seat": 0, **body}), 400, says)


def test_bad_moves_get_a_4xx_and_leave_the_game_as_it_was(client):
    data = new_game(client, "palace", agents="heuristic")
    key, step = data["id"], data["step"]
    before = client.get(f"/api/tables/{key}").json()
    legal = {m["action"] for m in data["moves"]}
    illegal = next(a for a in range(79) if a not in legal)
    url = f"/api/tables/{key}/move"
    _error(client.post(url, json={"action": illegal, "step": step}), 409, "is not a legal move")
    _error(client.post(url, json={"action": 999, "step": step}), 400, "integer 0..78")
    _error(client.post(url, json={"action": "1", "step": step}), 400, "integer 0..78")
    _error(client.post(url, json={"action": True, "step": step}), 400, "integer 0..78")
    _error(client.post(url, json={"action": min(legal), "step": step + 1}), 409, "reload it")
    _error(client.post(url, json={"action": min(legal)}), 400, "step must be")
    _error(client.post(url, content=b"{", headers={"content-type": "application/json"}), 400,
           "not JSON")
    _error(client.post(url, content=b"[1]", headers={"content-type": "application/json"}), 400,
           "a JSON object")
    _error(client.post(url, content=b"action=1", headers={
        "content-type": "application/x-www-form-urlencoded"}), 415, "application/json")
    _error(client.post(url, content=b"{" + b" " * 20000 + b"}",
                       headers={"content-type": "application/json"}), 413, "larger than")
    _error(client.post(f"/api/tables/{key}/advance", json={"step": step}), 409,
           "agents move after you")
    _error(client.get(f"/api/tables/{key}?view=all"), 403, "only your own seat")
    _error(client.get(f"/api/tables/{key}?view=1"), 403, "only your own seat")
    _error(client.get(f"/api/tables/{key}?view=x"), 400, "view must be all or a seat")
    _error(client.get(f"/api/tables/{key}/record"), 409, "would show the hidden cards")
    assert client.get(f"/api/tables/{key}").json() == before
    _error(client.get("/api/tables/not-a-game"), 404, "no game with this id")
    _error(client.post("/api/tables/not-a-game/move", json={"action": 0, "step": 0}), 404,
           "no game with this id")


def test_replays_upload_step_and_refuse_bad_files(client, tmp_path):
    rng = np.random.default_rng(3)
    first = play_out(client, new_game(client, "simple_tricks", agents="heuristic"), rng)
    line = client.get(f"/api/tables/{first['id']}/record").text
    upload = client.post("/api/replays", content=line + line,
                         headers={"content-type": "application/x-ndjson"})
    assert upload.status_code == 201, upload.text
    key, games = upload.json()["id"], upload.json()["games"]
    assert len(games) == 2 and games[0]["moves"] == 20 and games[0]["finished"]
    frames = [client.get(f"/api/replays/{key}/1?step={k}&view=all").json() for k in range(21)]
    assert [f["step"] for f in frames] == list(range(21))
    assert frames[0]["last"] is None and frames[20]["result"]
    assert frames[5]["last"]["step"] == 4
    seat = client.get(f"/api/replays/{key}/0?step=20&view=1").json()
    assert seat["view"] == 1 and seat["result"][0] in ("You win!", "You lose.", "A draw.")
    _error(client.get(f"/api/replays/{key}/0?step=21"), 400, "step must be 0..20")
    _error(client.get(f"/api/replays/{key}/0?step=x"), 400, "step must be a number")
    _error(client.get(f"/api/replays/{key}/2?step=0"), 404, "game must be 0..1")
    _error(client.get(f"/api/replays/{key}/0?view=2"), 400, "view must be all or a seat 0..1")
    _error(client.get(f"/api/replays/{first['id']}/0"), 404, "no replay with this id")
    data = json.loads(line)
    data["actions"][3][1] = (data["actions"][3][1] + 1) % 20
    _error(client.post("/api/replays", content=json.dumps(data),
                       headers={"content-type": "application/x-ndjson"}), 400,
           "the file line 1: step 3")
    _error(client.post("/api/replays", content=b"\xff\xfe",
                       headers={"content-type": "application/x-ndjson"}), 400, "not UTF-8")
    _error(client.post("/api/replays", content=b"hello\n",
                       headers={"content-type": "application/x-ndjson"}), 400, "line 1: not JSON")
    small = TestClient(create_app(max_upload=100))
    _error(small.post("/api/replays", content=line, headers={
        "content-type": "application/x-ndjson"}), 413, "larger than 100 bytes")


def test_an_unfinished_game_is_replayed_only_from_a_seat(client):
    data = new_game(client, "thirty_one", seat=None, agents="greedy")
    client.post(f"/api/tables/{data['id']}/advance", json={"step": 0})
    line = client.get(f"/api/tables/{data['id']}/record").text
    key = client.post("/api/replays", content=line,
                      headers={"content-type": "application/x-ndjson"}).json()["id"]
    _error(client.get(f"/api/replays/{key}/0?step=0&view=all"), 400, "choose a seat")
    assert client.get(f"/api/replays/{key}/0?step=1&view=2").status_code == 200


def test_the_page_and_its_files_come_from_the_package_with_strict_headers(client):
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert "http" not in page.text.replace("http-equiv", ""), "nothing fetched from elsewhere"
    for name in ("app.js", "style.css"):
        r = client.get(f"/static/{name}")
        assert r.status_code == 200 and "https://" not in r.text and "http://" not in r.text
        assert r.headers["x-content-type-options"] == "nosniff"
    assert "default-src 'self'" in client.get("/api/catalog").headers["content-security-policy"]
    assert client.get("/static/../server.py").status_code == 404
    assert client.get("/static/%2e%2e/server.py").status_code == 404


def test_the_page_names_its_icon_and_the_app_serves_it(client):
    """The page links its own icon, so a browser never asks for /favicon.ico (a 404 in the
    console on every load)."""
    import re

    icon = re.search(r'<link rel="icon" href="([^"]+)"', client.get("/").text)
    assert icon, "the page names no icon"
    r = client.get(icon.group(1))
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.lstrip().startswith("<svg")


def test_only_local_names_are_answered_when_bound_to_this_machine():
    local = TestClient(create_app(allowed_hosts=LOCAL_NAMES), base_url="http://127.0.0.1:8000")
    assert local.get("/api/catalog").status_code == 200
    assert local.get("/api/catalog", headers={"host": "localhost:8000"}).status_code == 200
    assert local.get("/api/catalog", headers={"host": "evil.example:8000"}).status_code == 400
    assert is_local("127.0.0.1") and is_local("localhost") and is_local("::1")
    assert not is_local("0.0.0.0") and not is_local("192.168.1.5")


def test_serve_binds_locally_unless_told_and_says_what_it_exposes(monkeypatch, capsys):
    uvicorn = pytest.importorskip("uvicorn")
    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append(kw))
    assert web_server.serve() == 0
    assert calls[-1]["host"] == "127.0.0.1"
    assert "warning" not in capsys.readouterr().err
    assert web_server.serve("0.0.0.0", 8080) == 0
    assert exposure("0.0.0.0", 8080) in capsys.readouterr().err
    for kwargs, says in [({"port": 70000}, "--port 70000"), ({"max_games": 0}, "--max-games"),
                         ({"idle": 0}, "--idle"), ({"max_upload": 0}, "--max-upload")]:
        with pytest.raises(ValueError, match=says):
            web_server.serve(**kwargs)


def test_idle_games_expire_and_the_store_stays_bounded():
    store = Store(limit=3, idle=0.2)
    keys = [store.add(object()) for _ in range(5)]
    assert len(store) == 3, "the longest idle made room"
    with pytest.raises(TableError, match="with this id"):
        store.get(keys[0], object)
    store.get(keys[2], object)
    time.sleep(0.3)
    assert len(store) == 0
    with pytest.raises(TableError) as err:
        store.get(keys[4], object)
    assert err.value.status == 404
    assert len({len(k) for k in keys}) == 1 and len(keys[0]) >= 24, "ids of 18 random bytes"


def test_importing_card_envs_imports_no_web_framework():
    code = ("import sys, card_envs; card_envs.list_envs(); print(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('starlette', 'uvicorn', 'httpx', 'playwright', 'torch', "
            "'numba') or m.startswith('card_envs.web')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- no leaks ----------------------------------------------------------------------------------
def _twin(store, key: str, seat: int, rng) -> tuple[str, bool]:
    """A second table like ``key``'s whose state differs only in what ``seat`` cannot see;
    its id, and whether anything hidden did change."""
    table = store.get(key, Table)
    twin = copy.copy(table)
    twin.state = table.game.randomize_hidden(table.state, seat, rng)
    twin.lock = threading.Lock()
    changed = pickle.dumps(twin.state) != pickle.dumps(table.state)
    return store.add(twin), changed


@pytest.mark.parametrize("name", ENV_NAMES)
def test_what_a_seat_is_sent_depends_only_on_what_it_may_see(name):
    """Twin worlds over HTTP: at every turn of the person's seat (and at every step of a
    watched game seen from one seat), a table whose state differs only in cards that seat
    cannot see answers exactly the same."""
    app = create_app()
    store = app.state.store
    client = TestClient(app)
    spec = load_spec(name)
    rng = np.random.default_rng(7)
    compared = changed = 0
    for k, variant in enumerate(spec.variants):
        game = spec.make_game(**variant)
        seat = k % game.num_players
        data = new_game(client, name, seat=seat, agents="random", rules=variant)
        for turn in range(10_000):
            if turn % 2 == 0 or data["over"]:  # every other turn keeps long games quick
                twin, hidden = _twin(store, data["id"], seat, rng)
                mine = client.get(f"/api/tables/{data['id']}").json()
                assert mine == client.get(f"/api/tables/{twin}").json(), (name, variant, turn)
                compared += 1
                changed += hidden
            if data["over"]:
                break
            action = data["moves"][int(rng.integers(len(data["moves"])))]["action"]
            r = client.post(f"/api/tables/{data['id']}/move",
                            json={"action": action, "step": data["step"]})
            data = {**r.json(), "id": data["id"]}
    watched = new_game(client, name, seat=None, agents="random", rules=spec.variants[0])
    n = spec.make_game(**spec.variants[0]).num_players
    for step in range(60):
        for seat in range(n):
            twin, hidden = _twin(store, watched["id"], seat, rng)
            url = f"/api/tables/{{}}?view={seat}"
            assert client.get(url.format(watched["id"])).json() == \
                client.get(url.format(twin)).json(), (name, step, seat)
            changed += hidden
        r = client.post(f"/api/tables/{watched['id']}/advance", json={"step": step})
        if r.status_code == 409:
            break
    assert compared > 10 and changed > 0, "no hidden card was ever redrawn: this proves nothing"


# --- load ------------------------------------------------------------------------------------
def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


async def _random_game(http, env: str, seed: int, moves: int) -> int:
    """A game of random moves through the API (at most ``moves`` of the person's); the number
    of requests that did not succeed."""
    rng = np.random.default_rng(seed)
    r = await http.post("/api/tables", json={"env": env, "seat": 0, "agents": "random"})
    if r.status_code != 201:
        return 1
    data = r.json()
    key, failures = data["id"], 0
    for _ in range(moves):
        if data["over"]:
            break
        action = data["moves"][int(rng.integers(len(data["moves"])))]["action"]
        r = await http.post(f"/api/tables/{key}/move", json={"action": action,
                                                               "step": data["step"]})
        if r.status_code != 200:
            return failures + 1
        data = r.json()
    r = await http.get(f"/api/tables/{key}")
    return failures + (r.status_code != 200)


async def _wave(url: str, games: int, seed: int) -> int:
    limits = httpx.Limits(max_connections=games)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        jobs = [_random_game(http, ENV_NAMES[g % len(ENV_NAMES)], seed * 1000 + g, 25)
                for g in range(games)]
        return sum(await asyncio.gather(*jobs))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for memory")
def test_dozens_of_concurrent_games_run_without_errors_in_flat_memory(tmp_path):
    from tests.browser import free_port

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "card_envs.cli", "serve", "--port", str(port), "--max-games",
         "40"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert "open http://127.0.0.1:" in server.stdout.readline()
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                httpx.get(f"{url}/api/catalog", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        started = time.monotonic()
        assert asyncio.run(_wave(url, 32, 0)) == 0
        warm = _rss_kib(server.pid)
        for wave in range(1, 4):
            assert asyncio.run(_wave(url, 32, wave)) == 0, f"wave {wave} had errors"
        grown = _rss_kib(server.pid) - warm
        print(f"server memory: {warm} KiB after the first wave, grew {grown} KiB since")
        elapsed = time.monotonic() - started
        assert elapsed < 120, f"4 waves of 32 games took {elapsed:.0f} s"
        assert grown < 20 * 1024, f"the server grew by {grown} KiB over 96 more games"
        assert server.poll() is None
    finally:
        server.terminate()
        server.wait(10)
