"""The event definitions (backend/turns/events.py) against the contract, and their export.

The contract's server → client table is copied verbatim into
tests/fixtures/contract-events.md (the contract is not part of this repository);
every type it names must be defined with at least its fields, always sent. The
web UI's tests read the definitions from tests/fixtures/event-types.json, which
must be what `python -m backend.features.event_types --json` prints now.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from backend.turns import events
from backend.turns.events import APP_EVENTS, CHAT_EVENTS, QueueItem, make, problems

FIXTURES = Path(__file__).parent / "fixtures"
CONTRACT = (FIXTURES / "contract-events.md").read_text(encoding="utf-8")
EXPORT = FIXTURES / "event-types.json"
ROW = re.compile(r"^\| `(\w+)` \| (.*?) \|.*\|$", re.M)


def contract_rows() -> dict[str, str]:
    """type -> the table's fields cell."""
    return dict(ROW.findall(CONTRACT))


def field_names(cell: str) -> list[str]:
    """`a`, `b` (`x`, `y`), `c`: `[{...}]` -> [a, b, c]: values in brackets and shapes after a colon are not fields."""
    cell = re.sub(r"\([^)]*\)", "", cell)
    cell = re.sub(r":\s*`[^`]*`", "", cell)
    return re.findall(r"`(\w+)`", cell)


def test_the_table_is_read_whole():
    rows = contract_rows()
    assert len(rows) == CONTRACT.count("\n| `") == 18
    assert field_names(rows["turn_end"]) == ["status"]
    assert field_names(rows["queue"]) == ["items"]
    assert field_names(rows["pong"]) == []


@pytest.mark.parametrize("kind", sorted(contract_rows()))
def test_every_contract_event_is_defined_with_its_fields(kind):
    assert kind in CHAT_EVENTS, f"CONTRACT §4 names {kind!r}; events.py does not define it"
    missing = set(field_names(contract_rows()[kind])) - CHAT_EVENTS[kind].required_keys
    assert not missing, f"{kind}: the contract's {sorted(missing)} must be required fields"


def test_every_event_but_pong_carries_the_common_fields():
    sentence = re.search(r"Every event but `(\w+)` has (.*?)\.\n", CONTRACT, re.S)
    exception, common = sentence.group(1), set(re.findall(r"`(\w+)`", sentence.group(2))) - {"type"}
    assert common == {"event_id", "turn_id", "epoch"}
    for kind, spec in CHAT_EVENTS.items():
        assert spec.common == (kind != exception), kind
        assert common <= spec.all_required().keys() or kind == exception


def test_enumerated_values_are_the_contracts():
    cell = contract_rows()["turn_end"]
    statuses = re.search(r"`status` \(([^)]*)\)", cell).group(1)
    assert CHAT_EVENTS["turn_end"].values["status"] == tuple(re.findall(r"`(\w+)`", statuses))


def test_a_queue_item_has_the_contracts_keys():
    shape = re.search(r"`items`: `\[\{(.*?)\}\]`", contract_rows()["queue"]).group(1)
    assert set(re.findall(r'"(\w+)"', shape)) <= QueueItem.__required_keys__


def test_the_exported_json_is_current():
    out = subprocess.run([sys.executable, "-m", "backend.features.event_types", "--json"], capture_output=True,
                         text=True, check=True, cwd=Path(__file__).parent.parent).stdout
    assert out == events.export_json()
    assert EXPORT.read_text(encoding="utf-8") == out, ("tests/fixtures/event-types.json is stale: "
                                                       "python -m backend.features.event_types --json > "
                                                       "tests/fixtures/event-types.json")


def test_problems_names_what_is_wrong():
    good = {"type": "content", "event_id": 3, "turn_id": "t", "epoch": "e", "delta": "x", "message_id": 7}
    assert problems(good) == []
    assert problems({**good, "message_id": True}) == ["content 3: message_id = True is not integer"]
    assert problems({**good, "turn_id": None}) == ["content 3: turn_id = None is not string"]
    assert problems({k: v for k, v in good.items() if k != "delta"}) == ["content 3 lacks delta"]
    assert problems({**good, "extra": 1}) == ["content 3 has no field extra"]
    assert problems({**good, "type": "contents"}) == ["unknown event type 'contents'"]
    ended = {"type": "turn_end", "event_id": 4, "turn_id": "t", "epoch": "e", "status": "done"}
    assert problems(ended) == ["turn_end 4: status = 'done' is not one of completed, cancelled, failed, limit"]
    queue = {"type": "queue", "event_id": 5, "turn_id": None, "epoch": "e",
             "items": [{"message_id": 1, "preview": "a", "steer": False}]}
    assert problems(queue) == []
    assert problems({**queue, "items": [{"message_id": 1, "preview": "a"}]})  # steer is always sent
    usage = {"type": "usage", "event_id": 6, "turn_id": "t", "epoch": "e", "input_tokens": 1, "output_tokens": 2,
             "estimated": False, "reasoning_tokens": 0, "cached_tokens": 0, "cost": 0}
    assert problems(usage) == [] and problems({**usage, "cost": 0.25}) == [] and problems({**usage, "cost": None}) == []


def test_make_checks_what_it_builds():
    assert make("pong") == {"type": "pong"}
    common = {"event_id": 1, "turn_id": None, "epoch": "e"}
    assert make("error", **common, code="busy", message="m", retryable=False)["code"] == "busy"
    with pytest.raises(ValueError, match="error lacks retryable"):
        make("error", **common, code="busy", message="m")
    with pytest.raises(ValueError, match="needs event_id"):
        make("error", code="busy", message="m", retryable=False)
    with pytest.raises(ValueError, match="pong has no field event_id"):
        make("pong", event_id=1)
    with pytest.raises(ValueError, match="unknown event type 'ready'"):
        make("ready")
    assert make("ready", APP_EVENTS) == {"type": "ready"}
