"""Cross-learning bandits: speed of the numba loop and regret against Vowpal Wabbit.

Two comparisons, in one process on the same first-price auction:

* rounds per second of :class:`~skpaper.bandits.CrossLearningExp3` (numba kernel)
  against a straightforward numpy loop of the same algorithm
  (``skpaper.bandits._reference.reference_run``, fed the same uniforms, so both
  play the same actions: the regret figures must agree);
* regret of the same policy against ``vowpalwabbit`` ``--cb_explore_adf``
  (epsilon-greedy and SquareCB), with the value as a one-hot shared feature and
  the bids as action-dependent features, learning only from the played bid.
  VW cannot use cross-learning; the comparison shows what the extra feedback
  is worth.

Run ``python benchmarks/bench_bandits.py [--quick] [--repeat 3] [--json out.json]``.
"""

import numpy as np
from _harness import Case, main_cli
from sklearn.utils import check_random_state

from skpaper.bandits import CrossLearningExp3, FirstPriceAuction
from skpaper.bandits._reference import reference_run


def _auction(n_values, horizon, seed=0):
    return FirstPriceAuction(n_values=n_values, n_bids=10, random_state=seed).generate(horizon)


def _regret(env, actions):
    """Regret against the best fixed policy, from the auction's loss formula."""
    c = env.contexts_
    v, b, m = env.values_, env.bids_, env.thresholds_

    def loss(a):
        return 0.5 * (1 - (v[c] - b[a]) * (b[a] >= m))

    return float((loss(actions) - loss(env.best_policy()[c])).sum())


def _speed_case(n_values, horizon):
    env = _auction(n_values, horizon)
    dense = env.to_dense()
    policy = CrossLearningExp3(random_state=0)

    def ours():
        policy.fit(None, environment=env)
        return {"regret": policy.regret_}

    def numpy_loop():
        eta = np.sqrt(np.log(10) / (10 * horizon))
        uniforms = check_random_state(0).random_sample(horizon)
        actions, _ = reference_run(
            env.contexts_, lambda t, a: dense[t, :, a], uniforms, n_contexts=n_values,
            n_actions=10, eta=eta, gamma=eta / 2,
            epoch_length=int(np.ceil(np.sqrt(horizon))),
        )
        return {"regret": _regret(env, actions)}

    return Case(f"cross-learning rounds, C={n_values}, T={horizon}", ours=ours, peer=numpy_loop,
                peer_name="numpy loop", items=horizon,
                params={"n_values": n_values, "n_bids": 10, "horizon": horizon})


def _vw_run(env, horizon, explorer, seed=0):
    import vowpalwabbit

    ws = vowpalwabbit.Workspace(f"--cb_explore_adf {explorer} -q sa --quiet "
                                f"--random_seed {seed}")
    rng = np.random.RandomState(seed)
    actions = np.empty(horizon, dtype=np.int64)
    n_bids = env.n_actions_
    action_lines = [f"|a b{j}" for j in range(n_bids)]
    for t in range(horizon):
        c = int(env.contexts_[t])
        shared = f"shared |s v{c}"
        pmf = np.asarray(ws.predict([shared, *action_lines]), dtype=np.float64)
        pmf /= pmf.sum()
        a = int(min(np.searchsorted(np.cumsum(pmf), rng.random_sample(), side="right"),
                    n_bids - 1))
        actions[t] = a
        cost = env.loss_column(t, a)[c]
        lines = [shared, *action_lines]
        lines[1 + a] = f"0:{cost}:{pmf[a]} {action_lines[a]}"
        ws.learn(lines)
    ws.finish()
    return actions


def _vw_case(n_values, horizon, explorer):
    env = _auction(n_values, horizon)
    policy = CrossLearningExp3(random_state=0)

    def ours():
        policy.fit(None, environment=env)
        return {"regret": policy.regret_}

    def vw():
        return {"regret": _regret(env, _vw_run(env, horizon, explorer))}

    try:
        import vowpalwabbit  # noqa: F401
    except ImportError:
        vw = None
    return Case(f"regret vs VW {explorer.split()[0]}, C={n_values}", ours=ours, peer=vw,
                peer_name="vowpalwabbit", items=horizon,
                params={"n_values": n_values, "horizon": horizon, "vw": explorer})


def cases(quick):
    horizon = 5000 if quick else 20_000
    return [
        _speed_case(50, horizon),
        _speed_case(400, horizon // 4 if quick else horizon // 2),
        _vw_case(50, horizon, "--epsilon 0.05"),
        _vw_case(50, horizon, "--squarecb"),
    ]


if __name__ == "__main__":
    main_cli(cases, description=__doc__.splitlines()[0])
