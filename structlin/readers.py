"""Corpus readers: CoNLL-U, CoNLL column files, word<TAB>tag files, plain text, NLTK corpora.

Every file reader streams: it yields one :class:`Sentence` at a time and never holds more than one
sentence block in memory. Files ending in ``.gz`` are decompressed transparently. Lines are decoded
from UTF-8 one by one, so malformed input, invalid UTF-8 included, raises
:class:`~structlin.errors.CorpusFormatError` located as ``PATH:LINE`` (lines counted from 1), and a
missing file raises :class:`~structlin.errors.CorpusNotFoundError`. Readers are generators: nothing
is opened (and no file error is raised) before the first sentence is asked for; invalid options
raise ``ValueError`` at once.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import IO, Union
from collections.abc import Iterable, Iterator, Sequence

from structlin.errors import CorpusFormatError, CorpusNotFoundError, UnknownNameError

Source = Union[str, os.PathLike]
NumberedLines = Iterator[tuple[int, str]]


@dataclass
class Sentence:
    """One sentence: its tokens, their gold tags (``None`` for untagged text) and where it came from.

    ``columns`` keeps every column of a CoNLL column file (one list per token, the fields named by
    ``column_names``) so that other columns (e.g. a POS column for chunking) stay available as
    features; ``conllu_lines`` keeps the raw lines of a CoNLL-U sentence block so that a tagged copy
    can be written with only one column replaced.
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
    column_names: tuple[str, ...] | None = None

    def fields(self, names: Sequence[str]) -> list[tuple[str, ...]]:
        """Every token as the tuple of its ``names`` columns (``word`` is the token itself); a column
        the sentence lacks raises :class:`CorpusFormatError` naming the file and line."""
        available = self.column_names or ()
        missing = [n for n in names if n != "word" and n not in available]
        if missing:
            have = ", ".join(available) if available else "the words only"
            raise CorpusFormatError(self.path or "input", self.line, f"the feature set reads column(s) "
                                    f"{', '.join(missing)}, but this sentence has {have}")
        index = [None if n == "word" else available.index(n) for n in names]
        return [tuple(word if k is None else row[k] for k in index) for word, row in
                zip(self.words, self.columns or [()] * len(self.words))]


# --- Reading lines ---------------------------------------------------------------------------------


def _name(source: Source | IO) -> str:
    """The name to report for a path or an open file."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


@contextmanager
def open_text(source: Source | IO) -> Iterator[NumberedLines]:
    """Open a corpus file (``.gz`` transparently) or wrap an open file; give its numbered lines.

    The context value iterates over ``(line_number, text)`` pairs, numbered from 1, with the line
    ending (``\\n`` or ``\\r\\n``) and a leading UTF-8 byte order mark removed. Paths and binary
    files are decoded line by line, so invalid UTF-8 is reported with its line number; a text file
    object (e.g. ``sys.stdin``) decodes itself, so its decoding errors cannot be placed exactly. An
    already-open file is not closed.
    """
    name = _name(source)
    if not isinstance(source, (str, os.PathLike)):
        yield _numbered(source, name)
        return
    with open_binary(name) as file:
        yield _numbered(file, name)


def open_binary(name: str) -> IO[bytes]:
    """Open a corpus file for reading bytes (``.gz`` transparently); a missing file raises
    :class:`~structlin.errors.CorpusNotFoundError`."""
    opener = gzip.open if name.endswith(".gz") else open
    try:
        return opener(name, "rb")
    except FileNotFoundError:
        raise CorpusNotFoundError(f"corpus file not found: {name}") from None


def _numbered(lines: Iterable[bytes | str], name: str) -> NumberedLines:
    """Number, decode and strip the lines of an open file (see :func:`open_text`)."""
    number = 0
    try:
        for number, line in enumerate(lines, 1):
            if isinstance(line, bytes):
                try:
                    line = line.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise CorpusFormatError(
                        name, number,
                        f"invalid UTF-8: byte {line[err.start]:#04x} at position {err.start + 1} of the line "
                        "(expected UTF-8 text)",
                    ) from None
            if number == 1:
                line = line.removeprefix("\ufeff")
            yield number, line.rstrip("\r\n")
    except UnicodeDecodeError as err:  # raised by a text stream, which decodes ahead of its lines
        raise CorpusFormatError(
            name, None, f"invalid UTF-8 after line {number}: {err} (expected UTF-8 text)"
        ) from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise CorpusFormatError(
            name, number + 1, f"corrupt gzip data: {err} (expected a complete gzip file)"
        ) from None


def _blocks(lines: NumberedLines, name: str, *, need_final_blank: bool):
    """Group numbered lines into blocks (lists of ``(number, text)``) separated by blank lines.

    Any number of blank (or whitespace-only) lines separates two blocks. With ``need_final_blank``
    the last block must be followed by a blank line too.
    """
    block: list[tuple[int, str]] = []
    for number, text in lines:
        if text.strip():
            block.append((number, text))
        elif block:
            yield block
            block = []
    if block:
        if need_final_blank:
            raise CorpusFormatError(
                name, block[-1][0], "file ends mid-sentence (expected a blank line after the last token)"
            )
        yield block


# --- CoNLL-U -------------------------------------------------------------------------------------

_CONLLU_COLUMNS = {"upos": 3, "xpos": 4}
_RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
_EMPTY_NODE_ID = re.compile(r"(0|[1-9][0-9]*)\.[1-9][0-9]*")


def _conllu_column(column: str) -> int:
    """The 0-based index of a CoNLL-U tag column given by name."""
    if column not in _CONLLU_COLUMNS:
        raise ValueError(f"unknown CoNLL-U column {column!r}; accepted: {', '.join(_CONLLU_COLUMNS)}")
    return _CONLLU_COLUMNS[column]


def read_conllu(path: Source, *, column: str = "upos", require_tags: bool = True) -> Iterator[Sentence]:
    """Read the sentences of a CoNLL-U file, tagged with its ``upos`` or ``xpos`` column.

    Multiword-token lines (``3-4``) and empty nodes (``5.1``) are not tokens but stay in
    ``Sentence.conllu_lines``, so that :func:`write_conllu` can reproduce the file. Comment lines
    before the tokens go to ``Sentence.comments``; ``# sent_id = X`` sets ``Sentence.sent_id``.
    With ``require_tags`` an underscore (no tag) in the chosen column is an error.
    """
    index = _conllu_column(column)
    return _read_conllu(path, index, column.upper(), require_tags)


def _read_conllu(path: Source, index: int, label: str, require_tags: bool) -> Iterator[Sentence]:
    name = _name(path)
    with open_text(path) as lines:
        for block in _blocks(lines, name, need_final_blank=True):
            yield _conllu_sentence(block, name, index, label, require_tags)


def _conllu_sentence(block, name: str, index: int, label: str, require_tags: bool) -> Sentence:
    """Parse one CoNLL-U sentence block (see :func:`read_conllu`)."""
    comments: list[str] = []
    words: list[str] = []
    tags: list[str] = []
    word_lines: list[int] = []
    sent_id = None
    for i, (number, text) in enumerate(block):
        if text.startswith("#"):
            if len(comments) < i:
                raise CorpusFormatError(
                    name, number, "comment after a token line (expected comments only before the tokens)"
                )
            comments.append(text)
            key, equals, value = text[1:].partition("=")
            if equals and key.strip() == "sent_id":
                sent_id = value.strip()
            continue
        fields = text.split("\t")
        if len(fields) != 10:
            raise CorpusFormatError(name, number, f"expected 10 tab-separated columns, found {len(fields)}")
        if fields[0] != str(len(words) + 1):
            _check_non_word_id(fields[0], len(words), name, number)
            continue
        tag = fields[index]
        if not fields[1]:
            raise CorpusFormatError(name, number, "empty FORM (expected a word form in column 2)")
        if not tag or (require_tags and tag == "_"):
            raise CorpusFormatError(name, number, f"empty {label} tag (expected a tag in column {index + 1})")
        words.append(fields[1])
        tags.append(tag)
        word_lines.append(i)
    if not words:
        raise CorpusFormatError(
            name, block[0][0], "sentence without word lines (expected at least one line with an integer ID)"
        )
    return Sentence(
        words, tags, sent_id=sent_id, comments=comments, path=name, line=block[0][0],
        conllu_lines=[text for _, text in block], conllu_word_lines=word_lines,
    )


def _check_non_word_id(token_id: str, count: int, name: str, number: int) -> None:
    """Accept a multiword range or empty node ID after ``count`` words; reject any other ID."""
    if match := _RANGE_ID.fullmatch(token_id):
        if int(match[1]) != count + 1 or int(match[2]) < count + 1:
            raise CorpusFormatError(
                name, number,
                f"invalid multiword token range {token_id} (expected {count + 1}-N with N >= {count + 1})",
            )
    elif match := _EMPTY_NODE_ID.fullmatch(token_id):
        if int(match[1]) != count:
            raise CorpusFormatError(
                name, number, f"empty node {token_id} out of place (expected {count}.N after word {count})"
            )
    elif token_id.isascii() and token_id.isdigit():
        raise CorpusFormatError(name, number, f"word ID {token_id} out of order (expected {count + 1})")
    else:
        raise CorpusFormatError(
            name, number,
            f"invalid ID {token_id!r} (expected an integer word ID, a range like 1-2 or an empty node like 1.1)",
        )


def write_conllu(
    sentences: Iterable[Sentence], tags: Iterable[Sequence[str]], out: IO[str], *, column: str = "upos"
) -> None:
    """Write CoNLL-U sentences read by :func:`read_conllu` with one tag column replaced.

    ``tags`` holds one tag list per sentence. Every other byte of each block is written as read, and
    each block is followed by one blank line, so a well-formed input file (``\\n`` line ends, one
    blank line after each sentence) is reproduced exactly apart from the chosen column.
    """
    index = _conllu_column(column)
    missing = object()
    for number, (sentence, new_tags) in enumerate(zip_longest(sentences, tags, fillvalue=missing), 1):
        if sentence is missing:
            raise ValueError(f"more tag lists than sentences: tag list {number} has no sentence")
        where = f"sentence {sentence.sent_id!r}" if sentence.sent_id else f"sentence {number}"
        if new_tags is missing:
            raise ValueError(f"fewer tag lists than sentences: no tags for {where}")
        if sentence.conllu_lines is None or sentence.conllu_word_lines is None:
            raise ValueError(f"{where} has no CoNLL-U lines (expected a Sentence from read_conllu)")
        new_tags = list(new_tags)
        if len(new_tags) != len(sentence.conllu_word_lines):
            raise ValueError(f"{where} has {len(sentence.conllu_word_lines)} words but {len(new_tags)} tags")
        lines = list(sentence.conllu_lines)
        for i, tag in zip(sentence.conllu_word_lines, new_tags):
            if not tag or any(c.isspace() for c in tag):
                raise ValueError(f"{where}: invalid tag {tag!r} (expected a non-empty tag without whitespace)")
            fields = lines[i].split("\t")
            fields[index] = tag
            lines[i] = "\t".join(fields)
        out.write("\n".join(lines) + "\n\n")


# --- Column files, word<TAB>tag files, plain text ----------------------------------------------------


def read_columns(
    path: Source, *, columns: Sequence[str], word: str = "word", tag: str | None = None, sep: str | None = None
) -> Iterator[Sentence]:
    """Read a CoNLL-style column file: one token per line, a blank line after each sentence.

    ``columns`` names the fields of a line (e.g. ``("word", "pos", "chunk")``); ``word`` and ``tag``
    name the token and tag columns (``tag=None``: untagged). Fields are separated by whitespace
    (``sep=None``) or by ``sep``. ``Sentence.columns`` keeps all fields. ``-DOCSTART-`` lines separate
    documents and are skipped. The last sentence need not be followed by a blank line.
    """
    columns = tuple(columns)
    if len(set(columns)) != len(columns):
        raise ValueError(f"duplicate column names in {columns}")
    for role, column in (("word", word), ("tag", tag)):
        if column is not None and column not in columns:
            raise ValueError(f"{role} column {column!r} is not among the columns {columns}")
    tag_index = None if tag is None else columns.index(tag)
    return _read_columns(path, columns, columns.index(word), tag_index, sep)


def _read_columns(
    path: Source, columns: tuple[str, ...], word_index: int, tag_index: int | None, sep: str | None
) -> Iterator[Sentence]:
    name = _name(path)
    kind = "whitespace-separated" if sep is None else "tab-separated" if sep == "\t" else f"{sep!r}-separated"
    expected = f"expected {len(columns)} {kind} columns ({', '.join(columns)})"
    with open_text(path) as lines:
        lines = ((number, "" if text.startswith("-DOCSTART-") else text) for number, text in lines)
        for block in _blocks(lines, name, need_final_blank=False):
            rows = []
            for number, text in block:
                fields = text.split(sep)
                if len(fields) != len(columns):
                    raise CorpusFormatError(name, number, f"{expected}, found {len(fields)}")
                for index, what in ((word_index, "word"), (tag_index, "tag")):
                    if index is not None and not fields[index]:
                        raise CorpusFormatError(
                            name, number, f"empty {what} (expected a value in column {columns[index]!r})"
                        )
                rows.append(fields)
            yield Sentence(
                words=[row[word_index] for row in rows],
                tags=None if tag_index is None else [row[tag_index] for row in rows],
                path=name, line=block[0][0], columns=rows, column_names=columns,
            )


def read_word_tag(path: Source) -> Iterator[Sentence]:
    """Read ``word<TAB>tag`` lines (a word may contain spaces), a blank line after each sentence.

    This is :func:`read_columns` with the columns ``("word", "tag")`` separated by one tab.
    """
    return read_columns(path, columns=("word", "tag"), tag="tag", sep="\t")


def read_text(source: Source | IO) -> Iterator[Sentence]:
    """Read tokenized text, one sentence per line, tokens separated by whitespace; no tags.

    ``source`` is a path or an open file (e.g. ``sys.stdin``). An empty line gives an empty sentence,
    so that output written sentence by sentence stays aligned with the input lines.
    """
    name = _name(source)
    with open_text(source) as lines:
        for number, text in lines:
            yield Sentence(words=text.split(), path=name, line=number)


# --- NLTK corpora ----------------------------------------------------------------------------------

# The tagset of each well-known NLTK tagged corpus, as named by nltk.tag.mapping.
_NLTK_SOURCE_TAGSETS = {"treebank": "en-ptb", "brown": "en-brown", "conll2000": "en-ptb", "masc_tagged": "en-ptb"}
_NLTK_TAGSETS = ("universal",)


def read_nltk(
    corpus,
    *,
    tagset: str | None = None,
    source_tagset: str | None = None,
    fileids=None,
    drop_traces: bool = False,
) -> Iterator[Sentence]:
    """Read the tagged sentences of an NLTK corpus reader, or of one named in ``nltk.corpus``.

    ``corpus`` is anything with a ``tagged_sents()`` method (e.g. ``nltk.corpus.treebank``) or its
    name (``"treebank"``, ``"brown"``, ``"conll2000"`` ...). ``tagset="universal"`` maps the tags with
    ``nltk.tag.mapping.map_tag`` from ``source_tagset``, which defaults to the known tagset of
    treebank, brown, conll2000 and masc_tagged. Empty elements of the Penn Treebank (tag ``-NONE-``,
    words such as ``*-1``, ``0`` or ``*T*-1``) are kept as tokens unless ``drop_traces`` is set;
    they are dropped before mapping, which would turn their tag into ``X``. A token with an empty
    word or no tag is an error.
    """
    if tagset is not None and tagset not in _NLTK_TAGSETS:
        raise ValueError(f"unknown tagset {tagset!r}; accepted: {', '.join(_NLTK_TAGSETS)} (or None)")
    import nltk.corpus

    if isinstance(corpus, str):
        name, reader = corpus, _nltk_reader(corpus)
    else:
        name = next((n for n in _NLTK_SOURCE_TAGSETS if getattr(nltk.corpus, n, None) is corpus), None)
        reader = corpus
    source = source_tagset or _NLTK_SOURCE_TAGSETS.get(name)
    if tagset and not source:
        raise ValueError(f"the tagset of {reader!r} is not known; pass source_tagset= (e.g. 'en-ptb')")
    label = f"nltk:{name}" if name else type(reader).__name__
    return _read_nltk(reader, label, source if tagset else None, fileids, drop_traces)


def _nltk_reader(name: str):
    """The corpus reader called ``name`` in ``nltk.corpus``."""
    import nltk.corpus
    from nltk.corpus.reader.api import CorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    reader = getattr(nltk.corpus, name, None)
    if isinstance(reader, (LazyCorpusLoader, CorpusReader)):
        try:
            if hasattr(reader, "tagged_sents"):  # loads a lazy reader
                return reader
        except LookupError:
            raise CorpusNotFoundError(
                f"NLTK corpus {name!r} is not installed (run nltk.download({name!r}) or set NLTK_DATA)"
            ) from None
    raise UnknownNameError("NLTK corpus", name, _NLTK_SOURCE_TAGSETS)


def _read_nltk(reader, label: str, source: str | None, fileids, drop_traces: bool) -> Iterator[Sentence]:
    from nltk.tag.mapping import map_tag

    sents = reader.tagged_sents() if fileids is None else reader.tagged_sents(fileids)
    for number, pairs in enumerate(sents, 1):
        if drop_traces:
            pairs = [(word, tag) for word, tag in pairs if tag != "-NONE-"]
        for word, tag in pairs:
            if not word or not tag:
                problem = "empty word" if not word else f"token {word!r} has no tag"
                raise CorpusFormatError(label, None, f"sentence {number}: {problem} (expected a word and a tag)")
        yield Sentence(
            words=[word for word, _ in pairs],
            tags=[tag if source is None else map_tag(source, "universal", tag) for _, tag in pairs],
            path=label,
        )


# --- choosing a reader ---------------------------------------------------------------------------

FILE_FORMATS = ("conllu", "word-tag", "columns", "text")


def guess_format(path: Source) -> str:
    """``conllu`` for ``*.conllu[.gz]`` files, ``word-tag`` otherwise."""
    name = str(path)[:-3] if str(path).endswith(".gz") else str(path)
    return "conllu" if name.endswith(".conllu") else "word-tag"


def read_file(path: Source, *, format: str | None = None, column: str = "upos", columns: Sequence[str] | None = None,
              tag: str | None = None, require_tags: bool = True) -> Iterator[Sentence]:
    """Read a corpus file in one of :data:`FILE_FORMATS` (guessed from the name when ``format`` is None).

    ``column`` is the CoNLL-U tag column; ``columns``/``tag`` describe a column file (the tag column
    defaults to the last one).
    """
    format = format or guess_format(path)
    if format == "conllu":
        return read_conllu(path, column=column, require_tags=require_tags)
    if format == "word-tag":
        return read_word_tag(path)
    if format == "columns":
        if not columns:
            raise ValueError("a column file needs its column names, e.g. word,pos,chunk")
        return read_columns(path, columns=columns, tag=tag or columns[-1])
    if format == "text":
        return read_text(path)
    raise ValueError(f"unknown file format {format!r}; accepted: {', '.join(FILE_FORMATS)}")
