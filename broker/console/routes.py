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

from kafkito.broker.console import admin, groups, messages, pages, search, stats, topics
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
        except admin.AdminError as exc:  # the broker's own refusal, as Kafka's tools print it
            status, message = (404 if exc.name == "UNKNOWN_TOPIC_OR_PARTITION" else 400), str(exc)
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


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except json.JSONDecodeError:
        raise ValueError("the request body must be JSON") from None
    if not isinstance(body, dict):
        raise ValueError("the request body must be a JSON object")
    return body


def _opt_int(body: dict[str, Any], name: str) -> int | None:
    value = body.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"{name} must be a number")
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name} must be a number, not {value!r}") from None


def _pairs(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{what} must be an object of names to values")
    return {k: str(v) for k, v in value.items()}


def _names(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{what} must be a list of names")
    return value


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


def _search(request: web.Request) -> dict[str, Any]:
    fmt = request.query.get("format", "auto")
    if fmt not in messages.FORMATS:
        raise ValueError(f"format is one of {', '.join(messages.FORMATS)}")
    filters = search.Filters(
        key=request.query.get("key", ""),
        value=request.query.get("value", ""),
        header=request.query.get("header", ""),
        from_ms=_time_ms(request.query.get("from", "")),
        to_ms=_time_ms(request.query.get("to", "")),
    )
    return search.search(
        _console(request).broker,
        request.match_info["topic"],
        filters,
        limit=_int(request, "limit", 50) or 50,
        partition=_int(request, "partition"),
        fmt=fmt,
    )


def _events(request: web.Request) -> list[dict[str, Any]]:
    console = _console(request)
    group_id = request.match_info["group"]
    events = console.broker.steering.group_timeline(group_id)
    known = console.broker.steering.describe_group(group_id) is not None
    if not events and not known and console.broker.coordinator.get_streams_group(group_id) is None:
        raise topics.NotFound(f"no group {group_id}")
    return events


# -- pages -----------------------------------------------------------------------------------


async def overview_page(request: web.Request) -> web.Response:
    console = _console(request)
    return _html(request, "Overview", pages.overview(stats.overview(console.broker, console.rates)))


def _internal(request: web.Request) -> bool:
    return request.query.get("internal", "false").lower() in ("1", "true", "yes")


async def topics_page(request: web.Request) -> web.Response:
    console, internal = _console(request), _internal(request)
    rows = topics.topic_list(console.broker, internal)
    return _html(request, "Topics", pages.topics(rows, internal, console.write))


async def topic_page(request: web.Request) -> web.Response:
    console = _console(request)
    data = await topics.topic_detail(console.broker, request.match_info["topic"])
    return _html(request, data["name"], pages.topic(data, console.write))


async def search_page(request: web.Request) -> web.Response:
    from kafkito.broker.console.pages_browse import search_page as render

    console = _console(request)
    data = _search(request)
    info = console.broker.logs.topic(data["topic"])
    count = info.partitions if info is not None else 0
    main = render(data, dict(request.query), count, console.write)
    return _html(request, data["topic"], main, poll_ms=None)


async def cluster_page(request: web.Request) -> web.Response:
    """ACLs, users, transactions, broker configs, features: the last path segment says which."""
    from kafkito.broker.console import cluster, pages_cluster

    broker = _console(request).broker
    which = request.path.rstrip("/").rsplit("/", 1)[-1]
    if which == "acls":
        return _html(request, "ACLs", pages_cluster.acls(await cluster.acls(broker)))
    if which == "users":
        return _html(request, "SCRAM users", pages_cluster.users(await cluster.scram_users(broker)))
    if which == "transactions":
        return _html(request, "Transactions", pages_cluster.transactions(await cluster.transactions(broker)))
    if which == "features":
        return _html(request, "Features", pages_cluster.features(await cluster.features(broker)))
    return _html(request, "Broker", pages_cluster.broker_configs(await cluster.broker_configs(broker)), None)


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
    return _json({"topics": topics.topic_list(_console(request).broker, _internal(request))})


async def api_topic(request: web.Request) -> web.Response:
    return _json(await topics.topic_detail(_console(request).broker, request.match_info["topic"]))


async def api_search(request: web.Request) -> web.Response:
    return _json(_search(request))


async def api_cluster(request: web.Request) -> web.Response:
    from kafkito.broker.console import cluster

    broker = _console(request).broker
    which = request.path.rstrip("/").rsplit("/", 1)[-1]
    if which == "acls":
        return _json({"acls": await cluster.acls(broker)})
    if which == "users":
        return _json({"users": await cluster.scram_users(broker)})
    if which == "transactions":
        return _json({"transactions": await cluster.transactions(broker)})
    if which == "features":
        return _json(await cluster.features(broker))
    return _json(await cluster.broker_configs(broker))


async def api_create_topic(request: web.Request) -> web.Response:
    from kafkito.broker.console import writes

    _require_write(request)
    body = await _body(request)
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError('name the topic: {"name": ...}')
    created = await writes.create_topic(
        _console(request).broker,
        name,
        _opt_int(body, "partitions") or -1,
        _opt_int(body, "replication_factor") or -1,
        _pairs(body.get("configs"), "configs"),
        validate_only=bool(body.get("validate_only")),
    )
    return _json(created, 201 if not created["validate_only"] else 200)


async def api_alter_configs(request: web.Request) -> web.Response:
    from kafkito.broker.console import configs

    _require_write(request)
    body = await _body(request)
    result = await configs.alter_topic(
        _console(request).broker,
        request.match_info["topic"],
        _pairs(body.get("set"), "set"),
        _names(body.get("delete"), "delete"),
        validate_only=bool(body.get("validate_only")),
    )
    return _json(result)


async def api_produce(request: web.Request) -> web.Response:
    from kafkito.broker.console import writes

    _require_write(request)
    body = await _body(request)
    headers = body.get("headers") or []
    if not isinstance(headers, list) or not all(
        isinstance(h, dict) and isinstance(h.get("key"), str) for h in headers
    ):
        raise ValueError('headers must be a list of {"key": name, "value": text or null}')
    result = await writes.produce(
        _console(request).broker,
        request.match_info["topic"],
        body.get("key"),
        body.get("value"),
        [(h["key"], h.get("value")) for h in headers],
        _opt_int(body, "partition"),
    )
    return _json(result)


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
    body = await _body(request)
    partitions = body.get("partitions")
    if partitions is not None and (
        not isinstance(partitions, list)
        or not all(isinstance(p, int) and not isinstance(p, bool) for p in partitions)
    ):
        raise ValueError("partitions must be a list of partition numbers")
    time_value = body.get("time")
    result = await groups.reset_offsets(
        _console(request).broker,
        request.match_info["group"],
        str(body.get("topic", "")),
        str(body.get("to", "")),
        partitions=partitions,
        offset=_opt_int(body, "offset"),
        time_ms=_time_ms(str(time_value)) if time_value not in (None, "") else None,
        preview=bool(body.get("preview")),
    )
    return _json(result)


PAGES: tuple[tuple[str, str, Handler], ...] = (
    ("GET", "/console/", overview_page),
    ("GET", "/console/topics", topics_page),
    ("GET", "/console/topics/{topic}", topic_page),
    ("GET", "/console/topics/{topic}/{partition:\\d+}/messages", messages_page),
    ("GET", "/console/topics/{topic}/messages", search_page),
    ("GET", "/console/acls", cluster_page),
    ("GET", "/console/users", cluster_page),
    ("GET", "/console/transactions", cluster_page),
    ("GET", "/console/broker", cluster_page),
    ("GET", "/console/features", cluster_page),
    ("GET", "/console/groups", groups_page),
    ("GET", "/console/groups/{group}", group_page),
    ("GET", "/console/groups/{group}/timeline", timeline_page),
)
API: tuple[tuple[str, str, Handler], ...] = (
    ("GET", "/api/overview", api_overview),
    ("GET", "/api/topics", api_topics),
    ("GET", "/api/topics/{topic}", api_topic),
    ("DELETE", "/api/topics/{topic}", api_delete_topic),
    ("POST", "/api/topics", api_create_topic),
    ("GET", "/api/topics/{topic}/partitions/{partition:\\d+}/messages", api_messages),
    ("GET", "/api/topics/{topic}/messages", api_search),
    ("POST", "/api/topics/{topic}/records", api_produce),
    ("POST", "/api/topics/{topic}/configs", api_alter_configs),
    ("GET", "/api/acls", api_cluster),
    ("GET", "/api/users", api_cluster),
    ("GET", "/api/transactions", api_cluster),
    ("GET", "/api/broker/configs", api_cluster),
    ("GET", "/api/features", api_cluster),
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
