"""This file implements the two kinds of tofu-export failure, which map to
its exit statuses: ModelError (1: the model cannot be found, built, traced
or written as a tofu-graph) and UsageError (2: a malformed option). It
imports nothing heavy, so that usage errors are reported before torch loads.
"""


class ModelError(Exception):
    """The model cannot be found, built or traced (exit status 1)."""


class UsageError(Exception):
    """A malformed option (exit status 2)."""


def describe(e: Exception) -> str:
    """`Type: first line of the message` of an exception from user code."""
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"
