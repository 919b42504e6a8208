"""The results layer: every result jaxmlp writes or reads goes through it.

- `layout`: names and places; `schema`: one module per kind of file, and `schema.upgrade` for older ones;
- `store`: atomic writes and one walk over a folder; `frames`: documents as DataFrames; tables, findings, history.

``import jaxmlp.results`` imports nothing else: `layout` is plain Python (the noxfile uses it), and pandas comes in
only with `frames` and the tables."""
