"""Tests of structlin.readers: small inline files for every format and error, then the real corpora."""

from __future__ import annotations

import gzip
import io
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structlin.cli.commands import _text_sentence
from structlin.errors import CorpusFormatError, CorpusNotFoundError, UnknownNameError
from structlin.readers import (
    Sentence,
    open_text,
    read_columns,
    read_conllu,
    read_file,
    read_nltk,
    read_slash_tags,
    read_text,
    read_word_tag,
    write_conllu,
)

UNIVERSAL = {"ADJ", "ADP", "ADV", "CONJ", "DET", "NOUN", "NUM", "PRT", "PRON", "VERB", ".", "X"}

CONLLU = (
    "# newdoc id = d1\n"
    "# sent_id = s1\n"
    "# text = I can't go.\n"
    "1\tI\tI\tPRON\tPRP\t_\t3\tnsubj\t_\t_\n"
    "2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tca\tcan\tAUX\tMD\t_\t4\taux\t_\t_\n"
    "3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_\n"
    "4\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\tSpaceAfter=No\n"
    "4.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t4:conj\tCopyOf=4\n"
    "5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_\n"
    "\n"
    "# sent_id = s2\n"
    "1\tNew York\tNew York\tPROPN\tNNP\t_\t0\troot\t_\t_\n"
    "\n"
)

WORD_LINE = "1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n"


def write(tmp_path: Path, text: str | bytes, name: str = "corpus.txt") -> Path:
    """Write ``text`` to ``tmp_path / name`` (gzip-compressed when the name ends in .gz)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def format_error(reader, path: Path, **options) -> CorpusFormatError:
    with pytest.raises(CorpusFormatError) as info:
        list(reader(path, **options))
    return info.value


# --- open_text ---------------------------------------------------------------------------------------


def test_open_text_numbers_lines_and_strips_line_ends_and_bom(tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbfa b\r\nc\n\nd")
    with open_text(path) as lines:
        assert list(lines) == [(1, "a b"), (2, "c"), (3, ""), (4, "d")]


def test_a_byte_order_mark_where_joined_files_meet_is_no_text(tmp_path):
    """``cat a.tsv b.tsv`` of two files that each begin with a BOM: the second mark begins a line in the middle
    (it joined the next word, and made CoNLL-U's comment line a token line); a mark inside a line stays."""
    bom = b"\xef\xbb\xbf"
    path = write(tmp_path, bom + b"The\tDET\n\n" + bom + b"The\tDET\nx\xef\xbb\xbfy\tX\n")
    with open_text(path) as lines:
        assert list(lines) == [(1, "The\tDET"), (2, ""), (3, "The\tDET"), (4, "x\ufeffy\tX")]
    assert [s.words for s in read_word_tag(path)] == [["The"], ["The", "x\ufeffy"]]
    joined = read_conllu(write(tmp_path, bom + CONLLU.encode() + bom + CONLLU.encode(), "joined.conllu"))
    assert [s.sent_id for s in joined] == ["s1", "s2", "s1", "s2"]


def test_open_text_reads_gzip_and_open_files(tmp_path):
    path = write(tmp_path, "x\ny\n", "corpus.txt.gz")
    with open_text(str(path)) as lines:
        assert list(lines) == [(1, "x"), (2, "y")]
    with open_text(io.StringIO("x\ny\n")) as lines:
        assert list(lines) == [(1, "x"), (2, "y")]
    with open_text(io.BytesIO(b"x\ny\n")) as lines:
        assert list(lines) == [(1, "x"), (2, "y")]


def test_open_text_reports_corrupt_gzip(tmp_path):
    path = tmp_path / "cut.txt.gz"
    path.write_bytes(gzip.compress(b"line\n" * 1000)[:-20])
    with pytest.raises(CorpusFormatError, match="corrupt gzip data"):
        with open_text(path) as lines:
            list(lines)


# --- read_conllu ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["corpus.conllu", "corpus.conllu.gz"])
def test_read_conllu(tmp_path, name):
    path = write(tmp_path, CONLLU, name)
    first, second = read_conllu(path)
    assert first.words == ["I", "ca", "n't", "go", "."]
    assert first.tags == ["PRON", "AUX", "PART", "VERB", "PUNCT"]
    assert first.sent_id == "s1"
    assert first.comments == ["# newdoc id = d1", "# sent_id = s1", "# text = I can't go."]
    assert (first.path, first.line) == (str(path), 1)
    assert first.conllu_lines == CONLLU.split("\n\n")[0].split("\n")
    assert first.conllu_word_lines == [3, 5, 6, 7, 9]
    assert (second.words, second.tags, second.sent_id, second.line) == (["New York"], ["PROPN"], "s2", 12)


def test_read_conllu_xpos_and_str_path(tmp_path):
    path = write(tmp_path, CONLLU)
    assert [s.tags for s in read_conllu(str(path), column="xpos")] == [["PRP", "MD", "RB", "VB", "."], ["NNP"]]


def test_read_conllu_rejects_unknown_column(tmp_path):
    with pytest.raises(ValueError, match="upos, xpos"):
        read_conllu(tmp_path / "unused.conllu", column="deprel")


def test_read_conllu_several_blank_lines_and_no_comments(tmp_path):
    path = write(tmp_path, "\n\n" + WORD_LINE + "\n\n\n" + WORD_LINE + "\n")
    sentences = list(read_conllu(path))
    assert [(s.words, s.sent_id, s.comments, s.line) for s in sentences] == [
        (["Hi"], None, [], 3),
        (["Hi"], None, [], 7),
    ]


def test_read_conllu_untagged(tmp_path):
    path = write(tmp_path, WORD_LINE.replace("INTJ", "_") + "\n")
    assert next(read_conllu(path, require_tags=False)).tags == ["_"]
    error = format_error(read_conllu, path)
    assert str(error) == f"{path}:1: empty UPOS tag (expected a tag in column 4)"
    error = format_error(read_conllu, write(tmp_path, WORD_LINE.replace("UH", "_") + "\n"), column="xpos")
    assert "empty XPOS tag" in str(error)


# The text after a good first sentence (lines 1-2), the line of the error, and the message.
BAD_CONLLU = [
    ("# sent_id = s2\n1\tHi\thi\tINTJ\tUH\t_\t0\n", 4, "expected 10 tab-separated columns, found 7"),
    ("1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\textra\n", 3, "expected 10 tab-separated columns, found 11"),
    ("1 Hi hi INTJ UH _ 0 root _ _\n", 3, "expected 10 tab-separated columns, found 1"),
    (WORD_LINE.replace("1", "x", 1), 3, "invalid ID 'x'"),
    (WORD_LINE.replace("1", "1.5.2", 1), 3, "invalid ID '1.5.2'"),
    (WORD_LINE.replace("1", "0", 1), 3, "word ID 0 out of order (expected 1)"),
    (WORD_LINE.replace("1", "2", 1), 3, "word ID 2 out of order (expected 1)"),
    (WORD_LINE + WORD_LINE, 4, "word ID 1 out of order (expected 2)"),
    (WORD_LINE + WORD_LINE.replace("1", "3", 1), 4, "word ID 3 out of order (expected 2)"),
    (WORD_LINE.replace("1", "3-2", 1), 3, "invalid multiword token range 3-2"),
    (WORD_LINE.replace("1", "2-3", 1), 3, "invalid multiword token range 2-3 (expected 1-N"),
    (WORD_LINE.replace("1", "1.1", 1), 3, "empty node 1.1 out of place (expected 0.N"),
    (WORD_LINE.replace("\tHi\t", "\t\t"), 3, "empty FORM"),
    ("# sent_id = s2\n" + WORD_LINE.replace("INTJ", ""), 4, "empty UPOS tag (expected a tag in column 4)"),
    ("\n# sent_id = only-comments\n", 4, "sentence without word lines"),
    ("# c\n1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n", 3, "sentence without word lines"),
    (WORD_LINE + "# late\n", 4, "comment after a token line (expected comments only before the tokens)"),
    (b"# ok\n1\tH\xe9\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n", 4, "invalid UTF-8: byte 0xe9 at position 4 of the line"),
]


@pytest.mark.parametrize("name", ["bad.conllu", "bad.conllu.gz"])
@pytest.mark.parametrize("bad_text, number, message", BAD_CONLLU)
def test_read_conllu_errors(tmp_path, name, bad_text, number, message):
    bad = bad_text if isinstance(bad_text, bytes) else bad_text.encode()
    path = write(tmp_path, (WORD_LINE + "\n").encode() + bad + b"\n", name)
    error = format_error(read_conllu, path)
    assert (error.path, error.line) == (str(path), number)
    assert str(error).startswith(f"{path}:{number}: {message}")


def test_read_conllu_yields_good_sentences_before_an_error(tmp_path):
    sentences = read_conllu(write(tmp_path, WORD_LINE + "\n" + "1\tbad\n\n"))
    assert next(sentences).words == ["Hi"]
    with pytest.raises(CorpusFormatError, match=r":3: expected 10"):
        next(sentences)


@pytest.mark.parametrize("ending", ["", "\n"])
def test_read_conllu_file_ending_mid_sentence(tmp_path, ending):
    path = write(tmp_path, WORD_LINE + "\n" + WORD_LINE + WORD_LINE.replace("1", "2", 1).rstrip("\n") + ending)
    error = format_error(read_conllu, path)
    assert str(error) == f"{path}:4: file ends mid-sentence (expected a blank line after the last token)"


def test_read_conllu_empty_file(tmp_path):
    assert list(read_conllu(write(tmp_path, ""))) == []


@pytest.mark.parametrize(
    "reader", [read_conllu, read_word_tag, read_text, lambda path: read_columns(path, columns=["word"])]
)
def test_missing_file(tmp_path, reader):
    path = tmp_path / "nowhere" / "missing.txt"
    with pytest.raises(CorpusNotFoundError, match="missing.txt") as info:
        list(reader(path))
    assert str(path) in str(info.value)
    assert isinstance(info.value, FileNotFoundError)


# --- write_conllu ------------------------------------------------------------------------------------


def written(sentences, tags, **options) -> str:
    out = io.StringIO()
    write_conllu(sentences, tags, out, **options)
    return out.getvalue()


@pytest.mark.parametrize("column", ["upos", "xpos"])
def test_write_conllu_round_trip_is_identical(tmp_path, column):
    sentences = list(read_conllu(write(tmp_path, CONLLU), column=column))
    assert written(sentences, [s.tags for s in sentences], column=column) == CONLLU


@pytest.mark.parametrize("column, index", [("upos", 3), ("xpos", 4)])
def test_write_conllu_replaces_only_the_chosen_column(tmp_path, column, index):
    sentences = list(read_conllu(write(tmp_path, CONLLU)))
    new_tags = [[f"T{i}" for i in range(len(s.words))] for s in sentences]
    output = written(sentences, new_tags, column=column)
    assert list(read_conllu(write(tmp_path, output, "out.conllu"), column=column))[0].tags == new_tags[0]
    changed = []
    for old, new in zip(CONLLU.split("\n"), output.split("\n"), strict=True):
        old_fields, new_fields = old.split("\t"), new.split("\t")
        changed.append([i for i, (a, b) in enumerate(zip(old_fields, new_fields, strict=True)) if a != b])
    assert changed == [[]] * 3 + [[index], [], [index], [index], [index], [], [index]] + [[]] * 2 + [[index]] + [[]] * 2


def test_write_conllu_mismatches(tmp_path):
    sentences = list(read_conllu(write(tmp_path, CONLLU)))
    with pytest.raises(ValueError, match="sentence 's2' has 1 words but 2 tags"):
        written(sentences, [sentences[0].tags, ["X", "Y"]])
    sentences[1].sent_id = None
    with pytest.raises(ValueError, match="sentence 2 has 1 words but 0 tags"):
        written(sentences, [sentences[0].tags, []])
    with pytest.raises(ValueError, match="no tags for sentence 2"):
        written(sentences, [sentences[0].tags])
    with pytest.raises(ValueError, match="more tag lists than sentences"):
        written(sentences, [s.tags for s in sentences] + [["X"]])
    with pytest.raises(ValueError, match="invalid tag 'A B'"):
        written(sentences[1:], [["A B"]])
    with pytest.raises(ValueError, match="no CoNLL-U lines"):
        written([Sentence(words=["a"])], [["X"]])


# --- read_columns, read_word_tag ------------------------------------------------------------------


COLUMNS = "-DOCSTART- -X- O\n\nHe PRP B-NP\nran VBD B-VP\n\n\n# # B-NP\n5 CD I-NP\n"


@pytest.mark.parametrize("name", ["chunks.txt", "chunks.txt.gz"])
def test_read_columns(tmp_path, name):
    path = write(tmp_path, COLUMNS, name)
    first, second = read_columns(path, columns=("word", "pos", "chunk"), tag="chunk")
    assert (first.words, first.tags, first.line, first.path) == (["He", "ran"], ["B-NP", "B-VP"], 3, str(path))
    assert first.columns == [["He", "PRP", "B-NP"], ["ran", "VBD", "B-VP"]]
    assert (second.words, second.tags, second.line) == (["#", "5"], ["B-NP", "I-NP"], 7)  # "#" is a word here
    assert [s.tags for s in read_columns(path, columns=("word", "pos", "chunk"), tag="pos")][0] == ["PRP", "VBD"]
    assert next(read_columns(path, columns=("w", "pos", "chunk"), word="w")).tags is None


def test_read_columns_with_separator(tmp_path):
    path = write(tmp_path, "New York\tNNP\nis\t\n\n")
    first = next(read_columns(path, columns=("word", "pos"), sep="\t"))
    assert first.words == ["New York", "is"]
    error = format_error(read_columns, path, columns=("word", "pos"), tag="pos", sep="\t")
    assert str(error) == f"{path}:2: empty tag (expected a value in column 'pos')"


def test_read_columns_errors(tmp_path):
    path = write(tmp_path, "a DT B-NP\nb NN\n")
    error = format_error(read_columns, path, columns=("word", "pos", "chunk"), tag="chunk")
    assert str(error) == f"{path}:2: expected 3 whitespace-separated columns (word, pos, chunk), found 2"
    path = write(tmp_path, b"a DT\n\nb\xff NN\n")
    error = format_error(read_columns, path, columns=("word", "pos"))
    assert (error.line, "invalid UTF-8" in error.message) == (3, True)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"columns": ("word", "pos"), "tag": "chunk"}, "tag column 'chunk'"),
        ({"columns": ("token", "pos")}, "word column 'word'"),
        ({"columns": ("word", "word")}, "duplicate"),
    ],
)
def test_read_columns_rejects_bad_options(tmp_path, options, message):
    with pytest.raises(ValueError, match=message):
        read_columns(tmp_path / "unused.txt", **options)


def test_read_word_tag(tmp_path):
    path = write(tmp_path, "New York\tNNP\nis\tVBZ\n\n\n.\t.")  # no blank line (nor newline) at the end
    assert [(s.words, s.tags, s.line) for s in read_word_tag(path)] == [
        (["New York", "is"], ["NNP", "VBZ"], 1),
        (["."], ["."], 5),
    ]


@pytest.mark.parametrize(
    "line, message",
    [
        ("word NN", "expected 2 tab-separated columns (word, tag), found 1"),
        ("word\tNN\tB-NP", "expected 2 tab-separated columns (word, tag), found 3"),
        ("\tNN", "empty word"),
        ("word\t", "empty tag"),
    ],
)
def test_read_word_tag_errors(tmp_path, line, message):
    path = write(tmp_path, f"a\tDT\n\n{line}\n", "bad.txt.gz")
    assert str(format_error(read_word_tag, path)).startswith(f"{path}:3: {message}")


# --- read_text ---------------------------------------------------------------------------------------


def test_read_text(tmp_path):
    text = "I  saw\tit .\n\n  \nok\n"
    expected = [(["I", "saw", "it", "."], 1), ([], 2), ([], 3), (["ok"], 4)]
    for source in (write(tmp_path, text), write(tmp_path, text, "t.txt.gz"), io.StringIO(text)):
        sentences = list(read_text(source))
        assert [(s.words, s.line) for s in sentences] == expected
        assert {s.tags for s in sentences} == {None}
    assert next(read_text(write(tmp_path, text))).path == str(tmp_path / "corpus.txt")


def test_read_text_invalid_utf8(tmp_path):
    path = write(tmp_path, b"ok\nbad \xc3(\n")
    with pytest.raises(CorpusFormatError, match=rf"{path}:2: invalid UTF-8: byte 0xc3 at position 5 of the line"):
        list(read_text(path))


def test_read_text_streams_with_invalid_utf8():
    with pytest.raises(CorpusFormatError, match=r"<stream>:2: invalid UTF-8"):
        list(read_text(io.BytesIO(b"ok\n\xff\n")))
    with pytest.raises(CorpusFormatError, match=r"<stream>: invalid UTF-8 after line 0"):  # decoded ahead
        list(read_text(io.TextIOWrapper(io.BytesIO(b"ok\n\xff\n"), encoding="utf-8")))


# --- read_nltk (a stand-in reader) ------------------------------------------------------------------


class FakeReader:
    """The part of an NLTK tagged corpus reader that read_nltk uses."""

    def __init__(self, sents):
        self.sents = sents

    def tagged_sents(self, fileids=None):
        return self.sents if fileids is None else self.sents[: len(fileids)]


TRACED = [[("It", "PRP"), ("*-1", "-NONE-"), ("ran", "VBD")], [("Go", "VB")]]


def test_read_nltk_reader_object_keeps_or_drops_traces():
    assert [(s.words, s.tags) for s in read_nltk(FakeReader(TRACED))] == [
        (["It", "*-1", "ran"], ["PRP", "-NONE-", "VBD"]),
        (["Go"], ["VB"]),
    ]
    assert next(read_nltk(FakeReader(TRACED), drop_traces=True)).words == ["It", "ran"]
    assert len(list(read_nltk(FakeReader(TRACED), fileids=["a"]))) == 1


def test_read_nltk_universal_needs_a_source_tagset(nltk_data_dir):
    with pytest.raises(ValueError, match="source_tagset"):
        read_nltk(FakeReader(TRACED), tagset="universal")
    sentences = read_nltk(FakeReader(TRACED), tagset="universal", source_tagset="en-ptb")
    assert next(sentences).tags == ["PRON", "X", "VERB"]


@pytest.mark.parametrize(
    "pair, message", [(("", "NN"), "sentence 2: empty word"), (("D.", None), "sentence 2: token 'D.' has no tag")]
)
def test_read_nltk_rejects_empty_words_and_missing_tags(pair, message):
    with pytest.raises(CorpusFormatError, match=message):
        list(read_nltk(FakeReader([[("a", "DT")], [pair]])))


def test_read_nltk_unknown_names():
    with pytest.raises(UnknownNameError, match="unknown NLTK corpus 'no_such_corpus'; accepted: .*treebank"):
        read_nltk("no_such_corpus")
    with pytest.raises(ValueError, match="accepted: universal"):
        read_nltk(FakeReader(TRACED), tagset="en-ptb")


# --- The real corpora ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "split, sentences, tokens", [("train", 12544, 204577), ("dev", 2001, 25147), ("test", 2077, 25094)]
)
def test_ewt_counts(ewt_dir, split, sentences, tokens):
    counts = [len(s.words) for s in read_conllu(ewt_dir / f"en_ewt-ud-{split}.conllu")]
    assert (len(counts), sum(counts)) == (sentences, tokens)


def test_ewt_xpos(ewt_dir):
    upos = list(read_conllu(ewt_dir / "en_ewt-ud-dev.conllu"))
    xpos = list(read_conllu(ewt_dir / "en_ewt-ud-dev.conllu", column="xpos"))
    assert [s.words for s in upos] == [s.words for s in xpos]
    assert {"NN", "NNS", "VBD", "IN", "DT"} <= {t for s in xpos for t in s.tags}
    assert {t for s in upos for t in s.tags} == {
        "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT",
        "SCONJ", "SYM", "VERB", "X",
    }
    assert all(s.sent_id for s in upos)


def test_ewt_dev_round_trip(ewt_dir):
    path = ewt_dir / "en_ewt-ud-dev.conllu"
    sentences = list(read_conllu(path))
    assert written(sentences, [s.tags for s in sentences]).encode("utf-8") == path.read_bytes()


def test_nltk_treebank(nltk_data_dir):
    sentences = list(read_nltk("treebank", tagset="universal"))  # one pass: NLTK takes seconds
    assert len(sentences) == 3914
    assert sentences[0].words[:2] == ["Pierre", "Vinken"]
    assert {t for s in sentences for t in s.tags} == UNIVERSAL


def test_nltk_treebank_traces_and_mapping(nltk_data_dir):
    import nltk

    fileids = nltk.corpus.treebank.fileids()[:20]
    raw = list(read_nltk(nltk.corpus.treebank, fileids=fileids))
    assert [s.tags for s in raw] == [[t for _, t in s] for s in nltk.corpus.treebank.tagged_sents(fileids)]
    assert ("*-1", "-NONE-") in {pair for s in raw for pair in zip(s.words, s.tags)}  # traces are kept
    universal = list(read_nltk("treebank", tagset="universal", fileids=fileids))
    nltk_universal = nltk.corpus.treebank.tagged_sents(fileids, tagset="universal")
    assert [s.tags for s in universal] == [[t for _, t in s] for s in nltk_universal]
    dropped = list(read_nltk("treebank", tagset="universal", fileids=fileids, drop_traces=True))
    assert [s.words for s in dropped] == [[w for w, t in zip(s.words, s.tags) if t != "-NONE-"] for s in raw]
    assert [s.tags for s in dropped] == [[t for t, r in zip(s.tags, r.tags) if r != "-NONE-"] for s, r in zip(universal, raw)]


def test_conll2000_train(nltk_data_dir, tmp_path):
    with zipfile.ZipFile(nltk_data_dir / "corpora" / "conll2000.zip") as archive:
        archive.extract("conll2000/train.txt", tmp_path)
    path = tmp_path / "conll2000" / "train.txt"
    assert path.read_bytes().endswith(b" O\n\n")  # train.txt does end with a blank line
    sentences = list(read_columns(path, columns=("word", "pos", "chunk"), tag="chunk"))
    assert len(sentences) == 8936
    assert sentences[0].words[:3] == ["Confidence", "in", "the"]
    assert sentences[0].tags[:3] == ["B-NP", "B-PP", "B-NP"]
    assert [s.words for s in read_nltk("conll2000", fileids="train.txt")] == [s.words for s in sentences]


# --- word/TAG lines (NLTK's tagged corpus format) --------------------------------------------------------------


def test_slash_tags_split_each_token_at_its_last_slash(tmp_path):
    path = tmp_path / "brown.txt"
    path.write_text("\tThe/at Fulton/np-tl 1/2/cd ./.\n\n\n  A/DET cat/NOUN\n", "utf-8")
    sentences = list(read_file(path, format="slash"))
    assert [(s.words, s.tags, s.line) for s in sentences] == [
        (["The", "Fulton", "1/2", "."], ["at", "np-tl", "cd", "."], 1), (["A", "cat"], ["DET", "NOUN"], 4)]
    for token, place in (("a/", 2), ("/B", 2), ("ab", 2), ("//", 2)):
        path.write_text(f"x/X {token}\n", "utf-8")
        with pytest.raises(CorpusFormatError, match=rf"brown.txt:1: token {place} '{token}' is not word/TAG"):
            list(read_slash_tags(path))


_WORD = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp"), blacklist_characters="\x85"),
                min_size=1, max_size=6).filter(lambda w: w.split() == [w])
_TAG = _WORD.filter(lambda t: "/" not in t)


@given(st.lists(st.lists(st.tuples(_WORD, _TAG), min_size=1, max_size=5), min_size=1, max_size=4))
@settings(max_examples=60, deadline=None)
def test_tags_text_output_reads_back_as_slash_tags(sentences):
    """What ``structlin tag --format text`` writes (word/TAG tokens, a line per sentence) reads back as the same
    words and tags, words with slashes too."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tagged.txt"
        path.write_text("".join(_text_sentence(Sentence(words=[w for w, _ in s]), [t for _, t in s], None)
                                for s in sentences), "utf-8")
        assert [list(zip(s.words, s.tags)) for s in read_slash_tags(path)] == sentences


def test_a_word_tag_line_of_another_layout_names_the_format_to_read_it(tmp_path):
    """A line that is not word<TAB>tag says what it looks like: word/TAG tokens, columns between spaces (CoNLL-2000's
    three), SVMlight's documents; spaces around a tab-separated tag are no part of it."""
    path = tmp_path / "w.txt"
    for text, hint in (("The/DET dog/NOUN\n", "looks like word/TAG tokens, a sentence per line: --format slash"),
                       ("\tThe/at dog/nn\n", "empty word (expected a value in column 'word'); the line looks like "
                                             "word/TAG tokens"),  # NLTK's Brown files: a tab, then the tokens
                       ("The DET\n", "its fields are separated by spaces: --format columns --columns word,tag"),
                       ("Confidence NN B-NP\n", "its 3 fields are separated by spaces: --format columns --columns "
                                                 "word,c2,tag (a name for each; --column names the tags' column)"),
                       ("1 1:0.5 2:-1.2e3 qid:3\n", "the line looks like SVMlight's label index:value ...: documents, "
                                                    "--format svmlight"),
                       ("The\n", "found 1\n")):
        path.write_text(text, "utf-8")
        with pytest.raises(CorpusFormatError) as error:
            list(read_word_tag(path))
        assert f"{hint}" in str(error.value) + "\n"
    path.write_text("The \tDET \ndog\t NOUN\n", "utf-8")
    assert [(s.words, s.tags) for s in read_word_tag(path)] == [(["The", "dog"], ["DET", "NOUN"])]


def test_a_header_row_of_column_names_is_refused_not_read_as_a_token(tmp_path):
    """A first line naming the columns (a spreadsheet's or pandas' export) would be a token "word" tagged "tag":
    refused, naming the line; a token that merely looks like a name is read."""
    path = tmp_path / "w.tsv"
    for text, fields in (("Word\tTag\nThe\tDET\n", "Word, Tag"), ("token\tner\nParis\tB-LOC\n", "token, ner")):
        path.write_text(text, "utf-8")
        with pytest.raises(CorpusFormatError, match=rf"w.tsv:1: a header row \({fields}\), not a token"):
            list(read_word_tag(path))
    path.write_text("word pos chunk\nThe DT B-NP\n", "utf-8")
    with pytest.raises(CorpusFormatError, match=r"a header row \(word, pos, chunk\)"):
        list(read_columns(path, columns=("word", "pos", "chunk"), tag="chunk"))
    path.write_text("word\tNOUN\nthe\tDET\n\nText\tNOUN\npos\tNOUN\n", "utf-8")  # the word "word", tagged NOUN
    assert [s.words for s in read_word_tag(path)] == [["word", "the"], ["Text", "pos"]]
    assert [s.words for s in read_columns(path, columns=("word", "tag"))] == [["word", "the"], ["Text", "pos"]]


# --- tables of tokens under a header row ------------------------------------------------------------------------

KAGGLE = ("Sentence #,Word,POS,Tag\r\nSentence: 1,Thousands,NNS,O\r\n,of,IN,O\r\n,\",\",\",\",O\r\n,London,NNP,B-geo\r\n"
          "Sentence: 2,Families,NNS,O\r\n,of,IN,O\r\n")


def test_a_csv_table_of_tokens_is_read_by_its_header(tmp_path):
    """The header names the word, tag and sentence columns; a sentence value begins a sentence, an empty one goes on;
    a quoted comma is a token; --column picks another tag column; Latin-1 with its encoding."""
    path = tmp_path / "ner.csv"
    path.write_bytes(KAGGLE.replace("London", "Zürich").encode("latin-1"))
    sentences = list(read_file(path, encoding="latin-1"))  # guessed from *.csv
    assert [(s.words, s.tags, s.line) for s in sentences] == [
        (["Thousands", "of", ",", "Zürich"], ["O", "O", "O", "B-geo"], 2), (["Families", "of"], ["O", "O"], 6)]
    assert [s.tags for s in read_file(path, column="pos", encoding="latin-1")] == [["NNS", "IN", ",", "NNP"],
                                                                                   ["NNS", "IN"]]
    tsv = tmp_path / "t.tsv"  # no sentence column (sentiment is none): blank rows end the sentences; no quoting
    tsv.write_text("token\tupos\tsentiment\n\"Hi\tINTJ\t+\nthere\tADV\t-\n\nBye\tINTJ\t+\n", "utf-8")
    assert [(s.words, s.tags) for s in read_file(tsv, format="tsv")] == [(['"Hi', "there"], ["INTJ", "ADV"]),
                                                                        (["Bye"], ["INTJ"])]
    semicolons = tmp_path / "export.csv"  # a spreadsheet's CSV where the decimal mark is a comma: ; between fields
    semicolons.write_text(KAGGLE.replace(",", ";").replace('\";\"', '\",\"'), "utf-8")
    assert [(s.words, s.tags) for s in read_file(semicolons)] == [
        (["Thousands", "of", ",", "London"], ["O", "O", "O", "B-geo"]), (["Families", "of"], ["O", "O"])]
    semicolons.write_text("Word\tTag\nThe\tDET\n", "utf-8")  # tabs in a .csv file: its rows split alike by them
    assert [(s.words, s.tags) for s in read_file(semicolons)] == [(["The"], ["DET"])]


@pytest.mark.parametrize("text, column, message", [
    ("Sentence #,Token\n1,a\n", None, r"t.csv:1: the header row \(Sentence #, Token\) names no tag column"),
    ("Id,Tag\n1,a\n", None, r"t.csv:1: the header row \(Id, Tag\) names no word column"),
    ("Word,Tag\nThe,DET\n", "ner", r"names no tag column \(expected a column named 'ner'"),
    ("Word,Tag\nThe,DET,X\n", None, r"t.csv:2: expected 2 fields \(Word, Tag\), found 3"),
    ("Word,Tag,Sentence #\nThe,DET\n", None, r"t.csv:2: expected 3 fields \(Word, Tag, Sentence #\), found 2"),
    ("Word,Tag\nThe\x07,DET\n", None, r"t.csv:2: control character U\+0007"),
    ("Word,Tag\nThe,\n", None, r"t.csv:2: empty tag \(expected a value in column 'Tag'\)"),
    ("Word,word,Tag\na,b,C\n", None, r"t.csv:1: the header row \(Word, word, Tag\) names two word columns 'Word'"),
    ("Word\tTag\nThe\tDET\tX\n", None, r"names no word column .*; its fields are separated by tabs: --format tsv"),
    ("Word,POS,Tag\nThe,DT,O\n", "word", r"t.csv:1: the tag column 'Word' is the word column \(expected another"),
])
def test_a_table_of_tokens_that_does_not_fit_its_header_is_refused(tmp_path, text, column, message):
    path = tmp_path / "t.csv"
    path.write_text(text, "utf-8")
    with pytest.raises(CorpusFormatError, match=message):
        list(read_file(path, column=column))
