"""Results drawn on a copy of the input image, as HuggingGPT showed them: labelled boxes, tinted regions.

A list of boxes or a stack of masks means little to a reader; the same results on the picture are the answer a
person can check at a glance, and they give a later image task something to work on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL.Image import Image

PALETTE = [(230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48), (145, 30, 180)]
"""Distinct colours, one per label (cycled when there are more labels)."""

TINT = 128
"""How strongly a segment's colour covers the picture (0 to 255)."""


def _colours(results: Sequence[dict[str, Any]]) -> dict[str, tuple[int, int, int]]:
    """One colour per distinct label, in order of first appearance, so a label keeps its colour in a picture."""
    labels = dict.fromkeys(str(result.get("label")) for result in results)
    return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}


def draw_boxes(image: Image, detections: Sequence[dict[str, Any]]) -> Image:
    """`image` with each detection's box outlined and captioned with its label and score."""
    from PIL import ImageDraw

    drawn = image.convert("RGB")
    draw = ImageDraw.Draw(drawn)
    colours = _colours(detections)
    for detection in detections:
        box = detection["box"]
        corners = (box["xmin"], box["ymin"], box["xmax"], box["ymax"])
        colour = colours[str(detection.get("label"))]
        draw.rectangle(corners, outline=colour, width=2)
        draw.text((corners[0] + 2, corners[1] + 2), f"{detection.get('label')} {detection['score']:.2f}", fill=colour)
    return drawn


def tint_segments(image: Image, segments: Sequence[dict[str, Any]]) -> Image:
    """`image` with each segment's mask painted over in its label's colour, half transparent."""
    from PIL import Image as PILImage

    tinted = image.convert("RGB")
    colours = _colours(segments)
    for segment in segments:
        mask = segment["mask"].convert("L").resize(tinted.size)
        alpha = mask.point(lambda value: TINT if value else 0)
        tinted.paste(PILImage.new("RGB", tinted.size, colours[str(segment.get("label"))]), mask=alpha)
    return tinted
