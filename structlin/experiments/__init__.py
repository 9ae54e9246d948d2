"""Experiments that train several models: seeded k-fold cross-validation, and grids of systems
(corpus × feature set × learner × decoder × hyper-parameters, optionally a feature-template ablation or
a learning curve) described by a TOML file and written up as a report folder.

``config`` reads and checks an experiment file (its schema is in that module's docstring), ``runner``
trains and scores its systems, ``report`` writes ``results.json``, ``results.csv`` and ``report.md``,
and ``plots`` draws the figures.
"""

from .config import ExperimentConfig, load_config
from .crossval import cross_validate, kfold_indices
from .report import output_files, write_report
from .runner import ExperimentResult, run_experiment

__all__ = ["ExperimentConfig", "ExperimentResult", "cross_validate", "kfold_indices", "load_config", "output_files",
           "run_experiment", "write_report"]
