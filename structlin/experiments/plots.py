"""PNG figures of an experiment report, drawn with matplotlib (the optional ``plot`` extra): dev
accuracy per epoch, score by training-set size, the best system's confusions, and template ablation."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import numpy as np

from ..outputs import atomic_output
from .config import METRICS

FILES = ("dev_curves.png", "learning_curve.png", "confusion.png", "ablation.png")
CONFUSION_LABELS = 12  # the most frequent gold labels shown in the confusion matrix


def points(value: float) -> str:
    """A difference of fractions in points; one below 0.005 points with a third decimal, not as ±0.00."""
    return f"{100 * value:+.3f}" if 0 < abs(100 * value) < 0.005 else f"{100 * value:+.2f}"


def available() -> bool:
    """Whether matplotlib can be imported."""
    return importlib.util.find_spec("matplotlib") is not None


def draw(result, ablation: dict, curve: dict, folder: Path) -> list[tuple[str, str]]:
    """Draw every figure that fits the experiment into ``folder``; returns (file name, caption) pairs."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    metric = METRICS[result.metric]
    figures = [("dev_curves.png", _dev_curves(result, folder / "dev_curves.png"))]
    if curve:
        figures.append(("learning_curve.png", _learning_curve(curve, result, metric, folder / "learning_curve.png")))
    figures.append(("confusion.png", _confusion(result, folder / "confusion.png")))
    if ablation:
        figures.append(("ablation.png", _ablation(ablation, metric, folder / "ablation.png")))
    return figures


def _figure(width: float, height: float):
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height), dpi=110, layout="constrained")


def _save(fig, path: Path) -> None:
    """Write ``fig`` as a PNG file, atomically, and free it."""
    import matplotlib.pyplot as plt

    try:
        with atomic_output(path, "wb") as out:
            fig.savefig(out, format="png")
    finally:
        plt.close(fig)


def _legend(ax, n: int, title: str | None = None) -> None:
    """A legend beside the axes, in columns when there are many entries."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, ncols=1 + n // 25, frameon=False, title=title,
              title_fontsize=8, alignment="left")


def _dev_curves(result, path: Path) -> str:
    fig, ax = _figure(12, 6)
    # The reference, drawn thick and black: an ablation's full feature set, else the best system.
    reference = next((o for o in result.outcomes if result.config.mode == "ablation" and o.system.ablated is None),
                     result.outcomes[0])
    others = iter(_colours(len(result.outcomes) - 1))
    steps, lowest, kept_scores = set(), 100.0, []
    for k, o in enumerate(result.outcomes):
        points = [(record.get("epoch", record.get("iteration")), record["dev_accuracy"]) for record in o.history
                  if record.get("dev_accuracy") is not None]
        steps.update("iteration" if "iteration" in record else "epoch" for record in o.history)
        x, y = zip(*points)
        style = ({"color": "black", "linewidth": 2.6, "zorder": 3} if o is reference else
                 {"color": next(others), "linewidth": 1.4, "linestyle": ("-", "--", "-.")[k % 3]})
        ax.plot(x, 100 * np.asarray(y), label=o.system.name, **style)
        kept = [100 * acc for step, acc in points if step == o.best_epoch]
        ax.plot([o.best_epoch] * len(kept), kept, "o", color=style["color"], markersize=6, zorder=4)
        lowest, kept_scores = min(lowest, 100 * min(y)), kept_scores + kept
    if kept_scores:  # first epochs far below every kept score would squash the curves: cut them off
        ax.set_ylim(bottom=max(lowest, min(kept_scores) - 5) - 0.2)
    item = result.item
    ax.set_title(f"Dev {item} accuracy after each epoch (black: {reference.system.name}; dot: the epoch kept)")
    ax.set_xlabel("epoch" + (" (max-ent with L-BFGS: iteration)" if "iteration" in steps else ""))
    ax.set_ylabel(f"dev {item} accuracy (%)")
    ax.grid(alpha=0.3)
    ax.xaxis.get_major_locator().set_params(integer=True)
    _legend(ax, len(result.outcomes), title="systems, best test score first")
    _save(fig, path)
    return (f"Dev {item} accuracy after each epoch, one line per system (black: {reference.system.name}; the dot "
            "marks the epoch kept).")


def _learning_curve(groups: dict, result, metric: str, path: Path) -> str:
    fig, ax = _figure(9, 5.5)
    for (label, outcomes), colour in zip(groups.items(), _colours(len(groups))):
        sizes = [o.train_units for o in outcomes]
        ax.plot(sizes, [100 * o.test_score for o in outcomes], "o-", color=colour, label=f"{label}: test")
        ax.plot(sizes, [100 * o.dev_score for o in outcomes], "s--", color=colour, alpha=0.6, label=f"{label}: dev")
    sizes = sorted({o.train_units for outcomes in groups.values() for o in outcomes})
    if sizes[-1] >= 8 * sizes[0]:
        ax.set_xscale("log")
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes], rotation=45 if len(sizes) > 6 else 0)
    ax.minorticks_off()
    unit = result.unit
    ax.set_title(f"Test and dev {metric} by training-set size")
    ax.set_xlabel(f"training {unit}s" + (" (log scale)" if ax.get_xscale() == "log" else ""))
    ax.set_ylabel(f"{metric} (%)")
    ax.grid(alpha=0.3, which="both")
    _legend(ax, 2 * len(groups))
    _save(fig, path)
    return f"Test (solid) and dev (dashed) {metric} against the number of training {unit}s."


def _confusion(result, path: Path) -> str:
    best = result.outcomes[0]
    counts = Counter(result.gold)
    labels = [label for label, _ in counts.most_common(CONFUSION_LABELS)]
    index = {label: k for k, label in enumerate(labels)}
    other = len(labels)  # a predicted label outside the top ones
    matrix = np.zeros((len(labels), len(labels) + 1))
    for gold, predicted in zip(result.gold, best.predicted):
        if gold in index:
            matrix[index[gold], index.get(predicted, other)] += 1
    if not matrix[:, other].any():
        matrix = matrix[:, :other]
    percent = 100 * matrix / matrix.sum(axis=1, keepdims=True)
    errors = percent.copy()
    np.fill_diagonal(errors, np.nan)  # the diagonal (correct) is written, not coloured
    columns = labels + (["(other)"] if matrix.shape[1] > len(labels) else [])
    fig, ax = _figure(1.2 + 0.62 * len(columns), 1.4 + 0.55 * len(labels))
    image = ax.imshow(errors, cmap="Reds", vmin=0, vmax=max(np.nanmax(errors), 1.0))
    dark = 0.6 * np.nanmax(errors)  # cells darker than this get white text
    for (i, j), value in np.ndenumerate(percent):
        if i == j or value >= 0.05:
            ax.text(j, i, f"{value:.1f}" if i != j else f"{value:.0f}", ha="center", va="center", fontsize=7,
                    fontweight="bold" if i == j else "normal", color="white" if i != j and value > dark else "black")
    ax.set_xticks(range(len(columns)), columns, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(labels)), [f"{label} ({counts[label]:,})" for label in labels], fontsize=8)
    ax.set_xlabel(f"predicted {result.item} label")
    ax.set_ylabel(f"gold label (test {result.item}s)")
    shown = "" if len(labels) == len(counts) else f", {len(labels)} most frequent gold labels"
    ax.set_title(f"Confusions of the best system on test{shown}\n(rows: gold; cells: % of the row; system: "
                 f"{best.system.name})", fontsize=10)
    fig.colorbar(image, ax=ax, shrink=0.8, label="% of the gold label's items (errors only)")
    _save(fig, path)
    return (f"The best system's test confusions: each row is a gold label (its test {result.item}s in brackets), each "
            f"cell the % of them given the column's label; the diagonal (bold, uncoloured) is the % right.")


def _ablation(groups: dict, metric: str, path: Path) -> str:
    rows = max(len(template_rows) for template_rows in groups.values())
    fig, ax = _figure(10, 1.4 + 0.38 * rows * max(1, len(groups) / 1.5))
    height = 0.8 / len(groups)
    order = [row[0] for row in next(iter(groups.values()))][::-1]  # largest loss on top
    for k, ((label, template_rows), colour) in enumerate(zip(groups.items(), _colours(len(groups)))):
        rows_by_template = {row[0]: row for row in template_rows}
        values, labels = [], []
        for template in order:
            _, full, o, comparison = rows_by_template[template]
            values.append(100 * (full.test_score - o.test_score))
            labels.append(points(full.test_score - o.test_score) + ("*" if comparison.randomization < 0.05 else ""))
        y = np.arange(len(order)) + (k - (len(groups) - 1) / 2) * height
        bars = ax.barh(y, values, height=height, color=colour if len(groups) > 1 else
                       ["tab:blue" if v >= 0 else "tab:orange" for v in values], label=label)
        ax.bar_label(bars, labels, padding=3, fontsize=7)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(order)), order, fontsize=8)
    ax.set_xlabel(f"points of test {metric} lost without the template (> 0: the template helps; "
                  "* p < 0.05, approximate randomization)")
    ax.set_title(f"Feature-template ablation: test {metric} lost by dropping each template")
    ax.margins(x=0.15)
    ax.grid(axis="x", alpha=0.3)
    if len(groups) > 1:
        _legend(ax, len(groups))
    _save(fig, path)
    return (f"Test {metric} lost by dropping each feature template, in points, largest loss on top (* : the loss is "
            "significant, p < 0.05 by approximate randomization against all templates).")


def _colours(n: int) -> list:
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(k % cmap.N) for k in range(n)]
