"""The API reference: pdoc renders every public module of structlin from its docstrings, here under test so that CI
builds it (pdoc is in the ``test`` extra; without it this module is skipped).

Build it yourself with ``pip install -e ".[docs]"`` and ``python tests/test_docs.py docs/api`` (then open
``docs/api/index.html``).  ``pdoc structlin`` alone would stop at the top page: pdoc follows a package's ``__all__``
to its submodules, and structlin's ``__all__`` (like that of ``learners``, ``documents`` and ``experiments``) names
classes and functions only, so :func:`api_modules` names the modules pdoc would not reach by itself.
"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

#: Optional dependencies hidden from the build under test: the reference must not need them.
OPTIONAL = ("matplotlib", "sklearn", "seqeval", "hypothesis")

# pdoc's page of a module lists its submodules by the module's __all__, so structlin's page would list none: this
# template lists the documented modules one level down instead.
SUBMODULES_TEMPLATE = """{% extends "default/module.html.jinja2" %}
{% block nav_submodules %}
    {% set prefix = module.modulename + "." %}
    {% for name in all_modules if name.startswith(prefix) and "." not in name[prefix | length:] %}
        {% if loop.first %}<h2>Submodules</h2><ul>{% endif %}
        <li>{{ all_modules[name].taken_from | link(text=name) }}</li>
        {% if loop.last %}</ul>{% endif %}
    {% endfor %}
{% endblock %}
"""

# Runs in a fresh interpreter: hides the modules named in argv[2] (comma-separated), renders the modules argv[4:]
# into argv[1] with the page template argv[3] and prints every warning (pdoc warns, and goes on, when a module fails
# to import).
BUILD = """
import importlib.abc, sys, tempfile, warnings
from pathlib import Path

hidden = set(filter(None, sys.argv[2].split(",")))

class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in hidden:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)", name=name)

sys.meta_path.insert(0, Hide())
import pdoc

with warnings.catch_warnings(record=True) as caught, tempfile.TemporaryDirectory() as templates:
    warnings.simplefilter("always")
    Path(templates, "module.html.jinja2").write_text(sys.argv[3])
    pdoc.render.configure(template_directory=Path(templates))
    pdoc.pdoc(*sys.argv[4:], output_directory=Path(sys.argv[1]))
for w in caught:
    print(f"{w.category.__name__}: {w.message}")
"""


def public_modules() -> list[str]:
    """``structlin`` and its submodules, but private ones (``_name``) and ``__main__``."""
    import structlin

    return ["structlin"] + [info.name for info in pkgutil.walk_packages(structlin.__path__, "structlin.")
                            if "._" not in info.name]


def api_modules() -> list[str]:
    """The modules to give pdoc: ``structlin`` and every public submodule whose package has an ``__all__`` (pdoc
    walks the others itself)."""
    return ["structlin"] + [name for name in public_modules()[1:]
                            if hasattr(importlib.import_module(name.rpartition(".")[0]), "__all__")]


def build(output: Path, hidden: tuple[str, ...] = ()) -> list[str]:
    """Render the API reference into ``output``; the warnings printed while building."""
    done = subprocess.run([sys.executable, "-c", BUILD, str(output), ",".join(hidden), SUBMODULES_TEMPLATE,
                           *api_modules()],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, list[str]]:
    """The reference built without the optional dependencies, and the warnings of the build."""
    pytest.importorskip("pdoc", reason="pdoc is not installed: pip install -e '.[docs]' to build the API reference")
    output = tmp_path_factory.mktemp("api")
    return output, build(output, OPTIONAL)


def test_every_module_imports_renders_and_is_linked(reference):
    output, warnings = reference
    assert warnings == []   # "Couldn't import ..." and the like
    assert (output / "index.html").is_file()
    for name in public_modules():
        assert (output / (name.replace(".", "/") + ".html")).is_file(), name
        package, _, leaf = name.rpartition(".")
        if package:   # linked from its package's page
            page = (output / (package.replace(".", "/") + ".html")).read_text(encoding="utf-8")
            assert f'href="{package.rpartition(".")[2]}/{leaf}.html"' in page, name


def test_public_names_are_documented(reference):
    output, _ = reference
    top = (output / "structlin.html").read_text(encoding="utf-8")
    for name in ("Tagger", "Classifier", "FeatureSet", "register_template", "Param"):
        assert f'id="{name}"' in top, name
    assert "A sequence labeller" in top   # a docstring, rendered

    from structlin.learners import LEARNERS

    learners = (output / "structlin" / "learners.html").read_text(encoding="utf-8")
    for cls in LEARNERS.values():
        assert f'id="{cls.__name__}"' in learners, cls.__name__
    assert 'id="load_split"' in (output / "structlin" / "catalog.html").read_text(encoding="utf-8")


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/api")
    for line in build(target):
        print(line, file=sys.stderr)
    print(f"API reference: {target / 'index.html'}")
