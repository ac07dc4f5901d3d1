"""Draw Numi's icon (a rounded speech bubble) at every size the packages need.

Run once after changing the design; the PNG/ICO/ICNS files it writes are committed
under desktop/assets/ so a build needs no drawing step.
"""
from pathlib import Path

from PIL import Image, ImageDraw

ASSETS = Path(__file__).resolve().parent.parent / "desktop" / "assets"


def draw(size: int) -> Image.Image:
    s = size / 256
    img = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle([16 * s, 16 * s, 240 * s, 240 * s], radius=56 * s, fill=(52, 86, 214, 255))
    d.rounded_rectangle([56 * s, 64 * s, 200 * s, 164 * s], radius=28 * s, fill=(255, 255, 255, 255))
    d.polygon([(88 * s, 156 * s), (80 * s, 200 * s), (124 * s, 160 * s)], fill=(255, 255, 255, 255))
    for x in (96, 128, 160):
        d.ellipse([(x - 10) * s, 104 * s, (x + 10) * s, 124 * s], fill=(52, 86, 214, 255))
    return img


def main() -> None:
    ASSETS.mkdir(parents=True, exist_ok=True)
    big = draw(512)
    for size in (16, 32, 48, 64, 128, 256, 512):
        draw(size).save(ASSETS / f"numi-{size}.png")
    big.save(ASSETS / "numi.ico", sizes=[(16, 16), (32, 32), (48, 48), (64, 64), (128, 128), (256, 256)])
    big.save(ASSETS / "numi.icns")


if __name__ == "__main__":
    main()
