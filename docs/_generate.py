"""Generate the API reference and the per-paper pages from the code.

Run by ``conf.py`` at the start of every build, so the pages always follow the
docstrings, the family ``__all__`` lists, the estimator registry and the claim
registry. ``python docs/_generate.py`` runs it alone (useful to inspect the
rst it writes).

Written (and git-ignored): ``api/*.rst``, ``api/generated/*.rst`` and
``papers/*.rst``. Read: ``results/<paper>/<claim>.json`` (the committed output
of ``skpaper reproduce all --scale quick --out docs/results``) and the figures
beside them. Missing or unreadable result files are reported on the page as
"not yet run", never as an error.
"""

import importlib
import inspect
import json
import re
import textwrap
from pathlib import Path

#: Modules documented in the API reference besides the estimator families.
EXTRA_MODULES = ("datasets", "utils", "papers")

#: Statuses a claim can have in a result file, and how the page words them.
STATUS_TEXT = {
    "reproduced": "reproduced (the check passed and its negative control failed decisively)",
    "contradicted": "contradicted (the interval excludes the effect of interest in the "
                    "paper's direction)",
    "inconclusive": "inconclusive (neither the check nor its opposite is decided at this "
                    "budget: not evidence against the paper)",
    "not reproduced": "not reproduced (written before verdicts were decisive: read it as "
                      "not decided)",
    "uninformative": "uninformative (the negative control did not fail decisively, so the "
                     "pass is no evidence at this scale)",
    "reported": "reported (figures recorded; nothing is asserted, or there is no negative "
                "control, so it never counts as reproduced)",
    "error": "error (the claim raised)",
    "not yet run": "not yet run",
}

_RECONSTRUCTED = re.compile(r"\breconstruct(ed|s)?\b(?! (loss|error|target|fidelity))",
                            re.IGNORECASE)


# --------------------------------------------------------------------------- helpers
def _write(path, text):
    """Write ``text`` unless the file already holds it (keeps rebuilds incremental)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _title(text, char="="):
    return f"{text}\n{char * len(text)}\n"


def _plain_citations(text):
    """``[1]_`` -> ``[1]``: the reference list stays on the docstring's own page."""
    return re.sub(r"\[([A-Za-z0-9]+)\]_", r"[\1]", text)


def _first_line(doc):
    doc = inspect.cleandoc(doc or "").strip()
    if not doc:
        return ""
    return _plain_citations(doc.split("\n\n")[0].replace("\n", " ").strip())


def _indent(text, n=3):
    return textwrap.indent(text, " " * n)


def _rst_escape(text):
    return str(text).replace("\\", "\\\\").replace("*", "\\*").replace("`", "\\`") \
        .replace("|", "\\|").replace("_", "\\_")


def _families():
    from skpaper.utils._registry import FAMILIES

    return tuple(FAMILIES) + EXTRA_MODULES


def _import_family(name):
    from skpaper.utils._registry import _family_module

    if name in EXTRA_MODULES:
        return importlib.import_module(f"skpaper.{name}")
    return _family_module(name)


def _kind(obj, estimators):
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "estimator" if obj in estimators else "class"
    if callable(obj):
        return "function"
    return "data"


# --------------------------------------------------------------------------- API
def collect_api():
    """Return ``{family: [(name, obj, kind, canonical), ...]}`` in ``__all__`` order.

    ``canonical`` is the dotted name under which the object gets its page: the
    family whose private module defines it when that family exports it,
    otherwise the first family (in registry order) that does. Other families
    link to that page instead of documenting the object twice.
    """
    from skpaper.utils import all_estimators

    estimators = {cls for _, cls in all_estimators()}
    modules = {}
    for fam in _families():
        module = _import_family(fam)
        if module is not None:
            modules[fam] = module

    owner = {}
    for fam, module in modules.items():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.ismodule(obj):
                continue
            home = getattr(obj, "__module__", "") or ""
            parts = home.split(".")
            defined_here = len(parts) > 1 and parts[0] == "skpaper" and parts[1] == fam
            key = id(obj) if (inspect.isclass(obj) or inspect.isfunction(obj)) else None
            if key is None:
                continue
            if key not in owner or (defined_here and not owner[key][1]):
                owner[key] = (f"skpaper.{fam}.{name}", defined_here)

    api = {}
    for fam, module in modules.items():
        rows = []
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            kind = _kind(obj, estimators)
            if kind == "module":
                canonical = obj.__name__
            elif kind == "data":
                canonical = f"skpaper.{fam}.{name}"
            else:
                canonical = owner[id(obj)][0]
            rows.append((name, obj, kind, canonical))
        api[fam] = rows
    return api


def _object_page(fullname, obj, kind):
    module, _, name = fullname.rpartition(".")
    # The short name as title (full dotted names overflow the sidebar and the header).
    lines = [_title(name), f"``{fullname}``", "", f".. currentmodule:: {module}", ""]
    if kind == "estimator":
        lines += [f".. autoclass:: {name}", "   :members:",
                  "   :inherited-members:", ""]
    elif kind == "class":
        lines += [f".. autoclass:: {name}", "   :members:", ""]
    else:
        lines += [f".. autofunction:: {name}", ""]
    lines += [f".. minigallery:: {fullname}", "   :add-heading: Examples using ``"
              f"{name}``", ""]
    return "\n".join(lines)


def _module_page(module):
    lines = [_title(module.__name__), f".. automodule:: {module.__name__}",
             "   :members:", ""]
    return "\n".join(lines)


_SECTIONS = (
    ("estimator", "Estimators"),
    ("class", "Other classes"),
    ("function", "Functions"),
    ("module", "Submodules"),
    ("data", "Constants"),
)


def write_api(docs_dir, api):
    """Write ``api/index.rst``, one page per family and one per object."""
    api_dir = docs_dir / "api"
    gen_dir = api_dir / "generated"
    wanted = set()
    for fam, rows in api.items():
        module = importlib.import_module(f"skpaper.{fam}")
        lines = [_title(f"skpaper.{fam}"), f".. module:: skpaper.{fam}", "",
                 inspect.cleandoc(module.__doc__ or "").split("\n\n")[0], ""]
        toc = []
        for kind, heading in _SECTIONS:
            group = [r for r in rows if r[2] == kind]
            if not group:
                continue
            lines += [_title(heading, "-"), ".. list-table::", "   :widths: 35 65", ""]
            for name, obj, _, canonical in group:
                if kind == "data":
                    summary = f"``{type(obj).__name__}``: ``{_rst_escape(repr(obj))[:120]}``"
                    lines += [f"   * - ``{name}``", f"     - {summary}"]
                    continue
                summary = _first_line(obj.__doc__)
                ref = f":doc:`{name} <generated/{canonical}>`"
                if canonical != f"skpaper.{fam}.{name}" and kind != "module":
                    summary = f"{summary} (documented as ``{canonical}``)"
                lines += [f"   * - {ref}", f"     - {summary or ' '}"]
                if canonical == f"skpaper.{fam}.{name}" or kind == "module":
                    if canonical not in wanted:
                        wanted.add(canonical)
                        toc.append(f"generated/{canonical}")
                        page = (_module_page(obj) if kind == "module"
                                else _object_page(canonical, obj, kind))
                        _write(gen_dir / f"{canonical}.rst", page)
            lines.append("")
        lines += [".. toctree::", "   :hidden:", ""] + [f"   {t}" for t in toc] + [""]
        _write(api_dir / f"{fam}.rst", "\n".join(lines))

    n_est = sum(r[2] == "estimator" for rows in api.values() for r in rows)
    index = [
        _title("API reference"),
        "One page per public estimator, class and function, generated from each "
        "family's ``__all__``. The estimators are those listed by "
        f":func:`skpaper.utils.all_estimators` ({n_est} of them in this build).",
        "",
        ".. list-table::", "   :widths: 30 70", "",
    ]
    for fam in api:
        module = importlib.import_module(f"skpaper.{fam}")
        index += [f"   * - :doc:`skpaper.{fam} <{fam}>`",
                  f"     - {_first_line(module.__doc__)}"]
    index += ["", ".. toctree::", "   :hidden:", ""] + [f"   {fam}" for fam in api] + [""]
    _write(api_dir / "index.rst", "\n".join(index))
    # Drop pages of objects that are no longer exported.
    if gen_dir.exists():
        for stale in gen_dir.glob("*.rst"):
            if stale.stem not in wanted:
                stale.unlink()
    return len(wanted)


# --------------------------------------------------------------------------- papers
def load_results(results_dir):
    """Return ``({"<paper>/<claim>": payload}, problems)`` from the result folder."""
    results, problems = {}, []
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        return results, problems
    for path in sorted(results_dir.glob("*/*.json")):
        try:
            payload = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            problems.append(f"{path.relative_to(results_dir)}: {exc}")
            continue
        if not isinstance(payload, dict):
            problems.append(f"{path.relative_to(results_dir)}: not a JSON object")
            continue
        paper = payload.get("paper", path.parent.name)
        claim = payload.get("claim", path.stem)
        results[f"{paper}/{claim}"] = payload
    return results, problems


def claim_status(payload):
    """The status of one result payload, also for files written before statuses existed."""
    if payload is None:
        return "not yet run"
    status = payload.get("status")
    if isinstance(status, str) and status:
        return status
    if payload.get("error"):
        return "error"
    passed = payload.get("passed")
    if passed is True:
        return "reproduced"
    if passed is False:
        return "not reproduced"
    return "not yet run"


def _value(value):
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        if len(value) > 8:
            numbers = [v for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if len(numbers) == len(value):
                return (f"{len(value)} values, mean {_value(sum(numbers) / len(numbers))}, "
                        f"from {_value(min(numbers))} to {_value(max(numbers))}")
            head = ", ".join(_value(v) for v in value[:8])
            return f"[{head}, ... ({len(value)} values)]"
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if _is_summary(value):
            return _summary_text(value)
        return "; ".join(f"{k}: {_value(v)}" for k, v in list(value.items())[:8]) + (
            "; ..." if len(value) > 8 else "")
    return str(value)


def _is_summary(value):
    """A dict of summary statistics (a mean with its spread, count or bound)."""
    return isinstance(value, dict) and "mean" in value and any(
        k in value for k in ("n", "std", "lower_bound", "upper_bound"))


def _summary_text(d):
    """One line for a summary dict: mean, spread, count, one-sided bound and its outcome."""
    parts = [f"mean {_value(d['mean'])}"]
    if d.get("std") is not None:
        parts.append(f"SD {_value(d['std'])}")
    if d.get("n") is not None:
        parts.append(f"n = {d['n']}")
    if d.get("min") is not None and d.get("max") is not None:
        parts.append(f"range {_value(d['min'])} to {_value(d['max'])}")
    level = d.get("confidence")
    level = f"{100 * level:.0f}% " if isinstance(level, (int, float)) else ""
    for side in ("lower", "upper"):
        bound = d.get(f"{side}_bound")
        if isinstance(bound, (int, float)):
            text = f"{level}{side} bound {_value(bound)}"
            if d.get("margin") is not None:
                text += f" (margin {_value(d['margin'])})"
            parts.append(text)
    if isinstance(d.get("passed"), bool):
        parts.append("passes" if d["passed"] else "does not pass")
    return ", ".join(parts)


def _flat_rows(mapping, prefix="", depth=0):
    """``(dotted key, value)`` rows: nested dicts unfolded, summary dicts kept whole."""
    rows = []
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value and not _is_summary(value) and depth < 2 \
                and len(value) <= 12:
            rows += _flat_rows(value, f"{name} / ", depth + 1)
        else:
            rows.append((name, value))
    return rows


def _dict_table(title, mapping):
    if not isinstance(mapping, dict) or not mapping:
        return []
    lines = [f"**{title}**", "", ".. list-table::", "   :widths: 35 65", ""]
    for key, value in _flat_rows(mapping):
        text = _rst_escape(_value(value)).replace("\n", " ")
        lines += [f"   * - {_rst_escape(key)}", f"     - {text or ' '}"]
    return lines + [""]


def _field(obj, payload, name):
    """A claim field from the registry, else from the result file, else ''."""
    value = getattr(obj, name, None)
    if not value and payload:
        value = payload.get(name)
    if isinstance(value, dict):
        return value
    return inspect.cleandoc(str(value)) if value else ""


def _text_block(text):
    """Registry and JSON text as a safe rst paragraph (literal-quoted where odd)."""
    return _rst_escape(text).replace("\n", " ")


def _claim_module(paper, claims):
    """The module that registers the paper's claims."""
    names = {getattr(c.func, "__module__", None) for c in claims} - {None}
    name = names.pop() if len(names) == 1 else f"skpaper.papers.{paper.slug.replace('-', '_')}"
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _related_objects(paper, module, api):
    """Public objects of the paper's family that its claim module names."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return []
    family = paper.module.split(".")[-1] if paper.module else ""
    related = []
    for fam, rows in api.items():
        if fam in EXTRA_MODULES and fam != family:
            continue
        for name, obj, kind, canonical in rows:
            if kind in ("estimator", "class", "function") and re.search(
                    rf"\b{re.escape(name)}\b", source):
                if canonical not in [c for _, c in related]:
                    related.append((obj, canonical))
    return related


def _reconstructed_passages(obj):
    """Paragraphs of a docstring that say what is reconstructed."""
    doc = inspect.cleandoc(getattr(obj, "__doc__", "") or "")
    passages = []
    for para in re.split(r"\n\s*\n", doc):
        flat = " ".join(line.strip() for line in para.splitlines())
        if _RECONSTRUCTED.search(flat) and not flat.startswith(".."):
            passages.append(_plain_citations(flat))
    return passages


def _effect_of_interest(claim, payload):
    """``(value, source, reason, from the run)`` of the claim's effect of interest, or None."""
    eoi = (payload or {}).get("effect_of_interest")
    if isinstance(eoi, dict) and "value" in eoi:
        return eoi.get("value"), eoi.get("source"), eoi.get("reason", ""), True
    eoi = getattr(claim, "effect_of_interest", None)
    if eoi is not None and getattr(eoi, "value", None) is not None:
        return eoi.value, getattr(eoi, "source", None), getattr(eoi, "reason", ""), False
    return None


def _figures(payload, slug, results_dir, docs_dir):
    """Absolute docs paths (``/results/...``) of a result's figures that exist."""
    figures = []
    for art in (payload or {}).get("artifacts") or ():
        fig = Path(results_dir) / slug / str(art)
        if fig.suffix.lower() in (".png", ".svg", ".jpg") and fig.is_file():
            try:
                rel = fig.resolve().relative_to(Path(docs_dir).resolve()).as_posix()
            except ValueError:  # a result folder outside docs/: no figures
                continue
            figures.append((str(art), f"/{rel}"))
    return figures


def _runtime(payload):
    runtime = (payload or {}).get("runtime_s")
    if not isinstance(runtime, (int, float)):
        runtime = ((payload or {}).get("runtime") or {}).get("wall_s")
    return f"{runtime:.1f}" if isinstance(runtime, (int, float)) else "-"


_CHECK_WORDS = {"pass": "passed", "contradicted": "contradicted (its interval excludes the "
                "effect of interest)", "undecided": "undecided"}
_CONTROL_WORDS = {
    True: "passes the check (so a pass of the claim is uninformative)",
    "pass": "passes the check (so a pass of the claim is uninformative)",
    "undecided": "is undecided (so a pass of the claim is uninformative)",
    "fail": "fails the check decisively, as it should",
    False: "fails the check (no bound recorded)",
}


def _claim_section(claim, payload, slug, results_dir, docs_dir, shown=()):
    """One claim's section; figures in ``shown`` are already on the page (not repeated)."""
    lines = [f".. _claim-{slug}-{claim.claim_id}:", "", _title(claim.claim_id, "-")]
    statement = _field(claim, payload, "paper_statement")
    check = _field(claim, payload, "check") or claim.description
    control = getattr(claim, "control", None)
    outcome = payload.get("control") if payload else None
    reported = bool(getattr(claim, "reported", False) or (payload or {}).get("reported"))
    status = claim_status(payload)
    if check != claim.description:
        lines += [_text_block(claim.description), ""]
    if statement:
        lines += [f"**The paper says:** {_text_block(statement)}", ""]
    lines += [".. rst-class:: skpaper-verdict", "",
              f"**Verdict:** {STATUS_TEXT.get(status, _text_block(status))}", ""]
    eoi = _effect_of_interest(claim, payload)
    if eoi is not None:
        value, source, reason, from_run = eoi
        lines += [f"**Effect of interest:** {_value(value)} (from "
                  f"{_rst_escape(str(source or 'the claim'))}"
                  + (f": {_text_block(str(reason))}" if reason else "") + ")"
                  + ("" if from_run or not payload else
                     "; declared in the code since the committed result was written"), ""]
    figures = _figures(payload, slug, results_dir, docs_dir)
    for art, path in figures:
        if path in shown:
            lines += [f"Figure ``{art.replace('`', '')}``: at the top of the page.", ""]
            continue
        lines += [f".. image:: {path}", f"   :alt: {claim.claim_id}: {art}",
                  "   :width: 90%", ""]
    lines += [f"**What is checked:** {_text_block(check)}", ""]
    verdict = (payload or {}).get("verdict")
    passed = (payload or {}).get("check_passed")
    if status != "error" and (verdict in _CHECK_WORDS or isinstance(passed, bool)):
        word = _CHECK_WORDS.get(verdict) or ("passed" if passed else "not passed")
        if status == "reported":
            word += " (not counted: a reported claim asserts nothing)"
        lines += [f"**The check alone:** {word}.", ""]
    if reported:
        lines += ["**Kind:** reported: the claim records figures and asserts nothing, "
                  "so it never counts as reproduced.", ""]
    elif control:
        lines += [f"**Negative control:** {_text_block(control)}. It must fail the "
                  "check for a pass of the claim to count.", ""]
    else:
        lines += ["**Negative control:** none registered, so a pass is reported, "
                  "not asserted.", ""]
    if not payload:
        return lines
    if isinstance(outcome, dict):
        word = _CONTROL_WORDS.get(outcome.get("verdict") or outcome.get("passed"),
                                  "no verdict")
        name = outcome.get("name") or control or "control"
        lines += [f"**Control outcome:** ``{str(name).replace('`', '')}`` {word}.", ""]
    power = payload.get("power")
    if isinstance(power, dict) and power.get("n_seeds") is not None:
        lines += [f"**Power:** {power['n_seeds']} paired seeds, SD of the "
                  f"differences {_value(power.get('sd'))}, seeds needed to decide at "
                  f"the effect of interest: {power.get('seeds_needed')}.", ""]
    lines += _dict_table("Observed", payload.get("observed"))
    lines += _dict_table("Expected", payload.get("expected"))
    if isinstance(outcome, dict):
        lines += _dict_table("Control observed", outcome.get("observed"))
    arms = payload.get("arms")
    if isinstance(arms, dict) and arms:
        lines += _dict_table("Arms (what each compared model was given)", arms)
    elif isinstance(arms, list) and arms:
        lines += ["**Arms**", ""] + [f"- {_text_block(_value(a))}" for a in arms] + [""]
    if payload.get("notes"):
        lines += [f"**Notes:** {_text_block(payload['notes'])}", ""]
    if payload.get("error"):
        lines += ["**Error:**", "", ".. code-block:: text", ""]
        lines += [_indent(str(payload["error"]).strip()), ""]
    return lines


def _paper_page(paper, claims, results, results_dir, api, docs_dir):
    """A paper's page: the claims' statements, verdicts and effects of interest first, a
    figure, one section per claim, then the scope, the reconstructed parts and the run's
    environment."""
    slug = paper.slug
    module = _claim_module(paper, claims)
    lines = [f".. _paper-{slug}:", "", _title(paper.title)]
    example = docs_dir.parent / "examples" / f"plot_{slug.replace('-', '_')}.py"
    meta = [f"Code in :mod:`{paper.module}`" if paper.module else "",
            f"example: :ref:`sphx_glr_auto_examples_{example.name}`" if example.exists()
            else "", f"slug ``{slug}``"]
    lines += ["; ".join(m for m in meta if m) + ".", ""]

    payloads = [results.get(c.key) for c in claims]
    ran = [p for p in payloads if p]
    if claims:
        lines += [".. list-table::", "   :header-rows: 1", "   :widths: 18 46 18 18", "",
                  "   * - claim", "     - the paper says", "     - verdict",
                  "     - effect of interest"]
        for claim, payload in zip(claims, payloads):
            statement = _field(claim, payload, "paper_statement") or claim.description
            eoi = _effect_of_interest(claim, payload)
            reported = bool(getattr(claim, "reported", False) or (payload or {}).get("reported"))
            eoi_text = (f"{_value(eoi[0])} ({_rst_escape(str(eoi[1] or 'claim'))})"
                        if eoi is not None else
                        "not needed (reported)" if reported else "none declared")
            lines += [f"   * - :ref:`{claim.claim_id} <claim-{slug}-{claim.claim_id}>`",
                      f"     - {_text_block(statement)}",
                      f"     - **{_rst_escape(claim_status(payload))}**",
                      f"     - {eoi_text}"]
        lines.append("")
    if not ran:
        lines += ["Not yet run: no result file for this paper is committed under "
                  "``docs/results/``. Refresh with ``./run.sh docs-results``.", ""]
    lead = next(((c, f) for c, p in zip(claims, payloads)
                 for f in _figures(p, slug, results_dir, docs_dir)[:1]), None)
    shown = {lead[1][1]} if lead is not None else set()
    if lead is not None:
        claim, (art, path) = lead
        lines += [f".. figure:: {path}", f"   :alt: {claim.claim_id}: {art}",
                  "   :width: 90%", "",
                  f"   From :ref:`{claim.claim_id} <claim-{slug}-{claim.claim_id}>`: "
                  f"{_text_block(claim.description)}", ""]
    lines += ["See :doc:`/reproduce` for what each verdict means.", ""]

    for claim, payload in zip(claims, payloads):
        lines += _claim_section(claim, payload, slug, results_dir, docs_dir, shown)

    doc = inspect.cleandoc((module.__doc__ if module else "") or "")
    if doc:
        body = doc.split("\n\n", 1)
        lines += [_title("Scope", "-"),
                  _plain_citations(body[1] if len(body) > 1 else body[0]), ""]
        if module:
            lines += [f"The claims are registered in ``{module.__name__}``.", ""]

    passages = []
    for obj, canonical in (_related_objects(paper, module, api) if module else ()):
        for text in _reconstructed_passages(obj):
            passages.append((canonical, text))
    lines += [_title("Reconstructed parts", "-")]
    if passages:
        lines += ["Where the paper's text or code was not available, parts of the method "
                  "are reconstructed. The docstrings of the objects this paper's claims "
                  "use say which:", ""]
        for canonical, text in passages:
            name = canonical.rsplit(".", 1)[-1]
            # Docstring text is rst already: kept as written, roles included.
            lines += [f"- :doc:`{name} </api/generated/{canonical}>`: {text}"]
        lines.append("")
    else:
        lines += ["The docstrings of the objects used by this paper's claims name no "
                  "reconstructed part; see the scope above and the API pages for "
                  "what differs from the paper's setting.", ""]

    lines += [_title("The run behind these results", "-")]
    if ran:
        scales = sorted({str(p.get("scale", "?")) for p in ran})
        seeds = sorted({str(p.get("seed", "?")) for p in ran})
        lines += [f"Scale ``{', '.join(scales)}``, seed ``{', '.join(seeds)}``; "
                  f"{len(ran)} of {len(claims)} claims have a result file in "
                  f"``docs/results/{slug}/``.", ""]
        lines += [".. list-table::", "   :header-rows: 1", "   :widths: 50 25 25", "",
                  "   * - claim", "     - verdict", "     - runtime (s)"]
        for claim, payload in zip(claims, payloads):
            lines += [f"   * - {claim.claim_id}", f"     - {claim_status(payload)}",
                      f"     - {_runtime(payload)}"]
        lines.append("")
        env = next((p.get("environment") for p in ran if p.get("environment")), None)
        if isinstance(env, dict) and env:
            lines += _dict_table("Environment", env)
    else:
        lines += ["No result file yet.", ""]
    return "\n".join(lines)


def write_papers(docs_dir, api, results_dir):
    """Write ``papers/index.rst`` and one page per registered paper."""
    from skpaper.papers import get_claims, get_papers

    results, problems = load_results(results_dir)
    papers_dir = docs_dir / "papers"
    papers = get_papers(kind="paper")
    selfchecks = get_papers(kind="selfcheck")
    all_claims = get_claims()
    counts = {}
    rows = []
    for paper in papers + selfchecks:
        claims = [c for c in all_claims if c.paper == paper.slug]
        _write(papers_dir / f"{paper.slug}.rst",
               _paper_page(paper, claims, results, results_dir, api, docs_dir))
        statuses = [claim_status(results.get(c.key)) for c in claims]
        for s in statuses:
            counts[s] = counts.get(s, 0) + 1
        summary = ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses))
        rows.append((paper, len(claims), summary or "no claims"))

    lines = [
        _title("Papers and their reproductions"),
        "One page per paper: what the paper states, what the library checks at CPU "
        "scale, the negative control, the status of every claim in the latest committed "
        "run and its figures, and the parts of the method that are reconstructed.",
        "",
        "The results are those in ``docs/results/``, written by "
        "``skpaper reproduce all --scale quick --out docs/results`` (``./run.sh "
        "docs-results``); see :doc:`/reproduce` for what the statuses mean.",
        "",
    ]
    if counts:
        total = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        lines += [f"All claims together: {total}.", ""]
    if problems:
        lines += ["Unreadable result files (left out):", ""]
        lines += [f"- ``{p}``" for p in problems] + [""]
    lines += [".. list-table::", "   :header-rows: 1", "   :widths: 55 10 35", "",
              "   * - paper", "     - claims", "     - status"]
    for paper, n, summary in rows:
        lines += [f"   * - :doc:`{_text_block(paper.title)} <{paper.slug}>`",
                  f"     - {n}", f"     - {summary}"]
    lines += ["", ".. toctree::", "   :hidden:", ""]
    lines += [f"   {p.slug}" for p in papers + selfchecks] + [""]
    _write(papers_dir / "index.rst", "\n".join(lines))
    wanted = {p.slug for p in papers + selfchecks} | {"index"}
    for stale in papers_dir.glob("*.rst"):
        if stale.stem not in wanted:
            stale.unlink()
    return len(papers) + len(selfchecks)


# --------------------------------------------------------------------------- changelog
_MD_HEADINGS = {1: "=", 2: "-", 3: "~", 4: "^"}
_MD_CODE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_MD_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def _md_inline(text):
    """Markdown inline markup -> rst: code spans, links; rst-only syntax escaped outside code."""
    out, parts = [], _MD_CODE.split(text)
    for i, part in enumerate(parts):
        if i % 2:  # inside a code span; rst needs a break where a word touches it
            before = "\\ " if parts[i - 1][-1:].isalnum() else ""
            after = "\\ " if parts[i + 1][:1].isalnum() else ""
            out.append(f"{before}``{part}``{after}")
            continue
        part = re.sub(r"(?<=\w)_(?=\W|$)", r"\\_", part)  # name_ is a reference in rst
        part = part.replace("|", "\\|")
        part = _MD_LINK.sub(lambda m: f"`{m.group(1)} <{m.group(2)}>`__", part)
        out.append(part)
    return "".join(out)


def markdown_to_rst(text):
    """The subset of Markdown that CHANGELOG.md uses (headings, lists, paragraphs) as rst."""
    lines, previous = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        heading = re.match(r"^(#{1,4})\s+(.*)$", line)
        if heading:
            title = _md_inline(heading.group(2))
            if lines and lines[-1]:
                lines.append("")
            lines += [title, _MD_HEADINGS[len(heading.group(1))] * len(title), ""]
            previous = ""
            continue
        if re.match(r"^\s*[-*] ", line) and previous and not re.match(r"^\s*[-*] |^\s", previous):
            lines.append("")  # rst needs a blank line between a paragraph and a list
        lines.append(_md_inline(line))
        previous = line
    return "\n".join(lines).rstrip() + "\n"


def write_changelog(docs_dir, out_dir=None):
    """Write ``_build/changelog.inc``, CHANGELOG.md as rst, for ``changelog.rst`` to include."""
    source = Path(docs_dir).parent / "CHANGELOG.md"
    target = Path(out_dir or Path(docs_dir) / "_build") / "changelog.inc"
    text = markdown_to_rst(source.read_text()) if source.is_file() else "No changelog.\n"
    _write(target, text)
    return target


def generate(docs_dir, results_dir=None):
    """Write every generated page under ``docs_dir``; returns page counts."""
    docs_dir = Path(docs_dir)
    results_dir = Path(results_dir) if results_dir is not None else docs_dir / "results"
    api = collect_api()
    n_api = write_api(docs_dir, api)
    n_papers = write_papers(docs_dir, api, results_dir)
    write_changelog(docs_dir)
    return {"api_pages": n_api, "family_pages": len(api), "paper_pages": n_papers}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default=None, help="result folder (default: docs/results)")
    args = parser.parse_args()
    print(generate(Path(__file__).resolve().parent, args.results))
