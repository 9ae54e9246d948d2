"""structlin: linear structured and multiclass learning for NLP.

``y* = argmax_y w·φ(x, y)`` with hashed sparse joint features, one set of decoders shared by every
learner, and models that plug into NLTK.
"""

__version__ = "0.1.0"


def _data_subpackages() -> None:
    """Read from the repository itself rather than installed (``python -m structlin`` at its top after ``pip install
    .``), the package has no ``features`` and ``corpora`` inside it: they are the repository's top-level folders,
    which an install places inside the package (pyproject.toml's package-dir).  Each is then imported from there as
    the subpackage, so that the feature sets and the catalog are found as an installed package finds them."""
    import importlib.util
    import os
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for name in ("features", "corpora"):
        folder = os.path.join(root, name)
        if os.path.isdir(os.path.join(__path__[0], name)) or not os.path.isfile(os.path.join(folder, "__init__.py")):
            continue
        spec = importlib.util.spec_from_file_location(f"{__name__}.{name}", os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])
        module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        globals()[name] = module


_data_subpackages()

from .models import Classifier, Tagger  # noqa: E402
from .templates import FeatureSet, Param, register_template  # noqa: E402

__all__ = ["Classifier", "FeatureSet", "Param", "Tagger", "__version__", "register_template"]
