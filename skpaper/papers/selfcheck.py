"""Framework self-check: the torch base reproduces a known baseline.

Listed apart from the papers by ``skpaper list``. It proves the reproduce path
end to end (claim registry, JSON, plot, report) on a real comparison:
:class:`skpaper.nn.MLPClassifier` against
:class:`sklearn.neural_network.MLPClassifier` on the bundled digits.
"""

import warnings

import numpy as np

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, ControlResult, register_claim, register_paper

SLUG = "framework-selfcheck"

register_paper(SLUG, "Framework self-check: torch MLP vs scikit-learn MLP", module="skpaper.nn",
               kind="selfcheck")

_SETTINGS = {
    # (number of seeds, hidden width, max epochs, training rows kept)
    "smoke": (1, 32, 30, 400),
    "quick": (3, 64, 200, None),
    "full": (10, 100, 200, None),
}


@register_claim(SLUG, "mlp-matches-sklearn-digits",
                "skpaper's torch MLPClassifier reaches the accuracy of scikit-learn's "
                "MLPClassifier on load_digits within 2 points (mean over seeds).",
                paper_statement="Not a paper: the torch base estimator trains as well as "
                                "scikit-learn's MLPClassifier given the same architecture, "
                                "L2 penalty, batch size, learning rate and epochs.",
                check="mean test accuracy of scikit-learn's MLP minus ours, over the seeds, "
                      "is at most 0.02",
                control="our MLP trained for one epoch instead of the full budget")
def _claim_mlp_matches_sklearn(scale, seed, out_dir):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier as SkMLP

    from ..datasets import load_digits_split
    from ..nn import MLPClassifier

    n_seeds, width, epochs, n_train = _SETTINGS[scale]
    ours, theirs, untrained = [], [], []
    for s in range(seed, seed + n_seeds):
        d = load_digits_split(random_state=s)
        X, y = d.X_train[:n_train], d.y_train[:n_train]
        common = dict(hidden_layer_sizes=(width,), alpha=1e-4, batch_size=200,
                      random_state=s)
        ours.append(MLPClassifier(max_epochs=epochs, lr=1e-3, device="cpu", **common)
                    .fit(X, y).score(d.X_test, d.y_test))
        untrained.append(MLPClassifier(max_epochs=1, lr=1e-3, device="cpu", **common)
                         .fit(X, y).score(d.X_test, d.y_test))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            theirs.append(SkMLP(max_iter=epochs, learning_rate_init=1e-3, **common)
                          .fit(X, y).score(d.X_test, d.y_test))
    gap = float(np.mean(theirs) - np.mean(ours))
    control_gap = float(np.mean(theirs) - np.mean(untrained))

    fig, ax = new_figure(figsize=(4, 3))
    ax.bar(["skpaper (torch)", "scikit-learn"], [np.mean(ours), np.mean(theirs)],
           yerr=[np.std(ours), np.std(theirs)], color=["tab:blue", "tab:gray"])
    ax.set_ylim(min(min(ours), min(theirs)) - 0.05, 1.0)
    ax.set_ylabel("test accuracy (digits)")
    artifact = save_figure(fig, out_dir, "mlp_vs_sklearn_digits")
    return ClaimResult(
        observed={"accuracy_skpaper": float(np.mean(ours)),
                  "accuracy_sklearn": float(np.mean(theirs)),
                  "accuracy_gap": gap, "n_seeds": n_seeds},
        expected={"accuracy_gap_max": 0.02},
        passed=bool(gap <= 0.02),
        control=ControlResult(observed={"accuracy_one_epoch": float(np.mean(untrained)),
                                        "accuracy_gap": control_gap},
                              passed=bool(control_gap <= 0.02)),
        arms={"skpaper": {"parameters": 64 * width + width + 10 * width + 10,
                          "train_epochs": epochs, "train_examples": len(X)},
              "scikit-learn": {"parameters": 64 * width + width + 10 * width + 10,
                               "train_epochs": epochs, "train_examples": len(X)}},
        artifacts=[artifact],
        notes="smoke trains on 400 rows for 30 epochs; the gap is only meaningful "
              "at quick scale and above." if scale == "smoke" else "",
    )
