"""A plausible request of any API and version, built with kafka-python's classes from its JSON schema.

Values are deterministic and small: names a broker knows how to handle ("sample-topic", "sample-group"),
one element per array, short timeouts. `null_paths` lists the fields a request may not send as null
(as Kafka's schemas say), and `sample_request(..., null=path)` sends one of them as null anyway.
`odd_request` draws a request that is well-formed on the wire but odd: extreme numbers, empty or long
strings, empty or repeated arrays, nulls where they are allowed.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

from kafkito.broker.offsets.batches import build_batch
from kafkito.protocol.codec import request_class
from kafkito.protocol.nullability import plan_for

TOPIC = "sample-topic"
GROUP = "sample-group"
_INTS = ("int8", "int16", "uint16", "int32", "int64")
_BY_NAME: dict[str, Any] = {
    "name": TOPIC,
    "topic": TOPIC,
    "topic_name": TOPIC,
    "group_id": GROUP,
    "key": GROUP,  # FindCoordinator's key
    "protocol_type": "consumer",
    "timeout_ms": 100,
    "max_wait_ms": 10,
    "session_timeout_ms": 10_000,
    "rebalance_timeout_ms": 10_000,
    "num_partitions": 1,
    "replication_factor": 1,
    "acks": 1,
    "max_bytes": 1 << 20,
    "partition_max_bytes": 1 << 20,
    "generation_id": -1,
    "producer_id": -1,
    "producer_epoch": -1,
    "leader_epoch": -1,
    "current_leader_epoch": -1,
    "isolation_level": 0,
    "timestamp": -1,
    "transactional_id": None,
}


def _records() -> bytes:
    return bytes(build_batch([(b"k", b"v")], 1_700_000_000_000))


def _scalar(field: Any, version: int) -> Any:
    type_str = field.type_str
    if field.name in _BY_NAME and not type_str.startswith("[]"):
        value = _BY_NAME[field.name]
        if value is not None or field.nullable_for_version_q(version):
            return value
    if type_str in _INTS:
        return 0
    if type_str == "float64":
        return 0.0
    if type_str == "bool":
        return False
    if type_str == "uuid":
        return uuid.UUID(int=0)
    if type_str == "string":
        return "sample"
    if type_str == "records":
        return _records()
    if type_str == "bytes":
        return b""
    raise LookupError(type_str)


def _data_class(field: Any) -> Any:
    """kafka-python creates nested data classes on first use; make one if it has not yet."""
    if field.data_class is None:
        from kafka.protocol.data_container import DataContainer

        field.set_data_class(type(field.type_str, (DataContainer,), {"_struct": field}))
    return field.data_class


def _values(struct: Any, version: int, null: tuple[str, ...] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in struct.untagged_fields(version):
        rest = null[1:] if null is not None and null[0] == field.name else None
        if rest == ():
            out[field.name] = None
            continue
        if field.is_struct_array():
            out[field.name] = [_data_class(field)(**_values(field, version, rest))]
        elif field.is_struct():
            out[field.name] = _data_class(field)(**_values(field, version, rest))
        elif field.is_array():
            item = _scalar(field.array_of, version)
            out[field.name] = [None if rest == ("[0]",) else item]
        else:
            out[field.name] = _scalar(field, version)
    return out


def sample_request(api_key: int, version: int, null: str | None = None) -> Any:
    """A request of `api_key` at `version`; `null`: a path from `null_paths` to send as null."""
    cls = request_class(api_key, version)
    path = None if null is None else tuple(null.replace("[0]", ".[0]").split("."))
    return cls(**_values(cls._struct, version, path))


def null_paths(api_key: int, version: int) -> Iterator[str]:
    """Every field (nested ones through the first array element) that Kafka forbids as null here."""
    yield from _paths(plan_for(request_class(api_key, version)._struct, version), "")


def _paths(plan: Any, prefix: str) -> Iterator[str]:
    for name, nullable, child, items_checked, _ in plan:
        if not nullable:
            yield prefix + name
        if child is not None:
            yield from _paths(child, f"{prefix}{name}.")
        if items_checked:
            yield f"{prefix}{name}[0]"


def frame(request: Any, correlation_id: int = 1, client_id: str = "sample") -> bytes:
    """The request with its header, size-prefixed, as a client sends it."""
    request.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(request.encode(header=True, framed=True))


# -- odd but well-formed requests ---------------------------------------------------------------------

_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_ODD_STRINGS = ("", "x" * 249, "x" * 300, "é€😀", "__consumer_offsets", ".", "..", "a/b", TOPIC, GROUP)
ODD = 0.3  # the chance that a value is odd rather than the sample's


def _odd_scalar(field: Any, version: int, rng: random.Random, item: bool = False) -> Any:
    # An array's item type carries the array's nullability (a nullable []int32): the items themselves
    # can never be null on the wire, only the whole array.
    if not item and field.nullable_for_version_q(version) and rng.random() < 0.2:
        return None
    type_str = field.type_str
    if type_str in _BITS:
        top = 2 ** (_BITS[type_str] - 1)
        return rng.choice((-1, 0, 1, -top, top - 1, rng.randrange(-top, top)))
    if type_str == "uint16":
        return rng.choice((0, 1, 65_535))
    if type_str == "float64":
        return rng.choice((-1.0, 0.0, 1e308))
    if type_str == "bool":
        return rng.random() < 0.5
    if type_str == "uuid":
        return uuid.UUID(int=rng.getrandbits(128)) if rng.random() < 0.5 else uuid.UUID(int=0)
    if type_str == "string":
        return rng.choice(_ODD_STRINGS)
    if type_str == "records":
        batch = bytearray(_records())
        batch[rng.randrange(len(batch))] ^= 0xFF
        return rng.choice((b"", rng.randbytes(rng.randint(1, 80)), bytes(batch), _records() * 2))
    return rng.randbytes(rng.randint(0, 40))  # bytes


def _odd_values(struct: Any, version: int, rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in struct.untagged_fields(version):
        odd = rng.random() < ODD
        if field.is_struct_array():
            count = rng.choice((0, 2, 3)) if odd else 1
            item = _odd_values(field, version, rng)  # repeated as is: duplicates are odd too
            out[field.name] = [_data_class(field)(**(item if i % 2 else _odd_values(field, version, rng)))
                               for i in range(count)]  # fmt: skip
        elif field.is_struct():
            out[field.name] = _data_class(field)(**_odd_values(field, version, rng))
        elif field.is_array():
            of = field.array_of
            item = _odd_scalar(of, version, rng, item=True) if odd else _scalar(of, version)
            if odd and field.nullable_for_version_q(version) and rng.random() < 0.2:
                out[field.name] = None
            else:
                out[field.name] = [item] * rng.choice((0, 2, 3)) if odd else [item]
        else:
            out[field.name] = _odd_scalar(field, version, rng) if odd else _scalar(field, version)
    return out


def odd_request(api_key: int, version: int, rng: random.Random) -> Any:
    """A request of `api_key` at `version` with some values odd: legal on the wire, hard to handle."""
    cls = request_class(api_key, version)
    return cls(**_odd_values(cls._struct, version, rng))
