"""Topic and group names unique to one scenario and one client on a shared broker."""

from __future__ import annotations

import re

from tests.compat.clients.base import Driver


def slug(driver: Driver | str) -> str:
    name = driver if isinstance(driver, str) else driver.name
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def topic_for(scenario: str, driver: Driver | str) -> str:
    return f"{scenario}-{slug(driver)}"


def group_for(scenario: str, driver: Driver | str) -> str:
    return f"g-{scenario}-{slug(driver)}"
