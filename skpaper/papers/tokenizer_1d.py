"""Highly compressed 1D tokenizer (Lao Beyer et al., ICML 2025): generation without training.

The paper uses a pretrained TiTok-L-32 on ImageNet at 256x256 with CLIP as the
text objective. Neither pretrained weights nor CLIP are reachable offline, so
every claim trains its own small tokenizers on scikit-learn's 8x8 digits
(1,400 training and 397 test images), judges on the training pixels, and, for
text guidance, a toy image-text encoder pair trained contrastively on one-hot
class names. Every claim runs on several paired seeds: a seed draws the
train/test split, the tokenizers' weights, the judges and the optimisation
noise, the same for every arm, and the paper's direction is asserted with a
one-sided t bound over the seeds. Tokenizers are trained once per process,
scale and seed and shared between claims. ``smoke`` and ``quick`` use the MLP
tokenizer (a fast CPU stand-in); ``full`` uses the ViT tokenizer and the
paper's 600 optimisation steps and is sized for a GPU.

Realism is measured as in FID, offline: the Fréchet distance between the
hidden-layer features of an MLP judge (trained on the training images) of
generated images and of held-out test images that seeded nothing, with a
diversity term (mean pairwise feature distance relative to the held-out
images) so that collapse onto a few typical digits is not rewarded. The
paper's FID, IS and CLIP-score tables are not reproduced.
"""

import math

import numpy as np
from scipy import linalg

from ._comparison import ArmRun, EffectOfInterest, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import register_claim, register_paper, shared_cache
from ._stats import claim_seeds, paired_difference

SLUG = "tokenizer-1d"

register_paper(SLUG, "Highly Compressed Tokenizer Can Generate Without Training",
               module="skpaper.vision", quick_cost_s=1400)

_N_TEST = 397

_CONFIG = {
    # tokenizer: architecture, width, optimizer steps, warm-up and reset period;
    # tto: optimisation steps and images optimised per arm; looks: sequential paired seeds;
    # copy_encoder: the tokenizer of the token-copy claim (the paper's is a ViT: the MLP
    # stand-in's per-position scores are flat, its tokens carry no positions to speak of;
    # smoke keeps the MLP, a ViT there costs minutes on a CPU).
    "smoke": dict(encoder="mlp", width=48, steps=200, warmup=60, reset=50, tto_iter=25,
                  n_eval=60, inpaint_tokens=(4,), realism_tokens=(2, 8), swap_tokens=4,
                  clip_steps=80, n_random=3, looks=(2,), copy_encoder="mlp"),
    "quick": dict(encoder="mlp", width=128, steps=800, warmup=200, reset=200, tto_iter=150,
                  n_eval=80, inpaint_tokens=(4, 16), realism_tokens=(2, 16),
                  swap_tokens=8, clip_steps=500, n_random=5, looks=(3, 6),
                  inpaint_looks=(4, 8), copy_looks=(43, 129), copy_key=(2,), copy_encoder="vit",
                  copy=dict(width=64, depth=1, patch=2, steps=600, warmup=150, reset=150)),
    "full": dict(encoder="vit", width=128, steps=3000, warmup=400, reset=250, tto_iter=600,
                 n_eval=200, inpaint_tokens=(4, 16, 32), realism_tokens=(2, 4, 8, 16, 32),
                 swap_tokens=8, clip_steps=2000, n_random=20, looks=(5, 10),
                 copy_encoder="vit"),
}
# Ours, not the paper's: "judge accuracy does not drop" allows 5 points, "diversity does not
# drop" 0.1 of the held-out images' diversity.
_ACC_TOLERANCE = 0.05
_DIVERSITY_TOLERANCE = 0.1
_INPAINT_EOI = EffectOfInterest(
    -0.05, "ours", "TTO through the VQ lowers the hidden-half error by at least 5% relative to "
    "the better of the other two arms: the smallest gain an inpainting user would see")
_REALISM_EOI = EffectOfInterest(
    -0.1, "ours", "the most compressed tokenizer's generations have a Fréchet distance at "
    "least 10% below the least compressed one's, the smallest FID change reported as a gain")
_COPY_DESIGN_NOTE = (
    " Two designs: the first (looks 4, 8 from the calibration setting's power figure) ended "
    "undecided at seed 0, +0.140 [-0.012, +0.292] with SD 0.182 over 8 seeds (first_design, "
    "recorded, not rerun). This run is the second: looks 43 and 129 on seed stream key 2, "
    "which the first never drew; 129 is seeds_to_decide at the 90% upper limit of the first "
    "design's SD (0.286) and the last look's level 0.025, so the interval at 129 is narrower "
    "than the gap between 0 and the effect of interest. Over both designs each false verdict "
    "has probability at most 0.05 + 0.05.")
_COPY_EOI = EffectOfInterest(
    0.1, "ours", "the attribute position transfers the attribute, the digit kept, in ten "
    "points more of the edits than a random position: an edit a user would prefer")


#: The calibration setting of the quick looks (see :func:`calibrate_looks`): other seeds
#: (stream key 43, 1), other token counts (8 for inpainting, 6 for token copy, 2 vs 8 for
#: realism), 60 images, 600 tokenizer steps (500 for the token-copy ViT). On 3 seeds it
#: asked 7 seeds for inpainting (SD 0.045) and 7 for token copy (SD 0.089): their quick
#: looks were (4, 8). The realism looks (3, 6) predate it and are not yet checked against it.
#: The token-copy claim's first design (looks 4, 8 on the seeds claim_seeds(seed, 8)) ended
#: undecided at seed 0: +0.140 [-0.012, +0.292] at its last look, SD 0.182 over 8 seeds,
#: twice the calibration's, with the control failing. Its figures are kept, not rerun.
_COPY_FIRST_DESIGN = dict(looks=(4, 8), key=(), mean=0.1400, sd=0.1821, lower=-0.0122,
                          upper=0.2923, n=8, verdict="undecided", control_mean=0.0270,
                          control_upper=0.0922, control_verdict="contradicted")
#: The design that runs at quick scale: looks 43 and 129 on seed stream key 2, which the
#: first design and the calibration never drew. 129 is seeds_to_decide(sd_upper_limit(0.182,
#: 8) = 0.286, 0.1, alpha=0.025): at the last look's level the interval is then narrower
#: than the gap between 0 and the effect of interest, so it ends reproduced or contradicted
#: wherever the mean lies (unless the SD exceeds that limit); the first look, at a third,
#: lets a clear effect stop early. Over both designs each false verdict has probability at
#: most 0.05 + 0.05.
_CALIBRATION = dict(_CONFIG["quick"], steps=600, warmup=150, reset=150, tto_iter=150, n_eval=60,
                    inpaint_tokens=(8,), realism_tokens=(2, 8), swap_tokens=6, clip_steps=400,
                    n_random=5,
                    copy=dict(width=64, depth=1, patch=2, steps=500, warmup=125, reset=125))


def _config(scale):
    return _CALIBRATION if scale == "calibration" else _CONFIG[scale]


def calibrate_looks(seed=0, n_seeds=3, claims=("inpainting", "realism", "copy")):
    """Per-seed figures and the seeds each check needs, on the calibration setting.

    Not a claim: it chose the quick scale's looks. For each claim, the per-seed
    figure of the check and of the control on ``n_seeds`` seeds of stream key
    (43, 1), their mean and SD, and :func:`~skpaper.papers._stats.seeds_needed`
    for the check (SD of its figure, the distance between margin and effect of
    interest).

    Parameters
    ----------
    seed : int, default=0
    n_seeds : int, default=3
    claims : tuple of str, default=("inpainting", "realism", "copy")

    Returns
    -------
    figures : dict
    """
    from ._stats import seeds_needed

    seeds = claim_seeds(seed, n_seeds, 43, 1)
    arms = {"inpainting": (lambda s: _inpainting_figure("calibration", s, "tto_vq"),
                           lambda s: _inpainting_figure("calibration", s, "tto_vq_untrained"),
                           _INPAINT_EOI),
            "realism": (lambda s: _realism_figure("calibration", s, "generated"),
                        lambda s: _realism_figure("calibration", s, "reconstruction"),
                        _REALISM_EOI),
            "copy": (lambda s: _copy_figure("calibration", s, "attribute_position"),
                     lambda s: _copy_figure("calibration", s, "permuted_label_position"),
                     _COPY_EOI)}
    out = {}
    for name in claims:
        check, control, eoi = arms[name]
        values = [float(check(s)) for s in seeds]
        ctrl = [float(control(s)) for s in seeds]
        sd = float(np.std(values, ddof=1))
        out[name] = {"check": values, "control": ctrl, "check_mean": float(np.mean(values)),
                     "check_sd": sd, "control_mean": float(np.mean(ctrl)),
                     "control_sd": float(np.std(ctrl, ddof=1)),
                     "seeds_needed": seeds_needed(sd, eoi.value)}
    return out


def _seeds(scale, seed):
    return claim_seeds(seed, _config(scale)["looks"][-1])


def _tokenizer_arm(tok, cfg):
    return {"parameters": int(sum(p.numel() for p in tok.module_.parameters())),
            "tokenizer_steps": cfg["steps"], "tto_steps": cfg["tto_iter"],
            "images_optimised": cfg["n_eval"]}


@shared_cache(maxsize=16)
def _digits(seed):
    from skpaper.datasets import load_digits_split

    return load_digits_split(test_size=_N_TEST / 1797, random_state=seed)


@shared_cache(maxsize=16)
def _attribute_digits(seed):
    from skpaper.datasets import make_attribute_digits

    d = make_attribute_digits("dim", random_state=seed)
    order = np.random.default_rng(seed).permutation(len(d.target))
    return d, order[: 1797 - _N_TEST], order[1797 - _N_TEST :]


@shared_cache(maxsize=48)
def _tokenizer(dataset, n_tokens, scale, seed, encoder=None):
    """A tokenizer trained on the training split of ``dataset``, cached per process.

    The token-copy tokenizer (``dataset="dim-digits"``) takes its sizes from the
    scale's ``copy`` entry when there is one.
    """
    from skpaper.vision import VQTokenizer1D

    cfg = _config(scale)
    if dataset == "digits":
        X = _digits(seed).X_train
        sizes = {}
    else:
        d, train, _ = _attribute_digits(seed)
        X = d.data[train]
        sizes = cfg.get("copy", {})
    sizes = {"width": cfg["width"], "depth": 2, "patch": 2, "steps": cfg["steps"],
             "warmup": cfg["warmup"], "reset": cfg["reset"], **sizes}
    batch = 128
    epochs = math.ceil(sizes["steps"] / math.ceil(X.shape[0] / batch))
    return VQTokenizer1D(
        n_tokens=n_tokens, token_dim=8, codebook_size=128, encoder=encoder or cfg["encoder"],
        width=sizes["width"], depth=sizes["depth"], n_heads=4, patch_size=sizes["patch"],
        warmup_steps=sizes["warmup"], dead_code_reset_every=sizes["reset"], max_epochs=epochs,
        batch_size=batch, lr=2e-3, random_state=seed, device="auto",
    ).fit(X)


@shared_cache(maxsize=16)
def _judge(seed):
    """Logistic-regression judge on the training pixels (inpainting)."""
    from sklearn.linear_model import LogisticRegression

    d = _digits(seed)
    return LogisticRegression(max_iter=2000).fit(d.X_train, d.y_train)


@shared_cache(maxsize=16)
def _feature_judge(seed):
    """MLP judge on the training pixels; its hidden layer gives the Fréchet features."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    d = _digits(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return MLPClassifier(hidden_layer_sizes=(32,), max_iter=300,
                             random_state=seed).fit(d.X_train, d.y_train)


def _judge_features(judge, images):
    """ReLU activations of the MLP judge's hidden layer."""
    return np.maximum(images @ judge.coefs_[0] + judge.intercepts_[0], 0.0)


def _frechet_distance(a, b):
    """Fréchet distance between Gaussians fitted to feature sets ``a`` and ``b`` (as in FID).

    ``tr sqrt(S_a S_b)`` is computed as the sum of the square roots of the
    eigenvalues of the symmetric ``S_a^(1/2) S_b S_a^(1/2)``, which stays exact
    when a covariance is singular (dead ReLU units).
    """
    mu_a, mu_b = a.mean(axis=0), b.mean(axis=0)
    cov_a, cov_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    w, v = linalg.eigh(cov_a)
    root_a = (v * np.sqrt(np.clip(w, 0.0, None))) @ v.T
    cross = np.sqrt(np.clip(linalg.eigvalsh(root_a @ cov_b @ root_a), 0.0, None)).sum()
    value = ((mu_a - mu_b) ** 2).sum() + np.trace(cov_a) + np.trace(cov_b) - 2.0 * cross
    return max(float(value), 0.0)  # rounding can leave -1e-13 for identical sets


def _diversity(features):
    """Mean pairwise Euclidean distance between feature vectors."""
    from scipy.spatial.distance import pdist

    return float(pdist(features).mean())


def _image_grid(ax, rows, labels, n_cols):
    """Draw rows of 8x8 images into one axis as a mosaic."""
    tiles = []
    for row in rows:
        imgs = [np.pad(r.reshape(8, 8), 1, constant_values=0.0) for r in row[:n_cols]]
        tiles.append(np.concatenate(imgs, axis=1))
    ax.imshow(np.concatenate(tiles, axis=0), cmap="gray_r", vmin=0, vmax=1)
    ax.set_yticks([10 * i + 5 for i in range(len(rows))], labels)
    ax.set_xticks([])


# ----------------------------------------------------------------------------------- claim 1
def _random_codebook(tok, seed):
    """A copy of ``tok`` whose codebook is redrawn at random (the inpainting control).

    The codes are Gaussian with the per-dimension mean and spread of the learned
    codebook, so the quantizer keeps its scale and the decoder its weights, but
    the codes no longer sit where the digits' tokens do: the prior is gone.
    """
    import copy

    import torch

    with torch.random.fork_rng(devices=[]):  # unpickling rebuilds the network at random
        tok = copy.deepcopy(tok)
    emb = tok.module_.quantizer.embedding
    gen = torch.Generator().manual_seed(int(seed))
    with torch.no_grad():
        noise = torch.randn(emb.shape, generator=gen, dtype=emb.dtype).to(emb.device)
        emb.copy_(emb.mean(dim=0) + emb.std(dim=0) * noise)
    return tok


def _untrained(tok, seed):
    """A copy of ``tok`` with every weight and the codebook redrawn at initialisation.

    The architecture, the quantizer and the test-time optimiser stay; what the
    tokenizer learned from the digits (the inpainting control) is gone. Torch's
    global random state is left as it was.
    """
    import copy

    import torch

    with torch.random.fork_rng(devices=[]):
        tok = copy.deepcopy(tok)
        torch.manual_seed(int(seed))
        for module in tok.module_.modules():
            if module is not tok.module_ and hasattr(module, "reset_parameters"):
                module.reset_parameters()
        emb = tok.module_.quantizer.embedding
        with torch.no_grad():
            emb.copy_(torch.randn(emb.shape, dtype=emb.dtype).to(emb.device))
    return tok


#: The TTO-via-VQ arms of the inpainting claim: the trained tokenizer (the check), the
#: trained tokenizer with a random codebook (reported), an untrained tokenizer (the control).
_INPAINT_VARIANTS = {"tto_vq": None, "tto_vq_random_codebook": _random_codebook,
                     "tto_vq_untrained": _untrained}


@shared_cache(maxsize=32)
def _inpainting_seed(scale, s):
    """Per-arm hidden/known-half MSE and judge accuracy for one seed: encoding the masked
    image and TTO on continuous latents with the trained tokenizer, and TTO via the VQ with
    the trained, the random-codebook and the untrained tokenizer."""
    from skpaper.datasets import make_inpainting_mask
    from skpaper.vision import MaskedReconstruction, TokenTestTimeOptimizer

    cfg = _config(scale)
    d = _digits(s)
    judge = _judge(s)
    X, y = d.X_test[: cfg["n_eval"]], d.y_test[: cfg["n_eval"]]
    known = make_inpainting_mask((8, 8), "bottom")
    hidden = ~known
    seeds = X * known
    out = {}
    for n_tokens in cfg["inpaint_tokens"]:
        trained = _tokenizer("digits", n_tokens, scale, s)
        outputs = {"encode": trained.inverse_transform(trained.transform(seeds))}
        arms = [(name, trained if change is None else change(trained, s + n_tokens), True)
                for name, change in _INPAINT_VARIANTS.items()]
        for arm, tok, through_vq in arms + [("tto_continuous", trained, False)]:
            tto = TokenTestTimeOptimizer(tok, MaskedReconstruction(X, known),
                                         n_iter=cfg["tto_iter"], lr=0.1,
                                         through_vq=through_vq, random_state=s)
            outputs[arm] = tto.generate(seed_images=seeds)
        for arm, img in outputs.items():
            out[(n_tokens, arm)] = {
                "hidden_mse": float(np.mean((img - X)[:, hidden] ** 2)),
                "known_mse": float(np.mean((img - X)[:, known] ** 2)),
                "judge_acc": float(judge.score(img, y))}
        out[("images", n_tokens)] = (X, seeds, outputs)
    return out


def _inpainting_figure(scale, s, arm="tto_vq"):
    """Worst relative hidden-half MSE change of ``arm`` (a TTO-via-VQ arm) over the token
    counts and the trained tokenizer's other two arms (encoding, continuous latents)."""
    r = _inpainting_seed(scale, s)
    tokens = _config(scale)["inpaint_tokens"]
    return max((r[(t, arm)]["hidden_mse"] - r[(t, o)]["hidden_mse"]) / r[(t, o)]["hidden_mse"]
               for t in tokens for o in ("encode", "tto_continuous"))


@register_claim(
    SLUG, "inpainting-through-vq",
    "Inpainting the hidden half by test-time optimisation of the tokens through the vector "
    "quantizer beats encoding the masked image and beats optimising continuous (unquantized) "
    "latents, on hidden-region error and on a judge classifier's accuracy.",
    paper_statement="Sec. 4 (inpainting with FID on ImageNet): test-time optimisation of the "
                    "pre-quantisation tokens through the VQ with the frozen decoder inpaints "
                    "realistically; optimising post-quantisation tokens (skipping the VQ, the "
                    "official optimize_post_quantization_tokens flag) is the weaker ablation.",
    check="per seed, max over the token counts and over the other arms (encoding of the "
          "masked image, TTO on continuous latents) of (hidden-half MSE(TTO via VQ) - "
          "MSE(other)) / MSE(other); over sequential paired seeds its upper 95% bound < 0. "
          "The judge accuracies are reported",
    control="the learned tokenizer removed: TTO via the VQ of an untrained tokenizer (the "
            "same architecture, quantizer, steps and learning rate; every weight and the "
            "codebook at their initial draw) against the same two arms of the trained "
            "tokenizer. A trained tokenizer whose codebook is redrawn at random (encoder and "
            "decoder kept) is reported beside it",
    effect_of_interest=_INPAINT_EOI)
def _claim_inpainting(scale, seed, out_dir):
    cfg = _config(scale)

    def worst(arm):
        def run(s):
            return ArmRun(_inpainting_figure(scale, s, arm),
                          train_steps=cfg["tto_iter"], train_examples=cfg["n_eval"],
                          extra={"tokenizer_steps": cfg["steps"] if arm == "tto_vq" else 0})
        return run

    cmp = run_comparison({"trained_tokenizer": worst("tto_vq"),
                          "untrained_tokenizer": worst("tto_vq_untrained")},
                         method="trained_tokenizer", baseline=None,
                         control_method="untrained_tokenizer", seed=seed,
                         looks=cfg.get("inpaint_looks", cfg["looks"]),
                         effect_of_interest=_INPAINT_EOI, alternative="less",
                         metric="relative hidden-half MSE change of TTO via VQ, worst case")
    seeds = cmp.seeds
    per_seed = [_inpainting_seed(scale, s) for s in seeds]
    observed = {"random_codebook_figure_per_seed": [
        _inpainting_figure(scale, s, "tto_vq_random_codebook") for s in seeds]}
    for n_tokens in cfg["inpaint_tokens"]:
        def series(arm, key, n_tokens=n_tokens):
            return [r[(n_tokens, arm)][key] for r in per_seed]

        for arm in ("encode", "tto_continuous", *_INPAINT_VARIANTS):
            for key in ("hidden_mse", "known_mse", "judge_acc"):
                observed[f"T{n_tokens}_{arm}_{key}_per_seed"] = series(arm, key)
        for other in ("encode", "tto_continuous"):
            observed[f"T{n_tokens}_judge_acc_vq_minus_{other}"] = paired_difference(
                series("tto_vq", "judge_acc"), series(other, "judge_acc")).to_dict()

    grids = {t: per_seed[0][("images", t)] for t in cfg["inpaint_tokens"]}
    fig, axes = new_figure(1, len(grids), figsize=(4.2 * len(grids), 3.4), squeeze=False)
    for ax, (n_tokens, (X, masked, outputs)) in zip(axes[0], grids.items()):
        rows = [X, masked, outputs["encode"], outputs["tto_vq"], outputs["tto_continuous"],
                outputs["tto_vq_untrained"]]
        _image_grid(ax, rows, ["original", "masked", "encode", "TTO via VQ", "TTO cont.",
                               "untrained VQ"], 10)
        ax.set_title(f"{n_tokens} tokens: bottom half hidden")
    artifact = save_figure(fig, out_dir, "inpainting_grid")
    arms = {}
    for n_tokens in cfg["inpaint_tokens"]:
        tok_arm = _tokenizer_arm(_tokenizer("digits", n_tokens, scale, seeds[0]), cfg)
        arms[f"T{n_tokens}_tto_vq"] = tok_arm
        arms[f"T{n_tokens}_tto_continuous"] = tok_arm
        arms[f"T{n_tokens}_encode"] = {**tok_arm, "tto_steps": 0}
        arms[f"T{n_tokens}_tto_vq_untrained"] = {**tok_arm, "tokenizer_steps": 0}
    result = cmp.claim_result(
        observed=observed, artifacts=[artifact],
        notes=(f"{cfg['n_eval']} test digits per seed, bottom half hidden, {cfg['tto_iter']} "
               f"Adam steps at lr 0.1 from the encoding of the masked image; tokenizer "
               f"{cfg['encoder']} with {cfg['steps']} training steps; the judge is a logistic "
               "regression on the training pixels. Both TTO arms share the tokenizer, the steps, "
               "the learning rate and the seeds. The paper's statement is about optimising "
               "through the trained tokenizer's quantizer (against the post-quantisation "
               "ablation and plain encoding); the control removes the trained tokenizer. "
               "A random codebook in the trained tokenizer (random_codebook_figure_per_seed) "
               "keeps most of the gain: it comes from quantising into a trained decoder, not "
               "from where the learned codes sit. The paper reports FID on ImageNet, not these "
               "figures."),
    )
    result.arms = {**arms, "comparison": result.arms}
    return result


# ----------------------------------------------------------------------------------- claim 2
@shared_cache(maxsize=16)
def _toy_clip(scale, seed):
    import torch

    from skpaper.vision import train_contrastive_encoders

    d = _digits(seed)
    text = _class_text_features()
    img_enc, txt_enc = train_contrastive_encoders(
        d.X_train, text[d.y_train], (8, 8, 1), n_steps=_config(scale)["clip_steps"],
        n_augmentations=1, flip=False, random_state=seed)
    with torch.no_grad():
        class_emb = txt_enc(torch.as_tensor(text, dtype=torch.float32)).numpy()
    return img_enc, class_emb


def _class_text_features():
    """MiniLM embeddings of "a handwritten digit k" when available, else one-hot class names."""
    import importlib.util

    if importlib.util.find_spec("sentence_transformers") is not None:
        try:
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer("all-MiniLM-L6-v2", local_files_only=True)
            names = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                     "nine"]
            return np.asarray(model.encode([f"a handwritten digit {n}" for n in names]))
        except Exception:  # no local model files: fall back to one-hot names
            pass
    return np.eye(10)


def _zero_shot(img_enc, class_emb, images):
    import torch

    device = next(img_enc.parameters()).device
    with torch.no_grad():
        feats = img_enc(torch.as_tensor(images, dtype=torch.float32, device=device))
    return (feats.cpu().numpy() @ class_emb.T).argmax(1)


def _realism_figures(judge, images, labels, reference):
    """Fréchet distance, relative diversity and judge accuracy of ``images``."""
    feats, ref = _judge_features(judge, images), _judge_features(judge, reference)
    return {"frechet": _frechet_distance(feats, ref),
            "diversity": _diversity(feats) / _diversity(ref),
            "judge_acc": float(judge.score(images, labels))}


@shared_cache(maxsize=16)
def _realism_seed(scale, s):
    """Guided generations (and plain reconstructions) per token count for one seed."""
    import copy

    from skpaper.nn import resolve_device
    from skpaper.vision import EmbeddingGuidance, TokenTestTimeOptimizer

    cfg = _config(scale)
    d = _digits(s)
    judge = _feature_judge(s)
    img_enc, class_emb = _toy_clip(scale, s)
    X, y = d.X_test[: cfg["n_eval"]], d.y_test[: cfg["n_eval"]]
    reference = d.X_test[cfg["n_eval"]:]  # held-out images that seed nothing
    target = (y + 3) % 10
    # The guide runs where the tokenizer runs; the cached CPU copy stays for zero-shot scoring.
    guide = copy.deepcopy(img_enc).to(resolve_device("auto"))
    objective = EmbeddingGuidance(guide, class_emb[target], n_augmentations=4, flip=False)
    out = {"zero_shot": float(np.mean(_zero_shot(img_enc, class_emb, d.X_test) == d.y_test)),
           "reference": _realism_figures(judge, reference, d.y_test[cfg["n_eval"]:],
                                         reference)}
    for n_tokens in cfg["realism_tokens"]:
        tok = _tokenizer("digits", n_tokens, scale, s)
        recon = tok.inverse_transform(tok.transform(X))
        gen = TokenTestTimeOptimizer(tok, objective, n_iter=cfg["tto_iter"], lr=0.1,
                                     through_vq=True, random_state=s).generate(seed_images=X)
        out[(n_tokens, "generated")] = {
            **_realism_figures(judge, gen, target, reference),
            "guide_success": float(np.mean(_zero_shot(img_enc, class_emb, gen) == target))}
        out[(n_tokens, "reconstruction")] = _realism_figures(judge, recon, y, reference)
        out[(n_tokens, "images")] = gen
    out["seeds"] = X
    return out


def _compression_check(per_seed, most, least, kind):
    """FD lower with fewer tokens; judge accuracy and diversity not lower (paired over seeds)."""
    def series(n_tokens, key):
        return [r[(n_tokens, kind)][key] for r in per_seed]

    frechet = paired_difference(series(most, "frechet"), series(least, "frechet"),
                                alternative="less")
    acc = paired_difference(series(most, "judge_acc"), series(least, "judge_acc"),
                            margin=-_ACC_TOLERANCE)
    diversity = paired_difference(series(most, "diversity"), series(least, "diversity"),
                                  margin=-_DIVERSITY_TOLERANCE)
    observed = {f"frechet_T{most}_minus_T{least}": frechet.to_dict(),
                f"judge_acc_T{most}_minus_T{least}": acc.to_dict(),
                f"diversity_T{most}_minus_T{least}": diversity.to_dict()}
    return observed, bool(frechet.passed and acc.passed and diversity.passed)


def _realism_figure(scale, s, kind):
    """Relative Fréchet distance change, fewest vs most tokens, of ``kind`` images."""
    tokens = _config(scale)["realism_tokens"]
    r = _realism_seed(scale, s)
    most, least = r[(tokens[0], kind)]["frechet"], r[(tokens[-1], kind)]["frechet"]
    return (most - least) / least


@register_claim(
    SLUG, "realism-vs-compression",
    "Text-guided generation by token optimisation gives more realistic images the more "
    "compressed the tokenizer (fewer tokens), without losing the judge's agreement with the "
    "target or the diversity of the outputs.",
    paper_statement="Sec. 4-5: the more compressed the tokenizer (from a 2D VQGAN with 256 "
                    "tokens to TiTok with 32), the more realistic the images test-time "
                    "optimisation generates (lower FID at equal CLIP score).",
    check="per seed, (FD(fewest tokens) - FD(most tokens)) / FD(most tokens), FD the "
          "Fréchet distance between MLP-judge features of the generations and of held-out test "
          "images; over sequential paired seeds its upper 95% bound < 0. The judge's target "
          "accuracy (tolerance -0.05) and the relative diversity (tolerance -0.1, ours) are "
          "reported beside it",
    control="generation removed: the same figure for each tokenizer's plain reconstructions "
            "of the seed images",
    effect_of_interest=_REALISM_EOI)
def _claim_realism(scale, seed, out_dir):
    cfg = _config(scale)
    tokens = list(cfg["realism_tokens"])
    most, least = tokens[0], tokens[-1]

    def change(kind):
        def run(s):
            return ArmRun(_realism_figure(scale, s, kind), train_steps=cfg["tto_iter"],
                          train_examples=cfg["n_eval"], extra={"tokenizer_steps": cfg["steps"]})
        return run

    cmp = run_comparison({"generated": change("generated"),
                          "reconstruction": change("reconstruction")},
                         method="generated", baseline=None, control_method="reconstruction",
                         seed=seed, looks=cfg["looks"], effect_of_interest=_REALISM_EOI,
                         alternative="less",
                         metric=f"relative Fréchet distance change, T{most} vs T{least}")
    seeds = cmp.seeds
    per_seed = [_realism_seed(scale, s) for s in seeds]
    observed, side_conditions = _compression_check(per_seed, most, least, "generated")
    observed["accuracy_and_diversity_within_tolerance"] = side_conditions
    observed["reconstructions"], _ = _compression_check(per_seed, most, least, "reconstruction")
    observed["toy_clip_zero_shot_acc_per_seed"] = [r["zero_shot"] for r in per_seed]
    observed["reference_frechet_to_itself"] = per_seed[0]["reference"]["frechet"]
    for n_tokens in tokens:
        for kind in ("generated", "reconstruction"):
            for key in per_seed[0][(n_tokens, kind)]:
                observed[f"T{n_tokens}_{kind}_{key}_per_seed"] = [
                    r[(n_tokens, kind)][key] for r in per_seed]

    fig, axes = new_figure(1, 3, figsize=(13, 3.6))
    for ax, key, label in ((axes[0], "frechet", "Fréchet distance to held-out images"),
                           (axes[1], "judge_acc", "judge accuracy / diversity")):
        for kind, style in (("generated", "o-"), ("reconstruction", "^:")):
            ax.plot(tokens, [np.mean([r[(t, kind)][key] for r in per_seed]) for t in tokens],
                    style, label=f"{kind} ({key})")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("number of tokens")
        ax.set_ylabel(label)
    axes[1].plot(tokens, [np.mean([r[(t, "generated")]["diversity"] for r in per_seed])
                          for t in tokens], "s--", label="generated (diversity)")
    for ax in axes[:2]:
        ax.legend(fontsize=7)
    rows = [per_seed[0]["seeds"]] + [per_seed[0][(t, "images")] for t in tokens]
    _image_grid(axes[2], rows, ["seed"] + [f"{t} tokens" for t in tokens], 10)
    axes[2].set_title("guided towards digit (y + 3) mod 10")
    artifact = save_figure(fig, out_dir, "realism_vs_tokens")
    result = cmp.claim_result(
        observed=observed,
        artifacts=[artifact],
        notes=("CLIP stand-in: an MLP image encoder and a linear text projection trained "
               "contrastively on one-hot class names (MiniLM caption embeddings when "
               "sentence-transformers and its local model are installed); guide success is the "
               "toy CLIP's zero-shot class of the output. The judge is an MLP (32 hidden units) "
               "trained on the training pixels; its hidden activations are the Fréchet "
               f"features; held-out: the {_N_TEST - cfg['n_eval']} test images not used as "
               f"seeds. {cfg['n_eval']} seeds per run, {cfg['tto_iter']} steps, 4 random crops "
               "per step, no flips (a flipped digit is another symbol). Diversity is the mean "
               "pairwise feature distance of the outputs over that of the held-out images. All "
               "tokenizers share the training data, steps and width; only the token count "
               "changes."),
    )
    result.arms = {**{f"T{t}": _tokenizer_arm(_tokenizer("digits", t, scale, seeds[0]), cfg)
                      for t in tokens}, "comparison": result.arms}
    return result


# ----------------------------------------------------------------------------------- claim 3
def _edit_success(tok, attr_judge, digit_judge, codes, src, dst, digits, position):
    """Share of edits (``position`` copied from src into dst) that carry the attribute and
    keep the destination's digit, the edited images, and the two rates apart."""
    from skpaper.vision import swap_tokens

    edited = tok.inverse_transform(swap_tokens(codes[src], codes[dst], position))
    dim = attr_judge.predict(edited) == 1
    kept = digit_judge.predict(edited) == digits
    return float(np.mean(dim & kept)), float(dim.mean()), float(kept.mean()), edited


# Holds every seed of the largest look: run_comparison asks each arm for all of a look's seeds
# in turn, so a smaller cache would retrain the tokenizers once per arm.
@shared_cache(maxsize=160)
def _token_copy_seed(scale, s):
    from sklearn.linear_model import LogisticRegression

    from skpaper.vision import find_attribute_positions

    cfg = _config(scale)
    d, train, test = _attribute_digits(s)
    n_tokens = cfg["swap_tokens"]
    tok = _tokenizer("dim-digits", n_tokens, scale, s, encoder=cfg["copy_encoder"])
    X_tr, a_tr = d.data[train], d.attribute[train]
    attr_judge = LogisticRegression(max_iter=2000).fit(X_tr, a_tr)
    digit_judge = LogisticRegression(max_iter=2000).fit(X_tr, d.target[train])
    train_codes = tok.transform(X_tr)
    positions, scores = find_attribute_positions(train_codes, a_tr)
    rng = np.random.default_rng(s)
    # The control's positions: found the same way against attribute labels shuffled between
    # the training images (the link between position and attribute removed), one per
    # shuffle, their edit successes averaged.
    permuted = [find_attribute_positions(train_codes, rng.permutation(a_tr))[0]
                for _ in range(cfg["n_random"])]
    codes = tok.transform(d.data[test])
    a_te, y_te = d.attribute[test], d.target[test]
    with_attr, without = np.flatnonzero(a_te == 1), np.flatnonzero(a_te == 0)
    m = min(len(with_attr), len(without))  # every test pair: the edits averaged per seed
    src, dst = with_attr[:m], without[:m]

    def success(position):
        return _edit_success(tok, attr_judge, digit_judge, codes, src, dst, y_te[dst],
                             np.asarray(position))

    best = success(positions[:1])
    # A random position, in expectation: the mean over every position (no draw noise).
    random_runs = [success(np.array([k])) for k in range(n_tokens)]
    permuted_runs = [success(p[:1]) for p in permuted]
    base = tok.inverse_transform(codes[dst])
    return {"attribute_position": best[0],
            "random_position": float(np.mean([r[0] for r in random_runs])),
            "permuted_label_position": float(np.mean([r[0] for r in permuted_runs])),
            "dim_rate": best[1], "digit_kept": best[2],
            "dim_rate_random": float(np.mean([r[1] for r in random_runs])),
            "digit_kept_random": float(np.mean([r[2] for r in random_runs])),
            "success_per_position": [round(r[0], 4) for r in random_runs],
            "position": int(positions[0]),
            "permuted_positions": [int(p[0]) for p in permuted],
            "scores": np.round(scores, 4).tolist(), "n_pairs": int(m),
            "without_edit": float(attr_judge.predict(base).mean()),
            "digit_kept_without_edit": float(digit_judge.score(base, y_te[dst])),
            "images": (d.data[test][dst], d.data[test][src], best[3]), "tokenizer": tok}


def _copy_figure(scale, s, name):
    """Edit success of ``name`` minus that of random positions on one seed."""
    r = _token_copy_seed(scale, s)
    return r[name] - r["random_position"]


@register_claim(
    SLUG, "token-copy-transfers-attribute",
    "Copying the token at the position most associated with an attribute from an image that "
    "has it into one that does not transfers the attribute, the identity kept, more often "
    "than copying a random position.",
    paper_statement="Sec. 3: in a highly compressed 1D tokenizer single token positions carry "
                    "global attributes (blur, lighting, background); copying the token at such "
                    "a position from one image into another transfers the attribute.",
    check="per seed, the share of edits that an attribute judge calls 'dim' and a digit judge "
          "calls the destination's digit, copying the attribute position minus copying random "
          "positions; over sequential paired seeds its lower 95% bound > 0 (ViT tokenizer "
          "from quick scale on)",
    control="the position found against attribute labels shuffled between the training images "
            "(the position-attribute link removed), copied the same way",
    effect_of_interest=_COPY_EOI)
def _claim_token_copy(scale, seed, out_dir):
    cfg = _config(scale)

    def arm(name):
        def run(s):
            return ArmRun(_token_copy_seed(scale, s)[name],
                          train_examples=_token_copy_seed(scale, s)["n_pairs"],
                          extra={"tokenizer": cfg["copy_encoder"],
                                 "tokenizer_steps": cfg["steps"], "positions_copied": 1})
        return run

    names = ("attribute_position", "random_position", "permuted_label_position")
    cmp = run_comparison({n: arm(n) for n in names}, method="attribute_position",
                         baseline="random_position", control_method="permuted_label_position",
                         seed=seed, looks=cfg.get("copy_looks", cfg["looks"]),
                         key=cfg.get("copy_key", ()), effect_of_interest=_COPY_EOI,
                         metric="share of edits with the attribute and the digit kept")
    per_seed = [_token_copy_seed(scale, s) for s in cmp.seeds]
    observed = {
        "n_tokens": cfg["swap_tokens"], "tokenizer": cfg["copy_encoder"],
        "seed_stream_key": list(cfg.get("copy_key", ())),
        **({"first_design": dict(_COPY_FIRST_DESIGN,
                                 note="recorded from the first design's run at quick scale, "
                                      "seed 0; not rerun")} if "copy_key" in cfg else {}),
        "attribute_position_per_seed": [r["position"] for r in per_seed],
        "permuted_label_positions_per_seed": [r["permuted_positions"] for r in per_seed],
        "success_per_position_per_seed": [r["success_per_position"] for r in per_seed],
        "position_scores_first_seed": per_seed[0]["scores"],
        **{f"{k}_per_seed": [r[k] for r in per_seed]
           for k in ("dim_rate", "dim_rate_random", "digit_kept", "digit_kept_random",
                     "without_edit", "digit_kept_without_edit", "n_pairs")},
    }
    first = per_seed[0]
    fig, ax = new_figure(figsize=(6, 3))
    _image_grid(ax, list(first["images"]), ["destination", "source (dim)",
                                            f"copy pos {first['position']}"], 12)
    ax.set_title("token copy: the attribute position carries the lighting")
    artifact = save_figure(fig, out_dir, "token_copy_grid")
    result = cmp.claim_result(
        observed=observed, artifacts=[artifact],
        notes=("Attribute: 'dim' (intensities scaled by 0.4, a lighting analogue) on a random "
               "half of the digits; the tokenizer is trained on that mixture. The position is "
               "found on the training split by adjusted mutual information between code and "
               "attribute; the judge is a logistic regression on the training pixels. Every "
               "dim test image is paired with a plain one (all pairs, the edits averaged "
               "within the seed). The random position is its expectation: the mean over all "
               f"{cfg['swap_tokens']} positions (which include the attribute position). The "
               f"control averages {cfg['n_random']} shuffles of the labels. The digit judge is "
               "a logistic regression too." + (_COPY_DESIGN_NOTE if "copy_key" in cfg else "")),
    )
    result.arms = {"tokenizer": _tokenizer_arm(first["tokenizer"], cfg),
                   "comparison": result.arms}
    return result
