"""The jax/jaxlib version sweep (``jaxmlp sweep``): worker processes in rotating order, one environment per release
(what a cell, a round and a probe are: the docs' questions/releases page).

- `settings`: what a sweep measures, frozen; `worker`: a worker process's entry (no torch, no pandas); `envs`;
- `matrix`: the cells, their probe and the rounds; `bisect`, `explain`, `trials`, `timeline`, `validation`, `peer`.

None writes a file: the commands file what they return (`jaxmlp.results`). This file imports nothing: the worker
processes import `worker` alone."""
