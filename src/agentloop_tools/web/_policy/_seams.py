"""Where agentloop shows a space between two text parts that the stored text does not have.

``join_text`` puts a space at some seams: "see" + "evil.example" shows as "see
evil.example". Only the tokens touching such a seam can read differently, so the
audit reads a bounded window around each one again.
"""

from __future__ import annotations

# How far a token is read around a seam, and how far back the audit looks for what
# opens a link: bounded, so a long answer is read in linear time.
WINDOW = 2048


def seam_windows(texts: list[str]) -> list[tuple[int, int, int]]:
    """``(left, seam, right)`` offsets in the joined text: each spaced seam and its window."""
    text = "".join(texts)
    return [
        (
            max(_last_space(text, seam), seam - WINDOW),
            seam,
            min(_next_space(text, seam), seam + WINDOW),
        )
        for seam in _spaced_seams(texts)
    ]


def _spaced_seams(texts: list[str]) -> list[int]:
    """Offsets in the joined text where ``join_text`` shows a space that is not there."""
    if len(texts) < 2:
        return []  # no seam; and auditing one text (audit_text) need not load agentloop
    # Imported here, where parts are audited: building a policy does not load agentloop.
    from agentloop.transcript import TextPart, join_text

    seams = []
    offset = 0
    previous = ""
    for text in texts:
        if previous and text:
            pair = join_text([TextPart(text=previous[-1]), TextPart(text=text[0])])
            if len(pair) == 3:
                seams.append(offset)
        if text:
            previous = text
        offset += len(text)
    return seams


def _last_space(text: str, position: int) -> int:
    for index in range(position - 1, max(position - WINDOW, 0) - 1, -1):
        if text[index].isspace():
            return index + 1
    return max(position - WINDOW, 0)


def _next_space(text: str, position: int) -> int:
    for index in range(position, min(position + WINDOW, len(text))):
        if text[index].isspace():
            return index
    return min(position + WINDOW, len(text))
