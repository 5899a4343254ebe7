"""The five tuned baselines of the sparse-probing paper (Kantamneni, Engels et al., ICML 2025)."""

import importlib.util

import numpy as np
from sklearn.decomposition import PCA
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ..utils import derive_seed
from ..utils._sklearn import StrOptions, validate_params
from ._probing_cv import ProbeSearchCV

__all__ = ["paper_baselines"]

BASELINES = ("logreg", "pca", "knn", "xgboost", "mlp")


def _log2_grid(maximum):
    """``unique(int(2^t))`` for 10 values of ``t`` evenly spaced in ``[0, log2(maximum)]``."""
    maximum = max(int(maximum), 1)
    return sorted({int(v) for v in np.logspace(0, np.log2(maximum), num=10, base=2)})


def _pca_grid(n_samples, n_features, min_train):
    # PCA is fitted inside each fold, so its width is capped by the smallest fold.
    return {"pca__n_components": _log2_grid(min(min_train, n_features, 100))}


def _knn_grid(n_samples, n_features, min_train):
    return {"kneighborsclassifier__n_neighbors": _log2_grid(min(n_samples - 1, 100,
                                                                min_train))}


def _boosting(seed):
    """XGBoost with the paper's search space when installed, else sklearn's histogram GBM."""
    if importlib.util.find_spec("xgboost") is not None:
        import xgboost

        est = make_pipeline(StandardScaler(),
                            xgboost.XGBClassifier(eval_metric="logloss", random_state=seed,
                                                  n_jobs=1))
        prefix = "xgbclassifier__"
        space = {
            "n_estimators": list(range(50, 300, 50)),
            "max_depth": [2, 3, 4, 5],
            "learning_rate": list(np.logspace(-3, -1, 10)),
            "subsample": list(np.linspace(0.7, 1.0, 5)),
            "colsample_bytree": list(np.linspace(0.7, 1.0, 5)),
            "reg_alpha": list(np.logspace(-3, 1, 10)),
            "reg_lambda": list(np.logspace(-3, 1, 10)),
            "min_child_weight": list(range(1, 10)),
        }
    else:
        # The nearest sklearn equivalents of the same space: rounds, depth, shrinkage,
        # column subsampling, L2 penalty and minimum leaf size (no row subsampling or L1).
        est = make_pipeline(StandardScaler(),
                            HistGradientBoostingClassifier(early_stopping=False,
                                                           min_samples_leaf=1,
                                                           random_state=seed))
        prefix = "histgradientboostingclassifier__"
        space = {
            "max_iter": list(range(50, 300, 50)),
            "max_depth": [2, 3, 4, 5],
            "learning_rate": list(np.logspace(-3, -1, 10)),
            "max_features": list(np.linspace(0.7, 1.0, 5)),
            "l2_regularization": list(np.logspace(-3, 1, 10)),
            "min_samples_leaf": list(range(1, 10)),
        }
    return est, {prefix + key: value for key, value in space.items()}


@validate_params(
    {
        "random_state": ["random_state"],
        "include": [list, tuple, None],
        "cv": [StrOptions({"auto"}), "cv_object"],
    },
    prefer_skip_nested_validation=True,
)
def paper_baselines(*, random_state=None, include=None, cv="auto"):
    """The paper's five baseline probes on raw activations, each with its own search.

    Parameters
    ----------
    random_state : int, RandomState instance or None, default=None
        Seeds the sampled configurations and the stochastic models.
    include : list of str or None, default=None
        Subset of ``("logreg", "pca", "knn", "xgboost", "mlp")`` (``None``: all).
    cv : "auto", int or cross-validation splitter, default="auto"
        Folds of every search (``"auto"``: :class:`PaperCV`).

    Returns
    -------
    baselines : dict of str to ProbeSearchCV
        - ``"logreg"``: L2 logistic regression, ``C`` in 10 values from ``1e5`` to
          ``1e-5``.
        - ``"pca"``: standardise, PCA to ``n_c`` components, logistic regression with
          ``C=1``; ``n_c`` in ``unique(int(2^t))`` for 10 values of ``t`` up to
          ``log2(min(n, d, 100))``.
        - ``"knn"``: standardise, ``k`` nearest neighbours with ``k`` on the same kind of
          grid up to ``min(n - 1, 100)``.
        - ``"xgboost"``: 10 random configurations of XGBoost over ``n_estimators``
          50-250, depth 2-5, ``eta`` 1e-3-1e-1, row and column subsampling 0.7-1,
          ``alpha`` and ``lambda`` 1e-3-10, ``min_child_weight`` 1-9; without the
          ``xgboost`` package, :class:`~sklearn.ensemble.HistGradientBoostingClassifier`
          over the corresponding parameters.
        - ``"mlp"``: standardise, :class:`~sklearn.neural_network.MLPClassifier` (Adam,
          ReLU) with 10 random configurations of hidden sizes ``{16, 32, 64}`` times 1-3
          layers, learning rate 1e-4-1e-2 and ``alpha`` 1e-5-1e-2.

    Notes
    -----
    Grids follow the paper's released code, with two differences: PCA and the scaler
    are fitted inside each validation fold (the code fits them once on all training
    data), so the PCA width is capped by the smallest training fold; and the MLP
    search draws 10 configurations as the paper's text says (the released code
    draws one).

    References
    ----------
    .. [1] S. Kantamneni, J. Engels, S. Rajamanoharan, M. Tegmark and N. Nanda, "Are
       Sparse Autoencoders Useful? A Case Study in Sparse Probing", ICML 2025.

    Examples
    --------
    >>> from skpaper.representation import paper_baselines
    >>> sorted(paper_baselines(random_state=0))
    ['knn', 'logreg', 'mlp', 'pca', 'xgboost']
    """
    names = BASELINES if include is None else tuple(include)
    unknown = sorted(set(names) - set(BASELINES))
    if unknown:
        raise ValueError(f"include must name baselines among {BASELINES}, got {unknown}.")
    seed = derive_seed(random_state)
    out = {}
    if "logreg" in names:
        out["logreg"] = ProbeSearchCV(
            LogisticRegression(l1_ratio=0.0, max_iter=1000, random_state=seed),
            {"C": list(np.logspace(5, -5, 10))}, cv=cv)
    if "pca" in names:
        pca = make_pipeline(StandardScaler(), PCA(random_state=seed),
                            LogisticRegression(max_iter=1000, random_state=seed))
        out["pca"] = ProbeSearchCV(pca, _pca_grid, cv=cv)
    if "knn" in names:
        knn = make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=1))
        out["knn"] = ProbeSearchCV(knn, _knn_grid, cv=cv)
    if "xgboost" in names:
        est, space = _boosting(seed)
        out["xgboost"] = ProbeSearchCV(est, space, n_iter=10, cv=cv, random_state=seed)
    if "mlp" in names:
        mlp = make_pipeline(StandardScaler(),
                            MLPClassifier(hidden_layer_sizes=(32,), max_iter=1000,
                                          random_state=seed))
        space = {
            "mlpclassifier__hidden_layer_sizes": [(w,) * depth for depth in (1, 2, 3)
                                                  for w in (16, 32, 64)],
            "mlpclassifier__learning_rate_init": list(np.logspace(-4, -2, 5)),
            "mlpclassifier__alpha": list(np.logspace(-5, -2, 5)),
        }
        out["mlp"] = ProbeSearchCV(mlp, space, n_iter=10, cv=cv, random_state=seed + 1)
    return out
