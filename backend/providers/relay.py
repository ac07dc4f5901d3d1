"""The part of every adapter's stream that is the same whatever the wire API.

An adapter builds its SDK client and request; `relay` opens the response,
decodes it (SSE, or one JSON answer from a server that ignored stream=True),
feeds the events to the adapter's assembler, and turns every failure into a
typed ProviderError with a sentence a person can act on.
"""
from __future__ import annotations

import json
from typing import Any, Callable, ContextManager, Iterator

from backend.core.errors import ProviderError
from backend.core.types import StreamEvent


def as_sent(kw: dict, fields: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
    """create() arguments with `fields` (already in wire form) sent exactly as built.

    The SDKs walk every nested value of a request against their typed schema
    before sending; for a 200-message history that was ~30 ms of CPU per step,
    most of a long chat's send-to-request time. extra_body is merged into the
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


def relay(client: Any, open_response: Callable[[], ContextManager], *, asm: Any, errors: Any, control: Any,
          sse_events: Callable[[Iterator[str]], Iterator[dict]],
          whole_as_events: Callable[[dict], Iterator[dict]],
          failure_of: Callable[[dict], Any], stop_at_complete: bool) -> Iterator[StreamEvent]:
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
                        errors.started = True
                        yield out
                    if stop_at_complete and asm.complete:
                        break  # the closing event came; do not wait for the connection to end
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped or re-raised below
            if control.closed:
                return
            mapped = errors.map(exc)
            if mapped is None:
                raise
            raise mapped from exc
        if control.closed:
            return
        if not asm.complete:
            raise errors.dropped()
        yield from asm.finish()
    finally:
        client.close()
