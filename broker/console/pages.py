"""The console's pages as HTML: each renders the same data the `/api/...` routes answer."""

from __future__ import annotations

from typing import Any

from kafkito.broker.console.html import e, offset_rows, q, size, table, when
from kafkito.broker.console.timeline_view import clock_text, layout, legend, svg


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


def topics(rows: list[dict[str, Any]], internal: bool, write: bool) -> str:
    body = [
        (
            f'<a href="/console/topics/{q(t["name"])}">{e(t["name"])}</a>'
            + (' <span class="badge">internal</span>' if t["internal"] else ""),
            e(t["partitions"]),
            e(t["messages"]),
            e(size(t["size_bytes"])),
        )
        for t in rows
    ]
    empty = "" if rows else '<p class="muted">No topics yet.</p>'
    toggle = (
        '<a id="internal-toggle" href="/console/topics">hide internal topics</a>'
        if internal
        else '<a id="internal-toggle" href="/console/topics?internal=1">show internal topics</a>'
    )
    create = ""
    if write:
        create = (
            "<h2>Create a topic</h2>"
            '<form class="write" id="create-topic" data-method="POST" data-api="/api/topics">'
            '<label>name <input name="name" size="20" required></label>'
            '<label>partitions <input name="partitions" data-type="int" size="4" '
            'placeholder="default"></label>'
            '<label>replication factor <input name="replication_factor" data-type="int" size="3" '
            'placeholder="default"></label>'
            '<label>configs <textarea name="configs" data-type="pairs" rows="2" cols="30" '
            'placeholder="one name=value a line"></textarea></label>'
            '<button id="create-topic-button">Create</button></form>'
        )
    return (
        f"<h1>Topics</h1><p>{toggle}</p>"
        + table(["Topic", "Partitions", "Messages", "Size"], body, "topics")
        + empty
        + create
    )


def _config_row(name: str, c: dict[str, Any], write: bool) -> tuple[str, ...]:
    value = '<i class="muted">(sensitive)</i>' if c["sensitive"] else e(c["value"])
    source = e(c["source"].lower().replace("_config", ""))
    if c["override"]:
        hidden = c["inherited"]
        was = (
            f"{hidden['value']} ({hidden['source'].lower().replace('_config', '')})"
            if hidden
            else "Kafka's default"
        )
        source = (
            f'<span class="badge override">override</span> {source}'
            f'<div class="muted">instead of {e(was)}</div>'
        )
    remove = ""
    if write and c["override"]:
        remove = (
            f'<form class="inline" data-method="POST" data-api="/api/topics/{q(name)}/configs">'
            f'<input type="hidden" name="delete" data-type="list" value="{e(c["name"])}">'
            f'<button class="small" data-config="{e(c["name"])}">remove override</button></form>'
        )
    synonyms = ", ".join(f"{s['name']}={s['value']}" for s in c["synonyms"][1:])
    return (e(c["name"]), value, source, e(synonyms), remove)


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
    ordered = sorted(data["configs"], key=lambda c: (not c["override"], c["name"]))
    configs = [_config_row(name, c, write) for c in ordered]
    overrides = sum(1 for c in data["configs"] if c["override"])
    edit = delete = ""
    if write:
        edit = (
            '<form class="write" id="edit-configs" data-method="POST" '
            f'data-api="/api/topics/{q(name)}/configs">'
            '<label>set <textarea name="set" data-type="pairs" rows="2" cols="30" '
            'placeholder="one name=value a line"></textarea></label>'
            '<label>remove overrides <input name="delete" data-type="list" size="24" '
            'placeholder="names, comma-separated"></label>'
            '<button id="edit-configs-button">Apply</button></form>'
        )
        delete = (
            f'<form class="danger" data-method="DELETE" data-api="/api/topics/{q(name)}" '
            f'data-confirm="Delete topic {e(name)}?" data-then="/console/topics">'
            '<button id="delete-topic">Delete topic</button></form>'
        )
    return (
        f'<h1>Topic <span id="topic-name">{e(name)}</span></h1><p class="muted">id {e(data["topic_id"])}</p>'
        f'<p><a id="browse-all" href="/console/topics/{q(name)}/messages">'
        "Browse messages (all partitions)</a></p>"
        + table(["Partition", "Start", "End (HW)", "Messages", "Size", "Segments", ""], parts, "partitions")
        + f'<h2>Configs <span class="muted" id="override-count">{overrides} set on the topic</span></h2>'
        + edit
        + table(["Name", "Value", "Source", "Synonyms", ""], configs, "configs")
        + delete
    )


NO_RECORDS = '<p class="muted" id="no-records">No records.</p>'


def shown(value: dict[str, Any] | None) -> str:
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
        headers = "".join(f"<div>{e(h['key'])}: {shown(h['value'])}</div>" for h in r["headers"])
        rows.append((e(r["offset"]), e(when(r["timestamp"])), shown(r["key"]), shown(r["value"]), headers))
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
        + ("" if rows else NO_RECORDS)
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
    reset = reset_form(gid, sorted({o["topic"] for o in data["offsets"]})) if write else ""
    if data.get("type") == "streams":
        from kafkito.broker.console.pages_streams import streams_group

        return streams_group(data, events) + reset
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
    offsets = offset_rows(data["offsets"])
    facts = (
        f'<p class="facts"><span>state <b id="group-state">{e(data["state"])}</b></span>'
        f"<span>protocol <b>{e(data['protocol_kind'])}</b> ({e(data.get('protocol') or '-')})</span>"
        f'<span>generation <b id="group-generation">{e(data["generation"])}</b></span>'
        f'<span>lag <b id="group-lag">{e(data["lag"])}</b></span></p>'
    )
    return (
        f'<h1>Group <span id="group-id">{e(gid)}</span></h1>{facts}'
        + "<h2>Members</h2>"
        + table(["Member", "Instance", "Client id", "Host", "Assignment"], members, "members")
        + "<h2>Offsets and lag</h2>"
        + table(["Topic", "Partition", "Committed", "End", "Lag", "Member"], offsets, "offsets")
        + f'<h2>Rebalance timeline <a href="/console/groups/{q(gid)}/timeline">(full page)</a></h2>'
        + f'<div class="timeline-box">{svg(events)}</div>{legend()}{reset}'
    )


def reset_form(group_id: str, topics: list[str]) -> str:
    """Reset offsets: a topic, its partitions (all when empty), the target; Preview shows what would be
    committed (Kafka's --dry-run), Apply commits it. The group must have no members."""
    choices = "".join(f'<option value="{e(t)}"></option>' for t in topics)
    targets = "".join(f"<option>{t}</option>" for t in ("earliest", "latest", "offset", "time"))
    return (
        f'<h2>Reset offsets</h2><form class="danger" id="reset-form" data-method="POST" data-preview="1" '
        f'data-api="/api/groups/{q(group_id)}/reset-offsets">'
        '<label>topic <input name="topic" list="reset-topics" size="16"></label>'
        f'<datalist id="reset-topics">{choices}</datalist>'
        '<label>partitions <input name="partitions" data-type="list-int" size="8" placeholder="all"></label>'
        f'<label>to <select name="to">{targets}</select></label>'
        '<label>offset <input name="offset" data-type="int" size="8"></label>'
        '<label>time <input name="time" size="22" placeholder="ISO time or epoch ms"></label>'
        '<button id="reset-preview">Preview</button>'
        '<button id="reset-offsets" data-apply="1" hidden>Apply (group must be empty)</button>'
        '<div class="preview" id="reset-result"></div></form>'
    )


def timeline(group_id: str, events: list[dict[str, Any]]) -> str:
    view = layout(events)
    rows = [
        (
            e(b["generation"]),
            e(clock_text(b["start_ms"])),
            e(b["reason"] or ""),
            e(" → ".join(s for s in b["states"] if s)),
            e(len(b["members"])),
        )
        for b in reversed(view["generations"])
    ]
    return (
        f'<h1>Rebalance timeline of <a href="/console/groups/{q(group_id)}">{e(group_id)}</a></h1>'
        f'<div class="timeline-box">{svg(events)}</div>{legend()}'
        "<h2>Generations</h2>"
        + table(["Generation", "Started (broker clock)", "Reason", "States", "Members"], rows, "generations")
    )


def error(status: int, message: str) -> str:
    return f'<h1>{status}</h1><p class="error">{e(message)}</p>'
