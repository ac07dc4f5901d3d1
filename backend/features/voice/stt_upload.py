"""The recording of `POST /api/audio/transcriptions`: its multipart part `file`, read into a temporary file.

The body streams through werkzeug's multipart decoder; the file's bytes go to an anonymous temporary
file (gone when closed, even after a crash) and the reading stops the moment they pass the limit, so
a recording is never held in memory whole and an oversized one costs at most the limit on disk. What
is not the file (part headers, other fields) is bounded by what the decoder may hold between reads.
A feature does not import the API layer, so this is a small reader of its own rather than
backend/api/multipart.py.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from typing import IO

from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.sansio.multipart import Data, Epilogue, File, MultipartDecoder, NeedData

READ_BYTES = 64 * 1024
MAX_PARTS = 8
MAX_PENDING_BYTES = 64 * 1024  # what the decoder may hold once a read is consumed (headers, fields)
SLACK = 2 * MAX_PENDING_BYTES  # room for the multipart framing around the file, in a Content-Length


class TooLarge(Exception):
    """The file passed the byte limit."""


class Malformed(ValueError):
    """Not a multipart body Numi can read, or no file part `file`; the message says why."""


@dataclass
class Recording:
    file: IO[bytes]  # positioned at its start; the caller closes it
    filename: str
    size: int


def receive(stream, boundary: str | None, limit: int) -> Recording:
    """The part `file` of the multipart body `stream`; TooLarge past `limit` bytes, Malformed otherwise."""
    if not boundary:
        raise Malformed("The upload has no multipart boundary.")
    try:
        decoder = MultipartDecoder(boundary.encode("ascii"), max_parts=MAX_PARTS)
    except UnicodeEncodeError:
        raise Malformed("The upload's multipart boundary is not ASCII.") from None
    out: Recording | None = None
    sink: IO[bytes] | None = None
    try:
        while True:
            chunk = stream.read(READ_BYTES)  # past the request's length cap werkzeug raises RequestEntityTooLarge
            try:
                decoder.receive_data(chunk or None)
                done = False
                while not done:
                    event = decoder.next_event()
                    if isinstance(event, NeedData):
                        break
                    if isinstance(event, Epilogue):
                        done = True
                    elif isinstance(event, File) and event.name == "file":
                        if out is not None:
                            raise Malformed("Send one recording per request.")
                        sink = tempfile.TemporaryFile(prefix="numi-audio-")
                        out = Recording(file=sink, filename=event.filename or "", size=0)
                    elif not isinstance(event, Data):
                        sink = None  # another part: read past it, keep nothing
                    elif sink is not None and out is not None:
                        out.size += len(event.data)
                        if out.size > limit:
                            raise TooLarge()
                        sink.write(event.data)
            except RequestEntityTooLarge:  # the decoder's part count
                raise Malformed(f"The upload has more than {MAX_PARTS} parts; send one file.") from None
            except ValueError as exc:
                if isinstance(exc, Malformed):
                    raise
                raise Malformed(f"The multipart body is damaged ({exc}).") from None
            if done:
                break
            if not chunk:
                raise Malformed("The upload ended before its closing boundary.")
            if len(decoder.buffer) > MAX_PENDING_BYTES:
                raise Malformed(f"The upload's part headers pass {MAX_PENDING_BYTES // 1024} KB.")
    except BaseException:
        if out is not None:
            out.file.close()
        raise
    if out is None:
        raise Malformed('Attach the recording in a multipart field named "file".')
    out.file.seek(0)
    return out
