"""Tests of the shared-docstring decorator :class:`skpaper.utils._docstring.Substitution`."""

import inspect
import pydoc

import pytest

from skpaper.utils._docstring import TORCH_PARAMETERS, Substitution, torch_parameter_docs

SEED = """
    random_state : int or None, default=None
        Seed of the draws.
        Second line of the description."""


def test_piece_is_indented_like_its_placeholder():
    @Substitution(seed=SEED)
    def draw(random_state=None):
        """Draw a number.

        Parameters
        ----------
        {seed}
        n : int
            Count.
        """

    lines = draw.__doc__.splitlines()
    start = lines.index("        random_state : int or None, default=None")
    assert lines[start + 1] == "            Seed of the draws."
    assert lines[start + 2] == "            Second line of the description."
    assert lines[start + 3] == "        n : int"
    assert "{seed}" not in draw.__doc__


def test_piece_at_column_zero_and_at_depth_give_the_same_text():
    flat = "x : int\n    The x.\n\n    Its second paragraph."
    deep = ("\n            x : int\n                The x.\n\n"
            "                Its second paragraph.\n")
    doc = "Summary.\n\n    Parameters\n    ----------\n    {x}\n"
    filled = Substitution(x=flat).fill(doc)
    assert filled == Substitution(x=deep).fill(doc)
    # Blank lines of a piece stay empty (no trailing whitespace).
    assert filled == ("Summary.\n\n    Parameters\n    ----------\n    x : int\n"
                      "        The x.\n\n        Its second paragraph.\n")


def test_missing_piece_raises_key_error_naming_it():
    with pytest.raises(KeyError, match=r"\{seed\}.*pieces given: \['other'\]"):
        @Substitution(other="text")
        def draw():
            """Draw.

            Parameters
            ----------
            {seed}
            """


def test_only_whole_line_placeholders_are_replaced():
    doc = ('Summary with {seed} inline and math \\frac{1}{L}.\n\n'
           '    kind : {"a", "b"}, default="a"\n    {seed}\n')
    filled = Substitution(seed="s : int").fill(doc)
    assert filled.splitlines()[0] == "Summary with {seed} inline and math \\frac{1}{L}."
    assert '    kind : {"a", "b"}, default="a"' in filled
    assert filled.endswith("\n    s : int\n")


def test_empty_piece_removes_its_line():
    doc = "Summary.\n\n    a : int\n    {extra}\n    b : int\n"
    assert Substitution(extra="").fill(doc) == "Summary.\n\n    a : int\n    b : int\n"


def test_unused_pieces_are_ignored_and_non_str_refused():
    doc = "Summary.\n"
    assert Substitution(unused="text").fill(doc) == doc
    with pytest.raises(TypeError, match="must be a str"):
        Substitution(bad=3)


def test_works_on_classes_methods_and_functions():
    fill = Substitution(seed=SEED)

    @fill
    class Estimator:
        """An estimator.

        Parameters
        ----------
        {seed}
        """

        @fill
        def fit(self, X, random_state=None):
            """Fit.

            Parameters
            ----------
            X : array-like
                Data.
            {seed}
            """
            return self

    @fill
    def function(random_state=None):
        """A function.

        Parameters
        ----------
        {seed}
        """

    for obj in (Estimator, Estimator.fit, function):
        assert "Seed of the draws." in obj.__doc__
        assert "{seed}" not in obj.__doc__
    # The decorator returns the object itself.
    assert fill(function) is function
    assert Estimator().fit(None) is not None


def test_help_and_getdoc_show_the_filled_text():
    @Substitution(seed=SEED)
    class Documented:
        """A documented class.

        Parameters
        ----------
        {seed}
        """

    doc = inspect.getdoc(Documented)
    assert doc.splitlines()[4:7] == [
        "random_state : int or None, default=None",
        "    Seed of the draws.",
        "    Second line of the description.",
    ]
    text = pydoc.render_doc(Documented, renderer=pydoc.plaintext)
    assert "Seed of the draws." in text and "{seed}" not in text


def test_missing_docstring_is_left_alone():
    def bare():
        pass

    bare.__doc__ = None
    assert Substitution(seed=SEED)(bare).__doc__ is None


def test_torch_parameter_pieces():
    pieces = torch_parameter_docs(max_epochs=50, lr=3e-3, inference_dtype="float64")
    assert set(pieces) == set(TORCH_PARAMETERS) | {"torch_parameters"}
    assert pieces["max_epochs"].splitlines() == [
        "max_epochs : int, default=50",
        "    Number of passes over the training data.",
    ]
    assert pieces["lr"].splitlines()[0] == "lr : float, default=3e-3"
    assert pieces["batch_size"].splitlines()[0] == "batch_size : int, default=128"
    assert pieces["inference_dtype"].splitlines()[0] == (
        'inference_dtype : {"float32", "float64"}, default="float64"')
    assert pieces["random_state"].splitlines()[0] == (
        "random_state : int, RandomState instance or None, default=None")
    names = [line.split(" : ")[0] for line in pieces["torch_parameters"].splitlines()
             if not line.startswith(" ")]
    assert names == list(TORCH_PARAMETERS)
    with pytest.raises(TypeError, match="no torch training parameter"):
        torch_parameter_docs(epochs=3)


def test_torch_pieces_fill_a_numpydoc_parameters_section():
    @Substitution(**torch_parameter_docs())
    def train(max_epochs=100, batch_size=128, lr=1e-3, device="auto", random_state=None,
              verbose=0, callbacks=None, inference_dtype="float32"):
        """Train.

        Parameters
        ----------
        {torch_parameters}
        """

    numpydoc = pytest.importorskip("numpydoc.docscrape")
    parsed = numpydoc.FunctionDoc(train)
    params = {p.name: p for p in parsed["Parameters"]}
    assert list(params) == list(inspect.signature(train).parameters)
    assert all(p.desc for p in params.values())
    assert params["lr"].type == "float, default=1e-3"
