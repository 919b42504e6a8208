"""The results layer: every result jaxmlp writes or reads goes through it.

- `layout`: where results go and what they are called (folders, file names, timestamps);
- `records`: typed records of each kind of result file, and their JSON forms;
- `store`: atomic, never-overwriting writes, and `ResultsStore`, one walk over a results folder;
- `frames`: the documents as tidy pandas DataFrames, and `query`;
- `tables`: the views the summary and report render, each naming the benchmarks it shows.

``import jaxmlp.results`` imports nothing else: `layout` is plain Python (the noxfile uses it), and
pandas comes in only with `frames` and `tables`.
"""
