"""Go clients from Debian (`make install-clients`): Sarama and segmentio/kafka-go, each a small program
of this folder built once per session with Debian's Go in GOPATH mode (no module download)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
GOCODE = Path("/usr/share/gocode")  # where Debian's golang-*-dev packages put their sources
PROGRAMS = ("sarama_client", "sarama_versions", "kafkago_client")


@pytest.fixture(scope="session")
def go_programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name -> built executable. A missing toolchain or library fails with what to install."""
    go = shutil.which("go")
    if go is None or not (GOCODE / "src/github.com/Shopify/sarama").is_dir():
        pytest.fail("Go and Debian's Go Kafka clients are missing: run `make install-clients`")
    root = tmp_path_factory.mktemp("gopath")
    env = {
        **os.environ,
        "GOPATH": f"{root}:{GOCODE}",
        "GO111MODULE": "off",
        "GOFLAGS": "",
        "GOCACHE": str(root / "cache"),
        "CGO_CFLAGS": "-Wno-deprecated-declarations",  # DataDog/zstd uses a deprecated zstd call
    }
    built: dict[str, Path] = {}
    for name in PROGRAMS:
        shutil.copytree(HERE / name, root / "src" / name)
        exe = root / "bin" / name
        subprocess.run([go, "build", "-o", str(exe), name], cwd=root, env=env, check=True, timeout=300)
        built[name] = exe
    return built
