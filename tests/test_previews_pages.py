"""The preview pages as made in process (backend/features/previews/pages.py): where our error
reporter goes in an HTML document, and how a Markdown or Mermaid text is carried as data."""
from __future__ import annotations

import json
import re

import pytest

from backend.features.previews import pages

ORIGINS = ["http://127.0.0.1:5000", "http://localhost:5000"]
LIB = "http://127.0.0.1:6000/p/s/lib/"


def test_the_reporter_is_one_line_that_posts_to_the_apps_origins_only():
    script = pages.reporter(ORIGINS)
    assert "\n" not in script  # the document's own line numbers stay as written
    assert json.dumps(ORIGINS) in script and "'*'" not in script and '"*"' not in script


@pytest.mark.parametrize("doctype", ["<!DOCTYPE html>", "<!doctype html>", "\ufeff  \n<!DocType html>",
                                     '<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN">'])
def test_the_reporter_goes_after_the_doctype_so_the_page_keeps_its_mode(doctype):
    text = doctype + "\n<p>hi</p>"
    page = pages.page("html", text, LIB, ORIGINS)
    assert page == doctype + pages.reporter(ORIGINS) + "\n<p>hi</p>"


def test_without_a_doctype_the_reporter_goes_first():
    assert pages.page("html", "<p>hi</p>", LIB, ORIGINS) == pages.reporter(ORIGINS) + "<p>hi</p>"


def test_an_svg_starts_on_the_pages_first_line():
    page = pages.page("svg", "<svg>\n<script>x()</script></svg>", LIB, ORIGINS)
    assert page.splitlines()[0].endswith("<body><svg>")


@pytest.mark.parametrize("language", ["markdown", "mermaid"])
def test_markdown_and_mermaid_are_data_in_the_page(language):
    text = "a </script><script>alert(1)</script> & <!-- b"
    page = pages.page(language, text, LIB, ORIGINS)
    carried = re.search(r'<script type="application/json" id="numi-source">(.*?)</script>', page)[1]
    assert json.loads(carried) == text
    assert "<" not in carried and ">" not in carried and "&" not in carried
    assert f"const LIB = {json.dumps(LIB)};" in page and f"({json.dumps(language)} === \"mermaid\"" in page
