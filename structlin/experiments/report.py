"""The report folder of an experiment: ``results.json`` (everything), ``results.csv`` (a row per system),
``report.md`` (for a reader who has not seen the code) and, with matplotlib, PNG plots.  Every file is
written atomically (:func:`~structlin.outputs.atomic_output`): a failure leaves the file as it was."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from .. import __version__
from ..outputs import atomic_output
from . import plots
from .config import METRICS, ExperimentConfig, name_systems
from .plots import points
from .runner import Comparison, ExperimentResult, Outcome, compare, model_name

CSV_COLUMNS = ("rank", "system", "features", "ablated", "learner", "decoder", "options", "train_fraction",
               "train_units", "train_items", "metric", "test_score", "dev_score", "best_epoch", "train_seconds",
               "model_bytes", "weights_kept", "n_support", "difference", "p_bootstrap", "p_randomization",
               "p_mcnemar")


#: The report's files besides the plots (:data:`~structlin.experiments.plots.FILES`).
REPORT_FILES = ("results.json", "results.csv", "report.md")


def output_files(config: ExperimentConfig, folder: Path) -> list[Path]:
    """Every file an experiment run of ``config`` may write (or remove) in its report ``folder``."""
    models = [f"models/{model_name(k)}" for k in range(1, len(config.systems) + 1)] if config.keep_models else []
    return [folder / name for name in (*REPORT_FILES, *plots.FILES, *models)]


def write_report(result: ExperimentResult, folder: Path) -> list[Path]:
    """Write the report files into ``folder`` (created if need be); returns their paths.  Plots of an earlier
    run that this one does not draw are removed once everything is written."""
    folder.mkdir(parents=True, exist_ok=True)
    ablation, curve = ablation_groups(result), curve_groups(result)
    figures = plots.draw(result, ablation, curve, folder) if plots.available() else None
    written = [folder / name for name in REPORT_FILES]
    with atomic_output(written[0]) as out:
        out.write(json.dumps(results_json(result, ablation), indent=1, default=_json_scalar) + "\n")
    with atomic_output(written[1]) as out:
        writer = csv.DictWriter(out, CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(csv_rows(result))
    with atomic_output(written[2]) as out:
        out.write(markdown(result, ablation, curve, figures))
    drawn = [name for name, _ in figures or ()]
    for stale in set(plots.FILES) - set(drawn):
        (folder / stale).unlink(missing_ok=True)
    return written + [folder / name for name in drawn]


def _json_scalar(value):
    """numpy scalars (in learners' histories) as Python numbers."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# --- groups of systems: ablation and learning curve -----------------------------------------------------------


def _groups(result: ExperimentResult, dimension: str) -> dict[str, list[Outcome]]:
    """The outcomes grouped by every setting but ``dimension`` (a key of :meth:`System.settings`), each
    group under a name telling it from the other groups."""
    groups: dict[str, list[Outcome]] = {}
    for o in result.outcomes:
        groups.setdefault(json.dumps({**o.system.settings(), dimension: None}, sort_keys=True), []).append(o)
    named = name_systems([replace(g[0].system, ablated=None, fraction=1.0) for g in groups.values()])
    return {system.name: outcomes for system, outcomes in zip(named, groups.values())}


def ablation_groups(result: ExperimentResult) -> dict[str, list[tuple[str, Outcome, Outcome, Comparison]]]:
    """Per group of otherwise equal systems: (dropped template, full system, ablated system, the ablated
    system's significance against the full one), the largest test loss first."""
    if result.config.mode != "ablation":
        return {}
    config, groups = result.config, {}
    for label, outcomes in _groups(result, "ablated").items():
        full = next(o for o in outcomes if o.system.ablated is None)
        rows = [(o.system.settings()["ablated"], full, o,
                 compare(full, o, result.gold, result.metric, config.samples, config.seed))
                for o in outcomes if o.system.ablated is not None]
        groups[label] = sorted(rows, key=lambda row: row[2].test_score - row[1].test_score)
    return groups


def curve_groups(result: ExperimentResult) -> dict[str, list[Outcome]]:
    """Per group of otherwise equal systems, its outcomes by growing training data."""
    if result.config.mode != "learning-curve":
        return {}
    return {label: sorted(outcomes, key=lambda o: o.system.fraction)
            for label, outcomes in _groups(result, "train_fraction").items()}


# --- results.json and results.csv -----------------------------------------------------------------------------


def results_json(result: ExperimentResult, ablation: dict) -> dict:
    """Everything the experiment measured, with its configuration (and the ablation's table)."""
    config = result.config
    losses = [{"group": label, "template": template, "test_loss": full.test_score - o.test_score,
               "dev_loss": full.dev_score - o.dev_score, "versus_full": vars(comparison)}
              for label, rows in ablation.items() for template, full, o, comparison in rows]
    return {
        "name": config.name, "description": config.description, "command": result.command,
        "config_file": str(config.path), "config": config.raw, "structlin_version": __version__,
        "task": config.task, "mode": config.mode, "metric": result.metric, "unit": result.unit, "item": result.item,
        "data": {split: {"source": result.sources[split], "units": units, "items": items}
                 for split, (units, items) in result.sizes.items()},
        "seconds": result.seconds,
        "systems": [{
            "rank": rank, "name": o.system.name, "settings": o.system.settings(),
            "train_units": o.train_units, "train_items": o.train_items,
            "test_score": o.test_score, "dev_score": o.dev_score, "best_epoch": o.best_epoch,
            "train_seconds": o.train_seconds, "model_bytes": o.model_bytes,
            "model_file": f"models/{o.model_file}" if config.keep_models else None,
            "weights_kept": o.weights_kept, "n_support": o.n_support,
            "versus_best": None if comparison is None else vars(comparison),
            "test": o.test_report, "history": o.history,
        } for rank, (o, comparison) in enumerate(zip(result.outcomes, result.comparisons), 1)],
        **({"ablation": losses} if ablation else {}),
    }


def csv_rows(result: ExperimentResult) -> list[dict]:
    """One row per system, best first (scores as fractions, p-values against the best system)."""
    rows = []
    for rank, (o, comparison) in enumerate(zip(result.outcomes, result.comparisons), 1):
        settings = o.system.settings()
        mcnemar = comparison and comparison.mcnemar
        rows.append({
            "rank": rank, "system": o.system.name, "features": settings["features"], "ablated": settings["ablated"],
            "learner": settings["learner"], "decoder": settings["decoder"],
            "options": "; ".join(f"{k}={v}" for k, v in settings["options"].items()),
            "train_fraction": o.system.fraction, "train_units": o.train_units, "train_items": o.train_items,
            "metric": result.metric, "test_score": o.test_score, "dev_score": o.dev_score,
            "best_epoch": o.best_epoch, "train_seconds": round(o.train_seconds, 2), "model_bytes": o.model_bytes,
            "weights_kept": o.weights_kept, "n_support": o.n_support,
            "difference": comparison and comparison.difference, "p_bootstrap": comparison and comparison.bootstrap,
            "p_randomization": comparison and comparison.randomization,
            "p_mcnemar": mcnemar["p_value"] if mcnemar else None,
        })
    return rows


# --- report.md ------------------------------------------------------------------------------------------------


def _table(header: list[str], rows: list[list], n_text: int = 1) -> list[str]:
    """A Markdown table; the columns after the first ``n_text`` are right-aligned (numbers)."""
    align = ["---" if k < n_text else "---:" for k in range(len(header))]
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |",
            *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows), ""]


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}"


def _p(value: float) -> str:
    """A p-value, in bold when below 0.05."""
    text = f"{value:.2g}" if value >= 0.001 else f"{value:.1e}"
    return f"**{text}**" if value < 0.05 else text


def _size(n_bytes: int) -> str:
    return f"{n_bytes / 1e6:.1f} MB" if n_bytes >= 1e5 else f"{n_bytes / 1e3:.1f} kB"


def _count(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def _shared_settings(result: ExperimentResult) -> list[str]:
    """The settings every system has in common, as 'name: value' phrases."""
    settings = [o.system.settings() for o in result.outcomes]
    shared = []
    for key in ("features", "learner", "decoder"):
        if settings[0][key] is not None and all(s[key] == settings[0][key] for s in settings):
            shared.append(f"{key} `{settings[0][key]}`")
    options = [s["options"] for s in settings]
    shared += [f"{key} = {value}" for key, value in options[0].items() if all(o.get(key) == value for o in options)]
    config = result.config
    return shared + [f"seed {config.seed}", f"2^{config.bits} hashed feature buckets"]


def markdown(result: ExperimentResult, ablation: dict, curve: dict, figures: list[tuple[str, str]] | None) -> str:
    """The report: what was run on which data, the ranking, significance, the mode's table and the plots."""
    config, metric = result.config, METRICS[result.metric]
    unit, item = result.unit, result.item
    lines = [f"# Experiment `{config.name}`", ""]
    if config.description:
        lines += [config.description, ""]
    lines += [(f"Command: `{result.command}` (configuration `{config.path}`, structlin {__version__}); "
              f"{len(result.outcomes)} systems in {result.seconds / 60:.1f} minutes."), "", "## Data", ""]
    counts = [f"{unit}s"] + ([f"{item}s"] if item != unit else [])
    lines += _table(["split", "source", *counts],
                    [[split, result.sources[split], *[f"{n:,}" for n in result.sizes[split][: len(counts)]]]
                     for split in ("train", "dev", "test")], n_text=2)
    what = f"{item} accuracy" if result.metric == "accuracy" else "span F1 (chunks as CoNLL's conlleval reads them)"
    iterations = any("iteration" in record for o in result.outcomes for record in o.history[:1])
    lines += [
        "## Method", "",
        (f"Every system is trained on train. After each epoch"
         f"{' (for max-ent with L-BFGS: each iteration)' if iterations else ''} its weights are scored on dev by "
         f"{item} accuracy, and the weights of the best dev epoch are kept (*best epoch*). The kept model is scored "
         f"once on test. Systems are ranked by their test {what}; *dev* is the same metric on dev. Settings every "
         f"system shares: {', '.join(_shared_settings(result))}.{_last_epoch_note(result)}"), "",
        "## Ranking", "",
    ]
    dual = any(o.n_support is not None for o in result.outcomes)  # kernel perceptrons: support examples
    lines += _table(
        ["rank", "system", f"test {metric} %", f"dev {metric} %", "best epoch", "training s", "model size",
         "weights kept", *(["support examples"] if dual else [])],
        [[rank, o.system.name, _percent(o.test_score), _percent(o.dev_score), o.best_epoch, f"{o.train_seconds:.1f}",
          _size(o.model_bytes), _count(o.weights_kept), *([_count(o.n_support)] if dual else [])]
         for rank, o in enumerate(result.outcomes, 1)], n_text=2)
    lines += [("*Training s*: wall-clock seconds of training, dev scoring after each epoch included. *Model size*: "
              "the saved model file. *Weights kept*: the model's non-zero weights."), ""]
    lines += _significance(result)
    lines += _ablation_section(ablation, metric)
    lines += _curve_section(curve, result, metric)
    lines += ["## Plots", ""]
    if figures is None:
        lines += [("Plots were skipped: matplotlib is not installed. Install it with `pip install 'structlin[plot]'` "
                  "(or `pip install matplotlib`) and run the command again."), ""]
    for name, caption in figures or ():
        lines += [f"![{caption}]({name})", "", f"*{caption}*", ""]
    lines += ["## Files", "", "`results.json` holds everything above plus each system's settings, per-epoch history "
              "and full test report; `results.csv` has a row per system."
              + (" The models are in `models/`." if config.keep_models else ""), ""]
    return "\n".join(lines)


def _last_epoch_note(result: ExperimentResult) -> str:
    """A warning when systems kept their last epoch: they were still improving on dev."""
    last = sum(o.best_epoch == len(o.history) for o in result.outcomes)
    if not last:
        return ""
    which = "All systems" if last == len(result.outcomes) else f"{last} of {len(result.outcomes)} systems"
    return f" {which} kept their last epoch: more epochs might still raise their scores."


def _significance(result: ExperimentResult) -> list[str]:
    if len(result.outcomes) < 2:
        return []
    best, config, unit, item = result.outcomes[0], result.config, result.unit, result.item
    accuracy = result.metric == "accuracy"
    mcnemar = (f"McNemar's test counts the test {item}s that exactly one of the two systems labels right."
               if accuracy else "McNemar's test does not apply to F1.")
    lines = ["## Significance against the best system", "",
             (f"Each system is compared with the best one, *{best.system.name}*, on the same "
             f"{result.sizes['test'][0]:,} test {unit}s. The p-values are two-sided, for the hypothesis that both "
             f"systems score the same: the paired bootstrap resamples the test {unit}s and approximate randomization "
             f"swaps the two systems' outputs {unit} by {unit} ({config.samples:,} samples each, seed {config.seed}); "
             f"{mcnemar} **Bold**: p < 0.05."), ""]
    header = ["system", "difference (points)", "paired bootstrap p", "approximate randomization p"]
    rows = []
    for o, comparison in zip(result.outcomes[1:], result.comparisons[1:]):
        row = [o.system.name, points(comparison.difference), _p(comparison.bootstrap), _p(comparison.randomization)]
        if accuracy:
            m = comparison.mcnemar
            row.append(f"{_p(m['p_value'])} ({m['only_reference']:,} vs {m['only_system']:,})")
        rows.append(row)
    if accuracy:
        header.append(f"McNemar p ({item}s right in the best only vs in this system only)")
    return lines + _table(header, rows)


def _ablation_section(groups: dict, metric: str) -> list[str]:
    if not groups:
        return []
    lines = ["## Ablation: what each feature template is worth", "",
             (f"Each row drops one `[[template]]` entry of the feature set and trains again. *Loss* = {metric} "
              "with all templates − without this one, in points: positive when the template helps. *p*: approximate "
              "randomization against the system with all templates (two-sided, as above; **bold**: p < 0.05)."), ""]
    for label, rows in groups.items():
        if len(groups) > 1:
            lines += [f"### {label}", ""]
        full = rows[0][1]
        lines += [f"All templates: test {_percent(full.test_score)}, dev {_percent(full.dev_score)}.", ""]
        lines += _table(["dropped template", "test %", "test loss", "p", "dev %", "dev loss"],
                        [[f"`{template}`", _percent(o.test_score), points(full.test_score - o.test_score),
                          _p(comparison.randomization), _percent(o.dev_score), points(full.dev_score - o.dev_score)]
                         for template, full, o, comparison in rows])
    return lines


def _curve_section(groups: dict, result: ExperimentResult, metric: str) -> list[str]:
    if not groups:
        return []
    unit, item = result.unit, result.item
    lines = ["## Learning curve", "",
             (f"Each system is trained on a random subset of the training {unit}s (seed {result.config.seed}; the "
             f"smaller subsets are part of the larger ones); dev and test stay whole."), ""]
    first = next(iter(groups.values()))
    sizes = [[f"{100 * o.system.fraction:g}%", f"{o.train_units:,}"] + ([f"{o.train_items:,}"] if item != unit else [])
             for o in first]
    header = ["share", f"training {unit}s"] + ([f"training {item}s"] if item != unit else [])
    if len(groups) == 1:
        return lines + _table(header + [f"test {metric} %", f"dev {metric} %"],
                              [size + [_percent(o.test_score), _percent(o.dev_score)] for size, o in zip(sizes, first)])
    return lines + _table(header + [f"{label}: test {metric} %" for label in groups],
                          [size + [_percent(outcomes[k].test_score) for outcomes in groups.values()]
                           for k, size in enumerate(sizes)])
