"""Focus Instruction Tuning against the anchors a user would reach for instead.

No package implements FIT (the authors' code was not released), so the peers
are the paper's anchors and a group-reweighting baseline, trained in the same process on the same
data (six genres tied to three labels with ``rho = 0.9``; test splits iid, low,
flipped, unseen):

- vanilla fine-tuning: the same classifier (histogram gradient boosting) on
  ``y``;
- group-balanced reweighting: the same classifier with ``sample_weight``
  making every (genre, label) group weigh the same, the reweighting family of
  group-robust training (GroupDRO, JTT);
- for the text variant, a vanilla fine-tuned tiny LM (the input alone, no
  instruction, same architecture and epochs).

Each side reports its time and its accuracy on ``y`` per split; ours is
:class:`~skpaper.language.FocusInstructionTuner` /
:class:`~skpaper.language.FocusInstructionLM` with decoupling, asked to focus
on the core and ignore the genre, plus its focus(S) accuracy on seen genres.

Run: ``python benchmarks/bench_focus.py [--quick] [--repeat N] [--json out.json]``.
"""

import numpy as np
import torch
from _harness import Case, main_cli
from sklearn.ensemble import HistGradientBoostingClassifier

from skpaper.datasets import make_spurious_task
from skpaper.language import (
    FocusInstructionLM,
    FocusInstructionTuner,
    LanguageModel,
    WordTokenizer,
)

SPLITS = ("iid", "low", "flipped", "unseen")


def _splits(n, kind):
    return {s: make_spurious_task(n, rho=1 / 3 if s == "unseen" else 0.9, split=s, kind=kind,
                                  random_state=10 + i) for i, s in enumerate(SPLITS)}


def _figures(predict, tests):
    acc = {s: float(np.mean(predict(Xt) == yt)) for s, (Xt, yt, _) in tests.items()}
    seen = [acc[s] for s in ("iid", "low", "flipped")]
    return {**{f"acc_{s}": v for s, v in acc.items()}, "spread_seen": max(seen) - min(seen)}


def _tabular_cases(quick):
    n = 3000 if quick else 12000
    X, y, _ = make_spurious_task(n, rho=0.9, random_state=0)
    tests = _splits(n // 4, "tabular")
    genre = X[:, 4:].argmax(1)
    groups = genre * 3 + y
    counts = np.bincount(groups, minlength=18).astype(float)
    balanced = (len(y) / (np.count_nonzero(counts) * counts))[groups]

    def ours():
        model = FocusInstructionTuner(HistGradientBoostingClassifier(random_state=0),
                                      spurious_columns=list(range(4, 10)),
                                      decouple_excluded=True, random_state=0).fit(X, y)
        out = _figures(model.predict, tests)
        out["focus_S_acc_flipped"] = model.score(tests["flipped"][0], tests["flipped"][2],
                                                 focus="focus_S")
        return out

    def vanilla():
        return _figures(HistGradientBoostingClassifier(random_state=0).fit(X, y).predict, tests)

    def reweighted():
        model = HistGradientBoostingClassifier(random_state=0).fit(X, y, sample_weight=balanced)
        return _figures(model.predict, tests)

    params = {"n_train": n, "rho": 0.9}
    return [Case("tabular: FIT vs vanilla", ours=ours, peer=vanilla, peer_name="vanilla HGB",
                 items=n, params=params),
            Case("tabular: FIT vs group reweighting", ours=ours, peer=reweighted,
                 peer_name="group-balanced", items=n, params=params)]


def _text_case(quick):
    n, epochs = (1500, 8) if quick else (3000, 15)
    texts, y, _ = make_spurious_task(n, rho=0.9, kind="nli", random_state=0)
    tests = _splits(300, "nli")

    def lm():
        return LanguageModel(tokenizer=WordTokenizer(), n_layers=2, d_model=64, n_heads=4,
                             max_len=40, max_epochs=epochs, batch_size=64, lr=3e-3,
                             device="cpu", random_state=0)

    def ours():
        model = FocusInstructionLM(lm(), decouple_excluded=True, random_state=0).fit(texts, y)
        out = _figures(model.predict, tests)
        out["focus_S_acc_flipped"] = model.score(tests["flipped"][0], tests["flipped"][2],
                                                 focus="focus_S")
        return out

    def vanilla():
        model = FocusInstructionLM(lm(), focus_types=["empty"], default_focus="empty",
                                   random_state=0).fit(texts, y)
        return _figures(model.predict, tests)

    return Case("text: FIT vs vanilla LM", ours=ours, peer=vanilla, peer_name="vanilla tiny LM",
                items=n, params={"n_train": n, "epochs": epochs})


def make_cases(quick):
    torch.set_num_threads(1)
    return [*_tabular_cases(quick), _text_case(quick)]


if __name__ == "__main__":
    results = main_cli(make_cases, description=__doc__.splitlines()[0])
    for row in results:
        ours, peer = row.get("ours_figures") or {}, row.get("peer_figures") or {}
        print(f"{row['case']}: flipped accuracy ours {ours['acc_flipped']:.3f} vs {row['peer']} "
              f"{peer['acc_flipped']:.3f} (ratio {ours['acc_flipped'] / peer['acc_flipped']:.3f});"
              f" seen-split spread ours {ours['spread_seen']:.3f} vs {peer['spread_seen']:.3f}")
