"""structlin: linear structured and multiclass learning for NLP.

``y* = argmax_y w·φ(x, y)`` with hashed sparse joint features, one set of decoders shared by every
learner, and models that plug into NLTK.
"""

__version__ = "0.1.0"

from .models import Classifier, Tagger  # noqa: E402
from .templates import FeatureSet, Param, register_template  # noqa: E402

__all__ = ["Classifier", "FeatureSet", "Param", "Tagger", "__version__", "register_template"]
