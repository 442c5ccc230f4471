"""A streams group's page: its facts, topology, members with their tasks, input topics' lag, timeline."""

from __future__ import annotations

from typing import Any

from kafkito.broker.console.html import e, offset_rows, q, table
from kafkito.broker.console.timeline_view import legend, svg


def _topics(names: list[str]) -> str:
    return e(", ".join(names)) or '<span class="muted">-</span>'


def _internal(topics: list[dict[str, Any]]) -> str:
    shown = [f"{t['name']} ({t['partitions'] if t['partitions'] is not None else '?'})" for t in topics]
    return _topics(shown)


def _tasks(ids: list[str], css: str) -> str:
    return " ".join(f'<span class="task {css}">{e(t)}</span>' for t in ids) or '<span class="muted">-</span>'


def topology_section(topology: dict[str, Any] | None) -> str:
    if topology is None:
        return '<h2>Topology</h2><p class="muted">No topology yet.</p>'
    rows = [
        (
            e(s["id"]),
            _topics(s["source_topics"]),
            _internal(s["repartition_source_topics"]),
            _topics(s["repartition_sink_topics"]),
            _internal(s["changelog_topics"]),
        )
        for s in topology["subtopologies"]
    ]
    ready = "ready" if topology["ready"] else f"not ready: {topology['not_ready']}"
    return (
        f'<h2>Topology <small id="topology-epoch">epoch {e(topology["epoch"])}</small> '
        f'<small id="topology-ready">{e(ready)}</small></h2>'
        + table(
            ["Subtopology", "Source topics", "Repartition sources", "Repartition sinks", "Changelogs"],
            rows,
            "subtopologies",
        )
    )


def streams_group(data: dict[str, Any], events: list[dict[str, Any]]) -> str:
    gid = data["group_id"]
    members = [
        (
            e(m["member_id"]),
            e(m["process_id"]),
            e(m["client_id"]),
            e(m["member_epoch"]),
            f'<span class="status">{e(m["status"])}</span>',
            _tasks(m["tasks"]["active"], "active"),
            _tasks(m["tasks"]["standby"], "standby"),
            _tasks(m["tasks"]["warmup"], "warmup"),
            _tasks(m["target"]["active"], "target"),
        )
        for m in data["members"]
    ]
    offsets = offset_rows(data["offsets"])
    facts = (
        f'<p class="facts"><span>state <b id="group-state">{e(data["state"])}</b></span>'
        f"<span>protocol <b>streams</b> ({e(data.get('protocol') or '-')})</span>"
        f'<span>group epoch <b id="group-generation">{e(data["generation"])}</b></span>'
        f'<span>assignment epoch <b id="group-assignment-epoch">{e(data["assignment_epoch"])}</b></span>'
        f'<span>lag <b id="group-lag">{e(data["lag"])}</b></span></p>'
    )
    headers = ["Member", "Process", "Client id", "Epoch", "Status", "Active", "Standby", "Warm-up", "Target"]
    return (
        f'<h1>Streams group <span id="group-id">{e(gid)}</span></h1>{facts}'
        + topology_section(data["topology"])
        + "<h2>Members</h2>"
        + table(headers, members, "members")
        + "<h2>Input topics: offsets and lag</h2>"
        + table(["Topic", "Partition", "Committed", "End", "Lag", "Active task's member"], offsets, "offsets")
        + f'<h2>Rebalance timeline <a href="/console/groups/{q(gid)}/timeline">(full page)</a></h2>'
        + f'<div class="timeline-box">{svg(events)}</div>{legend()}'
    )
