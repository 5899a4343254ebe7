"""Sparse autoencoders (ReLU + L1, TopK, JumpReLU) as scikit-learn transformers.

The dictionaries behind the SAE probes of Kantamneni, Engels et al. (ICML 2025): an
encoder ``z = W_e (x - b_d) + b_e``, a sparse activation ``a = sigma(z)`` and a linear
decoder ``x_hat = W_d a + b_d`` whose columns (the latent directions) have unit norm.
"""

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted
from torch import nn

from ..nn._base import BaseTorchEstimator
from ..utils._sklearn import Interval, StrOptions, _fit_context, validate_data
from ._docs import Substitution, torch_parameter_docs

__all__ = ["SparseAutoencoder"]

_ARCHS = ("relu", "topk", "jumprelu")


def _rectangle(u):
    """Kernel ``K(u) = 1[|u| < 1/2]`` of the JumpReLU pseudo-derivatives."""
    return (u.abs() < 0.5).to(u.dtype)


class _JumpReLU(torch.autograd.Function):
    """``z * H(z - theta)`` with the straight-through pseudo-derivative in ``theta``.

    Rajamanoharan et al. (2024), eq. 11: ``d/d theta = -(theta / eps) K((z - theta) / eps)``;
    the derivative in ``z`` is the exact ``H(z - theta)``.
    """

    @staticmethod
    def forward(ctx, z, theta, bandwidth):
        ctx.save_for_backward(z, theta)
        ctx.bandwidth = bandwidth
        return z * (z > theta).to(z.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        z, theta = ctx.saved_tensors
        eps = ctx.bandwidth
        grad_z = grad_out * (z > theta).to(z.dtype)
        grad_theta = -(theta / eps) * _rectangle((z - theta) / eps) * grad_out
        return grad_z, grad_theta.sum(dim=0), None


class _Step(torch.autograd.Function):
    """Heaviside ``H(z - theta)`` (the L0 count) with pseudo-derivative in ``theta`` only.

    Rajamanoharan et al. (2024), eq. 12: ``d/d theta = -(1 / eps) K((z - theta) / eps)``.
    """

    @staticmethod
    def forward(ctx, z, theta, bandwidth):
        ctx.save_for_backward(z, theta)
        ctx.bandwidth = bandwidth
        return (z > theta).to(z.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        z, theta = ctx.saved_tensors
        eps = ctx.bandwidth
        grad_theta = -(1.0 / eps) * _rectangle((z - theta) / eps) * grad_out
        return None, grad_theta.sum(dim=0), None


class SAEModule(nn.Module):
    """Encoder, sparse activation and unit-norm decoder of a sparse autoencoder.

    Parameters
    ----------
    n_features : int
        Input width ``d``.
    n_latents : int
        Dictionary size ``m``.
    arch : {"relu", "topk", "jumprelu"}
    k : int
        Active latents per input of the TopK architecture.
    bandwidth : float
        Width ``eps`` of the JumpReLU straight-through kernel.
    threshold_init : float
        Initial JumpReLU threshold ``theta``.
    """

    def __init__(self, n_features, n_latents, arch="topk", k=16, bandwidth=1e-2,
                 threshold_init=1e-2):
        super().__init__()
        self.arch = arch
        self.k = int(k)
        self.bandwidth = float(bandwidth)
        decoder = torch.randn(n_latents, n_features)
        decoder = decoder / decoder.norm(dim=1, keepdim=True)
        # Rows of W_dec are the latent directions; the encoder starts as their transpose.
        self.W_dec = nn.Parameter(decoder)
        self.W_enc = nn.Parameter(decoder.t().clone())
        self.b_enc = nn.Parameter(torch.zeros(n_latents))
        self.b_dec = nn.Parameter(torch.zeros(n_features))
        self.threshold = nn.Parameter(torch.full((n_latents,), float(threshold_init)))

    def preactivations(self, x):
        return (x - self.b_dec) @ self.W_enc + self.b_enc

    def activate(self, z):
        if self.arch == "relu":
            return torch.relu(z)
        if self.arch == "topk":
            k = min(self.k, z.shape[1])
            values, idx = torch.topk(z, k, dim=1)
            return torch.zeros_like(z).scatter_(1, idx, torch.relu(values))
        return _JumpReLU.apply(z, self.threshold, self.bandwidth)

    def encode(self, x):
        return self.activate(self.preactivations(x))

    def decode(self, a):
        return a @ self.W_dec + self.b_dec

    def forward(self, x):
        z = self.preactivations(x)
        a = self.activate(z)
        return self.decode(a), a, z

    @torch.no_grad()
    def normalize_decoder(self):
        self.W_dec.div_(self.W_dec.norm(dim=1, keepdim=True).clamp_min(1e-12))
        self.threshold.clamp_(min=0.0)

    @torch.no_grad()
    def remove_parallel_gradient(self):
        # Keeps Adam's step tangent to the unit sphere of each decoder row (Bricken et al.).
        if self.W_dec.grad is not None:
            parallel = (self.W_dec.grad * self.W_dec).sum(dim=1, keepdim=True)
            self.W_dec.grad.sub_(parallel * self.W_dec)


@Substitution(**torch_parameter_docs(max_epochs=20, batch_size=256))
class SparseAutoencoder(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseTorchEstimator):
    """Sparse autoencoder trained on activations (ReLU + L1, TopK or JumpReLU).

    ``transform`` returns the sparse latent code, ``inverse_transform`` the
    reconstruction, and ``score`` the negative fraction of variance unexplained.
    Inputs are centred and divided by one scalar so that the mean squared norm is 1
    before training (the convention of Gemma Scope [2]_); latents live on that scale.

    Parameters
    ----------
    arch : {"relu", "topk", "jumprelu"}, default="topk"
        ``"relu"``: ``a = relu(z)`` with an L1 penalty ``l1_coef * sum_i a_i``.
        ``"topk"``: keep the ``k`` largest pre-activations, then ReLU (Llama Scope /
        Gao et al.). ``"jumprelu"``: ``a = z * H(z - theta)`` with a learned per-latent
        threshold and an L0 penalty ``l1_coef * sum_i H(z_i - theta_i)`` trained with a
        straight-through estimator (Gemma Scope [2]_).
    n_latents : int, default=256
        Dictionary size ``m``.
    k : int, default=16
        Active latents per input for ``arch="topk"`` (must not exceed ``n_latents``).
    l1_coef : float, default=1e-2
        Sparsity coefficient ``lambda``: of the L1 norm for ``"relu"``, of the L0 count
        for ``"jumprelu"``; unused by ``"topk"``.
    bandwidth : float, default=1e-2
        Kernel width ``eps`` of the JumpReLU pseudo-derivative. Gemma Scope uses
        ``1e-3`` for inputs of dimension 2304 to 3584; the default is that value scaled
        by the typical pre-activation size (``~ d^{-1/2}``) at ``d ~ 64``.
    threshold_init : float, default=1e-2
        Initial JumpReLU threshold ``theta`` (same scaling argument as ``bandwidth``).
    resample_dead : bool, default=True
        After each epoch but the last, re-initialise latents that did not fire on any
        training input during it: encoder and decoder directions are set to the inputs
        with the largest reconstruction error (Bricken et al., 2023).
    {torch_parameters}

    Attributes
    ----------
    module_ : SAEModule
        The trained network (on scaled inputs).
    components_ : ndarray of shape (n_latents, n_features)
        Unit-norm decoder directions in input space (before the scalar rescaling).
    mean_ : ndarray of shape (n_features,)
        Centre subtracted before scaling.
    scale_ : float
        Scalar dividing centred inputs so that their mean squared norm is 1.
    threshold_ : ndarray of shape (n_latents,) or None
        Learned JumpReLU thresholds ``theta`` (``None`` for the other architectures).
    n_dead_latents_ : int
        Latents that fire on no training input at the end of training.
    history_ : list of dict
        Per epoch: ``train_loss``, ``fvu`` (fraction of variance unexplained), ``l0``
        (mean active latents per input) and ``n_resampled``.
    n_iter_ : int
    device_ : str
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    See Also
    --------
    SAEProbeClassifier : Sparse probe on the latents of a sparse autoencoder.
    sklearn.decomposition.MiniBatchDictionaryLearning : Sparse coding by optimisation.

    Notes
    -----
    With ``x`` scaled, ``z = W_e (x - b_d) + b_e``, ``x_hat = W_d a + b_d`` and decoder
    columns renormalised to unit norm after every Adam step (the gradient component
    along each column is removed first). The loss is ``||x - x_hat||^2`` plus the
    architecture's sparsity term. JumpReLU thresholds ``theta >= 0`` receive the
    pseudo-derivatives ``-(theta/eps) K((z - theta)/eps)`` (through the activation) and
    ``-(1/eps) K((z - theta)/eps)`` (through the L0 term) with the rectangle kernel
    ``K(u) = 1[|u| < 1/2]`` (eqs. 11-12 of Rajamanoharan et al., 2024). The SAEs of [1]_
    are the pretrained Gemma Scope (JumpReLU) and Llama Scope (TopK) dictionaries;
    training them here follows those recipes at toy scale.

    References
    ----------
    .. [1] S. Kantamneni, J. Engels, S. Rajamanoharan, M. Tegmark and N. Nanda, "Are
       Sparse Autoencoders Useful? A Case Study in Sparse Probing", ICML 2025.
    .. [2] T. Lieberum et al., "Gemma Scope: Open Sparse Autoencoders Everywhere All At
       Once on Gemma 2", 2024; S. Rajamanoharan et al., "Jumping Ahead: Improving
       Reconstruction Fidelity with JumpReLU Sparse Autoencoders", 2024.

    Examples
    --------
    >>> from skpaper.datasets import make_superposition_activations
    >>> from skpaper.representation import SparseAutoencoder
    >>> data = make_superposition_activations(n_samples=2000, random_state=0)
    >>> sae = SparseAutoencoder(arch="topk", n_latents=128, k=4, max_epochs=5, lr=3e-3,
    ...                         random_state=0).fit(data.X)
    >>> Z = sae.transform(data.X)
    >>> Z.shape, int((Z != 0).sum(axis=1).max())
    ((2000, 128), 4)
    >>> bool(-1.0 < sae.score(data.X) < 0.0)  # better than the mean, not perfect
    True
    """

    _parameter_constraints = {
        **BaseTorchEstimator._parameter_constraints,
        "arch": [StrOptions(set(_ARCHS))],
        "n_latents": [Interval(Integral, 1, 2**16, closed="both")],
        "k": [Interval(Integral, 1, 2**16, closed="both")],
        "l1_coef": [Interval(Real, 0, None, closed="left")],
        "bandwidth": [Interval(Real, 0, None, closed="neither")],
        "threshold_init": [Interval(Real, 0, None, closed="left")],
        "resample_dead": ["boolean"],
    }

    def __init__(
        self,
        *,
        arch="topk",
        n_latents=256,
        k=16,
        l1_coef=1e-2,
        bandwidth=1e-2,
        threshold_init=1e-2,
        resample_dead=True,
        max_epochs=20,
        batch_size=256,
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
        self.arch = arch
        self.n_latents = n_latents
        self.k = k
        self.l1_coef = l1_coef
        self.bandwidth = bandwidth
        self.threshold_init = threshold_init
        self.resample_dead = resample_dead

    def _build_module(self):
        return SAEModule(self.n_features_in_, self.n_latents, self.arch, self.k,
                         self.bandwidth, self.threshold_init)

    @property
    def _n_features_out(self):
        return self.n_latents

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Train the autoencoder on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Activations.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted autoencoder.
        """
        X = validate_data(self, X, dtype=np.float64)
        if self.arch == "topk" and self.k > self.n_latents:
            raise ValueError(
                f"k must be at most n_latents={self.n_latents} for arch='topk', "
                f"got k={self.k}."
            )
        if np.abs(X).max() > 1e150:
            raise ValueError(f"X holds values up to {np.abs(X).max():.3g}, whose squares "
                             "overflow float64 when normalising; rescale X.")
        self._init_torch_state()
        self.mean_ = X.mean(axis=0)
        centred = X - self.mean_
        sq_norm = float(np.mean(np.sum(centred**2, axis=1)))
        self.scale_ = float(np.sqrt(sq_norm)) if sq_norm > 0 else 1.0
        inputs = self._to_tensor(centred / self.scale_)
        self._fired = None  # latents active during the current epoch
        try:
            self._fit_loop((inputs,))
        finally:
            self.__dict__.pop("_fired", None)
        module = self.module_
        with torch.no_grad():
            self.components_ = module.W_dec.detach().cpu().numpy().astype(np.float64)
            self.threshold_ = (module.threshold.detach().cpu().numpy().astype(np.float64)
                               if self.arch == "jumprelu" else None)
        fired = (self._encode_scaled(centred / self.scale_) != 0).any(axis=0)
        self.n_dead_latents_ = int(self.n_latents - fired.sum())
        return self

    def _loss(self, x, x_hat, a, z):
        recon = ((x - x_hat) ** 2).sum(dim=1).mean()
        if self.arch == "relu":
            sparsity = a.sum(dim=1).mean()
        elif self.arch == "jumprelu":
            theta = self.module_.threshold
            sparsity = _Step.apply(z, theta, float(self.bandwidth)).sum(dim=1).mean()
        else:
            return recon, recon
        return recon + float(self.l1_coef) * sparsity, recon

    def _get_loss(self, batch):
        (x,) = batch
        x_hat, a, z = self.module_(x)
        loss, recon = self._loss(x, x_hat, a, z)
        active = a.detach() != 0
        # Inputs have unit mean squared norm, so the mean squared error is the FVU.
        return {"loss": loss, "fvu": recon, "l0": float(active.sum()) / len(x),
                "_active": active}

    def _process_gradients(self):
        self.module_.remove_parallel_gradient()

    def _train_step(self, batch, optimizer):
        step = super()._train_step(batch, optimizer)
        self.module_.normalize_decoder()
        if self._fired is None:
            self._fired = torch.zeros(self.n_latents, dtype=torch.bool,
                                      device=step["_active"].device)
        self._fired |= step["_active"].any(dim=0)
        return step

    def _end_epoch(self, tensors, optimizer):
        fired, self._fired = self._fired, None
        epoch = len(self.history_) + 1
        n_resampled = 0
        if (self.resample_dead and epoch < self.max_epochs and fired is not None
                and not bool(fired.all())):
            n_resampled = self._resample(tensors[0], ~fired, optimizer)
        return {"n_resampled": n_resampled}

    @torch.no_grad()
    def _resample(self, inputs, dead, optimizer):
        """Point dead latents at the worst-reconstructed inputs (Bricken et al., 2023)."""
        module = self.module_
        dead_idx = torch.nonzero(dead).flatten()
        n_probe = min(inputs.shape[0], 4096)
        probe = inputs[torch.randperm(inputs.shape[0], generator=self._generator)[:n_probe]
                       .to(inputs.device)]
        error = ((probe - module(probe)[0]) ** 2).sum(dim=1)
        order = torch.argsort(error, descending=True)
        chosen = probe[order[: len(dead_idx)]]
        if chosen.shape[0] < len(dead_idx):
            dead_idx = dead_idx[: chosen.shape[0]]
        direction = chosen - module.b_dec
        direction = direction / direction.norm(dim=1, keepdim=True).clamp_min(1e-12)
        alive_norm = module.W_enc[:, ~dead].norm(dim=0).mean() if bool((~dead).any()) else 1.0
        module.W_dec[dead_idx] = direction
        module.W_enc[:, dead_idx] = direction.t() * alive_norm
        module.b_enc[dead_idx] = 0.0
        module.threshold[dead_idx] = float(self.threshold_init)
        # Fresh Adam moments for the resampled rows and columns.
        for param, rows in ((module.W_dec, dead_idx), (module.b_enc, dead_idx),
                            (module.threshold, dead_idx)):
            for buf in optimizer.state.get(param, {}).values():
                if torch.is_tensor(buf) and buf.dim() > 0:
                    buf[rows] = 0.0
        for buf in optimizer.state.get(module.W_enc, {}).values():
            if torch.is_tensor(buf) and buf.dim() > 0:
                buf[:, dead_idx] = 0.0
        return int(len(dead_idx))

    def _scaled(self, X):
        return (X - self.mean_) / self.scale_

    @torch.no_grad()
    def _encode_scaled(self, Xs):
        module = self.module_
        dtype = next(module.parameters()).dtype
        out = []
        for start in range(0, Xs.shape[0], 4096):
            xb = self._to_tensor(Xs[start : start + 4096], dtype=dtype)
            out.append(module.encode(xb).cpu())
        return torch.cat(out).numpy().astype(np.float64)

    @torch.no_grad()
    def _preactivations(self, X):
        """Pre-activations ``z`` of ``X`` (before the sparse activation)."""
        module = self.module_
        dtype = next(module.parameters()).dtype
        xb = self._to_tensor(self._scaled(X), dtype=dtype)
        return module.preactivations(xb).cpu().numpy().astype(np.float64)

    def transform(self, X):
        """Encode ``X`` as its sparse latent code.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Activations.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_latents)
            Non-negative latent activations (at most ``k`` non-zero per row for TopK).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._encode_scaled(self._scaled(X))

    def inverse_transform(self, X):
        """Reconstruct activations from latent codes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_latents)
            Latent codes, e.g. from :meth:`transform`.

        Returns
        -------
        X_hat : ndarray of shape (n_samples, n_features)
            Decoded activations, in the units of the training data.
        """
        check_is_fitted(self)
        Z = np.asarray(X, dtype=np.float64)
        if Z.ndim != 2 or Z.shape[1] != self.n_latents:
            raise ValueError(
                f"X must have shape (n_samples, {self.n_latents}) (one column per latent), "
                f"got shape {Z.shape}."
            )
        module = self.module_
        with torch.no_grad():
            W = module.W_dec.detach().cpu().numpy().astype(np.float64)
            b = module.b_dec.detach().cpu().numpy().astype(np.float64)
        return (Z @ W + b) * self.scale_ + self.mean_

    def score(self, X, y=None):
        """Negative fraction of variance unexplained, ``-||X - X_hat||^2 / ||X - mean||^2``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Activations.
        y : None
            Ignored.

        Returns
        -------
        score : float
            ``0`` is a perfect reconstruction; ``-1`` is no better than the mean.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        X_hat = self.inverse_transform(self._encode_scaled(self._scaled(X)))
        total = float(np.sum((X - X.mean(axis=0)) ** 2))
        resid = float(np.sum((X - X_hat) ** 2))
        return -resid / total if total > 0 else -float(resid > 0)

    def get_feature_names_out(self, input_features=None):
        """Get output feature names: ``sparseautoencoder0``, ... one per latent.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Checked against the names seen in ``fit``; the output names do not
            depend on them.

        Returns
        -------
        feature_names_out : ndarray of str objects of shape (n_latents,)
            The class name in lower case followed by the latent index.
        """
        check_is_fitted(self)
        return super().get_feature_names_out(input_features)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
