"""TiTok-style 1D image tokenizer as a scikit-learn transformer."""

import math
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted
from torch.nn import functional as F

from ..nn._base import BaseTorchEstimator
from ..utils._docstring import Substitution, torch_parameter_docs
from ..utils._sklearn import Interval, StrOptions, _fit_context, validate_data
from ._tokenizer_modules import Tokenizer1DNetwork, flat_to_images, images_to_flat

__all__ = ["VQTokenizer1D"]


def _resolve_image_shape(image_size, n_channels, n_features):
    """``(H, W, C)`` for rows of ``n_features`` pixels, or raise a ValueError."""
    if n_features % n_channels:
        raise ValueError(
            f"X has {n_features} features, which is not a multiple of n_channels={n_channels}."
        )
    n_pixels = n_features // n_channels
    if image_size is None:
        side = math.isqrt(n_pixels)
        # Non-square rows are read as a one-pixel-high strip.
        height, width = (side, side) if side * side == n_pixels else (1, n_pixels)
    elif isinstance(image_size, Integral):
        height = width = int(image_size)
    else:
        height, width = (int(s) for s in image_size)
    if height * width != n_pixels:
        raise ValueError(
            f"image_size={image_size!r} with n_channels={n_channels} needs "
            f"{height * width * n_channels} features, but X has {n_features}."
        )
    return height, width, int(n_channels)


@Substitution(**torch_parameter_docs())
class VQTokenizer1D(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseTorchEstimator):
    """TiTok-style 1D image tokenizer: an image becomes a short sequence of code ids.

    A ViT encoder reads the image patches together with ``n_tokens`` learnable
    latent tokens; the latent outputs are projected to ``token_dim`` and
    vector-quantized against ``codebook_size`` codes; a ViT decoder whose
    inputs are one mask token per patch plus the quantized tokens reconstructs
    the image. This is the tokenizer family that Lao Beyer et al. [1]_ use for
    token-copy editing and training-free generation by test-time optimisation
    (:class:`TokenTestTimeOptimizer`).

    Images are rows of ``X`` holding ``H * W * C`` pixel values in ``(H, W, C)``
    order (``load_digits().data`` is one example); pixel values in ``[0, 1]``
    match the clamping of :class:`TokenTestTimeOptimizer`.

    Parameters
    ----------
    n_tokens : int, default=32
        Length ``T`` of the 1D latent sequence (TiTok-L-32 uses 32).
    token_dim : int, default=12
        Dimension ``d`` of each token and code (12 in TiTok).
    codebook_size : int, default=4096
        Number of codes ``K`` (4096 in TiTok).
    image_size : int, pair of int or None, default=None
        ``H = W`` or ``(H, W)``. ``None`` infers a square image from the
        number of features, or a one-pixel-high strip when that is not a square.
    n_channels : int, default=1
        Colour channels ``C`` of each pixel.
    patch_size : int, default=2
        Side of the ViT patches (16 in TiTok at 256x256); images are zero-padded
        to a multiple of it.
    encoder : {"vit", "mlp"}, default="vit"
        ``"vit"`` builds the ViT encoder and mask-token decoder; ``"mlp"`` an
        MLP encoder and decoder of the same width and depth (a fast CPU stand-in).
    width : int, default=64
        Width of the transformer (or of the MLP hidden layers).
    depth : int, default=2
        Transformer blocks (or hidden layers) in the encoder and in the decoder.
    n_heads : int, default=4
        Attention heads; must divide ``width``.
    cosine : bool, default=True
        Quantize by cosine similarity on l2-normalised tokens and codes.
    commitment_cost : float, default=0.25
        Weight ``beta`` of the commitment loss.
    warmup_steps : int, default=300
        Optimizer steps trained as a plain autoencoder (no quantization) before
        the codebook is initialised from encoder outputs.
    dead_code_reset_every : int or None, default=250
        Every this many steps, codes not chosen since the last reset are
        re-initialised from encoder outputs of the current batch. ``None``
        disables resets.
    {torch_parameters}

    Attributes
    ----------
    module_ : Tokenizer1DNetwork
        Encoder, quantizer and decoder.
    image_shape_ : tuple of int
        ``(H, W, C)``.
    code_counts_ : ndarray of shape (codebook_size,)
        How often each code is chosen when the training images are encoded.
    codebook_usage_ : float
        Fraction of codes chosen at least once on the training images.
    history_ : list of dict
        Per epoch: ``train_loss``, ``reconstruction_mse``, ``codebook_usage``
        (fraction of codes chosen during the epoch) and ``codes_reset``.
    n_iter_ : int
        Epochs run.
    n_steps_ : int
        Optimizer steps run.
    device_ : str
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    See Also
    --------
    TokenTestTimeOptimizer : Generation by optimising the tokens of this tokenizer.
    swap_tokens : Token-copy editing.

    Notes
    -----
    With encoder ``E``, quantizer ``Q`` and decoder ``D``, an image ``x``
    becomes ``z = E(x)`` of shape ``(T, d)``; ``Q`` maps each token to its
    nearest code (by cosine similarity when ``cosine``) and the straight-through
    estimator ``z + sg(q - z)`` carries gradients through the lookup. Training
    minimises ``||D(Q(z)) - x||^2 + ||sg(z) - q||^2 + beta ||z - sg(q)||^2``.

    TiTok [2]_ trains in two stages with proxy codes, perceptual and
    adversarial losses; here the loss is the pixel MSE above. The warm-up
    without quantization, the codebook initialisation from encoder outputs and
    the periodic reset of dead codes are reconstructed (not in TiTok's code):
    without them small tokenizers collapsed onto a few codes. ``transform``
    returns the code ids, ``inverse_transform`` decodes code ids, and
    ``encode_continuous`` gives the pre-quantization tokens ``z`` that
    test-time optimisation starts from.

    A tokenizer trained elsewhere (for instance a TiTok checkpoint) is used by
    :class:`TokenTestTimeOptimizer` through the methods ``encode_tensor``,
    ``quantize_tensor``, ``embed_codes`` and ``decode_tensor`` and the
    attributes ``module_`` and ``image_shape_``: any object providing them
    can stand in for this class.

    References
    ----------
    .. [1] L. Lao Beyer, T. Li, X. Chen, S. Karaman and K. He, "Highly
       Compressed Tokenizer Can Generate Without Training", ICML 2025,
       PMLR 267:4096-4114.
    .. [2] Q. Yu et al., "An Image is Worth 32 Tokens for Reconstruction and
       Generation", NeurIPS 2024.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skpaper.vision import VQTokenizer1D
    >>> X = load_digits().data[:200] / 16.0
    >>> tok = VQTokenizer1D(n_tokens=4, token_dim=8, codebook_size=32, encoder="mlp",
    ...                     width=64, warmup_steps=20, dead_code_reset_every=20,
    ...                     max_epochs=20, random_state=0, device="cpu").fit(X)
    >>> codes = tok.transform(X[:3])
    >>> codes.shape
    (3, 4)
    >>> tok.inverse_transform(codes).shape
    (3, 64)
    """

    _parameter_constraints = {
        **BaseTorchEstimator._parameter_constraints,
        "n_tokens": [Interval(Integral, 1, 4096, closed="both")],
        "token_dim": [Interval(Integral, 1, 4096, closed="both")],
        "codebook_size": [Interval(Integral, 1, 2**16, closed="both")],
        "image_size": [Interval(Integral, 1, 4096, closed="both"), tuple, list, None],
        "n_channels": [Interval(Integral, 1, 4096, closed="both")],
        "patch_size": [Interval(Integral, 1, 4096, closed="both")],
        "encoder": [StrOptions({"vit", "mlp"})],
        "width": [Interval(Integral, 1, 4096, closed="both")],
        "depth": [Interval(Integral, 0, 256, closed="both")],
        "n_heads": [Interval(Integral, 1, 4096, closed="both")],
        "cosine": ["boolean"],
        "commitment_cost": [Interval(Real, 0, None, closed="left")],
        "warmup_steps": [Interval(Integral, 0, None, closed="left")],
        "dead_code_reset_every": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        *,
        n_tokens=32,
        token_dim=12,
        codebook_size=4096,
        image_size=None,
        n_channels=1,
        patch_size=2,
        encoder="vit",
        width=64,
        depth=2,
        n_heads=4,
        cosine=True,
        commitment_cost=0.25,
        warmup_steps=300,
        dead_code_reset_every=250,
        max_epochs=100,
        batch_size=128,
        lr=1e-3,
        device="auto",
        random_state=None,
        verbose=0,
        callbacks=None,
        inference_dtype="float32",
    ):
        super().__init__(
            max_epochs=max_epochs, batch_size=batch_size, lr=lr, device=device,
            random_state=random_state, verbose=verbose, callbacks=callbacks,
            inference_dtype=inference_dtype,
        )
        self.n_tokens = n_tokens
        self.token_dim = token_dim
        self.codebook_size = codebook_size
        self.image_size = image_size
        self.n_channels = n_channels
        self.patch_size = patch_size
        self.encoder = encoder
        self.width = width
        self.depth = depth
        self.n_heads = n_heads
        self.cosine = cosine
        self.commitment_cost = commitment_cost
        self.warmup_steps = warmup_steps
        self.dead_code_reset_every = dead_code_reset_every

    # ----------------------------------------------------------------- fitting
    def _build_module(self):
        return Tokenizer1DNetwork(
            self.image_shape_, int(self.n_tokens), int(self.token_dim), int(self.codebook_size),
            self.encoder, int(self.patch_size), int(self.width), int(self.depth),
            int(self.n_heads), bool(self.cosine), float(self.commitment_cost),
        )

    def _build_optimizer(self, module):
        # The multi-tensor Adam step is markedly cheaper for these small networks on CPU.
        return torch.optim.Adam(module.parameters(), lr=self.lr, foreach=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Train the tokenizer on images.

        Parameters
        ----------
        X : array-like of shape (n_samples, H * W * C)
            Images as rows of ``(H, W, C)``-ordered pixels.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X = validate_data(self, X, dtype=np.float64)
        self.image_shape_ = _resolve_image_shape(self.image_size, int(self.n_channels),
                                                 X.shape[1])
        if self.encoder == "vit" and int(self.width) % int(self.n_heads):
            raise ValueError(
                f"n_heads must divide width for encoder='vit'; got width={self.width} and "
                f"n_heads={self.n_heads}."
            )
        self._init_torch_state()
        self._step = 0
        self._codebook_ready = False
        images = flat_to_images(self._to_tensor(X), self.image_shape_)
        try:
            self._fit_loop((images,))
            if not self._codebook_ready:
                # Training ended inside the warm-up: start the codebook from the encoder anyway
                # (the module is in inference_dtype by now).
                images = images.to(self._module_dtype())
                self.module_.quantizer.init_from(self._encoder_outputs(images), self._generator)
        finally:
            for name in ("_step", "_codebook_ready", "_window_counts", "_epoch_counts",
                         "_epoch_resets", "_epoch_steps"):
                self.__dict__.pop(name, None)
        for p in self.module_.parameters():
            p.grad = None
        self.n_steps_ = sum(r["steps"] for r in self.history_)
        codes = self._codes(X)
        self.code_counts_ = np.bincount(codes.ravel(), minlength=int(self.codebook_size))
        self.codebook_usage_ = float(np.mean(self.code_counts_ > 0))
        return self

    @torch.no_grad()
    def _encoder_outputs(self, images, max_rows=8192):
        """Prepared (normalised) encoder outputs of a random subset, shape ``(N, d)``."""
        idx = torch.randperm(images.shape[0], generator=self._generator)
        idx = idx[: max(1, max_rows // int(self.n_tokens))].to(images.device)
        z = self.module_.quantizer.prepare(self.module_.encode(images[idx]))
        return z.reshape(-1, z.shape[-1])

    def _train_batches(self, tensors, shuffle=True):
        (images,) = tensors
        quantizer = self.module_.quantizer
        if shuffle:
            # Per-epoch tallies: codes chosen, codes reset, optimizer steps.
            self._epoch_counts = torch.zeros(quantizer.codebook_size, dtype=torch.long)
            self._epoch_resets = self._epoch_steps = 0
        for batch in super()._train_batches(tensors, shuffle=shuffle):
            if (shuffle and not self._codebook_ready
                    and self._step >= int(self.warmup_steps)):
                # The warm-up is over: start the codebook from encoder outputs.
                quantizer.init_from(self._encoder_outputs(images), self._generator)
                self._window_counts = torch.zeros(quantizer.codebook_size, dtype=torch.long)
                self._codebook_ready = True
            yield batch

    def _get_loss(self, batch):
        (images,) = batch
        net = self.module_
        quantizer = net.quantizer
        z = net.encode(images)
        if self._codebook_ready:
            z_q, indices, vq_loss = quantizer(z)
            used = torch.bincount(indices.reshape(-1).cpu(), minlength=quantizer.codebook_size)
        else:
            z_q, vq_loss, used = quantizer.prepare(z), torch.zeros((), device=z.device), None
        mse = F.mse_loss(net.decode(z_q), images)
        return {"loss": mse + vq_loss, "reconstruction_mse": mse, "_z": z, "_used": used}

    def _train_step(self, batch, optimizer):
        step = super()._train_step(batch, optimizer)
        self._step += 1
        self._epoch_steps += 1
        used = step["_used"]
        if used is None:
            return step
        self._window_counts += used
        self._epoch_counts += used
        reset_every = self.dead_code_reset_every
        if reset_every is not None and self._step % int(reset_every) == 0:
            quantizer = self.module_.quantizer
            z = step["_z"]
            dead = (self._window_counts == 0).to(quantizer.embedding.device)
            vectors = quantizer.prepare(z.detach()).reshape(-1, z.shape[-1])
            self._epoch_resets += quantizer.reset_codes(dead, vectors, self._generator)
            self._clear_optimizer_rows(optimizer, quantizer.embedding, dead)
            self._window_counts.zero_()
        return step

    def _end_epoch(self, tensors, optimizer):
        counts = self._epoch_counts
        return {
            "codebook_usage": float((counts > 0).float().mean()),
            "codes_reset": self._epoch_resets,
            "steps": self._epoch_steps,
        }

    @staticmethod
    def _clear_optimizer_rows(optimizer, param, rows):
        # Adam moments of a re-initialised code would drag it back towards its dead state.
        state = optimizer.state.get(param, {})
        for key in ("exp_avg", "exp_avg_sq"):
            if key in state:
                state[key][rows] = 0.0

    # -------------------------------------------------------------- inference
    def _check_images(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X

    def _module_dtype(self):
        return next(self.module_.parameters()).dtype

    def _batches(self, n):
        size = max(int(self.batch_size), 1024)
        return [slice(start, start + size) for start in range(0, n, size)]

    @torch.no_grad()
    def _map_images(self, X, fn):
        """``fn`` applied to the images of ``X`` in batches, concatenated on the CPU."""
        return torch.cat([fn(self._images_tensor(X[sl])).cpu()
                          for sl in self._batches(X.shape[0])])

    def encode_continuous(self, X):
        """Encode images into their pre-quantization tokens ``z = E(x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, H * W * C)
            Input data.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_tokens, token_dim)
            Encoder outputs projected to ``token_dim``, before quantization.
        """
        return self._map_images(self._check_images(X), self.encode_tensor).double().numpy()

    def transform(self, X):
        """Encode images into the code ids of their quantized tokens.

        Parameters
        ----------
        X : array-like of shape (n_samples, H * W * C)
            Input data.

        Returns
        -------
        codes : ndarray of shape (n_samples, n_tokens), dtype int64
            Index of the code nearest to each token.
        """
        return self._codes(self._check_images(X))

    def _codes(self, X):
        # Code ids of validated rows, as a numpy array whatever the set_output configuration.
        lookup = self.module_.quantizer.lookup
        return self._map_images(X, lambda im: lookup(self.encode_tensor(im))).numpy().astype(
            np.int64)

    def inverse_transform(self, X):
        """Decode code ids (or continuous tokens) into images.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_tokens) of int, or \
                (n_samples, n_tokens, token_dim) of float
            Code ids, or token vectors that are decoded without quantization.

        Returns
        -------
        images : ndarray of shape (n_samples, H * W * C)
            Decoded images as rows of ``(H, W, C)``-ordered pixels.
        """
        check_is_fitted(self)
        tokens = self._tokens_tensor(X, "X")
        out = []
        with torch.no_grad():
            for sl in self._batches(tokens.shape[0]):
                out.append(images_to_flat(self.decode_tensor(tokens[sl])).cpu())
        return torch.cat(out).double().numpy()

    def score(self, X, y=None):
        """Negative mean squared reconstruction error through the codes.

        Parameters
        ----------
        X : array-like of shape (n_samples, H * W * C)
            Test samples.
        y : None
            Ignored.

        Returns
        -------
        score : float
            ``-mean((inverse_transform(transform(X)) - X) ** 2)``; higher is better.
        """
        X = self._check_images(X)
        return -float(np.mean((self.inverse_transform(self._codes(X)) - X) ** 2))

    # ------------------------------------------------- torch-level interface
    def _images_tensor(self, X):
        return flat_to_images(self._to_tensor(X, dtype=self._module_dtype()), self.image_shape_)

    def _tokens_tensor(self, tokens, name):
        """Code ids ``(n, T)`` -> code vectors; float tokens ``(n, T, d)`` pass through."""
        arr = np.asarray(tokens)
        n_tokens, dim = int(self.n_tokens), int(self.token_dim)
        if arr.ndim == 2 and arr.dtype.kind in "iub":
            if arr.shape[1] != n_tokens:
                raise ValueError(
                    f"{name} holds {arr.shape[1]} code ids per row, but {type(self).__name__} "
                    f"uses n_tokens={n_tokens}."
                )
            if arr.size and (arr.min() < 0 or arr.max() >= int(self.codebook_size)):
                raise ValueError(
                    f"{name} has code ids outside [0, {int(self.codebook_size) - 1}]; got "
                    f"range [{arr.min()}, {arr.max()}]."
                )
            return self.embed_codes(torch.as_tensor(arr.astype(np.int64), device=self.device_))
        if arr.ndim == 3 and arr.dtype.kind == "f":
            if arr.shape[1:] != (n_tokens, dim):
                raise ValueError(
                    f"{name} has tokens of shape {arr.shape[1:]}, expected ({n_tokens}, {dim})."
                )
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} contains NaN or infinity.")
            return self._to_tensor(arr, dtype=self._module_dtype())
        raise ValueError(
            f"{name} must be integer code ids of shape (n_samples, {n_tokens}) or float tokens "
            f"of shape (n_samples, {n_tokens}, {dim}); got an array of dtype {arr.dtype} and "
            f"shape {arr.shape}."
        )

    def encode_tensor(self, images):
        """Apply the encoder ``E(x)`` to a tensor of images, differentiably.

        Parameters
        ----------
        images : torch.Tensor of shape (n, C, H, W)
            Images on ``device_``.

        Returns
        -------
        tokens : torch.Tensor of shape (n, n_tokens, token_dim)
            Pre-quantization tokens.
        """
        return self.module_.encode(images)

    def quantize_tensor(self, tokens):
        """Quantize tokens ``Q(z)`` with the straight-through gradient.

        Parameters
        ----------
        tokens : torch.Tensor of shape (n, n_tokens, token_dim)
            Pre-quantization tokens.

        Returns
        -------
        z_q : torch.Tensor of shape (n, n_tokens, token_dim)
            Quantized tokens, whose gradient passes straight to ``tokens``.
        code_ids : torch.Tensor of shape (n, n_tokens)
            Index of the chosen code of each token.
        """
        z_q, indices, _ = self.module_.quantizer(tokens)
        return z_q, indices

    def embed_codes(self, codes):
        """Look up the code vectors of code ids, as the decoder sees them.

        Parameters
        ----------
        codes : torch.Tensor of int
            Code ids, in ``[0, codebook_size)``.

        Returns
        -------
        vectors : torch.Tensor
            The code vectors, of shape ``codes.shape + (token_dim,)``.
        """
        return self.module_.quantizer.embed(codes)

    def decode_tensor(self, tokens):
        """Apply the decoder ``D(z)`` to tokens, differentiably.

        Parameters
        ----------
        tokens : torch.Tensor of shape (n, n_tokens, token_dim)
            Quantized (or continuous) tokens on ``device_``.

        Returns
        -------
        images : torch.Tensor of shape (n, C, H, W)
            Reconstructed images.
        """
        return self.module_.decode(tokens)

    @property
    def _n_features_out(self):
        return int(self.n_tokens)

    def get_feature_names_out(self, input_features=None):
        """Get output feature names: ``vqtokenizer1d0``, ... one per token position.

        Parameters
        ----------
        input_features : None
            Ignored.

        Returns
        -------
        names : ndarray of str of shape (n_tokens,)
            The class name in lower case followed by the token position.
        """
        check_is_fitted(self)
        return super().get_feature_names_out(input_features)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []
        return tags
