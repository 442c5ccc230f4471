"""A group's timeline as generations (bands) and member marks, and drawn as an SVG.

Each generation is a band of equal width (so 100 generations read as well as 3); within a band
the member events (join, sync, leave, expiry, ...) are placed in the order they happened, on the
member's row. A band carries the reason of the rebalance that made it. Under the bands a time axis
gives each band's start on the broker clock (epoch milliseconds, shown in UTC), labelled as often as
the band width leaves room; hovering a band or a mark shows its full reason and exact time.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from html import escape
from typing import Any

MEMBER_EVENTS = {
    "member_joined": ("join", "#2e7d32"),
    "member_synced": ("sync", "#1565c0"),
    "member_left": ("leave", "#616161"),
    "member_evicted": ("expiry", "#c62828"),
    "member_removed": ("removed", "#ef6c00"),
    "member_replaced": ("replaced", "#6a1b9a"),
}
ROW_H = 16
HEAD_H = 34
LABEL_W = 190
MIN_BAND_W = 30
MAX_BAND_W = 120
TARGET_W = 1400
AXIS_H = 34
AXIS_LABEL_W = 56  # room one "HH:MM:SS" label needs


def generations(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per generation seen, oldest first: its start time, states, members and the reason of
    the rebalance that made it (the last `rebalance_started` before it formed; None for the
    generation a group starts in). Members are those of its completed rebalance."""
    bands: dict[int, dict[str, Any]] = {}
    pending: str | None = None
    for event in events:
        generation, kind = event.get("generation"), event["event"]
        if kind == "rebalance_started":
            pending = event.get("reason")
        if generation is None:
            continue
        band = bands.get(generation)
        if band is None:
            band = bands[generation] = {
                "generation": generation, "start_ms": event["time_ms"], "end_ms": None, "reason": None,
                "states": [], "members": [], "completed": False,
            }  # fmt: skip
        if kind == "transition":
            _transition(band, event, pending)
        elif kind == "rebalance_completed":
            band["members"], band["completed"] = list(event.get("members") or ()), True
    ordered = list(bands.values())  # in order of first appearance
    for band, following in itertools.pairwise(ordered):
        band["end_ms"] = following["start_ms"]
    return ordered


def _transition(band: dict[str, Any], event: dict[str, Any], pending: str | None) -> None:
    state = event.get("to_state")
    band["states"].append(state)
    if band["reason"] is None and state not in ("PreparingRebalance", "Empty") and band["generation"] > 0:
        band["reason"] = pending
    if not band["completed"] and event.get("members") is not None:
        band["members"] = list(event["members"])


def _member_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with a member, plus a `member_synced` for every member of a completed rebalance:
    the moment its SyncGroup (or its new assignment) was answered, as the coordinator records it."""
    out = []
    for event in events:
        if event["event"] == "rebalance_completed":
            for member in event.get("members") or ():
                reason = f"assignment of generation {event.get('generation')} received"
                out.append({**event, "event": "member_synced", "member": member, "reason": reason})
        elif event["event"] in MEMBER_EVENTS and event.get("member") is not None:
            out.append(event)
    return out


def _band_of(events_seq: int, starts: list[int]) -> int:
    """The index of the band an event (by seq) falls in: the last band started at or before it."""
    index = 0
    for i, start in enumerate(starts):
        if start <= events_seq:
            index = i
    return index


def layout(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Bands, member rows and marks, as the SVG and the JSON API show them."""
    bands = generations(events)
    first_seq: dict[int, int] = {}
    for event in events:
        if event.get("generation") is not None:
            first_seq.setdefault(event["generation"], event["seq"])
    starts = [first_seq[b["generation"]] for b in bands]
    rows: dict[str, dict[str, Any]] = {}
    marks: list[dict[str, Any]] = []
    for event in _member_events(events):
        member = event["member"]
        row = rows.setdefault(
            member, {"member_id": member, "client_id": event.get("client_id"), "row": len(rows)}
        )
        row["client_id"] = row["client_id"] or event.get("client_id")
        band = _band_of(event["seq"], starts) if bands else 0
        marks.append(
            {
                "member_id": member,
                "kind": MEMBER_EVENTS[event["event"]][0],
                "event": event["event"],
                "band": band,
                "time_ms": event["time_ms"],
                "reason": event.get("reason"),
            }
        )
    for generation in bands:
        for member in generation["members"]:
            rows.setdefault(member, {"member_id": member, "client_id": None, "row": len(rows)})
    return {"generations": bands, "members": list(rows.values()), "marks": marks}


def _band_width(count: int) -> int:
    return max(MIN_BAND_W, min(MAX_BAND_W, TARGET_W // max(count, 1)))


def _member_label(row: dict[str, Any]) -> str:
    member = row["member_id"]
    short = member if len(member) <= 14 else member[:6] + "…" + member[-6:]
    return f"{row['client_id']} · {short}" if row.get("client_id") else short


def svg(events: list[dict[str, Any]]) -> str:
    """The timeline drawn as one SVG element (empty group: a short note)."""
    view = layout(events)
    bands, rows, marks = view["generations"], view["members"], view["marks"]
    if not bands and not marks:
        return '<p class="muted" id="timeline-empty">No rebalance recorded yet.</p>'
    band_w = _band_width(len(bands))
    width = LABEL_W + band_w * max(len(bands), 1) + 10
    rows_h = HEAD_H + ROW_H * max(len(rows), 1) + 10
    height = rows_h + AXIS_H
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" id="timeline-svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" data-generations="{len(bands)}" '
        f'data-members="{len(rows)}" role="img" aria-label="rebalance timeline">'
    ]
    out.extend(_bands_svg(bands, band_w, rows_h))
    out.extend(_rows_svg(rows, bands, band_w, width))
    out.extend(_marks_svg(marks, rows, band_w))
    out.extend(_axis_svg(bands, band_w, rows_h, width))
    out.append("</svg>")
    return "".join(out)


def _bands_svg(bands: list[dict[str, Any]], band_w: int, height: int) -> list[str]:
    out = []
    for i, band in enumerate(bands):
        x = LABEL_W + i * band_w
        fill = "#f3f6fa" if i % 2 == 0 else "#e6ecf3"
        title = escape(
            f"generation {band['generation']}, from {clock_text(band['start_ms'])}: "
            f"{band['reason'] or 'no reason recorded'} ({' → '.join(s for s in band['states'] if s)})"
        )
        out.append(
            f'<g class="band" data-generation="{band["generation"]}"><title>{title}</title>'
            f'<rect x="{x}" y="0" width="{band_w}" height="{height}" fill="{fill}"/>'
            f'<text x="{x + band_w / 2}" y="14" text-anchor="middle" class="gen">{band["generation"]}</text>'
            f'<text x="{x + band_w / 2}" y="27" text-anchor="middle" class="why">'
            f"{escape(_short(band['reason'], band_w))}</text></g>"
        )
    return out


def _short(reason: str | None, band_w: int) -> str:
    if not reason:
        return ""
    keep = max(band_w // 6, 3)
    return reason if len(reason) <= keep else reason[: keep - 1] + "…"


def _rows_svg(rows: list[dict[str, Any]], bands: list[dict[str, Any]], band_w: int, width: int) -> list[str]:
    out = []
    for row in rows:
        y = HEAD_H + row["row"] * ROW_H
        out.append(
            f'<text x="4" y="{y + 12}" class="member">{escape(_member_label(row))}</text>'
            f'<line x1="{LABEL_W}" y1="{y + 8}" x2="{width}" y2="{y + 8}" class="row"/>'
        )
        for i, band in enumerate(bands):
            if row["member_id"] in band["members"]:
                x = LABEL_W + i * band_w
                out.append(
                    f'<rect x="{x + 1}" y="{y + 5}" width="{band_w - 2}" height="6" rx="2" class="in"/>'
                )
    return out


def _marks_svg(marks: list[dict[str, Any]], rows: list[dict[str, Any]], band_w: int) -> list[str]:
    row_of = {row["member_id"]: row["row"] for row in rows}
    per_band: dict[int, int] = {}
    for mark in marks:
        per_band[mark["band"]] = per_band.get(mark["band"], 0) + 1
    seen: dict[int, int] = {}
    colors = {kind: color for kind, color in MEMBER_EVENTS.values()}
    out = []
    for mark in marks:
        band = mark["band"]
        rank = seen[band] = seen.get(band, 0) + 1
        x = LABEL_W + band * band_w + rank * band_w / (per_band[band] + 1)
        y = HEAD_H + row_of[mark["member_id"]] * ROW_H + 8
        title = escape(
            f"{mark['kind']} of {mark['member_id']} at {clock_text(mark['time_ms'])}: {mark['reason'] or ''}"
        )
        color = colors[mark["kind"]]
        out.append(
            f'<g class="mark mark-{mark["kind"]}"><title>{title}</title>'
            f'<circle cx="{x:.1f}" cy="{y}" r="4" fill="{color}"/></g>'
        )
    return out


def clock_text(ms: int | None, *, short: bool = False) -> str:
    """A broker-clock time (epoch ms) in UTC: `HH:MM:SS` when `short`, else with the date and ms."""
    if ms is None or ms < 0:
        return "?"
    moment = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    if short:
        return moment.strftime("%H:%M:%S")
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def _axis_svg(bands: list[dict[str, Any]], band_w: int, top: int, width: int) -> list[str]:
    """The wall-clock axis: a tick at each band's start, labelled every `step` bands."""
    if not bands:
        return []
    step = max(1, math.ceil(AXIS_LABEL_W / band_w))
    day = clock_text(bands[0]["start_ms"])[:10]
    out = [
        f'<g class="axis" id="timeline-axis" data-start-ms="{bands[0]["start_ms"]}">'
        f'<line x1="{LABEL_W}" y1="{top}" x2="{width}" y2="{top}" class="axis"/>'
        f'<text x="4" y="{top + 14}" class="axis-title">time (UTC)</text>'
        f'<text x="4" y="{top + 27}" class="axis-title">{escape(day)}</text>'
    ]
    for i, band in enumerate(bands):
        x = LABEL_W + i * band_w
        out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{top + 5}" class="tick"/>')
        if i % step == 0:
            out.append(
                f'<text x="{x + 2}" y="{top + 16}" class="tick" data-ms="{band["start_ms"]}">'
                f"<title>{escape(clock_text(band['start_ms']))}</title>"
                f"{escape(clock_text(band['start_ms'], short=True))}</text>"
            )
    out.append("</g>")
    return out


def legend() -> str:
    """What the marks' colours mean, as HTML beside the drawing."""
    keys = "".join(
        f'<span class="key mark-{kind}"><svg width="10" height="10">'
        f'<circle cx="5" cy="5" r="4" fill="{color}"/></svg>{kind}</span>'
        for kind, color in MEMBER_EVENTS.values()
    )
    bar = (
        '<span class="key"><svg width="18" height="10">'
        '<rect x="0" y="2" width="18" height="6" rx="2" fill="#90caf9"/></svg>member of the generation</span>'
    )
    return f'<p class="legend" id="timeline-legend">{keys}{bar}</p>'
