"""The commands' work, below their parsing: each command's typed entry point (a keyword function over frozen settings
that returns an outcome) and its orchestration: the sweep's matrix, resume, timeline, bisection, explanation, trials,
corpus, the ranks of mpirun or srun, `jaxmlp track` and its settling, the detector's validation, the environments.
`jaxmlp.cli` parses arguments into their settings, calls one of them and prints."""
