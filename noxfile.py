"""Sessions for jaxmlp: `nox -l` lists them; `nox -s NAME -- ARGS` passes ARGS through."""

import nox

nox.options.sessions = ["tests", "lint"]
nox.options.reuse_venv = "yes"  # torch is gigabytes: install it once per session's environment
nox.options.error_on_missing_interpreters = True


@nox.session
def train(session: nox.Session) -> None:
    """Train the tutorial's MLP: `nox -s train -- --data-dir DIR` (or `-- --dataset synthetic`)."""
    session.install("-e", ".")
    session.run("jaxmlp", "train", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (real-MNIST tests skip unless JAXMLP_DATA_DIR is set)."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style and common mistakes with ruff."""
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
