"""A web page as readable text: headings, paragraphs, lists, code and links, no markup.

The output is Markdown-flavoured plain text for a model to read, not a faithful
rendering: block structure survives as blank lines, `# ` headings, `- ` items
and fenced code; links become `text (url)` with the url resolved against the page.
"""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin

__all__ = ["HtmlText", "html_to_text", "sniff_charset", "decode"]

# Their text is never prose: code, styling, fallbacks for scripts, inert templates, drawings,
# and the hundred choices of a form's drop-down.
_DROPPED = {"script", "style", "noscript", "template", "svg", "math", "iframe", "object", "canvas",
            "select", "datalist"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
         "source", "track", "wbr"}
_BLOCK = {"address", "article", "aside", "blockquote", "body", "dd", "details", "dialog", "div",
          "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4",
          "h5", "h6", "header", "hgroup", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
          "summary", "table", "tbody", "thead", "tfoot", "tr", "ul", "caption", "legend", "center"}
# What a <head> may hold; any other start tag means the body began without saying so.
_HEAD_TAGS = {"title", "meta", "link", "style", "script", "base", "noscript", "template"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_SPACE = re.compile(r"\s+")
# Blocks of these kinds stay on adjacent lines when they follow one of the same group
# (the same top-level list, table or definition list); anything else gets a blank line.
_TIGHT = {"li", "row", "dd"}

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
# WHATWG decodes these labels as windows-1252, as every browser does; pages rely on it.
_WHATWG_ALIASES = {"iso-8859-1": "cp1252", "latin-1": "cp1252", "latin1": "cp1252",
                   "us-ascii": "cp1252", "ascii": "cp1252", "iso8859-1": "cp1252"}


@dataclass(frozen=True)
class HtmlText:
    title: str
    text: str


def html_to_text(html: str, base_url: str = "") -> HtmlText:
    """The page's title and its readable text, links resolved against base_url."""
    parser = _Extractor(base_url)
    try:
        parser.feed(html)
        parser.close()
    except AssertionError:
        pass  # html.parser gave up on some markup; what it read so far still stands
    return HtmlText(parser.title(), parser.text())


def sniff_charset(head: bytes) -> str | None:
    """The charset a page declares in a <meta> tag or a byte order mark, if any."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    match = _META_CHARSET.search(head[:4096])
    return match.group(1).decode("ascii") if match else None


def decode(data: bytes, charset: str | None) -> str:
    """Bytes as text in the given charset; UTF-8 when it is missing or unknown, bad bytes replaced."""
    name = (charset or "utf-8").strip().lower()
    name = _WHATWG_ALIASES.get(name, name)
    try:
        codecs.lookup(name)
    except LookupError:
        name = "utf-8"
    if name in ("utf-8", "utf8"):
        name = "utf-8-sig"  # a BOM is not text
    return data.decode(name, errors="replace")


class _Extractor(HTMLParser):
    def __init__(self, base_url: str):
        super().__init__(convert_charrefs=True)
        self._base = base_url
        self._blocks: list[tuple[str, str]] = []  # (kind, text)
        self._inline: list[str] = []  # the block being read; "\n" is a hard break
        self._kind = "p"
        self._prefix = ""
        self._dropped: list[str] = []  # open elements whose content is skipped
        self._in_head = False
        self._title: list[str] | None = None
        self._title_text = ""
        self._lists: list[list] = []  # [tag, next number] per open list
        self._quote = 0
        self._pre = 0
        self._pre_text: list[str] = []
        self._links: list[tuple[str | None, int, int]] = []  # (url, flushes so far, inline length)
        self._flushes = 0
        self._row_cells = 0
        self._group = 0  # counts lists, tables and definition lists, to tell neighbours apart

    # -- results

    def title(self) -> str:
        return self._title_text

    def text(self) -> str:
        self._flush()
        out: list[str] = []
        previous = ""
        for kind, text in self._blocks:
            if out:
                tight = kind == previous and kind.split(":")[0] in _TIGHT
                out.append("\n" if tight else "\n\n")
            out.append(text)
            previous = kind
        return "".join(out).strip()

    # -- parser callbacks

    def parse_marked_section(self, i, report=1):
        # html.parser asserts on a malformed "<![...": browsers skip it as a bogus comment.
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:
            end = self.rawdata.find(">", i + 3)
            return -1 if end < 0 else end + 1

    def handle_starttag(self, tag, attrs):
        self._start(tag, dict(attrs), void=tag in _VOID)

    def handle_startendtag(self, tag, attrs):
        # <x/> opens nothing; inside <svg> that is most tags, and they must not nest.
        self._start(tag, dict(attrs), void=True)

    def handle_endtag(self, tag):
        if self._dropped:
            if tag == self._dropped[-1]:
                self._dropped.pop()
            return
        if tag == "title" and self._title is not None:
            self._title_text = _SPACE.sub(" ", "".join(self._title)).strip()
            self._title = None
            return
        if tag == "head":
            self._in_head = False
            return
        if self._in_head:
            return
        if tag == "pre":
            if self._pre:
                self._pre -= 1
                if not self._pre:
                    self._end_pre()
            return
        if self._pre:
            return
        if tag == "a":
            self._end_link()
        elif tag == "code":
            self._inline.append("`")
        elif tag in ("ul", "ol"):
            self._flush()
            for i in range(len(self._lists) - 1, -1, -1):
                if self._lists[i][0] == tag:
                    del self._lists[i:]
                    break
        elif tag == "blockquote":
            self._flush()
            self._quote = max(0, self._quote - 1)
        elif tag in ("td", "th"):
            pass
        elif tag in _BLOCK:
            self._flush()

    def handle_data(self, data):
        if self._dropped:
            return
        if self._title is not None:
            self._title.append(data)
            return
        if self._in_head:
            return
        if self._pre:
            self._pre_text.append(data)
            return
        self._inline.append(_SPACE.sub(" ", data))

    # -- element handling

    def _start(self, tag: str, attrs: dict, void: bool) -> None:
        if self._dropped:
            if tag in _DROPPED and not void:
                self._dropped.append(tag)
            return
        if self._title is not None:
            self.handle_endtag("title")  # a title holds only text; markup means it was left open
        if tag == "title":
            if not void:
                self._title = []
            return
        if tag == "head":
            self._in_head = not void
            return
        if tag == "base" and attrs.get("href"):
            self._base = urljoin(self._base, attrs["href"].strip())
            return
        if tag in _DROPPED:
            if not void:
                self._dropped.append(tag)
            return
        if self._in_head:
            if tag in _HEAD_TAGS:
                return
            self._in_head = False  # a body element: the head ended unannounced
        if tag == "pre" and not void:
            if not self._pre:
                self._flush()
                self._pre_text = []
            self._pre += 1
            return
        if self._pre:
            if tag == "br":
                self._pre_text.append("\n")
            return
        if tag == "br":
            self._inline.append("\n")
        elif tag == "img":
            if self._links and attrs.get("alt"):
                self._inline.append(attrs["alt"])  # the only name a linked image has
        elif tag == "a" and not void:
            self._links.append((self._link_url(attrs.get("href")), self._flushes, len(self._inline)))
        elif tag == "code" and not void:
            self._inline.append("`")
        elif tag in ("td", "th"):
            if self._row_cells:
                self._inline.append(" | ")
            self._row_cells += 1
        elif tag == "tr":
            self._flush()
            self._kind, self._row_cells = f"row:{self._group}", 0
        elif tag in ("table", "dl") and not void:
            self._flush()
            self._group += 1
        elif tag in ("ul", "ol") and not void:
            self._flush()
            if not self._lists:
                self._group += 1
            start = attrs.get("start") or "1"
            self._lists.append([tag, int(start) if start.strip().lstrip("-").isdigit() else 1])
        elif tag == "li":
            self._flush()
            self._kind, self._prefix = f"li:{self._group}", self._list_marker()
        elif tag in _HEADINGS:
            self._flush()
            self._kind, self._prefix = "h", "#" * _HEADINGS[tag] + " "
        elif tag in ("dt", "dd"):
            self._flush()
            self._kind, self._prefix = f"dd:{self._group}", "  " if tag == "dd" else ""
        elif tag == "blockquote" and not void:
            self._flush()
            self._quote += 1
        elif tag == "hr":
            self._flush()
            self._blocks.append(("hr", "---"))
        elif tag in _BLOCK:
            self._flush()

    def _list_marker(self) -> str:
        if not self._lists:
            return "- "
        indent = "  " * (len(self._lists) - 1)
        current = self._lists[-1]
        if current[0] == "ol":
            current[1] += 1
            return f"{indent}{current[1] - 1}. "
        return f"{indent}- "

    def _link_url(self, href: str | None) -> str | None:
        if not href:
            return None
        href = href.strip()
        if href.startswith("#") or href.lower().startswith(("javascript:", "data:")):
            return None  # a jump within the page or a script: nothing to visit
        return urljoin(self._base, href)

    def _end_link(self) -> None:
        if not self._links:
            return
        url, flushes, start = self._links.pop()
        if url is None:
            return
        if flushes == self._flushes:
            text = _SPACE.sub(" ", "".join(self._inline[start:])).strip()
            if not text:
                return  # an icon with no name: the url alone would be noise
            if text != url:
                self._inline.append(f" ({url})")
        elif "".join(self._inline).strip():
            self._inline.append(f" ({url})")  # the link spanned blocks; mark where it ends
        elif self._blocks and self._blocks[-1][1] != url:
            kind, text = self._blocks[-1]
            self._blocks[-1] = (kind, f"{text} ({url})")

    def _end_pre(self) -> None:
        code = "".join(self._pre_text)
        if code.startswith("\n"):
            code = code[1:]  # HTML ignores a newline right after <pre>
        code = code.rstrip()
        if code.strip():
            self._blocks.append(("pre", f"```\n{code}\n```"))
        self._pre_text = []

    def _flush(self) -> None:
        """End the current block: collapse its spaces and keep it if it has any text."""
        raw = "".join(self._inline)
        self._inline = []
        self._flushes += 1
        lines = [_SPACE.sub(" ", line).strip() for line in raw.split("\n")]
        text = "\n".join(line for line in lines if line)
        kind, prefix = self._kind, self._prefix
        self._kind, self._prefix = "p", ""
        if not text:
            return
        if prefix:
            pad = " " * len(prefix)
            text = prefix + text.replace("\n", "\n" + pad)
        if self._quote:
            mark = "> " * self._quote
            text = "\n".join(mark + line for line in text.split("\n"))
        self._blocks.append((kind, text))
