"""Tuning glibc's malloc so that the megabyte buffers of the data path reuse memory, not fresh pages.

Every produce frame, record copy and fetch response is a buffer of about a megabyte. With glibc's
defaults the heap top above 2 x the (dynamic) mmap threshold is given back to the kernel as soon as
it is freed, so the next buffer of that size is faulted in page by page and zeroed again: measured
with `perf`, page faults were over a third of the broker's CPU while producing, which halved per-GiB
CPU for produce and consume once removed. The settings keep up to `TRIM_BYTES` of freed heap for
reuse and fix the mmap threshold (only buffers above `MMAP_BYTES` get their own mapping).
Applied only on glibc, and never over a `MALLOC_*` setting the operator chose in the environment.
"""

from __future__ import annotations

import os
import sys

# glibc's malloc.h parameter numbers.
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3

TRIM_BYTES = 24 << 20  # freed heap kept for reuse before it is returned to the kernel
TOP_PAD_BYTES = 8 << 20  # heap grown by this much more at a time
MMAP_BYTES = 32 << 20  # glibc's largest allowed threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX)

# `kafkito serve` applies them this long after its loop starts (broker.cli): after the first requests,
# which need none of it (ctypes: ~1.5 ms of a start), before data flows.
TUNE_AFTER_S = 0.5

_ENVIRONMENT = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_")


def keep_freed_memory() -> bool:
    """Apply the settings; whether they were applied (False off glibc or when the environment sets them)."""
    if not sys.platform.startswith("linux") or any(name in os.environ for name in _ENVIRONMENT):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        gnu_get_libc_version = libc.gnu_get_libc_version  # glibc only (not musl)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    del gnu_get_libc_version
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    applied = mallopt(_M_MMAP_THRESHOLD, MMAP_BYTES) == 1
    applied = mallopt(_M_TRIM_THRESHOLD, TRIM_BYTES) == 1 and applied
    return bool(mallopt(_M_TOP_PAD, TOP_PAD_BYTES) == 1) and applied
