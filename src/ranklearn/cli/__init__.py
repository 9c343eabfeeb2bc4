"""The ``ranklearn`` command line (typer): :func:`ranklearn.cli.main.main`, started by :func:`run`."""

from __future__ import annotations

import signal
import sys


def run() -> None:
    """Entry point of the ``ranklearn`` console script: :func:`ranklearn.cli.main.main`, imported
    here so that a Ctrl-C while its libraries load (typer and rich; a command's own, numba among
    them, load when it runs) is one line and status 130, not an import traceback."""
    try:
        from ranklearn.cli.main import main
    except KeyboardInterrupt:
        sys.stderr.write("ranklearn: interrupted\n")
        sys.exit(130)
    try:
        main()
    finally:
        # the command has said all it will: a Ctrl-C while Python shuts down (the threads and exit
        # handlers of a Dask cluster already closed) would only turn its status into -2
        signal.signal(signal.SIGINT, signal.SIG_IGN)
