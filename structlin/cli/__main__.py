"""``python -m structlin.cli``: the command line, as ``structlin`` and ``python -m structlin``."""

import sys

from . import main

sys.exit(main())
