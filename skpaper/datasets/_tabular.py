"""Loaders of small tabular data shipped with installed packages."""

from sklearn.datasets import load_digits
from sklearn.utils import Bunch

__all__ = ["load_digits_split"]


def load_digits_split(test_size=0.25, random_state=0):
    """Load scikit-learn's bundled digits and split them, stratified.

    Parameters
    ----------
    test_size : float, default=0.25
        Fraction of the 1,797 images held out.
    random_state : int, RandomState instance or None, default=0
        Controls the split.

    Returns
    -------
    data : Bunch
        ``X_train, X_test, y_train, y_test`` with pixel values scaled to [0, 1].

    Examples
    --------
    >>> from skpaper.datasets import load_digits_split
    >>> d = load_digits_split()
    >>> d.X_train.shape[1]
    64
    """
    from sklearn.model_selection import train_test_split

    if not 0.0 < float(test_size) < 1.0:
        raise ValueError(f"test_size must be in (0, 1), got {test_size!r}.")
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, random_state=random_state, stratify=y
    )
    return Bunch(X_train=X_train, X_test=X_test, y_train=y_train, y_test=y_test)
