"""Descriptive statistics of a tagged corpus: size, label distribution, ambiguity."""

from __future__ import annotations

from collections import Counter, defaultdict


def corpus_stats(sentences) -> dict:
    """Counts of a corpus of :class:`~structlin.readers.Sentence` objects.

    ``ambiguity`` is the mean number of distinct tags per word type; ``ambiguous_token_fraction`` the
    share of tokens whose word type occurs with more than one tag.
    """
    n_sentences = n_tokens = 0
    lengths = []
    tag_counts: Counter = Counter()
    word_counts: Counter = Counter()
    tags_of = defaultdict(set)
    for sentence in sentences:
        n_sentences += 1
        n_tokens += len(sentence.words)
        lengths.append(len(sentence.words))
        word_counts.update(sentence.words)
        if sentence.tags is not None:
            tag_counts.update(sentence.tags)
            for word, tag in zip(sentence.words, sentence.tags):
                tags_of[word].add(tag)
    stats = {
        "sentences": n_sentences,
        "tokens": n_tokens,
        "word_types": len(word_counts),
        "mean_sentence_length": n_tokens / n_sentences if n_sentences else 0.0,
        "max_sentence_length": max(lengths, default=0),
        "empty_sentences": lengths.count(0),
    }
    if tag_counts:
        ambiguous = {w for w, tags in tags_of.items() if len(tags) > 1}
        stats.update({
            "tags": len(tag_counts),
            "tag_counts": dict(tag_counts.most_common()),
            "ambiguity": sum(len(t) for t in tags_of.values()) / len(tags_of),
            "ambiguous_token_fraction": sum(word_counts[w] for w in ambiguous) / n_tokens,
        })
    return stats


def format_stats(name: str, stats: dict) -> str:
    """A readable plain-text rendering of :func:`corpus_stats`."""
    lines = [f"corpus: {name}"]
    for key in ("sentences", "tokens", "word_types", "mean_sentence_length", "max_sentence_length",
                "empty_sentences", "tags", "ambiguity", "ambiguous_token_fraction"):
        if key in stats:
            value = stats[key]
            lines.append(f"  {key.replace('_', ' '):<26} {value:.3f}" if isinstance(value, float) else
                         f"  {key.replace('_', ' '):<26} {value:,}")
    if "tag_counts" in stats:
        lines.append("  tag distribution:")
        total = stats["tokens"]
        for tag, count in stats["tag_counts"].items():
            lines.append(f"    {tag:<12} {count:>9,}  {100 * count / total:6.2f}%")
    return "\n".join(lines)
