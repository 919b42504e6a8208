"""The rendered report in a real headless browser: it fits a 1280×800 window, every plot decodes, the page logs no
error and asks for nothing but itself, and the answers come first.

Chromium comes from the system (`apt-get install chromium`), never from `playwright install`: Playwright's Python
package only drives it. Without Chromium on PATH, or without the package, every test here skips and says why.
One browser per module, under a hard time limit: every process it starts (each carries a mark in its environment,
crash handlers included) is killed when the limit passes, and whatever is left of them at the end.
"""

import contextlib
import os
import re
import shutil
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jaxmlp.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
WIDTH, HEIGHT = 1280, 800
BROWSER_LIMIT_S = 90  # the browser's whole life; it is killed when this passes
STEP_LIMIT_MS = 30_000  # launch, navigation, each call
MAX_BYTES = 1_000_000

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
NO_CHROMIUM = "no Chromium on PATH (chromium, chromium-browser): `apt-get install chromium` to run it"

# Elements whose right edge passes the window and that no box inside the body scrolls sideways (overflow-x auto or
# scroll; a scrolling body is the page scrolling): the outermost of each such run only, as "tag#id.class right=N".
UNCONTAINED = """(width) => {
  const scrolls = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o === 'auto' || o === 'scroll') return true;
    }
    return false;
  };
  const past = new Set([...document.body.querySelectorAll('*')].filter(
    (el) => el.getBoundingClientRect().right > width + 0.5 && !scrolls(el)));
  return [...past].filter((el) => !past.has(el.parentElement)).map((el) =>
    el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className ? '.' + el.className : '')
    + ' right=' + Math.round(el.getBoundingClientRect().right));
}"""


def _results(tmp: Path) -> Path:
    """A results folder of the fixtures: real sweeps, a bisection, a timeline and scaling, and hand-made runs."""
    folder = tmp / "reports"
    shutil.copytree(FIXTURES / "runs", folder)
    for name in ("bench-cpu.json", "bench-tpu.json", "train-cpu.json"):
        shutil.copy(FIXTURES / name, folder)
    return folder


@pytest.fixture(scope="module")
def index_html(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    out = tmp / "out"
    assert main(["report", "--results", str(_results(tmp)), "--out", str(out)]) == 0
    return out / "index.html"


MARK = "JAXMLP_BROWSER_TEST"  # in the environment of every process the browser starts, crash handlers included


def _marked(mark: bytes) -> list[int]:
    """The processes whose environment holds ``mark`` (Linux's /proc; nowhere else)."""
    found = []
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else ():
        try:
            if entry.name.isdigit() and mark in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            pass
    return found


def _kill(mark: bytes) -> None:
    for pid in _marked(mark):
        with contextlib.suppress(ProcessLookupError):  # ended meanwhile
            os.kill(pid, signal.SIGKILL)


def _reap(mark: bytes, wait_s: float) -> None:
    """Let the browser's processes end by themselves for ``wait_s``, then kill what is left: no orphan."""
    deadline = time.monotonic() + wait_s
    while _marked(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    _kill(mark)
    time.sleep(0.2)
    left = _marked(mark)
    assert not left, f"browser processes outlived the test even after SIGKILL: {left}"


@dataclass
class Opened:
    tab: Any  # playwright's Page
    seen: dict[str, list[Any]]  # console messages, page errors, requests and failed requests, while it loaded

    def evaluate(self, script: str, arg: Any = None) -> Any:
        return self.tab.evaluate(script, arg)


@pytest.fixture(scope="module")
def page(index_html, tmp_path_factory):
    """The report open in headless Chromium at 1280×800, with what it logged and asked for while it loaded.

    Any request other than file: or data: is aborted, so nothing leaves the machine. The browser's home is a
    temporary folder (its profile and crash database too), and it runs under ``BROWSER_LIMIT_S``.
    """
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    sync_api = pytest.importorskip("playwright.sync_api", reason="no playwright package (it drives Chromium): "
                                   "`pip install -e .[test]`")  # fmt: skip
    home = tmp_path_factory.mktemp("browser-home")
    token = f"{os.getpid()}-{time.monotonic_ns()}"
    mark = f"{MARK}={token}".encode()
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_CACHE_HOME": str(home / ".cache"), MARK: token}  # fmt: skip
    watchdog = threading.Timer(BROWSER_LIMIT_S, _kill, (mark,))
    watchdog.daemon = True
    watchdog.start()
    try:
        with sync_api.sync_playwright() as pw:
            # --no-sandbox: root (CI, containers) cannot start Chromium's sandbox; the page is our own file.
            # --disable-dev-shm-usage: containers' /dev/shm is often 64 MB.
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"],
                                         env=env, timeout=STEP_LIMIT_MS)  # fmt: skip
            try:
                tab = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
                tab.set_default_timeout(STEP_LIMIT_MS)
                seen = {"console": [], "errors": [], "requests": [], "failed": []}
                tab.on("console", lambda m: seen["console"].append((m.type, m.text)))
                tab.on("pageerror", lambda e: seen["errors"].append(str(e)))
                tab.on("request", lambda r: seen["requests"].append(r.url))
                tab.on("requestfailed", lambda r: seen["failed"].append(f"{r.url}: {r.failure}"))
                tab.route(re.compile(r"^(?!file:|data:)"), lambda route: route.abort())
                tab.goto(index_html.as_uri(), wait_until="load")
                yield Opened(tab, seen)
            finally:
                browser.close()
    finally:
        watchdog.cancel()
        _reap(mark, wait_s=5)


def test_nothing_overflows_the_window_sideways(page):
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= WIDTH, f"the page is {width} px wide in a {WIDTH} px window"


def test_what_is_wider_than_the_page_scrolls_in_its_own_box(page):
    uncontained = page.evaluate(UNCONTAINED, WIDTH)
    assert not uncontained, f"{len(uncontained)} element(s) pass the {WIDTH} px window: {uncontained[:10]}"


def test_every_image_decodes(page):
    images = page.evaluate("[...document.images].map(i => [i.alt, i.complete, i.naturalWidth])")
    assert images, "the report has no image"
    broken = [alt for alt, complete, natural_width in images if not (complete and natural_width > 0)]
    assert not broken, f"{len(broken)} of {len(images)} images did not decode: {broken}"


def test_no_console_error_and_no_request_but_the_file(page, index_html):
    seen = page.seen
    assert not seen["errors"], seen["errors"]
    assert not [text for kind, text in seen["console"] if kind == "error"], seen["console"]
    assert not seen["failed"], seen["failed"]
    assert [url for url in seen["requests"] if not url.startswith("data:")] == [index_html.as_uri()]


def test_the_overview_comes_first(page):
    first = page.evaluate(
        "(() => { const s = document.body.querySelector('section, .section');"
        " return s && {tag: s.tagName.toLowerCase(), id: s.id}; })()"
    )
    assert first is not None, "the report has no section (no <section>, no class 'section')"
    assert first["id"] == "overview", f"the first section is <{first['tag']} id='{first['id']}'>, not the overview"


def test_the_page_is_under_a_megabyte(index_html):
    size = os.path.getsize(index_html)
    assert size < MAX_BYTES, f"index.html is {size} bytes, over {MAX_BYTES}"
