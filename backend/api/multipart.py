"""Reading a multipart/form-data upload: its one file part streamed to disk, the rest bounded.

werkzeug's decoder splits the stream into parts; the file part's bytes go
straight into a blob (a temporary file that hashes and counts what it is
given, backend/store/files.py) as they arrive, so a file is never held in
memory and is stopped the moment it passes its limit. Only what is not a file
stays in memory, and that is bounded: the small text fields (MAX_FIELD_BYTES
together) and the bytes the decoder holds between parts (part headers, a
boundary cut across two reads: MAX_PENDING_BYTES).

werkzeug's own FormDataParser is not used because its `max_form_memory_size`
is checked against the decoder's whole buffer, file parts included: a binary
file whose bytes hold a line break near the end of a read leaves that tail
buffered, and the next read then passes the limit (uploads of a few hundred KB
failed with 413).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.sansio.multipart import Data, Epilogue, Field, File, MultipartDecoder, NeedData

MAX_PARTS = 16
MAX_FIELD_BYTES = 64 * 1024  # every non-file field together; none is needed today
MAX_PENDING_BYTES = 64 * 1024  # what the decoder may hold once a read is consumed
READ_BYTES = 64 * 1024


class Malformed(ValueError):
    """The body is not multipart/form-data Numi can read; the sentence says why."""


class SecondFile(Exception):
    """More than one file part under the wanted name."""


@dataclass
class Upload:
    blob: object  # the caller's blob: has write(bytes); None when no file part had the name
    filename: str | None = None
    fields: dict[str, str] = field(default_factory=dict)


def receive(stream, boundary: str | None, name: str, open_blob: Callable[[], object]) -> Upload:
    """Read the whole body from `stream`; the file part called `name` goes into `open_blob()`.

    Other file parts are read and dropped. Raises Malformed for a body that is not
    multipart, has too many parts or too much non-file data; SecondFile for a second
    file called `name`; whatever the blob's write raises (its size limit) as it is.
    """
    try:
        decoder = MultipartDecoder((boundary or "").encode("ascii"), max_parts=MAX_PARTS)
    except UnicodeEncodeError:
        boundary = None
    if not boundary:
        raise Malformed("The multipart body has no usable boundary.")
    upload = Upload(blob=None)
    reader = _PartReader(upload, name, open_blob)
    while True:
        # A body past the request's length limit raises here, for the caller to answer 413.
        chunk = stream.read(READ_BYTES)
        try:
            decoder.receive_data(chunk or None)
            if reader.drain(decoder):
                return upload
        except RequestEntityTooLarge:  # the decoder's part count
            raise Malformed(f"The body has more than {MAX_PARTS} parts; send one file.") from None
        except ValueError as exc:
            if isinstance(exc, Malformed):
                raise
            raise Malformed(f"The multipart body is damaged ({exc}).") from None
        if not chunk:
            raise Malformed("The multipart body ended before its closing boundary.")
        if len(decoder.buffer) > MAX_PENDING_BYTES:
            raise Malformed(f"A part's headers, or the text around the parts, pass "
                            f"{MAX_PENDING_BYTES // 1024} KB.")


class _PartReader:
    """Routes the decoder's events: the wanted file to its blob, fields to memory (bounded)."""

    def __init__(self, upload: Upload, name: str, open_blob):
        self.upload, self.name, self.open_blob = upload, name, open_blob
        self.sink = None
        self.field_name: str | None = None
        self.field_bytes = bytearray()
        self.field_total = 0

    def drain(self, decoder: MultipartDecoder) -> bool:
        """Handle every event the decoder has; True once the closing boundary was read."""
        while True:
            event = decoder.next_event()
            if isinstance(event, NeedData):
                return False
            if isinstance(event, Epilogue):
                return True
            if isinstance(event, File):
                self.field_name = None
                self.sink = self._file_sink(event)
            elif isinstance(event, Field):
                self.field_name, self.sink = event.name, self._field_write
                self.field_bytes = bytearray()
            elif isinstance(event, Data):
                if self.sink is not None:
                    self.sink(event.data)
                if not event.more_data and self.field_name is not None:
                    self.upload.fields.setdefault(self.field_name, self.field_bytes.decode("utf-8", "replace"))

    def _file_sink(self, event: File):
        if event.name != self.name:
            return None  # another file: read past it, keep nothing
        if self.upload.blob is not None:
            raise SecondFile(self.name)
        self.upload.blob = self.open_blob()
        self.upload.filename = event.filename
        return self.upload.blob.write

    def _field_write(self, data: bytes) -> None:
        self.field_total += len(data)
        if self.field_total > MAX_FIELD_BYTES:
            raise Malformed(f"The form's text fields hold more than {MAX_FIELD_BYTES // 1024} KB.")
        self.field_bytes += data
