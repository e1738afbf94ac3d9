"""``card-envs serve``: the web app over HTTP (Starlette under uvicorn), and how it is served.

Routes (every answer JSON but the page itself; an error is a 4xx with ``{"error": reason}``,
one line, and leaves the game as it was)::

    GET  /                              the page (static/, served from the package)
    GET  /api/catalog                   the games, their rules variants and agents
    POST /api/tables                    a new game: {"env", "rules", "seat" (null: watch),
                                        "agents"}; answers {"id", ...the seat's view}
    GET  /api/tables/{id}?view=all      the table for the person's seat (or, once the game is
                                        over or when watching, every hand open / any seat)
    POST /api/tables/{id}/move          {"action", "step"}: the person's move, then the agents'
    POST /api/tables/{id}/advance       {"step"}: one agent move (watching)
    GET  /api/tables/{id}/record        the game's record (JSON Lines), once it is over
    POST /api/replays                   a records file (the body, at most --max-upload bytes)
    GET  /api/replays/{id}/{game}?step=&view=   one step of one recorded game

JSON requests must say ``Content-Type: application/json`` (a page elsewhere cannot send that
without the browser asking first, and this server never says yes); when bound to the local
machine the server answers only requests addressed to it by a local name (no DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import json
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from card_envs.core.agents import make_agent
from card_envs.records import RecordError, parse_records
from card_envs.registry import env_names, load_spec
from card_envs.web.tables import ReplayTable, Store, Table, TableError, catalog, new_table

JSON_LIMIT = 16 * 1024  # a move or a new game is a few hundred bytes
LOCAL_NAMES = ["127.0.0.1", "localhost", "::1", "[::1]"]
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors "
                               "'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def static_dir() -> str:
    """The folder of the page's files, inside the installed package."""
    return str(resources.files("card_envs.web").joinpath("static"))


def error(message: str, status: int = 400) -> JSONResponse:
    """A 4xx answer with its one-line reason."""
    return JSONResponse({"error": " ".join(str(message).split())}, status)


def answer(data: dict[str, Any], status: int = 200) -> JSONResponse:
    return JSONResponse(data, status)


class Headers:
    """ASGI middleware that adds ``HEADERS`` to every answer (the page, its files, the API)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in HEADERS.items():
                    headers.setdefault(key, value)
            await send(message)

        return await self.app(scope, receive, send_with_headers)


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, refused (413) past ``limit`` bytes without reading the rest."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > limit):
        raise TableError(f"the request is larger than {limit} bytes", 413)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise TableError(f"the request is larger than {limit} bytes", 413)
    return bytes(body)


async def read_json(request: Request) -> dict[str, Any]:
    """The JSON object a request sends; TableError (415, 413, 400) otherwise."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise TableError("send JSON with Content-Type: application/json", 415)
    body = await read_body(request, JSON_LIMIT)
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise TableError(f"the body is not JSON: {err}") from err
    if not isinstance(data, dict):
        raise TableError("the body must be a JSON object")
    return data


def view_of(request: Request, players: int) -> int | None | str:
    """The ``view`` query parameter: a seat, None for ``all``, or "" when not given."""
    text = request.query_params.get("view", "")
    if text == "":
        return ""
    if text == "all":
        return None
    if text.isdigit() and int(text) < players:
        return int(text)
    raise TableError(f"view must be all or a seat 0..{players - 1}, got {text!r}")


def handled(endpoint):
    """``endpoint`` with TableError (and RecordError) answered as a 4xx and its reason."""
    async def run(request: Request) -> Response:
        try:
            return await endpoint(request)
        except TableError as err:
            return error(str(err), err.status)
        except RecordError as err:
            return error(str(err), 400)
    return run


class Endpoints:
    """The app's request handlers, over its store of games and replays; ``agents``: agent
    names offered beside the usual ones; ``max_upload``: the largest records file, in bytes."""

    def __init__(self, store: Store, agents: tuple[str, ...], max_upload: int):
        self.store, self.agents, self.max_upload = store, agents, max_upload

    async def page(self, request: Request) -> Response:
        return FileResponse(f"{static_dir()}/index.html")

    async def games(self, request: Request) -> Response:
        return answer({"games": catalog(self.agents)})

    async def create(self, request: Request) -> Response:
        data = await read_json(request)
        unknown = set(data) - {"env", "rules", "seat", "agents"}
        if unknown:
            raise TableError(f"unknown fields {', '.join(sorted(unknown))}; a new game takes "
                             "env, rules, seat, agents")
        table = await run_in_threadpool(new_table, data.get("env"), data.get("rules"),
                                        data.get("seat"), data.get("agents", "random"), None,
                                        self.agents)
        key = self.store.add(table)
        return answer({"id": key, **table.view(table.seat)}, 201)

    def table_of(self, request: Request) -> Table:
        return self.store.get(request.path_params["id"], Table)

    @staticmethod
    def seen_from(table: Table, request: Request) -> int | None:
        view = view_of(request, table.game.num_players)
        if view == "":
            return table.seat
        if view != table.seat and not (table.watching or table.state.done):
            raise TableError("while the game is on, you see only your own seat", 403)
        return view

    async def show(self, request: Request) -> Response:
        table = self.table_of(request)
        return answer(await locked(table, lambda: table.view(self.seen_from(table, request))))

    async def move(self, request: Request) -> Response:
        table = self.table_of(request)
        data = await read_json(request)

        def play() -> dict[str, Any]:
            table.move(data.get("action"), data.get("step"))
            return table.view(table.seat)

        return answer(await locked(table, play))

    async def advance(self, request: Request) -> Response:
        table = self.table_of(request)
        data = await read_json(request)

        def step() -> dict[str, Any]:
            # the view is checked before the move: a bad view moves nothing
            view = self.seen_from(table, request)
            table.advance(data.get("step"))
            return table.view(view)

        return answer(await locked(table, step))

    async def record(self, request: Request) -> Response:
        table = self.table_of(request)
        line = await locked(table, lambda: table.record().to_line() + "\n")
        headers = {"Content-Disposition":
                   f'attachment; filename="{table.spec.env_name}-game.jsonl"'}
        return Response(line, media_type="application/x-ndjson", headers=headers)

    async def upload(self, request: Request) -> Response:
        body = await read_body(request, self.max_upload)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as err:
            raise TableError("the file is not a records file (not UTF-8 text)") from err
        records = await run_in_threadpool(_checked, text)
        replays = ReplayTable(records)
        key = self.store.add(replays)
        return answer({"id": key, "games": replays.games()}, 201)

    async def frame(self, request: Request) -> Response:
        replays = self.store.get(request.path_params["id"], ReplayTable)
        step = request.query_params.get("step", "0")
        if not step.isdigit():
            raise TableError(f"step must be a number, got {step!r}")
        k = request.path_params["game"]

        def show_step() -> dict[str, Any]:
            view = view_of(request, replays.replayed(k).game.num_players)
            return replays.frame(k, int(step), None if view == "" else view)

        return answer(await locked(replays, show_step))

    def routes(self) -> list:
        return [
            Route("/", self.page),
            Route("/api/catalog", handled(self.games)),
            Route("/api/tables", handled(self.create), methods=["POST"]),
            Route("/api/tables/{id}", handled(self.show)),
            Route("/api/tables/{id}/move", handled(self.move), methods=["POST"]),
            Route("/api/tables/{id}/advance", handled(self.advance), methods=["POST"]),
            Route("/api/tables/{id}/record", handled(self.record)),
            Route("/api/replays", handled(self.upload), methods=["POST"]),
            Route("/api/replays/{id}/{game:int}", handled(self.frame)),
            Mount("/static", StaticFiles(directory=static_dir()), name="static"),
        ]


def create_app(max_games: int = 200, idle: float = 1800.0, max_upload: int = 4 * 2**20,
               allowed_hosts: list[str] | None = None, agents: Sequence[str] = ()) -> Starlette:
    """The web app; ``allowed_hosts`` (default: any) are the Host names it answers to;
    ``agents``: agent names offered beside the usual ones (the operator's, e.g. cmd:PROGRAM)."""
    store = Store(max_games, idle)
    middleware = [Middleware(Headers)]
    if allowed_hosts:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts))
    app = Starlette(routes=Endpoints(store, tuple(agents), max_upload).routes(),
                    middleware=middleware)
    app.state.store = store
    return app


async def locked(item: Table | ReplayTable, work: Callable[[], Any]) -> Any:
    """``work()`` run in a worker thread holding ``item``'s lock: a move (agents thinking)
    never holds up the server, and one game changes one request at a time."""
    def run() -> Any:
        with item.lock:
            return work()

    return await run_in_threadpool(run)


def _checked(text: str):
    """The records of an uploaded file, each replayed and checked (RecordError if one fails)."""
    from card_envs.records import check_records

    records = parse_records(text, "the file")
    check_records(records)
    return records


def is_local(host: str) -> bool:
    """Whether ``host`` is this machine only (a loopback address or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure(host: str, port: int) -> str:
    """What serving on ``host`` exposes, for the warning printed when it is not local."""
    return (f"card-envs serve is listening on {host}:{port}, not only on this machine: anyone "
            "who can reach it can start games and replays here and make its agents think (CPU "
            "time). They cannot read or write files on this machine, and they reach only the "
            "games whose ids they hold.")


def serve(host: str = "127.0.0.1", port: int = 8000, max_games: int = 200, idle: float = 1800,
          max_upload: int = 4 * 2**20, open_browser: bool = False,
          agents: Sequence[str] = ()) -> int:
    """Run the web app until Ctrl-C; ValueError for a bad setting. ``agents``: agent names the
    page offers beside the usual ones (each checked here against every game)."""
    import uvicorn

    if not 0 <= port <= 65535:
        raise ValueError(f"--port {port}: give a port 0..65535")
    if max_games < 1:
        raise ValueError(f"--max-games {max_games}: give at least 1")
    if not idle > 0:
        raise ValueError(f"--idle {idle}: give seconds > 0")
    if max_upload < 1:
        raise ValueError(f"--max-upload {max_upload}: give bytes >= 1")
    for name in agents:  # a bad name is refused now, not when a client picks it
        for env_name in env_names():
            spec = load_spec(env_name)
            make_agent(spec, name, spec.make_game())
    local = is_local(host)
    app = create_app(max_games, idle, max_upload, LOCAL_NAMES if local else None, agents)
    if not local:
        print("warning: " + exposure(host, port), file=sys.stderr)
    shown = f"[{host}]" if ":" in host else host
    print(f"card-envs serve: open http://{shown}:{port}/ in a browser (Ctrl-C stops)", flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(f"http://{shown}:{port}/")
    uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0
