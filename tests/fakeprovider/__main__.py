"""python -m tests.fakeprovider --port 0 --control

Prints one JSON line {"port", "url", "base_url"} once it listens, then serves
until SIGTERM / SIGINT or POST /_control/shutdown.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys

from .server import FakeProvider


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fakeprovider")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--control", action="store_true", help="enable the /_control/* routes")
    ap.add_argument("--record-times", action="store_true", help="record per-delta write times")
    ap.add_argument("--models", default="fake-model", help="comma-separated ids for GET /v1/models")
    args = ap.parse_args(argv)

    fake = FakeProvider(port=args.port, control=args.control, record_times=args.record_times,
                        models=[m for m in args.models.split(",") if m])
    stop = fake.shutdown_requested
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(json.dumps({"port": fake.port, "url": fake.url, "base_url": fake.base_url}), flush=True)
    try:
        while not stop.wait(0.2):  # a timed wait lets signal handlers run
            pass
    finally:
        fake.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
