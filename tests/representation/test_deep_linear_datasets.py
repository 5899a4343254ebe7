"""Generators of linear and ReLU teacher tasks."""

import numpy as np
import pytest

from skpaper.datasets import make_relu_teacher_tasks, make_teacher_tasks, relu_teacher_kernel


def test_teacher_tasks_have_unit_teachers_at_the_requested_angle():
    task = make_teacher_tasks(d=40, theta=1.1, sigma=0.0, n=15, random_state=0)
    assert np.linalg.norm(task.beta_source) == pytest.approx(1.0)
    assert np.linalg.norm(task.beta_target) == pytest.approx(1.0)
    assert task.beta_source @ task.beta_target == pytest.approx(np.cos(1.1))
    assert np.allclose(task.y, task.X @ task.beta_target)
    assert not hasattr(task, "X_source")


def test_teacher_tasks_share_data_across_angles_for_one_seed():
    a = make_teacher_tasks(d=10, theta=0.2, sigma=0.3, n=8, random_state=5)
    b = make_teacher_tasks(d=10, theta=1.4, sigma=0.3, n=8, random_state=5)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.beta_source, b.beta_source)
    assert np.allclose(a.y - a.X @ a.beta_target, b.y - b.X @ b.beta_target)


def test_teacher_tasks_can_draw_finite_source_data():
    task = make_teacher_tasks(d=10, theta=0.5, sigma=0.0, n=5, n_source=30,
                              sigma_source=0.0, random_state=0)
    assert task.X_source.shape == (30, 10)
    assert np.allclose(task.y_source, task.X_source @ task.beta_source)


def test_relu_teacher_kernel_matches_monte_carlo():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    X = rng.standard_normal((200000, 4))
    mc = np.maximum(X @ A.T, 0).T @ np.maximum(X @ B.T, 0) / X.shape[0]
    assert np.allclose(relu_teacher_kernel(A, B), mc, rtol=0.03, atol=0.01)


def test_relu_teacher_tasks_are_normalised_and_nested():
    tasks = [make_relu_teacher_tasks(d=8, n_teacher=10, ablation=mu, sigma=0.0, n=20,
                                     n_source=50, n_test=20000, random_state=2)
             for mu in (0.0, 0.3, 0.7, 1.0)]
    # Same seed, same target teacher: more ablation leaves more of it out of span.
    spans = [t.out_of_span for t in tasks]
    assert spans[0] == pytest.approx(0.0, abs=1e-8) and spans[-1] == 1.0
    assert spans == sorted(spans)
    assert np.mean(tasks[0].y_test ** 2) == pytest.approx(1.0, rel=0.05)
    t = tasks[1]
    assert t.source_mask.sum() == 7
    source = np.maximum(t.X_source @ t.source_weights.T, 0) @ t.source_coef / 7
    assert np.allclose(source, t.y_source)


@pytest.mark.parametrize("call, match", [
    (lambda: make_teacher_tasks(theta=4.0), "theta"),
    (lambda: make_teacher_tasks(sigma=-1.0), "sigma"),
    (lambda: make_teacher_tasks(d=1), "d"),
    (lambda: make_relu_teacher_tasks(ablation=1.5), "ablation"),
    (lambda: make_relu_teacher_tasks(n_test=-1), "n_test"),
    (lambda: relu_teacher_kernel(np.ones((2, 3)), np.ones((2, 4))), "columns"),
])
def test_generators_reject_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
