"""The commands' work below their parsing: each command's typed entry point and its orchestration."""
