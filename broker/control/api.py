"""The control endpoint's JSON API: one aiohttp handler per operation, each a call on the `Steering`.

Every answer is a JSON object; a failure is `{"error": "..."}` with 400 (bad input), 404 (no such
fault or group), 408 (a wait timed out; the body carries what was last seen) or 503 (the broker is
not serving yet). Waits poll the broker on its own loop, so a wait never blocks other requests.
The routes are listed in `ROUTES` and documented in docs/testing.md.
"""

from __future__ import annotations

import asyncio
import base64
import enum
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web

from kafkito.broker.control.address import ControlAddress
from kafkito.broker.control.body import Body, BodyError
from kafkito.broker.control.browser_guard import guarded_application
from kafkito.broker.control.steering_view import BrokerView, FaultRuleView

log = structlog.get_logger("kafkito.control")

BROKER_KEY = web.AppKey("broker", BrokerView)
# Rules added here, kept after they are used up or removed, so that a wait or a look after the fact works.
ADDED_RULES_KEY = web.AppKey("added_rules", OrderedDict[str, FaultRuleView])
ADDED_RULES_KEPT = 1000
POLL_INTERVAL_S = 0.01  # how often a wait looks again; the broker's loop is not blocked in between
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ControlError(Exception):
    """An answer other than 200: its HTTP status, message and any extra fields for the body."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.extra = extra


class NotServing(ControlError):
    def __init__(self, message: str = "the broker is not serving yet") -> None:
        super().__init__(503, message)


def _json_default(value: object) -> object:
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, enum.Enum):
        return value.name if isinstance(value.value, int) else value.value
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def answer(body: object, status: int = 200) -> web.Response:
    text = json.dumps(body, default=_json_default)
    return web.Response(text=text, status=status, content_type="application/json")


@web.middleware
async def errors_as_json(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure answers JSON with one message; only an unexpected one is logged with its trace."""
    try:
        return await handler(request)
    except ControlError as exc:
        return answer({"error": str(exc), **exc.extra}, exc.status)
    except (BodyError, ValueError, TypeError) as exc:
        return answer({"error": str(exc)}, 400)
    except web.HTTPException as exc:
        return answer({"error": exc.reason}, exc.status)
    except Exception as exc:
        log.exception("control.request_failed", method=request.method, path=request.path)
        return answer({"error": f"{type(exc).__name__}: {exc}"}, 500)


def _broker(request: web.Request) -> BrokerView:
    return request.app[BROKER_KEY]


async def _body(request: web.Request) -> Body:
    if not request.can_read_body:
        return Body({})
    try:
        data = await request.json()
    except json.JSONDecodeError as exc:
        raise BodyError(f"the request body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BodyError("the request body must be a JSON object")
    return Body(data)


async def _poll(check: Callable[[], bool], timeout_s: float) -> bool:
    """True once `check()` holds, False when `timeout_s` passed first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not check():
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(POLL_INTERVAL_S)
    return True


# -- clock --------------------------------------------------------------------------------------


async def clock(request: web.Request) -> web.Response:
    return answer({"now_ms": _broker(request).steering().now_ms()})


async def advance(request: web.Request) -> web.Response:
    ms = (await _body(request)).integer("ms", minimum=0)
    now_ms = _broker(request).steering().advance(ms)
    return answer({"advanced_ms": ms, "now_ms": now_ms})


# -- faults -------------------------------------------------------------------------------------


def _find_rule(request: web.Request, *, in_force: bool = False) -> FaultRuleView:
    """The rule named in the path: one in force, or (unless `in_force`) one added here earlier."""
    rule_id = request.match_info["rule_id"]
    for rule in _broker(request).steering().faults():
        if str(rule.id) == rule_id:
            return rule
    added = None if in_force else request.app[ADDED_RULES_KEY].get(rule_id)
    if added is None:
        raise ControlError(404, f"no fault rule {rule_id}{' in force' if in_force else ''}")
    return added


async def list_faults(request: web.Request) -> web.Response:
    return answer({"faults": [rule.as_dict() for rule in _broker(request).steering().faults()]})


async def clear_faults(request: web.Request) -> web.Response:
    steering = _broker(request).steering()
    removed = [rule.as_dict() for rule in steering.faults()]
    steering.clear_faults()
    return answer({"removed": removed})


async def add_fault(request: web.Request) -> web.Response:
    body = await _body(request)
    steering = _broker(request).steering()
    rule = steering.inject(
        body.name_or_number("api"),
        body.name_or_number("error", required=False),
        body.count("count", default=1),
        topic=body.text("topic", default=None),
        partition=body.integer("partition", default=None, minimum=0),
        group=body.text("group", default=None),
        client_id=body.text("client_id", default=None),
        delay_ms=body.integer("delay_ms", default=0, minimum=0),
    )
    added = request.app[ADDED_RULES_KEY]
    added[str(rule.id)] = rule
    while len(added) > ADDED_RULES_KEPT:
        added.popitem(last=False)
    return answer(rule.as_dict(), 201)


async def get_fault(request: web.Request) -> web.Response:
    return answer(_find_rule(request).as_dict())


async def remove_fault(request: web.Request) -> web.Response:
    rule = _find_rule(request, in_force=True)
    rule.remove()
    return answer(rule.as_dict())


async def wait_fault(request: web.Request) -> web.Response:
    """Wait until the rule fired `fired` times in all (default 1)."""
    rule = _find_rule(request)
    body = await _body(request)
    fired = body.integer("fired", default=1, minimum=1)
    if not await _poll(lambda: rule.fired >= fired, body.timeout()):
        message = f"fault rule {rule.id} fired {rule.fired} of {fired} times"
        raise ControlError(408, message, rule=rule.as_dict())
    return answer(rule.as_dict())


# -- connections ----------------------------------------------------------------------------------


async def disconnect(request: web.Request) -> web.Response:
    client_id = (await _body(request)).text("client_id", default=None)
    return answer({"client_id": client_id, "dropped": _broker(request).steering().disconnect(client_id)})


async def blackhole(request: web.Request) -> web.Response:
    client_id = (await _body(request)).text("client_id")
    _broker(request).steering().blackhole(client_id)
    return answer({"client_id": client_id, "blackholed": True})


async def unblackhole(request: web.Request) -> web.Response:
    client_id = (await _body(request)).text("client_id")
    _broker(request).steering().unblackhole(client_id)
    return answer({"client_id": client_id, "blackholed": False})


# -- groups -------------------------------------------------------------------------------------


async def describe_group(request: web.Request) -> web.Response:
    group_id = request.match_info["group_id"]
    described = _broker(request).steering().describe_group(group_id)
    if described is None:
        raise ControlError(404, f"no group {group_id}")
    return answer(described)


def _group_matches(described: dict[str, Any] | None, state: str | None, members: int | None) -> bool:
    if described is None:
        return False
    if state is not None and str(described.get("state", "")).lower() != state.lower():
        return False
    return members is None or len(described.get("members") or ()) == members


async def wait_group(request: web.Request) -> web.Response:
    """Wait until the group is in `state` (default Stable) with `members` members (any number if absent)."""
    group_id = request.match_info["group_id"]
    body = await _body(request)
    state = body.text("state", default="Stable")
    members = body.integer("members", default=None, minimum=0)
    steering = _broker(request).steering()
    seen: list[dict[str, Any] | None] = [None]

    def reached() -> bool:
        seen[0] = steering.describe_group(group_id)
        return _group_matches(seen[0], state, members)

    if not await _poll(reached, body.timeout()):
        last = seen[0]
        last_state = last.get("state") if last is not None else None
        count = len(last.get("members") or ()) if last is not None else 0
        raise ControlError(
            408,
            f"group {group_id} is {last_state or 'unknown'} with {count} members, "
            f"not {state}{'' if members is None else f' with {members} members'}",
            last_seen=last,
        )
    return answer(seen[0])


async def group_timeline(request: web.Request) -> web.Response:
    group_id = request.match_info["group_id"]
    return answer({"group": group_id, "events": _broker(request).steering().group_timeline(group_id)})


# -- topology -----------------------------------------------------------------------------------


async def topology(request: web.Request) -> web.Response:
    """Nodes and partitions; `?internal=true` adds `__consumer_offsets` and `__transaction_state`."""
    internal = request.query.get("internal", "false").lower() in ("1", "true", "yes")
    if internal:
        return answer(_broker(request).steering().topology(internal=True))
    return answer(_broker(request).topology())


def _node_id(request: web.Request) -> int:
    text = request.match_info["node_id"]
    try:
        return int(text)
    except ValueError:
        raise ControlError(400, f"a node id is a number, not {text!r}") from None


def _topology_op(op: Callable[[], Any]) -> Any:
    """Run a topology operation; an unknown node or partition is a 404, a refused move a 400."""
    try:
        return op()
    except LookupError as exc:
        raise ControlError(404, str(exc.args[0] if exc.args else exc)) from None


async def stop_node(request: web.Request) -> web.Response:
    node_id = _node_id(request)
    steering = _broker(request).steering()
    _topology_op(lambda: steering.stop_node(node_id))
    return answer(steering.topology())


async def start_node(request: web.Request) -> web.Response:
    node_id = _node_id(request)
    steering = _broker(request).steering()
    try:
        await steering.start_node(node_id)
    except LookupError as exc:
        raise ControlError(404, str(exc.args[0] if exc.args else exc)) from None
    return answer(steering.topology())


async def move_leader(request: web.Request) -> web.Response:
    """Body: `{"node": N}`; the partition's leader becomes node N."""
    topic = request.match_info["topic"]
    try:
        partition = int(request.match_info["partition"])
    except ValueError:
        raise ControlError(400, "a partition is a number") from None
    node_id = (await _body(request)).integer("node", minimum=0)
    steering = _broker(request).steering()
    return answer(_topology_op(lambda: steering.move_leader(topic, partition, node_id)))


def _coordinator_key(request: web.Request) -> tuple[str, bool]:
    """The group id or transactional id in the path, and whether it is a transactional id."""
    if "transactional_id" in request.match_info:
        return request.match_info["transactional_id"], True
    return request.match_info["group_id"], False


async def coordinator(request: web.Request) -> web.Response:
    key, transaction = _coordinator_key(request)
    node_id = _broker(request).steering().coordinator(key, transaction=transaction)
    return answer({"key": key, "node_id": node_id})


async def move_coordinator(request: web.Request) -> web.Response:
    """Body: `{"node": N}`; the leader of the key's `__consumer_offsets` (`__transaction_state`)
    partition becomes node N, and with it the coordinator."""
    key, transaction = _coordinator_key(request)
    node_id = (await _body(request)).integer("node", minimum=0)
    steering = _broker(request).steering()
    moved = _topology_op(lambda: steering.move_coordinator(key, node_id, transaction=transaction))
    return answer({"key": key, "node_id": node_id, **moved})


async def index(request: web.Request) -> web.Response:
    return answer({"kafkito_control": 1, "routes": [f"{method} {path}" for method, path, _ in ROUTES]})


ROUTES: tuple[tuple[str, str, Handler], ...] = (
    ("GET", "/", index),
    ("GET", "/clock", clock),
    ("POST", "/clock/advance", advance),
    ("GET", "/faults", list_faults),
    ("POST", "/faults", add_fault),
    ("DELETE", "/faults", clear_faults),
    ("GET", "/faults/{rule_id}", get_fault),
    ("DELETE", "/faults/{rule_id}", remove_fault),
    ("POST", "/faults/{rule_id}/wait", wait_fault),
    ("POST", "/connections/disconnect", disconnect),
    ("POST", "/connections/blackhole", blackhole),
    ("POST", "/connections/unblackhole", unblackhole),
    ("GET", "/groups/{group_id}", describe_group),
    ("POST", "/groups/{group_id}/wait", wait_group),
    ("GET", "/groups/{group_id}/timeline", group_timeline),
    ("GET", "/topology", topology),
    ("POST", "/nodes/{node_id}/stop", stop_node),
    ("POST", "/nodes/{node_id}/start", start_node),
    ("POST", "/topics/{topic}/partitions/{partition}/leader", move_leader),
    ("GET", "/groups/{group_id}/coordinator", coordinator),
    ("POST", "/groups/{group_id}/coordinator", move_coordinator),
    ("GET", "/transactions/{transactional_id}/coordinator", coordinator),
    ("POST", "/transactions/{transactional_id}/coordinator", move_coordinator),
)


def build_app(broker: BrokerView, bound: ControlAddress) -> web.Application:
    """The control routes, behind the browser guard of an endpoint bound to `bound`."""
    app = guarded_application(bound, errors_as_json)
    app[BROKER_KEY] = broker
    app[ADDED_RULES_KEY] = OrderedDict()
    for method, path, handler in ROUTES:
        app.router.add_route(method, path, handler)
    return app
