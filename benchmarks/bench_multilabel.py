"""SmoothMultiLabelClassifier against OneVsRestClassifier(LogisticRegression).

Both fit the same L2-regularised logistic Hamming objective: ours with
``objective="hamming", constraint="per_label", alpha`` as one joint L-BFGS
problem over the whole weight matrix, the peer as ``c`` separate
``LogisticRegression(C=1 / (alpha * n))`` fits (matched regularisation, same
tolerance). Data: ``make_linear_multilabel`` with c = 100 labels, d = 50,
positive rate 0.3 and 5% label noise. Reported: median fit time, the ratio
``peer / ours`` (> 1: ours faster), and the test Hamming loss, micro-F1 and
Macro-AUC of each side. A second case trains ours on the ranking surrogate
(no peer: scikit-learn has no pairwise multi-label learner) for its time and
ranking loss.

Run: ``python benchmarks/bench_multilabel.py [--quick] [--json out.json]``.
"""

from _harness import Case, main_cli
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

from skpaper.datasets import make_linear_multilabel
from skpaper.multilabel import SmoothMultiLabelClassifier, metrics

ALPHA = 1e-3
TOL = 1e-6


def _figures(model, X_test, Y_test):
    scores = model.decision_function(X_test)
    pred = model.predict(X_test)
    return {"hamming_loss": metrics.hamming_loss(Y_test, pred),
            "micro_f1": metrics.micro_f1(Y_test, pred),
            "macro_auc": metrics.macro_auc(Y_test, scores),
            "ranking_loss": metrics.ranking_loss(Y_test, scores)}


def make_cases(quick):
    n_train, n_labels = (1000, 100) if quick else (3000, 100)
    X, Y = make_linear_multilabel(n_train + 5000, 50, n_labels, positive_rate=0.3, noise=0.05,
                                  random_state=0)
    X_train, Y_train, X_test, Y_test = X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]
    params = {"n_train": n_train, "n_labels": n_labels, "n_features": 50, "alpha": ALPHA}

    def ours(objective="hamming"):
        model = SmoothMultiLabelClassifier(alpha=ALPHA, objective=objective, tol=TOL,
                                           random_state=0).fit(X_train, Y_train)
        return _figures(model, X_test, Y_test)

    def peer():
        model = OneVsRestClassifier(LogisticRegression(C=1.0 / (ALPHA * n_train), tol=TOL,
                                                       max_iter=300)).fit(X_train, Y_train)
        return _figures(model, X_test, Y_test)

    return [
        Case(f"Hamming logistic c={n_labels} n={n_train}", ours=ours, peer=peer,
             peer_name="OvR(LogisticRegression)", params=params),
        Case(f"ranking logistic c={n_labels} n={n_train}", ours=lambda: ours("ranking"),
             params=params),
    ]


if __name__ == "__main__":
    main_cli(make_cases, description=__doc__.splitlines()[0])
