"""Plug-and-play objectives for test-time token optimisation.

An objective maps a batch of decoded images, a tensor of shape
``(n, C, H, W)``, to one loss per image (shape ``(n,)``), as in the code of
Lao Beyer et al. [1]_ (``ObjectiveT``). Models inside objectives (guide
classifiers, image encoders) receive images as rows of ``(H, W, C)``-ordered
pixels, the layout of ``X`` elsewhere in skpaper, unless ``input="image"``.

References
----------
.. [1] L. Lao Beyer, T. Li, X. Chen, S. Karaman and K. He, "Highly Compressed
   Tokenizer Can Generate Without Training", ICML 2025.
"""

import numpy as np
import torch
from torch.nn import functional as F

from ..utils._docstring import Substitution
from ._tokenizer_modules import flat_to_images, images_to_flat

#: Parameters and Returns of every ``loss`` method of the objectives.
_LOSS_DOCS = {"loss_sections": """
    Parameters
    ----------
    images : torch.Tensor of shape (n_samples, C, H, W)
        Decoded images, differentiable with respect to the tokens being optimised.
    generator : torch.Generator or None, default=None
        Source of the random augmentations of the optimiser, if any.

    Returns
    -------
    losses : torch.Tensor of shape (n_samples,)
        One loss per image, lower is better.
"""}

__all__ = [
    "ClassifierGuidance",
    "EmbeddingGuidance",
    "MaskedReconstruction",
    "TokenObjective",
    "WeightedSum",
    "random_crops",
]

_INPUTS = ("flat", "image")


def _check_input(value):
    if value not in _INPUTS:
        raise ValueError(f"input must be one of {_INPUTS}, got {value!r}.")
    return value


def _as_model(model, name):
    """A torch callable from a module, a callable, or a fitted estimator with ``module_``."""
    if hasattr(model, "module_"):
        return model.module_
    if not callable(model):
        raise TypeError(
            f"{name} must be a torch module, a callable on tensors, or a fitted estimator "
            f"with a module_ attribute; got {type(model).__name__}."
        )
    return model


def _run_model(model, inputs):
    """Call ``model`` on its own device and dtype; return the output on those of ``inputs``."""
    params = getattr(model, "parameters", None)
    if callable(params):
        for p in params():
            return model(inputs.to(device=p.device, dtype=p.dtype)).to(inputs)
    return model(inputs)


def _model_input(images, layout):
    return images_to_flat(images) if layout == "flat" else images


def random_crops(images, n_augmentations, crop_fraction, flip, generator):
    """Random crops resized back to the image size, optionally flipped.

    Returns a tensor of shape ``(n_augmentations, n, C, H, W)``; one crop and
    one flip are drawn per augmentation for the whole batch, as in the
    official ``AugmentationHelper``. ``n_augmentations=0`` returns the images
    unchanged with a leading axis of length 1.
    """
    if n_augmentations == 0:
        return images.unsqueeze(0)
    _, _, h, w = images.shape
    ch, cw = max(1, round(h * crop_fraction)), max(1, round(w * crop_fraction))
    out = []
    for _ in range(n_augmentations):
        top = int(torch.randint(h - ch + 1, (1,), generator=generator))
        left = int(torch.randint(w - cw + 1, (1,), generator=generator))
        crop = images[..., top : top + ch, left : left + cw]
        if (ch, cw) != (h, w):
            crop = F.interpolate(crop, size=(h, w), mode="bilinear", align_corners=False)
        if flip and float(torch.rand((1,), generator=generator)) < 0.5:
            crop = crop.flip(-1)
        out.append(crop)
    return torch.stack(out)


class TokenObjective:
    """Base class of objectives: ``objective(images, generator=None) -> losses``.

    Subclasses implement :meth:`loss`. ``generator`` is the
    :class:`torch.Generator` of the optimiser (for random augmentations).
    Any plain callable ``images -> losses`` works as an objective too.

    Examples
    --------
    >>> import torch
    >>> from skpaper.vision import TokenObjective
    >>> class Brightness(TokenObjective):
    ...     def loss(self, images, generator=None):
    ...         return -images.flatten(1).mean(1)
    >>> Brightness()(torch.ones(3, 1, 2, 2))
    tensor([-1., -1., -1.])
    """

    def __call__(self, images, generator=None):
        losses = self.loss(images, generator)
        if losses.shape != (images.shape[0],):
            raise ValueError(
                f"{type(self).__name__} must return one loss per image, shape "
                f"({images.shape[0]},); got {tuple(losses.shape)}."
            )
        return losses

    @Substitution(**_LOSS_DOCS)
    def loss(self, images, generator=None):
        """Return the loss of each image; subclasses implement it.

        {loss_sections}
        """
        raise NotImplementedError

    def __repr__(self):
        fields = ", ".join(
            f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_")
            and np.isscalar(v)
        )
        return f"{type(self).__name__}({fields})"


class MaskedReconstruction(TokenObjective):
    """Squared error on the known pixels: the inpainting objective.

    Parameters
    ----------
    target : array-like of shape (n_samples, H * W * C) or (n_samples, C, H, W)
        The images whose known part is to be matched.
    mask : array-like of bool, default=None
        ``True`` where a pixel is known; shape ``(H * W * C,)`` or
        ``(n_samples, H * W * C)`` for row layout, or broadcastable to
        ``(n_samples, C, H, W)``. ``None`` uses every pixel.

    Notes
    -----
    The loss of image ``i`` is ``sum_j m_ij (x_ij - t_ij)^2 / sum_j m_ij``.
    The official code leaves the inpainting loss to a notebook that is not
    public; the mean over known pixels is reconstructed.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from skpaper.vision import MaskedReconstruction
    >>> target = np.ones((2, 4))
    >>> mask = np.array([True, True, False, False])
    >>> MaskedReconstruction(target, mask)(torch.zeros(2, 1, 2, 2))
    tensor([1., 1.])
    """

    def __init__(self, target, mask=None):
        self.target = target
        self.mask = mask
        self._cache = {}

    def _tensors(self, images):
        key = (images.shape, images.dtype, str(images.device))
        if key not in self._cache:
            n, c, h, w = images.shape
            target = torch.as_tensor(np.asarray(self.target, dtype=np.float64))
            if target.ndim == 2:
                if target.shape != (n, h * w * c):
                    raise ValueError(
                        f"target has shape {tuple(target.shape)}, expected ({n}, {h * w * c}) "
                        "to match the images being optimised."
                    )
                target = flat_to_images(target, (h, w, c))
            elif tuple(target.shape) != (n, c, h, w):
                raise ValueError(
                    f"target has shape {tuple(target.shape)}, expected ({n}, {h * w * c}) or "
                    f"{(n, c, h, w)}."
                )
            if self.mask is None:
                mask = torch.ones_like(target)
            else:
                mask = torch.as_tensor(np.asarray(self.mask, dtype=np.float64))
                if mask.ndim == 1:
                    mask = mask.reshape(1, -1).expand(n, -1)
                if mask.ndim == 2:
                    if mask.shape[1] != h * w * c:
                        raise ValueError(
                            f"mask has {mask.shape[1]} entries per image, expected {h * w * c}."
                        )
                    mask = flat_to_images(mask.expand(n, -1), (h, w, c))
                mask = torch.broadcast_to(mask, target.shape)
            if not torch.all(mask.reshape(n, -1).sum(1) > 0):
                raise ValueError("mask must keep at least one known pixel per image.")
            self._cache = {key: (target.to(images), mask.to(images))}
        return self._cache[key]

    @Substitution(**_LOSS_DOCS)
    def loss(self, images, generator=None):
        """Mean squared error of each image over its known pixels.

        {loss_sections}
        """
        target, mask = self._tensors(images)
        err = ((images - target) ** 2 * mask).flatten(1).sum(1)
        return err / mask.flatten(1).sum(1)

    def __getstate__(self):
        return {**self.__dict__, "_cache": {}}


class ClassifierGuidance(TokenObjective):
    """Cross-entropy of a guide classifier towards a target class.

    Parameters
    ----------
    model : torch module, callable or fitted estimator
        Maps images to logits. A fitted skpaper torch classifier is used
        through its ``module_`` and its ``classes_`` translate ``target``.
    target : int or array-like of shape (n_samples,)
        Target class (a label of ``model.classes_`` when it has them, else a
        logit index).
    input : {"flat", "image"}, default="flat"
        Whether ``model`` takes rows of ``(H, W, C)`` pixels or ``(n, C, H, W)``.

    Notes
    -----
    A stand-in for the paper's CLIP objective when the guide is a classifier:
    the loss of image ``i`` is ``-log softmax(f(x_i))_{y_i}``.

    Examples
    --------
    >>> import torch
    >>> from skpaper.vision import ClassifierGuidance
    >>> guide = torch.nn.Linear(4, 3)
    >>> ClassifierGuidance(guide, target=2)(torch.zeros(5, 1, 2, 2)).shape
    torch.Size([5])
    """

    def __init__(self, model, target, input="flat"):
        self.model = model
        self.target = target
        self.input = input

    @Substitution(**_LOSS_DOCS)
    def loss(self, images, generator=None):
        """Cross-entropy of the guide's logits for each image towards its target class.

        {loss_sections}
        """
        model = _as_model(self.model, "model")
        layout = _check_input(self.input)
        target = np.asarray(self.target)
        classes = getattr(self.model, "classes_", None)
        if classes is not None:
            pos = np.searchsorted(classes, target)
            pos = np.clip(pos, 0, len(classes) - 1)
            if not np.all(np.asarray(classes)[pos] == target):
                raise ValueError(
                    f"target must be among the model's classes {list(classes)}; got "
                    f"{np.unique(target).tolist()}."
                )
            target = pos
        target = torch.as_tensor(np.broadcast_to(target, (images.shape[0],)).astype(np.int64),
                                 device=images.device)
        logits = _run_model(model, _model_input(images, layout))
        return F.cross_entropy(logits, target, reduction="none")


class EmbeddingGuidance(TokenObjective):
    """Negative cosine similarity between image and text embeddings (the CLIP objective).

    Parameters
    ----------
    image_encoder : torch module, callable or fitted estimator with ``module_``
        Maps images to embeddings of shape ``(n, e)``.
    text_embedding : array-like of shape (e,) or (n_samples, e)
        Embedding of the prompt (one for all images, or one per image).
    n_augmentations : int, default=8
        Random crops (and flips) averaged per step; ``0`` uses the image as is.
    negative : array-like of shape (e,) or (n_samples, e), default=None
        Embedding of a negative prompt.
    cfg : float, default=1.0
        Guidance scale: the loss adds ``-(1 - cfg) sim(negative)``, so
        ``cfg > 1`` pushes away from the negative prompt.
    crop_fraction : float, default=0.875
        Side of the random crop relative to the image (224 / 256 in the paper's
        code); crops are resized back to the image size.
    flip : bool, default=True
        Flip each augmentation horizontally with probability 1/2.
    input : {"flat", "image"}, default="flat"

    Notes
    -----
    With embeddings normalised to unit length and augmentations ``a_1..a_n``,
    the loss is ``-(1/n) sum_k cos(f(a_k(x)), t) - (1 - cfg) (1/n) sum_k
    cos(f(a_k(x)), t_neg)``, following ``CLIPObjective`` in the official code.
    As there, one crop and one flip are drawn per augmentation for the whole
    batch. The official default is no augmentation; 8 is used here because an
    image encoder without augmentation is easily fooled by adversarial pixels.

    Examples
    --------
    >>> import torch
    >>> from skpaper.vision import EmbeddingGuidance
    >>> encoder = torch.nn.Linear(16, 3)
    >>> obj = EmbeddingGuidance(encoder, text_embedding=[1.0, 0.0, 0.0], n_augmentations=2)
    >>> obj(torch.rand(4, 1, 4, 4), generator=torch.Generator().manual_seed(0)).shape
    torch.Size([4])
    """

    def __init__(self, image_encoder, text_embedding, n_augmentations=8, negative=None, cfg=1.0,
                 crop_fraction=0.875, flip=True, input="flat"):
        self.image_encoder = image_encoder
        self.text_embedding = text_embedding
        self.n_augmentations = n_augmentations
        self.negative = negative
        self.cfg = cfg
        self.crop_fraction = crop_fraction
        self.flip = flip
        self.input = input

    def _check(self):
        if int(self.n_augmentations) < 0:
            raise ValueError(f"n_augmentations must be >= 0, got {self.n_augmentations!r}.")
        if not 0.0 < float(self.crop_fraction) <= 1.0:
            raise ValueError(f"crop_fraction must be in (0, 1], got {self.crop_fraction!r}.")

    def _augment(self, images, generator):
        return random_crops(images, int(self.n_augmentations), float(self.crop_fraction),
                            bool(self.flip), generator)

    def _similarity(self, feats, embedding, n, like):
        emb = torch.as_tensor(np.asarray(embedding, dtype=np.float64)).to(like)
        if emb.ndim == 1:
            emb = emb.unsqueeze(0).expand(n, -1)
        if emb.shape != (n, feats.shape[-1]):
            raise ValueError(
                f"embeddings must have shape ({feats.shape[-1]},) or ({n}, {feats.shape[-1]}); "
                f"got {tuple(emb.shape)}."
            )
        return (feats * F.normalize(emb, dim=-1)).sum(-1).mean(0)

    @Substitution(**_LOSS_DOCS)
    def loss(self, images, generator=None):
        """Negative mean cosine similarity of the augmented images to the text embedding.

        With ``negative``, ``(1 - cfg)`` times the similarity to it is subtracted.

        {loss_sections}
        """
        self._check()
        encoder = _as_model(self.image_encoder, "image_encoder")
        layout = _check_input(self.input)
        if generator is None:
            generator = torch.Generator().manual_seed(0)
        augs = self._augment(images, generator)
        n_aug, n = augs.shape[:2]
        flat = augs.reshape(n_aug * n, *images.shape[1:])
        feats = _run_model(encoder, _model_input(flat, layout))
        feats = F.normalize(feats, dim=-1).reshape(n_aug, n, -1)
        loss = -self._similarity(feats, self.text_embedding, n, feats)
        if self.negative is not None:
            negative = self._similarity(feats, self.negative, n, feats)
            loss = loss - (1.0 - float(self.cfg)) * negative
        return loss


class WeightedSum(TokenObjective):
    """Weighted sum of objectives (``MultiObjective`` in the official code).

    Parameters
    ----------
    objectives : list of objectives
        :class:`TokenObjective` instances or callables ``images -> losses``.
    weights : list of float, default=None
        One weight per objective; ``None`` weighs all by 1.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from skpaper.vision import MaskedReconstruction, WeightedSum
    >>> a = MaskedReconstruction(np.ones((1, 4)))
    >>> WeightedSum([a, a], [0.5, 2.0])(torch.zeros(1, 1, 2, 2))
    tensor([2.5000])
    """

    def __init__(self, objectives, weights=None):
        self.objectives = objectives
        self.weights = weights

    @Substitution(**_LOSS_DOCS)
    def loss(self, images, generator=None):
        """Weighted sum of the losses of the objectives.

        {loss_sections}
        """
        objectives = list(self.objectives)
        if not objectives:
            raise ValueError("objectives must hold at least one objective, got none.")
        weights = [1.0] * len(objectives) if self.weights is None else list(self.weights)
        if len(weights) != len(objectives):
            raise ValueError(
                f"weights has {len(weights)} entries but there are {len(objectives)} objectives."
            )
        total = torch.zeros(images.shape[0], dtype=images.dtype, device=images.device)
        for weight, objective in zip(weights, objectives):
            total = total + float(weight) * call_objective(objective, images, generator)
        return total


def call_objective(objective, images, generator):
    """Evaluate ``objective`` on ``images`` (passing ``generator`` to skpaper objectives)."""
    if isinstance(objective, TokenObjective):
        return objective(images, generator=generator)
    losses = objective(images)
    if not isinstance(losses, torch.Tensor) or losses.shape != (images.shape[0],):
        raise ValueError(
            "objective must return a tensor with one loss per image, shape "
            f"({images.shape[0]},); got {getattr(losses, 'shape', type(losses).__name__)}."
        )
    return losses
