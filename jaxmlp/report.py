"""Readable reports from the results table: summary.md, a self-contained index.html with plots, CSV tables.

Each benchmark file is one run; ratios are only ever taken inside one run, so
numbers from different machines or versions never meet in one ratio. Where the
report sets runs side by side (CPU vs GPU), it says what differs between them.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import pandas as pd

from jaxmlp import summary
from jaxmlp.stats import ALPHA, THRESHOLD, compare
from jaxmlp.store import write_new

ENVIRONMENT = ("host", "cpu_model", "jax", "jaxlib", "torch", "python", "xla_flags")


def environment_of(run: pd.DataFrame) -> dict:
    first = run.iloc[0]
    env = {key: first.get(key) for key in ENVIRONMENT}
    env.update(
        timestamp=first.get("timestamp"),
        commit=str(first.get("commit"))[:12],
        backends=", ".join(sorted(str(b) for b in run.get("backend", pd.Series(dtype=object)).dropna().unique())),
        devices=", ".join(sorted(str(d) for d in run.get("device_kind", pd.Series(dtype=object)).dropna().unique())),
        dataset=", ".join(sorted(str(d) for d in run.get("dataset", pd.Series(dtype=object)).dropna().unique())),
        size=first.get("size"),
        file=Path(str(first.get("file"))).name,
    )
    return env


def describe(env: dict) -> str:
    data = env["dataset"] + (" (SYNTHETIC, not MNIST)" if env["dataset"] == "synthetic" else "")
    return (
        f"{env['file']}: {env['timestamp']}, host {env['host']} ({env['cpu_model']}), backends {env['backends']} "
        f"({env['devices']}); jax {env['jax']}, jaxlib {env['jaxlib']}, torch {env['torch']}, python {env['python']}; "
        f"XLA_FLAGS '{env['xla_flags'] or ''}'; commit {env['commit']}; size {env['size']}; data {data}"
    )


def benchmark_runs(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Benchmark rows by file, newest first."""
    if "test" not in runs:
        return {}
    bench = runs[runs["test"] != "train_epoch"]
    by_file = {name: rows for name, rows in bench.groupby("file")}
    return dict(sorted(by_file.items(), key=lambda item: str(item[1]["timestamp"].iloc[0]), reverse=True))


def cpu_vs_gpu(runs_by_file: dict[str, pd.DataFrame]) -> tuple[pd.DataFrame, str]:
    """The newest CPU and GPU epoch ladders side by side, and a sentence on what differs between them."""
    newest = {}
    for rows in runs_by_file.values():
        for backend, part in rows.groupby("backend"):
            if not summary.pipeline_ladder(part).empty:
                newest.setdefault(backend, part)
    if not {"cpu", "gpu"} <= set(newest):
        return pd.DataFrame(), "CPU vs GPU: needs results of both (`nox -s bench` and `nox -s bench-gpu`)."
    ladders = {b: summary.pipeline_ladder(newest[b]).set_index("rung")["epoch_s"] for b in ("cpu", "gpu")}
    table = pd.DataFrame({"cpu_s": ladders["cpu"], "gpu_s": ladders["gpu"]})
    table["cpu_over_gpu"] = table["cpu_s"] / table["gpu_s"]
    cpu_env, gpu_env = environment_of(newest["cpu"]), environment_of(newest["gpu"])
    differ = [key for key in ("file", "host", "jax", "jaxlib", "torch", "python") if cpu_env[key] != gpu_env[key]]
    note = (
        "CPU and GPU from the same run."
        if not differ
        else (
            "CPU and GPU come from different runs; they differ in "
            + ", ".join(f"{key} ({cpu_env[key]} vs {gpu_env[key]})" for key in differ)
            + "."
        )
    )
    return table.reset_index(), note


def training_table(runs: pd.DataFrame) -> pd.DataFrame:
    if "test" not in runs:
        return pd.DataFrame()
    train = runs[runs["test"] == "train_epoch"]
    rows = []
    for file, epochs in train.groupby("file"):
        epochs = epochs.sort_values("epoch")
        last = epochs.iloc[-1]
        steady = epochs["epoch_seconds"].iloc[1:] if len(epochs) > 1 else epochs["epoch_seconds"]
        rows.append(
            {
                "file": Path(str(file)).name,
                "dataset": last.get("dataset"),
                "pipeline": last.get("pipeline"),
                "backend": last.get("backend"),
                "epochs": len(epochs),
                "epoch_s_median": float(steady.median()),
                "compile_s": float(epochs["compile_seconds"].sum()),
                "train_accuracy": last.get("train_accuracy"),
                "test_accuracy": last.get("test_accuracy"),
                "jax": last.get("jax"),
                "host": last.get("host"),
            }
        )
    return pd.DataFrame(rows)


# --- plots ------------------------------------------------------------------------------


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    return fig, ax


def _png(fig) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def plot_by_batch_size(table: pd.DataFrame, lines, ylabel: str, title: str) -> str:
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


def plot_loader(table: pd.DataFrame) -> str:
    fig, ax = _figure()
    loader = table.dropna(subset=["workers"])
    ax.bar(loader["workers"].astype(int).astype(str), loader["epoch_s"], label="NumpyLoader")
    arrays = table[table["workers"].isna()]
    if len(arrays):
        ax.axhline(float(arrays["epoch_s"].iloc[0]), color="C1", linestyle="--", label="arrays sliced")
    ax.set(xlabel="DataLoader workers", ylabel="median epoch of input (s)", title="Input alone, one epoch")
    ax.legend()
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


# --- rendering --------------------------------------------------------------------------


def markdown_table(table: pd.DataFrame) -> str:
    def cell(value) -> str:
        if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NA:
            return "-"
        if isinstance(value, float):
            return f"{value:,.4g}"
        return str(value)

    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def version_key(version: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in str(version).split("."))


def sweep_tables(rows: pd.DataFrame, samples: pd.DataFrame, threshold: float = THRESHOLD, alpha: float = ALPHA):
    """One sweep's per-version table and its consecutive-version comparisons (from the raw per-process samples)."""

    timed = rows[rows["test"].isin(["sweep_epoch", "sweep_step", "sweep_first_epoch", "sweep_compile"])]
    table = timed.assign(what=timed["name"]).pivot_table(index="jax", columns="what", values="median", aggfunc="first")
    table = table.loc[sorted(table.index, key=version_key)].rename_axis(columns=None)
    table.insert(0, "processes", timed.groupby("jax")["rounds"].max())
    by_version = {v: samples[samples["file"] == f] for v, f in rows.groupby("jax")["file"].first().items()}
    versions = list(table.index)
    steps = []
    for name in sorted(rows.loc[rows["test"].isin(["sweep_epoch", "sweep_step"]), "name"].unique()):
        for old, new in zip(versions[:-1], versions[1:]):
            a = by_version[old].loc[by_version[old]["name"] == name, "seconds"]
            b = by_version[new].loc[by_version[new]["name"] == name, "seconds"]
            c = compare(a, b, threshold, alpha)
            steps.append({"benchmark": name, "from": old, "to": new, "ratio": c.ratio, "ci_low": c.ci_low,
                          "ci_high": c.ci_high, "p_slower": c.p_slower, "p_faster": c.p_faster,
                          "verdict": c.verdict})  # fmt: skip
    return table.reset_index(), pd.DataFrame(steps)


def plot_sweep(rows: pd.DataFrame, steps: pd.DataFrame) -> str:
    """Steady-state epoch per version (median, IQR), flagged steps marked (regressions red, improvements green)."""
    fig, ax = _figure()
    epochs = rows[rows["test"] == "sweep_epoch"]
    versions = sorted(epochs["jax"].unique(), key=version_key)
    labels: set[str] = set()
    for i, (name, part) in enumerate(epochs.groupby("name")):
        part = part.set_index("jax").loc[versions]
        x = range(len(versions))
        yerr = [part["median"] - part["q1"], part["q3"] - part["median"]]
        ax.errorbar(x, part["median"], yerr=yerr, marker="o", capsize=3, label=name, color=f"C{i}")
        for verdict, color in (("regression", "red"), ("improvement", "green")):
            flagged = steps[(steps["benchmark"] == name) & (steps["verdict"] == verdict)] if len(steps) else steps
            for to in flagged.get("to", []):
                j = versions.index(to)
                ax.plot(j, part["median"].iloc[j], marker="X", markersize=14, color=color, linestyle="none",
                        label=f"flagged {verdict}" if verdict not in labels else None)  # fmt: skip
                labels.add(verdict)
    ax.set_xticks(range(len(versions)), versions)
    ax.set(xlabel="jax / jaxlib version", ylabel="steady-state epoch (s)", title="Epoch time by version")
    ax.legend(fontsize=8)
    return _png(fig)


def sweep_sections(results) -> list[dict]:
    runs = results.runs
    if "sweep" not in runs:
        return []
    sweeps = runs[runs["sweep"].fillna(False).astype(bool)]
    sections = []
    for folder, rows in sweeps.groupby(sweeps["file"].map(lambda f: str(Path(f).parent))):
        table, steps = sweep_tables(rows, results.samples)
        first = rows.iloc[0]
        known = (("{:.0f} epochs", first.get("epochs")), ("of {:.0f} images", first.get("samples")))
        each = " ".join(text.format(value) for text, value in known if pd.notna(value))
        env = (f"{folder}: host {first.host} ({first.cpu_model}), python {first.python}, data {first.get('dataset')}; "
               f"each sample is one process ({int(first['rounds'])} a version, alternating"
               f"{'; ' + each if each else ''}; {first.cpu_affinity} CPU(s) each); flagged: one-sided Mann-Whitney "
               f"p < {ALPHA} and ratio of medians > {1 + THRESHOLD:g}")  # fmt: skip
        tables = [("Median per version (s; sweep_epoch is the steady state: median of epochs after the first)", table)]
        if len(steps):
            tables.append(("Each version against the previous one", steps))
        sections.append(
            {
                "title": "jax/jaxlib versions",
                "env": env,
                "tables": tables,
                "plots": [("Epoch time by jax version, flagged steps marked", plot_sweep(rows, steps))],
            }
        )
    return sections


def detector_sections(trials: list[dict]) -> list[dict]:
    """The regression detector's own check: injected slowdowns caught, A/A comparisons flagged."""
    sections = []
    for doc in trials:
        settings, meta = doc["settings"], doc["metadata"]
        rounds = settings["rounds"]
        table = pd.DataFrame(
            [{"trial": t["trial"], "injected_ratio": t["injected"]["ratio"], "injected_p": t["injected"]["p_slower"],
              "injected_verdict": t["injected"]["verdict"], "aa_ratio": t["aa"]["ratio"],
              "aa_p": t["aa"]["p_slower"], "aa_verdict": t["aa"]["verdict"]} for t in doc["trials"]]
        )  # fmt: skip
        head = (
            f"{doc['file']}: injected {settings['inject_slowdown']:.0%} slowdown flagged in "
            f"{doc['injected_flagged']}/{rounds} trials (median ratio {table['injected_ratio'].median():.3f}); "
            f"A/A flagged in {doc['aa_flagged']}/{rounds} (median ratio {table['aa_ratio'].median():.3f}); "
            f"{settings['processes_per_side']} processes a side, pipeline {settings['pipeline']}, "
            f"jax {meta['jax']}, host {meta['host']}"
        )
        sections.append(
            {"title": "Regression detector trials", "env": head, "tables": [("Trials", table)], "plots": []}
        )
    return sections


def trace_sections(traces: list[dict]) -> list[dict]:
    """One section per profiler capture: where its steps' time went, and its top operations."""
    sections = []
    for trace in traces:
        steps = trace["steps"]
        if len(steps):
            head = (
                f"{trace['file']}: {len(steps)} marked steps, median {trace['median_step_ms']:.3g} ms "
                f"(load {trace['median_load_ms']:.3g} ms, compute {trace['median_compute_ms']:.3g} ms). "
                "Open with `jaxmlp tensorboard --logdir` on its folder."
            )
        else:
            head = f"{trace['file']}: no step markers."
        tables = [("Top operations by total time", trace["top_ops"])]
        if len(steps):
            breakdown = steps.drop(columns="step").agg(["mean", "median", "min", "max"]).reset_index(names="stat")
            tables.insert(0, ("Step time breakdown (ms)", breakdown))
        sections.append({"title": f"Trace {trace['run']}", "env": head, "tables": tables, "plots": []})
    return sections


def build_sections(results, traces: list[dict] = (), trials: list[dict] = ()) -> list[dict]:
    """The report's content: a list of sections {title, env, tables: [(caption, DataFrame)], plots: [(alt, png)]}.

    ``traces`` are `jaxmlp.traces.capture_summary` results; ``trials`` detector-trial documents.
    """
    sections = []
    runs = results.runs
    if "sweep" in runs:
        runs = runs[~runs["sweep"].fillna(False).astype(bool)]
    runs_by_file = benchmark_runs(runs)
    for rows in runs_by_file.values():
        env = describe(environment_of(rows))
        tables, plots = [], []
        update = summary.jit_vs_eager(rows)
        if not update.empty:
            tables.append(("Update step, jit vs eager (median ms; speedup = eager / jit)", update))
            for backend, part in update.groupby("backend"):
                plots.append((f"Update step time, jit vs eager ({backend})", plot_update(part)))
        predict = summary.vmap_vs_loop(rows)
        if not predict.empty:
            tables.append(("Prediction, vmap vs Python loop vs jit(vmap) (median ms; speedups over the loop)", predict))
            for backend, part in predict.groupby("backend"):
                plots.append((f"Prediction time vs batch size ({backend})", plot_predict(part)))
        loader = summary.loader_by_workers(rows)
        if not loader.empty:
            best = summary.best_workers(rows)
            tables.append((f"Input alone, one epoch (median s); best worker count: {best}", loader))
            plots.append(("Loader epoch vs workers", plot_loader(loader)))
        ladder = summary.pipeline_ladder(rows)
        if not ladder.empty:
            tables.append(("Epoch ladder (median s; x_floor = times the compute floor)", ladder))
            for backend, part in ladder.groupby("backend"):
                plots.append((f"Pipeline ladder with the floor ({backend})", plot_ladder(part)))
        sections.append({"title": "Benchmarks", "env": env, "tables": tables, "plots": plots})
    table, note = cpu_vs_gpu(runs_by_file)
    sections.append(
        {
            "title": "CPU vs GPU",
            "env": note,
            "tables": [("Epoch ladder by backend", table)] if len(table) else [],
            "plots": [("CPU vs GPU epoch times", plot_cpu_gpu(table))] if len(table) else [],
        }
    )
    training = training_table(results.runs)
    if len(training):
        sections.append(
            {
                "title": "Training runs",
                "env": "One row per `jaxmlp train --json` file.",
                "tables": [("Training (epoch_s_median: epochs 1 and later)", training)],
                "plots": [],
            }
        )
    sections += sweep_sections(results)
    sections += detector_sections(trials)
    sections += trace_sections(traces)
    if results.skipped:
        skipped = pd.DataFrame(results.skipped, columns=["file", "why it was skipped"])
        sections.append({"title": "Skipped files", "env": "", "tables": [("Not results", skipped)], "plots": []})
    return sections


def render_markdown(sections: list[dict]) -> str:
    out = ["# jaxmlp report", ""]
    for section in sections:
        out += [f"## {section['title']}", "", section["env"], ""]
        for caption, table in section["tables"]:
            out += [f"**{caption}**", "", markdown_table(table), ""]
    return "\n".join(out)


def render_html(sections: list[dict]) -> str:
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
        out.append(f"<h2>{html.escape(section['title'])}</h2><p class='env'>{html.escape(section['env'])}</p>")
        for caption, table in section["tables"]:
            out.append(f"<h3>{html.escape(caption)}</h3>")
            out.append(table.to_html(index=False, na_rep="-", float_format=lambda x: f"{x:,.4g}", border=0))
        for alt, png in section["plots"]:
            out.append(f"<img alt='{html.escape(alt)}' title='{html.escape(alt)}' src='data:image/png;base64,{png}'>")
    out.append("</body></html>")
    return "\n".join(out)


def write_report(results, out_dir: Path, traces: list[dict] = (), trials: list[dict] = ()) -> list[Path]:
    """Write summary.md, index.html, results.csv and samples.csv (and trace_ops.csv) into the NEW folder ``out_dir``."""
    sections = build_sections(results, traces, trials)
    out_dir.mkdir(parents=True, exist_ok=False)
    paths = [
        write_new(out_dir / "summary.md", render_markdown(sections)),
        write_new(out_dir / "index.html", render_html(sections)),
        write_new(out_dir / "results.csv", results.runs.to_csv(index=False)),
        write_new(out_dir / "samples.csv", results.samples.to_csv(index=False)),
    ]
    if traces:
        ops = pd.concat([t["top_ops"].assign(run=t["run"], file=t["file"]) for t in traces], ignore_index=True)
        paths.append(write_new(out_dir / "trace_ops.csv", ops.to_csv(index=False)))
    return paths
