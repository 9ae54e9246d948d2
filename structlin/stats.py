"""Descriptive statistics of a corpus: size, label distribution, ambiguity, and how much of it is
out of vocabulary with respect to another corpus (test against train)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

_WORD = re.compile(r"\w+")


def corpus_stats(sentences, reference=None) -> dict:
    """Counts of a corpus of :class:`~structlin.readers.Sentence` objects.

    ``ambiguity`` is the mean number of distinct tags per word type; ``ambiguous_token_fraction`` the
    share of tokens whose word type occurs with more than one tag.  With ``reference`` sentences (the
    training data), ``oov_tokens`` / ``oov_types`` are the shares of tokens / word types never seen there.
    """
    lengths = []
    tag_counts: Counter = Counter()
    word_counts: Counter = Counter()
    tags_of = defaultdict(set)
    for sentence in sentences:
        lengths.append(len(sentence.words))
        word_counts.update(sentence.words)
        if sentence.tags is not None:
            tag_counts.update(sentence.tags)
            for word, tag in zip(sentence.words, sentence.tags):
                tags_of[word].add(tag)
    stats = _sizes("sentence", lengths, word_counts)
    if tag_counts:
        ambiguous = {w for w, tags in tags_of.items() if len(tags) > 1}
        stats.update({
            "tags": len(tag_counts),
            "tag_counts": dict(tag_counts.most_common()),
            "ambiguity": sum(len(t) for t in tags_of.values()) / len(tags_of),
            "ambiguous_token_fraction": sum(word_counts[w] for w in ambiguous) / stats["tokens"],
        })
    if reference is not None:
        stats.update(_out_of_vocabulary(word_counts, {w for s in reference for w in s.words}))
    return stats


def document_stats(documents, reference=None) -> dict:
    """Counts of labelled :class:`~structlin.documents.Document` objects: documents, tokens (word
    characters runs of the lowercased text; the fields of a tuple; the features of a feature dict),
    the label distribution, and with ``reference`` documents the out-of-vocabulary shares."""
    lengths = []
    word_counts: Counter = Counter()
    label_counts: Counter = Counter()
    for document in documents:
        tokens = document_tokens(document.text)
        lengths.append(len(tokens))
        word_counts.update(tokens)
        label_counts[document.label] += 1
    stats = _sizes("document", lengths, word_counts)
    stats.update({"labels": len(label_counts), "label_counts": dict(label_counts.most_common())})
    if reference is not None:
        stats.update(_out_of_vocabulary(word_counts, {w for d in reference for w in document_tokens(d.text)}))
    return stats


def document_tokens(text) -> list[str]:
    """The tokens a document's statistics count: words of a text, fields of a tuple, keys of a dict."""
    if isinstance(text, str):
        return _WORD.findall(text.lower())
    if isinstance(text, Mapping):
        return [str(key) for key in text]
    return [str(field) for field in text]


def _sizes(unit: str, lengths: list[int], word_counts: Counter) -> dict:
    tokens = sum(lengths)
    return {f"{unit}s": len(lengths), "tokens": tokens, "word_types": len(word_counts),
            f"mean_{unit}_length": tokens / len(lengths) if lengths else 0.0,
            f"max_{unit}_length": max(lengths, default=0), f"empty_{unit}s": lengths.count(0)}


def _out_of_vocabulary(word_counts: Counter, known: set) -> dict:
    unseen = [w for w in word_counts if w not in known]
    tokens = sum(word_counts.values())
    return {"oov_tokens": sum(word_counts[w] for w in unseen) / tokens if tokens else 0.0,
            "oov_types": len(unseen) / len(word_counts) if word_counts else 0.0}


def format_stats(name: str, stats: dict) -> str:
    """A readable plain-text rendering of :func:`corpus_stats` or :func:`document_stats`."""
    lines = [f"corpus: {name}"]
    for key, value in stats.items():
        if isinstance(value, dict):
            continue
        label = key.replace("_", " ").replace("oov", "OOV")
        lines.append(f"  {label:<26} {value:.3f}" if isinstance(value, float) else f"  {label:<26} {value:,}")
    for key, unit in (("tag_counts", "tokens"), ("label_counts", "documents")):
        if key in stats:
            lines.append(f"  {key.split('_')[0]} distribution:")
            lines.extend(_distribution(stats[key].items(), stats[unit]))
    return "\n".join(lines)


def _distribution(counts: Iterable[tuple[str, int]], total: int) -> list[str]:
    counts = list(counts)
    width = max((len(label) for label, _ in counts), default=0)
    return [f"    {label:<{max(12, width)}} {count:>9,}  {100 * count / total:6.2f}%" for label, count in counts]
