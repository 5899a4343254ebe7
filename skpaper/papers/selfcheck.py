"""Framework self-check: the torch base reproduces a known baseline.

Listed apart from the papers by ``skpaper list``. It proves the reproduce path
end to end (claim registry, JSON, plot, report) on a real comparison:
:class:`skpaper.nn.MLPClassifier` against
:class:`sklearn.neural_network.MLPClassifier` on the bundled digits.
"""

import warnings

import numpy as np

from ._comparison import ArmRun, EffectOfInterest, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import register_claim, register_paper

SLUG = "framework-selfcheck"

register_paper(SLUG, "Framework self-check: torch MLP vs scikit-learn MLP", module="skpaper.nn",
               kind="selfcheck")

_SETTINGS = {
    # (looks in paired seeds, hidden width, max epochs, training rows kept)
    "smoke": ((3,), 32, 100, None),
    "quick": ((3, 6), 64, 200, None),
    "full": ((5, 10, 20), 100, 200, None),
}

_TOLERANCE = 0.02
_EOI = EffectOfInterest(
    _TOLERANCE, "ours",
    "two points of test accuracy: the largest shortfall of the torch base against "
    "scikit-learn that would still let the papers' comparisons rest on it")


@register_claim(SLUG, "mlp-matches-sklearn-digits",
                "skpaper's torch MLPClassifier reaches the accuracy of scikit-learn's "
                "MLPClassifier on load_digits within 2 points (paired seeds).",
                paper_statement="Not a paper: the torch base estimator trains as well as "
                                "scikit-learn's MLPClassifier given the same architecture, "
                                "L2 penalty, batch size, learning rate and epochs.",
                check="equivalence on paired seeds: the upper bound of mean(scikit-learn "
                      "accuracy - ours) is below 0.02 (contradicted when its lower bound "
                      "is above 0.02)",
                control="our MLP trained for one epoch instead of the full budget",
                effect_of_interest=_EOI)
def _claim_mlp_matches_sklearn(scale, seed, out_dir):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier as SkMLP

    from ..datasets import load_digits_split
    from ..nn import MLPClassifier

    looks, width, epochs, n_train = _SETTINGS[scale]
    parameters = 64 * width + width + 10 * width + 10

    def data(s):
        d = load_digits_split(random_state=s)
        return d.X_train[:n_train], d.y_train[:n_train], d.X_test, d.y_test

    def ours(max_epochs):
        def arm(s):
            X, y, X_test, y_test = data(s)
            model = MLPClassifier(hidden_layer_sizes=(width,), alpha=1e-4, batch_size=200,
                                  random_state=s, max_epochs=max_epochs, lr=1e-3,
                                  device="cpu").fit(X, y)
            return ArmRun(model.score(X_test, y_test), parameters=parameters,
                          train_steps=max_epochs, train_examples=len(X),
                          extra={"train_steps_unit": "epochs"})
        return arm

    def theirs(s):
        X, y, X_test, y_test = data(s)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = SkMLP(hidden_layer_sizes=(width,), alpha=1e-4, batch_size=200,
                          random_state=s, max_iter=epochs, learning_rate_init=1e-3).fit(X, y)
        return ArmRun(model.score(X_test, y_test), parameters=parameters,
                      train_steps=epochs, train_examples=len(X),
                      extra={"train_steps_unit": "epochs"})

    cmp = run_comparison(
        {"scikit-learn": theirs, "skpaper": ours(epochs), "skpaper one epoch": ours(1)},
        method="scikit-learn", baseline="skpaper", control_method="scikit-learn",
        control_baseline="skpaper one epoch", seed=seed, looks=looks,
        effect_of_interest=_EOI, alternative="less", margin=_TOLERANCE,
        metric="test accuracy (digits)")

    means = {arm: float(np.mean(v)) for arm, v in cmp.values.items()}
    spread = {arm: float(np.std(v)) for arm, v in cmp.values.items()}
    names = ["skpaper", "scikit-learn", "skpaper one epoch"]
    fig, ax = new_figure(figsize=(5, 3))
    ax.bar(names, [means[a] for a in names], yerr=[spread[a] for a in names],
           color=["tab:blue", "tab:gray", "tab:red"])
    ax.set_ylim(0.0, 1.0)
    ax.set_ylabel("test accuracy (digits)")
    artifact = save_figure(fig, out_dir, "mlp_vs_sklearn_digits")
    return cmp.claim_result(
        observed={"accuracy_gap": means["scikit-learn"] - means["skpaper"]},
        artifacts=[artifact],
        notes="Every arm runs on the same splits and seeds. Smoke trains a narrower "
              "network for 100 epochs; the gap is only meaningful at quick scale and "
              "above." if scale == "smoke" else "Every arm runs on the same splits and seeds.")
