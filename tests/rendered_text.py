"""Pictures of printed text for the OCR tests: lines rendered in Pillow's own font, whose words are known."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def rendered(lines: Sequence[str], path: Path, *, size: tuple[int, int], letters: int, spacing: int) -> Path:
    """`lines` rendered black on white in Pillow's own font, `letters` px high, a line every `spacing` px from
    (40, 40), saved at `path` (a JPEG at quality 90, or any format Pillow infers from the suffix)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=letters)
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        draw.text((40, 40 + spacing * row), line, font=font, fill="black")
    image.save(path, quality=90)
    return path
