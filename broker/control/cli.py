"""`kafkito control ...`: the control endpoint's verbs on the command line.

Each verb is one request; the answer is printed as JSON (a list as one JSON object per line), a
failure as one line on stderr with exit status 1. The endpoint is `--url`, or $KAFKITO_CONTROL.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from kafkito.broker.control.client import ControlClient

ENV_URL = "KAFKITO_CONTROL"
Verb = Callable[["ControlClient", argparse.Namespace], Any]


def _quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _advance(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("POST", "/clock/advance", {"ms": args.ms})


def _fault_add(client: ControlClient, args: argparse.Namespace) -> Any:
    body = {
        "api": args.api,
        "error": args.error,
        "count": args.count,
        "topic": args.topic,
        "partition": args.partition,
        "group": args.group,
        "client_id": args.client_id,
        "delay_ms": args.delay_ms,
    }
    body = {k: v for k, v in body.items() if v is not None}
    if args.forever:
        body["count"] = None  # in force until removed
    return client.call("POST", "/faults", body)


def _fault_list(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("GET", "/faults")["faults"]


def _fault_clear(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("DELETE", "/faults")["removed"]


def _clock(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("GET", "/clock")


def _fault_remove(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("DELETE", f"/faults/{_quote(args.id)}")


def _fault_wait(client: ControlClient, args: argparse.Namespace) -> Any:
    body = {"fired": args.fired, "timeout": args.timeout}
    return client.call("POST", f"/faults/{_quote(args.id)}/wait", body, wait_s=args.timeout)


def _group_describe(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("GET", f"/groups/{_quote(args.group)}")


def _group_wait(client: ControlClient, args: argparse.Namespace) -> Any:
    body = {"state": args.state, "members": args.members, "timeout": args.timeout}
    return client.call("POST", f"/groups/{_quote(args.group)}/wait", body, wait_s=args.timeout)


def _timeline(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("GET", f"/groups/{_quote(args.group)}/timeline")["events"]


def _topology(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("GET", "/topology?internal=true" if args.internal else "/topology")


def _node_stop(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("POST", f"/nodes/{args.node_id}/stop")


def _node_start(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("POST", f"/nodes/{args.node_id}/start")


def _leader_move(client: ControlClient, args: argparse.Namespace) -> Any:
    path = f"/topics/{_quote(args.topic)}/partitions/{args.partition}/leader"
    return client.call("POST", path, {"node": args.node_id})


def _coordinator_path(args: argparse.Namespace) -> str:
    kind = "transactions" if args.transaction else "groups"
    return f"/{kind}/{_quote(args.key)}/coordinator"


def _coordinator_show(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("GET", _coordinator_path(args))


def _coordinator_move(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("POST", _coordinator_path(args), {"node": args.node_id})


def _disconnect(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("POST", "/connections/disconnect", {"client_id": args.client_id})


def _blackhole(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("POST", "/connections/blackhole", {"client_id": args.client_id})


def _unblackhole(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("POST", "/connections/unblackhole", {"client_id": args.client_id})


def _verb(parser: argparse.ArgumentParser, verb: Verb) -> argparse.ArgumentParser:
    parser.set_defaults(control_verb=verb)
    return parser


def _add_fault_verbs(sub: Any) -> None:
    fault = sub.add_parser("fault", help="fault rules: add, list, remove, clear, wait")
    verbs = fault.add_subparsers(dest="fault_command", required=True, metavar="{add,list,remove,clear,wait}")
    add = _verb(verbs.add_parser("add", help="answer matching requests with an error or delay"), _fault_add)
    add.add_argument("api", help="a Kafka API by name or key (Produce, 0)")
    add.add_argument("error", help="a Kafka error by name or code (NOT_LEADER_OR_FOLLOWER, 6)")
    add.add_argument("--count", type=int, default=1, help="matching requests it answers (default 1)")
    add.add_argument("--forever", action="store_true", help="no count: in force until removed")
    add.add_argument("--topic", help="only requests naming this topic")
    add.add_argument("--partition", type=int, help="only this partition of the topic")
    add.add_argument("--group", help="only requests for this group")
    add.add_argument("--client-id", help="only requests from this client id")
    add.add_argument("--delay-ms", type=int, help="hold matching requests this long")
    _verb(verbs.add_parser("list", help="every rule, one JSON object per line"), _fault_list)
    remove = _verb(verbs.add_parser("remove", help="retire a rule"), _fault_remove)
    remove.add_argument("id")
    _verb(verbs.add_parser("clear", help="retire every rule (prints those removed)"), _fault_clear)
    wait = _verb(verbs.add_parser("wait", help="wait until a rule fired"), _fault_wait)
    wait.add_argument("id")
    wait.add_argument("--fired", type=int, default=1, help="times it must have fired in all (default 1)")
    wait.add_argument("--timeout", type=float, default=30.0, help="seconds (default 30)")


def _add_group_verbs(sub: Any) -> None:
    group = sub.add_parser("group", help="consumer groups: describe, wait")
    verbs = group.add_subparsers(dest="group_command", required=True, metavar="{describe,wait}")
    describe = _verb(verbs.add_parser("describe", help="state, generation and members"), _group_describe)
    describe.add_argument("group")
    wait = _verb(verbs.add_parser("wait", help="wait for a state (and a member count)"), _group_wait)
    wait.add_argument("group")
    wait.add_argument("--state", default="Stable", help="default Stable")
    wait.add_argument("--members", type=int, help="number of members")
    wait.add_argument("--timeout", type=float, default=30.0, help="seconds (default 30)")


def _add_topology_verbs(sub: Any) -> None:
    topology = _verb(sub.add_parser("topology", help="the cluster's nodes and partition leaders"), _topology)
    topology.add_argument("--internal", action="store_true", help="list the internal topics too")
    node = sub.add_parser("node", help="cluster nodes: stop, start")
    verbs = node.add_subparsers(dest="node_command", required=True, metavar="{stop,start}")
    stop = _verb(verbs.add_parser("stop", help="take a node down (its leaders move)"), _node_stop)
    stop.add_argument("node_id", type=int)
    start = _verb(verbs.add_parser("start", help="bring a stopped node back"), _node_start)
    start.add_argument("node_id", type=int)
    leader = sub.add_parser("leader", help="partition leaders: move")
    leader_verbs = leader.add_subparsers(dest="leader_command", required=True, metavar="{move}")
    move = _verb(leader_verbs.add_parser("move", help="make a node a partition's leader"), _leader_move)
    move.add_argument("topic")
    move.add_argument("partition", type=int)
    move.add_argument("node_id", type=int)
    coordinator = sub.add_parser("coordinator", help="group and transaction coordinators: show, move")
    coord_verbs = coordinator.add_subparsers(dest="coordinator_command", required=True, metavar="{show,move}")
    show = _verb(coord_verbs.add_parser("show", help="the node coordinating a group"), _coordinator_show)
    moved = _verb(coord_verbs.add_parser("move", help="move a coordinator to a node"), _coordinator_move)
    for parser in (show, moved):
        parser.add_argument("key", help="a group id (a transactional id with --transaction)")
        parser.add_argument("--transaction", action="store_true", help="KEY is a transactional id")
    moved.add_argument("node_id", type=int)


def add_control_parser(sub: Any) -> None:
    """Add `control` and its verbs to the `kafkito` command's subparsers."""
    control = sub.add_parser("control", help="steer a broker served with --control")
    control.add_argument("--url", help=f"the control endpoint, http://HOST:PORT (default ${ENV_URL})")
    verbs = control.add_subparsers(dest="control_command", required=True)
    advance = _verb(verbs.add_parser("advance", help="move the broker clock forward"), _advance)
    advance.add_argument("ms", type=int, help="milliseconds")
    _verb(verbs.add_parser("clock", help="the broker clock's time in ms"), _clock)
    _add_fault_verbs(verbs)
    _add_group_verbs(verbs)
    timeline = _verb(verbs.add_parser("timeline", help="a group's recorded events, one per line"), _timeline)
    timeline.add_argument("group")
    _add_topology_verbs(verbs)
    disconnect = _verb(verbs.add_parser("disconnect", help="drop connections now"), _disconnect)
    disconnect.add_argument("client_id", nargs="?", help="only this client id's (default: all)")
    hole = _verb(verbs.add_parser("blackhole", help="stop answering a client"), _blackhole)
    hole.add_argument("client_id")
    unhole = _verb(verbs.add_parser("unblackhole", help="answer a client again"), _unblackhole)
    unhole.add_argument("client_id")
    _url_anywhere(control)


def _url_anywhere(control: argparse.ArgumentParser) -> None:
    """`--url` after any verb too (`kafkito control fault add ... --url U`), as before them: a verb's
    parser sets it only when given (SUPPRESS), so the one given earlier is kept."""
    from kafkito.broker.cli_parser import walk

    for parser in walk(control):
        if parser is not control:
            parser.add_argument("--url", default=argparse.SUPPRESS, help="the control endpoint (as above)")


def _print(result: Any, out: TextIO) -> None:
    if isinstance(result, list):
        for item in result:
            print(json.dumps(item), file=out)
    else:
        print(json.dumps(result), file=out)


def run_control(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    url = args.url or os.environ.get(ENV_URL)
    if not url:
        print(f"kafkito control: no endpoint: pass --url http://HOST:PORT or set ${ENV_URL}", file=err)
        return 2
    # Imported here: urllib.request (http.client, email, ssl) would cost every `kafkito serve` ~15 ms.
    from kafkito.broker.control.client import ControlClient, ControlClientError

    try:
        result = args.control_verb(ControlClient(url), args)
    except ControlClientError as exc:
        print(f"kafkito control: {exc}", file=err)
        return 1
    _print(result, out)
    return 0
