"""A streams group's console pages in headless chromium: listed as `streams` among the groups, its page
shows the topology, the members with their active and standby tasks, epochs and status, the input
topics' lag (updated in place as offsets are committed) and the rebalance timeline."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from tests.console.streams_apps import STREAMS_PROPS, form
from tests.console.support import ConsoleBroker, produce
from tests.console.test_browser import severe_logs, text_of, unstale, wait_for
from tests.support.artifacts import DOCS_IMAGES_ENV, output_path
from tests.support.wire import WireClient


@pytest.fixture(scope="module")
def streams_console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleBroker]:
    broker = ConsoleBroker(Path(tmp_path_factory.mktemp("streams")) / "data", props=STREAMS_PROPS).start()
    yield broker
    assert broker.stop() == 0, broker.log_path.read_text()[-4000:]


def _cells(driver: Any, table: str) -> list[list[str]]:
    rows = driver.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")
    return [[c.text for c in row.find_elements(By.TAG_NAME, "td")] for row in rows]


def test_a_streams_groups_page_shows_topology_tasks_lag_and_timeline(
    streams_console: ConsoleBroker, browser: Any, tmp_path: Path
) -> None:
    console = streams_console
    with WireClient(console.bootstrap) as client:
        a, b = form(console, client, "clicks", "page-views", 2)
        produce(console.bootstrap, "page-views", [(b"u%d" % i, b"/home", []) for i in range(8)])
        a.commit({0: 0, 1: 0})
        browser.get(console.url + "/console/groups")
        row = browser.find_element(By.LINK_TEXT, "clicks").find_element(By.XPATH, "./ancestor::tr")
        assert [c.text for c in row.find_elements(By.TAG_NAME, "td")][1:4] == ["Stable", "streams", "2"]

        browser.get(console.url + "/console/groups/clicks")
        assert text_of(browser, "group-state") == "Stable"
        assert text_of(browser, "group-lag") == "8"
        assert (
            text_of(browser, "topology-epoch") == "epoch 1" and text_of(browser, "topology-ready") == "ready"
        )
        assert _cells(browser, "subtopologies") == [
            ["0", "page-views", "-", "clicks-counts-repartition", "-"],
            ["1", "-", "clicks-counts-repartition (2)", "-", "clicks-counts-changelog (2)"],
        ]
        members = {row[0]: row for row in _cells(browser, "members")}
        assert set(members) == {a.member_id, b.member_id}
        for app in (a, b):
            row = members[app.member_id]
            assert row[1:5] == [f"process-{app.member_id}", "wire-test", str(app.epoch), "STABLE"]
            assert row[5] != "-" and row[6] != "-" and row[7] == "-"  # active, standby; no warm-up
        assert sorted(t for row in members.values() for t in row[5].split()) == ["0_0", "0_1", "1_0", "1_1"]
        offsets = {(row[0], row[1]): row for row in _cells(browser, "offsets")}
        assert offsets["page-views", "0"][2] == "0" and offsets["page-views", "1"][2] == "0"
        ends = {o["partition"]: o["end_offset"] for o in console.get("/api/groups/clicks")["offsets"]
                if o["topic"] == "page-views"}  # fmt: skip
        a.commit(ends)  # not reloaded: the page updates itself
        wait_for(browser, lambda d: text_of(d, "group-lag") == "0")
        generations = unstale(
            lambda: int(browser.find_element(By.ID, "timeline-svg").get_attribute("data-generations"))
        )
        assert generations >= 2
        browser.save_screenshot(str(output_path(DOCS_IMAGES_ENV, tmp_path) / "console-streams-group.png"))

        b.leave()
        a.heartbeat()
        browser.get(console.url + "/console/groups/clicks/timeline")
        rows = _cells(browser, "generations")
        assert rows[0][2] == f"member {b.member_id} left or was fenced"  # newest first
    assert severe_logs(browser) == []
