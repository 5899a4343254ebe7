"""Shared docstring text, filled into docstrings by :class:`Substitution`.

A docstring names a shared piece with a ``{name}`` placeholder alone on its line,
and the decorator replaces it::

    @Substitution(random_state=RANDOM_STATE_DOC)
    class Estimator:
        '''Summary.

        Parameters
        ----------
        {random_state}
        '''

Every line of the piece is indented like the placeholder, so a piece is written
once, at any indentation, and lines up wherever it goes. Only a line holding
nothing but ``{identifier}`` is a placeholder: braces within text, such as the
type specification ``{"float32", "float64"}`` or the math ``\\frac{1}{L}``, are
left alone.
"""

import re
import textwrap

__all__ = ["Substitution", "TORCH_PARAMETERS", "torch_parameter_docs"]

#: A line holding only ``{name}``, with its indentation (and, when the piece is
#: empty, its line break, so that the line goes away).
_PLACEHOLDER = re.compile(r"^([ \t]*)\{([A-Za-z_][A-Za-z0-9_]*)\}[ \t]*$(\n?)", re.MULTILINE)


class Substitution:
    """Decorator filling ``{name}`` placeholders of a docstring with shared pieces.

    Parameters
    ----------
    **pieces : str
        Text of each placeholder, by name, laid out as in a docstring: the common
        indentation of its lines is removed (:func:`textwrap.dedent`), as are
        blank lines at its ends, so it may start on a new line after the opening
        quotes. Each line is then indented like the placeholder. An empty piece
        removes the placeholder's line.

    See Also
    --------
    torch_parameter_docs : The pieces describing the torch training parameters.

    Notes
    -----
    The decorated class or function is returned itself, with ``__doc__``
    replaced; under ``python -OO`` (no docstrings) it is returned unchanged.
    Pieces that the docstring does not use are ignored; a placeholder without a
    piece raises :class:`KeyError` when the decorator is applied.

    Examples
    --------
    >>> from skpaper.utils._docstring import Substitution
    >>> seed = '''random_state : int or None, default=None
    ...     Seed of the draws.'''
    >>> @Substitution(random_state=seed)
    ... def draw(random_state=None):
    ...     '''Draw a number.
    ...
    ...     Parameters
    ...     ----------
    ...     {random_state}
    ...     '''
    >>> print(draw.__doc__)
    Draw a number.
    <BLANKLINE>
        Parameters
        ----------
        random_state : int or None, default=None
            Seed of the draws.
    <BLANKLINE>
    """

    def __init__(self, **pieces):
        for name, text in pieces.items():
            if not isinstance(text, str):
                raise TypeError(
                    f"docstring piece {name!r} must be a str, got {type(text).__name__}."
                )
        self.pieces = {name: textwrap.dedent(text).strip("\n").rstrip()
                       for name, text in pieces.items()}

    def fill(self, doc, owner="docstring"):
        """Return ``doc`` with its placeholders replaced.

        Parameters
        ----------
        doc : str
            Text with ``{name}`` placeholders, each alone on its line.
        owner : str, default="docstring"
            Name of the documented object, used in the error message.

        Returns
        -------
        filled : str
            The text with each placeholder replaced by its indented piece.

        Raises
        ------
        KeyError
            If a placeholder has no piece.
        """

        def replace(match):
            indent, name, newline = match.groups()
            if name not in self.pieces:
                raise KeyError(
                    f"{owner} has a placeholder {{{name}}} but no piece of that name; "
                    f"pieces given: {sorted(self.pieces)}."
                )
            piece = self.pieces[name]
            if not piece:
                return ""
            lines = [indent + line if line else line for line in piece.split("\n")]
            return "\n".join(lines) + newline

        return _PLACEHOLDER.sub(replace, doc)

    def __call__(self, obj):
        """Fill the docstring of ``obj`` in place.

        Parameters
        ----------
        obj : class or function
            The object to document.

        Returns
        -------
        obj : class or function
            The same object, with its ``__doc__`` filled.
        """
        if obj.__doc__ is not None:
            obj.__doc__ = self.fill(obj.__doc__, getattr(obj, "__qualname__", repr(obj)))
        return obj


def _literal(value):
    """Write a default value the way the docstrings do (``1e-3``, ``"auto"``, ``50``)."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float) and value != 0 and abs(value) < 0.1:
        mantissa, exponent = f"{value:e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"
    return repr(value)


#: Descriptions of the training parameters of
#: :class:`~skpaper.nn.BaseTorchEstimator`, each after its ``name : type`` line.
TORCH_PARAMETERS = {
    "max_epochs": ("int", "Number of passes over the training data."),
    "batch_size": ("int", "Mini-batch size (clipped to the number of samples)."),
    "lr": ("float", "Learning rate of the Adam optimizer."),
    "device": ("str or torch.device",
               'A device name (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``) or a\n'
               ':class:`torch.device`; ``"auto"`` uses CUDA when available, else MPS\n'
               'where :func:`torch.backends.mps.is_available`, else the CPU. A device\n'
               'the machine lacks is refused when ``fit`` starts.'),
    "random_state": ("int, RandomState instance or None",
                     "Seeds weight initialisation and batch shuffling."),
    "verbose": ("int", "Show a tqdm progress bar over epochs, with the last losses, when > 0."),
    "callbacks": ("list of Callback or None",
                  "Training callbacks (:class:`~skpaper.nn.Callback` subclasses such as\n"
                  ":class:`~skpaper.nn.EarlyStopping`, :class:`~skpaper.nn.LRScheduler`,\n"
                  ":class:`~skpaper.nn.ValidationSplit`); fitted copies are kept in\n"
                  "``callbacks_``."),
    "inference_dtype": ('{"float32", "float64"}',
                        "Precision of the module after training. ``\"float64\"`` makes "
                        "predictions\nindependent of batch composition (float32 matmuls "
                        "are not)."),
}

#: Defaults of :class:`~skpaper.nn.BaseTorchEstimator`.
_TORCH_DEFAULTS = {
    "max_epochs": 100,
    "batch_size": 128,
    "lr": 1e-3,
    "device": "auto",
    "random_state": None,
    "verbose": 0,
    "callbacks": None,
    "inference_dtype": "float32",
}


def torch_parameter_docs(**defaults):
    """Return the docstring pieces of the torch training parameters.

    Parameters
    ----------
    **defaults : int, float, str or None
        Default of a parameter where the estimator's differs from
        :class:`~skpaper.nn.BaseTorchEstimator`'s (``max_epochs=100``,
        ``batch_size=128``, ``lr=1e-3``, ``device="auto"``, ``random_state=None``,
        ``verbose=0``, ``callbacks=None``, ``inference_dtype="float32"``).

    Returns
    -------
    pieces : dict of str
        One piece per parameter, named like it (``"max_epochs"``, ``"batch_size"``,
        ``"lr"``, ``"device"``, ``"random_state"``, ``"verbose"``, ``"callbacks"``,
        ``"inference_dtype"``), and ``"torch_parameters"``, all eight in that order.
        Pass them to :class:`Substitution`.

    Raises
    ------
    TypeError
        If a default names no torch training parameter.

    See Also
    --------
    Substitution : The decorator that fills the pieces in.

    Examples
    --------
    >>> from skpaper.utils._docstring import torch_parameter_docs
    >>> print(torch_parameter_docs(max_epochs=50)["max_epochs"])
    max_epochs : int, default=50
        Number of passes over the training data.
    >>> print(torch_parameter_docs(lr=3e-3)["lr"].splitlines()[0])
    lr : float, default=3e-3
    """
    unknown = sorted(set(defaults) - set(_TORCH_DEFAULTS))
    if unknown:
        raise TypeError(f"no torch training parameter named {unknown}.")
    values = {**_TORCH_DEFAULTS, **defaults}
    pieces = {}
    for name, (kind, description) in TORCH_PARAMETERS.items():
        body = "\n".join("    " + line for line in description.split("\n"))
        pieces[name] = f"{name} : {kind}, default={_literal(values[name])}\n{body}"
    pieces["torch_parameters"] = "\n".join(pieces[name] for name in TORCH_PARAMETERS)
    return pieces
