"""``python -m modelcost`` and the ``modelcost`` command.

Until the command-line app is imported (typer, rich: a fraction of a second), SIGINT / SIGTERM end the process
with one line and exit 130 / 143 instead of a KeyboardInterrupt traceback; ``modelcost.cli.main`` then installs
the full handling (modelcost/cli/signals.py)."""

import os
import signal
import sys


def _starting(signum: int, frame: object) -> None:
    sys.stderr.write(f"error: interrupted ({signal.Signals(signum).name}) while starting; nothing was run\n")
    os._exit(128 + signum)


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _starting)
    from modelcost.cli import main as run

    run()


if __name__ == "__main__":
    main()
