"""A long document's outline: its headings or top-level definitions, each with its line number.

By language: Markdown and text headings (`#`…), Python's unindented `def`/`class`, JavaScript
and TypeScript's top-level functions, classes, consts and types, HTML and SVG's headings and
sections, CSS's top-level rules, JSON's top-level keys, Mermaid's diagram line and subgraphs;
any other language its unindented lines that open a block or define something. At most
MAX_ENTRIES entries of at most ENTRY_CHARS characters each (the rest counted, not listed).
"""
from __future__ import annotations

import re

MAX_ENTRIES = 200
ENTRY_CHARS = 120

_GENERIC = re.compile(r"^(?=[A-Za-z_@#])(?:.*\{\s*$|.*\b(?:func|fn|def|class|struct|interface|impl|trait|enum|type|"
                      r"module|package|function|fun|proc|sub)\b|.*:\s*$)")
_PATTERNS = {
    "markdown": re.compile(r"^#{1,6}\s+\S"),
    "text": re.compile(r"^#{1,6}\s+\S"),
    "python": re.compile(r"^(?:async\s+def|def|class)\s+\w"),
    "javascript": re.compile(r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|class|const|let|var)\s"),
    "jsx": re.compile(r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|class|const|let|var)\s"),
    "typescript": re.compile(r"^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
                             r"(?:function\*?|class|const|let|var|interface|type|enum|namespace)\s"),
    "tsx": re.compile(r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|class|const|let|var|interface|"
                      r"type|enum)\s"),
    "html": re.compile(r"^\s*<(?:h[1-6]|section|article|header|footer|nav|main|aside|form|table|script|style|body|"
                       r"head)\b", re.IGNORECASE),
    "svg": re.compile(r"^\s*<(?:svg|g|defs|symbol|title|style|script)\b", re.IGNORECASE),
    "css": re.compile(r"^[^\s}/*][^{]*\{"),
    "json": re.compile(r'^ {0,2}\t?"[^"]+"\s*:'),
    "mermaid": re.compile(r"^\s*(?:graph|flowchart|sequenceDiagram|classDiagram|stateDiagram|erDiagram|gantt|pie|"
                          r"journey|mindmap|timeline|gitGraph|subgraph)\b"),
    "yaml": re.compile(r"^[A-Za-z_][\w.-]*\s*:"),
    "toml": re.compile(r"^\s*\["),
    "latex": re.compile(r"^\\(?:part|chapter|section|subsection|subsubsection)\*?\{"),
}


def outline(text: str, language: str) -> tuple[list[tuple[int, str]], int]:
    """(line number, line) of the document's outline, at most MAX_ENTRIES; and how many there are in all."""
    pattern = _PATTERNS.get(language, _GENERIC)
    found: list[tuple[int, str]] = []
    count = 0
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if language in ("markdown", "text") and line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced  # a `#` in a code block is no heading
            continue
        if fenced or not pattern.match(line):
            continue
        count += 1
        if len(found) < MAX_ENTRIES:
            shown = line.rstrip()
            found.append((number, shown if len(shown) <= ENTRY_CHARS else shown[:ENTRY_CHARS - 1] + "…"))
    return found, count
