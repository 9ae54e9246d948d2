"""Raw text into tokens, one line being one sentence: what ``structlin tag --tokenize`` does to its input.

The rules are the Penn Treebank's, as NLTK's :class:`~nltk.tokenize.TreebankWordTokenizer` applies them:
regular expressions only, so nothing is downloaded (NLTK's ``word_tokenize`` would first split sentences
with the punkt model, a download).  Punctuation and brackets become tokens of their own, and so do clitics
(``can't`` → ``ca n't``); a period does at the end of the line only: ``the mat.`` → ``the mat .``, while
``Mr. Smith`` stays as it is.  Tokens are kept as the line writes them: unlike the tokenizer's own
``tokenize``, a double quote stays ``"`` rather than becoming the Treebank's opening or closing quote (two
backquotes, two apostrophes), which taggers trained on other corpora (Universal Dependencies) never saw.
"""

from __future__ import annotations

from nltk.tokenize import TreebankWordTokenizer

_TREEBANK = TreebankWordTokenizer()


def tokenize(line: str) -> list[str]:
    """The tokens of the sentence ``line``, each a piece of it as written (see the module's docstring)."""
    return [line[start:end] for start, end in _TREEBANK.span_tokenize(line)]
