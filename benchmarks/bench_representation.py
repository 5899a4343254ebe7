"""Deep linear transfer (Tahir et al. 2025) against the references a user would reach for.

- Scratch training: gradient descent on a two-layer linear network from a ``1e-5`` start
  (ours, numpy rank-one updates) against ``numpy.linalg.pinv``, the minimum-norm solution
  it converges to: time and distance to it.
- The same network trained by full-batch ``torch.optim.SGD`` with the same step and number
  of steps (the authors' framework): time and agreement of the two trajectories' end points.
- Linear transfer with a ridge readout (ours) against :class:`sklearn.linear_model.Ridge`
  on the projected source feature: time and coefficient agreement.
- The closed-form scratch risk against a Monte Carlo average of ``pinv`` fits.

Run: ``python benchmarks/bench_representation.py [--quick] [--json out.json]``.
"""

import warnings

import numpy as np
from _harness import Case, main_cli
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import Ridge

from skpaper.datasets import make_teacher_tasks
from skpaper.representation import DeepLinearRegressor, TransferRegressor, scratch_risk


def _torch_deep_linear(X, y, coefs, lr, steps):
    import torch

    torch.set_num_threads(1)
    Xt = torch.as_tensor(X)
    yt = torch.as_tensor(y)
    W1 = torch.nn.Parameter(torch.as_tensor(coefs[0].copy()))
    w2 = torch.nn.Parameter(torch.as_tensor(coefs[1].copy()))
    opt = torch.optim.SGD([W1, w2], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.mean((Xt @ (W1 @ w2) - yt) ** 2)
        loss.backward()
        opt.step()
    return (W1 @ w2).detach().numpy()


def make_cases(quick):
    d = 100 if quick else 300
    task = make_teacher_tasks(d=d, theta=np.pi / 4, sigma=0.2, n=d // 2, random_state=0)
    X, y = task.X, task.y
    pinv_beta = np.linalg.pinv(X) @ y

    def ours_scratch():
        net = DeepLinearRegressor(random_state=0).fit(X, y)
        return {"dist_to_pinv": float(np.linalg.norm(net.coef_ - pinv_beta)),
                "steps": net.n_iter_}

    def peer_pinv():
        beta = np.linalg.pinv(X) @ y
        return {"dist_to_pinv": float(np.linalg.norm(beta - pinv_beta))}

    # Fixed steps for the framework comparison: same start, step and count on both sides.
    steps = 300 if quick else 1000
    lr = 0.01
    # A 1e-2 start leaves the plateau within these steps, so the end points are O(1).
    fixed = DeepLinearRegressor(init_scale=1e-2, random_state=0, lr=lr, max_iter=steps,
                                tol=0.0)
    coefs0 = fixed._init_coefs(d)

    def ours_fixed():
        net = fixed._train(_quadratic(X, y), [W.copy() for W in coefs0])
        ours_fixed.beta = net.coef_
        return {"steps": steps, "train_loss": float(np.mean((X @ net.coef_ - y) ** 2))}

    def peer_torch():
        beta = _torch_deep_linear(X, y, coefs0, lr, steps)
        gap = np.linalg.norm(beta - ours_fixed.beta) / np.linalg.norm(ours_fixed.beta)
        return {"steps": steps, "train_loss": float(np.mean((X @ beta - y) ** 2)),
                "relative_dist_to_ours": float(gap)}

    source = FrozenEstimator(DeepLinearRegressor(random_state=0)
                             .fit_population(task.beta_source))
    lam = 0.1

    def ours_linear():
        model = TransferRegressor(source, mode="linear", ridge=lam).fit(X, y)
        ours_linear.beta = model.estimator_.coef_
        return {"risk": model.estimator_.risk(task.beta_target)}

    def peer_ridge():
        z = X @ source.features_
        ridge = Ridge(alpha=X.shape[0] * lam, fit_intercept=False).fit(z, y)
        beta = source.features_ @ ridge.coef_
        gap = float(np.linalg.norm(beta - ours_linear.beta)) if hasattr(ours_linear, "beta") \
            else float("nan")
        return {"risk": float(np.sum((beta - task.beta_target) ** 2)), "dist_to_ours": gap}

    reps, d_mc, gamma = (200, 40, 0.5) if quick else (1000, 100, 0.5)

    def ours_theory():
        return {"scratch_risk": scratch_risk(gamma, 0.2, d=d_mc)}

    def peer_monte_carlo():
        rng = np.random.default_rng(0)
        n = int(gamma * d_mc)
        beta = np.zeros(d_mc)
        beta[0] = 1.0
        risks = []
        for _ in range(reps):
            Xm = rng.standard_normal((n, d_mc))
            ym = Xm @ beta + 0.2 * rng.standard_normal(n)
            risks.append(np.sum((np.linalg.pinv(Xm) @ ym - beta) ** 2))
        return {"scratch_risk": float(np.mean(risks)),
                "standard_error": float(np.std(risks) / np.sqrt(reps))}

    params = {"d": d, "n": d // 2}
    return [
        Case("scratch GD (init 1e-5) vs pinv", ours_scratch, peer_pinv, "numpy.pinv",
             params=params),
        Case(f"deep linear GD, {steps} fixed steps", ours_fixed, peer_torch, "torch SGD",
             params={**params, "lr": lr}),
        Case("linear transfer, ridge readout", ours_linear, peer_ridge, "sklearn Ridge",
             params={**params, "ridge": lam}),
        Case("closed-form scratch risk vs Monte Carlo", ours_theory, peer_monte_carlo,
             f"pinv x {reps}", params={"d": d_mc, "gamma": gamma, "sigma": 0.2}),
    ]


def _quadratic(X, y):
    from skpaper.representation._deep_linear import _Quadratic

    return _Quadratic(X=X, y=y)


if __name__ == "__main__":
    # The fixed-step case stops at max_iter on purpose.
    warnings.simplefilter("ignore", ConvergenceWarning)
    main_cli(make_cases, __doc__.splitlines()[0])
