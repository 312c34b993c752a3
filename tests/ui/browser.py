"""Headless Chromium for the explorer tests: Debian's ``chromium`` driven through its
``chromedriver`` by Selenium (never a browser downloaded at test time), and the checks on
its screenshots."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WINDOW = (1280, 900)


def require_chromium() -> None:
    """Skip, saying why, where Debian's chromium and chromium-driver are not installed."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not found; install with: "
            "apt-get install -y chromium chromium-driver (.ci/run does)"
        )
    pytest.importorskip("selenium", reason="pip install -e '.[test]' installs selenium")
    pytest.importorskip("PIL", reason="pip install -e '.[test]' installs pillow")


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium session. The driver's path is given, so Selenium Manager (which
    would download a driver) is never run."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


class Page:
    """The explorer of one server in one browser tab: open views, wait, find, shoot."""

    def __init__(self, driver: Any, url: str, shots: Path) -> None:
        self.driver = driver
        self.url = url.rstrip("/") + "/ui/"
        self.shots = shots
        shots.mkdir(parents=True, exist_ok=True)

    def start(self, view: str = "", key: str | None = None) -> float:
        """Load the page afresh (a new session: no key, no scope kept); type ``key`` into
        the key prompt when given. Returns the seconds until the view had rendered."""
        self.forget_session()
        started = time.perf_counter()
        self.driver.get(self.url + view)
        if key is not None:
            self.wait_for("dialog.key-dialog[open] input[name=key]").send_keys(key + "\n")
        self.wait_ready()
        return time.perf_counter() - started

    def forget_session(self) -> None:
        """Clear the tab's session storage of the server's origin (the key and the scope),
        from a page of that origin that runs no script."""
        self.driver.get(self.url.removesuffix("/ui/") + "/v1/health")
        self.driver.execute_script("sessionStorage.clear()")

    def go(self, view: str) -> None:
        """Change the hash (the page stays loaded, as when a link is followed) and wait
        for the new view."""
        self.driver.execute_script(
            """document.querySelector("section.view")?.removeAttribute("data-ready");
            if (location.hash === arguments[0]) dispatchEvent(new HashChangeEvent("hashchange"));
            else location.hash = arguments[0];""",
            view,
        )
        self.wait_ready()

    def wait_ready(self, timeout: float = 30.0) -> Any:
        return self.wait_for("section.view[data-ready]", timeout)

    def wait_for(self, css: str, timeout: float = 30.0) -> Any:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        def found(driver: Any) -> Any:
            elements = driver.find_elements(By.CSS_SELECTOR, css)
            return elements[0] if elements else False

        return WebDriverWait(self.driver, timeout).until(found, f"no {css!r} on the page")

    def wait_text(self, css: str, start: str, timeout: float = 30.0) -> str:
        """Until the first ``css`` element's text starts with ``start`` (after a
        navigation, while the old view may still be shown)."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        def shown(driver: Any) -> str | bool:
            elements = driver.find_elements(By.CSS_SELECTOR, css)
            text = elements[0].text if elements else ""
            return text if text.startswith(start) else False

        wait = WebDriverWait(
            self.driver, timeout, ignored_exceptions=(StaleElementReferenceException,)
        )
        return wait.until(shown, f"{css!r} never showed {start!r}")

    def all(self, css: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def timings(self) -> dict[str, Any]:
        return self.driver.execute_script("return window.linkmemTimings")

    def errors(self) -> list[str]:
        """The page's script errors so far (answers such as a 401 are the server's)."""
        log = self.driver.get_log("browser")
        return [e["message"] for e in log if e["level"] == "SEVERE" and e["source"] != "network"]

    def shoot(self, name: str) -> Path:
        """A screenshot of the window, checked not to be blank."""
        path = self.shots / f"{name}.png"
        assert self.driver.save_screenshot(str(path)), f"no screenshot for {name}"
        assert_not_blank(path)
        return path


def assert_not_blank(path: Path) -> None:
    """The image has the window's size, many colours and real contrast (a blank or
    single-colour page has neither)."""
    from PIL import Image, ImageStat

    with Image.open(path) as image:
        rgb = image.convert("RGB")
        width, height = rgb.size
        colours = rgb.getcolors(maxcolors=1 << 20) or []
        spread = sum(ImageStat.Stat(rgb).stddev) / 3
    assert width >= WINDOW[0] * 0.9 and height >= WINDOW[1] * 0.6, (path, rgb.size)
    assert len(colours) >= 16, f"{path.name}: only {len(colours)} colours"
    assert spread >= 8.0, f"{path.name}: colour deviation {spread:.1f} (blank?)"
