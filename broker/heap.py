"""Giving freed request memory back to the operating system (glibc's `malloc_trim`), where there is one.

Partly received requests are held in buffers of tens to hundreds of KB, interleaved on the C heap with
everything else; once freed, glibc keeps most of them (they are not at the top of the heap), so the
process's RSS would stay at its peak after a burst of big or slow requests. `malloc_trim(0)` returns
every free page, wherever it is. It costs a walk of the free lists, so it runs only after a burst.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import structlog

from kafkito.broker.memory_pool import MemoryPool

log = structlog.get_logger("kafkito.server")

TRIM_AFTER_BYTES = 16 * 1024 * 1024  # trim once this much request memory was freed since the last trim


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, looked up on the first trim: ctypes costs start-up milliseconds."""
    import ctypes

    try:
        # The process's own symbols include libc's: no library search (which would spawn ldconfig).
        function = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to do
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    trim: Callable[[int], int] = function
    return trim


def trim_after_burst(pool: MemoryPool) -> None:
    """Trim the heap if requests held TRIM_AFTER_BYTES more at their peak than now (run periodically)."""
    if pool.peak - pool.used >= TRIM_AFTER_BYTES:
        log.debug("heap.trim", peak=pool.peak, used=pool.used)
        pool.peak = pool.used
        trim = _malloc_trim()
        if trim is not None:
            trim(0)
