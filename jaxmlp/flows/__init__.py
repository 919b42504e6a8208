"""The commands' work below their parsing: each command's typed entry point (a keyword function over frozen settings
returning an outcome) and its orchestration."""
