"""Corpus readers: CoNLL-U, CoNLL column files, word<TAB>tag files, plain text, NLTK corpora."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Sentence:
    """One sentence: its tokens, their gold tags (``None`` for untagged text) and where it came from.

    ``columns`` keeps every column of a CoNLL column file (one list per token) so that other columns
    (e.g. a POS column for chunking) stay available as features; ``conllu_lines`` keeps the raw lines
    of a CoNLL-U sentence block so that a tagged copy can be written with only one column replaced.
    """

    words: list[str]
    tags: list[str] | None = None
    sent_id: str | None = None
    comments: list[str] = field(default_factory=list)
    path: str | None = None
    line: int | None = None
    columns: list[list[str]] | None = None
    conllu_lines: list[str] | None = None
    conllu_word_lines: list[int] | None = None
