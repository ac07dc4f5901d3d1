"""`numi`: the desktop app. Until the window lands it runs the backend in the browser."""
from __future__ import annotations

import logging
import sys

from backend.cli import parse_args, run_headless


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.headless:
        logging.getLogger("numi").warning(
            "The desktop window is not available in this build; running headless and opening the browser.")
        print("Numi: no desktop window in this build, opening the UI in the browser instead.", file=sys.stderr)
        args.open_browser = True
    return run_headless(args)


if __name__ == "__main__":
    sys.exit(main())
