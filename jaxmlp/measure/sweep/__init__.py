"""The jax/jaxlib version sweep (``jaxmlp sweep``): worker processes in rotating order, one environment per release.

Words, each with one meaning: a *workload* is what a worker compiles once and then times (`jaxmlp.measure.workload`:
the MLP's built-in epochs and step, or the user's own function). A *cell* is one release run with one setting of
``XLA_FLAGS`` (none, or one ``--xla-flags`` value). A *process* is one worker process, measuring in a fresh
interpreter of its release's environment; its value is one *sample*. A *round* runs one process per cell, the
order rotating from round to round (A B C, B C A, C A B, ...); ``--processes N`` runs N rounds, so N samples a
cell. Before the rounds, one *probe process* per cell checks that it runs (a flag the release does not know is
reported for that cell), gives the cost estimate and the values every cell's results are checked against.

- `settings`: what a sweep measures and how, frozen and checked once;
- `worker`: a worker process's entry (``python -m jaxmlp.measure.sweep.worker``; no torch, no pandas);
- `matrix`: the cells, their probe (which also records what each workload compiled), the rounds; `bisect`: the
  bisection over releases; `explain`: the processes behind `jaxmlp sweep explain A B`; `trials`: the detector's
  own check (A/A and injected slowdowns); `envs`: one environment per release.

None of them writes a file: the commands (`jaxmlp.cli.sweep`) file what they return through `jaxmlp.results`.
This file imports nothing: the worker processes import `worker` alone.
"""
