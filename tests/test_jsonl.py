"""JSON Lines (and JSON arrays) of labelled texts, as pandas and Hugging Face's datasets write them: keys found by
their names as a TSV header's columns, labels read as JSON writes them, every defect located."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_run import run
from structlin.documents import read_jsonl
from structlin.errors import CorpusFormatError, OptionValueError
from structlin.sources import ReadOptions, guess_document_format, read_documents

SST = [{"sentence": "a gripping film", "label": 1, "idx": 0}, {"sentence": '"dull" and long', "label": 0, "idx": 1},
       {"sentence": "great fun", "label": 1, "idx": 2}, {"sentence": "boring plot", "label": 0, "idx": 3}]


def lines(records) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def test_keys_are_found_by_their_names_and_labels_read_as_json_writes_them(tmp_path):
    path = tmp_path / "sst.jsonl"
    path.write_text(lines(SST[:2]) + "\n   \n" + lines(SST[2:]), "utf-8")  # blank lines hold no document
    objects = read_jsonl(path)
    documents = list(objects)
    assert [(d.text, d.label, d.line) for d in documents] == [
        ("a gripping film", "1", 1), ('"dull" and long', "0", 2), ("great fun", "1", 5), ("boring plot", "0", 6)]
    assert (objects.label_column, objects.text_column) == ("label", "sentence")


def test_a_json_array_of_objects_is_read_too(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('[{"text": "good", "category": "pos"},\n {"text": "bad", "category": " neg "}]\n', "utf-8")
    assert [(d.text, d.label) for d in read_jsonl(path)] == [("good", "pos"), ("bad", "neg")]
    path.write_text('[{"text": "good", "category": "pos"},\n 7]\n', "utf-8")
    with pytest.raises(CorpusFormatError, match=r"a.json:2: a JSON int, not an object"):
        list(read_jsonl(path))


@pytest.mark.parametrize("content, line, message", [
    ('[{"text": "a", "label": "x"},\n\n\n  {"text": "b",\n "label": 7.5e400}]\n', 4, "label inf under 'label'"),
    ('[{"text": "a", "label": "x"}\n {"text": "b", "label": "y"}]\n', 2, "Expecting ',' delimiter or ']' at column 2"),
    ('[{"text": "a", "label": "x"},\n {"text": "b", "label": "y"}] trailing\n', 2, "Extra data after the array"),
    ('[{"text": "a", "label": "x"},\n\n {"text": "b", "label": "y", "text": "c"}]\n', 3, "gives the key 'text' twice"),
    ('[{"text": "a", "label": "x"},\n', 1, "Expecting value at column 30"),
])
def test_a_json_array_element_is_located_by_the_line_it_starts_on(tmp_path, content, line, message):
    """Each element of an array is located by the line it starts on (blank lines counted), as a JSON Lines
    object is by its own line."""
    path = tmp_path / "a.json"
    path.write_text(content, "utf-8")
    with pytest.raises(CorpusFormatError, match=rf"a.json:{line}: .*{re.escape(message)}"):
        list(read_jsonl(path))
    if line > 1:  # the elements before it are read, with their lines
        assert next(read_jsonl(path)).line == 1


@pytest.mark.parametrize("content, where, message", [
    ('{"text": "a", "label": "x"}\n{"text": "b" "label": "y"}\n', 2, "invalid JSON: Expecting ',' delimiter"),
    ('{"text": "a", "label": "x"}\n["b", "y"]\n', 2, "a JSON list, not an object"),
    ('{"text": "a", "label": "x"}\n{"txt": "b", "label": "y"}\n', 2, "no text key 'text' (the object's keys: 'txt'"),
    ('{"text": "a", "label": ["x"]}\n', 1, "label ['x'] under 'label' (expected a string, a number or true/false)"),
    ('{"text": "a", "label": null}\n', 1, "label None under 'label'"),
    ('{"text": "a", "label": "  "}\n', 1, "empty label under 'label'"),
    ('{"text": 5, "label": "x"}\n', 1, "text 5 under 'text' (expected a string)"),
    ('{"review": "a", "stars": 5}\n', 1, "no key of the object ('review', 'stars') names the label"),
    ('[{"text": "a", "label": "x"},\n {"text": }]\n', 2, "invalid JSON: Expecting value"),
])
def test_every_defect_is_located(tmp_path, content, where, message):
    path = tmp_path / "d.jsonl"
    path.write_text(content, "utf-8")
    with pytest.raises(CorpusFormatError, match=f"d.jsonl:{where}: .*" if where > 1 else "d.jsonl:1: ") as error:
        list(read_jsonl(path))
    assert message in str(error.value)


def test_keys_given_by_name(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(lines([{"review": "fine", "stars": 5}, {"review": "poor", "stars": 1.5},
                           {"review": "good", "stars": 5.0}]), "utf-8")  # 5.0: a float column's 5, the same label
    assert [(d.text, d.label) for d in read_jsonl(path, label_column="stars")] == [("fine", "5"), ("poor", "1.5"),
                                                                                  ("good", "5")]
    with pytest.raises(OptionValueError, match="the label and text keys are the same key"):
        read_jsonl(path, label_column="review", text_column="review")
    with pytest.raises(OptionValueError, match="the label column of a JSON object is a key, not an index"):
        read_documents(str(path), None, ReadOptions(format="jsonl", label_column=1))
    with pytest.raises(OptionValueError, match=r"options \(header\) apply to TSV and CSV files .* read as jsonl"):
        read_documents(str(path), None, ReadOptions(header=True))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(), st.one_of(st.text(min_size=1).filter(str.strip), st.integers(), st.booleans())),
                min_size=1, max_size=8))
def test_what_json_writes_reads_back(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("j") / "p.jsonl"
    path.write_text(lines({"text": text, "label": label} for text, label in rows), "utf-8")
    assert [(d.text, d.label) for d in read_jsonl(path)] == [
        (text, label.strip() if isinstance(label, str) else json.dumps(label)) for text, label in rows]


def test_the_command_line_guesses_json_and_says_which_keys_it_read(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sst.jsonl").write_text(lines(SST * 3), "utf-8")
    assert guess_document_format("sst.jsonl") == guess_document_format("x.ndjson") == guess_document_format("a.json")
    code, _, err = run(capsys, "train", "classifier", "--train", "sst.jsonl", "--output", "m.model", "--epochs", "2")
    assert code == 0, err
    assert "read 12 documents (2 labels) from sst.jsonl (labels from key 'label', texts from key 'sentence')" in err
    code, out, _ = run(capsys, "corpus", "stats", "sst.jsonl", "--json")  # no tagged format is JSON
    assert code == 0 and json.loads(out)["documents"] == 12
    code, out, err = run(capsys, "evaluate", "m.model", "--test", "sst.jsonl", "--json")
    assert code == 0 and json.loads(out)["accuracy"] == 1.0, err
