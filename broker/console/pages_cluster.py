"""The cluster's read-only pages as HTML: ACLs, SCRAM users, transactions, the broker's configs and
the feature levels (cluster.py's answers)."""

from __future__ import annotations

from typing import Any

from kafkito.broker.console.html import e, table, when


def acls(rows: list[dict[str, Any]]) -> str:
    body = [
        (
            e(a["resource_type"]),
            e(a["resource_name"]),
            e(a["pattern_type"]),
            e(a["principal"]),
            e(a["host"]),
            e(a["operation"]),
            e(a["permission_type"]),
        )
        for a in rows
    ]
    headers = ["Resource", "Name", "Pattern", "Principal", "Host", "Operation", "Permission"]
    empty = "" if rows else '<p class="muted" id="no-acls">No ACLs.</p>'
    return "<h1>ACLs</h1>" + table(headers, body, "acls") + empty


def users(rows: list[dict[str, Any]]) -> str:
    body = [
        (
            e(u["user"]),
            e(", ".join(f"{c['mechanism']} ({c['iterations']} iterations)" for c in u["credentials"])),
        )
        for u in rows
    ]
    empty = "" if rows else '<p class="muted" id="no-users">No SCRAM users.</p>'
    return "<h1>SCRAM users</h1>" + table(["User", "Credentials"], body, "users") + empty


def transactions(rows: list[dict[str, Any]]) -> str:
    body = [
        (
            e(t["transactional_id"]),
            f'<span class="{"badge open" if t["open"] else "muted"}">{e(t["state"])}</span>',
            e(t["producer_id"]),
            e(t["producer_epoch"]),
            e(t["timeout_ms"]),
            e(when(t["start_time_ms"]) if t["open"] else ""),
            e(", ".join(f"{p['topic']}[{','.join(map(str, p['partitions']))}]" for p in t["partitions"])),
        )
        for t in rows
    ]
    headers = ["Transactional id", "State", "Producer id", "Epoch", "Timeout ms", "Started", "Partitions"]
    empty = "" if rows else '<p class="muted" id="no-transactions">No transactional ids.</p>'
    open_count = sum(1 for t in rows if t["open"])
    return (
        f'<h1>Transactions <span class="muted" id="open-count">{open_count} open</span></h1>'
        + table(headers, body, "transactions")
        + empty
    )


def broker_configs(data: dict[str, Any]) -> str:
    ordered = sorted(data["configs"], key=lambda c: (not c["override"], c["name"]))
    body = [
        (
            e(c["name"]),
            '<i class="muted">(sensitive)</i>' if c["sensitive"] else e(c["value"]),
            ('<span class="badge override">set</span> ' if c["override"] else "")
            + e(c["source"].lower().replace("_config", "")),
            e(", ".join(f"{s['name']}={s['value']} ({s['source'].lower()})" for s in c["synonyms"])),
            "read-only" if c["read_only"] else "dynamic",
        )
        for c in ordered
    ]
    return f'<h1>Broker <span id="broker-id">{e(data["broker"])}</span> configs</h1>' + table(
        ["Name", "Value", "Source", "Synonyms", "Update"], body, "broker-configs"
    )


def features(data: dict[str, Any]) -> str:
    body = [
        (
            e(f["name"]),
            e(f["finalized_level"] if f["finalized_level"] is not None else "-"),
            e(f"{f['supported_min']}-{f['supported_max']}" if f["supported_min"] is not None else "-"),
        )
        for f in data["features"]
    ]
    return f'<h1>Feature levels <span class="muted">epoch {e(data["epoch"])}</span></h1>' + table(
        ["Feature", "Finalized level", "Supported"], body, "features"
    )
