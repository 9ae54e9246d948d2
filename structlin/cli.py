"""The ``structlin`` command: train, evaluate and apply taggers; describe corpora.

Errors caused by input (files, names, options) print one line on stderr and exit with status 1
(usage errors: status 2); they never show a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from .catalog import Catalog, is_corpus_name, load_split
from .decoders import DECODERS
from .errors import StructlinError
from .learners import LEARNERS
from .models import Tagger
from .readers import FILE_FORMATS, guess_format, read_file, read_text, write_conllu
from .stats import corpus_stats, format_stats
from .templates import available_feature_sets


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``structlin: error: ...``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_data_options(parser, *, split: str | None):
    parser.add_argument("--column", help="tag column: upos or xpos for CoNLL-U (default: the model's, else upos); "
                                         "for NLTK corpora universal, or a column name such as chunk")
    parser.add_argument("--format", choices=FILE_FORMATS, help="file format (default: conllu for *.conllu, "
                                                              "else word<TAB>tag)")
    parser.add_argument("--columns", help="column names of a column file, e.g. word,pos,chunk (with --format columns)")
    if split:
        parser.add_argument("--split", default=split, help=f"split of a named corpus (default: {split})")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="structlin", description="Linear structured learning for NLP: train, evaluate and "
                     "apply taggers.", epilog="Corpora: a catalog name (e.g. ud-english-ewt, treebank, conll2000, "
                     "brown) or a file path. Set STRUCTLIN_DATA to a directory holding corpora; missing ones "
                     "are downloaded into a cache.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    train = commands.add_parser("train", help="train a model").add_subparsers(dest="model", required=True,
                                                                               parser_class=_Parser)
    tagger = train.add_parser("tagger", help="train a sequence tagger", description="Train a tagger and save it. "
                              "Example: structlin train tagger --corpus ud-english-ewt --output ewt.model")
    source = tagger.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", help="named corpus (its train split; dev defaults to its dev split)")
    source.add_argument("--train", help="training file")
    tagger.add_argument("--dev", help="dev file (or a split name of --corpus) for early stopping")
    _add_data_options(tagger, split=None)
    tagger.add_argument("--features", default="pos-rich",
                        help=f"feature set name or TOML file (default: pos-rich; bundled: {', '.join(available_feature_sets())})")
    tagger.add_argument("--learner", default="averaged-perceptron", help=f"one of: {', '.join(LEARNERS)}")
    tagger.add_argument("--decoder", default="viterbi", help=f"one of: {', '.join(DECODERS)}")
    tagger.add_argument("--epochs", type=int, default=10, help="training epochs (default: 10)")
    tagger.add_argument("--batch-size", type=int, default=4, help="sentences decoded with the same weights "
                        "before their updates are applied (default: 4; 1 = the textbook online perceptron)")
    tagger.add_argument("--patience", type=int, help="stop after this many epochs without dev improvement")
    tagger.add_argument("--seed", type=int, default=0, help="seed of the shuffling (default: 0)")
    tagger.add_argument("--bits", type=int, default=22, help="feature hash size 2**bits (default: 22)")
    tagger.add_argument("--output", "-o", required=True, help="where to write the model")
    tagger.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")

    evaluate = commands.add_parser("evaluate", help="score a model on a tagged corpus",
                                   description="Evaluate a tagger: token, sentence, known/unknown-word accuracy, "
                                               "per-tag P/R/F1, confusions.")
    evaluate.add_argument("model")
    target = evaluate.add_mutually_exclusive_group(required=True)
    target.add_argument("--corpus", help="named corpus")
    target.add_argument("--test", help="tagged file")
    _add_data_options(evaluate, split="test")
    evaluate.add_argument("--json", action="store_true", help="print one JSON object")

    tag = commands.add_parser("tag", help="tag text with a model",
                              description="Tag tokenized text (one sentence per line, output word/TAG) or a "
                                          "CoNLL-U file (output CoNLL-U with only the tag column replaced).")
    tag.add_argument("model")
    tag.add_argument("--input", "-i", help="input file (default: stdin)")
    tag.add_argument("--output", "-o", help="output file (default: stdout)")
    tag.add_argument("--format", choices=("conllu", "text"), help="input/output format (default: conllu for "
                                                                  "*.conllu, else text)")
    tag.add_argument("--column", help="CoNLL-U column to fill: upos or xpos (default: the model's)")

    corpus = commands.add_parser("corpus", help="corpus tools").add_subparsers(dest="action", required=True,
                                                                              parser_class=_Parser)
    stats = corpus.add_parser("stats", help="sentences, tokens, tags and ambiguity of a corpus")
    stats.add_argument("corpus", help="named corpus or file path")
    _add_data_options(stats, split="train")
    stats.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _sentences(corpus: str, split: str | None, args) -> list:
    """A named corpus split or a file, read with the command's data options."""
    if is_corpus_name(Catalog.load(), corpus) and not args.format:
        return load_split(corpus, split, column=args.column)
    columns = args.columns.split(",") if args.columns else None
    return list(read_file(corpus, format=args.format or ("columns" if columns else None),
                          column=args.column or "upos", columns=columns))


def _train_tagger(args) -> None:
    tagger = Tagger(args.features, args.learner, args.decoder, epochs=args.epochs, seed=args.seed,
                    batch_size=args.batch_size, patience=args.patience, bits=args.bits,
                    progress=False if args.quiet else None)
    catalog = Catalog.load()
    if args.corpus:
        entry = catalog[args.corpus]
        train = _sentences(args.corpus, "train", args)
        dev_name = args.dev or ("dev" if "dev" in entry.splits else None)
        dev = None if dev_name is None else (_sentences(args.corpus, dev_name, args) if dev_name in entry.splits
                                             else _sentences(dev_name, None, args))
    else:
        train = _sentences(args.train, None, args)
        dev = _sentences(args.dev, None, args) if args.dev else None
    began = time.perf_counter()
    tagger.fit(train, dev)
    seconds = time.perf_counter() - began
    if args.corpus:
        conllu = catalog[args.corpus].format == "conllu"
    else:
        conllu = (args.format or guess_format(args.train)) == "conllu"
    tagger.column = args.column or ("upos" if conllu else None)
    tagger.save(args.output)
    if not args.quiet:
        for record in tagger.history_:
            dev_text = "" if record["dev_accuracy"] is None else f"  dev accuracy {100 * record['dev_accuracy']:.2f}%"
            print(f"epoch {record['epoch']:>3}  mistakes {record['train_mistakes']:>6}{dev_text}  "
                  f"{record['seconds']:.1f}s")
        tokens = sum(len(s.words) if hasattr(s, "words") else len(s) for s in train)
        print(f"trained on {len(train):,} sentences ({tokens:,} tokens) in {seconds:.1f}s; "
              f"kept epoch {tagger.learner.best_epoch_}; model written to {args.output}")


def _evaluate(args) -> None:
    tagger = Tagger.load(args.model)
    args.column = args.column or tagger.column
    gold = _sentences(args.corpus or args.test, args.split if args.corpus else None, args)
    report = tagger.report(gold)
    print(json.dumps(report.to_dict()) if args.json else report.format())


def _tag(args) -> None:
    tagger = Tagger.load(args.model)
    fmt = args.format or ("conllu" if (args.input or "").removesuffix(".gz").endswith(".conllu") else "text")
    column = args.column or tagger.column or "upos"
    source = args.input or sys.stdin
    sentences = list(read_file(source, format="conllu", column=column, require_tags=False) if fmt == "conllu"
                     else read_text(source))
    tags = tagger.predict(sentences)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if fmt == "conllu":
            write_conllu(sentences, tags, out, column=column)
        else:
            for sentence, sentence_tags in zip(sentences, tags):
                out.write(" ".join(f"{w}/{t}" for w, t in zip(sentence.words, sentence_tags)) + "\n")
    finally:
        if args.output:
            out.close()


def _stats(args) -> None:
    stats = corpus_stats(_sentences(args.corpus, args.split, args))
    print(json.dumps(stats) if args.json else format_stats(args.corpus, stats))


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    action = {"train": _train_tagger, "evaluate": _evaluate, "tag": _tag, "corpus": _stats}[args.command]
    try:
        action(args)
    except StructlinError as err:
        print(f"structlin: error: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"structlin: error: {err.filename or ''}: {err.strerror or err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("structlin: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
