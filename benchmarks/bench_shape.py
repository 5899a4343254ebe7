"""Shape orientation: rotation kernels against roma and scipy, and stage-1 orienters.

Run: ``python benchmarks/bench_shape.py [--quick] [--json out.json]``.

1. Special Procrustes, forward and backward on a batch of 3x3 matrices, against
   ``roma.special_procrustes`` (the projection the official code uses): time, the
   largest difference of outputs and of gradients, and the gradient's finiteness at
   repeated singular values (the identity).
2. Uniform random rotations against ``scipy.spatial.transform.Rotation.random``.
3. Geodesic distances against scipy's ``(R1.inv() * R2).magnitude()``.
4. Stage 1 on the synthetic shapes: the learned quotient orienter against the PCA
   frame, seconds per fit+predict and the share of errors modulo O below 10 degrees.
"""

import numpy as np
import torch
from _harness import Case, main_cli
from scipy.spatial.transform import Rotation

from skpaper.datasets import make_synthetic_shapes
from skpaper.shape import (
    PCAOrienter,
    QuotientOrienter,
    angle_modulo_group,
    apply_rotation,
    geodesic_distance,
    octahedral_group,
    random_rotations,
    special_procrustes,
)

try:
    import roma
except ImportError:  # the peer is an optional benchmark dependency
    roma = None


def _procrustes_case(n):
    gen = torch.Generator().manual_seed(0)
    M = torch.randn(n, 3, 3, generator=gen, dtype=torch.float64)
    W = torch.randn(n, 3, 3, generator=gen, dtype=torch.float64)

    def run(project):
        X = M.clone().requires_grad_(True)
        R = project(X)
        (R * W).sum().backward()
        return R.detach(), X.grad

    def at_identity(project):
        X = torch.eye(3, dtype=torch.float64).repeat(4, 1, 1).requires_grad_(True)
        (project(X) * W[:4]).sum().backward()
        return bool(torch.isfinite(X.grad).all())

    ref = run(roma.special_procrustes) if roma is not None else None

    def ours():
        R, grad = run(special_procrustes)
        if ref is None:
            return {"finite_grad_at_identity": at_identity(special_procrustes)}
        return {"max_abs_diff_R": float((R - ref[0]).abs().max()),
                "max_abs_diff_grad": float((grad - ref[1]).abs().max()),
                "finite_grad_at_identity": at_identity(special_procrustes)}

    def peer():
        run(roma.special_procrustes)
        return {"finite_grad_at_identity": at_identity(roma.special_procrustes)}

    return Case(f"special Procrustes fwd+bwd, {n} matrices", ours=ours,
                peer=peer if roma is not None else None, peer_name="roma", items=n,
                params={"n": n})


def _random_case(n):
    def ours():
        R = random_rotations(n, 0)
        return {"mean_trace": float(np.trace(R, axis1=1, axis2=2).mean())}

    def peer():
        R = Rotation.random(n, random_state=0).as_matrix()
        return {"mean_trace": float(np.trace(R, axis1=1, axis2=2).mean())}

    return Case(f"uniform random rotations, {n}", ours=ours, peer=peer, peer_name="scipy",
                items=n, params={"n": n})


def _geodesic_case(n):
    A, B = random_rotations(2 * n, 1).reshape(2, n, 3, 3)
    ref = np.rad2deg((Rotation.from_matrix(A).inv() * Rotation.from_matrix(B)).magnitude())

    def ours():
        return {"max_abs_diff_deg": float(np.abs(geodesic_distance(A, B) - ref).max())}

    def peer():
        (Rotation.from_matrix(A).inv() * Rotation.from_matrix(B)).magnitude()

    return Case(f"geodesic distance, {n} pairs", ours=ours, peer=peer, peer_name="scipy",
                items=n, params={"n": n})


def _stage_one_case(quick):
    n_train, n_points, epochs = (20, 64, 15) if quick else (40, 128, 40)
    X, _ = make_synthetic_shapes(n_train, n_points, random_state=0)
    X_test, _ = make_synthetic_shapes(10, n_points, families=["bench", "chair", "mug"],
                                      random_state=1)
    R = random_rotations(len(X_test), 2)
    X_rot = apply_rotation(X_test, R)
    O = octahedral_group()

    def score(est):
        err = angle_modulo_group(est.fit(X).predict(X_rot), R, O)
        return {"frac_err_mod_O_below_10deg": float(np.mean(err < 10)),
                "median_err_mod_O_deg": float(np.median(err))}

    return Case("stage 1 fit+predict: quotient vs PCA",
                ours=lambda: score(QuotientOrienter(n_points=n_points, max_epochs=epochs,
                                                    batch_size=16, n_votes=50, device="cpu",
                                                    random_state=0)),
                peer=lambda: score(PCAOrienter()), peer_name="PCA frame",
                params={"n_train": len(X), "n_points": n_points, "epochs": epochs})


def make_cases(quick):
    torch.set_num_threads(1)
    n = 2_000 if quick else 20_000
    return [_procrustes_case(n), _random_case(5 * n), _geodesic_case(5 * n),
            _stage_one_case(quick)]


if __name__ == "__main__":
    main_cli(make_cases, description=__doc__)
