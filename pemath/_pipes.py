"""Command-line output into a pipe that closes early (``pemath prove --json | head``): quiet, no traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = ["CLOSED_PIPE_STATUS", "quiet_on_closed_pipe"]

#: The exit status of a command whose reader went away: 128 + SIGPIPE, as a shell reports a process the
#: signal ended (git and the coreutils end that way).
CLOSED_PIPE_STATUS = 141


def quiet_on_closed_pipe(run: Callable[[], int]) -> int:
    """``run()``, or :data:`CLOSED_PIPE_STATUS` without a traceback when stdout's reader closed the pipe."""
    try:
        code = run()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        try:  # what is still buffered would fail again at interpreter exit: send it nowhere
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):  # stdout is not a file (captured in a test)
            pass
        return CLOSED_PIPE_STATUS
