"""The theme's accent colour as the pages draw it: links, summaries, focus rings and chart bars."""

from __future__ import annotations

# WCAG 2 (1.4.3, level AA): text, links among it, needs 4.5:1 against its background. Focus rings and chart
# bars (1.4.11, 3:1) are then readable too.
TEXT_CONTRAST = 4.5
# The light theme's backgrounds that links are drawn on (style.css: --bg, --soft, --notice-bg): the page, and
# the tinted boxes of passages, references and notices.
LIGHT_BACKGROUNDS = ("#ffffff", "#f6f8fa", "#fff8e5")


def relative_luminance(colour: str) -> float:
    """WCAG 2's relative luminance of a #rrggbb colour: 0 for black, 1 for white."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(foreground: str, background: str) -> float:
    lighter, darker = sorted((relative_luminance(foreground), relative_luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def readable_accent(colour: str) -> str:
    """The reviewer's accent (#rrggbb), darkened towards black just enough for links in it to be read on each
    light background: a light accent (a pale yellow, a pastel) left links and summaries all but invisible, as
    they are drawn in it. An accent dark enough already is kept as written; the hue is kept either way. (The
    dark theme mixes the accent with white, which is readable on its dark background whatever the accent.)"""
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    for kept in range(100, 0, -1):  # percent of each channel kept
        darker = "#" + "".join(f"{round(channel * kept / 100):02x}" for channel in (red, green, blue))
        if all(contrast(darker, background) >= TEXT_CONTRAST for background in LIGHT_BACKGROUNDS):
            return darker
    return "#000000"
