"""The broker's malloc settings: applied on glibc, never over the operator's MALLOC_* environment."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

_PROBE = "from kafkito.broker.malloc_tuning import keep_freed_memory; print(keep_freed_memory())"


def _probe(env: dict[str, str]) -> str:
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_applied_on_glibc_only() -> None:
    glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    assert _probe(env) == str(glibc)


def test_the_environment_setting_wins() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env["MALLOC_TRIM_THRESHOLD_"] = str(1 << 20)
    assert _probe(env) == "False"
