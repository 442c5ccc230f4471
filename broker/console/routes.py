"""The console's routes: HTML pages under `/console/`, the same data as JSON under `/api/`, and the
write actions (only with `--http-write`, JSON only: the pages' forms send them by script). Every
handler reads the broker on its own loop; the browser guard (control/browser_guard.py) runs first."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from kafkito.broker.console import groups, messages, pages, stats, topics
from kafkito.broker.console.html import page

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

STATIC = Path(__file__).parent / "static"
CONSOLE_KEY = web.AppKey("console", object)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Console:
    """What the handlers share: the broker, whether writing is allowed, the rate samples."""

    def __init__(self, broker: Broker, write: bool) -> None:
        self.broker = broker
        self.write = write
        self.rates = stats.Rates()


def _console(request: web.Request) -> Console:
    console = request.app[CONSOLE_KEY]
    assert isinstance(console, Console)
    return console


def _json(body: object, status: int = 200) -> web.Response:
    return web.Response(text=json.dumps(body, default=str), status=status, content_type="application/json")


def _serving(console: Console) -> None:
    try:
        _ = console.broker.bound_port
    except RuntimeError:
        raise web.HTTPServiceUnavailable(reason="the broker is not serving yet") from None


def _int(request: web.Request, name: str, default: int | None = None) -> int | None:
    text = request.query.get(name, "").strip()
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{name} must be a number, not {text!r}") from None


def _time_ms(text: str) -> int | None:
    """Epoch milliseconds, or an ISO 8601 time (UTC unless it says otherwise)."""
    text = text.strip()
    if not text:
        return None
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"time must be epoch ms or ISO 8601, not {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp() * 1000)


def _html(request: web.Request, title: str, main: str, poll_ms: int | None = 2000) -> web.Response:
    if request.query.get("fragment"):
        return web.Response(text=main, content_type="text/html")
    return web.Response(
        text=page(title, main, poll_ms=poll_ms, write=_console(request).write), content_type="text/html"
    )


def guarded(handler: Handler, *, api: bool) -> Handler:
    """Failures as a page (or JSON): 404 for an unknown name, 400 for bad input, 403 read-only."""

    async def wrapped(request: web.Request) -> web.StreamResponse:
        status, message = 500, ""
        try:
            _serving(_console(request))
            return await handler(request)
        except topics.NotFound as exc:
            status, message = 404, str(exc.args[0] if exc.args else exc)
        except (ValueError, TypeError) as exc:
            status, message = 400, str(exc)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            status, message = exc.status, exc.reason
        if api:
            return _json({"error": message}, status)
        return web.Response(
            text=page(str(status), pages.error(status, message), poll_ms=None),
            status=status,
            content_type="text/html",
        )

    return wrapped


def _require_write(request: web.Request) -> None:
    if not _console(request).write:
        raise web.HTTPForbidden(reason="the console is read-only: start kafkito serve with --http-write")


# -- data, shared by the pages and the API ---------------------------------------------------


def _browse(request: web.Request) -> tuple[dict[str, Any], str]:
    topic = request.match_info["topic"]
    partition = int(request.match_info["partition"])
    fmt = request.query.get("format", "auto")
    if fmt not in messages.FORMATS:
        raise ValueError(f"format is one of {', '.join(messages.FORMATS)}")
    data = messages.browse(
        _console(request).broker,
        topic,
        partition,
        offset=_int(request, "offset"),
        time_ms=_time_ms(request.query.get("time", "")),
        limit=_int(request, "limit", 50) or 50,
        fmt=fmt,
    )
    return data, fmt


def _events(request: web.Request) -> list[dict[str, Any]]:
    console = _console(request)
    group_id = request.match_info["group"]
    events = console.broker.steering.group_timeline(group_id)
    if not events and console.broker.steering.describe_group(group_id) is None:
        raise topics.NotFound(f"no group {group_id}")
    return events


# -- pages -----------------------------------------------------------------------------------


async def overview_page(request: web.Request) -> web.Response:
    console = _console(request)
    return _html(request, "Overview", pages.overview(stats.overview(console.broker, console.rates)))


async def topics_page(request: web.Request) -> web.Response:
    return _html(request, "Topics", pages.topics(topics.topic_list(_console(request).broker)))


async def topic_page(request: web.Request) -> web.Response:
    console = _console(request)
    data = topics.topic_detail(console.broker, request.match_info["topic"])
    return _html(request, data["name"], pages.topic(data, console.write))


async def messages_page(request: web.Request) -> web.Response:
    data, fmt = _browse(request)
    main = pages.messages(data, fmt, request.query.get("offset", ""), request.query.get("time", ""))
    return _html(request, f"{data['topic']}-{data['partition']}", main, poll_ms=None)


async def groups_page(request: web.Request) -> web.Response:
    return _html(request, "Groups", pages.groups(groups.group_list(_console(request).broker)))


async def group_page(request: web.Request) -> web.Response:
    console = _console(request)
    data = groups.group_detail(console.broker, request.match_info["group"])
    events = console.broker.steering.group_timeline(data["group_id"])
    return _html(request, data["group_id"], pages.group(data, events, console.write))


async def timeline_page(request: web.Request) -> web.Response:
    events = _events(request)
    return _html(request, "Timeline", pages.timeline(request.match_info["group"], events))


# -- JSON API --------------------------------------------------------------------------------


async def api_overview(request: web.Request) -> web.Response:
    console = _console(request)
    return _json(stats.overview(console.broker, console.rates))


async def api_topics(request: web.Request) -> web.Response:
    internal = request.query.get("internal", "false").lower() in ("1", "true", "yes")
    return _json({"topics": topics.topic_list(_console(request).broker, internal)})


async def api_topic(request: web.Request) -> web.Response:
    return _json(topics.topic_detail(_console(request).broker, request.match_info["topic"]))


async def api_messages(request: web.Request) -> web.Response:
    return _json(_browse(request)[0])


async def api_groups(request: web.Request) -> web.Response:
    return _json({"groups": groups.group_list(_console(request).broker)})


async def api_group(request: web.Request) -> web.Response:
    return _json(groups.group_detail(_console(request).broker, request.match_info["group"]))


async def api_timeline(request: web.Request) -> web.Response:
    from kafkito.broker.console.timeline_view import layout

    events = _events(request)
    return _json({"group_id": request.match_info["group"], "events": events, **layout(events)})


async def api_delete_topic(request: web.Request) -> web.Response:
    _require_write(request)
    info = _console(request).broker.services.topics.delete(request.match_info["topic"])
    return _json({"deleted": info.name, "partitions": info.partitions})


async def api_reset(request: web.Request) -> web.Response:
    _require_write(request)
    try:
        body = await request.json()
    except json.JSONDecodeError:
        raise ValueError('the request body must be JSON: {"topic": ..., "to": "earliest"|"latest"}') from None
    if not isinstance(body, dict):
        raise ValueError("the request body must be a JSON object")
    result = await groups.reset_offsets(
        _console(request).broker,
        request.match_info["group"],
        str(body.get("topic", "")),
        str(body.get("to", "")),
    )
    return _json(result)


PAGES: tuple[tuple[str, str, Handler], ...] = (
    ("GET", "/console/", overview_page),
    ("GET", "/console/topics", topics_page),
    ("GET", "/console/topics/{topic}", topic_page),
    ("GET", "/console/topics/{topic}/{partition:\\d+}/messages", messages_page),
    ("GET", "/console/groups", groups_page),
    ("GET", "/console/groups/{group}", group_page),
    ("GET", "/console/groups/{group}/timeline", timeline_page),
)
API: tuple[tuple[str, str, Handler], ...] = (
    ("GET", "/api/overview", api_overview),
    ("GET", "/api/topics", api_topics),
    ("GET", "/api/topics/{topic}", api_topic),
    ("DELETE", "/api/topics/{topic}", api_delete_topic),
    ("GET", "/api/topics/{topic}/partitions/{partition:\\d+}/messages", api_messages),
    ("GET", "/api/groups", api_groups),
    ("GET", "/api/groups/{group}", api_group),
    ("GET", "/api/groups/{group}/timeline", api_timeline),
    ("POST", "/api/groups/{group}/reset-offsets", api_reset),
)


def _redirect(location: str) -> web.Response:
    return web.Response(status=303, headers={"Location": location})


async def _to_console(request: web.Request) -> web.Response:
    return _redirect("/console/")


def add_console_routes(app: web.Application, broker: Broker, write: bool, *, root: bool = True) -> None:
    """The console's routes on `app` (its own, or the control endpoint's); `root`: `/` leads to it."""
    app[CONSOLE_KEY] = Console(broker, write)
    for method, path, handler in PAGES:
        app.router.add_route(method, path, guarded(handler, api=False))
    for method, path, handler in API:
        app.router.add_route(method, path, guarded(handler, api=True))
    app.router.add_static("/console/static/", STATIC)
    app.router.add_get("/console", _to_console)
    if root:
        app.router.add_get("/", _to_console)
