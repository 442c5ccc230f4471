"""Kafka 4.4's limits on declared counts, inside kafka-python's request decoders.

Kafka checks the count an array or a tagged-field section declares before it reads any element: more
elements (fields) than bytes remain in the request, an array over 1,000,000 elements or a section over
10,000 fields fails the request's parsing, and the broker closes the connection (`MessageUtil`'s
MAX_ARRAY_LENGTH and MAX_TAGGED_FIELD_COUNT in kafka-clients 4.4; `primitives.py` holds the rules).
A negative array length is null, as in Kafka (kafka-python read -2 as an empty array), and a tagged
field whose bytes run past the end of the request is refused (kafka-python kept the bytes there were).

kafka-python compiles one decoder per message struct and version from code its fields emit, on the
first decode. `install()` replaces the emitters of both array fields (of simple items, of structs),
so each compiled decoder checks a declared length where it reads it (two comparisons, nothing per
element); and the array field's plain decode (tagged array fields) and the tagged-field section's
decode, which compiled decoders call only for a section that holds fields. The codec calls
`install()` as it loads its first message class, before any decoder is compiled (not at start-up:
kafka-python's schema package takes ~9 ms to import). It relies on kafka-python 3.0.x's emitters
(the `data` and `pos` names of the compiled function, `ctx.emit`); `tests/protocol/test_limits.py`
pins the behaviour through the codec.
"""

from __future__ import annotations

import io
import sys
from typing import Any

from kafka.protocol.schemas.fields.array import ArrayField
from kafka.protocol.schemas.fields.codecs import Int32, UnsignedVarInt32
from kafka.protocol.schemas.fields.codecs.tagged_fields import TaggedFields
from kafka.protocol.schemas.fields.struct_array import StructArrayField

from kafkito.protocol.primitives import (
    MAX_ARRAY_LENGTH,
    WireFormatError,
    array_length_refused,
    tagged_field_count_refused,
)

_installed = False


def install() -> None:
    """Make kafka-python's decoders check Kafka's limits (idempotent); decoders compiled before it keep
    the old code, so it runs before the first decode."""
    global _installed
    if _installed:
        return
    ArrayField.emit_decode_from = _emit_array_decode
    StructArrayField.emit_decode_from = _emit_array_decode  # its own emitter, the same but for names
    ArrayField.decode = _decode_array
    TaggedFields.decode = _decode_tagged_fields
    _installed = True


def _refuse_array(count: int, remaining: int) -> WireFormatError:
    refused = array_length_refused(count, remaining)
    assert refused is not None  # called only when a limit is passed
    return refused


def _emit_array_decode(
    self: ArrayField, ctx: Any, var_name: str, indent: str, version: Any = None, compact: bool = False,
    tagged: Any = False,
) -> None:  # fmt: skip
    """kafka-python's array decoder, with the length checked before the first element is read."""
    n = ctx.next_var("n")
    if compact:
        UnsignedVarInt32.emit_decode_from(ctx, n, indent)
        ctx.emit(indent, f"{n} -= 1")
    else:
        ctx.emit(indent, f'{n} = unpack_from(">i", data, pos)[0]')
        ctx.emit(indent, "pos += 4")
    ctx.globs["_refuse_array"] = _refuse_array
    ctx.emit(indent, f"if {n} < 0:")
    ctx.emit(indent, f"    {var_name} = None")
    ctx.emit(indent, f"elif {n} > {MAX_ARRAY_LENGTH} or {n} > len(data) - pos:")
    ctx.emit(indent, f"    raise _refuse_array({n}, len(data) - pos)")
    ctx.emit(indent, "else:")
    inner = indent + "    "
    ctx.emit(inner, f"{var_name} = []")
    idx, item = ctx.next_var("idx"), ctx.next_var("item")
    ctx.emit(inner, f"for {idx} in range({n}):")
    self.array_of.emit_decode_from(ctx, item, inner + "    ", version=version, compact=compact, tagged=tagged)
    ctx.emit(inner, f"    {var_name}.append({item})")


def _remaining(data: Any) -> int:
    """Bytes left in the stream kafka-python's plain decoders read (a BytesIO: the compiled decoders
    hand it the rest of the request); any other stream is of unknown length, held to the limits only."""
    if isinstance(data, io.BytesIO):
        with data.getbuffer() as view:
            return view.nbytes - data.tell()
    return sys.maxsize


def _decode_array(
    self: ArrayField, data: Any, version: Any = None, compact: bool = False, tagged: Any = False
) -> list[Any] | None:
    """kafka-python's plain array decode (a tagged field's array), with the length checked first."""
    count = UnsignedVarInt32.decode(data) - 1 if compact else Int32.decode(data)
    if count < 0:
        return None
    if (refused := array_length_refused(count, _remaining(data))) is not None:
        raise refused
    return [self.array_of.decode(data, version=version, compact=compact, tagged=tagged) for _ in range(count)]


def _decode_tagged_fields(self: TaggedFields, data: Any, version: Any = None) -> dict[str, Any]:
    """kafka-python's tagged-field section decode (`data`: a stream), with the count checked first and
    an unknown field cut short by the end of the request refused."""
    count = UnsignedVarInt32.decode(data)
    if (refused := tagged_field_count_refused(count, _remaining(data))) is not None:
        raise refused
    fields = self._tags
    decoded: dict[str, Any] = {}
    for _ in range(count):
        tag = UnsignedVarInt32.decode(data)
        size = UnsignedVarInt32.decode(data)
        field = fields.get(tag)
        if field is not None:  # struct tags have an empty nested tagged-field section (tagged=None)
            decoded[field.name] = field.decode(data, version=version, compact=True, tagged=None)
            continue
        value = data.read(size)
        if len(value) != size:
            raise WireFormatError(f"tagged field {tag} of {size} bytes runs past the end of the request")
        decoded[f"_{tag}"] = value
    return decoded
