"""One `kafkito serve --http` broker per test module (and a `--http-write` one for those that
write), and a headless Debian chromium (Selenium)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.console.support import ConsoleBroker

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1400,1000",
)  # fmt: skip


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleBroker]:
    broker = ConsoleBroker(Path(tmp_path_factory.mktemp("console")) / "data").start()
    yield broker
    assert broker.stop() == 0, broker.log_path.read_text()[-4000:]


@pytest.fixture(scope="module")
def writable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleBroker]:
    """A `--http-write` console of the module's own."""
    broker = ConsoleBroker(Path(tmp_path_factory.mktemp("writable")) / "data", "--http-write").start()
    yield broker
    assert broker.stop() == 0, broker.log_path.read_text()[-4000:]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.fail("chromium and chromium-driver are not installed: run `make install-clients`")
    profile = tempfile.mkdtemp(prefix="kafkito-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
