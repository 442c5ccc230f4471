"""Small helpers for the server-rendered pages: escaping, tables, the page frame."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

NAV = (
    ("Overview", "/console/"),
    ("Topics", "/console/topics"),
    ("Groups", "/console/groups"),
    ("Transactions", "/console/transactions"),
    ("ACLs", "/console/acls"),
    ("Users", "/console/users"),
    ("Broker", "/console/broker"),
    ("Features", "/console/features"),
)


def e(value: object) -> str:
    return escape("" if value is None else str(value))


def q(value: object) -> str:
    """A path segment."""
    return quote(str(value), safe="")


def when(ms: int | None) -> str:
    if ms is None or ms < 0:
        return ""
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], table_id: str = "") -> str:
    """A table whose cells are already HTML."""
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    ident = f' id="{table_id}"' if table_id else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(title: str, main: str, *, poll_ms: int | None = 2000, write: bool = False) -> str:
    nav = "".join(f'<a href="{href}">{e(name)}</a>' for name, href in NAV)
    poll = f' data-poll="{poll_ms}"' if poll_ms else ""
    mode = "read-write" if write else "read-only"
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{e(title)} · kafkito</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'  # no favicon request
        '<link rel="stylesheet" href="/console/static/console.css">'
        '<script src="/console/static/console.js" defer></script></head><body>'
        f'<header><strong>kafkito</strong><nav>{nav}</nav><span class="mode">{mode}</span>'
        '<span id="live" class="live" title="live updates"></span>'
        '<span id="action-status" class="action-status" role="status"></span></header>'
        f'<main id="main"{poll}>{main}</main></body></html>'
    )


def offset_rows(offsets: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """A group's committed offsets as table cells: topic, partition, committed, end, lag, member."""
    return [
        (
            e(o["topic"]),
            e(o["partition"]),
            e(o["committed_offset"] if o["committed_offset"] is not None else "-"),
            e(o["end_offset"]),
            f'<span class="lag">{e(o["lag"] if o["lag"] is not None else "-")}</span>',
            e(o["member_id"] or ""),
        )
        for o in offsets
    ]
