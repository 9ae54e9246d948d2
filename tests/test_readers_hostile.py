"""Every corpus reader under hostile and wild input (issue 17): each defect is the library's error, one
line naming the file and line (or the archive member), never another exception, and nothing is
silently dropped or mis-read.  The last tests corrupt small valid files of every format at random."""

from __future__ import annotations

import csv
import gzip
import io
import os
import random
import tarfile
import tempfile
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structlin import readers
from structlin.documents import read_csv, read_fasttext, read_folders, read_qc, read_svmlight, read_tsv
from structlin.errors import CorpusFormatError, OptionValueError, StructlinError
from structlin.readers import read_columns, read_conllu, read_file, read_text, read_word_tag
from structlin.sources import ReadOptions, read_documents, read_sentences

from archives import tar_bytes

WORD_LINE = "{id}\t{word}\t{word}\tX\tXX\t_\t0\troot\t_\t_\n"
CONLLU = "".join(WORD_LINE.format(id=k, word=w) for k, w in enumerate(["Hi", "there"], 1)) + "\n"


def write(folder: Path, data: str | bytes, name: str) -> Path:
    """``data`` written to ``folder / name``, gzip-compressed when the name ends in .gz."""
    data = data.encode() if isinstance(data, str) else data
    path = folder / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def error(read, *args, **options) -> CorpusFormatError:
    """The CorpusFormatError that reading everything raises; its message is one line."""
    with pytest.raises(CorpusFormatError) as info:
        result = read(*args, **options)
        if not isinstance(result, list):
            list(result)
    assert "\n" not in str(info.value)
    return info.value


def located(err: CorpusFormatError, path, line: int | None, *fragments: str) -> None:
    """``err`` is located at ``path:line`` and says every fragment."""
    assert (err.path, err.line) == (str(path), line), str(err)
    assert str(err).startswith(f"{path}:{line}: " if line else f"{path}: "), str(err)
    for fragment in fragments:
        assert fragment in str(err), str(err)


def option_error(call, *fragments: str) -> OptionValueError:
    """The OptionValueError (a StructlinError and a ValueError) ``call`` raises, saying every fragment."""
    with pytest.raises(OptionValueError) as info:
        result = call()
        if not isinstance(result, list):
            list(result)
    assert isinstance(info.value, StructlinError) and isinstance(info.value, ValueError)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    return info.value


# --- word<TAB>tag files ------------------------------------------------------------------------------------


def test_word_tag_refuses_a_tag_with_spaces_such_as_a_documents_tsv(tmp_path):
    path = write(tmp_path, "pos\tsome text\nneg\tother text\n", "docs.tsv")
    located(error(read_word_tag, path), path, 1, "tag 'some text' holds whitespace")
    path = write(tmp_path, "pos\ta longer text\n", "docs.tsv")
    located(error(read_word_tag, path), path, 1, "tag 'a longer text' holds whitespace (expected",
            "labelled texts? a classifier reads them")
    path = write(tmp_path, "New York\tNNP\nis\t VBZ \n\n", "spaces.txt")  # a word may hold a space, a tag not ...
    assert [(s.words, s.tags) for s in read_word_tag(path)] == [(["New York", "is"], ["NNP", "VBZ"])]  # ... around it
    path = write(tmp_path, "is\tV BZ\n\n", "inner.txt")
    located(error(read_word_tag, path), path, 1, "tag 'V BZ' holds whitespace")


def test_docstart_alone_is_a_document_boundary_and_inside_a_sentence_an_error(tmp_path):
    path = write(tmp_path, "-DOCSTART-\tO\n\nHe\tPRP\nran\tVBD\n\n-DOCSTART-\n\nGo\tVB\n", "docs.txt")
    assert [s.words for s in read_word_tag(path)] == [["He", "ran"], ["Go"]]
    path = write(tmp_path, "He\tPRP\n-DOCSTART-\tO\nran\tVBD\n\n", "inside.txt")  # once silently split in two
    located(error(read_word_tag, path), path, 2, "-DOCSTART- inside a sentence")
    path = write(tmp_path, "He PRP B-NP\n-DOCSTART- -X- O\n\n", "inside.col")
    located(error(read_columns, path, columns=("word", "pos", "chunk")), path, 2, "-DOCSTART- inside a sentence")
    path = write(tmp_path, "-DOCSTARTED\tX\n\n", "word.txt")  # a word that merely starts like it
    assert next(read_word_tag(path)).words == ["-DOCSTARTED"]


@pytest.mark.parametrize("read, text, name, line, position", [
    (read_word_tag, "ok\tA\n\nb\x00ad\tB\n", "nul.txt", 3, 2),
    (lambda p: read_columns(p, columns=("word", "tag"), tag="tag"), "ok A\n\nb\x00ad B\n", "nul.col", 3, 2),
    (read_conllu, CONLLU + WORD_LINE.format(id=1, word="b\x00ad") + "\n", "nul.conllu", 4, 4),
    (read_text, "ok\nb\x00ad\n", "nul.txt", 2, 2),
    (read_tsv, "pos\tok\nneg\tb\x00ad\n", "nul.tsv", 2, 6),
])
def test_nul_characters_are_refused_with_their_line(tmp_path, read, text, name, line, position):
    path = write(tmp_path, text, name)
    located(error(read, path), path, line, f"NUL character at position {position} of the line")


def test_other_control_characters_in_tokens_are_refused(tmp_path):
    path = write(tmp_path, "ok\tA\nb\x01ad\tB\n", "control.txt")
    located(error(read_word_tag, path), path, 2, "control character U+0001")


# --- column files: options ----------------------------------------------------------------------------------


def test_column_options_are_refused_with_the_library_error(tmp_path):
    path = write(tmp_path, "a DT B-NP\n\n", "chunks.txt")
    option_error(lambda: read_columns(path, columns=("word", "pos", "pos")), "duplicate column name(s) pos")
    option_error(lambda: read_file(path, format="columns"), "needs the names of the columns", "word,pos,chunk")
    option_error(lambda: read_file(path, format="columns", columns=("word", "pos", "chunk"), column="nonexistent"),
                 "'nonexistent'", "accepted: word, pos, chunk")
    option_error(lambda: read_file(path, format="word-tag", column="xpos"), "tag column (xpos)", "read as word-tag")
    option_error(lambda: read_file(path, format="conllu", columns=("word", "pos")), "apply to the columns format")
    option_error(lambda: read_file(path, format="rtf"), "unknown file format 'rtf'", "accepted: conllu")
    options = ReadOptions(format="columns", columns=("word", "pos", "pos"))
    option_error(lambda: read_sentences(str(path), None, options), "duplicate")


def test_the_column_option_chooses_the_tag_column_of_a_column_file(tmp_path):
    path = write(tmp_path, "dogs NOUN NNS\nbark VERB VBP\n\n", "upos-xpos.txt")
    columns = ("word", "upos", "xpos")
    upos = read_sentences(str(path), None, ReadOptions(format="columns", columns=columns, column="upos"))
    assert upos[0].tags == ["NOUN", "VERB"]  # once the xpos tags, under the name upos
    assert read_sentences(str(path), None, ReadOptions(columns=columns))[0].tags == ["NNS", "VBP"]  # the last one


# --- CoNLL-U ---------------------------------------------------------------------------------------------------


def test_conllu_unsupported_column_is_an_option_error(tmp_path):
    option_error(lambda: read_conllu(tmp_path / "unused.conllu", column="lemma"), "'lemma'", "accepted: upos, xpos")
    option_error(lambda: read_file(tmp_path / "unused.conllu", column="deprel"), "accepted: upos, xpos")


@pytest.mark.parametrize("range_id, message", [
    ("1-9", "multiword token range ends at word 9, after the last word of the sentence (expected a range within "
            "words 1-2)"),
    ("1-1", "invalid multiword token range 1-1 (expected 1-N with N > 1"),
])
def test_conllu_multiword_range_beyond_the_sentence(tmp_path, range_id, message):
    path = write(tmp_path, f"{range_id}\tHi there\t_\t_\t_\t_\t_\t_\t_\t_\n" + CONLLU, "range.conllu")
    located(error(read_conllu, path), path, 1, message)


def test_conllu_overlapping_multiword_ranges(tmp_path):
    three = "".join(WORD_LINE.format(id=k, word=w) for k, w in enumerate(["a", "b", "c"], 1))
    lines = three.splitlines(keepends=True)
    text = "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n" + lines[0] + "2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_\n" + "".join(lines[1:])
    path = write(tmp_path, text + "\n", "overlap.conllu")
    located(error(read_conllu, path), path, 3, "invalid multiword token range 2-3", "after the range ending at word 2")


def test_conllu_tag_with_whitespace_is_refused(tmp_path):
    path = write(tmp_path, CONLLU.replace("\tX\t", "\tX Y\t", 1), "space.conllu")
    located(error(read_conllu, path), path, 1, "UPOS tag 'X Y' holds whitespace")


@pytest.mark.parametrize("ending", ["\r", "\r\n", "\n"])
def test_line_endings_of_every_kind_read_alike(tmp_path, ending):
    """CR-only line ends (old Mac files) are line ends, as in Python's universal newlines."""
    text = (CONLLU + CONLLU).replace("\n", ending)
    sentences = list(read_conllu(write(tmp_path, text, "mac.conllu")))
    assert [(s.words, s.line) for s in sentences] == [(["Hi", "there"], 1), (["Hi", "there"], 4)]
    tsv = write(tmp_path, f"pos\tgood{ending}neg\tbad{ending}", "mac.tsv")
    assert [(d.label, d.text, d.line) for d in read_tsv(tsv)] == [("pos", "good", 1), ("neg", "bad", 2)]


def test_damaged_gz_says_so_rather_than_report_a_conllu_error(tmp_path):
    sentences = "".join(f"# sent_id = s{k}\n" + CONLLU for k in range(300))
    data = gzip.compress(sentences.encode(), mtime=0)
    for damage in ("flip", "cut"):
        damaged = bytearray(data)
        if damage == "flip":
            for k in range(len(data) // 2, len(data) // 2 + 4):
                damaged[k] ^= 0x24
        else:
            damaged = damaged[: len(data) // 2]
        path = tmp_path / f"{damage}.conllu.gz"
        path.write_bytes(bytes(damaged))
        located(error(read_conllu, path), path, None, "damaged or truncated archive: corrupt gzip data")
    path = write(tmp_path, CONLLU + "1\tbad\n\n", "intact.conllu.gz")  # an intact file: its own error
    located(error(read_conllu, path), path, 4, "expected 10 tab-separated columns")


# --- empty inputs -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, read", [
    ("empty.conllu", read_sentences),
    ("empty.txt", read_sentences),  # word<TAB>tag
    ("blank.conllu", read_sentences),
    ("empty.tsv", read_documents),
    ("header-only.tsv", read_documents),
    ("empty.svm", read_documents),
    ("header-only.csv", read_sentences),  # a tagged table
    ("blank.txt", read_sentences),
])
def test_empty_files_are_named(tmp_path, name, read):
    text = {"blank.conllu": "\n\n", "header-only.tsv": "label\ttext\n", "empty.svm": "# only a comment\n",
            "header-only.csv": "word,tag\n", "blank.txt": "\n  \n\t\n"}.get(name, "")
    path = write(tmp_path, text, name)
    what = "sentences" if read is read_sentences else "documents"
    lines = text.count("\n")
    said = f"no {what} in its {lines} line{'s' * (lines > 1)} (blank lines, comments or a header row only" if lines \
        else f"no {what} (empty file"
    located(error(read, str(path), None), path, None, said)


def test_empty_folders_and_archives_are_named(tmp_path):
    (tmp_path / "tree").mkdir()
    located(error(read_documents, str(tmp_path / "tree"), None), tmp_path / "tree", None, "no documents (empty folder")
    with zipfile.ZipFile(tmp_path / "empty.zip", "w"):
        pass
    with tarfile.open(tmp_path / "empty.tar.gz", "w:gz"):
        pass
    for name in ("empty.zip", "empty.tar.gz"):
        located(error(read_documents, str(tmp_path / name), None), tmp_path / name, None,
                "no documents (empty archive")


# --- decoding: invalid bytes and encodings -----------------------------------------------------------------------


READERS = {  # format: (file name, a valid first line, a second line with the byte, the reader)
    "conllu": ("c.conllu", "# ok\n", WORD_LINE.format(id=1, word="caf\udce9") + "\n", read_conllu),
    "word-tag": ("w.txt", "ok\tA\n", "caf\udce9\tB\n", read_word_tag),
    "columns": ("c.col", "ok A\n", "caf\udce9 B\n",
                lambda p, **kw: read_columns(p, columns=("word", "tag"), tag="tag", **kw)),
    "text": ("t.txt", "ok\n", "caf\udce9\n", read_text),
    "tsv": ("d.tsv", "pos\tok\n", "neg\tcaf\udce9\n", read_tsv),
    "csv": ("d.csv", "pos,ok\n", "neg,caf\udce9\n", read_csv),
    "fasttext": ("d.txt", "__label__pos ok\n", "__label__neg caf\udce9\n", read_fasttext),
    "svmlight": ("d.svm", "1 1:1\n", "caf\udce9 1:1\n", read_svmlight),
}


@pytest.mark.parametrize("fmt", list(READERS))
@pytest.mark.parametrize("gz", ["", ".gz"])
def test_invalid_utf8_is_located_in_every_line_reader(tmp_path, fmt, gz):
    name, first, second, read = READERS[fmt]
    path = write(tmp_path, (first + second).encode("utf-8", "surrogateescape"), name + gz)
    located(error(read, path), path, 2, "invalid UTF-8: byte 0xe9 at position ", "e.g. --encoding latin-1")
    latin = write(tmp_path, (first + second).encode("utf-8", "surrogateescape").replace(b"\xe9", "é".encode("latin-1")),
                  "latin-" + name + gz)
    assert any("café" in repr(unit) for unit in read(latin, encoding="latin-1"))


@pytest.mark.parametrize("fmt", list(READERS))
@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
@pytest.mark.parametrize("gz", ["", ".gz"])
def test_a_file_with_a_utf16_or_utf32_byte_order_mark_is_read_as_the_mark_says(tmp_path, fmt, codec, gz):
    """A file read as UTF-8 that starts with a UTF-16 or UTF-32 byte order mark (never UTF-8: Excel's "Unicode text"
    export writes one) is read in the encoding the mark declares: what the same text in UTF-8 gives."""
    name, first, second, read = READERS[fmt]
    text = first + second.replace("caf\udce9", "café")
    path = write(tmp_path, text.encode("utf-8"), name + gz)
    expected = [repr(unit) for unit in read(path)]
    bom = b"\xfe\xff" if codec.endswith("be") else b""  # utf-16 and utf-32 write their own (little-endian) mark
    write(tmp_path, bom + text.encode(codec), name + gz)
    assert [repr(unit) for unit in read(path)] == expected and expected
    assert [repr(unit) for unit in read(path, encoding="utf-8-sig")] == expected


def test_invalid_utf8_in_a_folder_file_names_the_file_and_line(tmp_path):
    (tmp_path / "tree" / "pos").mkdir(parents=True)
    (tmp_path / "tree" / "pos" / "a.txt").write_bytes(b"fine\n\x89PNG\r\n\x1a\n")  # a binary file
    located(error(read_folders, tmp_path / "tree"), tmp_path / "tree" / "pos" / "a.txt", 2, "invalid utf-8: byte 0x89")
    (tmp_path / "tree" / "pos" / "a.txt").write_bytes(b"ELF\x00\x01\x02")  # binary, yet valid UTF-8
    located(error(read_folders, tmp_path / "tree"), tmp_path / "tree" / "pos" / "a.txt", 1, "NUL character")
    located(error(read_folders, tmp_path / "tree", errors="replace"), tmp_path / "tree" / "pos" / "a.txt", 1, "NUL")


@pytest.mark.parametrize("read", [read_tsv, read_csv, read_fasttext, read_svmlight, read_folders,
                                  lambda path, encoding: read_qc(str(path), encoding=encoding),
                                  read_word_tag, read_conllu, read_text, read_file,
                                  lambda path, encoding: read_columns(path, columns=("word", "t"), encoding=encoding)])
def test_unknown_encodings_are_option_errors(tmp_path, read):
    path = write(tmp_path, "pos\tok\n", "d.tsv")
    option_error(lambda: read(path, encoding="klingon"), "unknown encoding 'klingon'")  # at once: nothing read
    option_error(lambda: read(path, encoding="base64"), "not a text encoding: 'base64'")


def test_a_utf8_byte_order_mark_read_in_another_encoding_is_refused(tmp_path):
    """Excel's "CSV UTF-8" begins with a UTF-8 mark: read as latin-1 or cp1252 it would garble every accent (and the
    mark would become the first word's "ï»¿"), so the file, read whole or line by line, is refused at line 1."""
    from structlin.readers import read_file

    csv = write(tmp_path, "\ufefflabel,text\npos,café\n".encode("utf-8"), "excel.csv")
    tagged = write(tmp_path, "\ufeffThe\tDET\n\n".encode("utf-8"), "t.tsv")
    folder = tmp_path / "tree" / "pos"
    folder.mkdir(parents=True)
    (folder / "a.txt").write_bytes("\ufeffcafé".encode("utf-8"))
    for read, path, where in ((read_csv, csv, csv), (read_file, tagged, tagged),
                              (read_folders, tmp_path / "tree", folder / "a.txt")):
        for encoding in ("latin-1", "cp1252", "ascii"):
            located(error(read, path, encoding=encoding), where, 1,
                    f"the file starts with a UTF-8 byte order mark: it is UTF-8 text, not {encoding}")
    assert [d.text for d in read_csv(csv)] == ["café"] and [s.words for s in read_file(tagged)] == [["The"]]


def test_utf16_needs_a_byte_order_mark(tmp_path):
    text = "label,text\npos,café\n"
    for encoding in ("utf-16", "utf-32"):
        path = write(tmp_path, text.encode(f"{encoding}-be"), "no-bom.csv")
        located(error(read_csv, path, encoding=encoding), path, 1, f"no byte order mark: '{encoding}' needs one")
        assert [d.text for d in read_csv(path, encoding=f"{encoding}-be")] == ["café"]
        path = write(tmp_path, text.encode(encoding), "bom.csv")  # with a BOM, either byte order
        assert [d.text for d in read_csv(path, encoding=encoding)] == ["café"]
    folder = tmp_path / "tree" / "pos"
    folder.mkdir(parents=True)
    (folder / "a.txt").write_bytes("café".encode("utf-16-le"))
    located(error(read_folders, tmp_path / "tree", encoding="utf-16"), folder / "a.txt", 1, "no byte order mark")
    assert next(read_folders(tmp_path / "tree", encoding="utf-16-le")).text == "café"
    (folder / "a.txt").write_bytes("café".encode("utf-16"))  # read as UTF-8: its mark says UTF-16
    assert next(read_folders(tmp_path / "tree")).text == "café"


def test_invalid_utf16_is_located(tmp_path):
    path = write(tmp_path, "pos\tok\nneg\tbad\n".encode("utf-16") + b"\x00", "odd.tsv")  # a byte short of a unit
    located(error(read_tsv, path, encoding="utf-16"), path, 3, "invalid utf-16")


def test_a_folder_given_as_a_file(tmp_path):
    located(error(read_conllu, tmp_path), tmp_path, None, "a folder (expected a file)")


# --- TSV documents --------------------------------------------------------------------------------------------


def test_tsv_header_row_is_no_class_and_labels_are_stripped(tmp_path):
    path = write(tmp_path, "label\ttext\n pos \tgood film\nneg\t bad film \n", "h.tsv")
    documents = read_documents(str(path), None)
    assert [(d.label, d.text) for d in documents] == [("pos", "good film"), ("neg", " bad film ")]
    assert "label" not in {d.label for d in documents}
    path = write(tmp_path, "Text\tSentiment\nfine\t pos\n", "h2.tsv")  # names matched whatever their case
    assert [(d.label, d.text) for d in read_tsv(path)] == [("pos", "fine")]


# --- CSV quoting ---------------------------------------------------------------------------------------------------

NEVER_CLOSED = "the quote opening a field on this line is never closed"
LONG_LINES = "x" * 1000 + "\n"


@pytest.mark.parametrize("text, line, fragment", [
    ('label,text\npos,fine\nneg,"never closed\nmore\n', 3, NEVER_CLOSED),  # the file ends first
    ('label,text\npos,fine\nneg,"never closed\n' + LONG_LINES * 200, 3, NEVER_CLOSED),  # the field limit first
    ('label,text\npos,"two\nlines",x,"opened here\n' + LONG_LINES * 200, 3, NEVER_CLOSED),  # not where the row begins
    ('label,text\npos,"a"",x\n""\n', 2, NEVER_CLOSED),  # doubled quotes stay inside the field
    ('label,text\npos,"' + LONG_LINES * 200 + '"\nneg,fine\n', 2,
     "the field quoted from this line to line 202 is longer than the limit of 100,000 characters"),
    ("label,text\npos," + "x" * 200_000 + "\n", 2, "a field longer than the limit of 100,000 characters"),
    ('label,text\npos,"a"b\n', 2, "badly quoted field: ',' expected after '\"'"),
])
def test_a_quote_never_closed_is_located_where_it_opens(tmp_path, monkeypatch, text, line, fragment):
    monkeypatch.setattr(readers, "CSV_FIELD_LIMIT", 100_000)  # reached with small files
    path = write(tmp_path, text, "q.csv")
    located(error(read_csv, path), path, line, fragment)


def test_a_csv_field_longer_than_the_csv_modules_default_limit_is_read(tmp_path):
    """RFC 4180 sets no limit; the csv module's default (131,072 characters) is a long review, not a long text.  The
    process-wide limit is the caller's again after reading."""
    text = " ".join(["word"] * 60_000)
    path = write(tmp_path, f'label,text\npos,"{text}"\nneg,short\n', "long.csv")
    default = csv.field_size_limit()
    assert [(d.label, len(d.text)) for d in read_csv(path)] == [("pos", len(text)), ("neg", 5)]
    assert csv.field_size_limit() == default


# --- SVMlight -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["1e999", "1e308", "-1e308", "3.5e38", "-1E39"])
def test_svmlight_values_that_overflow_32_bit_floats_are_refused(tmp_path, value):
    path = write(tmp_path, f"1 1:0.5\n-1 2:{value}\n", "d.svm")
    located(error(read_svmlight, path), path, 2, f"value '{value}' of feature '2:{value}' is out of range")


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity"])
def test_svmlight_non_numbers_are_refused(tmp_path, value):
    path = write(tmp_path, f"1 1:0.5\n-1 2:{value}\n", "d.svm")
    located(error(read_svmlight, path), path, 2, f"value '{value}' of feature '2:{value}' is not a number")


def test_svmlight_limits_that_are_accepted_or_refused(tmp_path):
    path = write(tmp_path, "1 1:3.4e38 2:-3.4e38 3:1e-300\n", "d.svm")  # near the largest 32-bit float; tiny
    assert next(read_svmlight(path)).text == {1: 3.4e38, 2: -3.4e38, 3: 1e-300}
    path = write(tmp_path, f"1 {'9' * 5000}:1\n", "big.svm")  # int() would refuse it with a ValueError
    located(error(read_svmlight, path), path, 1, "is not a non-negative integer")


# --- folders and archives -----------------------------------------------------------------------------------------


def test_symbolic_links_in_a_folder_tree_are_refused(tmp_path):
    outside = write(tmp_path, "secret\n", "outside.txt")
    tree = tmp_path / "tree"
    (tree / "pos").mkdir(parents=True)
    (tree / "pos" / "a.txt").write_text("fine\n")
    (tree / "pos" / "link.txt").symlink_to(outside)
    located(error(read_folders, tree), tree / "pos" / "link.txt", None, f"a symbolic link to {outside}")
    (tree / "pos" / "link.txt").unlink()
    (tmp_path / "elsewhere").mkdir()
    (tree / "neg").symlink_to(tmp_path / "elsewhere", target_is_directory=True)  # a linked label folder
    located(error(read_folders, tree), tree / "neg", None, "a symbolic link")
    (tree / "neg").unlink()
    (tree / "pos" / "sub").symlink_to(tmp_path / "elsewhere", target_is_directory=True)  # a nested one
    located(error(read_folders, tree), tree / "pos" / "sub", None, "a symbolic link")
    (tree / "pos" / "sub").unlink()
    assert [d.text for d in read_folders(tree)] == ["fine\n"]
    os.symlink(tree, tmp_path / "linked-root")  # the root itself may be a link
    assert [d.text for d in read_folders(tmp_path / "linked-root")] == ["fine\n"]


def make_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name), data)  # a ZipInfo keeps the name as given
    return path


def make_tar(path: Path, members: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return path


@pytest.mark.parametrize("member", ["../../evil", "/etc/evil", "pos/../../evil", "C:/evil/x"])
@pytest.mark.parametrize("make, suffix", [(make_zip, ".zip"), (make_tar, ".tar.gz")])
def test_archive_members_outside_the_tree_are_refused(tmp_path, member, make, suffix):
    path = make(tmp_path / f"a{suffix}", {"pos/a.txt": b"fine\n", member: b"evil\n"})
    err = error(read_folders, path)
    assert err.path == f"{path}:{member}" and "a member path outside the archive's tree" in str(err)


@pytest.mark.parametrize("make, suffix", [(make_zip, ".zip"), (make_tar, ".tar.gz")])
def test_archive_members_given_twice_are_refused(tmp_path, make, suffix):
    path = make(tmp_path / f"a{suffix}", {"pos/a.txt": b"one\n", "pos/./a.txt": b"two\n"})
    err = error(read_folders, path)
    assert err.path == f"{path}:pos/./a.txt" and "a member given twice" in str(err)


def test_archive_symbolic_links_are_refused(tmp_path):
    path = make_tar(tmp_path / "a.tar.gz", {"pos/a.txt": b"fine\n"}, links={"pos/b.txt": "/etc/passwd"})
    located(error(read_folders, path), f"{path}:pos/b.txt", None, "a symbolic link to /etc/passwd")
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as archive:
        info = zipfile.ZipInfo("pos/b.txt")
        info.external_attr = 0o120777 << 16  # what zip --symlinks stores
        archive.writestr(info, "/etc/passwd")
    located(error(read_folders, path), f"{path}:pos/b.txt", None, "a symbolic link")


def test_subset_cannot_leave_the_tree(tmp_path):
    option_error(lambda: read_folders(tmp_path, subset="../elsewhere"), "invalid subset")


def test_an_empty_label_folder_is_named_by_a_warning(tmp_path):
    """A label folder without files (nested empty folders count as none) gives no class: most likely a mistake,
    so a warning names it, and the rest of the data is read."""
    tree = tmp_path / "tree"
    (tree / "pos").mkdir(parents=True)
    (tree / "pos" / "a.txt").write_text("fine\n")
    (tree / "neg" / "nested").mkdir(parents=True)
    (tree / "neutral").mkdir()
    with pytest.warns(UserWarning) as caught:
        assert [d.label for d in read_folders(tree)] == ["pos"]
    assert [str(w.message) for w in caught] == [
        f"{tree / 'neg'}: label folder 'neg' holds no files, so no document has that label",
        f"{tree / 'neutral'}: label folder 'neutral' holds no files, so no document has that label"]


@pytest.mark.parametrize("suffix", [".zip", ".tar.gz"])
def test_an_empty_label_folder_of_an_archive_is_named_by_a_warning(tmp_path, suffix):
    path = tmp_path / f"a{suffix}"
    folders = ["train/", "train/pos/", "train/neg/", "train/neg/nested/", "test/", "test/neg/"]
    files = {"train/pos/a.txt": b"fine\n", "test/neg/b.txt": b"other\n"}
    if suffix == ".zip":
        with zipfile.ZipFile(path, "w") as archive:
            for name in folders:
                archive.writestr(zipfile.ZipInfo(name), b"")
            for name, data in files.items():
                archive.writestr(name, data)
    else:
        with tarfile.open(path, "w:gz") as archive:
            for name in folders:
                info = tarfile.TarInfo(name)
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    with pytest.warns(UserWarning, match="holds no files") as caught:
        assert [d.label for d in read_folders(path, subset="train")] == ["pos"]
    assert [str(w.message) for w in caught] == [
        f"{path}:train/neg: label folder 'neg' holds no files, so no document has that label"]


# --- options that do not apply -------------------------------------------------------------------------------------


def test_strip_values_are_checked_by_the_library(tmp_path):
    option_error(lambda: read_folders(tmp_path, strip="bogus"), "unknown strip value 'bogus'",
                 "accepted: headers, footers, quotes")
    option_error(lambda: read_documents(str(tmp_path), None, ReadOptions(strip=("headers", "bogus"))), "'bogus'")


def test_options_that_would_be_ignored_are_refused(tmp_path):
    tsv = str(write(tmp_path, "pos\tgood\n", "d.tsv"))
    conllu = str(write(tmp_path, CONLLU, "d.conllu"))
    option_error(lambda: read_documents(tsv, None, ReadOptions(granularity="fine")),
                 "granularity cannot be used: it applies to the catalog corpus qc; ", "read as tsv")
    option_error(lambda: read_documents(tsv, None, ReadOptions(strip=("headers",))), "strip cannot be used")
    option_error(lambda: read_documents(tsv, None, ReadOptions(column="upos")), "read as documents")
    option_error(lambda: read_sentences(conllu, None, ReadOptions(granularity="fine")), "read as tagged sentences")
    assert read_sentences(conllu, None, ReadOptions(encoding="latin-1"))[0].words == ["Hi", "there"]
    option_error(lambda: read_sentences("ud-english-ewt", "train", ReadOptions(encoding="latin-1")),
                 "encoding cannot be used: ud-english-ewt is a catalog corpus, whose columns and encoding the catalog")


# --- corrupted files: the library's error or a successful read, nothing else ---------------------------------------


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _tar_gz(members: dict[str, bytes]) -> bytes:
    return gzip.compress(tar_bytes(members))


TREE = {"neg/a.txt": b"awful plot\n", "pos/b.txt": "caf\u00e9 ok\n".encode(), "pos/c/d.txt": b"great\nfun\n"}
COLUMNS = "-DOCSTART- -X- O\n\nHe PRP B-NP\nran VBD B-VP\n\n5 CD I-NP\n"
SAMPLES = {  # format: (file name, valid bytes, how to read all of it)
    "conllu": ("s.conllu", ("# sent_id = 1\n" + CONLLU + "1-2\tHi'\t_\t_\t_\t_\t_\t_\t_\t_\n" + CONLLU).encode(),
               read_conllu),
    "columns": ("s.txt", COLUMNS.encode(), lambda p: read_columns(p, columns=("word", "pos", "chunk"), tag="chunk")),
    "word-tag": ("s.txt", "New York\tNNP\nis\tVBZ\n\n.\t.\n".encode(), read_word_tag),
    "tsv": ("s.tsv", "label\ttext\npos\tgood \"film\"\nneg\tcaf\u00e9\n".encode(), read_tsv),
    "tsv utf-16": ("s.tsv", "label\ttext\npos\tcaf\u00e9\nneg\t\u2603\n".encode("utf-16"),
                   lambda p: read_tsv(p, encoding="utf-16")),
    "csv": ("s.csv", 'text,label\n"a, ""quoted""\nline",pos\nplain,neg\n'.encode(), read_csv),
    "fasttext": ("s.txt", "__label__pos good film\n\n__label__neg bad\n".encode(), read_fasttext),
    "svmlight": ("s.svm", b"# c\n+1 1:0.5 3:-2e-1 # t\n-1 0:1 10:.25\n", read_svmlight),
    "zip": ("s.zip", _zip(TREE), read_folders),
    "tar.gz": ("s.tar.gz", _tar_gz(TREE), read_folders),
    "gz": ("s.conllu.gz", gzip.compress((CONLLU * 3).encode(), mtime=0), read_conllu),
}


def _corrupt(data: bytes, how: str, rng: random.Random) -> bytes:
    """``data`` damaged in one way, chosen by ``how``, at places chosen by ``rng``."""
    data = bytearray(data)
    if how == "truncate":
        return bytes(data[: rng.randrange(len(data))])
    if how == "flip":
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return bytes(data)
    if how == "insert":
        at = rng.randrange(len(data) + 1)
        junk = rng.choice([b"\x00", b"\r", b"\n", b"\t", b"\xff", b"\xc3", b"\xef\xbb\xbf", b":", b"#", b'"', b" ",
                           bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))])
        return bytes(data[:at] + junk + data[at:])
    lines = bytes(data).split(b"\n")  # delete or duplicate lines
    for _ in range(rng.randint(1, 3)):
        k = rng.randrange(len(lines))
        if how == "delete" and len(lines) > 1:
            del lines[k]
        else:
            lines.insert(k, lines[k])
    return b"\n".join(lines)


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_corrupted_files_give_the_library_error_or_a_read(fmt, report_cases):
    """Property: whatever the damage, reading gives documents or sentences, or a StructlinError naming the
    file: never another exception."""
    name, valid, read = SAMPLES[fmt]
    outcomes = Counter()

    @settings(max_examples=200, derandomize=True, deadline=None, database=None)
    @given(st.sampled_from(["truncate", "flip", "insert", "delete", "duplicate"]), st.integers(0, 2**32))
    def check(how, seed):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / name
            path.write_bytes(_corrupt(valid, how, random.Random(seed)))
            try:
                list(read(path))
            except StructlinError as err:
                assert str(path) in str(err) and "\n" not in str(err), str(err)
                outcomes[f"{how}: error"] += 1
            else:
                outcomes[f"{how}: read"] += 1

    check()
    tried = sum(outcomes.values())
    report_cases(f"{fmt}: {tried} corrupted files: {dict(sorted(outcomes.items()))}")
    assert tried >= 150 and any(key.endswith("error") for key in outcomes)
