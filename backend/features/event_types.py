"""`python -m backend.features.event_types --json`: every event definition as JSON, the features' included.

The web UI's tests read it (checked in as tests/fixtures/event-types.json); it lives here,
above the engine, because the features' events join the engine's table when they register.
"""
import sys

from backend.features import register_all
from backend.turns import events

if __name__ == "__main__":
    if sys.argv[1:] != ["--json"]:
        sys.exit("usage: python -m backend.features.event_types --json  (the event definitions as JSON, to stdout)")
    register_all()
    sys.stdout.write(events.export_json())
