"""The console in a real headless chromium: what a person sees after producing, consuming and
rebalancing, updated live without a reload, with no JavaScript error; screenshots for the docs
(written to docs/images by `make docs-images`, to the test's temporary directory otherwise)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.console.support import ConsoleBroker, PollingConsumer, produce, wait_until
from tests.support.artifacts import DOCS_IMAGES_ENV, output_path

T = TypeVar("T")


def severe_logs(driver: Any) -> list[dict[str, Any]]:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def unstale(read: Callable[[], T]) -> T:
    """`read()`, again if the page swapped its content in between finding an element and reading it
    (the live update replaces <main>'s content whenever it changes)."""
    for _ in range(20):
        try:
            return read()
        except StaleElementReferenceException:
            continue
    return read()


def text_of(driver: Any, element_id: str) -> str:
    return unstale(lambda: str(driver.find_element(By.ID, element_id).text))


def wait_for(driver: Any, check: Any, timeout: float = 60) -> Any:
    ignored = (StaleElementReferenceException,)  # content swapped by a live update: look again
    return WebDriverWait(driver, timeout, poll_frequency=0.2, ignored_exceptions=ignored).until(check)


def test_a_produced_topic_and_its_messages_are_shown(console: ConsoleBroker, browser: Any) -> None:
    headers = [("trace", b"abc-123")]
    produce(console.bootstrap, "orders", [
        (b"alice", b'{"item": "book", "qty": 2}', headers),
        (b"bob", b"plain text value", []),
        (None, bytes([0, 159, 255, 1]), []),
    ])  # fmt: skip
    browser.get(console.url + "/console/topics")
    link = wait_for(browser, lambda d: d.find_element(By.LINK_TEXT, "orders"))
    row = link.find_element(By.XPATH, "./ancestor::tr")
    assert row.find_elements(By.TAG_NAME, "td")[2].text == "3"  # messages
    link.click()
    assert text_of(browser, "topic-name") == "orders"
    cells = browser.find_elements(By.CSS_SELECTOR, "#partitions tbody tr td")
    assert [c.text for c in cells[:4]] == ["0", "0", "3", "3"]  # partition, start, end, messages
    assert "retention.ms" in browser.find_element(By.ID, "configs").text
    browser.find_element(By.LINK_TEXT, "browse").click()
    rows = browser.find_elements(By.CSS_SELECTOR, "#messages tbody tr")
    assert len(rows) == 3
    first = [td.text for td in rows[0].find_elements(By.TAG_NAME, "td")]
    assert first[0] == "0" and first[2] == "alice"
    assert '"item": "book"' in first[3] and "\n" in first[3]  # JSON, pretty-printed
    assert "trace" in first[4] and "abc-123" in first[4]
    assert first[1].endswith("UTC")
    assert rows[1].find_elements(By.TAG_NAME, "td")[3].text == "plain text value"
    assert rows[2].find_elements(By.TAG_NAME, "td")[3].text == "00 9f ff 01"  # not UTF-8: hex
    browser.get(console.url + "/console/topics/orders/0/messages?offset=1&format=hex")
    rows = browser.find_elements(By.CSS_SELECTOR, "#messages tbody tr")
    assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows] == ["1", "2"]
    assert rows[0].find_elements(By.TAG_NAME, "td")[2].text == "62 6f 62"  # "bob" in hex
    assert severe_logs(browser) == []


def test_a_groups_lag_falls_as_its_consumer_commits(console: ConsoleBroker, browser: Any) -> None:
    produce(console.bootstrap, "payments", [(None, b"payment %d" % i, []) for i in range(10)])
    consumer = PollingConsumer(console.bootstrap, "billing", "payments", "billing-app")
    try:
        wait_until(lambda: len(consumer.consumed) == 10, what="the consumer reading 10 records")
        consumer.commit_up_to(2)
        wait_until(lambda: console.get("/api/groups/billing")["lag"] == 8, what="the first commit")
        browser.get(console.url + "/console/groups/billing")
        assert text_of(browser, "group-lag") == "8"
        assert text_of(browser, "group-state") == "Stable"
        members = browser.find_element(By.ID, "members").text
        assert "billing-app" in members and "payments[0]" in members
        offsets = browser.find_elements(By.CSS_SELECTOR, "#offsets tbody tr td")
        assert [c.text for c in offsets[:5]] == ["payments", "0", "2", "10", "8"]
        consumer.commit_up_to(7)  # the page is not reloaded: it updates itself
        wait_for(browser, lambda d: text_of(d, "group-lag") == "3")
        consumer.commit_up_to(10)
        wait_for(browser, lambda d: text_of(d, "group-lag") == "0")
        browser.get(console.url + "/console/groups")
        row = browser.find_element(By.LINK_TEXT, "billing").find_element(By.XPATH, "./ancestor::tr")
        cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
        assert cells[1:4] == ["Stable", "classic", "1"] and cells[5] == "0"  # state, protocol, members; lag
    finally:
        consumer.close()
    assert severe_logs(browser) == []


def _generations(driver: Any) -> int:
    return unstale(lambda: int(driver.find_element(By.ID, "timeline-svg").get_attribute("data-generations")))


def _svg_read(driver: Any) -> tuple[str, int, int]:
    svg = driver.find_element(By.ID, "timeline-svg")
    marks = [len(svg.find_elements(By.CSS_SELECTOR, css)) for css in (".mark-join", ".mark-sync")]
    return str(svg.text), marks[0], marks[1]


def _stable_with(console: ConsoleBroker, group: str, members: int) -> bool:
    status, body = console.call("GET", f"/api/groups/{group}")
    return status == 200 and body["state"] == "Stable" and len(body["members"]) == members


def test_the_timeline_gains_a_generation_when_a_member_joins_and_when_it_leaves(
    console: ConsoleBroker, browser: Any, tmp_path: Path
) -> None:
    images = output_path(DOCS_IMAGES_ENV, tmp_path)
    produce(console.bootstrap, "clicks", [(None, b"click %d" % i, []) for i in range(20)])
    first = PollingConsumer(console.bootstrap, "dashboard", "clicks", "dashboard-1")
    second: PollingConsumer | None = None
    try:
        wait_until(lambda: _stable_with(console, "dashboard", 1), what="one member, Stable")
        browser.get(console.url + "/console/groups/dashboard/timeline")
        alone = _generations(browser)
        assert alone >= 1
        second = PollingConsumer(console.bootstrap, "dashboard", "clicks", "dashboard-2")
        both = (first, second)
        wait_until(lambda: _stable_with(console, "dashboard", 2), what="two members, Stable")
        together = wait_for(browser, lambda d: _generations(d) > alone and _generations(d))
        svg_text, joins, syncs = unstale(lambda: _svg_read(browser))
        assert "dashboard-2" in svg_text and "dashboard-1" in svg_text
        assert joins
        assert syncs
        reasons = text_of(browser, "generations")
        assert "adding new member" in reasons
        _check_axis_hover_and_legend(console, browser)
        # The member assigned the partition reads it (on a loaded machine, not always yet): commit part of it
        # (both are asked; the one that holds the partition commits).
        wait_until(lambda: any(c.consumed for c in both), what="a member reading the partition")
        for consumer in both:
            consumer.commit_up_to(12)
        wait_until(lambda: console.get("/api/groups/dashboard")["lag"] == 8, what="a commit at 12 of 20")
        images.mkdir(parents=True, exist_ok=True)
        browser.get(console.url + "/console/groups/dashboard")
        wait_for(browser, lambda d: text_of(d, "group-state") == "Stable" and text_of(d, "group-lag") == "8")
        wait_for(browser, lambda d: "on" in d.find_element(By.ID, "live").get_attribute("class"))
        browser.save_screenshot(str(images / "console-group.png"))
        browser.get(console.url + "/console/groups/dashboard/timeline")
        second.close()
        second = None
        wait_until(lambda: _stable_with(console, "dashboard", 1), what="back to one member")
        wait_for(browser, lambda d: _generations(d) > together)
        wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline-svg .mark-leave"))
        assert "LeaveGroup" in text_of(browser, "generations")
        browser.save_screenshot(str(images / "console-timeline.png"))
    finally:
        if second is not None:
            second.close()
        first.close()
    assert severe_logs(browser) == []


def _check_axis_hover_and_legend(console: ConsoleBroker, browser: Any) -> None:
    """The time axis is the broker clock's epoch milliseconds in UTC; a band's title has its full
    reason and exact start; the legend names every mark."""
    first_ms = console.get("/api/groups/dashboard/timeline")["generations"][0]["start_ms"]
    first = dt.datetime.fromtimestamp(first_ms / 1000, dt.UTC)
    assert first.year >= 2024  # a wall-clock time, not seconds since the machine booted

    def read() -> tuple[str, list[str], list[str], str]:
        axis = browser.find_element(By.ID, "timeline-axis")
        ticks = [t.text for t in axis.find_elements(By.CSS_SELECTOR, "text.tick")]
        titles = [
            str(t.get_attribute("textContent"))
            for t in browser.find_elements(By.CSS_SELECTOR, "#timeline-svg g.band > title")
        ]
        return str(axis.get_attribute("data-start-ms")), ticks, titles, text_of(browser, "timeline-legend")

    start, ticks, titles, legend = unstale(read)
    assert int(start) == first_ms and ticks[0] == first.strftime("%H:%M:%S")
    assert all(re.fullmatch(r"\d\d:\d\d:\d\d", tick) for tick in ticks)
    assert any("adding new member" in t and first.strftime("%Y-%m-%d") in t for t in titles)
    assert all(kind in legend for kind in ("join", "sync", "leave", "expiry", "removed", "replaced"))


def test_every_page_loads_without_a_javascript_error(console: ConsoleBroker, browser: Any) -> None:
    produce(console.bootstrap, "pages", [(b"k", b"v", [])])
    groups = console.get("/api/groups")["groups"]
    paths = [
        "/",
        "/console/",
        "/console/topics",
        "/console/topics/pages",
        "/console/topics/pages/0/messages",
        "/console/groups",
        "/console/topics/pages/messages",
        "/console/topics?internal=1",
        "/console/acls",
        "/console/users",
        "/console/transactions",
        "/console/broker",
        "/console/features",
    ]
    for group in groups:
        paths += [f"/console/groups/{group['group_id']}", f"/console/groups/{group['group_id']}/timeline"]
    for path in paths:
        browser.get(console.url + path)
        assert browser.find_element(By.ID, "main").text.strip(), path
        assert browser.title.endswith("kafkito"), path
    browser.get(console.url + "/console/")
    cards = {card.get_attribute("data-stat") for card in browser.find_elements(By.CLASS_NAME, "card")}
    assert cards >= {"node", "uptime", "topics", "partitions", "groups", "connections", "produce", "fetch"}
    wait_for(browser, lambda d: "on" in d.find_element(By.ID, "live").get_attribute("class"))  # polled
    assert severe_logs(browser) == []


def _commit_without_joining(bootstrap: str, group: str, topic: str, offset: int) -> None:
    from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.commit({partition: OffsetAndMetadata(offset, "", -1)})
    finally:
        consumer.close()


def test_the_pages_write_actions_send_json_and_work(writable: ConsoleBroker, browser: Any) -> None:
    produce(writable.bootstrap, "to-reset", [(None, b"r%d" % i, []) for i in range(5)])
    produce(writable.bootstrap, "to-delete", [(None, b"x", [])])
    _commit_without_joining(writable.bootstrap, "resetters", "to-reset", 5)
    browser.get(writable.url + "/console/groups/resetters")
    assert text_of(browser, "group-lag") == "0"
    form = browser.find_element(By.ID, "reset-offsets").find_element(By.XPATH, "./ancestor::form")
    form.find_element(By.NAME, "topic").send_keys("to-reset")
    browser.find_element(By.ID, "reset-preview").click()  # "earliest" is selected
    wait_for(browser, lambda d: d.find_element(By.ID, "reset-offsets").is_displayed())
    browser.find_element(By.ID, "reset-offsets").click()
    wait_for(browser, lambda d: text_of(d, "group-lag") == "5")
    assert writable.get("/api/groups/resetters")["offsets"][0]["committed_offset"] == 0
    browser.get(writable.url + "/console/topics/to-delete")
    browser.find_element(By.ID, "delete-topic").click()
    browser.switch_to.alert.accept()  # "Delete topic to-delete?"
    wait_for(browser, lambda d: d.current_url.endswith("/console/topics"))
    assert writable.call("GET", "/api/topics/to-delete")[0] == 404
    assert "to-delete" not in browser.find_element(By.ID, "main").text
    assert severe_logs(browser) == []
