"""Go clients from the Go module proxy (tests/go_clients/go.mod): IBM/sarama, segmentio/kafka-go and
franz-go, each a small program of this folder, built once per session (`programs.build`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.go_clients.programs import GoMissing, build


@pytest.fixture(scope="session")
def go_programs() -> dict[str, Path]:
    """name -> built executable. A missing toolchain fails with what to install."""
    try:
        return build()
    except GoMissing as exc:
        pytest.fail(str(exc))
