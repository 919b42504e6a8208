"""The results layer: every result jaxmlp writes or reads goes through it.

- `layout`: where results go and what they are called (folders, file names, timestamps);
- `schema`: one module per kind of result file, each file's ``kind`` and ``schema_version``, and the one place
  that upgrades older files (`schema.upgrade`);
- `store`: atomic, never-overwriting writes, and `ResultsStore`, one walk over a results folder;
- `frames`: the documents as tidy pandas DataFrames, and `query`;
- `tables`, `sweep_tables`: the views the summary and report render, each naming the benchmarks it shows;
- `sweep_files`: a sweep's cells as result files; `traces`: summaries of XLA profiler traces.

``import jaxmlp.results`` imports nothing else: `layout` is plain Python (the noxfile uses it), and
pandas comes in only with `frames` and the tables.
"""
