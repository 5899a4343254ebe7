import numpy as np
import pytest

from skpaper.datasets import make_discretized_chain, make_discretized_gaussian_dag


@pytest.mark.parametrize("structure", ["chain", "fork", "collider"])
def test_make_discretized_chain_shapes_levels_and_unit_variance(structure):
    X, Z = make_discretized_chain(20000, n_levels=5, structure=structure, direct_effect=0.2,
                                  return_latent=True, random_state=0)
    assert X.shape == (20000, 3) and X.dtype == np.int64
    assert X.min() >= 0 and X.max() <= 4
    np.testing.assert_allclose(Z.var(axis=0), 1.0, atol=0.05)
    # Codes are increasing in the latent variable.
    for j in range(3):
        order = np.argsort(Z[:, j])
        assert np.all(np.diff(X[order, j]) >= 0)


def test_make_discretized_chain_null_structure():
    _, Z = make_discretized_chain(50000, coef=0.6, return_latent=True, random_state=1)
    prec = np.linalg.inv(np.corrcoef(Z, rowvar=False))
    assert abs(prec[0, 2]) < 0.03  # Z1 indep Z3 | Z2
    _, Zc = make_discretized_chain(50000, structure="collider", return_latent=True,
                                   random_state=1)
    assert abs(np.corrcoef(Zc[:, 0], Zc[:, 2])[0, 1]) < 0.03


def test_make_discretized_chain_is_seeded_and_validates():
    a = make_discretized_chain(50, random_state=3)
    np.testing.assert_array_equal(a, make_discretized_chain(50, random_state=3))
    with pytest.raises(ValueError, match="no noise variance"):
        make_discretized_chain(10, coef=0.9, direct_effect=0.9)
    with pytest.raises(ValueError, match="n_levels"):
        make_discretized_chain(10, n_levels=1)
    with pytest.raises(ValueError, match="structure"):
        make_discretized_chain(10, structure="loop")


def test_make_discretized_gaussian_dag_is_acyclic_with_unit_variance_latents():
    X, dag, Z = make_discretized_gaussian_dag(9, 20000, 0.4, 3, n_continuous=2,
                                              return_latent=True, random_state=2)
    assert dag.shape == (9, 9) and not np.any(np.diag(dag))
    # Acyclic: some power of the adjacency matrix vanishes.
    assert not np.any(np.linalg.matrix_power(dag, 9))
    np.testing.assert_allclose(Z.var(axis=0), 1.0, atol=0.05)
    continuous = [j for j in range(9) if not np.all(X[:, j] == np.round(X[:, j]))]
    assert len(continuous) == 2
    np.testing.assert_array_equal(X[:, continuous], Z[:, continuous])
    X0, dag0 = make_discretized_gaussian_dag(9, 100, 0.4, 3, random_state=2)
    assert X0.dtype == np.int64 and X0.max() <= 2
    np.testing.assert_array_equal(dag0, dag)


def test_make_discretized_gaussian_dag_bad_input():
    with pytest.raises(ValueError, match="weight_range"):
        make_discretized_gaussian_dag(4, 10, 0.5, 3, weight_range=(1.0, 0.5))
    with pytest.raises(ValueError, match="n_continuous"):
        make_discretized_gaussian_dag(4, 10, 0.5, 3, n_continuous=5)
    with pytest.raises(ValueError, match="edge_prob"):
        make_discretized_gaussian_dag(4, 10, 1.5, 3)
