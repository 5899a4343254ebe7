"""Sphinx configuration of the skpaper documentation.

The API reference (``api/``) and the per-paper pages (``papers/``) are generated
from the code at build time by ``_generate.py``; the hand-written pages are the
user guide (``user_guide/``), the reproduction page and the index. Nothing in the
build needs the network: formulas are typeset by matplotlib at build time and the
links into scikit-learn's documentation come from an inventory written from the
installed scikit-learn (``_offline.py``).

Environment variables:

``SKPAPER_DOCS_GALLERY``
    The examples (``examples/plot_*.py``) are executed and show their output and
    figures; ``0`` renders them as code only.
``SKPAPER_EXAMPLE_SIZE``
    ``tiny`` (the default here) runs each executed example at its tiny size, seconds
    each; set it to ``full`` for the examples' own sizes (minutes each).
"""

import os
import re
import sys
import warnings
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("SKPAPER_EXAMPLE_SIZE", "tiny")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _generate  # noqa: E402
import _offline  # noqa: E402

import skpaper  # noqa: E402

project = "skpaper"
author = "the skpaper developers"
copyright = "the skpaper developers"
release = skpaper.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
    "matplotlib.sphinxext.plot_directive",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = []
exclude_patterns = ["_build", "results", "auto_examples/*.ipynb", "auto_examples/*.py"]
root_doc = "index"
default_role = "literal"

# autodoc and numpydoc
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
autoclass_content = "class"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# Formulas: SVG files typeset at build time (see _offline.py), no MathJax.
html_math_renderer = "mathtext"

# Links into scikit-learn's documentation, from an inventory of the installed
# scikit-learn (no download). The addresses are those of scikit-learn's stable docs.
intersphinx_mapping = {
    "sklearn": ("https://scikit-learn.org/stable/",
                str(_offline.write_sklearn_inventory(HERE / "_build" / "sklearn-objects.inv"))),
}

# The user guide's examples (``.. plot::``): run at build time, source shown above
# the figure, one PNG per figure.
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 100)]
plot_pre_code = ""
plot_rcparams = {"figure.figsize": (6.4, 3.4), "figure.autolayout": True}

# sphinx-gallery
_execute = os.environ.get("SKPAPER_DOCS_GALLERY", "1") != "0"
sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "plot_gallery": _execute,
    "download_all_examples": False,
    "doc_module": ("skpaper",),
    "backreferences_dir": "api/backreferences",
    "reference_url": {"skpaper": None},
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
    "matplotlib_animations": False,
}

# HTML
html_theme = "pydata_sphinx_theme"
html_title = f"skpaper {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
}
html_static_path = ["_static"]
html_css_files = ["skpaper.css"]
html_show_sourcelink = False
html_copy_source = False

# Warnings raised by third-party code while importing the families are not ours.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=FutureWarning)


def _generate_pages(app):
    _generate.generate(HERE, results_dir=HERE / "results")


def _skip_foreign_member(app, what, name, obj, skip, options):
    """Leave out members inherited from scikit-learn, torch and Python themselves.

    Their docstrings are documented in those projects (and refer to labels that
    exist only there); the estimator pages keep skpaper's own methods, inherited
    ones included.
    """
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] in ("sklearn", "torch", "builtins", "abc", "typing"):
        return True
    return None


_SHAPE = re.compile(r"(of shape \(|, )(?<!`)\b([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*_)(?=[,)])")
_CITATION_USE = re.compile(r"\[([A-Za-z0-9]+)\]_")


def _numpydoc_conventions(app, what, name, obj, options, lines):
    """Three conventions of our docstrings that plain rst reads otherwise.

    - Shapes written with fitted attributes, ``ndarray of shape (n_features_in_,)``,
      as in scikit-learn: a bare ``name_`` is an rst reference, so it is quoted.
    - A method citing its class's references (``[1]_``) has no ``.. [1]`` of its
      own: the citation is kept as plain ``[1]`` text.
    - A module listing references that only its functions cite: the list is kept
      as a plain list (an unreferenced rst citation is a warning).
    """
    defined = {m.group(1) for line in lines for m in re.finditer(r"^\s*\.\. \[(\w+)\]", line)}
    used = {m.group(1) for line in lines for m in _CITATION_USE.finditer(line)}
    for i, line in enumerate(lines):
        if "of shape (" in line:
            line = _SHAPE.sub(lambda m: f"{m.group(1)}``{m.group(2)}``", line)
            line = _SHAPE.sub(lambda m: f"{m.group(1)}``{m.group(2)}``", line)
        line = _CITATION_USE.sub(
            lambda m: m.group(0) if m.group(1) in defined else f"[{m.group(1)}]", line)
        lines[i] = line
    unused = defined - used
    if not unused:
        return
    out, in_unused = [], False
    for line in lines:
        m = re.match(r"^(\s*)\.\. \[(\w+)\] (.*)$", line)
        if m:
            previous = in_unused
            in_unused = m.group(2) in unused
            # A list item and explicit markup cannot touch: separate them.
            if out and out[-1].strip() and previous != in_unused:
                out.append("")
            if in_unused:
                line = f"{m.group(1)}- [{m.group(2)}] {m.group(3)}"
        elif in_unused and line.strip():
            line = line[1:] if line.startswith(" ") else line
        elif not line.strip():
            in_unused = False
        out.append(line)
    lines[:] = out


_EXAMPLE_TITLE = re.compile(r"^(?:(=+)\n)?([^\n]+)\n=+\n", re.MULTILINE)


def _note_tiny_examples(app, docname, source):
    """Say on each executed example's page that it ran at its tiny size."""
    if not (_execute and docname.startswith("auto_examples/plot_")
            and os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"):
        return
    script = docname.rsplit("/", 1)[-1] + ".py"
    note = ("\n.. note::\n\n   The output and figures on this page come from the example's "
            "*tiny* size (``SKPAPER_EXAMPLE_SIZE=tiny``, which the documentation build "
            "sets): little data and a few training steps, so the numbers are not "
            f"meaningful. ``python examples/{script}`` runs it at its own size.\n\n")
    match = _EXAMPLE_TITLE.search(source[0])
    if match:
        source[0] = source[0][:match.end()] + note + source[0][match.end():]


def setup(app):
    app.connect("source-read", _note_tiny_examples)
    _offline.setup_math(app)
    app.connect("builder-inited", _generate_pages)
    app.connect("autodoc-process-docstring", _numpydoc_conventions, priority=400)
    app.connect("autodoc-skip-member", _skip_foreign_member)
