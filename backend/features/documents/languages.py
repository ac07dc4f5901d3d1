"""A document's language: the names Numi knows, their usual other spellings, and each one's file extension.

A document is always one of `KNOWN`. A model's name for a language is read case-blind and
through `ALIASES` ("py", "JS", "c++"); a name Numi does not know, or none, makes the
document plain `text` (its text is kept whole; only the highlighting is plain), and the
tool's result says so. The web panel highlights these and downloads a document with
`EXTENSIONS`' extension.
"""
from __future__ import annotations

TEXT = "text"

# name -> the extension a download gets
EXTENSIONS: dict[str, str] = {
    "text": ".txt", "markdown": ".md", "html": ".html", "svg": ".svg", "mermaid": ".mmd", "css": ".css",
    "javascript": ".js", "typescript": ".ts", "jsx": ".jsx", "tsx": ".tsx", "json": ".json",
    "python": ".py", "shell": ".sh", "sql": ".sql", "yaml": ".yaml", "toml": ".toml", "xml": ".xml",
    "c": ".c", "cpp": ".cpp", "csharp": ".cs", "java": ".java", "kotlin": ".kt", "go": ".go",
    "rust": ".rs", "ruby": ".rb", "php": ".php", "swift": ".swift", "lua": ".lua", "r": ".r",
    "latex": ".tex", "diff": ".diff", "csv": ".csv",
}
KNOWN: tuple[str, ...] = tuple(EXTENSIONS)

ALIASES: dict[str, str] = {
    "": TEXT, "txt": TEXT, "plain": TEXT, "plaintext": TEXT, "plain text": TEXT,
    "md": "markdown", "htm": "html", "xhtml": "html", "mmd": "mermaid",
    "js": "javascript", "mjs": "javascript", "cjs": "javascript", "node": "javascript", "ecmascript": "javascript",
    "ts": "typescript", "py": "python", "python3": "python", "py3": "python",
    "sh": "shell", "bash": "shell", "zsh": "shell", "console": "shell", "shellscript": "shell",
    "yml": "yaml", "jsonc": "json", "json5": "json",
    "h": "c", "c++": "cpp", "cc": "cpp", "cxx": "cpp", "hpp": "cpp", "cs": "csharp", "c#": "csharp",
    "kt": "kotlin", "golang": "go", "rs": "rust", "rb": "ruby", "tex": "latex", "patch": "diff",
}


def normalize(name: str) -> tuple[str, bool]:
    """The language a name means, and whether Numi knows it (False: `text` stands in for it)."""
    key = " ".join(name.split()).lower()
    if key in EXTENSIONS:
        return key, True
    if key in ALIASES:
        return ALIASES[key], True
    return TEXT, False


def known_list() -> str:
    """The known names, for a sentence."""
    return ", ".join(KNOWN)
