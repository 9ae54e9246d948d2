"""Stripping of Usenet posts (20 Newsgroups): the headers, the signature block (footer) and quoted
lines, as scikit-learn's ``fetch_20newsgroups(remove=)`` does. It is text processing, not a file
format: :func:`structlin.documents.formats.read_folders` applies it to every file it reads when given
``strip``, and the same ``strip`` option is checked here, once, for every caller.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from structlin.errors import OptionValueError

STRIP_PARTS = ("headers", "footers", "quotes")

# A quoted line, or one that introduces a quotation (scikit-learn's rule, applied to each line).
_QUOTE_LINE = re.compile(r"^(?:In article|Quoted from|\||>)|writes in|writes:|wrote:|says:|said:")


def _strip_parts(strip) -> frozenset[str]:
    """Check a ``strip`` option: one of, or a collection of, :data:`STRIP_PARTS` (else
    :class:`~structlin.errors.OptionValueError`, listing them)."""
    parts = (strip,) if isinstance(strip, str) else tuple(strip)
    for part in parts:
        if part not in STRIP_PARTS:
            raise OptionValueError(f"unknown strip value {part!r}; accepted: {', '.join(STRIP_PARTS)}")
    return frozenset(parts)


def strip_usenet(text: str, strip: Iterable[str] | str) -> str:
    """Remove the parts ``strip`` names from a Usenet post, as scikit-learn's ``fetch_20newsgroups(remove=)``.

    They are removed in this order, whatever the order given:

    * ``headers``: everything up to and including the first empty line (all of it if there is none);
    * ``footers``: the signature block: everything from the last line that is empty or made of
      hyphens only (``--``), in the text stripped of surrounding whitespace; unchanged when that line
      is the first one or there is none;
    * ``quotes``: every line that starts with ``>``, ``|``, ``In article`` or ``Quoted from``, or that
      contains ``writes:``, ``writes in``, ``wrote:``, ``says:`` or ``said:``.
    """
    parts = _strip_parts(strip)
    if "headers" in parts:
        blank = text.find("\n\n")
        text = "" if blank < 0 else text[blank + 2:]
    if "footers" in parts:
        lines = text.strip().split("\n")
        for number in range(len(lines) - 1, 0, -1):  # the first line never starts a signature
            if not lines[number].strip().strip("-"):
                text = "\n".join(lines[:number])
                break
    if "quotes" in parts:
        text = "\n".join(line for line in text.split("\n") if not _QUOTE_LINE.search(line))
    return text
