"""`kafkito control` takes `--url` anywhere on its line: before the verb, after it, between a verb
group and its verb; the endpoint is then what is reached (a closed port: one line, exit 1)."""

from __future__ import annotations

import pytest

from tests.cli.conftest import kafkito
from tests.support.net import free_port


@pytest.mark.parametrize(
    "words",
    [
        ("control", "--url", "URL", "clock"),
        ("control", "clock", "--url", "URL"),
        ("control", "fault", "--url", "URL", "list"),
        ("control", "fault", "list", "--url", "URL"),
    ],
)
def test_url_anywhere_is_the_endpoint_reached(words: tuple[str, ...]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    done = kafkito(*(url if w == "URL" else w for w in words))
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("kafkito control: ") and done.stderr.count("\n") == 1
    assert "unrecognized arguments" not in done.stderr and "no endpoint" not in done.stderr
