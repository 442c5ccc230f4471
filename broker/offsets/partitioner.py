"""Which `__consumer_offsets` partition holds a group: Java's `String.hashCode`, as Kafka computes it."""

from __future__ import annotations

_INT32_MIN = -(2**31)
_MASK = 0xFFFFFFFF


def java_string_hash(text: str) -> int:
    """`String.hashCode()`: h = 31*h + c over UTF-16 code units, wrapped to a signed int32."""
    h = 0
    raw = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(raw), 2):
        h = (31 * h + (raw[i] << 8 | raw[i + 1])) & _MASK
    return h - (1 << 32) if h & 0x80000000 else h


def java_abs(n: int) -> int:
    """Kafka's `Utils.abs`: like Math.abs, except that INT_MIN maps to 0 rather than to itself."""
    return 0 if n == _INT32_MIN else abs(n)


def partition_for(group_id: str, num_partitions: int) -> int:
    """The offsets partition of `group_id` among `num_partitions`, the same one Kafka picks."""
    return java_abs(java_string_hash(group_id)) % num_partitions
