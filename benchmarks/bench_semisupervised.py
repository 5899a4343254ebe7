"""ACP doubly robust estimator against ppi-python and DoubleML.

On the simulation of Ying et al. (ICML 2025), signal 3, n_L = 300, n_U = 1200,
each side is timed on one data set and its interval is scored over a
replication study on fresh data sets: coverage of the truth, median interval
width, bias and standard deviation of the estimate. Cases:

* unlabeled mean: :class:`ACPShiftEstimator` vs ``ppi_py.ppi_mean_ci`` without
  weights (the comparison the paper ran; biased under the shift) and with
  density-ratio weights ``w = (1 - p) / p`` from the same logistic propensity;
* unlabeled OLS coefficients: vs ``ppi_py.ppi_ols_ci`` with the same weights;
* combined-population mean: :class:`ACPShiftEstimator(population="combined")`
  vs ``doubleml.DoubleMLIRM`` (AIPW, treatment = labeled, outcome 0 when
  unlabeled, covariates ``(X, S)``), which targets the same quantity.

All intervals are 95% (ppi-python defaults to 90%). The width ratio
``peer / ours`` > 1 means ours is narrower.

Run: ``python benchmarks/bench_semisupervised.py [--quick] [--json out.json]``.
"""

import warnings

import numpy as np
from _harness import Case, main_cli
from sklearn.linear_model import LinearRegression, LogisticRegression

from skpaper.datasets import make_acp_covariate_shift
from skpaper.semisupervised import ACPShiftEstimator

ALPHA = 0.05
SIGNAL = 3.0


def _propensity(d):
    model = LogisticRegression(C=1e4, max_iter=1000).fit(d.X, d.labeled.astype(int))
    return np.clip(model.predict_proba(d.X)[:, 1], 1e-3, 1 - 1e-3)


def _ours(d, target="mean", population="unlabeled"):
    est = ACPShiftEstimator(target=target, population=population, alpha=ALPHA,
                            random_state=0).fit(d.X, d.y, acp=d.acp)
    return np.atleast_1d(est.estimate_), np.atleast_2d(est.ci_)


def _ppi_mean(d, weighted):
    import ppi_py

    R, f = d.labeled, d.acp
    w = None
    if weighted:
        p = _propensity(d)
        w = ((1 - p) / p)[R]
        w = w / w.mean()
    est = ppi_py.ppi_mean_pointestimate(d.y[R], f[R], f[~R], w=w)
    lo, hi = ppi_py.ppi_mean_ci(d.y[R], f[R], f[~R], alpha=ALPHA, w=w)
    return np.atleast_1d(np.squeeze(est)), np.array([[float(np.squeeze(lo)),
                                                      float(np.squeeze(hi))]])


def _ppi_ols(d):
    import ppi_py

    R, f = d.labeled, d.acp
    D = np.column_stack([np.ones(len(f)), d.X])
    p = _propensity(d)
    w = ((1 - p) / p)[R]
    est = ppi_py.ppi_ols_pointestimate(D[R], d.y[R], f[R], D[~R], f[~R], w=w / w.mean())
    lo, hi = ppi_py.ppi_ols_ci(D[R], d.y[R], f[R], D[~R], f[~R], alpha=ALPHA, w=w / w.mean())
    return np.asarray(est), np.column_stack([lo, hi])


def _doubleml_combined(d):
    import doubleml
    import pandas as pd

    frame = pd.DataFrame(d.X, columns=[f"x{j}" for j in range(d.X.shape[1])])
    frame["s"] = d.acp
    frame["r"] = d.labeled.astype(int)
    frame["y"] = np.where(d.labeled, d.y, 0.0)
    data = doubleml.DoubleMLData(frame, y_col="y", d_cols="r")
    model = doubleml.DoubleMLIRM(data, ml_g=LinearRegression(),
                                 ml_m=LogisticRegression(C=1e4, max_iter=1000),
                                 trimming_threshold=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit()
    ci = model.confint(level=1 - ALPHA).to_numpy()
    return np.asarray(model.coef), ci


def _combined_truth(d):
    # The labeled population mirrors the unlabeled one: its mean is 2 - true_mean.
    n_l, n_u = int(d.labeled.sum()), int((~d.labeled).sum())
    return (n_l * (2.0 - d.true_mean) + n_u * d.true_mean) / (n_l + n_u)


def _study(method, truth_of, reps, coord=0):
    """Coverage, median width, bias and SD of ``method`` over ``reps`` data sets."""
    errors, covered, widths = [], [], []
    for seed in range(reps):
        d = make_acp_covariate_shift(300, 1200, signal=SIGNAL, random_state=10_000 + seed)
        est, ci = method(d)
        truth = np.atleast_1d(truth_of(d))
        errors.append(est[coord] - truth[coord])
        covered.append(ci[coord, 0] <= truth[coord] <= ci[coord, 1])
        widths.append(ci[coord, 1] - ci[coord, 0])
    errors = np.array(errors)
    return {"coverage": float(np.mean(covered)), "median_width": float(np.median(widths)),
            "bias": float(errors.mean()), "sd": float(errors.std(ddof=1)), "reps": reps}


def make_cases(quick):
    reps = 30 if quick else 200
    data = make_acp_covariate_shift(300, 1200, signal=SIGNAL, random_state=0)
    mean_truth = lambda d: d.true_mean  # noqa: E731
    coef_truth = lambda d: d.true_coef  # noqa: E731

    specs = [
        ("unlabeled mean vs unweighted PPI++", lambda d: _ours(d),
         lambda d: _ppi_mean(d, weighted=False), "ppi_mean_ci", mean_truth, 0),
        ("unlabeled mean vs weighted PPI++", lambda d: _ours(d),
         lambda d: _ppi_mean(d, weighted=True), "ppi_mean_ci(w)", mean_truth, 0),
        ("unlabeled OLS coef of X1 vs weighted PPI++", lambda d: _ours(d, target="ols"),
         _ppi_ols, "ppi_ols_ci(w)", coef_truth, 1),
        ("combined mean vs DoubleML IRM",
         lambda d: _ours(d, population="combined"), _doubleml_combined, "DoubleMLIRM",
         _combined_truth, 0),
    ]
    cases = []
    for name, ours, peer, peer_name, truth_of, coord in specs:
        ours_figures = _study(ours, truth_of, reps, coord)
        peer_figures = _study(peer, truth_of, reps, coord)
        ours_figures["width_ratio_peer_over_ours"] = (
            peer_figures["median_width"] / ours_figures["median_width"])
        cases.append(Case(
            name,
            ours=lambda ours=ours, figures=ours_figures: (ours(data), figures)[1],
            peer=lambda peer=peer, figures=peer_figures: (peer(data), figures)[1],
            peer_name=peer_name,
            params={"signal": SIGNAL, "n_labeled": 300, "n_unlabeled": 1200, "reps": reps},
        ))
    return cases


if __name__ == "__main__":
    main_cli(make_cases, description=__doc__.splitlines()[0])
