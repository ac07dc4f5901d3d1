"""Thousands of generated frames against the real server's chat socket.

Each frame is a well-formed frame of one client type (answered in a way known
on an idle chat without messages) with at most one mutation: a field of the
wrong type or missing, an id beyond 64 bits, NaN / Infinity / 1e400, a lone
surrogate, nesting past 100 levels, a string over a limit (frames stay under
1 MiB), an unknown type, a non-object, broken JSON, a binary frame. The
generator knows each frame's answer: `bad_request` for every malformed one,
the contract's code for a well-formed frame that is refused (`not_found`,
`bad_request` for `continue`), `pong`, a `snapshot`, or nothing (`stop`).
Frames go in batches that end with a ping; the answers to a batch must be
exactly the expected ones, in order, then its pong — so the socket stayed
open and nothing was lost or added. The server's log must hold no traceback.
"""
from __future__ import annotations

import json
import random
import time

from tests.numi_client import Socket

SEED = 20261201  # the same frames every run
FRAMES = 3000
BATCH = 100  # frames before each ping (the server keeps at most 256 answers for a slow reader)
I64_MAX = (1 << 63) - 1
FRAME_LIMIT = 1 << 20

# type -> {field: (kind, required)}; what the contract (§4) and docs/PROTOCOL.md say a frame carries
SCHEMA = {
    "send": {"request_id": ("str", True), "content": ("str", True), "attachments": ("list", False),
             "mode": ("str", False)},
    "stop": {"clear_queue": ("bool", False)},
    "resume": {"after_event_id": ("int", True), "epoch": ("str", False)},
    "edit": {"message_id": ("int", True), "content": ("str", True)},
    "regenerate": {"message_id": ("int", True), "model_id": ("str", False)},
    "continue": {},
    "approve": {"approval_id": ("str", True), "decision": ("str", True), "reason": ("str", False),
                "arguments": ("args", False)},
    "queue_discard": {"message_id": ("int", True)},
    "ping": {},
}
# Values of every JSON type but the one a field takes (null aside: it means "absent").
WRONG = {
    "str": [0, 7, -1, 1.5, True, False, [], ["x"], {}, {"a": "b"}],
    "int": ["12", "0", "", 1.0, 2.5, -0.0, True, False, [], [1], {}, {"id": 1}],
    "bool": [1, 0, "true", "false", "", 1.0, [], [True], {}],
    "list": ["f_1", 3, 0.5, True, {}, {"0": "f_1"}],
    "args": [1, 2.5, True, False, [], [{"a": 1}]],
}
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00"]
BAD_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1E999", "123e45678"]


class Raw:
    """JSON text put into a frame as it is (literals json.dumps cannot write, deep nesting)."""

    def __init__(self, text: str):
        self.text = text


def encode(frame) -> str:
    """The frame as JSON text (surrogates as \\u escapes, Raw values verbatim)."""
    raws: list[str] = []

    def mark(value):
        if isinstance(value, Raw):
            raws.append(value.text)
            return f"\x00RAW{len(raws) - 1}\x00"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mark(v) for v in value]
        return value

    text = json.dumps(mark(frame))
    for i, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x00RAW{i}\x00"), raw)
    return text


class Generator:
    """Frames with the answer each must get, from one seeded random source."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.n = 0

    def text(self, low: int = 0, high: int = 12) -> str:
        alphabet = "abcxyz 019-_.é中\U0001F600\n\t\"\\"
        return "".join(self.rng.choice(alphabet) for _ in range(self.rng.randint(low, high)))

    def id64(self) -> int:
        return self.rng.choice([0, 1, -1, 42, I64_MAX, -I64_MAX - 1, self.rng.randint(-I64_MAX - 1, I64_MAX)])

    def well_formed(self, kind: str) -> tuple[dict, str | None]:
        """A well-formed frame of `kind` and its answer on an idle chat that has no messages."""
        rng, self.n = self.rng, self.n + 1
        frame: dict = {"type": kind}
        if kind == "send":
            # A missing file is always attached: the answer is not_found, and nothing starts a turn.
            frame.update(request_id=f"fz-{self.n}-{self.text(0, 20)}"[:64], content=self.text(0, 40),
                         attachments=[f"f_missing_{self.n}"] + [self.text(1, 8) for _ in range(rng.randint(0, 3))])
            if rng.random() < 0.3:
                frame["mode"] = rng.choice(["queue", "steer"])
            return frame, "not_found"
        if kind == "stop":
            if rng.random() < 0.5:
                frame["clear_queue"] = rng.choice([True, False])
            return frame, None
        if kind == "resume":
            frame["after_event_id"] = rng.choice([0, 1, 99, I64_MAX, rng.randint(0, I64_MAX)])
            if rng.random() < 0.3:
                frame["epoch"] = self.text(1, 12)
            return frame, "snapshot"
        if kind in ("edit", "regenerate", "queue_discard"):
            frame["message_id"] = self.id64()
            if kind == "edit":
                frame["content"] = "x" + self.text(0, 30)
            return frame, "not_found"
        if kind == "continue":
            return frame, "bad_request"  # nothing to continue in an empty chat
        if kind == "approve":
            frame.update(approval_id=self.text(0, 16), decision=rng.choice(["allow", "allow_always", "deny"]))
            if rng.random() < 0.4:
                frame["reason"] = self.text(0, 30)
            if rng.random() < 0.4:
                arguments = {"text": self.text(0, 20), "n": self.id64(), "deep": [[{"x": [1.5, None]}]]}
                frame["arguments"] = arguments if rng.random() < 0.5 else json.dumps(arguments)
            return frame, "not_found"
        return frame, "pong"  # ping

    # --- mutations: each returns (payload, expected answer) ----------------------------------

    def case(self):
        rng = self.rng
        kind = rng.choice(list(SCHEMA))
        frame, answer = self.well_formed(kind)
        mutation = rng.choices(
            ["none", "wrong_type", "null", "missing", "too_big_int", "bad_number", "surrogate", "nesting",
             "limits", "unknown_type", "non_object", "broken_json", "binary", "huge_but_fine"],
            weights=[8, 14, 4, 6, 8, 8, 12, 8, 8, 5, 3, 6, 3, 1])[0]
        return getattr(self, "_" + mutation)(kind, frame, answer)

    def _none(self, kind, frame, answer):
        return encode(frame), answer

    def _fields(self, kind, required=None):
        return [n for n, (_, req) in SCHEMA[kind].items() if required is None or req == required]

    def _wrong_type(self, kind, frame, answer):
        fields = self._fields(kind)
        if not fields:
            return self._unknown_type(kind, frame, answer)
        name = self.rng.choice(fields)
        frame[name] = self.rng.choice(WRONG[SCHEMA[kind][name][0]])
        return encode(frame), "bad_request"

    def _null(self, kind, frame, answer):
        """null is no value: for a required field it is missing, for an optional one it is absent."""
        fields = [n for n in self._fields(kind) if not (kind == "send" and n == "attachments")]
        if not fields:
            return encode(frame), answer
        name = self.rng.choice(fields)
        frame[name] = None
        return encode(frame), "bad_request" if SCHEMA[kind][name][1] else answer

    def _missing(self, kind, frame, answer):
        fields = self._fields(kind, required=True)
        if not fields:
            return self._unknown_type(kind, frame, answer)
        del frame[self.rng.choice(fields)]
        return encode(frame), "bad_request"

    def _where(self, frame) -> tuple[dict, str]:
        """A place for a value: an int field of the frame, an unknown extra field, or inside arguments."""
        ints = [n for n in frame if SCHEMA[frame["type"]].get(n, ("",))[0] == "int"]
        if ints and self.rng.random() < 0.6:
            return frame, self.rng.choice(ints)
        if isinstance(frame.get("arguments"), dict) and self.rng.random() < 0.5:
            return frame["arguments"], "n"
        return frame, self.rng.choice(["extra", "z", "nested_" + str(self.rng.randint(0, 9))])

    def _too_big_int(self, kind, frame, answer):
        target, name = self._where(frame)
        rng = self.rng
        target[name] = Raw(rng.choice([str(I64_MAX + 1), str(-I64_MAX - 2), str(rng.randint(I64_MAX + 1, 10 ** 30)),
                                       "-" + "9" * rng.randint(20, 40), "1" * rng.randint(4300, 6000)]))
        return encode(frame), "bad_request"

    def _bad_number(self, kind, frame, answer):
        target, name = self._where(frame)
        target[name] = Raw(self.rng.choice(BAD_NUMBERS))
        return encode(frame), "bad_request"

    def _surrogate(self, kind, frame, answer):
        rng = self.rng
        lone = rng.choice(SURROGATES)
        # A whole pair is fine; a lone half before or after it still is not.
        piece = rng.choice([lone, lone + "a", "a" + lone, "\U0001F600" + lone, lone + "\U0001F600"])
        strings = [n for n, v in frame.items() if isinstance(v, str)]
        where = rng.random()
        if where < 0.15:
            frame[piece] = 1  # a key
        elif where < 0.3 and isinstance(frame.get("arguments"), str):
            frame["arguments"] = json.dumps({"text": piece})  # inside the arguments' own JSON text
        elif where < 0.45 and frame.get("attachments"):
            frame["attachments"][-1] += piece
        elif strings:
            name = rng.choice(strings)
            value = frame[name]
            at = rng.randint(0, len(value))
            frame[name] = value[:at] + piece + value[at:]
        else:
            frame["note"] = piece
        return encode(frame), "bad_request"

    def _nesting(self, kind, frame, answer):
        rng = self.rng
        # The frame object is one level; 99 more are allowed, 100 more are refused.
        depth = rng.choice([1, 50, 98, 99, 100, 101, 150, 999, 1000, 5000, 50_000])
        opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
        inner = "1" if opener == "{\"a\":" else ""
        frame[rng.choice(["extra", "deep"])] = Raw(opener * depth + inner + closer * depth)
        return encode(frame), answer if depth < 100 else "bad_request"

    def _limits(self, kind, frame, answer):
        """A value of the right type beyond what the field allows."""
        rng = self.rng
        choices = {
            "send": [("request_id", ""), ("request_id", "r" * rng.randint(65, 5000)),
                     ("attachments", [f"f_{i}" for i in range(21)]), ("mode", rng.choice(["", "now", "QUEUE"])),
                     ("content", "x" * rng.randint(200_001, 900_000))],
            "edit": [("content", "x" * rng.randint(200_001, 900_000)), ("content", rng.choice(["", "  ", "\n\t"]))],
            "resume": [("after_event_id", rng.choice([-1, -I64_MAX - 1, -rng.randint(1, 10 ** 6)]))],
            "approve": [("decision", rng.choice(["", "yes", "ALLOW", "allow "])),
                        ("arguments", rng.choice(["", "not json", "[1, 2]", "\"text\"", "42", "null", "{\"a\": NaN}",
                                                  "{\"n\": 9223372036854775808}", "[" * 200 + "]" * 200]))],
        }
        if kind not in choices:
            return self._wrong_type(kind, frame, answer)
        name, value = rng.choice(choices[kind])
        frame[name] = value
        return encode(frame), "bad_request"

    def _unknown_type(self, kind, frame, answer):
        rng = self.rng
        value = rng.choice(["", "PING", "Ping", "pong", "send ", "dance", "__proto__", "é", self.text(1, 30),
                            "x" * 10_000, 1, 0, True, None, [], ["ping"], {"type": "ping"}, 1.5])
        if rng.random() < 0.15:
            del frame["type"]
        else:
            frame["type"] = value
        return encode(frame), "bad_request"

    def _non_object(self, kind, frame, answer):
        return self.rng.choice(["[]", "[1, 2]", "1", "-0", "\"ping\"", "null", "true", "false",
                                "[" + encode(frame) + "]", "\"\\ud800\""]), "bad_request"

    def _broken_json(self, kind, frame, answer):
        rng = self.rng
        text = encode(frame)
        broken = rng.choice([
            text[:rng.randint(0, len(text) - 1)],  # every proper prefix of an object is unfinished
            text[:-1] + ",}",
            text.replace('"', "'", 1),
            text + "}",
            text + " x",
            "{type: \"ping\"}",
            "",
            " ",
            "\u0000",
            "{\"type\": \"ping\" \"x\": 1}",
            "{\"type\": \"\\x\"}",
            "{\"type\": \"\\u12\"}",
        ])
        return broken, "bad_request"

    def _binary(self, kind, frame, answer):
        return encode(frame).encode(), "bad_request"

    def _huge_but_fine(self, kind, frame, answer):
        """A big frame under 1 MiB that is still well-formed: an unknown field is ignored."""
        frame["padding"] = "p" * self.rng.randint(100_000, 950_000)
        return encode(frame), answer


def label(event: dict) -> str:
    return event["code"] if event["type"] == "error" else event["type"]


def answers(sock: Socket, n: int) -> list[dict]:
    """The next `n` events, or fewer if the server stops answering (or closes) first."""
    from websockets.exceptions import ConnectionClosed

    got = []
    try:
        while len(got) < n:
            got.append(sock.recv(timeout=10))
    except (TimeoutError, ConnectionClosed):
        pass
    return got


def test_generated_frames_get_their_answers_and_the_socket_stays_open(server, api):
    chat = api.post("/api/chats", {"title": "fuzz"}).body["id"]
    generator = Generator(SEED)
    cases = [generator.case() for _ in range(FRAMES)]
    assert all(len(p.encode() if isinstance(p, str) else p) < FRAME_LIMIT for p, _ in cases)
    expected_kinds = {answer for _, answer in cases}
    assert {"bad_request", "not_found", "pong", "snapshot", None} <= expected_kinds  # every kind of answer
    sock = Socket(server, chat)
    started = time.monotonic()
    for first in range(0, FRAMES, BATCH):
        batch = cases[first:first + BATCH]
        for payload, _ in batch:
            sock.ws.send(payload)
        sock.send(type="ping")
        want = [(i, answer) for i, (_, answer) in enumerate(batch, first) if answer is not None]
        got = answers(sock, len(want) + 1)
        for (i, answer), event in zip(want, got):
            assert label(event) == answer, (i, cases[i][0][:200], event)
            if event["type"] == "error":
                assert event["message"].endswith(".") and "Traceback" not in event["message"], event
        assert len(got) == len(want) + 1 and label(got[-1]) == "pong", (first, [label(e) for e in got[-5:]])
    took = time.monotonic() - started
    assert api.get(f"/api/chats/{chat}/messages").body["items"] == []  # nothing was saved
    log = (server.data_dir / "logs" / "numi.log").read_text()
    assert "Traceback" not in log and " ERROR " not in log, log[-3000:]
    print(f"{FRAMES} frames in {took:.1f} s")


def test_the_app_socket_answers_hostile_frames_and_stays_open(server):
    from tests.numi_client import AppSocket

    sock = AppSocket(server)
    for payload in ("[" * 100_000 + "]" * 100_000, '{"type": "ping", "x": ' + "[" * 5000 + "]" * 5000 + "}",
                    '{"type": "\\ud800"}', "not json", b'{"type": "ping"}', "[]"):
        sock.ws.send(payload)
        assert label(sock.recv()) == "bad_request", payload[:40]
    sock.send(type="ping")
    assert label(sock.recv()) == "pong"
    assert "Traceback" not in (server.data_dir / "logs" / "numi.log").read_text()
