"""Two parts of the documentation that would otherwise need the network.

- Formulas (``:math:`` and ``.. math::``) are typeset at build time by matplotlib's
  mathtext into SVG files under ``_images/math/``, so a page shows them offline and
  without a JavaScript library. mathtext reads a subset of TeX: a formula it cannot
  read is shown as its TeX source and listed in ``_images/math/unrendered.txt``.
- Links into scikit-learn's documentation: intersphinx needs an inventory of
  scikit-learn's objects, normally downloaded. ``write_sklearn_inventory`` writes one
  from the installed scikit-learn instead (its public modules' ``__all__`` and their
  public methods), with the page addresses scikit-learn's documentation uses.
"""

import hashlib
import html
import importlib
import inspect
import io
import re
import zlib
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

_FONT_SIZE = 12  # points; the theme's body text is about 16 px = 12 pt

# TeX that mathtext does not read, rewritten to what it does.
_REWRITES = (
    (re.compile(r"\\[Bb]ig{1,2}[lr]?(?![a-zA-Z])"), ""),
    (re.compile(r"\\bmod(?![a-zA-Z])"), r"\\,\\mathrm{mod}\\,"),
    (re.compile(r"\\(?:text|operatorname|textrm)\{"), r"\\mathrm{"),
    (re.compile(r"\\iff(?![a-zA-Z])"), r"\\Leftrightarrow"),
    (re.compile(r"\\(ge|le)(?![a-zA-Z])"), r"\\\1q"),
    (re.compile(r"\\lvert|\\rvert"), "|"),
    (re.compile(r"\\lVert|\\rVert"), r"\\|"),
    (re.compile(r"\\displaystyle|\\nonumber"), ""),
    (re.compile(r"(?<!\\)&"), ""),
    # A font command on a bare letter: \mathcal F -> \mathcal{F}.
    (re.compile(r"\\(math[a-z]{2,4})\s+([A-Za-z0-9])"), r"\\\1{\2}"),
)


def _tex_for_mathtext(latex):
    text = " ".join(latex.split())
    for pattern, repl in _REWRITES:
        text = pattern.sub(repl, text)
    return text.strip()


def _render(latex, outdir):
    """Write ``latex`` as an SVG; return ``(file name, depth in pt)`` or ``None``."""
    import matplotlib
    from matplotlib import mathtext
    from matplotlib.font_manager import FontProperties

    tex = _tex_for_mathtext(latex)
    if not tex:
        return None
    name = hashlib.sha1(tex.encode()).hexdigest()[:16] + ".svg"
    path = Path(outdir) / name
    depth_path = path.with_suffix(".depth")
    if path.exists() and depth_path.exists():
        return name, float(depth_path.read_text())
    buf = io.BytesIO()
    try:
        with matplotlib.rc_context({"mathtext.fontset": "cm", "svg.fonttype": "path",
                                    "svg.hashsalt": "skpaper",
                                    "savefig.transparent": True}):
            depth = mathtext.math_to_image(f"${tex}$", buf, format="svg",
                                           prop=FontProperties(size=_FONT_SIZE))
    except Exception:  # noqa: BLE001 - any parse failure falls back to the source
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    # No metadata date: the same formula gives the same file in every build.
    svg = re.sub(rb"<metadata>.*?</metadata>", b"", buf.getvalue(), flags=re.S)
    path.write_bytes(svg)
    depth_path.write_text(f"{depth:.3f}")
    return name, depth


def _math_dir(translator):
    return Path(translator.builder.outdir) / translator.builder.imagedir / "math"


def _unrendered(translator, latex):
    out = _math_dir(translator)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "unrendered.txt", "a") as fh:
        fh.write(f"{translator.builder.current_docname}: {latex}\n")
    logger.info("mathtext cannot read %r: shown as TeX", latex)


def _pieces(latex):
    """A displayed formula's lines: blank lines and ``\\\\`` separate them."""
    parts = []
    for block in re.split(r"\n\s*\n", latex):
        parts += [p for p in re.split(r"\\\\(?![a-zA-Z{])", block) if p.strip()]
    return parts


def _img(translator, name, latex, style=""):
    src = Path(translator.builder.imgpath, "math", name).as_posix()
    alt = html.escape(" ".join(latex.split()), quote=True)
    return f'<img class="math" src="{src}" alt="{alt}"{style}/>'


def visit_math(self, node):
    latex = node.astext()
    rendered = _render(latex, _math_dir(self))
    if rendered is None:
        _unrendered(self, latex)
        self.body.append(f'<code class="math">{self.encode(latex).strip()}</code>')
    else:
        name, depth = rendered
        self.body.append(_img(self, name, latex,
                              f' style="vertical-align: {-depth:.2f}pt"'))
    raise nodes.SkipNode


def visit_displaymath(self, node):
    latex = node.astext()
    self.body.append(self.starttag(node, "div", CLASS="math"))
    lines = []
    for piece in _pieces(latex):
        rendered = _render(piece, _math_dir(self))
        if rendered is None:
            _unrendered(self, piece)
            lines.append(f'<code class="math">{self.encode(piece).strip()}</code>')
        else:
            lines.append(_img(self, rendered[0], piece))
    self.body.append("<p>" + "<br/>".join(lines) + "</p>\n</div>")
    raise nodes.SkipNode


def _reset_unrendered(app):
    if app.builder.format == "html":
        (Path(app.outdir) / app.builder.imagedir / "math" / "unrendered.txt").unlink(
            missing_ok=True)


def setup_math(app):
    app.add_html_math_renderer("mathtext", (visit_math, None),
                               (visit_displaymath, None))
    app.connect("builder-inited", _reset_unrendered)


# --------------------------------------------------------------------------- sklearn
def _public_methods(cls):
    for name, member in vars(cls).items():
        if not name.startswith("_") and (inspect.isfunction(member)
                                         or isinstance(member, (classmethod, staticmethod))):
            yield name


def sklearn_entries():
    """``(name, role, uri)`` of scikit-learn's public API in its documentation's layout."""
    import sklearn

    entries, seen = [], set()
    modules = ["sklearn"] + [f"sklearn.{m}" for m in getattr(sklearn, "__all__", ())
                             if not m.startswith("_") and m.islower()]
    for modname in modules:
        try:
            module = importlib.import_module(modname)
        except Exception:  # noqa: BLE001 - an optional part that does not import
            continue
        if modname != "sklearn":
            entries.append((modname, "py:module", f"api/{modname}.html#module-{modname}"))
        for name in getattr(module, "__all__", ()):
            try:
                obj = getattr(module, name, None)
            except ImportError:  # experimental names that need an explicit enable
                continue
            full = f"{modname}.{name}"
            if obj is None or inspect.ismodule(obj) or full in seen:
                continue
            page = f"modules/generated/{full}.html"
            if inspect.isclass(obj):
                seen.add(full)
                entries.append((full, "py:class", f"{page}#{full}"))
                for meth in _public_methods(obj):
                    entries.append((f"{full}.{meth}", "py:method", f"{page}#{full}.{meth}"))
            elif callable(obj):
                seen.add(full)
                entries.append((full, "py:function", f"{page}#{full}"))
    return entries


def write_sklearn_inventory(path):
    """Write an intersphinx inventory (format 2) of the installed scikit-learn."""
    import sklearn

    header = ("# Sphinx inventory version 2\n# Project: scikit-learn\n"
              f"# Version: {sklearn.__version__}\n"
              "# The remainder of this file is compressed using zlib.\n")
    path = Path(path)
    if path.is_file() and path.read_bytes().startswith(header.encode()):
        return path  # written for this scikit-learn already (importing it all takes seconds)
    body = "".join(f"{name} {role} 1 {uri} -\n" for name, role, uri in sklearn_entries())
    data = header.encode() + zlib.compress(body.encode())
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
    return path
