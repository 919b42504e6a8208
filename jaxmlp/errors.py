"""The one exception type users see: its message names the problem and the fix."""


class JaxmlpError(Exception):
    """A problem with the user's input or environment, reported as one line without a traceback."""
