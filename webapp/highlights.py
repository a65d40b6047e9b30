"""A snippet's highlights as pieces: what the window wraps in <mark> and the CLI prints in bold."""
from __future__ import annotations


def pieces(text: str, highlights: list[list[int]] | None, limit: int | None = None) -> list[tuple[str, bool]]:
    """Split text (cut to limit characters) into (piece, highlighted) by [start, end) offsets; where spans overlap,
    the first one wins."""
    text = text if limit is None else text[:limit]
    out, last = [], 0
    for start, end in sorted(highlights or []):
        if start < last or start >= len(text):
            continue
        end = min(end, len(text))
        out += [(text[last:start], False), (text[start:end], True)]
        last = end
    out.append((text[last:], False))
    return [(piece, marked) for piece, marked in out if piece]
