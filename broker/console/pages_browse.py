"""The message browser page across a topic's partitions (search.py's answer as HTML), with the form
that produces a record to the topic (with `--http-write`)."""

from __future__ import annotations

from typing import Any

from kafkito.broker.console.html import e, q, table, when
from kafkito.broker.console.pages import NO_RECORDS, shown

FORMATS = ("auto", "text", "json", "hex")


def _field(label: str, name: str, value: object, size: int, placeholder: str = "") -> str:
    hint = f' placeholder="{e(placeholder)}"' if placeholder else ""
    return f'<label>{e(label)} <input name="{name}" value="{e(value)}" size="{size}"{hint}></label>'


def search_form(query: dict[str, str], partitions: int) -> str:
    fmt = query.get("format", "auto")
    options = "".join(f'<option value="{f}"{" selected" if f == fmt else ""}>{f}</option>' for f in FORMATS)
    chosen = query.get("partition", "")
    parts = '<option value="">all</option>' + "".join(
        f'<option value="{p}"{" selected" if str(p) == chosen else ""}>{p}</option>'
        for p in range(partitions)
    )
    return (
        '<form method="get" class="browse" id="search">'
        f'<label>partition <select name="partition">{parts}</select></label>'
        + _field("key contains", "key", query.get("key", ""), 12)
        + _field("value contains", "value", query.get("value", ""), 16)
        + _field("header", "header", query.get("header", ""), 14, "name or name=value")
        + _field("from", "from", query.get("from", ""), 20, "ISO time or epoch ms")
        + _field("to", "to", query.get("to", ""), 20, "ISO time or epoch ms")
        + _field("limit", "limit", query.get("limit", "50"), 4)
        + f'<label>show <select name="format">{options}</select></label>'
        + '<button id="search-button">Search</button>'
        "</form>"
    )


def produce_form(topic: str) -> str:
    return (
        '<details class="write" id="produce"><summary>Produce a record</summary>'
        f'<form class="write" id="produce-form" data-method="POST" data-api="/api/topics/{q(topic)}/records">'
        '<label>partition <input name="partition" data-type="int" size="4" placeholder="by key"></label>'
        '<label>key <input name="key" data-type="nullable" size="16" placeholder="none"></label>'
        '<label>value <textarea name="value" rows="3" cols="40"></textarea></label>'
        '<label>headers <textarea name="headers" data-type="headers" rows="2" cols="24" '
        'placeholder="one name=value a line"></textarea></label>'
        '<button id="produce-button">Produce</button></form></details>'
    )


def search_page(data: dict[str, Any], query: dict[str, str], partitions: int, write: bool) -> str:
    topic = data["topic"]
    rows = []
    for r in data["records"]:
        headers = "".join(f"<div>{e(h['key'])}: {shown(h['value'])}</div>" for h in r["headers"])
        rows.append(
            (
                e(r["partition"]),
                e(r["offset"]),
                e(when(r["timestamp"])),
                shown(r["key"]),
                shown(r["value"]),
                headers,
            )
        )
    scope = "all partitions" if len(data["partitions"]) > 1 else f"partition {data['partitions'][0]}"
    note = f"newest first, {len(rows)} of at most {data['limit']}, {data['scanned']} records read"
    if not data["complete"]:
        note += " (stopped before the oldest: narrow the time range)"
    return (
        f'<h1>Messages of <a href="/console/topics/{q(topic)}">{e(topic)}</a>, {e(scope)}</h1>'
        + (produce_form(topic) if write else "")
        + search_form(query, partitions)
        + f'<p class="muted" id="search-note">{e(note)}</p>'
        + table(["Partition", "Offset", "Timestamp", "Key", "Value", "Headers"], rows, "messages")
        + ("" if rows else NO_RECORDS)
    )
