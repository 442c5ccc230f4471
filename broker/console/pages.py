"""The console's pages as HTML: each renders the same data the `/api/...` routes answer."""

from __future__ import annotations

from typing import Any

from kafkito.broker.console.html import e, q, size, table, when
from kafkito.broker.console.timeline_view import layout, svg


def overview(data: dict[str, Any]) -> str:
    cards = [
        ("Node", data["node_id"]),
        ("Cluster", data["cluster_id"]),
        ("Bootstrap", data["bootstrap"]),
        ("Uptime", f"{data['uptime_s']:.0f} s"),
        ("Topics", data["topics"]),
        ("Partitions", data["partitions"]),
        ("Groups", data["groups"]),
        ("Connections", data["connections"]),
        ("Produce", f"{data['produce_messages_per_s']} msg/s"),
        ("Fetch", f"{data['fetch_requests_per_s']} req/s"),
    ]
    items = "".join(
        f'<div class="card" data-stat="{e(name.lower())}"><span>{e(name)}</span><b>{e(value)}</b></div>'
        for name, value in cards
    )
    return f'<h1>Overview</h1><div class="cards">{items}</div>'


def topics(rows: list[dict[str, Any]]) -> str:
    body = [
        (
            f'<a href="/console/topics/{q(t["name"])}">{e(t["name"])}</a>',
            e(t["partitions"]),
            e(t["messages"]),
            e(size(t["size_bytes"])),
        )
        for t in rows
    ]
    empty = "" if rows else '<p class="muted">No topics yet.</p>'
    return "<h1>Topics</h1>" + table(["Topic", "Partitions", "Messages", "Size"], body, "topics") + empty


def topic(data: dict[str, Any], write: bool) -> str:
    name = data["name"]
    parts = [
        (
            e(p["partition"]),
            e(p["log_start_offset"]),
            e(p["high_watermark"]),
            e(p["messages"]),
            e(size(p["size_bytes"])),
            e(p["segments"]),
            f'<a href="/console/topics/{q(name)}/{p["partition"]}/messages">browse</a>',
        )
        for p in data["partitions"]
    ]
    configs = [
        (e(c["name"]), e(c["value"]), e(c["source"].lower().replace("_config", ""))) for c in data["configs"]
    ]
    delete = ""
    if write:
        delete = (
            f'<form class="danger" data-method="DELETE" data-api="/api/topics/{q(name)}" '
            f'data-confirm="Delete topic {e(name)}?" data-then="/console/topics">'
            '<button id="delete-topic">Delete topic</button></form>'
        )
    return (
        f'<h1>Topic <span id="topic-name">{e(name)}</span></h1><p class="muted">id {e(data["topic_id"])}</p>'
        + table(["Partition", "Start", "End (HW)", "Messages", "Size", "Segments", ""], parts, "partitions")
        + "<h2>Configs</h2>"
        + table(["Name", "Value", "Source"], configs, "configs")
        + delete
    )


def _shown(value: dict[str, Any] | None) -> str:
    if value is None:
        return '<i class="muted">null</i>'
    return f'<pre class="{e(value["format"])}">{e(value["shown"])}</pre>'


def messages(data: dict[str, Any], fmt: str, offset: str, time_text: str) -> str:
    topic, partition = data["topic"], data["partition"]
    options = "".join(
        f'<option value="{f}"{" selected" if f == fmt else ""}>{f}</option>'
        for f in ("auto", "text", "json", "hex")
    )
    form = (
        f'<form method="get" class="browse">'
        f'<label>from offset <input name="offset" value="{e(offset)}" size="8"></label>'
        f'<label>or from time <input name="time" value="{e(time_text)}" '
        'placeholder="ISO time or epoch ms" size="24"></label>'
        f'<label>show <select name="format">{options}</select></label>'
        '<label>limit <input name="limit" value="50" size="4"></label><button>Go</button></form>'
    )
    rows = []
    for r in data["records"]:
        headers = "".join(f"<div>{e(h['key'])}: {_shown(h['value'])}</div>" for h in r["headers"])
        rows.append((e(r["offset"]), e(when(r["timestamp"])), _shown(r["key"]), _shown(r["value"]), headers))
    more = ""
    if data["records"] and data["next_offset"] < data["high_watermark"]:
        more = (
            f'<p><a id="next" href="?offset={data["next_offset"]}&format={e(fmt)}">'
            f"next from offset {data['next_offset']}</a></p>"
        )
    return (
        f'<h1>Messages of <a href="/console/topics/{q(topic)}">{e(topic)}</a> partition {partition}</h1>'
        f'<p class="muted">offsets {data["log_start_offset"]} to {data["high_watermark"]}; '
        f"showing from {data['start_offset']}</p>{form}"
        + table(["Offset", "Timestamp", "Key", "Value", "Headers"], rows, "messages")
        + more
    )


def groups(rows: list[dict[str, Any]]) -> str:
    body = [
        (
            f'<a href="/console/groups/{q(g["group_id"])}">{e(g["group_id"])}</a>',
            e(g["state"]),
            e(g["protocol"]),
            e(g["members"]),
            e(g["generation"]),
            f'<span class="lag">{e(g["lag"])}</span>',
            f'<a href="/console/groups/{q(g["group_id"])}/timeline">timeline</a>',
        )
        for g in rows
    ]
    empty = "" if rows else '<p class="muted">No consumer groups yet.</p>'
    return (
        "<h1>Consumer groups</h1>"
        + table(["Group", "State", "Protocol", "Members", "Generation", "Lag", ""], body, "groups")
        + empty
    )


def group(data: dict[str, Any], events: list[dict[str, Any]], write: bool) -> str:
    gid = data["group_id"]
    members = [
        (
            e(m["member_id"]),
            e(m.get("group_instance_id") or ""),
            e(m["client_id"]),
            e(m["client_host"]),
            e(
                ", ".join(
                    f"{a['topic']}[{','.join(map(str, a['partitions']))}]"
                    for a in m.get("assignment", [])
                    if a["partitions"]
                )
                or "(none)"
            ),
        )
        for m in data["members"]
    ]
    offsets = [
        (
            e(o["topic"]),
            e(o["partition"]),
            e(o["committed_offset"] if o["committed_offset"] is not None else "-"),
            e(o["end_offset"]),
            f'<span class="lag">{e(o["lag"] if o["lag"] is not None else "-")}</span>',
            e(o["member_id"] or ""),
        )
        for o in data["offsets"]
    ]
    facts = (
        f'<p class="facts"><span>state <b id="group-state">{e(data["state"])}</b></span>'
        f"<span>protocol <b>{e(data['protocol_kind'])}</b> ({e(data.get('protocol') or '-')})</span>"
        f'<span>generation <b id="group-generation">{e(data["generation"])}</b></span>'
        f'<span>lag <b id="group-lag">{e(data["lag"])}</b></span></p>'
    )
    reset = ""
    if write:
        reset = (
            f'<form class="danger" data-method="POST" data-api="/api/groups/{q(gid)}/reset-offsets">'
            '<label>reset offsets of topic <input name="topic" size="16"></label>'
            '<select name="to"><option>earliest</option><option>latest</option></select>'
            '<button id="reset-offsets">Reset (group must be empty)</button></form>'
        )
    return (
        f'<h1>Group <span id="group-id">{e(gid)}</span></h1>{facts}'
        + "<h2>Members</h2>"
        + table(["Member", "Instance", "Client id", "Host", "Assignment"], members, "members")
        + "<h2>Offsets and lag</h2>"
        + table(["Topic", "Partition", "Committed", "End", "Lag", "Member"], offsets, "offsets")
        + f'<h2>Rebalance timeline <a href="/console/groups/{q(gid)}/timeline">(full page)</a></h2>'
        + f'<div class="timeline-box">{svg(events)}</div>{reset}'
    )


def timeline(group_id: str, events: list[dict[str, Any]]) -> str:
    view = layout(events)
    rows = [
        (
            e(b["generation"]),
            e(when(b["start_ms"])),
            e(b["reason"] or ""),
            e(" → ".join(s for s in b["states"] if s)),
            e(len(b["members"])),
        )
        for b in reversed(view["generations"])
    ]
    legend = "".join(
        f'<span class="key mark-{kind}"><svg width="10" height="10">'
        f'<circle cx="5" cy="5" r="4" fill="{color}"/></svg>{kind}</span>'
        for kind, color in (
            ("join", "#2e7d32"),
            ("sync", "#1565c0"),
            ("leave", "#616161"),
            ("expiry", "#c62828"),
            ("removed", "#ef6c00"),
            ("replaced", "#6a1b9a"),
        )
    )
    return (
        f'<h1>Rebalance timeline of <a href="/console/groups/{q(group_id)}">{e(group_id)}</a></h1>'
        f'<p class="legend">{legend}</p><div class="timeline-box">{svg(events)}</div>'
        "<h2>Generations</h2>"
        + table(["Generation", "Started (broker clock)", "Reason", "States", "Members"], rows, "generations")
    )


def error(status: int, message: str) -> str:
    return f'<h1>{status}</h1><p class="error">{e(message)}</p>'
