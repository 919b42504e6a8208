"""The rendered report in a real headless browser: it fits a 1280×800 window, no element sits on another, every plot
decodes and is shown at a size where its smallest text is at least 10 px, the page is small and short before
anything is unfolded, logs no error and asks for nothing but itself, and the answers come first.

The report is of the fixtures (tests/fixtures), never of a user's results: two benchmark runs (CPU and TPU), a
training run, and a history of the CPU run on two machines (copies of it with later dates, other times and another
CPU model). Screenshots at 1280 px (the first screen, the whole page as loaded and unfolded) are written to the
test's temporary folder, or to the folder ``JAXMLP_SCREENSHOTS`` names.

Chromium comes from the system (`apt-get install chromium`), never from `playwright install`: Playwright's Python
package only drives it. Without Chromium on PATH, or without the package, every test here skips and says why.
One browser per module, under a hard time limit: every process it starts (each carries a mark in its environment,
crash handlers included) is killed when the limit passes, and whatever is left of them at the end.
"""

import contextlib
import copy
import json
import os
import re
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from jaxmlp.cli import main
from jaxmlp.report import plot_style

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
WIDTH, HEIGHT = 1280, 800
BROWSER_LIMIT_S = 120  # the browser's whole life; it is killed when this passes
STEP_LIMIT_MS = 30_000  # launch, navigation, each call
MAX_BYTES = 400_000
MAX_SCREENS = 12  # the page's height before anything is unfolded, in 1280×800 windows
MIN_FONT_PX = 10  # the smallest text of a plot, as shown
SCREENSHOTS = "JAXMLP_SCREENSHOTS"

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


SECONDS = ("min", "max", "mean", "stddev", "median", "iqr", "q1", "q3", "ld15iqr", "hd15iqr", "total")


def _rerun(document: dict, days: int, factor: float, cpu_model: str | None = None) -> dict:
    """A made-up later run of a benchmark file: ``days`` later, every time × ``factor``, on ``cpu_model``."""
    out = copy.deepcopy(document)
    stamp = datetime.fromisoformat(out["datetime"]) + timedelta(days=days)
    out["datetime"] = stamp.isoformat()
    info = out["machine_info"]["jaxmlp"]
    info["commit"] = out["commit_info"]["id"] = f"{days:x}" * 16
    if cpu_model:
        info["cpu_model"] = cpu_model
    for bench in out["benchmarks"]:
        stats = bench["stats"]
        for key in SECONDS:
            if isinstance(stats.get(key), (int, float)):
                stats[key] *= factor
        stats["data"] = [x * factor for x in stats["data"]]
        if stats.get("ops"):
            stats["ops"] /= factor
    return out


# Pairs of shown boxes (headings, paragraphs, tables, images, folds, lists; not those in a closed fold) that overlap
# by more than a pixel, one never inside the other; a box that scrolls sideways counts as its scroll box's width.
OVERLAPS = """() => {
  const shown = [...document.body.querySelectorAll('h1,h2,h3,p,table,img,details,ul,ol,nav,section')]
    .filter((el) => el.getClientRects().length > 0 && el.checkVisibility());  // not inside a closed fold
  const box = (el) => {
    const r = el.getBoundingClientRect();
    let right = r.right;
    for (let a = el.parentElement; a; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o === 'auto' || o === 'scroll') { right = Math.min(right, a.getBoundingClientRect().right); break; }
    }
    return {left: r.left, right, top: r.top, bottom: r.bottom};
  };
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
    + ' "' + (el.textContent || el.alt || '').trim().slice(0, 40) + '"';
  const boxes = shown.map(box);
  const out = [];
  for (let i = 0; i < shown.length; i++) {
    for (let j = i + 1; j < shown.length; j++) {
      if (shown[i].contains(shown[j]) || shown[j].contains(shown[i])) continue;
      const a = boxes[i], b = boxes[j];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 1 && h > 1) out.push([name(shown[i]), name(shown[j])]);
    }
  }
  return out;
}"""


# The height the page's shown plots and tables take, each kind together.
HEIGHTS = """() => Object.fromEntries(['img', 'table'].map((tag) => [tag, Math.round([...document.querySelectorAll(tag)]
  .filter((el) => el.checkVisibility()).reduce((sum, el) => sum + el.getBoundingClientRect().height, 0))]))"""


def _results(tmp: Path) -> Path:
    """The fixtures' results (real sweeps, a bisection, a timeline and scaling, hand-made runs), and a history of the
    CPU run: two later runs on its machine (the last 25% slower) and two on another CPU model."""
    folder = tmp / "reports"
    shutil.copytree(FIXTURES / "runs", folder)
    for name in ("bench-cpu.json", "bench-tpu.json", "train-cpu.json"):
        shutil.copy(FIXTURES / name, folder)
    cpu = json.loads((FIXTURES / "bench-cpu.json").read_text())
    for days, factor, model in ((1, 1.01, None), (2, 1.25, None), (1, 0.8, "Other CPU"), (3, 0.81, "Other CPU")):
        run = _rerun(cpu, days, factor, model)
        stamp = datetime.fromisoformat(run["datetime"]).strftime("%Y%m%dT%H%M%S")
        (folder / f"bench-{stamp}{'-other' if model else ''}-cpu.json").write_text(json.dumps(run))
    return folder


def _screenshots(tmp_path_factory) -> Path:
    named = os.environ.get(SCREENSHOTS)
    if named:
        Path(named).mkdir(parents=True, exist_ok=True)
        return Path(named)
    return tmp_path_factory.mktemp("screenshots")


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


@contextlib.contextmanager
def chromium(sync_api: Any, home: Path) -> Any:
    """The system's Chromium, headless, its home ``home``, under ``BROWSER_LIMIT_S``: every process it started is
    killed when the limit passes, and whatever is left of them at the end."""
    token = f"{os.getpid()}-{time.monotonic_ns()}"
    mark = f"{MARK}={token}".encode()
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), MARK: token}
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    watchdog = threading.Timer(BROWSER_LIMIT_S, _kill, (mark,))
    watchdog.daemon = True
    watchdog.start()
    try:
        with sync_api.sync_playwright() as pw:
            # --no-sandbox: root (CI, containers) cannot start Chromium's sandbox; the page is our own file.
            # --disable-dev-shm-usage: containers' /dev/shm is often 64 MB.
            browser = pw.chromium.launch(
                executable_path=CHROMIUM,
                args=["--no-sandbox", "--disable-dev-shm-usage"],
                env=env,
                timeout=STEP_LIMIT_MS,
            )
            try:
                yield browser
            finally:
                browser.close()
    finally:
        watchdog.cancel()
        _reap(mark, wait_s=5)


@dataclass
class Opened:
    tab: Any  # playwright's Page
    seen: dict[str, list[Any]]  # console messages, page errors, requests and failed requests, while it loaded
    shots: Path  # where the screenshots go
    folded: dict[str, Any] = field(default_factory=dict)  # the page as it loaded: its height, its boxes' overlaps

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
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="no playwright package (it drives Chromium): `pip install -e .[test]`"
    )
    with chromium(sync_api, tmp_path_factory.mktemp("browser-home")) as browser:
        tab = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        tab.set_default_timeout(STEP_LIMIT_MS)
        seen = {"console": [], "errors": [], "requests": [], "failed": []}
        tab.on("console", lambda m: seen["console"].append((m.type, m.text)))
        tab.on("pageerror", lambda e: seen["errors"].append(str(e)))
        tab.on("request", lambda r: seen["requests"].append(r.url))
        tab.on("requestfailed", lambda r: seen["failed"].append(f"{r.url}: {r.failure}"))
        tab.route(re.compile(r"^(?!file:|data:)"), lambda route: route.abort())
        tab.goto(index_html.as_uri(), wait_until="load")
        opened = Opened(tab, seen, _screenshots(tmp_path_factory))
        tab.screenshot(path=opened.shots / "first-screen.png")
        tab.screenshot(path=opened.shots / "page.png", full_page=True)
        opened.folded = {
            "height": opened.evaluate("document.documentElement.scrollHeight"),
            "overlaps": opened.evaluate(OVERLAPS),
            "parts": opened.evaluate(HEIGHTS),
        }
        yield opened


@pytest.fixture(scope="module")
def unfolded(page):
    """The page with every ``<details>`` open (after the checks of the page as loaded), and its screenshot."""
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    page.tab.screenshot(path=page.shots / "unfolded.png", full_page=True)
    return page


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


def test_the_page_is_small(index_html):
    size = os.path.getsize(index_html)
    assert size < MAX_BYTES, f"index.html is {size} bytes, over {MAX_BYTES}"


def test_the_page_is_short_before_anything_is_unfolded(page):
    height, parts = page.folded["height"], page.folded["parts"]
    assert height < MAX_SCREENS * HEIGHT, (
        f"the page is {height} px tall ({height / HEIGHT:.1f} screens of {HEIGHT}"
        f"): plots {parts['img']} px, tables {parts['table']} px"
    )


def test_no_box_sits_on_another_as_loaded(page):
    overlaps = page.folded["overlaps"]
    assert not overlaps, f"{len(overlaps)} pairs of boxes overlap: {overlaps[:5]}"


def test_no_box_sits_on_another_with_everything_unfolded(unfolded):
    overlaps = unfolded.evaluate(OVERLAPS)
    assert not overlaps, f"{len(overlaps)} pairs of boxes overlap: {overlaps[:5]}"


def test_every_plot_is_shown_with_its_text_at_least_10_px(unfolded):
    images = unfolded.evaluate("[...document.images].map(i => [i.alt, i.width, i.naturalWidth])")
    assert images, "the report has no image"
    assert all(width > 0 for _, width, _ in images), "an image is not shown even with every fold open"
    # a plot's smallest text is MIN_FONT_PX at its natural width; shown narrower, it shrinks in proportion
    small = [
        (alt, round(plot_style.MIN_FONT_PX * width / natural, 1))
        for alt, width, natural in images
        if plot_style.MIN_FONT_PX * width / natural < MIN_FONT_PX
    ]
    assert not small, f"{len(small)} of {len(images)} plots shown with text under {MIN_FONT_PX} px: {small[:5]}"


def test_every_table_fits_the_page_with_everything_unfolded(unfolded):
    """No table needs its box's sideways scroll at 1280 px: its headers and words wrap, its numbers do not."""
    wide = unfolded.evaluate(
        "[...document.querySelectorAll('div.scroll')].filter((d) => d.scrollWidth > d.clientWidth + 1)"
        ".map((d) => [(d.previousElementSibling || d).textContent.slice(0, 60), d.scrollWidth, d.clientWidth])"
    )
    assert not wide, f"{len(wide)} table(s) wider than the page (caption, width, room): {wide[:5]}"


def test_every_in_page_link_leads_to_an_element(page):
    dead = page.evaluate(
        "[...document.querySelectorAll(\"a[href^='#']\")].map((a) => a.getAttribute('href'))"
        ".filter((h) => !document.getElementById(decodeURIComponent(h.slice(1))))"
    )
    assert not dead, f"links to no element: {sorted(set(dead))}"


def test_the_screenshots_are_1280_px_wide(page, unfolded):
    from PIL import Image

    for name in ("first-screen.png", "page.png", "unfolded.png"):
        with Image.open(page.shots / name) as shot:
            assert shot.width == WIDTH, (name, shot.size)
