"""Inputs found by a hostile sweep of the command line (2026-11-28), each once silent, a crash or an unclear
message: now one line that names the file or option and what was expected, and nothing lost or overwritten."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import zipfile

import pytest

from cli_run import run
from structlin.errors import OptionValueError
from structlin.sources import ReadOptions, stream_documents, stream_sentences
from test_cli_hostile import assert_one_line, cli, snapshot

TAGGED = "The\tDET\ncat\tNOUN\nsat\tVERB\n.\tPUNCT\n\nA\tDET\ndog\tNOUN\nran\tVERB\n.\tPUNCT\n\n"


@pytest.mark.parametrize("stream", [stream_sentences, stream_documents])
def test_a_stream_refuses_a_pipe(tmp_path, stream):
    """A FIFO gives its data once; a stream reads its source again every epoch (it waited for ever)."""
    fifo = tmp_path / "fifo.tsv"
    os.mkfifo(fifo)
    with pytest.raises(OptionValueError, match=r"fifo.tsv: a pipe or device, which can be read once; .*--stream"):
        stream(str(fifo), None, ReadOptions())


def test_train_stream_from_standard_input_is_refused():
    process = cli("train", "tagger", "--train", "/dev/stdin", "--stream", "--epochs", "1", "--output", os.devnull,
                  stdin=-1, stderr=-1, stdout=-1)
    _, err = process.communicate(TAGGED.encode(), timeout=120)
    assert process.returncode == 1 and err.decode().count("\n") == 1
    assert "/dev/stdin: a pipe or device" in err.decode()


def test_output_that_is_the_cost_matrix_is_refused(work, capsys):
    (work / "cm.tsv").write_text("\tpos\tneg\npos\t0\t1\nneg\t2\t0\n", "utf-8")
    before = snapshot(work)
    code, out, err = run(capsys, "train", "classifier", "--train", "docs.txt", "--learner", "svm", "--cost-matrix",
                         "cm.tsv", "--output", "cm.tsv")
    assert_one_line(code, err, 2, "--output cm.tsv is also --cost-matrix cm.tsv")
    assert snapshot(work) == before


def test_misspelt_feature_set_keys_are_refused(work, capsys):
    (work / "f.toml").write_text('name = "x"\nvalue = "binary"\nnormalise = "l2"\n[[template]]\nname = "bias"\n')
    code, _, err = run(capsys, "train", "tagger", "--train", "r.conllu", "--features", "f.toml", "--output", "x.model")
    assert_one_line(code, err, 1, "f.toml: unknown key(s) 'normalise', 'value'; accepted:", "normalize", "values")
    assert not (work / "x.model").exists()



def test_a_toml_file_that_is_not_utf8_is_named_with_its_line(work, capsys):
    """A feature set or experiment that is not UTF-8 gave Python's codec message without the file."""
    (work / "f.toml").write_bytes(b"\xff\xfe[[template]]\n")
    (work / "e.toml").write_bytes(b'name = "x"\n\xe9\n')
    code, _, err = run(capsys, "train", "tagger", "--train", "r.conllu", "--features", "f.toml", "--output", "x.model")
    assert_one_line(code, err, 1, "f.toml:1: byte 0xff is not UTF-8 (a TOML file is UTF-8 text)")
    code, _, err = run(capsys, "experiment", "e.toml")
    assert_one_line(code, err, 1, "e.toml:2: byte 0xe9 is not UTF-8 (a TOML file is UTF-8 text)")


@pytest.mark.parametrize("flag", ["--label-column", "--text-column"])
def test_a_negative_column_is_refused_as_such(work, capsys, flag):
    """-1 was read as a header name and blamed "the header row" of a file that has none."""
    code, _, err = run(capsys, "train", "classifier", "--train", "docs.txt", flag, "-1", "--output", "x.model")
    assert_one_line(code, err, 2, f"argument {flag}: -1: columns are counted from 0 (the first), not from the end")


def test_a_conllu_file_given_to_a_classifier_is_named_as_such(work, capsys):
    """A CoNLL-U file read as documents fell to fastText: 'no label: the line starts with '#''."""
    for command in (["evaluate", "c.model", "--test"], ["train", "classifier", "--output", "x.model", "--train"]):
        code, _, err = run(capsys, *command, "r.conllu")
        assert_one_line(code, err, 1, "r.conllu: a CoNLL-U file holds tagged sentences, not labelled documents",
                        "--format says which")
    assert not (work / "x.model").exists()


def test_a_cola_style_file_is_read_by_its_columns_contents(work, capsys):
    """GLUE CoLA's rows (source, label, mark, sentence; no header) trained on source codes with texts of 0 and 1."""
    from test_documents import _rows

    (work / "cola.tsv").write_text(_rows(("gj04", "label", "mark", "sentence")), "utf-8")
    code, _, err = run(capsys, "train", "classifier", "--train", "cola.tsv", "--epochs", "2", "--output", "x.model")
    assert code == 0 and err.splitlines()[0] == (
        "read 30 documents (2 labels) from cola.tsv (no header row; labels from column 1, texts from column 3, chosen "
        "by their contents: --label-column and --text-column choose others)")
    # several sources in the first rows could be labels too: column 0 is kept, and --label-column alone says which
    (work / "cola.tsv").write_text(_rows(("source", "label", "mark", "sentence")), "utf-8")
    code, _, err = run(capsys, "train", "classifier", "--train", "cola.tsv", "--epochs", "2", "--output", "x.model")
    assert code == 0 and "labels from column 0, texts from column 3, chosen by their contents" in err.splitlines()[0]
    code, _, err = run(capsys, "train", "classifier", "--train", "cola.tsv", "--label-column", "1", "--epochs", "2",
                       "--output", "x.model")
    assert code == 0 and "labels from column 1, texts from column 3, chosen by their contents" in err.splitlines()[0]
    code, out, err = run(capsys, "evaluate", "x.model", "--test", "cola.tsv")  # test data: the model's labels' column
    assert code == 0 and "labels from column 1, texts from column 3" in err
    (work / "t.tsv").write_text(_rows(("sentence", "label")), "utf-8")
    (work / "d.tsv").write_text(_rows(("sentence", "label"), 5), "utf-8")  # too few rows alone: train's labels tell
    code, _, err = run(capsys, "train", "classifier", "--train", "t.tsv", "--dev", "d.tsv", "--epochs", "2",
                       "--output", "x.model")
    assert code == 0 and [line.split("(no header row; ")[1][:41] for line in err.splitlines()[:2]] == [
        "labels from column 1, texts from column 0"] * 2

def test_an_unknown_template_is_located(work, capsys):
    (work / "f.toml").write_text('[[template]]\nname = "bias"\n[[template]]\nname = "nope"\n')
    code, _, err = run(capsys, "train", "tagger", "--train", "r.conllu", "--features", "f.toml", "--output", "x.model")
    assert_one_line(code, err, 1, "f.toml: [[template]] #2: unknown feature template 'nope'; accepted: bias")


@pytest.mark.parametrize("flag, value", [("--l2", "100"), ("--learning-rate", "100")])
def test_sgd_steps_that_would_flip_the_weights_are_refused(work, capsys, flag, value):
    """η₀·l2/N ≥ 1 scales the weights by a factor ≤ 0 at the first step: an option error, not an internal one."""
    code, _, err = run(capsys, "train", "classifier", "--train", "docs.txt", "--learner", "maxent", "--solver", "sgd",
                       "--epochs", "1", flag, value, "--output", "x.model", "-q")
    assert_one_line(code, err, 1, "at the first SGD step: give a learning rate below N/l2")
    assert not (work / "x.model").exists()


@pytest.mark.parametrize("command", [["evaluate", "m.model"], ["compare", "m.model", "m.model"]])
def test_evaluating_on_text_without_tags_is_located(work, capsys, command):
    code, _, err = run(capsys, *command, "--test", "t.txt", "--format", "text")
    assert_one_line(code, err, 1, "t.txt:1: sentence 1 has no tags (an evaluation needs the gold tags")


@pytest.mark.parametrize("fmt", ["conllu", "word-tag", "slash", "text"])
def test_a_classifier_refuses_a_format_of_tagged_sentences(work, capsys, fmt):
    """It read the file as fastText instead, and scored it."""
    code, out, err = run(capsys, "evaluate", "c.model", "--test", "docs.txt", "--format", fmt)
    assert_one_line(code, err, 1, f"format {fmt!r} is a format of tagged sentences; docs.txt is read as documents")
    assert out == ""


def test_tune_refuses_an_option_given_as_a_flag_and_in_the_grid(work, capsys):
    code, _, err = run(capsys, "tune", "classifier", "--train", "docs.txt", "--grid", "epochs=1", "--epochs", "2",
                       "-q")
    assert_one_line(code, err, 2, "--epochs is given both as an option and in --grid")


def test_tune_refuses_a_value_listed_twice(work, capsys):
    code, _, err = run(capsys, "tune", "classifier", "--train", "docs.txt", "--grid", "relative_margin=1,2,1.0", "-q")
    assert_one_line(code, err, 2, "'1' and '1.0' are the same value")


@pytest.mark.parametrize("item, needle", [("margin=-1", "margin must be non-negative and finite, got -1.0"),
                                          ("margin=abc", "cannot read 'abc' as margin"),
                                          ("bogus=1", "learner 'averaged-perceptron' has no option 'bogus'")])
def test_a_bad_grid_is_a_usage_error_before_the_data_is_read(work, capsys, item, needle):
    """A grid's bad name or value is refused as the parser refuses a flag's (status 2, was 1), before reading."""
    code, _, err = run(capsys, "tune", "classifier", "--train", "missing.txt", "--grid", item, "-q")
    assert_one_line(code, err, 2, f"--grid {item!r}: {needle}")


@pytest.mark.parametrize("command, flag, needle", [
    (("train", "tagger"), "--learner", "unknown learner 'bogus'; accepted: averaged-perceptron, bernoulli-nb"),
    (("train", "tagger"), "--decoder", "unknown decoder 'bogus'; accepted: greedy, multiclass, viterbi"),
    (("cross-validate", "classifier"), "--learner", "unknown learner 'bogus'"),
    (("tune", "tagger"), "--decoder", "unknown decoder 'bogus'")])
def test_an_unknown_learner_or_decoder_is_a_usage_error(work, capsys, command, flag, needle):
    """A misspelt learner or decoder name is refused by the parser (status 2, was 1), the names it takes listed."""
    code, _, err = run(capsys, *command, "--train", "missing.txt", flag, "bogus", "-q")
    assert_one_line(code, err, 2, f"argument {flag}: {needle}")


def test_a_named_corpus_is_the_catalogs_beside_a_folder_of_its_name(work, capsys, nltk_data_dir):
    """--corpus names a catalog corpus even where a file or folder of that name sits in the current folder (it read
    the folder: here a user's folder of models named like the corpus); --train reads the folder."""
    (work / "names").mkdir()
    (work / "names" / "m.model").write_bytes((work / "m.model").read_bytes())
    code, out, _ = run(capsys, "cross-validate", "--corpus", "names", "--folds", "2", "--epochs", "1")
    assert code == 0 and out.startswith("fold  1  accuracy")
    code, _, err = run(capsys, "cross-validate", "--train", "names", "--folds", "2")
    assert_one_line(code, err, 1, "a file outside any label folder")
    (work / "mine").mkdir()  # a name the catalog does not know is read as any source is: the folder
    code, _, err = run(capsys, "cross-validate", "--corpus", "mine", "--folds", "2")
    assert code == 1 and err.splitlines()[-1] == ("structlin: error: mine: no documents (empty folder; expected at "
                                                  "least one)")


def test_tag_refuses_a_column_without_conllu(work, capsys):
    code, out, err = run(capsys, "tag", "m.model", "--input", "t.txt", "--column", "xpos")
    assert_one_line(code, err, 2, "--column chooses the CoNLL-U column", "neither the input (text)")
    assert out == ""


def test_text_read_as_conllu_because_of_the_output_format_says_so(work, capsys):
    """``--format conllu`` also makes a text file's input CoNLL-U (scripts rely on it): its error says why, and how to
    read lines of text."""
    code, out, err = run(capsys, "tag", "m.model", "--input", "t.txt", "--format", "conllu")
    assert_one_line(code, err, 1, "t.txt:1: expected 10 tab-separated columns, found 1 (read as CoNLL-U because of "
                    "--format conllu: --input-format text reads lines of text)")
    assert run(capsys, "tag", "m.model", "--input", "t.txt", "--input-format", "text", "--format", "conllu")[0] == 0


def test_tag_warns_of_tags_written_to_another_conllu_column_than_the_models(work, capsys):
    """A UPOS model's tags written into the XPOS column (--column xpos) are its UPOS tags: said once, then done."""
    code, out, err = run(capsys, "tag", "m.model", "--input", "r.conllu", "--column", "xpos")
    assert code == 0 and err.splitlines() == [
        "structlin: warning: m.model was trained on the upos column; its tags are written to the xpos column"]
    assert run(capsys, "tag", "m.model", "--input", "r.conllu")[::2] == (0, "")


def test_a_dash_is_standard_input_and_output(work):
    process = cli("tag", work / "m.model", "--input", "-", "--output", "-", stdin=-1, stdout=-1, stderr=-1, cwd=work)
    out, err = process.communicate(b"The dog\n", timeout=120)
    assert process.returncode == 0, err
    assert out.decode().split()[0].startswith("The/") and not (work / "-").exists()


def test_a_dev_fraction_that_leaves_too_little_names_the_option(work, capsys):
    code, _, err = run(capsys, "train", "classifier", "--train", "docs.txt", "--dev-fraction", "0.9", "--output",
                       "x.model", "-q")
    assert_one_line(code, err, 2, "--dev-fraction 0.9 of 6 documents leaves 1 document to train on")


@pytest.mark.parametrize("name, pack, needle", [
    ("t.tsv.bz2", bz2.compress, "a bzip2-compressed file, not text (bunzip2 it first)"),
    ("t.tsv.xz", lzma.compress, "an xz-compressed file, not text (unxz it first)"),
    ("t.tsvz", gzip.compress, "a gzip-compressed file, not text (name it *.gz"),
    ("t.zip", None, "a zip archive, not text (unzip it first)"),
])
def test_compressed_files_are_named_as_such(work, capsys, name, pack, needle):
    """An undecodable byte was reported, with the advice to give --encoding."""
    if pack is None:
        with zipfile.ZipFile(work / name, "w") as archive:
            archive.writestr("t.tsv", TAGGED)
    else:
        (work / name).write_bytes(pack(TAGGED.encode()))
    code, _, err = run(capsys, "train", "tagger", "--train", name, "--format", "word-tag", "--output", "x.model")
    assert_one_line(code, err, 1, f"{name}: {needle}")


def test_a_feature_set_for_another_kind_of_document_says_which_fits(work, capsys):
    (work / "s.svm").write_text("1 1:1 2:3\n2 3:1\n1 1:2\n2 3:4\n", "utf-8")
    code, _, err = run(capsys, "train", "classifier", "--train", "s.svm", "--format", "svmlight", "--features",
                       "text-words", "--output", "x.model", "-q")
    assert_one_line(code, err, 1, "the feature set reads texts", "a document is a feature dict",
                    "numeric for SVMlight", "or leave them out")


def test_an_experiment_run_again_says_it_replaces_the_results(work, capsys):
    (work / "e.toml").write_text('name = "e"\ntask = "tagger"\ntrain = "r.conllu"\ndev = "r.conllu"\n'
                                 'test = "r.conllu"\nbits = 12\nsamples = 10\n[grid]\nlearner = ["averaged-perceptron"]\n'
                                 'features = ["pos-basic"]\ndecoder = ["greedy"]\nepochs = [1]\n')
    code, _, err = run(capsys, "experiment", "e.toml", "--output", "out")
    assert code == 0 and "earlier run" not in err, err
    code, _, err = run(capsys, "experiment", "e.toml", "--output", "out")
    assert code == 0 and "out holds the results of an earlier run: this run's replace them" in err


def test_a_table_of_labelled_texts_is_not_read_as_tokens(work, capsys):
    """``label,text`` names a tag and a word column too: it was read as one sentence of two tokens with spaces."""
    (work / "d.csv").write_text("label,text\npos,good movie\nneg,bad film\n", "utf-8")
    code, _, err = run(capsys, "train", "tagger", "--train", "d.csv", "--output", "x.model")
    assert_one_line(code, err, 1, "d.csv:2: every 'text' value of the sentence from this row on holds spaces",
                    "structlin train classifier")
    code, out, _ = run(capsys, "corpus", "stats", "d.csv", "--format", "csv", "--json")
    assert code == 0 and '"documents": 2' in out


def test_corpus_stats_reads_a_table_of_tokens(work, capsys):
    (work / "ner.tsv").write_text("Sentence #\tWord\tPOS\tTag\nSentence: 1\tThe\tDT\tO\n\tcat\tNN\tO\n"
                                  "Sentence: 2\tA\tDT\tO\n", "utf-8")
    code, out, err = run(capsys, "corpus", "stats", "ner.tsv", "--format", "tsv", "--json")
    assert code == 0 and '"sentences": 2' in out and '"tokens": 3' in out, err
    code, out, err = run(capsys, "corpus", "stats", "ner.tsv", "--format", "tsv", "--column", "POS", "--json")
    assert code == 0 and '"NN"' in out, err


def test_a_sentence_id_seen_again_is_refused(work, capsys):
    (work / "re.csv").write_text("sent,word,tag\n1,a,X\n1,b,Y\n2,c,X\n1,d,Y\n", "utf-8")
    code, _, err = run(capsys, "corpus", "stats", "re.csv")
    assert_one_line(code, err, 1, "re.csv:5: sentence '1' again, after other sentences (it began on line 2")


def test_svmlight_multi_labels_are_refused(work, capsys):
    (work / "m.svm").write_text("1,2 1:1\n-1 2:1\n", "utf-8")
    code, _, err = run(capsys, "corpus", "stats", "m.svm", "--format", "svmlight")
    assert_one_line(code, err, 1, "m.svm:1: labels '1,2': multi-label input is not supported")


@pytest.mark.parametrize("command", [["explain", "m.model", "--sample", "l1.txt"],
                                     ["clusters", "l1.txt", "--output", "c.txt"]])
def test_explain_and_clusters_read_other_encodings(work, capsys, command):
    """Both advised --encoding for a file in another encoding, which neither had."""
    (work / "l1.txt").write_bytes("café au lait\ncafé noir\n".encode("latin-1"))
    code, _, err = run(capsys, *command)
    assert_one_line(code, err, 1, "l1.txt:1: invalid UTF-8", "--encoding latin-1")
    code, _, err = run(capsys, *command, "--encoding", "latin-1")
    assert code in (0, 1) and "invalid" not in err  # clusters may find too few words to cluster: not a reading error


def test_plain_text_in_a_conllu_file_names_the_columns(work, capsys):
    (work / "p.conllu").write_text("the cat sat\n", "utf-8")
    code, _, err = run(capsys, "train", "tagger", "--train", "p.conllu", "--output", "x.model")
    assert_one_line(code, err, 1, "p.conllu:1: expected 10 tab-separated columns, found 1")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_device_is_named(work, capsys):
    code, _, err = run(capsys, "tag", "m.model", "--input", "t.txt", "--output", "/dev/full")
    assert_one_line(code, err, 1, "/dev/full: cannot write: No space left on device")


def test_an_unreadable_option_value_says_what_was_expected(work, capsys):
    code, _, err = run(capsys, "train", "classifier", "--train", "docs.txt", "--learner", "kernel-perceptron",
                       "--gamma", "foo", "--output", "x.model", "-q")
    assert_one_line(code, err, 2, "--gamma: cannot read 'foo' (expected a number or 'scale')")


@pytest.mark.parametrize("learner, flags, needle", [
    ("averaged-perceptron", ["--margin", "1", "--relative-margin", "3"], "give margin or relative_margin, not both"),
    ("averaged-perceptron", ["--margin", "1", "--relative-margin", "2"], "give margin or relative_margin, not both"),
    ("perceptron", ["--margin", "1", "--relative-margin", "4"], "give margin or relative_margin, not both"),
    ("svm", ["--C", "1", "--relative-C", "3"], "give C or relative_C, not both"),
    ("maxent", ["--l2", "1", "--relative-l2", "3"], "give l2 or relative_l2, not both")])
def test_a_value_and_its_relative_form_are_not_both_taken(work, capsys, learner, flags, needle):
    """A given margin (l2, C) was used as it is and its relative form silently ignored; both are now refused, as
    usage errors, in train and across a tune's flags and grid."""
    code, _, err = run(capsys, "train", "classifier", "--train", "docs.txt", "--learner", learner, *flags,
                       "--output", "x.model", "-q")
    assert_one_line(code, err, 2, needle)
    assert not (work / "x.model").exists()
    grid = f"{flags[2].lstrip('-').replace('-', '_')}=2,3"
    code, _, err = run(capsys, "tune", "classifier", "--train", "missing.txt", "--learner", learner, *flags[:2],
                       "--grid", grid, "-q")
    assert_one_line(code, err, 2, "--grid candidate", needle)


def test_a_given_margin_replaces_the_classifiers_relative_margin(work, capsys):
    """The classifier's own relative margin (4) is a default: a margin given as it is, on the command line or in a
    tune grid, replaces it (it was refused as both forms given) and is what the model trains with."""
    from structlin import Classifier

    code, _, err = run(capsys, "train", "classifier", "--train", "docs.txt", "--learner", "averaged-perceptron",
                       "--margin", "1", "--epochs", "2", "--output", "given.model", "-q")
    assert code == 0, err
    assert Classifier.load(work / "given.model").learner.margin == 1.0
    code, _, err = run(capsys, "tune", "classifier", "--train", "docs.txt", "--learner", "voted-perceptron",
                       "--grid", "margin=1,2", "epochs=2", "--output", "t.model", "-q")
    assert code == 0, err
    assert Classifier.load(work / "t.model").learner.margin in (1.0, 2.0)

def test_an_experiment_report_into_a_file_is_refused(work, capsys):
    (work / "e.toml").write_text('name = "e"\ntask = "tagger"\ntrain = "r.conllu"\ndev = "r.conllu"\n'
                                 'test = "r.conllu"\n[grid]\nlearner = ["averaged-perceptron"]\n'
                                 'features = ["pos-basic"]\ndecoder = ["greedy"]\nepochs = [1]\n')
    (work / "afile").write_text("keep", "utf-8")
    code, _, err = run(capsys, "experiment", "e.toml", "--output", "afile")
    assert_one_line(code, err, 2, "--output afile is a file: the report is a folder")
    assert (work / "afile").read_text("utf-8") == "keep"


def test_a_kernel_that_overflows_is_refused(work, capsys):
    """Degree 100,000 gave infinite kernel values, raw numpy warnings and a model that predicted one label."""
    code, _, err = run(capsys, "train", "classifier", "--train", "docs.txt", "--learner", "kernel-perceptron",
                       "--kernel", "poly", "--degree", "100000", "--output", "x.model", "-q")
    assert_one_line(code, err, 1, "the poly kernel (kernel poly, degree 100000", "beyond floating point",
                    "lower the degree or gamma")
    assert not (work / "x.model").exists()


def test_classify_reads_a_fields_models_lines_as_tab_separated_fields(work, capsys):
    """A model trained on tuples of fields got each line as one text, which it refused; a line is now its fields."""
    from structlin import Classifier

    tuples = [("join", "board", "as", "director"), ("is", "chairman", "of", "group"), ("named", "director", "of", "firm"),
              ("bought", "shares", "in", "june")] * 3
    model = Classifier(epochs=3, progress=False).fit(tuples, ["V", "N", "N", "V"] * 3)
    model.save(work / "pp.model")
    (work / "in.tsv").write_text("join\tboard\tas\tdirector\nis\tchairman\tof\tgroup\n", "utf-8")
    code, out, _ = run(capsys, "classify", "pp.model", "--input", "in.tsv")
    assert code == 0 and out.split() == model.predict(tuples[:2]).tolist()
    (work / "short.tsv").write_text("join board as director\n", "utf-8")
    code, _, err = run(capsys, "classify", "pp.model", "--input", "short.tsv")
    assert code == 1 and "short.tsv:1: the document is a tuple of 1 field, but the model was trained on tuples of 4 " \
        "fields" in err


def _numeric_model(work):
    from structlin import Classifier

    X = [{1: 1.0, 2: 0.5}, {3: 1.0}, {1: 0.8}, {3: 0.9, 4: 0.2}] * 3
    model = Classifier(epochs=3, progress=False).fit(X, ["a", "b", "a", "b"] * 3)
    model.save(work / "num.model")
    return model


def test_classify_reads_a_numeric_models_lines_as_svmlight_features(work, capsys):
    """A model trained on SVMlight features could not classify: every line was a text.  Each line is now its
    features, after an optional label (not read); a blank or comment line has none and still gets its line out."""
    model = _numeric_model(work)
    (work / "in.svm").write_text("b 1:1 2:0.5\n3:1 4:0.2\n\n# a comment\n", "utf-8")
    code, out, _ = run(capsys, "classify", "num.model", "--input", "in.svm")
    expected = model.predict([{1: 1.0, 2: 0.5}, {3: 1.0, 4: 0.2}, {}, {}]).tolist()
    assert code == 0 and out.split() == expected
    (work / "bad.svm").write_text("1:1\n2:x\n", "utf-8")
    code, _, err = run(capsys, "classify", "num.model", "--input", "bad.svm")
    assert_one_line(code, err, 1, "bad.svm:2: value 'x' of feature '2:x' is not a number")
    (work / "texts").mkdir()
    (work / "texts" / "a.txt").write_text("1:1\n", "utf-8")
    code, _, err = run(capsys, "classify", "num.model", "--input", "texts")
    assert code == 2 and "num.model was trained on numeric feature dicts: classify reads those one a line" in err


def test_a_document_of_another_kind_is_located_in_its_file(work, capsys):
    """evaluate and compare said "gold data: document 1 is ..." of a file's document of another kind than the model's
    (an SVMlight file for a text model); now the file and line it was read from."""
    _numeric_model(work)
    (work / "texts.tsv").write_text("a\tgood film\nb\tbad film\n", "utf-8")
    for command in (["evaluate", "num.model"], ["compare", "num.model", "num.model"]):
        code, _, err = run(capsys, *command, "--test", "texts.tsv")
        assert code == 1 and "Traceback" not in err and err.splitlines()[-1] == (
            "structlin: error: texts.tsv:1: the document is a text, but the model was trained on numeric feature dicts")
    code, _, err = run(capsys, "classify", "num.model", "--input", "texts.tsv")
    assert code == 1 and "texts.tsv:1: feature 'good' has no ':'" in err


def test_output_to_a_descriptor_writes_through_it(work):
    """``-o /dev/stdout`` with standard output appended to a file replaced that file by a new one: what it held was
    lost, and what the shell wrote after went to the unlinked file.  A descriptor's path is written through it."""
    log = work / "log.txt"
    log.write_text("before\n", "utf-8")
    with log.open("ab") as appended:
        process = cli("tag", "m.model", "--input", "t.txt", "--output", "/dev/stdout", stdout=appended)
        process.wait(timeout=120)
        appended.write(b"after\n")
    lines = log.read_text("utf-8").splitlines()
    assert process.returncode == 0 and lines[0] == "before" and lines[-1] == "after" and len(lines) == 4


def test_a_batch_beyond_any_index_is_refused(work, capsys):
    """A batch size near 2**63 overflowed the epoch's index arithmetic (status 70)."""
    code, _, err = run(capsys, "train", "classifier", "--train", "docs.txt", "--batch-size", str(2**63 - 1),
                       "--output", "x.model", "-q")
    assert_one_line(code, err, 2, "--batch-size: must be in [1, 2147483647]")


@pytest.mark.parametrize("flags, needle", [
    (["--learner", "maxent", "--learning-rate", "0.5"], "learning_rate applies to the sgd solver, not 'lbfgs'"),
    (["--learner", "maxent", "--momentum", "0.5"], "momentum applies to the sgd solver, not 'lbfgs'"),
    (["--learner", "passive-aggressive", "--variant", "pa", "--C", "3"], "C applies to the pa-i and pa-ii variants"),
    (["--learner", "kernel-perceptron", "--removal", "random"], "removal chooses which support example a full budget"),
    (["--dev", "none", "--patience", "2"], "--patience sets the evaluations on dev, and --dev none trains without"),
    (["--dev", "none", "--eval-every", "2"], "--eval-every sets the evaluations on dev")])
def test_an_option_without_effect_is_refused(work, capsys, flags, needle):
    """Each of these was accepted and trained the very weights it would have without it."""
    code, _, err = run(capsys, "train", "classifier", "--train", "docs.txt", *flags, "--output", "x.model", "-q")
    assert_one_line(code, err, 2, needle)
    assert not (work / "x.model").exists()


def test_classify_refuses_a_label_its_lines_cannot_hold(work, capsys):
    """A label with a line break printed as two lines (two inputs gave three lines out); JSON holds it."""
    from structlin import Classifier

    model = Classifier(epochs=2, progress=False).fit(["good film", "bad film"] * 3, ["po\ns", "neg"] * 3)
    model.save(work / "nl.model")
    (work / "in.txt").write_text("good film\nbad film\n", "utf-8")
    for fmt in ("text", "tsv"):
        code, out, err = run(capsys, "classify", "nl.model", "--input", "in.txt", "--format", fmt)
        assert_one_line(code, err, 2, "predicts the label 'po\\ns', which a line of --format", "give --format json")
        assert out == ""
    code, out, _ = run(capsys, "classify", "nl.model", "--input", "in.txt", "--format", "json")
    assert code == 0 and len(out.splitlines()) == 2


def test_output_that_is_the_feature_sets_clusters_is_refused(work, capsys):
    """A model written over the word-cluster file the --features TOML names (status 0, the clusters lost)."""
    (work / "wc.txt").write_text("0110\tdog\t5\n", "utf-8")
    (work / "fs.toml").write_text('name = "fs"\nclusters = "wc.txt"\n\n[[template]]\nname = "cluster"\n', "utf-8")
    code, _, err = run(capsys, "train", "tagger", "--train", "r.conllu", "--features", "fs.toml", "--output", "wc.txt")
    assert_one_line(code, err, 2, "--output wc.txt is also the word clusters of --features")
    assert (work / "wc.txt").read_text("utf-8") == "0110\tdog\t5\n"


def test_classify_refuses_a_file_name_its_lines_cannot_hold(work, capsys):
    """A folder's file named with a line break broke ``path<TAB>label`` into two lines."""
    (work / "texts").mkdir()
    (work / "texts" / "a\nb.txt").write_text("The dog barks", "utf-8")
    code, out, err = run(capsys, "classify", "c.model", "--input", "texts")
    assert_one_line(code, err, 1, "a file name with a tab or a line break", "give --format json")
    code, out, _ = run(capsys, "classify", "c.model", "--input", "texts", "--format", "json")
    assert code == 0 and len(out.splitlines()) == 1


def test_cross_validation_needs_two_folds_before_reading(work, capsys):
    """--folds 0 read the data, then exited 1 without naming the option."""
    code, _, err = run(capsys, "cross-validate", "--train", "missing.txt", "--folds", "1")
    assert code == 2 and "argument --folds: expected an integer of at least 2, got 1" in err


@pytest.mark.parametrize("argv, status, needle", [
    (["tag", "m.model", "--input", "t.txt", "--encoding", "punycode"], 1, "t.txt:1: invalid punycode: "),
    (["tag", os.devnull, "--input", "t.txt"], 1, f"{os.devnull}: a device or pipe, not a model file"),
    (["explain", "m.model", "--text", "  "], 2, "--text has no tokens to explain"),
    (["explain", "c.model", "--sample", "docs.txt", "--encoding", "nosuch"], 2,
     "argument --encoding: unknown encoding"),
])
def test_second_sweep_messages(work, capsys, argv, status, needle):
    """A codec that fails as a whole named no file; a device was "not found"; an empty --text explained nothing with
    status 0; explain's --encoding was checked only once a file was read (status 1)."""
    code, _, err = run(capsys, *argv)
    assert code == status and "Traceback" not in err and needle in err.splitlines()[-1]
