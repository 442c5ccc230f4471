"""One `kafkito serve --control` broker per test module (tests use their own topic and group names)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.control.support import ControlledBroker


@pytest.fixture(scope="module")
def controlled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlledBroker]:
    broker = ControlledBroker(Path(tmp_path_factory.mktemp("controlled")) / "data").start()
    yield broker
    assert broker.stop() == 0, broker.log_path.read_text()[-4000:]
