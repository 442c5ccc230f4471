"""The Go programs of tests/go_clients (Sarama, kafka-go, franz-go), built from this folder's go.mod with
the machine's Go (1.26 or newer: /usr/local/go/bin/go before any `go` on PATH, so that Debian's older
golang-go never builds them) into tests/go_clients/bin. `make install-clients` downloads the modules and
builds; a test session runs the same `go build`, which Go's build cache makes quick when nothing changed."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = HERE / "bin"
PROGRAMS = ("sarama_client", "sarama_versions", "kafkago_client", "franzgo_admin", "franzgo_compat")
PREFERRED_GO = Path("/usr/local/go/bin/go")
MIN_GO = (1, 26)
BUILD_TIMEOUT_S = 900  # a first build downloads and compiles the modules; never a performance threshold


class GoMissing(RuntimeError):
    """No Go new enough to build the programs; the message says what to install."""


def find_go() -> str:
    """The Go to build with: /usr/local/go/bin/go, else `go` on PATH, if it is at least MIN_GO."""
    candidates = [str(PREFERRED_GO)] if PREFERRED_GO.is_file() else []
    on_path = shutil.which("go")
    if on_path:
        candidates.append(on_path)
    seen = []
    for go in candidates:
        done = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60)
        found = re.match(r"go(\d+)\.(\d+)", done.stdout.strip())
        if found and (int(found[1]), int(found[2])) >= MIN_GO:
            return go
        seen.append(f"{go}: {done.stdout.strip() or done.stderr.strip()[:80]}")
    raise GoMissing(
        f"Go {'.'.join(map(str, MIN_GO))} or newer is needed to build tests/go_clients "
        f"(found: {seen or 'none'}); install it in /usr/local/go, then run `make install-clients`"
    )


def build(go: str | None = None) -> dict[str, Path]:
    """Build every program into BIN (one build at a time across processes) and return name -> path."""
    go = go or find_go()
    BIN.mkdir(exist_ok=True)
    env = {**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}
    with open(BIN / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            [go, "build", "-o", str(BIN) + os.sep, *(f"./{p}" for p in PROGRAMS)],
            cwd=HERE, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
        )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"go build in {HERE} failed:\n{done.stderr[-4000:]}")
    return {name: BIN / name for name in PROGRAMS}


def download(go: str) -> None:
    """Fetch the modules go.sum pins from the module proxy into the module cache (~/go/pkg/mod), once."""
    env = {**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"}
    done = subprocess.run(
        [go, "mod", "download"], cwd=HERE, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S
    )
    if done.returncode != 0:
        raise RuntimeError(f"go mod download in {HERE} failed:\n{done.stderr[-4000:]}")


if __name__ == "__main__":  # `make install-clients`: python3 -m tests.go_clients.programs
    try:
        found = find_go()
    except GoMissing as exc:
        raise SystemExit(str(exc)) from None
    download(found)
    for name, path in build(found).items():
        print(f"{name}: {path}")
