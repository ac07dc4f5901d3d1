"""Draw Numi's logo (web/icons/numi.svg: a rounded square in a blue-to-green gradient with
a white "N") at every size the window, tray, notifications and packages need.

Run once after changing the design (keep it the same as the SVG the page shows); the
PNG/ICO/ICNS files it writes are committed under desktop/assets/ so a build needs no
drawing step. tests/e2e/test_app_icon.py checks them against the SVG as Chromium draws it.
"""
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw

ASSETS = Path(__file__).resolve().parent.parent / "desktop" / "assets"
# numi.svg, in its 64-unit viewBox.
FROM, TO = (0x6D, 0x8C, 0xFF), (0x37, 0xB3, 0x9A)  # the gradient, top left to bottom right
SQUARE = (4, 4, 60, 60)
RADIUS = 16
N_PATH = [(20, 44), (20, 22), (44, 44), (44, 22)]
STROKE = 6
OVERSAMPLE = 4  # drawn larger, then scaled down: smooth edges without an SVG renderer


def draw(size: int) -> Image.Image:
    big = size * OVERSAMPLE
    u = big / 64
    x0, y0, x1, y1 = (v * u for v in SQUARE)
    # The gradient runs along the diagonal of the square's box (objectBoundingBox 0,0 → 1,1):
    # the mean of a left-to-right and a top-to-bottom ramp, coloured channel by channel.
    span = max(1, round(x1 - x0))
    down = Image.linear_gradient("L").resize((span, span))
    across = ImageChops.add(down, down.transpose(Image.Transpose.ROTATE_90),
                            scale=2)
    fill = Image.merge("RGB", [across.point(lambda v, a=a, b=b: round(a + (b - a) * v / 255))
                               for a, b in zip(FROM, TO)]).convert("RGBA")
    mask = Image.new("L", (big, big), 0)
    ImageDraw.Draw(mask).rounded_rectangle([x0, y0, x1, y1], radius=RADIUS * u, fill=255)
    img = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    layer = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    layer.paste(fill, (round(x0), round(y0)))
    img.paste(layer, (0, 0), mask)
    d = ImageDraw.Draw(img)
    points = [(x * u, y * u) for x, y in N_PATH]
    width = STROKE * u
    d.line(points, fill=(255, 255, 255, 255), width=round(width), joint="curve")
    r = width / 2
    for x, y in points:  # round caps and joins
        d.ellipse([x - r, y - r, x + r, y + r], fill=(255, 255, 255, 255))
    return img.resize((size, size), Image.LANCZOS)


def main() -> None:
    ASSETS.mkdir(parents=True, exist_ok=True)
    big = draw(512)
    for size in (16, 32, 48, 64, 128, 256, 512):
        draw(size).save(ASSETS / f"numi-{size}.png")
    big.save(ASSETS / "numi.ico", sizes=[(16, 16), (32, 32), (48, 48), (64, 64), (128, 128), (256, 256)])
    big.save(ASSETS / "numi.icns")


if __name__ == "__main__":
    main()
