"""Headless Chromium (Debian's chromium and chromium-driver) driven by
selenium, with the flags headless Chromium needs as root; a profile in a temporary
folder of the test's own."""

from __future__ import annotations

import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"


@contextmanager
def chromium(profile: Path) -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    if not (shutil.which(CHROMIUM) and shutil.which(DRIVER)):
        pytest.skip("chromium and chromium-driver are not installed (scripts/setup.sh)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--no-first-run", "--disable-quic", "--window-size=1400,1500"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    try:
        yield drv
    finally:
        drv.quit()


def wait_for(drv: Any, js: str, timeout: float = 60, what: str = "") -> Any:
    """Polls the page's JS expression until it is truthy; returns its value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = drv.execute_script(f"return ({js});")
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what or js}")


def value(drv: Any, element_id: str) -> tuple[str, str]:
    """(data-value, text) of an element of the page."""
    el = drv.find_element("id", element_id)
    return el.get_attribute("data-value"), el.text


def page_errors(drv: Any) -> list[str]:
    return [e["message"] for e in drv.get_log("browser") if e["level"] == "SEVERE"]


def number(text: str) -> float:
    return float(text.replace(",", "").split()[0])

