"""The part of every adapter's stream that is the same whatever the wire API.

An adapter builds its SDK client and request; `relay` opens the response,
decodes it (SSE, or one JSON answer from a server that ignored stream=True),
feeds the events to the adapter's assembler, and turns every failure into a
typed ProviderError with a sentence a person can act on. Text leaves it
well-formed (backend.core.text): the SDKs decode `\\ud83d` escapes into lone
surrogates, which no commit or socket can carry.
"""
from __future__ import annotations

import json
from typing import Any, Callable, ContextManager, Iterator
from urllib.parse import urlsplit, urlunsplit

from backend.core.errors import ProviderError
from backend.core.text import REPLACEMENT, SplitPairs, well_formed, well_formed_value
from backend.core.types import (
    ReasoningDelta,
    ReasoningDetail,
    StepEnd,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)


def as_sent(kw: dict, fields: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
    """create() arguments with `fields` (already in wire form) sent exactly as built.

    The SDKs walk every nested value of a request against their typed schema
    before sending; for a long history that was most of the time from a send
    to the request (docs/BENCHMARKS.md). extra_body is merged into the
    JSON body untouched and wins over the typed arguments, so the bulky fields
    go there; a field the signature requires is given an empty placeholder.
    """
    out = dict(kw)
    extra = dict(out.pop("extra_body", None) or {})
    for name in fields:
        if name in out:
            extra[name] = out.pop(name)
            if name in required:
                out[name] = []
    if extra:
        out["extra_body"] = extra
    return out


def as_body(kw: dict) -> dict:
    """create() arguments as the JSON body the SDK sends: extra_body merged in, over the rest."""
    body = {k: v for k, v in kw.items() if k != "extra_body"}
    body.update(kw.get("extra_body") or {})
    return body


def as_url(base_url: str, path: str) -> str:
    """The endpoint a base URL and path make, without credentials or a query to show."""
    parts = urlsplit(base_url.rstrip("/") + path)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def relay(client: Any, open_response: Callable[[], ContextManager], *, asm: Any, errors: Any, control: Any,
          sse_events: Callable[[Iterator[str]], Iterator[dict]],
          whole_as_events: Callable[[dict], Iterator[dict]],
          failure_of: Callable[[dict], Any], stop_at_complete: bool) -> Iterator[StreamEvent]:
    mend = WellFormed()
    try:
        try:
            with open_response() as response:
                ctype = response.headers.get("content-type", "")
                if "text/html" in ctype:
                    raise errors.html()
                if "application/json" in ctype:
                    events = whole_as_events(json.loads(response.read()))
                else:
                    events = sse_events(response.iter_lines())
                for event in events:
                    if control.closed:
                        return
                    failure = failure_of(event)
                    if failure is not None:
                        raise errors.in_stream(failure)
                    for out in asm.feed(event):
                        out = mend.event(out)
                        if out is not None:
                            errors.started = True
                            yield out
                    if stop_at_complete and asm.complete:
                        break  # the closing event came; do not wait for the connection to end
        except ProviderError as exc:
            raise readable(exc)
        except Exception as exc:  # noqa: BLE001 - mapped or re-raised below
            if control.closed:
                return
            mapped = errors.map(exc)
            if mapped is None:
                raise
            raise readable(mapped) from exc
        if control.closed:
            return
        if not asm.complete:
            raise errors.dropped()
        for out in asm.finish():
            if isinstance(out, (Usage, StepEnd)):
                yield from mend.ends()  # before the step's end: a half still held was lone
            out = mend.event(out)
            if out is not None:
                yield out
    finally:
        client.close()


def readable(error: ProviderError) -> ProviderError:
    """The error, its sentence (which may quote the provider) made well-formed."""
    message = well_formed(error.message)
    if message is not error.message:
        error.message = message
        error.args = (message,)
    return error


class WellFormed:
    """Stream events with text UTF-8 can carry: split surrogate pairs joined, lone halves U+FFFD."""

    def __init__(self) -> None:
        self.pairs = SplitPairs()

    def event(self, ev: StreamEvent) -> StreamEvent | None:
        """`ev` made well-formed; None when all it carried is held back for the next piece."""
        if isinstance(ev, (TextDelta, ReasoningDelta)):
            text = self.pairs.feed(ev.type, ev.text)
            return ev if text is ev.text else (type(ev)(text) if text else None)
        if isinstance(ev, ToolCallDelta):
            text = self.pairs.feed(ev.index, ev.arguments)
            return ev if text is ev.arguments else (ToolCallDelta(ev.index, text) if text else None)
        if isinstance(ev, ToolCallStart):
            return ToolCallStart(ev.index, well_formed(ev.id), well_formed(ev.name))
        if isinstance(ev, ReasoningDetail):
            return ReasoningDetail(well_formed_value(ev.detail))
        if isinstance(ev, StepEnd) and isinstance(ev.finish_reason, str):
            return StepEnd(well_formed(ev.finish_reason))
        return ev

    def ends(self) -> list[StreamEvent]:
        """A U+FFFD for each half still held back: nothing came to complete it."""
        out: list[StreamEvent] = []
        for channel in self.pairs.held():
            if channel == "text":
                out.append(TextDelta(REPLACEMENT))
            elif channel == "reasoning":
                out.append(ReasoningDelta(REPLACEMENT))
            else:
                out.append(ToolCallDelta(channel, REPLACEMENT))
        return out
