"""Tracking's two faces from a small handmade frame of comparisons (as `jaxmlp track` gives them): the message
(Markdown of what changed only; one line where nothing did) and the site (its files, its answers first, its atomic
replacement: a failure while it is written leaves the previous site whole)."""

import os
import re
import shutil
import threading
import time

import pandas as pd
import pytest

from jaxmlp.errors import JaxmlpError
from jaxmlp.report import track_site
from jaxmlp.report.track_message import NOTHING_MEASURED, message, write_message
from jaxmlp.report.track_site import write_site
from jaxmlp.results.store import replacing

MACHINE = "ci-linux"
NIGHT_1, NIGHT_2, NIGHT_3 = "track-20261201T020000", "track-20261202T020000", "track-20261203T020000"


def _row(workload, release, against, baseline, verdict, ratio, low, high, folder, **more):
    return {
        "machine": MACHINE,
        "workload": workload,
        "release": release,
        "python": "3.11.7",
        "against": against,
        "baseline": baseline,
        "ratio": ratio,
        "low": low,
        "high": high,
        "verdict": verdict,
        "median_s": 1.0 * ratio,
        "baseline_median_s": 1.0,
        "explanation": "",
        "measured_at": f"2026-12-0{int(folder[-8]) if folder[-8].isdigit() else 1}T02:10:00+00:00",
        "folder": folder,
        **more,
    }


def frame(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


SLOWER = _row(
    "epoch", "0.7.1", "pinned", "0.7.0", "slower", 1.21, 1.15, 1.28, NIGHT_2, explanation="explain-20261202T0300/"
)
SLOWER_PREVIOUS = {**SLOWER, "against": "previous"}
FASTER = _row("epoch", "0.7.2", "previous", "0.7.1", "faster", 0.82, 0.78, 0.86, NIGHT_3)
SAME = _row("epoch", "0.7.2", "pinned", "0.7.0", "the same", 1.01, 0.98, 1.03, NIGHT_3)
INCONCLUSIVE = _row(
    "scan_scatter_linearize",
    "0.7.2",
    "pinned",
    "0.7.0",
    "inconclusive",
    1.04,
    0.97,
    1.10,
    NIGHT_3,
    settle=24,
)
SAME_SCAN = _row("scan_scatter_linearize", "0.7.1", "pinned", "0.7.0", "the same", 0.99, 0.97, 1.02, NIGHT_2)
HISTORY = frame(SLOWER, SLOWER_PREVIOUS, SAME_SCAN, SAME, FASTER, INCONCLUSIVE)


@pytest.fixture
def no_plots(monkeypatch):
    """Pages without drawing their plots (seconds each on a busy machine), where the plot is not the subject."""
    monkeypatch.setattr(track_site, "plot_track", lambda *args: "")


def test_a_slower_release_is_one_short_line_with_its_ratio_interval_and_explanation():
    text = message(frame(SLOWER), link_base="https://example.org/results/")
    assert text.startswith("**jaxmlp track: 1 release slower: 0.7.1 (on epoch against 0.7.0)**\n")
    assert "#### epoch on ci-linux" in text
    assert (
        "- 0.7.1 is slower than 0.7.0 (pinned): ×1.21 (95% interval ×1.15–×1.28) "
        "([why](https://example.org/results/explain-20261202T0300/explain.txt))\n"
    ) in text


def test_with_the_site_s_address_every_link_is_absolute_and_the_site_and_page_are_linked():
    """``--site-url``: the explanation's link is its page in the published site, each series' heading links its
    page, the last line the site; nothing relative to the runner's disk is left."""
    text = message(frame(SLOWER), link_base="../reports/", site_url="https://team.example/jax/")
    assert "#### epoch on ci-linux ([page](https://team.example/jax/ci-linux--epoch.html))" in text
    assert "([why](https://team.example/jax/explanations/explain-20261202T0300.html))" in text
    assert text.rstrip().endswith("; [the site](https://team.example/jax/)") and "../reports" not in text
    links = re.findall(r"\]\(([^)]*)\)", text)
    assert links and all(link.startswith("https://team.example/jax/") for link in links)
    started = message(frame(SLOWER), folders=[], started="Started the series of m (w) at jax 0.7.0 (--pinned).")
    assert started == "jaxmlp track: Started the series of m (w) at jax 0.7.0 (--pinned).\n"


def test_a_machine_named_with_marks_markdown_would_read_links_its_page_under_the_site_s_name(tmp_path, no_plots):
    """A CPU's name such as ``Intel(R) Xeon(R) CPU @ 2.20GHz`` is shown as a code span, and its series' page is the
    one the site wrote for it."""
    machine = "Intel(R) Xeon(R) CPU @ 2.20GHz, 2 cores"
    rows = frame({**SLOWER, "machine": machine})
    text = message(rows, site_url="https://team.example/jax/")
    page = track_site.page_names(rows)[(machine, "epoch")]
    assert f"#### epoch on `{machine}` ([page](https://team.example/jax/{page}))" in text
    assert (tmp_path / "site" / page) in write_site(rows, tmp_path / "site")


def test_a_faster_release_is_named_against_the_release_tracked_before_it():
    text = message(frame(FASTER))
    assert "- 0.7.2 is faster than 0.7.1 (tracked before it): ×0.820 (95% interval ×0.780–×0.860)\n" in text
    assert "why" not in text  # no explanation, no link


def test_an_inconclusive_one_is_one_short_line_its_reason_left_to_the_page():
    text = message(frame(INCONCLUSIVE))
    assert "- 0.7.2 against 0.7.0 (pinned) is inconclusive: ×1.04 (95% interval ×0.970–×1.10)\n" in text
    assert "would settle it" not in text and "not within reach" not in text


def test_the_same_is_left_out_of_a_message_with_changes_and_counted():
    text = message(frame(SAME, FASTER, INCONCLUSIVE))
    assert text.splitlines()[0] == (
        "**jaxmlp track: 1 release faster: 0.7.2 (on epoch against 0.7.1); 1 release inconclusive: 0.7.2 (on "
        "scan_scatter_linearize against 0.7.0)** (and 1 comparison the same within ±5%)"
    )
    assert "is the same as" not in text


def test_the_title_counts_releases_once_naming_their_workloads_and_baselines():
    """One release slower on two workloads, against the pinned release and the one before it (the pinned one shown
    under both): one release, each workload and baseline named once."""
    other = {**SLOWER, "workload": "scan", "baseline": "0.7.0"}
    against_previous = {**SLOWER, "against": "previous", "baseline": "0.6.2"}
    text = message(frame(SLOWER, SLOWER_PREVIOUS, other, {**other, "against": "previous"}, against_previous))
    assert text.splitlines()[0] == "**jaxmlp track: 1 release slower: 0.7.1 (on epoch, scan against 0.6.2 and 0.7.0)**"
    assert text.count("0.7.1 is slower than 0.7.0") == 2  # once a workload: the pinned row under both said once
    two = message(frame(SLOWER, {**FASTER, "verdict": "slower", "ratio": 1.3}))
    assert two.splitlines()[0].startswith("**jaxmlp track: 2 releases slower: 0.7.1 (on epoch against 0.7.0), 0.7.2")


def test_a_change_without_an_explanation_says_why():
    text = message(frame({**FASTER, "unexplained": "not explained: the budget is spent (--budget gives more)"}))
    assert text.rstrip().splitlines()[-3].endswith("(not explained: the budget is spent (--budget gives more))")


def test_nothing_changed_is_exactly_one_line_saying_what_was_shown():
    text = message(frame(SAME, {**SAME, "against": "previous", "baseline": "0.7.1"}))
    assert text.count("\n") == 1 and text.endswith("\n")
    assert text == (
        "jaxmlp track: no change: 0.7.2 the same as its baselines within ±5% (2 comparisons: epoch on ci-linux).\n"
    )


def test_only_this_call_s_folders_are_told_and_nothing_measured_is_one_line():
    text = message(HISTORY, folders=[NIGHT_3])
    assert "0.7.1 is slower" not in text and "0.7.2 is faster" in text
    assert message(HISTORY, folders=[]) == NOTHING_MEASURED + "\n"
    assert message(HISTORY.iloc[0:0]) == NOTHING_MEASURED + "\n"


def test_the_message_replaces_the_last_one_whole(tmp_path):
    path = tmp_path / "message.md"
    path.write_text("last night's\n")
    assert write_message(frame(SLOWER), path) == path
    assert path.read_text() == message(frame(SLOWER))
    assert [p.name for p in tmp_path.iterdir()] == ["message.md"]  # no temporary file left
    with pytest.raises(JaxmlpError, match="is a folder, not a file"):
        write_message(frame(SLOWER), tmp_path)


def test_the_site_answers_first_and_has_a_page_per_machine_and_workload(tmp_path):
    site = tmp_path / "site"
    files = write_site(HISTORY, site, results=tmp_path / "reports")
    assert [f.name for f in files] == [
        "index.html",
        "ci-linux--epoch.html",
        "ci-linux--scan_scatter_linearize.html",
        "track.csv",
    ]
    assert sorted(p.name for p in site.iterdir()) == sorted(f.name for f in files)
    index = (site / "index.html").read_text()
    assert "<h1>Is the newest jax/jaxlib release safe to take?</h1>" in index
    same = index.index(
        "Is 0.7.2 safe to take? Yes: <span class='same'>the same</span> within ±5% on epoch against 0.7.0 (pinned), "
        "×1.01 <a href='ci-linux--epoch.html'>details</a>"
    )
    open_ = index.index(
        "Is 0.7.2 safe to take? Not shown yet: <span class='inconclusive'>inconclusive</span> on "
        "scan_scatter_linearize against 0.7.0 (pinned), ×1.04"
    )
    assert open_ < same < index.index("<table")  # the answers before any table, the inconclusive first
    assert "faster" in index
    assert "http" not in index.replace("http-equiv", "")  # nothing asked of a network
    page = (site / "ci-linux--epoch.html").read_text()
    assert "src='data:image/png;base64," in page
    assert "<a href='../reports/explain-20261202T0300/explain.txt'>why</a>" in page
    for verdict in ("slower", "faster", "the same"):
        assert f">{verdict}</span>" in page
    assert pd.read_csv(site / "track.csv")["verdict"].tolist() == track_site.in_order(HISTORY)["verdict"].tolist()


def test_the_site_answers_slower_first_shows_a_comparison_once_and_says_why_each_has_no_explanation(tmp_path, no_plots):
    """Slower, then inconclusive, then the same, whatever the workloads' names; a pinned release that was also the
    one tracked before is one table row and one sentence; every explanation cell has its link or why there is none."""
    slower = _row("zeta", "0.7.1", "pinned", "0.7.0", "slower", 1.97, 1.8, 2.1, NIGHT_2, unexplained="")
    rows = [slower, {**slower, "against": "previous"}]
    rows += [{**SAME, "workload": "alpha"}, {**INCONCLUSIVE, "workload": "mid"}]
    write_site(frame(*rows), tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text()
    said = [index.index(f"Is 0.7.{n} safe to take? {head}") for n, head in ((1, "No"), (2, "Not shown"), (2, "Yes"))]
    assert (
        said == sorted(said) and "No: <span class='slower'>slower</span> on zeta against 0.7.0 (pinned), ×1.97" in index
    )
    assert index.count("<span class='slower'>slower</span> (0.7.0)") == 1  # its row: once, "the pinned one" beside
    assert "<td class='text'>the pinned one</td>" in index
    page = (tmp_path / "site" / "ci-linux--zeta.html").read_text()
    assert page.count("0.7.1 is <span class='slower'>slower</span> than 0.7.0") == 1 and page.count("<table") == 1
    assert "Against the pinned release (0.7.0), the previous one too where it was</h2>" in page
    assert "none recorded for this change" in page
    mid = (tmp_path / "site" / "ci-linux--mid.html").read_text()
    assert "none: no change shown to explain; its 95% interval (13.4% wide) still spans ±5%: about 24" in mid
    assert "none: no change to explain" in (tmp_path / "site" / "ci-linux--alpha.html").read_text()


def test_an_explanation_is_a_page_of_the_site_with_its_diff_needing_nothing_else(tmp_path, no_plots):
    """An explanation `jaxmlp track` filed in its folder: the site copies its text and its HLO diff into
    ``explanations/``, and the release's row links there (relative: it opens from the site alone)."""
    from jaxmlp.results.schema.explain import ExplainDocument

    results, where = tmp_path / "reports", "track-20261202T020000-ci-1/explain-20261202T021500"
    (results / where).mkdir(parents=True)
    doc = ExplainDocument(
        {},
        "epoch",
        "0.7.0",
        "0.7.1",
        {"0.7.0": "aa", "0.7.1": "bb"},
        {"0.7.0": (1.0,), "0.7.1": (1.21,)},
        operations=(("while", 1, 2),),
        diff_file="hlo.diff",
        diff_lines=2,
    )
    (results / where / "explain.json").write_text(__import__("json").dumps(doc.to_json()))
    (results / where / "hlo.diff").write_text("-  %while.1 = ...\n+  %while.2 = ...\n")
    site = tmp_path / "site"
    files = write_site(frame({**SLOWER, "explanation": where}), site, results=results)
    name = "explanations/track-20261202T020000-ci-1-explain-20261202T021500.html"
    assert site / name in files
    page = (site / name).read_text()
    assert "epoch, 0.7.0 -&gt; 0.7.1: the optimized HLO changed" in page and "while" in page
    assert (site / name.replace(".html", ".diff.txt")).read_text().startswith("-  %while.1")
    assert f"<a href='{name}'>why</a>" in (site / "ci-linux--epoch.html").read_text()
    write_site(frame({**SLOWER, "explanation": f"{where}/"}), site, results=results)  # a folder as `explain` says it
    assert f"<a href='{name}'>why</a>" in (site / "ci-linux--epoch.html").read_text()
    shutil.rmtree(results)  # the site alone still holds it
    assert (site / name).is_file()
    unexplained = {**SLOWER, "explanation": "", "unexplained": "not explained: the budget is spent"}
    write_site(frame(unexplained), site, results=results)
    assert "not explained: the budget is spent" in (site / "ci-linux--epoch.html").read_text()


def test_an_empty_frame_says_nothing_is_tracked(tmp_path, no_plots):
    write_site(HISTORY.iloc[0:0], tmp_path / "site")
    assert "Nothing tracked yet" in (tmp_path / "site" / "index.html").read_text()


def test_a_failure_while_the_site_is_written_leaves_the_previous_site(tmp_path, no_plots, monkeypatch):
    site = tmp_path / "site"
    write_site(frame(SLOWER), site)
    before = {p.name: p.read_bytes() for p in site.iterdir()}

    def broken(*args, **kwargs):
        raise RuntimeError("the disk filled while a plot was drawn")

    monkeypatch.setattr(track_site, "plot_track", broken)
    with pytest.raises(RuntimeError, match="disk filled"):
        write_site(HISTORY, site)
    assert {p.name: p.read_bytes() for p in site.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # the half-written one is gone


def test_the_new_site_replaces_the_old_whole(tmp_path, no_plots):
    site = tmp_path / "site"
    write_site(HISTORY, site)
    (site / "stale.html").write_text("from an older jaxmlp")
    write_site(frame(SLOWER), site)
    assert sorted(p.name for p in site.iterdir()) == ["ci-linux--epoch.html", "index.html", "track.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_without_a_one_step_swap_two_renames_and_a_crash_between_them_is_recovered(tmp_path, no_plots, monkeypatch):
    site = tmp_path / "site"
    write_site(frame(SLOWER), site)
    monkeypatch.setattr(replacing, "_exchange", lambda a, b: False)
    write_site(HISTORY, site)  # by two renames
    assert (site / "ci-linux--scan_scatter_linearize.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    # a crash between the renames: the old site set aside, none in its place; the next call puts it back first
    os.rename(site, tmp_path / ".site.old-12345")
    monkeypatch.setattr(track_site, "plot_track", lambda *a: (_ for _ in ()).throw(RuntimeError("crash")))
    with pytest.raises(RuntimeError):
        write_site(HISTORY, site)
    assert (site / "ci-linux--scan_scatter_linearize.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_site_path_that_is_a_file_is_refused_in_one_line(tmp_path, no_plots):
    path = tmp_path / "site"
    path.write_text("not a site")
    with pytest.raises(JaxmlpError, match="is a file, not a folder"):
        write_site(HISTORY, path)


@pytest.fixture(scope="module")
def browser_site(tmp_path_factory):
    """The site of `HISTORY` and of a longer series (nine releases, a change of Python), open in headless Chromium
    at 1280×800: each page's screenshot (the folder ``JAXMLP_SCREENSHOTS`` names, else a temporary one) and what
    the browser measured on it. Skips, saying why, without Chromium or playwright."""
    import test_browser as tb

    if tb.CHROMIUM is None:
        pytest.skip(tb.NO_CHROMIUM)
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="no playwright package (it drives Chromium): `pip install -e .[test]`"
    )
    site = tmp_path_factory.mktemp("track") / "site"
    write_site(pd.concat([HISTORY, _long_series()], ignore_index=True), site, link_base="../reports/")
    shots = tb._screenshots(tmp_path_factory)
    home = tmp_path_factory.mktemp("browser-home")
    token = f"{os.getpid()}-{time.monotonic_ns()}"
    mark = f"{tb.MARK}={token}".encode()
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), tb.MARK: token}
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    watchdog = threading.Timer(tb.BROWSER_LIMIT_S, tb._kill, (mark,))
    watchdog.daemon = True
    watchdog.start()
    seen: dict[str, dict] = {}
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=tb.CHROMIUM,
                args=["--no-sandbox", "--disable-dev-shm-usage"],
                env=env,
                timeout=tb.STEP_LIMIT_MS,
            )
            try:
                for name, shot in (
                    ("index.html", "track-site.png"),
                    ("nightly-runner--epoch.html", "track-series.png"),
                ):
                    tab = browser.new_page(viewport={"width": tb.WIDTH, "height": tb.HEIGHT})
                    tab.set_default_timeout(tb.STEP_LIMIT_MS)
                    requests: list[str] = []
                    tab.on("request", lambda r, requests=requests: requests.append(r.url))
                    tab.route(re.compile(r"^(?!file:|data:)"), lambda route: route.abort())
                    tab.goto((site / name).as_uri(), wait_until="load")
                    tab.screenshot(path=shots / shot, full_page=True)
                    seen[name] = {
                        "requests": [u for u in requests if not u.startswith("data:")],
                        "width": tab.evaluate("document.documentElement.scrollWidth"),
                        "uncontained": tab.evaluate(tb.UNCONTAINED, tb.WIDTH),
                        "overlaps": tab.evaluate(tb.OVERLAPS),
                        "images": tab.evaluate("[...document.images].map(i => [i.complete, i.width, i.naturalWidth])"),
                        "links": tab.evaluate("[...document.querySelectorAll('a')].map(a => a.getAttribute('href'))"),
                        "first": tab.evaluate(ANSWER_AND_TABLE),
                        "uri": (site / name).as_uri(),
                        "shot": shots / shot,
                    }
                    tab.close()
            finally:
                browser.close()
    finally:
        watchdog.cancel()
        tb._reap(mark, wait_s=5)
    return site, seen


def _long_series() -> pd.DataFrame:
    """Nine releases of one workload on another machine, the last two on a newer Python: a series as a year of
    nights leaves it."""
    releases = ["0.6.1", "0.6.2", "0.7.0", "0.7.1", "0.7.2", "0.8.0", "0.8.1", "0.9.0", "0.10.0"]
    verdicts = ["the same", "slower", "the same", "inconclusive", "faster", "the same", "slower", "the same", "faster"]
    ratios = [1.01, 1.32, 0.99, 1.05, 0.84, 1.0, 1.12, 1.02, 0.88]
    rows = []
    for i, (release, verdict, ratio) in enumerate(zip(releases[1:], verdicts[1:], ratios[1:])):
        night = f"track-202612{i + 1:02d}T020000"
        for against, baseline in (("pinned", "0.6.1"), ("previous", releases[i])):
            rows.append(
                {
                    **_row("epoch", release, against, baseline, verdict, ratio, ratio - 0.03, ratio + 0.035, night),
                    "machine": "nightly-runner",
                    "python": "3.12.1" if i >= 6 else "3.11.7",
                    "median_s": 0.412 * ratio,
                    "baseline_median_s": 0.412,
                    "explanation": f"explain-202612{i + 1:02d}T0300/" if verdict == "slower" else "",
                }
            )
    return pd.DataFrame(rows)


PAGES = ("index.html", "nightly-runner--epoch.html")
ANSWER_AND_TABLE = """(() => {
  const a = document.querySelector('p.question, p.answer'), t = document.querySelector('table');
  return [a && a.getBoundingClientRect().top, t && t.getBoundingClientRect().top];
})()"""
"""Where the page's first answer and its first table begin (px from the top), or null."""


@pytest.mark.parametrize("name", PAGES)
def test_each_page_fits_1280_px_and_asks_nothing_of_a_network(browser_site, name):
    _, seen = browser_site
    page = seen[name]
    assert page["width"] <= 1280, f"{name} is {page['width']} px wide"
    assert not page["uncontained"], page["uncontained"]
    assert not page["overlaps"], page["overlaps"][:5]
    assert page["requests"] == [page["uri"]]
    top, table = page["first"]
    assert top is not None and (table is None or top < table), "the answer comes after a table"


def test_the_plot_decodes_and_its_text_is_at_least_10_px(browser_site):
    from jaxmlp.report import plot_style

    images = browser_site[1]["nightly-runner--epoch.html"]["images"]
    assert images and all(done and natural > 0 for done, _, natural in images)
    assert all(plot_style.MIN_FONT_PX * width / natural >= 10 for _, width, natural in images)


def test_every_link_between_pages_leads_to_a_page(browser_site):
    site, seen = browser_site
    for page in seen.values():
        local = [h for h in page["links"] if h and not h.startswith(("../", "http"))]
        assert local and all((site / h).is_file() for h in local), local
