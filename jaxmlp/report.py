"""Rendering the results: the terminal summary, and reports (summary.md, a self-contained index.html with plots, CSV).

Rendering only: the tables come from `jaxmlp.results.tables`, their statistics from `jaxmlp.stats`.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.measure.bisection import WORDS
from jaxmlp.results import layout, tables
from jaxmlp.results.frames import Results, without_sweeps
from jaxmlp.results.records import BisectDocument, Plot, ReportSection, Table, TrialsDocument
from jaxmlp.results.store import ResultsStore, write_new
from jaxmlp.stats import ALPHA, THRESHOLD

if TYPE_CHECKING:
    from jaxmlp.measure.traces import CaptureSummary

# --- words ----------------------------------------------------------------------------------------------------


def describe(env: dict[str, Any]) -> str:
    """One run's environment as one line."""
    return (
        f"{env['file']}: {env['timestamp']}, host {env['host']} ({env['cpu_model']}), backends {env['backends']} "
        f"({env['devices']}); jax {env['jax']}, jaxlib {env['jaxlib']}, torch {env['torch']}, python {env['python']}; "
        f"XLA_FLAGS '{env['xla_flags'] or ''}'; commit {env['commit']}; size {env['size']}; "
        f"data {registry.dataset_label(env['dataset'])}"
    )


def cpu_vs_gpu_note(differ: dict[str, tuple[Any, Any]] | None) -> str:
    if differ is None:
        return "CPU vs GPU: needs results of both (`nox -s bench` and `nox -s bench-gpu`)."
    if not differ:
        return "CPU and GPU from the same run."
    return (
        "CPU and GPU come from different runs; they differ in "
        + ", ".join(f"{key} ({cpu} vs {gpu})" for key, (cpu, gpu) in differ.items())
        + "."
    )


def shown_path(path: str | Path, folder: Path | None) -> str:
    """A result's path as a reader wants it: relative to the results folder it was found in."""
    try:
        return str(Path(path).relative_to(folder)) if folder is not None else str(path)
    except ValueError:
        return str(path)


LOADER_CAPTION = (
    "Loader ladder: input alone (loader_*) and the training epoch (epoch_*), median and IQR in s, times the compute "
    "floor and times the scan epoch of the same run; best = fastest, ~best = its IQR overlaps the fastest's"
)


SCALING_CAPTION = (
    "Data-parallel scaling of the sharded pipeline (median s; speedup and efficiency against N = 1 of the same run)"
)
SCALING_READING = (
    "On the CPU the N devices are simulated (--xla_force_host_platform_device_count) and share the same cores: "
    "this measures the overhead of the sharded program and its all-reduce, not a speed-up; on N GPUs it is one."
)


# --- the terminal summary of one benchmark file -----------------------------------------------------------------


def text_summary(df: pd.DataFrame) -> str:
    """A benchmark run's summary as short plain text, for a terminal."""
    parts = []
    if not df.empty:
        first = df.iloc[0]
        datasets = ", ".join(sorted(str(x) for x in df["dataset"].dropna().unique())) if "dataset" in df else "?"
        parts.append(
            f"jax {first.jax}, jaxlib {first.jaxlib}, torch {first.torch}, python {first.python}; "
            f"{first.cpu_model}, {first.cpu_affinity} cores; commit {str(first.commit)[:12]}; "
            + (f"size {first['size']}; " if pd.notna(first.get("size")) else "")
            + f"data: {registry.dataset_label(datasets)}"
        )
    fmt: dict[str, Any] = {"float_format": lambda x: f"{x:,.3g}", "index": False, "na_rep": "-"}
    ladder = tables.pipeline_ladder(df)
    for title, table in (
        ("Update step: jit vs eager (median ms)", tables.jit_vs_eager(df)),
        ("Prediction: vmap vs Python loop (median ms)", tables.vmap_vs_loop(df)),
        (LOADER_CAPTION, tables.loader_ladder(df)),
        ("The floor's matmul (2048^3, float32)", tables.matmul_rate(df)),
        ("Epoch ladder (median s; x_floor = times the compute floor)", ladder),
        (SCALING_CAPTION, tables.scaling_table(df)),
    ):
        if not table.empty:
            parts.append(f"{title}\n{table.to_string(**fmt)}")
    best = tables.best_workers(df)
    if best:
        parts.append("Fastest worker count for input alone: " + ", ".join(f"{p} {w}" for p, w in best.items()))
    for line in tables.ladder_headlines(ladder):
        fastest, seed = line["fastest"], line["seed"]
        text = f"{line['backend']}: fastest {fastest.rung} at {fastest.x_floor:.2f}x the floor "
        text += f"({fastest.epoch_s:.3g} s/epoch)"
        if seed is not None:
            text += f"; the tutorial's seed pipeline at {seed.x_floor:.2f}x ({seed.epoch_s:.3g} s)"
        parts.append(text)
    return "\n\n".join(parts)


def compare_text(table: pd.DataFrame, threshold: float, alpha: float) -> str:
    """`jaxmlp compare`'s output: a row per benchmark, then the counts."""
    shown = table.assign(
        n=table["n_baseline"].astype(str) + "/" + table["n_new"].astype(str),
        ci=[f"{lo:.3f}-{hi:.3f}" if lo == lo else "-" for lo, hi in zip(table["ci_low"], table["ci_high"])],
    )[["benchmark", "n", "baseline_median", "new_median", "ratio", "ci", "p_slower", "p_faster", "verdict"]]
    counts = tables.verdict_counts(table)
    return (
        shown.to_string(index=False, float_format=lambda x: f"{x:.4g}", na_rep="-")
        + f"\n\n{counts['regression']} regression(s), {counts['improvement']} improvement(s), "
        f"{counts['insufficient data']} with insufficient data, of {len(table)} benchmarks "
        f"(threshold {threshold:.0%}, alpha {alpha})"
    )


# --- plots ----------------------------------------------------------------------------------------------------


def _figure() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6.4, 3.6), dpi=100)


def _png(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def plot_by_batch_size(table: pd.DataFrame, lines: Iterable[tuple[str, str]], ylabel: str, title: str) -> str:
    """Log-log lines of median times against batch size; ``lines`` are (column, label) pairs."""
    fig, ax = _figure()
    for column, label in lines:
        ax.plot(table["batch_size"], table[column], marker="o", label=label)
    ax.set(xscale="log", yscale="log", xlabel="batch size", ylabel=ylabel, title=title)
    sizes = sorted(int(s) for s in table["batch_size"])
    ax.minorticks_off()
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.legend()
    return _png(fig)


def plot_update(table: pd.DataFrame) -> str:
    lines = (("jit_ms", "jit"), ("eager_ms", "eager (no jit)"), ("dispatch_ms", "jit, dispatch only"))
    return plot_by_batch_size(table, lines, "median step time (ms)", "Update step")


def plot_predict(table: pd.DataFrame) -> str:
    lines = (("loop_ms", "Python loop"), ("vmap_ms", "vmap"), ("jit_vmap_ms", "jit(vmap)"))
    return plot_by_batch_size(table, lines, "median time (ms)", "Prediction")


def plot_loader_ladder(table: pd.DataFrame) -> str:
    """One backend's loader ladder: input alone and the training epoch per loader and worker count (median, bars to
    the quartiles), the scan epoch and the compute floor as lines."""
    fig, ax = _figure()
    fig.set_figheight(max(3.6, 0.3 * len(table) + 1.6))
    labels = [
        f"{p}, {w} worker{'' if w == 1 else 's'}" if p in registry.WORKER_PIPELINES else p
        for p, w in zip(table["pipeline"], table["workers"])
    ]
    positions = range(len(table))
    for offset, name, text in ((-0.2, "loader", "input alone"), (0.2, "epoch", "training epoch")):
        median, iqr = table[f"{name}_s"], table[f"{name}_iqr_s"].fillna(0)
        ax.barh([p + offset for p in positions], median, height=0.4, xerr=iqr / 2, capsize=2, label=text)
    floor = table["epoch_s"] / table["epoch_x_floor"]
    scan = table["epoch_s"] / table["epoch_x_scan"]
    for line, color, text in ((floor, "C3", "compute floor"), (scan, "C2", "scan epoch")):
        if line.notna().any():
            value = float(line.dropna().iloc[0])
            ax.axvline(value, color=color, linestyle="--", label=f"{text} {value:.3g} s")
    ax.set_yticks(list(positions), labels)
    ax.invert_yaxis()
    ax.set(
        xscale="log", xlabel="median seconds an epoch", title=f"Loader ladder ({table['backend'].iloc[0] or 'host'})"
    )
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)  # below: it hides no bar
    return _png(fig)


def plot_ladder(ladder: pd.DataFrame) -> str:
    fig, ax = _figure()
    floor = float(ladder["epoch_s"].iloc[0])
    rungs = ladder.iloc[1:]
    ax.barh(rungs["rung"], rungs["epoch_s"], color="C0")
    ax.axvline(floor, color="C3", linestyle="--", label=f"compute floor {floor:.3g} s")
    ax.invert_yaxis()
    ax.set(xlabel="median epoch (s)", title=f"Epoch ladder ({ladder['backend'].iloc[0]})")
    ax.legend(loc="upper right")
    return _png(fig)


def plot_scaling(table: pd.DataFrame) -> str:
    """One backend's scaling: speed-up and efficiency against N (log 2), the ideal line dashed."""
    fig, ax = _figure()
    devices = table["devices"].astype(int)
    ax.plot(devices, table["speedup"], marker="o", label="epoch speed-up over N = 1")
    ax.plot(devices, table["efficiency"], marker="s", label="efficiency (speed-up / N)")
    ax.plot(devices, devices, color="grey", linestyle="--", label="ideal speed-up")
    ax.set(xscale="log", yscale="log", xlabel="devices N", title=f"Data-parallel scaling ({table['backend'].iloc[0]})")
    ax.minorticks_off()
    ax.set_xticks(list(devices), [str(n) for n in devices])
    ax.legend(fontsize=8)
    return _png(fig)


def plot_cpu_gpu(table: pd.DataFrame) -> str:
    fig, ax = _figure()
    positions = range(len(table))
    ax.barh([p - 0.2 for p in positions], table["cpu_s"], height=0.4, label="CPU")
    ax.barh([p + 0.2 for p in positions], table["gpu_s"], height=0.4, label="GPU")
    ax.set_yticks(list(positions), table["rung"])
    ax.set(xscale="log", xlabel="median epoch (s)", title="CPU vs GPU")
    ax.invert_yaxis()
    ax.legend()
    return _png(fig)


def plot_sweep(rows: pd.DataFrame, steps: pd.DataFrame) -> str:
    """Steady state per release (median, IQR) of each workload and flags column, flagged steps marked
    (regressions red, improvements green)."""
    fig, ax = _figure()
    steady = rows[rows["test"] == registry.SWEEP_STEADY.id].assign(flags=tables.flags_of(rows))
    versions = sorted(steady["release"].unique(), key=registry.version_key)
    labels: set[str] = set()
    for i, ((name, flags), part) in enumerate(steady.groupby(["name", "flags"])):
        part = part.set_index("release")
        x = [versions.index(v) for v in part.index]
        yerr = [part["median"] - part["q1"], part["q3"] - part["median"]]
        label = f"{name} [{flags}]" if flags else name
        ax.errorbar(x, part["median"], yerr=yerr, marker="o", capsize=3, label=label, color=f"C{i}")
        mine = steps[steps["benchmark"] == name]
        if "xla_flags" in steps:
            mine = mine[mine["xla_flags"] == flags]
        for verdict, color in (("regression", "red"), ("improvement", "green")):
            for to in mine.loc[mine["verdict"] == verdict, "to"]:
                ax.plot(versions.index(to), part.loc[to, "median"], marker="X", markersize=14, color=color,
                        linestyle="none", label=f"flagged {verdict}" if verdict not in labels else None)  # fmt: skip
                labels.add(verdict)
    ax.set_xticks(range(len(versions)), versions)
    ax.set(xlabel="jax / jaxlib release", ylabel="steady state (s)", yscale="log", title="Steady state by release")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)  # below: it hides no point
    return _png(fig)


def plot_bisection(medians: pd.DataFrame, doc: BisectDocument) -> str:
    """Each probed release's median, probe by probe, on the releases' axis; the answer marked."""
    fig, ax = _figure()
    candidates = list(doc.bisection.candidates)
    for number, part in medians.groupby("probe"):
        ax.plot(part["position"], part["median_s"], marker="o", label=f"probe {number}")
    b = doc.bisection
    if b.status == "found" and b.first is not None:
        ax.axvline(candidates.index(b.first), color="red" if b.direction == "regression" else "green",
                   linestyle="--", label=f"first {WORDS.get(b.direction or '', '')}: {b.first}")  # fmt: skip
    ax.set_xticks(range(len(candidates)), candidates, rotation=45)
    ax.set(xlabel="jax / jaxlib release", ylabel=f"steady {doc.settings.get('workload')} (s)",
           title="Bisection probes")  # fmt: skip
    ax.legend(fontsize=8)
    return _png(fig)


# --- sections -------------------------------------------------------------------------------------------------


def benchmark_section(rows: pd.DataFrame) -> ReportSection:
    """One benchmark file: its tables and plots."""
    found: list[Table] = []
    plots: list[Plot] = []
    update = tables.jit_vs_eager(rows)
    if not update.empty:
        found.append(Table("Update step, jit vs eager (median ms; speedup = eager / jit)", update))
        plots += [Plot(f"Update step time, jit vs eager ({b})", plot_update(p)) for b, p in update.groupby("backend")]
    predict = tables.vmap_vs_loop(rows)
    if not predict.empty:
        found.append(Table("Prediction, vmap vs Python loop vs jit(vmap) (median ms; speedups over the loop)", predict))
        plots += [Plot(f"Prediction time vs batch size ({b})", plot_predict(p)) for b, p in predict.groupby("backend")]
    loader = tables.loader_ladder(rows)
    if not loader.empty:
        found.append(Table(LOADER_CAPTION, loader))
        plots += [Plot(f"Loader ladder ({b})", plot_loader_ladder(p))
                  for b, p in loader.groupby("backend", dropna=False)]  # fmt: skip
    matmul = tables.matmul_rate(rows)
    if not matmul.empty:
        found.append(Table("The floor's matmul: 2048^3, float32 (median)", matmul))
    ladder = tables.pipeline_ladder(rows)
    if not ladder.empty:
        found.append(Table("Epoch ladder (median s; x_floor = times the compute floor)", ladder))
        plots += [Plot(f"Pipeline ladder with the floor ({b})", plot_ladder(p)) for b, p in ladder.groupby("backend")]
    return ReportSection("Benchmarks", describe(tables.environment(rows)), tuple(found), tuple(plots))


def scaling_section(rows: pd.DataFrame) -> ReportSection:
    """One `jaxmlp scaling` file: its table, a plot per backend, and how to read them."""
    table = tables.scaling_table(rows)
    plots = tuple(Plot(f"Data-parallel scaling ({b})", plot_scaling(p)) for b, p in table.groupby("backend")
                  if "speedup" in p)  # fmt: skip
    note = f"{describe(tables.environment(rows))}. {SCALING_READING}"
    return ReportSection("Scaling", note, (Table(SCALING_CAPTION, table),), plots)


def cpu_vs_gpu_section(runs_by_file: dict[str, pd.DataFrame]) -> ReportSection:
    table, differ = tables.cpu_vs_gpu(runs_by_file)
    if table.empty:
        return ReportSection("CPU vs GPU", cpu_vs_gpu_note(differ))
    return ReportSection("CPU vs GPU", cpu_vs_gpu_note(differ), (Table("Epoch ladder by backend", table),),
                         (Plot("CPU vs GPU epoch times", plot_cpu_gpu(table)),))  # fmt: skip


def training_section(runs: pd.DataFrame) -> list[ReportSection]:
    training = tables.training_table(runs)
    if training.empty:
        return []
    return [ReportSection("Training runs", "One row per `jaxmlp train --json` file.",
                          (Table("Training (epoch_s_median: epochs 1 and later)", training),))]  # fmt: skip


def sweep_sections(results: Results, folder: Path | None = None) -> list[ReportSection]:
    sections = []
    probes = [path.parent for path, _ in results.bisections]
    cells = {str(path.parent): doc for path, doc in results.cells}
    for where, rows in tables.sweeps(results.runs, probes).items():
        table, steps = tables.sweep_table(rows), tables.sweep_steps(rows, results.samples)
        effects = tables.flag_effects(rows, results.samples)
        s = tables.sweep_sampling(rows)
        builtin = s["dataset"] is not None and pd.notna(s["dataset"])
        known = (("{:.0f} epochs", s["epochs"]), ("of {:.0f} images", s["samples"])) if builtin else ()
        each = " ".join(text.format(value) for text, value in known if pd.notna(value))
        calls = ", ".join(f"{w} {n} calls" for w, n in s["calls"].items() if w not in registry.SWEEP_PIPELINES)
        each = "; ".join(part for part in (each, calls) if part)
        data = f"data {registry.dataset_label(s['dataset'])}; " if builtin else ""
        note = (f"{shown_path(where, folder)}: host {s['host']} ({s['cpu_model']}), python {s['python']}, "
                f"{data}each sample is one process ({s['processes']} a cell, "
                f"in rotating order{'; ' + each if each else ''}; {s['cpu_affinity']} CPU(s) each); flagged: "
                f"one-sided Mann-Whitney p < {ALPHA} and ratio of medians > {1 + THRESHOLD:g}")  # fmt: skip
        found = [Table("Median per release (s; sweep_steady is the steady state: median of the calls after the "
                       "first; one call of a built-in epoch is one epoch)", table)]  # fmt: skip
        if len(steps):
            found.append(Table("Each release against the previous one", steps))
        if len(effects):
            found.append(Table("Each release with XLA flags against the same release without", effects))
        if where in cells and len(tables.cells_table(cells[where])):
            found.append(Table("Cells not measured, or warned about", tables.cells_table(cells[where])))
        plot = Plot("Steady state by release, flagged steps marked", plot_sweep(rows, steps))
        sections.append(ReportSection("jax/jaxlib versions", note, tuple(found), (plot,)))
    return sections


def bisection_sections(results: Results, folder: Path | None = None) -> list[ReportSection]:
    """One section per `jaxmlp sweep bisect`: its answer line, its probes, a plot of the probed releases."""
    sections = []
    for path, doc in results.bisections:
        s = doc.settings
        note = (f"{shown_path(path, folder)}: `jaxmlp sweep bisect {s.get('good')} {s.get('bad')}` on the steady "
                f"state of {s.get('workload')}, {s.get('processes')} processes a release a probe"
                f"{', XLA_FLAGS=' + str(s['xla_flags']) if s.get('xla_flags') else ''}; "
                f"{len(doc.bisection.measured)} of {len(doc.bisection.candidates)} releases measured in "
                f"{doc.seconds / 60:.1f} min. **{doc.line}**")  # fmt: skip
        medians = tables.bisection_medians(doc)
        sections.append(ReportSection("Bisection across releases", note,
                                      (Table("Probes", tables.bisection_table(doc)),),
                                      (Plot("Bisection probes", plot_bisection(medians, doc)),)))  # fmt: skip
    return sections


def detector_sections(trials: Sequence[tuple[Path, TrialsDocument]], folder: Path | None = None) -> list[ReportSection]:
    """The regression detector's own check: injected slowdowns caught, A/A comparisons flagged."""
    sections = []
    for path, doc in trials:
        s, table = doc.settings, tables.trials_table(doc)
        note = (
            f"{shown_path(path, folder)}: injected {s.inject_slowdown:.0%} slowdown flagged in {doc.injected_flagged}/"
            f"{s.trials} trials (median ratio {table['injected_ratio'].median():.3f}); A/A flagged in "
            f"{doc.aa_flagged}/{s.trials} (median ratio {table['aa_ratio'].median():.3f}); {s.processes_per_side} "
            f"processes a side, workload {s.workload}, jax {doc.metadata.get('jax')}, host {doc.metadata.get('host')}"
        )
        sections.append(ReportSection("Regression detector trials", note, (Table("Trials", table),)))
    return sections


def trace_sections(traces: Sequence[CaptureSummary], folder: Path | None = None) -> list[ReportSection]:
    """One section per profiler capture: where its steps' time went, and its top operations."""
    sections = []
    for trace in traces:
        steps, where = trace.steps, shown_path(trace.file, folder)
        found = [Table("Top operations by total time", trace.top_ops)]
        if len(steps):
            note = (f"{where}: {len(steps)} marked steps, median {trace.median_step_ms:.3g} ms "
                    f"(load {trace.median_load_ms:.3g} ms, compute {trace.median_compute_ms:.3g} ms). "
                    "Open with `jaxmlp tensorboard --logdir` on its folder.")  # fmt: skip
            found.insert(0, Table("Step time breakdown (ms)", tables.step_stats(steps)))
        else:
            note = f"{where}: no step markers."
        sections.append(ReportSection(f"Trace {trace.run}", note, tuple(found)))
    return sections


def build_sections(results: Results, traces: Sequence[CaptureSummary] = (), folder: Path | None = None
                   ) -> list[ReportSection]:  # fmt: skip
    """The report's content. ``traces`` are `jaxmlp.measure.traces.capture_summary` results; paths are shown relative to
    ``folder``."""
    runs_by_file = tables.benchmark_runs(without_sweeps(results.runs))
    sections = [scaling_section(rows) if tables.is_scaling(rows) else benchmark_section(rows)
                for rows in runs_by_file.values()]  # fmt: skip
    sections.append(cpu_vs_gpu_section(runs_by_file))
    sections += training_section(results.runs)
    sections += sweep_sections(results, folder)
    sections += bisection_sections(results, folder)
    sections += detector_sections(results.trials, folder)
    sections += trace_sections(traces, folder)
    if results.skipped:
        skipped = pd.DataFrame([(shown_path(s.path, folder), s.why) for s in results.skipped],
                               columns=["file", "why it was skipped"])  # fmt: skip
        sections.append(ReportSection("Skipped files", "", (Table("Not results", skipped),)))
    return sections


# --- rendering ------------------------------------------------------------------------------------------------


def markdown_table(table: pd.DataFrame) -> str:
    def cell(value: object) -> str:
        if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
            return "-"
        if isinstance(value, float):
            return f"{value:,.4g}"
        return str(value)

    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def render_markdown(sections: Sequence[ReportSection]) -> str:
    out = ["# jaxmlp report", ""]
    for section in sections:
        out += [f"## {section.title}", "", section.note, ""]
        for caption, table in section.tables:
            out += [f"**{caption}**", "", markdown_table(table), ""]
    return "\n".join(out)


def render_html(sections: Sequence[ReportSection]) -> str:
    style = (
        "body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:14px}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}"
        ".env{color:#555;font-size:13px}img{max-width:100%;margin:.5em 0}"
    )
    out = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>jaxmlp report</title><style>{style}</style>"
        "</head><body><h1>jaxmlp report</h1>"
    ]
    for section in sections:
        out.append(f"<h2>{html.escape(section.title)}</h2><p class='env'>{html.escape(section.note)}</p>")
        for caption, table in section.tables:
            out.append(f"<h3>{html.escape(caption)}</h3>")
            out.append(table.to_html(index=False, na_rep="-", float_format=lambda x: f"{x:,.4g}", border=0))
        for alt, png in section.plots:
            out.append(f"<img alt='{html.escape(alt)}' title='{html.escape(alt)}' src='data:image/png;base64,{png}'>")
    out.append("</body></html>")
    return "\n".join(out)


REPORT_FILES = ("summary.md", "index.html", "results.csv", "samples.csv")
TRACE_OPS_FILE = "trace_ops.csv"


def write_report(results: Results, store: ResultsStore, traces: Sequence[CaptureSummary] = (),
                 out: Path | None = None) -> list[Path]:  # fmt: skip
    """Write summary.md, index.html, results.csv and samples.csv (and trace_ops.csv) into a NEW folder: ``out``,
    else the store's next ``report-<time>``. The folder appears whole, or not at all."""
    sections = build_sections(results, traces, store.folder)
    with store.new_folder(layout.REPORT, out) as folder:
        texts = [render_markdown(sections), render_html(sections), results.runs.to_csv(index=False),
                 results.samples.to_csv(index=False)]  # fmt: skip
        names = list(REPORT_FILES)
        if traces:
            ops = pd.concat([t.top_ops.assign(run=t.run, file=t.file) for t in traces], ignore_index=True)
            texts.append(ops.to_csv(index=False))
            names.append(TRACE_OPS_FILE)
        for name, text in zip(names, texts):
            write_new(folder.path / name, text)
    return [folder.path / name for name in names]
