"""Reading files for knowledge bases: real PDF, DOCX, EPUB, HTML, Markdown, text and code files through the real
libraries, their titles, chunks and exact locators, the files that cannot be read, and the parse pool's limits."""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from backend.features.knowledge.chunks import (
    MAX_CHARS,
    MIN_CHARS,
    OVERLAP_CHARS,
    PROSE,
    chunk_lines,
    chunk_sections,
    spans,
)
from backend.features.knowledge.parse_pool import WORKER_NAME, ParsePool, PoolClosed
from backend.features.knowledge.readers import TEST_READERS_ENV, read_file
from backend.features.knowledge.types import Unreadable
from tests import knowledge_files as K

UNSUPPORTED = "is not a format Numi can read (PDF, Word, EPUB, HTML, Markdown, text or code)."


def sections(parsed) -> list[tuple[str, str]]:
    return [(c.locator["heading"], c.text) for c in parsed.chunks]


def unreadable(path, name=None) -> str:
    with pytest.raises(Unreadable) as caught:
        read_file(str(path), name)
    return caught.value.reason


def assert_exact_lines(chunks, text: str) -> None:
    """Each chunk lies within the lines its locator names, starting on the first and ending on the last."""
    lines = text.split("\n")
    for chunk in chunks:
        first, last = chunk.locator["lines"]
        assert 1 <= first <= last <= len(lines)
        covered = "\n".join(lines[first - 1:last])
        at = covered.find(chunk.text)
        assert at >= 0, chunk.locator
        assert at <= len(lines[first - 1]), "the chunk starts after its first line"
        assert at + len(chunk.text) > len(covered) - len(lines[last - 1]), "the chunk ends before its last line"


# --- PDF -------------------------------------------------------------------------------------------------------------

def test_pdf_chunks_carry_page_labels_and_indexes_and_never_cross_a_page(tmp_path):
    import pypdfium2

    path = K.write_pdf(tmp_path / "survey.pdf")
    pages = K.pdf_pages()
    pdf = pypdfium2.PdfDocument(str(path))  # the fixture really has a text layer PDFium reads
    assert "Page marker I0" in pdf[0].get_textpage().get_text_range()
    pdf.close()

    parsed = read_file(str(path))

    assert parsed.title == K.PDF_TITLE
    assert [c.locator for c in parsed.chunks if c.locator["page_index"] != 3] == [
        {"page": "i", "page_index": 0}, {"page": "ii", "page_index": 1}, {"page": "1", "page_index": 2},
        {"page": "3", "page_index": 4}]
    long_page = [c for c in parsed.chunks if c.locator["page_index"] == 3]
    assert len(long_page) >= 2 and all(c.locator == {"page": "2", "page_index": 3} for c in long_page)
    for chunk in parsed.chunks:
        index = chunk.locator["page_index"]
        page_words = " ".join(" ".join(pages[index]).split())
        assert " ".join(chunk.text.split()) in page_words  # its text is all from its own page
    assert [c.text.split("\n")[0] for c in parsed.chunks if c.locator["page_index"] != 3] == [
        "Page marker I0 begins here.", "Page marker II1 begins here.", "Page marker 12 begins here.",
        "Page marker 34 begins here."]


def test_pdf_without_labels_or_title_uses_page_numbers_and_the_file_name(tmp_path):
    path = K.write_pdf(tmp_path / "plain.pdf", pages=[["First page."], ["Second page."]], labels=False, title=None)

    parsed = read_file(str(path))

    assert parsed.title == "plain.pdf"
    assert [(c.locator, c.text) for c in parsed.chunks] == [
        ({"page": "1", "page_index": 0}, "First page."), ({"page": "2", "page_index": 1}, "Second page.")]


def test_an_encrypted_pdf_is_unreadable_as_password_protected(tmp_path):
    path = K.write_pdf(tmp_path / "locked.pdf", password="s3cret")

    reason = unreadable(path)

    assert "“locked.pdf” is password-protected" in reason and reason.endswith(".")


# --- Word, EPUB, HTML, Markdown -------------------------------------------------------------------------------------

def test_docx_headings_make_the_path_and_the_core_title_is_the_title(tmp_path):
    parsed = read_file(str(K.write_docx(tmp_path / "guide.docx")))

    assert parsed.title == K.DOCX_TITLE
    assert sections(parsed) == [
        ("", "A foreword that comes before any heading."),
        ("Moths of the North", "Moths of the North\n\nAn overview of the northern moths."),
        ("Moths of the North > Night Flyers", "Night Flyers\n\nNight flyers come to the lamp after dusk."),
        ("Moths of the North > Night Flyers > Lures",
         "Lures\n\nSugar and wine make the best lure.\n\nSpecies | Count\n\nTiger moth | 12"),
        ("Moths of the North > Day Flyers", "Day Flyers\n\nDay flyers are often mistaken for butterflies."),
    ]


def test_epub_reads_its_spine_in_order_with_heading_paths(tmp_path):
    parsed = read_file(str(K.write_epub(tmp_path / "lamp.epub")))

    assert parsed.title == K.EPUB_TITLE
    assert sections(parsed) == [
        ("", "An epigraph before the first heading."),
        ("Chapter One", "Chapter One\n\nThe lamp was lit at dusk."),
        ("Chapter One > A Storm", "A Storm\n\nRain drove the moths under the eaves."),
        ("Chapter Two", "Chapter Two\n\nMorning came and the trap was full."),
    ]


def test_an_epub_with_drm_is_unreadable(tmp_path):
    reason = unreadable(K.write_epub(tmp_path / "locked.epub", drm=True))

    assert reason == "“locked.epub” is protected by DRM, so Numi cannot read it."


def test_html_drops_scripts_styles_and_navigation_and_headings_make_the_path(tmp_path):
    path = tmp_path / "lamps.html"
    path.write_bytes(K.HTML.encode())

    parsed = read_file(str(path))

    assert parsed.title == K.HTML_TITLE
    assert sections(parsed) == [
        ("", "Before any heading, café."),
        ("Lamps", "Lamps\n\nMercury vapour lamps draw the most moths."),
        ("Lamps > Actinic tubes", "Actinic tubes\n\nActinic tubes are lighter to carry."),
        ("Lamps > Actinic tubes > Batteries", "Batteries\n\nCell Hours\n\nline one\n  line two"),
        ("Lamps > Sheets", "Sheets\n\nA white sheet\ncatches the light."),
    ]


def test_html_in_a_declared_legacy_encoding_is_decoded(tmp_path):
    path = tmp_path / "old.htm"
    path.write_bytes('<html><head><meta charset="windows-1252"><title>Caf\xe9</title></head>'
                     '<body><p>Cr\xe8me br\xfbl\xe9e</p></body></html>'.encode("cp1252"))

    parsed = read_file(str(path))

    assert (parsed.title, sections(parsed)) == ("Café", [("", "Crème brûlée")])


def test_markdown_headings_outside_fenced_code_make_the_path(tmp_path):
    path = tmp_path / "notes.md"
    path.write_bytes(K.MARKDOWN.encode())

    parsed = read_file(str(path))

    assert parsed.title == "Moth Notes"
    assert [heading for heading, _ in sections(parsed)] == [
        "", "Moth Notes", "Moth Notes > Trapping", "Moth Notes > Trapping > Counting", "Moth Notes > Releasing"]
    trapping = sections(parsed)[2][1]
    assert trapping == '## Trapping\n\nSet the trap at dusk.\n\n```python\n# not a heading\nprint("trap")\n```'
    assert "# indented code, not a heading either" in sections(parsed)[3][1]


def test_an_uploaded_file_takes_its_format_and_title_from_its_original_name(tmp_path):
    upload = tmp_path / "upload-0001"
    upload.write_bytes(b"Just a note.\nSecond line.\n")

    assert read_file(str(upload), "todo.txt").title == "todo.txt"
    assert [c.locator for c in read_file(str(upload), "todo.txt").chunks] == [{"lines": [1, 2]}]
    upload.write_bytes(b"Some text.\n\n## Only a second-level heading\n\nMore.\n")
    parsed = read_file(str(upload), "notes.markdown")
    assert parsed.title == "notes.markdown"  # no "# " heading, so the name
    assert [heading for heading, _ in sections(parsed)] == ["", "Only a second-level heading"]


# --- Plain text and code ---------------------------------------------------------------------------------------------

def test_text_chunks_carry_the_exact_lines_they_cover(tmp_path):
    text = K.long_text()
    path = tmp_path / "essay.txt"
    path.write_bytes(text.encode())

    parsed = read_file(str(path))

    assert parsed.title == "essay.txt"
    assert len(parsed.chunks) >= 8
    assert_exact_lines(parsed.chunks, text)
    assert parsed.chunks[0].locator["lines"][0] == 1
    assert parsed.chunks[-1].locator["lines"][1] == len(text.rstrip("\n").split("\n"))


def test_code_chunks_are_whole_lines_with_their_indentation(tmp_path):
    text = K.code_text()
    path = tmp_path / "areas.py"
    path.write_bytes(text.encode())

    parsed = read_file(str(path))

    lines = text.split("\n")
    assert len(parsed.chunks) >= 5
    for chunk in parsed.chunks:
        first, last = chunk.locator["lines"]
        assert chunk.text == "\n".join(lines[first - 1:last])
        assert len(chunk.text) <= MAX_CHARS
    assert sum(c.text.startswith("    def ") for c in parsed.chunks) >= 3


def test_text_that_is_not_utf8_is_read_as_latin1_and_crlf_counts_one_line(tmp_path):
    path = tmp_path / "old.txt"
    path.write_bytes(b"caf\xe9 au lait\r\nsecond line\r\n\r\nfourth line\r\n")

    parsed = read_file(str(path))

    assert [(c.locator, c.text) for c in parsed.chunks] == [
        ({"lines": [1, 4]}, "café au lait\nsecond line\n\nfourth line")]


def test_an_empty_text_file_has_no_chunks(tmp_path):
    path = tmp_path / "empty.log"
    path.write_bytes(b"  \n\n \n")

    assert read_file(str(path)).chunks == []


# --- The chunker -----------------------------------------------------------------------------------------------------

def test_long_text_chunks_are_within_bounds_overlap_and_never_cut_a_word():
    text = K.long_text()

    cut = spans(text, PROSE)

    sizes = [end - start for start, end in cut]
    assert all(MIN_CHARS <= size <= MAX_CHARS for size in sizes[:-1]) and 0 < sizes[-1] <= MAX_CHARS
    for (start, end), (next_start, _) in zip(cut, cut[1:]):
        overlap = end - next_start
        assert OVERLAP_CHARS // 2 - 50 <= overlap <= OVERLAP_CHARS * 3 // 2, overlap
    for start, end in cut:
        assert start == 0 or text[start - 1].isspace()
        assert end == len(text) or text[end].isspace()
    assert cut[0][0] == 0 and cut[-1][1] == len(text.rstrip())


def test_a_chunk_ends_at_a_paragraph_break_else_a_sentence_end():
    para = " ".join(["Moths fly to the lamp at night."] * 110)  # 3 519 characters
    by_paragraph = chunk_sections([(para + "\n\n" + para, {"heading": "A"})])
    assert by_paragraph[0].text == para

    sentences = " ".join(f"Sentence number {n} is here." for n in range(400))
    by_sentence = chunk_sections([(sentences, {"heading": ""})])
    assert len(by_sentence) > 1 and all(c.text.endswith(".") and c.text[0].isupper() for c in by_sentence[:-1])


def test_headings_and_pages_start_new_chunks_and_empty_sections_make_none():
    chunks = chunk_sections([("Short A.", {"heading": "A"}), ("  \n\n ", {"heading": "A > B"}),
                             ("Short C.", {"heading": "A > C"}), ("", {"page": "1", "page_index": 0})])

    assert [(c.locator, c.text) for c in chunks] == [({"heading": "A"}, "Short A."),
                                                     ({"heading": "A > C"}, "Short C.")]
    pages = [(" ".join([f"p{n}word"] * 1500), {"page": str(n + 1), "page_index": n}) for n in range(2)]
    for chunk in chunk_sections(pages):
        assert chunk.text.split()[0] == f"p{chunk.locator['page_index']}word"
        assert set(chunk.text.split()) == {chunk.text.split()[0]}


def test_a_word_longer_than_a_chunk_is_the_only_thing_cut_mid_word():
    word = "x" * 10_000

    chunks = chunk_sections([(f"Before. {word} after.", {"heading": ""})])

    assert [c.text for c in chunks][0] == "Before."
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert "".join(c.text for c in chunks[1:-1]) + chunks[-1].text.split(" ")[0] == word


def test_chunking_is_fast_on_a_large_file():
    text = K.long_text(paragraphs=3_000)
    assert len(text) > 1_000_000

    started = time.perf_counter()
    chunks = chunk_lines(text)
    elapsed = time.perf_counter() - started

    assert len(chunks) > 300 and elapsed < 5  # linear: about 0.05 s; a quadratic cut would take minutes


# --- Files that cannot be read ---------------------------------------------------------------------------------------

def test_corrupt_files_are_unreadable_as_their_format(tmp_path):
    for name, kind in [("broken.pdf", "a PDF"), ("broken.docx", "a Word document"), ("broken.epub", "an EPUB book")]:
        (tmp_path / name).write_bytes(b"%PDF-1.4\nthis is not really a file of its kind\n" * 20)
        assert unreadable(tmp_path / name) == f"“{name}” could not be read as {kind}; the file may be damaged."


def test_unsupported_formats_are_named_in_the_reason(tmp_path):
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "README").write_bytes(b"no suffix")

    assert unreadable(tmp_path / "photo.png") == f"“photo.png” {UNSUPPORTED}"
    assert unreadable(tmp_path / "README") == f"“README” {UNSUPPORTED}"
    assert unreadable(tmp_path / "README", "report.doc") == f"“report.doc” {UNSUPPORTED}"


def test_binary_data_in_a_text_file_is_refused(tmp_path):
    (tmp_path / "data.csv").write_bytes(b"a,b\n" + b"\x00\x01\x02" * 100)
    reason = unreadable(tmp_path / "data.csv")

    assert reason == "“data.csv” is not a text file (it holds binary data), so Numi cannot read it."


def test_a_missing_file_is_unreadable(tmp_path):
    assert unreadable(tmp_path / "gone.md") == "“gone.md” could not be opened (no such file or directory)."
    assert unreadable(tmp_path / "gone.pdf").startswith("“gone.pdf” could not be opened")


# --- The parse pool --------------------------------------------------------------------------------------------------

def pool_workers() -> set[int]:
    return {p.pid for p in multiprocessing.active_children() if p.name == WORKER_NAME}


def gone(pid: int) -> bool:
    """The process has exited and been reaped (a zombie would still take signal 0)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + 20
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)


@pytest.fixture
def files(tmp_path):
    """A few real files of different formats, and what reading each in this process gives."""
    paths = [K.write_pdf(tmp_path / "survey.pdf"), K.write_docx(tmp_path / "guide.docx"),
             K.write_epub(tmp_path / "lamp.epub"), tmp_path / "lamps.html", tmp_path / "notes.md",
             tmp_path / "areas.py"]
    paths[3].write_bytes(K.HTML.encode())
    paths[4].write_bytes(K.MARKDOWN.encode())
    paths[5].write_bytes(K.code_text().encode())
    return {str(p): read_file(str(p)) for p in paths}


@pytest.fixture
def misbehaving(monkeypatch, tmp_path):
    """Files whose reading hangs or balloons, with the test readers switched on for the pool's workers."""
    monkeypatch.setenv(TEST_READERS_ENV, "1")
    (tmp_path / "stuck.hang").write_bytes(b"")
    (tmp_path / "huge.balloon").write_bytes(b"")
    return tmp_path / "stuck.hang", tmp_path / "huge.balloon"


def test_the_pool_reads_files_from_many_threads_with_long_lived_workers(files):
    jobs = list(files) * 4
    with ParsePool(workers=2) as pool:
        with ThreadPoolExecutor(8) as threads:
            results = list(threads.map(pool.read, jobs))
        workers = pool_workers()
        for path in jobs:
            pool.read(path)
        assert pool_workers() == workers  # no new process per file

    assert 1 <= len(workers) <= 2
    for path, parsed in zip(jobs, results):
        assert parsed == files[path]


def test_the_pool_reads_other_files_while_one_hangs(files, misbehaving):
    stuck, _ = misbehaving
    pool = ParsePool(workers=2, timeout_s=60)
    with ThreadPoolExecutor(1) as threads:
        hanging = threads.submit(pool.read, str(stuck))
        wait_for(Path(f"{stuck}.started"))
        for path, parsed in files.items():
            assert pool.read(path) == parsed
        assert not hanging.done()
        pool.close()
        with pytest.raises(PoolClosed):
            hanging.result()


def test_a_file_that_hangs_is_cut_at_the_limit_and_the_next_file_reads(files, misbehaving):
    stuck, _ = misbehaving
    path, expected = next(iter(files.items()))
    with ParsePool(workers=1, timeout_s=1) as pool:
        assert pool.read(path) == expected
        (first,) = pool_workers()
        started = time.monotonic()
        with pytest.raises(Unreadable) as caught:
            pool.read(str(stuck))
        assert time.monotonic() - started >= 1
        assert caught.value.reason == "Reading it took longer than 1 s; it was skipped."
        assert gone(first)
        assert pool.read(path) == expected
        assert pool_workers() and first not in pool_workers()


@pytest.mark.skipif(sys.platform == "darwin" or sys.platform == "win32", reason="no enforced address-space limit")
def test_a_file_that_needs_too_much_memory_is_reported_and_the_pool_keeps_working(files, misbehaving):
    _, huge = misbehaving
    path, expected = next(iter(files.items()))
    with ParsePool(workers=1, memory_mb=256) as pool:
        with pytest.raises(Unreadable) as caught:
            pool.read(str(huge))
        assert caught.value.reason == "Reading it needed more memory than the 256 MB allowed; it was skipped."
        assert pool.read(path) == expected


def test_a_worker_that_dies_is_reported_and_replaced(files, misbehaving):
    stuck, _ = misbehaving
    path, expected = next(iter(files.items()))
    with ParsePool(workers=1, timeout_s=60) as pool, ThreadPoolExecutor(1) as threads:
        hanging = threads.submit(pool.read, str(stuck))
        wait_for(Path(f"{stuck}.started"))
        (worker,) = pool_workers()
        os.kill(worker, signal.SIGKILL)
        with pytest.raises(Unreadable) as caught:
            hanging.result()
        assert caught.value.reason.startswith("The reader crashed while reading it")
        assert gone(worker)
        assert pool.read(path) == expected


def test_a_worker_killed_while_idle_is_replaced_without_blaming_the_next_file(files):
    path, expected = next(iter(files.items()))
    with ParsePool(workers=1) as pool:
        assert pool.read(path) == expected
        (worker,) = pool_workers()
        os.kill(worker, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while worker in pool_workers():  # active_children() reaps it once it has exited
            assert time.monotonic() < deadline
            time.sleep(0.01)

        assert pool.read(path) == expected


def test_a_reason_the_reader_gives_comes_back_unchanged(tmp_path):
    locked = K.write_pdf(tmp_path / "locked.pdf", password="s3cret")
    (tmp_path / "photo.png").write_bytes(b"\x89PNG")
    with ParsePool(workers=1) as pool:
        for path in (locked, tmp_path / "photo.png"):
            with pytest.raises(Unreadable) as caught:
                pool.read(str(path))
            assert caught.value.reason == unreadable(path)


def test_closing_the_pool_leaves_no_child_process(files, misbehaving):
    stuck, _ = misbehaving
    pool = ParsePool(workers=2, timeout_s=60)
    with ThreadPoolExecutor(1) as threads:
        hanging = threads.submit(pool.read, str(stuck))
        wait_for(Path(f"{stuck}.started"))
        pool.read(next(iter(files)))
        workers = pool_workers()
        assert len(workers) == 2

        pool.close()

        with pytest.raises(PoolClosed):
            hanging.result()
    assert all(gone(pid) for pid in workers)
    assert not pool_workers()
    with pytest.raises(PoolClosed):
        pool.read(next(iter(files)))
