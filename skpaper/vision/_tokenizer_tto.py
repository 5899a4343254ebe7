"""Training-free generation by test-time optimisation of 1D tokens."""

import contextlib
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..utils._seeding import derive_seed
from ..utils._sklearn import HasMethods, Interval, StrOptions
from ._tokenizer_modules import flat_to_images, images_to_flat
from ._tokenizer_objectives import call_objective

__all__ = ["TokenTestTimeOptimizer", "token_noise_schedule"]


def token_noise_schedule(i, n_iter):
    """Noise scale ``s(i) = (1 + cos(pi min(1, 1.5 i / (N - 1)))) / 2``.

    It decays from 1 to 0 at two thirds of the run and stays 0 afterwards.

    Parameters
    ----------
    i : int
        Iteration index, ``0 <= i < n_iter``.
    n_iter : int
        Number of iterations ``N`` of the run.

    Returns
    -------
    scale : float
        Noise scale in ``[0, 1]``.

    Examples
    --------
    >>> from skpaper.vision import token_noise_schedule
    >>> [round(token_noise_schedule(i, 7), 2) for i in range(7)]
    [1.0, 0.85, 0.5, 0.15, 0.0, 0.0, 0.0]
    """
    t = min(1.0, 1.5 * i / max(int(n_iter) - 1, 1))
    return float(0.5 * (1.0 + np.cos(np.pi * t)))


@contextlib.contextmanager
def _frozen(module):
    """Eval mode and no parameter gradients inside the block, restored afterwards."""
    flags = [(p, p.requires_grad) for p in module.parameters()]
    was_training = module.training
    module.eval()
    for p, _ in flags:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)
        module.train(was_training)


class TokenTestTimeOptimizer(BaseEstimator):
    """Generate images by optimising a tokenizer's tokens against any objective.

    Solves ``min_z L(D(Q(z))) + lambda R(z)`` with Adam, where ``z`` are the
    pre-quantization tokens of a frozen 1D tokenizer, ``Q`` the nearest-code
    lookup with a straight-through gradient and ``D`` the frozen decoder [1]_.
    Plug-and-play objectives (:class:`MaskedReconstruction` for inpainting,
    :class:`ClassifierGuidance`, :class:`EmbeddingGuidance` for the CLIP-style
    loss, :class:`WeightedSum`) turn the tokenizer into a generator without
    training any generative model.

    Parameters
    ----------
    tokenizer : VQTokenizer1D or compatible object
        A fitted tokenizer (see the Notes of :class:`VQTokenizer1D` for the
        interface). :func:`sklearn.base.clone` returns an unfitted copy of a
        tokenizer; wrap it in :class:`sklearn.frozen.FrozenEstimator` to keep
        the fitted one through cloning.
    objective : callable
        ``objective(images) -> losses`` on tensors of shape ``(n, C, H, W)``,
        returning one loss per image.
    n_iter : int, default=600
        Adam steps.
    lr : float, default=0.1
        Adam learning rate.
    through_vq : bool, default=True
        Optimise the pre-quantization tokens through ``Q`` (the paper). With
        ``False`` the quantized vectors are optimised and decoded directly,
        skipping ``Q`` (the official ``optimize_post_quantization_tokens``
        ablation).
    token_noise : float or None, default=None
        Scale ``sigma`` of Gaussian noise added to the tokens before each step,
        ``z += sigma s(i) eps`` with :func:`token_noise_schedule`.
    reg : {"seed", "zero"} or None, default=None
        Regulariser ``R``: ``mean((z - z_seed)^2)`` or ``mean(z^2)`` per image.
    reg_weight : float, default=0.0
        Its weight ``lambda``.
    ema_decay : float, default=0.0
        Decay of an exponential moving average of the tokens; the output is
        decoded from the average. ``0`` turns it off.
    clip : pair of float or None, default=(0.0, 1.0)
        Range the output images are clamped to; ``None`` leaves them as decoded.
    random_state : int, RandomState instance or None, default=None
        Seeds the token noise and the random augmentations of objectives.

    Attributes
    ----------
    tokens_ : ndarray of shape (n_samples, n_tokens, token_dim)
        Optimised (averaged) tokens of the last call to :meth:`generate`.
    codes_ : ndarray of shape (n_samples, n_tokens)
        Their code ids (``through_vq=True`` only).
    loss_curve_ : ndarray of shape (n_iter_,)
        Mean objective (without the regulariser) per step.
    final_loss_ : ndarray of shape (n_samples,)
        Objective of each output image.
    n_iter_ : int
        Steps run (a callback may stop early).

    See Also
    --------
    VQTokenizer1D : The tokenizer whose tokens are optimised.

    Notes
    -----
    Follows ``TestTimeOpt`` in the official code: ``z`` starts from ``E(seed)``
    (or given tokens), the per-image losses are summed over the batch so that
    per-image gradients do not shrink with the batch size, the optional noise
    decays to zero at two thirds of the run, the moving average uses the
    decay ``ema_decay`` from the second step on, and the output is
    ``clamp(D(Q(z_ema)), 0, 1)``. The decoder and quantizer are frozen and in
    evaluation mode throughout; only ``z`` receives gradients.

    References
    ----------
    .. [1] L. Lao Beyer, T. Li, X. Chen, S. Karaman and K. He, "Highly
       Compressed Tokenizer Can Generate Without Training", ICML 2025,
       PMLR 267:4096-4114.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from skpaper.vision import (MaskedReconstruction, TokenTestTimeOptimizer,
    ...                             VQTokenizer1D)
    >>> X = load_digits().data[:200] / 16.0
    >>> tok = VQTokenizer1D(n_tokens=4, token_dim=8, codebook_size=32, encoder="mlp",
    ...                     warmup_steps=20, dead_code_reset_every=20, max_epochs=20,
    ...                     random_state=0, device="cpu").fit(X)
    >>> known = np.arange(64) < 32              # top half of each 8x8 image
    >>> tto = TokenTestTimeOptimizer(tok, MaskedReconstruction(X[:5], known), n_iter=30,
    ...                              random_state=0)
    >>> tto.generate(seed_images=X[:5] * known).shape
    (5, 64)
    """

    _parameter_constraints = {
        "tokenizer": [HasMethods(["encode_tensor", "quantize_tensor", "embed_codes",
                                  "decode_tensor"])],
        "objective": [callable],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "through_vq": ["boolean"],
        "token_noise": [Interval(Real, 0, None, closed="left"), None],
        "reg": [StrOptions({"seed", "zero"}), None],
        "reg_weight": [Interval(Real, 0, None, closed="left")],
        "ema_decay": [Interval(Real, 0, 1, closed="left")],
        "clip": [tuple, list, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        tokenizer,
        objective,
        *,
        n_iter=600,
        lr=0.1,
        through_vq=True,
        token_noise=None,
        reg=None,
        reg_weight=0.0,
        ema_decay=0.0,
        clip=(0.0, 1.0),
        random_state=None,
    ):
        self.tokenizer = tokenizer
        self.objective = objective
        self.n_iter = n_iter
        self.lr = lr
        self.through_vq = through_vq
        self.token_noise = token_noise
        self.reg = reg
        self.reg_weight = reg_weight
        self.ema_decay = ema_decay
        self.clip = clip
        self.random_state = random_state

    def _initial_tokens(self, tok, seed_images, seed_tokens):
        if (seed_images is None) == (seed_tokens is None):
            raise ValueError("Pass exactly one of seed_images and seed_tokens.")
        with torch.no_grad():
            if seed_images is not None:
                X = tok._check_images(seed_images) if hasattr(tok, "_check_images") else (
                    np.asarray(seed_images, dtype=np.float64))
                dtype = next(tok.module_.parameters()).dtype
                images = flat_to_images(torch.as_tensor(X, dtype=dtype, device=tok.device_),
                                        tok.image_shape_)
                z = tok.encode_tensor(images)
                if not self.through_vq:
                    z = tok.quantize_tensor(z)[0]
                return z.detach().clone()
            if hasattr(tok, "_tokens_tensor"):
                return tok._tokens_tensor(seed_tokens, "seed_tokens").detach().clone()
            arr = np.asarray(seed_tokens)
            if arr.dtype.kind in "iu":
                return tok.embed_codes(torch.as_tensor(arr, device=tok.device_)).detach().clone()
            dtype = next(tok.module_.parameters()).dtype
            return torch.as_tensor(arr, dtype=dtype, device=tok.device_).clone()

    def _decode(self, tok, z):
        if self.through_vq:
            z_q, codes = tok.quantize_tensor(z)
            return tok.decode_tensor(z_q), codes
        return tok.decode_tensor(z), None

    def generate(self, seed_images=None, seed_tokens=None, callback=None):
        """Optimise tokens from a seed and return the decoded images.

        Parameters
        ----------
        seed_images : array-like of shape (n_samples, H * W * C), default=None
            Images whose encodings start the optimisation.
        seed_tokens : array-like, default=None
            Starting tokens instead: code ids ``(n_samples, n_tokens)`` or
            token vectors ``(n_samples, n_tokens, token_dim)``.
        callback : callable, default=None
            ``callback(info)`` after each step with a dict holding ``step``,
            ``tokens`` (the averaged tokens), ``images`` (the decoded batch of
            that step) and ``loss`` (per image); returning ``True`` stops.

        Returns
        -------
        images : ndarray of shape (n_samples, H * W * C)
            The decoded moving average of the optimised tokens (clipped to ``clip``
            when set), as rows of ``(H, W, C)``-ordered pixels.
        """
        self._validate_params()
        tok = self.tokenizer
        check_is_fitted(tok)
        if self.reg is None and self.reg_weight > 0:
            raise ValueError(
                f"reg_weight={self.reg_weight!r} needs reg in {{'seed', 'zero'}}, got reg=None."
            )
        if self.clip is not None and (len(self.clip) != 2 or self.clip[0] > self.clip[1]):
            raise ValueError(f"clip must be None or a pair (low, high) with low <= high, got "
                             f"{self.clip!r}.")
        generator = torch.Generator().manual_seed(derive_seed(self.random_state))
        z = self._initial_tokens(tok, seed_images, seed_tokens).requires_grad_(True)
        z_seed = z.detach().clone()
        ema = z.detach().clone()
        optimizer = torch.optim.Adam([z], lr=float(self.lr))
        n_iter, curve = int(self.n_iter), []
        with _frozen(tok.module_):
            for i in range(n_iter):
                if self.token_noise is not None:
                    with torch.no_grad():
                        noise = torch.randn(z.shape, generator=generator).to(z)
                        z.add_(float(self.token_noise) * token_noise_schedule(i, n_iter) * noise)
                images, _ = self._decode(tok, z)
                loss = call_objective(self.objective, images, generator)
                total = loss
                if self.reg is not None and self.reg_weight > 0:
                    ref = z - z_seed if self.reg == "seed" else z
                    total = loss + float(self.reg_weight) * ref.pow(2).flatten(1).mean(1)
                optimizer.zero_grad()
                # Summed, not averaged: per-image gradients do not depend on the batch size.
                total.sum().backward()
                optimizer.step()
                with torch.no_grad():
                    # The official EMA copies the tokens at the first step, then decays.
                    decay = float(self.ema_decay) if i > 0 else 0.0
                    ema.sub_((1.0 - decay) * (ema - z.detach()))
                curve.append(float(loss.detach().mean()))
                if callback is not None and callback(
                    {"step": i, "tokens": ema.clone(), "images": images.detach(),
                     "loss": loss.detach()}
                ):
                    break
            with torch.no_grad():
                out, codes = self._decode(tok, ema)
                if self.clip is not None:
                    out = out.clamp(float(self.clip[0]), float(self.clip[1]))
                final = call_objective(self.objective, out, generator)
        self.tokens_ = ema.cpu().double().numpy()
        self.codes_ = None if codes is None else codes.cpu().numpy().astype(np.int64)
        self.loss_curve_ = np.asarray(curve)
        self.final_loss_ = final.cpu().double().numpy()
        self.n_iter_ = len(curve)
        return images_to_flat(out).cpu().double().numpy()
