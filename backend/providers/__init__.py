"""Talking to model providers: one entry point whatever the wire API.

    stream = open_stream(request)      # no I/O yet
    for event in stream:               # the request starts here
        ...                            # TextDelta, ReasoningDelta, ToolCallStart, ...
    stream.close()                     # from any thread, any time

Event order from every adapter: deltas as the provider sent them, then exactly
one Usage (estimated when the provider sent none), then exactly one StepEnd,
last. Failures raise backend.core.errors.ProviderError subclasses from the
iteration, never from open_stream.

close() aborts promptly even while a read is blocked (a hung provider): it
shuts down the stream's sockets, which wakes the blocked read. After close()
the iteration ENDS quietly (StopIteration, no further events, no error and no
StepEnd), so the caller, which knows it asked to stop, decides what that means.
"""
from __future__ import annotations

import importlib
import socket
import threading
from typing import Callable, Iterator

from backend.core.cancel import CancelToken
from backend.core.errors import ProviderError
from backend.core.types import ModelRequest, StreamEvent, TextDelta

__all__ = ["ModelStream", "StreamControl", "open_stream", "complete_text", "wire_request", "count_tokens"]

CONNECT_TIMEOUT = 5.0  # seconds; a local server either answers at once or is not there
# complete_text's answers: a title is a line, a summary is cut at 24 000 characters
# (backend/features/compaction/), a research plan is a few queries.
COMPLETE_TEXT_CHARS = 64_000


class StreamControl:
    """What an adapter needs to make its stream abortable from another thread.

    Adapters build their HTTP client with `http_client()`: every socket it
    opens is recorded, so `abort()` can shut them down. Shutting down (not
    closing) a socket is what wakes a recv() blocked in another thread on
    every platform; closing the fd alone does not on Linux.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def abort(self) -> None:
        with self._lock:
            self._closed = True
            socks, self._sockets = self._sockets, []
        for s in socks:
            _shutdown(s)

    def _trace(self, event: str, info: dict) -> None:
        # httpcore2's trace extension reports each new connection (and the TLS
        # socket that replaces it), which is where the blocking reads happen.
        if not (event.endswith("connect_tcp.complete") or event.endswith("start_tls.complete")):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is None:
            return
        with self._lock:
            if not self._closed:
                self._sockets.append(sock)
                return
        _shutdown(sock)  # close() came while we were connecting

    def http_client(self, timeout: float):
        """An httpx2.Client whose connections abort() can cut. One per stream,
        so a pooled connection from elsewhere is never shut down by mistake."""
        import httpx2

        def hook(request: "httpx2.Request") -> None:
            request.extensions["trace"] = self._trace

        return httpx2.Client(timeout=httpx2.Timeout(timeout, connect=CONNECT_TIMEOUT),
                             verify=_ssl_context(), event_hooks={"request": [hook]},
                             follow_redirects=True)


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed or never connected


_ssl_ctx = None
_ssl_lock = threading.Lock()


def _ssl_context():
    # Loading the CA bundle costs milliseconds; every stream has its own
    # client, so share one context.
    global _ssl_ctx
    with _ssl_lock:
        if _ssl_ctx is None:
            import httpx2
            _ssl_ctx = httpx2.create_ssl_context()
        return _ssl_ctx


class ModelStream:
    """An iterator of StreamEvent that close() can stop from another thread."""

    def __init__(self, run: Callable[[StreamControl], Iterator[StreamEvent]]):
        self._control = StreamControl()
        self._run = run
        self._it: Iterator[StreamEvent] | None = None

    def __iter__(self) -> ModelStream:
        return self

    def __next__(self) -> StreamEvent:
        if self._control.closed:
            self._finish()
            raise StopIteration
        if self._it is None:
            self._it = self._run(self._control)
        try:
            return next(self._it)
        except StopIteration:
            raise
        except Exception:
            if self._control.closed:
                self._finish()
                raise StopIteration from None  # the failure is the abort itself
            raise

    def _finish(self) -> None:
        # Runs in the iterating thread, where closing the generator is safe;
        # its finally releases the HTTP client.
        it, self._it = self._it, None
        if it is not None and hasattr(it, "close"):
            it.close()

    @property
    def closed(self) -> bool:
        return self._control.closed

    def close(self) -> None:
        """Abort the request; safe from any thread, idempotent."""
        self._control.abort()

    def __enter__(self) -> ModelStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_ADAPTERS = {  # wire API -> module with stream(request, control)
    "chat_completions": "chat_completions",
    "responses": "responses",
    "anthropic_messages": "anthropic_messages",
}


def open_stream(request: ModelRequest) -> ModelStream:
    """A stream of events for one model step. Does no I/O until iterated."""
    try:
        adapter = _adapter(request)
    except ProviderError as exc:
        error = exc  # `exc` is unbound when the except block ends; the stream raises it later
        return ModelStream(lambda control: _raise(error))
    return ModelStream(lambda control: adapter.stream(request, control))


def _adapter(request: ModelRequest):
    name = _ADAPTERS.get(request.wire_api)
    if name is None:
        raise ProviderError(f"Unknown wire API {request.wire_api!r} for {request.provider.name}. "
                            f"Use chat_completions, responses or anthropic_messages.")
    return importlib.import_module(f"{__name__}.{name}")


def wire_request(request: ModelRequest) -> tuple[str, dict]:
    """The URL and JSON body the request is sent as, built by the adapter that sends it."""
    return _adapter(request).wire_request(request)


def count_tokens(request: ModelRequest, timeout: float) -> int | None:
    """The provider's own count of the request's input tokens; None where it offers none."""
    adapter = _adapter(request)
    counter = getattr(adapter, "count_tokens", None)
    if counter is None or request.provider.kind != "anthropic":
        return None
    return counter(request, timeout)


def _raise(error: ProviderError) -> Iterator[StreamEvent]:
    raise error
    yield  # a generator, so the error comes from the iteration like any other


def complete_text(request: ModelRequest, cancel: CancelToken | None = None,
                  max_chars: int = COMPLETE_TEXT_CHARS, stream_fn=None) -> str:
    """The text answer of a short request (a title, a summary, a research plan), at most `max_chars`.

    Reading stops at `max_chars` and the stream is closed: a model that runs on cannot
    make the process hold its whole answer. `cancel` closes the stream at once; the
    text so far is returned, and the caller, which knows it stopped, decides what it is worth.
    `stream_fn` opens the stream (default `open_stream`; a turn passes its services' one).
    """
    with (stream_fn or open_stream)(request) as stream:
        unregister = cancel.on_cancel(stream.close) if cancel is not None else (lambda: None)
        parts: list[str] = []
        size = 0
        try:
            for event in stream:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                    size += len(event.text)
                    if size >= max_chars:
                        break
        finally:
            unregister()
            stream.close()
            for _ in stream:  # a closed stream ends at once; this releases its HTTP client here
                pass
    return "".join(parts)[:max_chars]
