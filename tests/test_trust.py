"""A results folder is data, never instructions (docs/reference/trust.md): a folder that holds every hostile file
found so far, made from crafted copies of real files (tests/fixtures/trust), is read and published: no byte of a
file outside it reaches the site, each refusal is one line naming the file and the field, names reach the message as
text and the terminal without escape codes, one hostile file costs one line, and a resumed sweep runs only what this
machine chose. No measurement."""

import copy
import json
import math
import os
import re
import shutil
from pathlib import Path

import pytest

from jaxmlp.cli import main
from jaxmlp.report import escape
from jaxmlp.report.track_message import message
from jaxmlp.report.track_site import write_site
from jaxmlp.results.store import confined, layout
from jaxmlp.results.store.reading import read_document
from jaxmlp.results.sweep import tracked

FIXTURE = Path(__file__).parent / "fixtures" / "trust"
TRACK = "track-20261206T230000-ci-linux-7"
EXPLAIN = "explain-20261205T173041"
SECRET = "SECRET-7f3a9c-outside-the-results-folder"
TOKEN = "CI-TOKEN-5be1d2-in-the-environment"
HOSTILE_MACHINE = "\x1b]0;pwned\x07\x1b[31m<script>window.__pwned=1</script>@maintainers"
HOSTILE_WORKLOAD = "<img src=x onerror=\"window.__pwned=2;document.title='XSS'\">"
HOSTILE_RELEASE = "0.7.1$\\frac{$"
HOSTILE_TEXT = "](javascript:alert(1)) @maintainers <details open>\n# HEADING <svg onload=window.__pwned=3>"


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def _explanation(results: Path, name: str, where: Path | None = None, **changes) -> str:
    """A copy of the real explanation as ``name`` (under ``where``, else the results folder), its explain.json
    changed; its name as a track.json names it."""
    folder = (where or results) / name
    shutil.copytree(FIXTURE / EXPLAIN, folder)
    doc = {**_json(folder / layout.EXPLAIN_FILE), **changes}
    (folder / layout.EXPLAIN_FILE).write_text(json.dumps(doc))
    return name


def _probes(results: Path, outside: Path) -> dict[str, tuple[str, str]]:
    """Each probe: the explanation folder a comparison names, and the file and field its one line names."""
    secret = outside / "secret.txt"
    secret.write_text(SECRET)
    _explanation(results, "explain-out", outside, diff_file="secret.txt")
    (outside / "explain-out" / "secret.txt").write_text(SECRET)
    probes: dict[str, tuple[str, str]] = {}

    def diff(name: str, diff_file: str) -> None:
        probes[name] = (_explanation(results, name, diff_file=diff_file), f"{name}/explain.json: diff_file")

    diff("explain-etc-passwd", "/etc/passwd")
    diff("explain-etc-hostname", "../../../../../../../etc/hostname")
    diff("explain-absolute-secret", str(secret))
    diff("explain-up-secret", "../../outside/secret.txt")
    diff("explain-proc-environ", "/proc/self/environ")
    diff("explain-proc-mem", "/proc/self/mem")
    diff("explain-a-folder", "hlo")
    (results / "explain-a-folder" / "hlo").mkdir()  # a folder, not a regular file
    diff("explain-xss", "<img src=x onerror=\"document.title='XSS'\">.diff")
    _explanation(results, "explain-symlink")
    (results / "explain-symlink" / "hlo.diff").unlink()
    (results / "explain-symlink" / "hlo.diff").symlink_to(secret)
    probes["explain-symlink"] = ("explain-symlink", "explain-symlink/explain.json: diff_file")
    probes["absolute"] = (str(outside / "explain-out"), f"{TRACK}/track.json: explanation")
    probes["up"] = ("../outside/explain-out", f"{TRACK}/track.json: explanation")
    (results / "explain-linked").symlink_to(outside / "explain-out")
    probes["linked-folder"] = ("explain-linked", f"{TRACK}/track.json: explanation")
    (results / "explain-linked-json").mkdir()
    (results / "explain-linked-json" / "explain.json").symlink_to(outside / "explain-out" / "explain.json")
    probes["linked-json"] = ("explain-linked-json", f"{TRACK}/track.json: explanation")
    probes["steady-empty"] = (_explanation(results, "explain-steady", steady=[]), "explain-steady/explain.json")
    probes["scheme"] = ("javascript:alert(1)//", f"{TRACK}/track.json: explanation")
    return probes


def _comparisons(track: dict, explanations: list[str]) -> list[dict]:
    """The fixture's slower comparison once for each explanation, each as its own release."""
    slower = track["comparisons"][0]
    return [{**slower, "release": f"0.8.{i}", "explanation": e} for i, e in enumerate(explanations)]


def hostile_folder(tmp: Path) -> tuple[Path, dict[str, tuple[str, str]]]:
    """A results folder holding every probe, beside an outside folder holding the secrets."""
    results, outside = tmp / "results", tmp / "outside"
    shutil.copytree(FIXTURE, results)
    outside.mkdir()
    probes = _probes(results, outside)
    _explanation(results, "explain-binary")
    (results / "explain-binary" / "hlo.diff").write_bytes(bytes(range(256)) * 4)
    _explanation(results, "explain-huge")
    with (results / "explain-huge" / "hlo.diff").open("wb") as f:
        f.truncate(300 * 2**20)  # sparse: no disk, but 300 MB to whoever reads it whole
    track = _json(results / TRACK / "track.json")
    named = [e for e, _ in probes.values()] + ["explain-binary", "explain-huge"]
    track["comparisons"] = track["comparisons"] + _comparisons(track, named)
    (results / TRACK / "track.json").write_text(json.dumps(track))
    evil = copy.deepcopy(track)
    evil["series"] = {"machine": HOSTILE_MACHINE, "workloads": [HOSTILE_WORKLOAD]}
    evil["settings"]["pythons"] = {HOSTILE_RELEASE: "<svg onload=window.__pwned=4>"}
    evil["comparisons"] = [
        {
            **track["comparisons"][0],
            "workload": HOSTILE_WORKLOAD,
            "release": HOSTILE_RELEASE,
            "explanation": "",
            "unexplained": HOSTILE_TEXT,
        },
        {
            **track["comparisons"][1],
            "workload": HOSTILE_WORKLOAD,
            "release": "0.7.3",
            "comparison": {**track["comparisons"][1]["comparison"], "baseline_median": math.inf, "ratio": math.inf},
        },
    ]
    (results / "track-20261207T010000-evil-9").mkdir()
    (results / "track-20261207T010000-evil-9" / "track.json").write_text(json.dumps(evil))
    deep = results / "track-20261207T020000-deep-9"
    deep.mkdir()
    (deep / "track.json").write_text('{"a":' + "[" * 200_000)
    return results, probes


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """The hostile folder's site (plots drawn: a release's ``$`` is text), with the lines its build said."""
    tmp = tmp_path_factory.mktemp("trust")
    results, probes = hostile_folder(tmp)
    said: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JAXMLP_TRUST_TOKEN", TOKEN)
        documents, skipped = tracked.history(results)
        frame = tracked.frame_of(documents, results)
        write_site(frame, tmp / "site", results=results, warn=said.append)
    return results, tmp / "site", probes, said, skipped


def test_the_site_of_a_hostile_folder_holds_no_byte_of_a_file_outside_it(published):
    _, site, _, _, _ = published
    outside = [SECRET, TOKEN, "root:x:0:0"]
    if Path("/etc/hostname").is_file() and len(Path("/etc/hostname").read_text().strip()) >= 8:
        outside.append(Path("/etc/hostname").read_text().strip())
    for path in site.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not [s for s in outside if s.encode() in data], path
    diffs = {p.name for p in (site / "explanations").glob("*.diff.txt")}
    assert diffs == {"explain-20261205T173041.diff.txt", "explain-binary.diff.txt", "explain-huge.diff.txt"}
    assert (site / "explanations" / "explain-huge.diff.txt").stat().st_size < confined.MAX_COPIED_BYTES + 1000
    assert "\ufffd" in (site / "explanations" / "explain-binary.diff.txt").read_text(encoding="utf-8")


def test_each_path_out_of_the_folder_is_refused_in_one_line_naming_the_file_and_the_field(published):
    _, _, probes, said, _ = published
    for name, (_, where) in probes.items():
        file, _, field = where.partition(": ")
        lines = [line for line in said if file in line and field in line and "\n" not in line]
        assert lines, (name, said)
    assert len(said) == len(probes)


def test_a_hostile_file_costs_one_line_and_the_rest_is_read(published):
    results, site, _, _, skipped = published
    assert [s.path.parent.name for s in skipped] == ["track-20261207T020000-deep-9"]
    assert "nested deeper" in skipped[0].why
    pages = {p.name for p in site.glob("*.html")}
    assert len(pages) == 3  # the index, ci-linux's epoch and the hostile series
    assert (site / "explanations" / f"{EXPLAIN}.html").is_file()
    assert (results / TRACK).is_dir()


def test_a_path_a_result_file_names_is_plain_and_relative():
    for bad in ("/etc/passwd", "../x", "a/../../x", "javascript:alert(1)", "a\\b", "", ".", "a//b", "~/x", "x\n"):
        assert confined.relative(bad) is None, bad
    assert confined.relative("track-20261206T230000-ci-7/explain-20261206T2310/") is not None


def test_the_message_shows_names_and_free_text_as_text(published):
    results, _, _, _, _ = published
    documents, _ = tracked.history(results)
    text = message(tracked.frame_of(documents, results), link_base="https://example.org/site/")
    outside_code = escape_code_spans(text)
    for markup in ("<", "@", "](javascript", "\x1b"):
        assert markup not in outside_code, markup
    assert [line for line in text.splitlines() if line.startswith("#")] == [
        line for line in text.splitlines() if line.startswith("#### ")
    ]
    assert "# HEADING" not in [line.strip() for line in text.splitlines()]
    links = [part.split(")")[0] for part in outside_code.split("](")[1:]]
    assert links and all(link.startswith("https://example.org/site/") for link in links), links


def test_a_comparison_s_kind_from_a_file_is_text_in_the_message():
    """``against`` (``pinned``, ``previous``) is a file's text too: another value is shown as text, never a link."""
    import pandas as pd

    row = {"machine": "m", "workload": "w", "release": "0.7.1", "python": "", "baseline": "0.7.0", "ratio": 1.5}
    row |= {"low": 1.4, "high": 1.6, "verdict": "slower", "median_s": 1.5, "baseline_median_s": 1.0}
    row |= {"explanation": "", "unexplained": "", "measured_at": "2026-12-01T02:10:00+00:00", "folder": "track-1"}
    text = message(pd.DataFrame([row | {"against": "[see](https://evil.example)"}]))
    assert "](" not in escape_code_spans(text), text


def escape_code_spans(text: str) -> str:
    """``text`` without its code spans."""

    return re.sub(r"(`+)(.+?)\1", "", text)


def test_markdown_and_html_helpers():
    assert escape.markdown("0.7.1") == "0.7.1"
    assert escape.markdown("a`b") == "``a`b``"
    assert escape.markdown("`") == "`` ` ``"
    for url in ("https://evil.example/x", "see www.evil.example"):  # GitHub links them bare: a code span
        assert escape.markdown(url) == f"`{url}`"
    assert escape.html_text("<a href='x'>\x1b") == "&lt;a href=&#x27;x&#x27;&gt;"
    assert escape.terminal("a\x1b]0;title\x07b\x1b[31mc\x9b2Jd\x00e\u202ef") == "abcdef"


def test_a_progress_bar_redraws_in_place_on_a_terminal_and_shows_a_label_as_text(monkeypatch):
    """A command's output goes through `escape.terminal`, which drops ``\\r``; the sweep's bar keeps its own ``\\r``
    (it redraws one line) while a label from a result file still reaches the terminal without its codes."""
    import io

    from jaxmlp.flows.progress import progress_bar

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    shown = Tty()
    monkeypatch.setattr("sys.stderr", shown)
    with escape.terminal_output(), progress_bar(2) as tick:
        tick(0, "0.7.1\x1b]0;owned\x07")
        tick(0, "0.7.2")
    assert "\r" in shown.getvalue() and "0.7.1" in shown.getvalue() and "\x1b" not in shown.getvalue()


def test_summary_of_the_hostile_folder_prints_no_escape_code(published, capsys):
    results, _, _, _, _ = published
    code = main(["summary", str(results)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "Traceback" not in err
    assert any("track-20261207T020000-deep-9" in line for line in err.splitlines())


def test_summary_of_a_file_whose_mean_is_infinite_is_one_answer_not_a_traceback(tmp_path, capsys):
    doc = _json(Path(__file__).parent / "fixtures" / "bench-cpu.json")
    doc["benchmarks"][0]["stats"]["mean"] = math.inf
    doc["benchmarks"][0]["stats"]["median"] = math.inf
    (tmp_path / "bench.json").write_text(json.dumps(doc))
    code = main(["summary", str(tmp_path / "bench.json")])
    _, err = capsys.readouterr()
    assert code in (0, 2) and "Traceback" not in err
    assert len(err.strip().splitlines()) <= 1


@pytest.mark.parametrize(
    "content",
    [
        b'{"kind": "track", "schema_',  # truncated
        json.dumps({"kind": "track", "schema_version": 8, "series": []}).encode(),  # wrong type
        json.dumps({"kind": "track", "schema_version": 999}).encode(),  # a future schema
        '{"kind": "track"}'.encode("utf-16"),
        b'{"a":' + b"[" * 200_000,
    ],
    ids=["truncated", "wrong-type", "future", "utf-16", "deep"],
)
def test_a_file_that_cannot_be_read_is_skipped_in_one_line_naming_it(tmp_path, content):
    (tmp_path / "track-20261207T000000-x-1").mkdir()
    path = tmp_path / "track-20261207T000000-x-1" / "track.json"
    path.write_bytes(content)
    documents, skipped = tracked.history(tmp_path)
    assert not documents and [s.path for s in skipped] == [path]
    assert "\n" not in skipped[0].line("jaxmlp track")


def test_a_file_larger_than_any_result_is_skipped_unread(tmp_path):
    (tmp_path / "track-20261207T000000-x-1").mkdir()
    path = tmp_path / "track-20261207T000000-x-1" / "track.json"
    with path.open("wb") as f:
        f.truncate(70 * 2**20)
    _, skipped = tracked.history(tmp_path)
    assert [s.path for s in skipped] == [path] and "MiB" in skipped[0].why


def test_an_explanation_s_text_reads_its_diff_only_inside_its_folder(tmp_path):
    from jaxmlp.report.explain import explain_text

    results, _ = hostile_folder(tmp_path)
    for name in ("explain-absolute-secret", "explain-up-secret", "explain-symlink", "explain-proc-environ"):
        doc = read_document(results / name / layout.EXPLAIN_FILE)
        text = explain_text(doc, results / name)  # type: ignore[arg-type]
        assert SECRET not in text and "not shown" in text, name
    assert os.path.getsize(results / "explain-huge" / "hlo.diff") == 300 * 2**20


# --- the hostile site in a real browser ----------------------------------------------------------------------------

DOM_CHECK = """() => ({
  scripts: document.querySelectorAll('script, iframe, object, embed, base, meta[http-equiv]').length,
  handlers: [...document.querySelectorAll('*')].flatMap((el) => [...el.attributes]
    .filter((a) => a.name.toLowerCase().startsWith('on')).map((a) => el.tagName + ' ' + a.name)),
  links: [...document.querySelectorAll('[href], [src]')].map((el) => el.getAttribute('href') || el.getAttribute('src'))
    .filter((u) => !/^(data:image\\/png;base64,|[A-Za-z0-9._\\/-]+(#[A-Za-z0-9_-]+)?$)/.test(u)),
  pwned: window.__pwned === undefined ? null : String(window.__pwned),
  title: document.title,
  shown: document.body.innerText.includes('onerror'),
})"""


def test_the_hostile_site_runs_no_script_in_chromium(published, tmp_path_factory):
    """Every page of the hostile folder's site in headless Chromium: no script element, no event attribute, no
    link but the site's own, nothing ran (the payloads set ``window.__pwned``, the title, or open a dialog), and the
    hostile names shown as text. A screenshot of the hostile series' page at 1280 px goes with the others."""
    import test_browser as tb

    if tb.CHROMIUM is None:
        pytest.skip(tb.NO_CHROMIUM)
    sync_api = pytest.importorskip("playwright.sync_api", reason="no playwright package: `pip install -e .[test]`")
    _, site, _, _, _ = published
    shots = tb._screenshots(tmp_path_factory)
    seen: dict[str, dict] = {}
    with tb.chromium(sync_api, tmp_path_factory.mktemp("browser-home")) as browser:
        tab = browser.new_page(viewport={"width": tb.WIDTH, "height": tb.HEIGHT})
        tab.set_default_timeout(tb.STEP_LIMIT_MS)
        events: list[str] = []
        tab.on("dialog", lambda d: (events.append(f"dialog {d.message}"), d.dismiss()))
        tab.on("request", lambda r: r.url.startswith(("file:", "data:")) or events.append(r.url))
        tab.route(re.compile(r"^(?!file:|data:)"), lambda route: route.abort())
        for page in sorted(site.rglob("*.html")):
            tab.goto(page.as_uri(), wait_until="load")
            seen[str(page.relative_to(site))] = tab.evaluate(DOM_CHECK)
            if "evil" in page.name or "script" in page.name:
                tab.screenshot(path=shots / "trust-hostile.png", full_page=True)
    assert events == []
    assert len(seen) >= 3 and (shots / "trust-hostile.png").is_file()
    for page, dom in seen.items():
        assert dom["scripts"] == 0 and dom["handlers"] == [] and dom["links"] == [], (page, dom)
        assert dom["pwned"] is None and dom["title"] != "XSS", (page, dom)
    assert any(dom["shown"] for dom in seen.values())  # the names are there, as text


def test_the_report_of_the_hostile_folder_shows_its_names_as_text(published, tmp_path, capsys):
    results, _, _, _, _ = published
    assert main(["report", "--results", str(results), "--out", str(tmp_path / "report")]) == 0
    capsys.readouterr()
    summary = (tmp_path / "report" / "summary.md").read_text(encoding="utf-8")
    assert [line for line in summary.splitlines() if line.startswith("# ")] == ["# jaxmlp report"]
    assert not re.search(r"(?<!\\)<(img|script|svg|details)", summary)
    assert "](javascript" not in summary and "@maintainers" not in summary and "\x1b" not in summary
    for path in (tmp_path / "report").rglob("*"):
        assert SECRET.encode() not in path.read_bytes()
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"<(img|script|svg|details) [^>]*on(error|load)", page)


def test_a_result_file_that_is_a_link_to_a_device_is_skipped_unread(tmp_path):
    (tmp_path / "track-20261207T000000-x-1").mkdir()
    path = tmp_path / "track-20261207T000000-x-1" / "track.json"
    path.symlink_to("/dev/zero")
    _, skipped = tracked.history(tmp_path)
    assert [s.path for s in skipped] == [path] and "not a regular file" in skipped[0].why
