"""The LAuReL claims' generated task and batched arms (their smoke runs are in test_papers)."""

import numpy as np

from skpaper.papers import laurel


def test_teacher_task_is_seeded_and_standardised():
    X, y = laurel._make_teacher_task(500, 6, 3, 8, seed=1)
    X2, y2 = laurel._make_teacher_task(500, 6, 3, 8, seed=1)
    assert X.shape == (500, 6) and y.shape == (500,)
    assert X.dtype == np.float32 and y.dtype == np.float32
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert abs(float(y.mean())) < 1e-5 and abs(float(y.std()) - 1) < 1e-4
    _, y3 = laurel._make_teacher_task(500, 6, 3, 8, seed=2)
    assert not np.allclose(y, y3)


def test_teacher_target_is_not_linear_in_the_inputs():
    # the residual tanh layers make the target nonlinear: least squares leaves a residual
    X, y = laurel._make_teacher_task(4000, 8, 6, 16, seed=0)
    A = np.c_[X, np.ones(len(X))]
    residual = y - A @ np.linalg.lstsq(A, y, rcond=None)[0]
    assert residual.var() > 0.05


def test_regression_arm_returns_log_mse_per_seed():
    from skpaper.nn import make_laurel_mlp

    X, y = laurel._make_teacher_task(300, 4, 2, 8, seed=0)
    data = (X[:200], y[:200], X[200:], y[200:])
    log_mse, mse = laurel._train_arm(lambda: make_laurel_mlp(4, 1, 8, 1, "rw+lr", rank=2),
                                     data, [3, 4], epochs=1, kind="regress")
    assert len(log_mse) == len(mse) == 2
    np.testing.assert_allclose(log_mse, np.log(mse))
    assert all(m > 0 for m in mse)


def test_configs_differ_from_the_calibration_setting():
    cal = laurel._TEACHER_CALIBRATION
    for scale in ("quick", "full"):
        cfg = laurel._TEACHER[scale]
        assert (cfg["d"], cfg["depth"]) != (cal["d"], cal["depth"])
