"""CRC-32C (Castagnoli) of record batches, with the `crc32c` package loaded on first use.

The package's `__init__` pulls in `importlib.metadata` (~20 ms), which would land on every broker start.
"""

from __future__ import annotations

from collections.abc import Callable

Buffer = bytes | bytearray | memoryview

_impl: Callable[[Buffer], int] | None = None


def crc32c(data: Buffer) -> int:
    global _impl
    if _impl is None:
        from crc32c import crc32c as impl

        _impl = impl
    return _impl(data)
