"""Reading a file (PDF, Word, EPUB, HTML, Markdown, text or code) into its title and located chunks."""
from __future__ import annotations

import codecs
import os
import posixpath
import re
import zipfile
from collections.abc import Callable
from urllib.parse import unquote

from backend.features.knowledge.chunks import chunk_lines, chunk_sections
from backend.features.knowledge.types import Parsed, Unreadable

FORMATS = "PDF, Word, EPUB, HTML, Markdown, text or code"
TEXT_SUFFIXES = frozenset({".txt", ".text", ".rst", ".csv", ".log"})
CODE_SUFFIXES = frozenset({
    ".py", ".js", ".ts", ".tsx", ".jsx", ".java", ".c", ".h", ".cpp", ".hpp", ".cs", ".go", ".rs", ".rb", ".php",
    ".swift", ".kt", ".scala", ".sh", ".sql", ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".css", ".scss",
    ".xml", ".lua", ".r", ".m", ".pl", ".dart", ".vue", ".svelte",
})
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})

# The test seam: ParsePool's tests need readers that hang or exhaust memory, which no real file does
# reliably. Only with NUMI_KNOWLEDGE_TEST_READERS=1 (set by those tests alone) do these suffixes exist;
# a hanging read first creates `<path>.started`, so a test knows the read is under way.
TEST_READERS_ENV = "NUMI_KNOWLEDGE_TEST_READERS"
_TEST_SUFFIXES = frozenset({".hang", ".balloon"})

_SNIFF_BYTES = 8192
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_SPACES = re.compile(r"\s+")


def read_file(path: str, name: str | None = None) -> Parsed:
    """Read the file at `path` (originally called `name`, if given) into its title and chunks, or raise Unreadable."""
    display = name or os.path.basename(path)
    suffix = file_suffix(path, name)
    if suffix in _TEST_SUFFIXES and os.environ.get(TEST_READERS_ENV) == "1":
        _misbehave(path, suffix)
    found = _READERS.get(suffix)
    if found is None:
        raise Unreadable(f"“{display}” is not a format Numi can read ({FORMATS}).")
    reader, kind = found
    try:
        return reader(path, display, suffix)
    except (Unreadable, MemoryError):
        raise
    except OSError as exc:
        reason = (exc.strerror or "no such file").lower()
        raise Unreadable(f"“{display}” could not be opened ({reason}).") from None
    except Exception:
        # The libraries fail on a damaged file in many ways; each means the same to the person.
        raise Unreadable(f"“{display}” could not be read as {kind}; the file may be damaged.") from None


def file_suffix(path: str, name: str | None = None) -> str:
    """The lower-case suffix that decides the format: the original name's, else the path's."""
    for candidate in (name, path):
        if candidate:
            suffix = os.path.splitext(candidate)[1].lower()
            if suffix:
                return suffix
    return ""


def _title(found: str | None, display: str) -> str:
    title = _SPACES.sub(" ", found or "").strip()
    return title or display


# --- Text, code and Markdown -------------------------------------------------------------------------------------

def _decode(data: bytes, display: str) -> str:
    """The text of a file's bytes: UTF-8 (or UTF-16 with a BOM), else latin-1; binary data is refused."""
    if data.startswith(codecs.BOM_UTF8):
        text = data[len(codecs.BOM_UTF8):].decode("utf-8", errors="replace")
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
    elif b"\0" in data[:_SNIFF_BYTES]:
        raise Unreadable(f"“{display}” is not a text file (it holds binary data), so Numi cannot read it.")
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _read_text(path: str, display: str, suffix: str) -> Parsed:
    text = _decode(_read_bytes(path), display)
    return Parsed(display, chunk_lines(text, code=suffix in CODE_SUFFIXES))


# A fence opener/closer or an ATX heading, at most three spaces in (four make indented code).
_MD_LINE = re.compile(r"^ {0,3}(?:(?P<fence>`{3,}|~{3,})(?P<info>.*)"
                      r"|(?P<hashes>#{1,6})(?:[ \t]+(?P<text>.*?))?)[ \t]*$", re.M)
_MD_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")


def _read_markdown(path: str, display: str, suffix: str) -> Parsed:
    text = _decode(_read_bytes(path), display)
    sections: list[tuple[str, dict]] = []
    stack: list[tuple[int, str]] = []
    fence = ""
    cut = 0
    title = None
    for m in _MD_LINE.finditer(text):
        opener = m.group("fence")
        if fence:
            if opener and opener[0] == fence[0] and len(opener) >= len(fence) and not m.group("info").strip():
                fence = ""
            continue
        if opener:
            if not (opener[0] == "`" and "`" in m.group("info")):  # a backtick info string with a backtick is text
                fence = opener
            continue
        level = len(m.group("hashes"))
        heading = _SPACES.sub(" ", _MD_CLOSING_HASHES.sub("", m.group("text") or "")).strip()
        sections.append((text[cut:m.start()], {"heading": _path(stack)}))
        cut = m.start()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        if level == 1 and title is None and heading:
            title = heading
    sections.append((text[cut:], {"heading": _path(stack)}))
    return Parsed(_title(title, display), chunk_sections(sections))


def _path(stack: list[tuple[int, str]]) -> str:
    return " > ".join(heading for _, heading in stack if heading)


# --- HTML and EPUB -----------------------------------------------------------------------------------------------

_DROPPED = frozenset({"script", "style", "nav", "head", "noscript", "template", "svg"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "header", "hr", "li", "main", "ol", "p", "pre", "section", "summary",
    "table", "tbody", "tfoot", "thead", "tr", "ul",
})
_CELLS = frozenset({"td", "th"})
_BREAK = "\x00"  # a paragraph break while text is gathered (control characters are removed from the text first)
_TIDY_BREAKS = re.compile(r"[ \t\n]*\x00[\x00 \t\n]*")


def _local(tag: object) -> str:
    """An element's tag without its namespace, lower-case; "" for comments and processing instructions."""
    return tag.rpartition("}")[2].lower() if isinstance(tag, str) else ""


class _Outline:
    """Text gathered into sections under heading paths, in document order."""

    def __init__(self) -> None:
        self.sections: list[tuple[str, dict]] = []
        self._stack: list[tuple[int, str]] = []
        self._parts: list[str] = []
        self._spaced = True  # the gathered text ends in whitespace, so inline whitespace adds nothing

    def text(self, raw: str | None, pre: bool) -> None:
        if not raw:
            return
        raw = _CONTROL.sub("", raw)
        if not pre:
            raw = _SPACES.sub(" ", raw)
            if self._spaced and raw.startswith(" "):
                raw = raw[1:]
            if not raw:
                return
        self._parts.append(raw)
        self._spaced = raw[-1].isspace()

    def paragraph(self) -> None:
        self._parts.append(_BREAK)
        self._spaced = True

    def heading(self, level: int, text: str) -> None:
        self.flush()
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, text))
        self._parts = [text, _BREAK]

    def flush(self) -> None:
        text = _TIDY_BREAKS.sub("\n\n", "".join(self._parts)).strip()
        if text:
            self.sections.append((text, {"heading": _path(self._stack)}))
        self._parts = []
        self._spaced = True


def _walk(root, outline: _Outline) -> None:
    """Gather the readable text under `root` into `outline`: headings start sections, blocks make paragraphs."""
    from lxml import etree  # type: ignore[import-untyped]

    pre = 0
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, el in walker:
        tag = _local(el.tag)
        skipped = tag in _DROPPED or tag in _HEADINGS or not tag
        if event == "start":
            if skipped:
                walker.skip_subtree()
                if tag in _HEADINGS:
                    text = _SPACES.sub(" ", _CONTROL.sub("", "".join(el.itertext()))).strip()
                    if text:
                        outline.heading(_HEADINGS[tag], text)
                    else:
                        outline.paragraph()
                continue
            if tag in _BLOCKS:
                outline.paragraph()
            elif tag == "br":
                outline.text("\n", pre=True)
            if tag == "pre":
                pre += 1
            outline.text(el.text, pre > 0)
        else:
            if tag == "pre":
                pre -= 1
            if tag in _BLOCKS or tag in _HEADINGS:
                outline.paragraph()
            elif tag in _CELLS:
                outline.text(" ", pre=False)
            outline.text(el.tail, pre > 0)


def _html_tree(data: bytes, xml_first: bool):
    """The element tree of an HTML or XHTML document, or None when it is empty."""
    from lxml import etree, html

    if not data.strip():
        return None
    if xml_first:
        try:
            # No entities or DTDs: a document must not pull local files or the network into the index.
            parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, recover=False)
            return etree.fromstring(data, parser)
        except etree.XMLSyntaxError:
            pass  # XHTML that is not well-formed (or uses HTML's entities): the HTML parser copes
    try:
        data.decode("utf-8")
        parser = html.HTMLParser(encoding="utf-8")
    except UnicodeDecodeError:
        parser = None  # lxml then follows the document's <meta charset>, else latin-1
    try:
        return html.document_fromstring(data, parser=parser)
    except etree.ParserError:
        return None  # nothing but whitespace or comments


def _html_title(root) -> str | None:
    for el in root.iter():
        tag = _local(el.tag)
        if tag == "title":
            return "".join(el.itertext())
        if tag == "body":
            break
    return None


def _read_html(path: str, display: str, suffix: str) -> Parsed:
    root = _html_tree(_read_bytes(path), xml_first=suffix == ".xhtml")
    if root is None:
        return Parsed(display, [])
    outline = _Outline()
    _walk(root, outline)
    outline.flush()
    return Parsed(_title(_html_title(root), display), chunk_sections(outline.sections))


_DC = "{http://purl.org/dc/elements/1.1/}"
_FONT_OBFUSCATION = frozenset({"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"})
_XHTML_TYPES = frozenset({"application/xhtml+xml", "text/html"})


def _xml(data: bytes):
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True)
    return etree.fromstring(data, parser)


def _read_epub(path: str, display: str, suffix: str) -> Parsed:
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        if "META-INF/encryption.xml" in names:
            for el in _xml(z.read("META-INF/encryption.xml")).iter():
                if _local(el.tag) == "encryptionmethod" and el.get("Algorithm") not in _FONT_OBFUSCATION:
                    raise Unreadable(f"“{display}” is protected by DRM, so Numi cannot read it.")
        rootfile = next(el for el in _xml(z.read("META-INF/container.xml")).iter()
                        if _local(el.tag) == "rootfile" and el.get("full-path"))
        opf_path = rootfile.get("full-path")
        opf = _xml(z.read(opf_path))
        base = posixpath.dirname(opf_path)
        title = next((el.text for el in opf.iter(f"{_DC}title") if el.text and el.text.strip()), None)
        manifest = {el.get("id"): el for el in opf.iter() if _local(el.tag) == "item"}
        outline = _Outline()
        for ref in opf.iter():
            if _local(ref.tag) != "itemref":
                continue
            item = manifest.get(ref.get("idref"))
            if item is None or item.get("media-type") not in _XHTML_TYPES or not item.get("href"):
                continue
            member = posixpath.normpath(posixpath.join(base, unquote(item.get("href").split("#")[0])))
            if member not in names:
                continue
            root = _html_tree(z.read(member), xml_first=True)
            if root is not None:
                _walk(root, outline)
            outline.flush()  # a chapter's file ends its chunk; its headings still hold for the next file
    return Parsed(_title(title, display), chunk_sections(outline.sections))


# --- Word ----------------------------------------------------------------------------------------------------------

_HEADING_STYLE = re.compile(r"heading ([1-9])", re.I)


def _read_docx(path: str, display: str, suffix: str) -> Parsed:
    import docx
    from docx.table import Table

    document = docx.Document(path)
    outline = _Outline()
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            for row in block.rows:
                cells: list[str] = []
                for cell in row.cells:
                    text = cell.text.strip()
                    if text and (not cells or cells[-1] != text):  # a merged cell repeats in each column it spans
                        cells.append(text)
                outline.text(" | ".join(cells), pre=False)
                outline.paragraph()
            continue
        text = block.text
        style = block.style.name if block.style is not None else ""
        level = 0 if style == "Title" else _heading_level(style or "")
        heading = _SPACES.sub(" ", _CONTROL.sub("", text)).strip()
        if level is not None and heading:
            outline.heading(level, heading)
        else:
            outline.text(text, pre=True)
            outline.paragraph()
    outline.flush()
    return Parsed(_title(document.core_properties.title, display), chunk_sections(outline.sections))


def _heading_level(style: str) -> int | None:
    m = _HEADING_STYLE.fullmatch(style)
    return int(m.group(1)) if m else None


# --- PDF -------------------------------------------------------------------------------------------------------------

def _password_protected(display: str) -> Unreadable:
    return Unreadable(f"“{display}” is password-protected; remove the password (or save an unprotected copy) "
                      "and add it again.")


def _page_text(text: str) -> str:
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def _read_pdf(path: str, display: str, suffix: str) -> Parsed:
    import pypdfium2 as pdfium  # type: ignore[import-untyped]
    import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

    try:
        pdf = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        if exc.err_code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
            raise _password_protected(display) from None
        return _read_pdf_pypdf(path, display)  # more forgiving of some damage than PDFium
    try:
        sections = []
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            text = textpage.get_text_range()
            textpage.close()
            page.close()
            label = pdf.get_page_label(index) or str(index + 1)
            sections.append((_page_text(text), {"page": label, "page_index": index}))
        title = pdf.get_metadata_value("Title")
    finally:
        pdf.close()
    return Parsed(_title(title, display), chunk_sections(sections))


def _read_pdf_pypdf(path: str, display: str) -> Parsed:
    from pypdf import PdfReader

    reader = PdfReader(path)
    if reader.is_encrypted and not reader.decrypt(""):
        raise _password_protected(display)
    labels = reader.page_labels
    sections = []
    for index, page in enumerate(reader.pages):
        label = labels[index] if index < len(labels) and labels[index] else str(index + 1)
        sections.append((_page_text(page.extract_text() or ""), {"page": label, "page_index": index}))
    title = reader.metadata.title if reader.metadata else None
    return Parsed(_title(title, display), chunk_sections(sections))


def _misbehave(path: str, suffix: str) -> None:
    """The test seam's readers: sleep for ever, or allocate until memory runs out."""
    if suffix == ".hang":
        import threading

        open(path + ".started", "w").close()
        threading.Event().wait()
    hoard = []
    while True:
        hoard.append(bytearray(64 << 20))


_Reader = Callable[[str, str, str], Parsed]
_READERS: dict[str, tuple[_Reader, str]] = {
    ".pdf": (_read_pdf, "a PDF"),
    ".docx": (_read_docx, "a Word document"),
    ".epub": (_read_epub, "an EPUB book"),
    **{s: (_read_html, "HTML") for s in HTML_SUFFIXES},
    **{s: (_read_markdown, "Markdown") for s in MARKDOWN_SUFFIXES},
    **{s: (_read_text, "text") for s in TEXT_SUFFIXES | CODE_SUFFIXES},
}
