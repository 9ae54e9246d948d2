"""structlin: linear structured and multiclass learning for NLP.

``y* = argmax_y w·φ(x, y)`` with hashed sparse joint features, one set of decoders shared by every
learner, and models that plug into NLTK.
"""

__version__ = "0.1.0"

import os as _os

# Read from the repository itself rather than installed (``python -m structlin`` at its top after ``pip install .``):
# the feature sets and the corpus catalog are its top-level folders, which an install places inside the package
# (pyproject.toml's package-dir), so the package looks for its subpackages ``features`` and ``corpora`` there too.
_ROOT = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(__path__[0], "features")) and _os.path.isfile(
        _os.path.join(_ROOT, "features", "__init__.py")):
    __path__.append(_ROOT)

from .models import Classifier, Tagger  # noqa: E402
from .templates import FeatureSet, Param, register_template  # noqa: E402

__all__ = ["Classifier", "FeatureSet", "Param", "Tagger", "__version__", "register_template"]
