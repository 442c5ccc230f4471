"""Responses as plain nested dicts, with what legitimately differs between two brokers mapped away, and
the field-by-field differences between two of them.

What differs on purpose between Kafka and kafkito and is not compared:
- generated identifiers (cluster, topic, member and producer ids): each distinct value becomes a
  placeholder numbered by its first appearance in the scenario's transcript (`<member_id#1>`), so
  two transcripts agree when the same id turns up in the same places;
- throttle times, ports, log directories and their disk sizes, wall-clock timestamps of the broker's
  own (log append time, the time a group or a transaction changed state) and error messages' text
  (only whether there is one: an empty message and a null one are the same);
- the order of collections the protocol leaves unordered: an array of structs is compared as a map
  keyed by its identifying field (`topics[orders].partitions[0]`), or as a sorted list without one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# Fields whose values are identifiers the broker generates.
GENERATED_IDS = {
    "cluster_id",
    "topic_id",
    "member_id",
    "leader",
    "member_epoch_owner",
    "producer_id",
    "assigned_member_id",
    "incarnation_id",
    "client_instance_id",
    "subscription_id",
    "token_id",
}
# Fields compared only as "set or not": their values differ between any two brokers or runs.
NOT_COMPARED = {
    "throttle_time_ms": 0,
    "port": "<port>",
    "log_append_time_ms": "<time>",
    "log_dir": "<log dir>",
    "total_bytes": "<disk bytes>",
    "usable_bytes": "<disk bytes>",
    "hmac": "<hmac>",
}
TIMES = {"state_timestamp", "transaction_start_time_ms", "last_timestamp", "max_timestamp"}
# A delegation token's times (CreateDelegationToken, DescribeDelegationToken, Renew/Expire's answers).
TIMES |= {
    "issue_timestamp_ms",
    "expiry_timestamp_ms",
    "max_timestamp_ms",
    "issue_timestamp",
    "expiry_timestamp",
}
# Identifying fields of array entries, tried in order: the first whose values are unique keys the map.
IDENTITY = (
    "name",
    "topic",
    "topic_name",
    "api_key",
    "partition_index",
    "partition",
    "partition_id",
    "group_id",
    "transactional_id",
    "resource_name",
    "key",
    "member_id",
    "node_id",
    "broker_id",
    "index",
)


class Placeholders:
    """Generated ids of one transcript, each given a stable placeholder by its first appearance."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, Any], str] = {}

    def __call__(self, field: str, value: Any) -> Any:
        if value in (None, "", -1) or (field == "leader" and value == ""):
            return value
        kind = "member_id" if field in ("leader", "assigned_member_id", "member_epoch_owner") else field
        key = (kind, value)
        if key not in self._seen:
            self._seen[key] = f"<{kind}#{sum(1 for k in self._seen if k[0] == kind) + 1}>"
        return self._seen[key]


def to_plain(response: Any) -> dict[str, Any]:
    """A decoded kafka-python response as nested dicts and lists (bytes as text, UUIDs as str)."""
    plain: dict[str, Any] = response.to_dict()
    return plain


def normalise(value: Any, ids: Placeholders, field: str = "") -> Any:
    """`value` with generated ids, times and ports replaced and unordered arrays keyed (see module)."""
    if isinstance(value, dict):
        return {k: _normalise_field(k, v, ids) for k, v in value.items()}
    if isinstance(value, list):
        items = [normalise(v, ids, field) for v in value]
        if items and all(isinstance(i, dict) for i in items):
            return _keyed(items)
        return items
    return value


def _normalise_field(name: str, value: Any, ids: Placeholders) -> Any:
    if name in NOT_COMPARED and value not in (None, -1):
        return NOT_COMPARED[name]
    if name in TIMES and isinstance(value, int) and value > 0:
        return "<time>"
    if name in ("error_message", "documentation"):  # the broker's own text; "" and null: none
        return f"<{name}>" if value else None
    if name in GENERATED_IDS and isinstance(value, (str, int)):
        if name == "topic_id":  # unnumbered: listings of many topics come in each broker's own order
            return value if value == "00000000-0000-0000-0000-000000000000" else "<topic_id>"
        return ids(name, value)
    return normalise(value, ids, name)


def _keyed(items: list[dict[str, Any]]) -> dict[str, Any] | list[Any]:
    for key in IDENTITY:
        values = [i.get(key) for i in items]
        if all(v is not None for v in values) and len(set(map(str, values))) == len(values):
            return {f"[{v}]": i for v, i in zip(values, items, strict=True)}
    return sorted(items, key=lambda i: json.dumps(i, sort_keys=True, default=str))


@dataclass(frozen=True, slots=True)
class Difference:
    """One field that differs: its path in the exchange, Kafka's value and kafkito's."""

    path: str
    kafka: Any
    kafkito: Any

    def describe(self) -> str:
        return f"{self.path}: Kafka {_show(self.kafka)}, kafkito {_show(self.kafkito)}"


ABSENT = "<absent>"


def differences(kafka: Any, kafkito: Any, path: str = "") -> list[Difference]:
    """Every leaf where two normalised values differ (a missing key or entry is `<absent>`)."""
    if isinstance(kafka, dict) and isinstance(kafkito, dict):
        out: list[Difference] = []
        for k in list(kafka) + [k for k in kafkito if k not in kafka]:
            sub = f"{path}{k}" if k.startswith("[") else f"{path}.{k}" if path else k
            out += differences(kafka.get(k, ABSENT), kafkito.get(k, ABSENT), sub)
        return out
    if isinstance(kafka, list) and isinstance(kafkito, list) and len(kafka) == len(kafkito):
        out = []
        for i, (a, b) in enumerate(zip(kafka, kafkito, strict=True)):
            out += differences(a, b, f"{path}[{i}]")
        return out
    return [] if kafka == kafkito else [Difference(path, kafka, kafkito)]


def _show(value: Any) -> str:
    text = json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "..."
