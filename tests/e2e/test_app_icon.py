"""The window's, tray's and notifications' icon files are Numi's logo: web/icons/numi.svg as
Chromium draws it, not another picture."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageStat

from tests.e2e.ui import CHROMIUM

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "desktop" / "assets"


def logo_as_drawn(page, size: int) -> Image.Image:
    svg = (ROOT / "web" / "icons" / "numi.svg").read_text()
    svg = svg.replace("<svg ", f'<svg width="{size}" height="{size}" ', 1)
    page.set_viewport_size({"width": size, "height": size})
    page.set_content(f"<!doctype html><style>html,body{{margin:0;background:transparent}}svg{{display:block}}</style>{svg}")
    png = page.screenshot(clip={"x": 0, "y": 0, "width": size, "height": size}, omit_background=True)
    return Image.open(io.BytesIO(png)).convert("RGBA")


def difference(a: Image.Image, b: Image.Image) -> float:
    """Mean difference per channel (0–255), colours counted only where either is opaque."""
    flat = lambda im: Image.alpha_composite(Image.new("RGBA", im.size, (0, 0, 0, 255)), im).convert("RGB")
    colour = ImageStat.Stat(ImageChops.difference(flat(a), flat(b))).mean
    alpha = ImageStat.Stat(ImageChops.difference(a.getchannel("A"), b.getchannel("A"))).mean
    return max(*colour, *alpha)


@pytest.mark.parametrize("size", [64, 256])  # the tray's, and the window's and notifications'
def test_the_desktop_icons_are_the_logo_the_page_shows(page, size):
    shipped = Image.open(ASSETS / f"numi-{size}.png").convert("RGBA")
    assert shipped.size == (size, size)
    drawn = logo_as_drawn(page, size)
    assert difference(shipped, drawn) < 6, (difference(shipped, drawn), f"numi-{size}.png is not web/icons/numi.svg")
    # The other pictures of the same size could not pass: the check tells them apart.
    assert difference(Image.new("RGBA", (size, size), (52, 86, 214, 255)), drawn) > 20


def test_the_packages_icons_hold_the_same_logo():
    big = Image.open(ASSETS / "numi-256.png").convert("RGBA")
    with Image.open(ASSETS / "numi.ico") as ico:
        ico.size = (256, 256)
        assert difference(ico.convert("RGBA").resize(big.size), big) < 6
