"""The results layer: every result jaxmlp writes or reads goes through it.

- `schema`: one module per kind of file, and `schema.upgrade` for older ones;
- `store`: names and places (`store.layout`), one walk over a folder, its index, atomic writes, documents as DataFrames;
- `tables`: the benchmark and run tables; `releases`: the version sweep's files and tables; `history`; `findings`.

``import jaxmlp.results`` imports nothing else: `store.layout` is plain Python (the noxfile uses it), and pandas comes
in only with `store.frames` and the tables."""
