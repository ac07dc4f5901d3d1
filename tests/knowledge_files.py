"""Real files for the knowledge readers' tests, written at test time: PDF, DOCX, EPUB, HTML, Markdown, text, code."""
from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

from tests import sample_files

# --- PDF -------------------------------------------------------------------------------------------------------------

PDF_TITLE = "Moth Survey Report"
PDF_LABELS = ["i", "ii", "1", "2", "3"]


def pdf_pages() -> list[list[str]]:
    """Each page's lines: a marker word naming the page, then text; the fourth page is long enough for two chunks."""
    rnd = random.Random(7)
    words = ["moth", "lamp", "wing", "night", "trap", "count", "species", "meadow", "record", "season"]
    pages = []
    for index, label in enumerate(PDF_LABELS):
        lines = [f"Page marker {label.upper()}{index} begins here."]
        count = 62 if index == 3 else 4
        for _ in range(count):
            lines.append(" ".join(rnd.choice(words) for _ in range(14)) + ".")
        pages.append(lines)
    return pages


def pdf_bytes(pages: list[list[str]]) -> bytes:
    """A small valid PDF with a text layer (Helvetica, one Tj per line): small type, so a page holds more than a
    chunk."""
    return sample_files.pdf(pages, font_size=8, leading=11, origin=(40, 760), encoding="WinAnsiEncoding")


def write_pdf(path: Path, pages: list[list[str]] | None = None, labels: bool = True, title: str | None = PDF_TITLE,
              password: str | None = None) -> Path:
    """A PDF of `pages` (default pdf_pages()), with page labels i, ii, 1, 2… and a title, optionally encrypted."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.constants import PageLabelStyle

    pages = pdf_pages() if pages is None else pages
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(pages))))
    if labels:
        writer.set_page_label(0, 1, style=PageLabelStyle.LOWERCASE_ROMAN, start=1)
        writer.set_page_label(2, len(pages) - 1, style=PageLabelStyle.DECIMAL, start=1)
    if title:
        writer.add_metadata({"/Title": title})
    if password:
        writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="AES-128")
    with open(path, "wb") as f:
        writer.write(f)
    return path


# --- Word ------------------------------------------------------------------------------------------------------------

DOCX_TITLE = "Field Guide to Moths"


def write_docx(path: Path) -> Path:
    """A Word document: a paragraph before any heading, a Title, Heading 1 and 2 sections, a table."""
    import docx

    document = docx.Document()
    document.core_properties.title = DOCX_TITLE
    document.add_paragraph("A foreword that comes before any heading.")
    document.add_heading("Moths of the North", level=0)
    document.add_paragraph("An overview of the northern moths.")
    document.add_heading("Night Flyers", level=1)
    document.add_paragraph("Night flyers come to the lamp after dusk.")
    document.add_heading("Lures", level=2)
    document.add_paragraph("Sugar and wine make the best lure.")
    table = document.add_table(rows=2, cols=2)
    for row, cells in zip(table.rows, [("Species", "Count"), ("Tiger moth", "12")]):
        for cell, text in zip(row.cells, cells):
            cell.text = text
    document.add_heading("Day Flyers", level=1)
    document.add_paragraph("Day flyers are often mistaken for butterflies.")
    document.save(str(path))
    return path


# --- EPUB ------------------------------------------------------------------------------------------------------------

EPUB_TITLE = "The Lamp and the Moth"

_XHTML = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title></head>
<body>{body}</body></html>
"""


def write_epub(path: Path, drm: bool = False) -> Path:
    """An EPUB of two chapters (in spine order, which differs from the manifest's) with h1/h2 headings."""
    chapter_one = _XHTML.format(title="One", body=(
        "<p>An epigraph before the first heading.</p>"
        "<h1>Chapter One</h1><p>The lamp was lit at dusk.</p>"
        "<h2>A Storm</h2><p>Rain drove the moths <em>under</em> the eaves.</p>"))
    # An HTML entity that XML does not know: this chapter goes through the HTML parser.
    chapter_two = _XHTML.format(title="Two", body=(
        "<h1>Chapter Two</h1><p>Morning&nbsp;came and the trap was full.</p>"
        "<script>var hidden = 'script text';</script>"))
    container = ('<?xml version="1.0"?><container version="1.0" '
                 'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                 '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
                 '</rootfiles></container>')
    opf = ('<?xml version="1.0" encoding="utf-8"?>'
           '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
           '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
           f'<dc:identifier id="id">urn:uuid:1</dc:identifier><dc:title>{EPUB_TITLE}</dc:title>'
           '<dc:language>en</dc:language></metadata>'
           '<manifest>'
           '<item id="c2" href="text/chapter%202.xhtml" media-type="application/xhtml+xml"/>'
           '<item id="c1" href="text/chapter1.xhtml" media-type="application/xhtml+xml"/>'
           '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
           '</manifest>'
           '<spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>')
    nav = _XHTML.format(title="Contents", body="<nav><ol><li>Navigation only</li></ol></nav>")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")  # first and stored, as EPUB requires
        z.writestr("META-INF/container.xml", container, zipfile.ZIP_DEFLATED)
        z.writestr("OEBPS/content.opf", opf, zipfile.ZIP_DEFLATED)
        z.writestr("OEBPS/text/chapter1.xhtml", chapter_one, zipfile.ZIP_DEFLATED)
        z.writestr("OEBPS/text/chapter 2.xhtml", chapter_two, zipfile.ZIP_DEFLATED)
        z.writestr("OEBPS/nav.xhtml", nav, zipfile.ZIP_DEFLATED)
        if drm:
            z.writestr("META-INF/encryption.xml", (
                '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
                'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
                '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
                '<enc:CipherData><enc:CipherReference URI="OEBPS/text/chapter1.xhtml"/></enc:CipherData>'
                '</enc:EncryptedData></encryption>'))
    return path


# --- HTML and Markdown -----------------------------------------------------------------------------------------------

HTML_TITLE = "Moth Lamps"
HTML = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{HTML_TITLE}</title>
<style>body {{ color: red; }}</style><script>var secret = "script text";</script></head>
<body>
<nav><a href="/">Home</a> <a href="/about">Navigation link</a></nav>
<p>Before   any
heading, café.</p>
<h1>Lamps</h1>
<p>Mercury vapour lamps draw the most moths.</p>
<h2>Actinic <em>tubes</em></h2>
<p>Actinic tubes are lighter to carry.</p>
<h3>Batteries</h3>
<table><tr><td>Cell</td><td>Hours</td></tr></table>
<pre>line one
  line two</pre>
<script>document.write("more script text")</script>
<h2>Sheets</h2>
<p>A white sheet<br>catches the light.</p>
</body></html>
"""

MARKDOWN = """Intro text before the title.

# Moth Notes

The first section.

## Trapping

Set the trap at dusk.

```python
# not a heading
print("trap")
```

### Counting

Count at dawn.
    # indented code, not a heading either

## Releasing ##

Release them in the shade.
"""


# --- Plain text and code ---------------------------------------------------------------------------------------------

def long_text(paragraphs: int = 60, seed: int = 3) -> str:
    """Prose of hard-wrapped paragraphs (about 40 000 characters) with blank lines between them."""
    rnd = random.Random(seed)
    words = ["the", "moth", "lamp", "flew", "towards", "warm", "glowing", "across", "meadow", "quietly", "night",
             "and", "then", "a", "bright", "evening", "shadow", "garden", "wing", "light"]
    out = []
    for _ in range(paragraphs):
        sentences = []
        for _ in range(rnd.randint(4, 9)):
            sentence = " ".join(rnd.choice(words) for _ in range(rnd.randint(6, 18)))
            sentences.append(sentence[0].upper() + sentence[1:] + ".")
        line, lines = "", []
        for word in " ".join(sentences).split(" "):
            if line and len(line) + 1 + len(word) > 72:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


def code_text(functions: int = 120) -> str:
    """A Python module of classes of small methods (about 23 000 characters), indented as code is."""
    parts = ['"""A generated module."""\n', "import math\n"]
    for n in range(functions):
        if n % 10 == 0:
            parts.append(f"\n\nclass Circles{n // 10}:\n    \"\"\"Circles {n} to {n + 9}.\"\"\"\n")
        parts.append(f"\n    def area_{n}(self, radius):\n"
                     f"        # The area of circle number {n}.\n"
                     f"        if radius < 0:\n"
                     f"            raise ValueError('negative radius {n}')\n"
                     f"        return math.pi * radius ** 2 + {n}\n")
    return "".join(parts)
