"""numpydoc validation of every public skpaper docstring.

The objects checked are every estimator of :func:`skpaper.utils.all_estimators`
and, for each family package (plus :mod:`skpaper.datasets`, :mod:`skpaper.papers`
and :mod:`skpaper.utils`), every public function and class named in its
``__all__`` (and in the ``__all__`` of a public submodule it exports). Each class
is checked with its public methods and properties defined in skpaper; what is
inherited from scikit-learn or torch is theirs to document.

Run ``python tests/test_docstrings.py skpaper.bandits.Exp3.fit`` to print the
errors of one object.
"""

import importlib
import inspect
import sys
import types

import pytest

from skpaper.utils._registry import FAMILIES, _family_module, all_estimators

numpydoc_validation = pytest.importorskip("numpydoc.validate")

#: Packages whose ``__all__`` is enumerated besides the estimator families.
EXTRA_PACKAGES = ("datasets", "papers", "utils")

#: Error codes ignored everywhere, with the reason.
IGNORED_EVERYWHERE = {
    # The summary starts on the line of the opening quotes, the project's style.
    "GL01": "summary on the line after the opening quotes",
    # A blank line before the closing quotes is harmless and PEP 257 allows it.
    "GL02": "closing quotes right after the last line",
    # An extended summary is useful, not always needed (short helpers and methods).
    "ES01": "extended summary",
    # See Also sections are added where a related object exists, not everywhere.
    "SA01": "See Also section",
    # ``name : type`` lines in Returns name the returned object, as scikit-learn does.
    "RT02": "Returns lines with only a type",
}

#: Error codes checked on classes and functions, ignored on methods and properties.
IGNORED_ON_METHODS = {
    # The class docstring carries the example of how to use its methods.
    "EX01": "Examples section",
}

#: Objects that still fail, by qualified public name, in packages under refactoring.
#: Each is expected to fail (strict xfail): fixing one makes the test fail until the
#: entry is removed.
_PENDING = frozenset({
    # skpaper.adaptation: 22
    "skpaper.adaptation.NormMLPClassifier",
    "skpaper.adaptation.NormMLPClassifier.fit",
    "skpaper.adaptation.NormMLPClassifier.predict",
    "skpaper.adaptation.NormMLPClassifier.predict_proba",
    "skpaper.adaptation.SteadyStateFilter.reset",
    "skpaper.adaptation.SteadyStateFilter.to",
    "skpaper.adaptation.TestTimeAdapter",
    "skpaper.adaptation.TestTimeAdapter.fit",
    "skpaper.adaptation.TestTimeAdapter.partial_fit",
    "skpaper.adaptation.TestTimeAdapter.predict",
    "skpaper.adaptation.TestTimeAdapter.predict_proba",
    "skpaper.adaptation.TestTimeAdapter.reset",
    "skpaper.adaptation.TestTimeAdapter.score",
    "skpaper.adaptation.adapted_parameters",
    "skpaper.adaptation.eata_loss",
    "skpaper.adaptation.entropy_loss",
    "skpaper.adaptation.make_norm_mlp",
    "skpaper.adaptation.prior_correction",
    "skpaper.adaptation.roid_loss",
    "skpaper.adaptation.soft_likelihood_ratio",
    "skpaper.adaptation.softmax_entropy",
    "skpaper.adaptation.symmetric_cross_entropy",
    # skpaper.graph: 42
    "skpaper.graph.GraphOfNets.from_networkx",
    "skpaper.graph.GraphOfNetsClassifier",
    "skpaper.graph.GraphOfNetsClassifier.fit",
    "skpaper.graph.GraphOfNetsClassifier.positions",
    "skpaper.graph.GraphOfNetsClassifier.predict",
    "skpaper.graph.GraphOfNetsClassifier.predict_proba",
    "skpaper.graph.InnerGINClassifier",
    "skpaper.graph.InnerGINClassifier.fit",
    "skpaper.graph.InnerGINClassifier.predict",
    "skpaper.graph.InnerGINClassifier.predict_proba",
    "skpaper.graph.OuterGCNClassifier",
    "skpaper.graph.OuterGCNClassifier.fit",
    "skpaper.graph.OuterGCNClassifier.predict",
    "skpaper.graph.OuterGCNClassifier.predict_proba",
    "skpaper.graph.QPGNN",
    "skpaper.graph.QPGNN.forward",
    "skpaper.graph.QPGNNFeasibilityClassifier",
    "skpaper.graph.QPGNNFeasibilityClassifier.decision_function",
    "skpaper.graph.QPGNNFeasibilityClassifier.fit",
    "skpaper.graph.QPGNNFeasibilityClassifier.predict",
    "skpaper.graph.QPGNNFeasibilityClassifier.predict_proba",
    "skpaper.graph.QPGNNRegressor",
    "skpaper.graph.QPGNNRegressor.fit",
    "skpaper.graph.QPGNNRegressor.predict",
    "skpaper.graph.QPGNNRegressor.relative_error",
    "skpaper.graph.QPGNNRegressor.score",
    "skpaper.graph.QPGNNWarmStart",
    "skpaper.graph.QPGraph",
    "skpaper.graph.QPGraph.n_constraints",
    "skpaper.graph.QPGraph.n_variables",
    "skpaper.graph.QPGraphEncoder",
    "skpaper.graph.QPGraphEncoder.collate",
    "skpaper.graph.QPGraphEncoder.encode",
    "skpaper.graph.QPGraphEncoder.encode_all",
    "skpaper.graph.QPGraphEncoder.n_variable_features",
    "skpaper.graph.check_qp",
    "skpaper.graph.qp_objective",
    "skpaper.graph.qp_violation",
    "skpaper.graph.scatter_mean",
    "skpaper.graph.scatter_sum",
    "skpaper.graph.sparse_adjacency",
    "skpaper.graph.two_layer_mlp",
    # skpaper.kg: 17
    "skpaper.kg.ComplExLinkPredictor",
    "skpaper.kg.ComplExLinkPredictor.score",
    "skpaper.kg.ComplExLinkPredictor.score_samples",
    "skpaper.kg.TNTComplExLinkPredictor",
    "skpaper.kg.TNTComplExLinkPredictor.score",
    "skpaper.kg.TNTComplExLinkPredictor.score_samples",
    "skpaper.kg.TeASTLinkPredictor",
    "skpaper.kg.TeASTLinkPredictor.score",
    "skpaper.kg.TeASTLinkPredictor.score_samples",
    "skpaper.kg.TeDSLinkPredictor",
    "skpaper.kg.TeDSLinkPredictor.score",
    "skpaper.kg.TeDSLinkPredictor.score_samples",
    "skpaper.kg.quaternion_conjugate",
    "skpaper.kg.quaternion_from_angle",
    "skpaper.kg.quaternion_norm",
    "skpaper.kg.quaternion_normalize",
    "skpaper.kg.ranking_metrics",
    # skpaper.language: 52
    "skpaper.language.BPETokenizer.decode",
    "skpaper.language.BPETokenizer.encode",
    "skpaper.language.BPETokenizer.encode_batch",
    "skpaper.language.BPETokenizer.fit",
    "skpaper.language.BPETokenizer.get_vocab",
    "skpaper.language.BPETokenizer.is_fitted",
    "skpaper.language.CharTokenizer.decode",
    "skpaper.language.CharTokenizer.encode",
    "skpaper.language.CharTokenizer.encode_batch",
    "skpaper.language.CharTokenizer.fit",
    "skpaper.language.CharTokenizer.get_vocab",
    "skpaper.language.CharTokenizer.is_fitted",
    "skpaper.language.ContrastiveDistiller",
    "skpaper.language.ContrastiveDistiller.fit",
    "skpaper.language.ContrastiveDistiller.generate_ids",
    "skpaper.language.ContrastiveDistiller.predict",
    "skpaper.language.ContrastiveDistiller.predict_proba",
    "skpaper.language.ContrastiveDistiller.score",
    "skpaper.language.ContrastiveDistiller.score_samples",
    "skpaper.language.FocusInstructionLM",
    "skpaper.language.FocusInstructionLM.fit",
    "skpaper.language.FocusInstructionLM.focus_accuracy_report",
    "skpaper.language.FocusInstructionLM.make_prompts",
    "skpaper.language.FocusInstructionLM.predict",
    "skpaper.language.FocusInstructionLM.predict_proba",
    "skpaper.language.FocusInstructionLM.score",
    "skpaper.language.FocusInstructionTuner",
    "skpaper.language.FocusInstructionTuner.fit",
    "skpaper.language.FocusInstructionTuner.focus_accuracy_report",
    "skpaper.language.FocusInstructionTuner.predict",
    "skpaper.language.FocusInstructionTuner.score",
    "skpaper.language.LanguageModel",
    "skpaper.language.LanguageModel.fit",
    "skpaper.language.LanguageModel.generate_ids",
    "skpaper.language.LanguageModel.predict",
    "skpaper.language.LanguageModel.predict_proba",
    "skpaper.language.LanguageModel.score",
    "skpaper.language.LanguageModel.score_samples",
    "skpaper.language.TinyCausalLM",
    "skpaper.language.TinyCausalLM.forward",
    "skpaper.language.WordTokenizer.decode",
    "skpaper.language.WordTokenizer.encode",
    "skpaper.language.WordTokenizer.encode_batch",
    "skpaper.language.WordTokenizer.fit",
    "skpaper.language.WordTokenizer.get_vocab",
    "skpaper.language.WordTokenizer.is_fitted",
    "skpaper.language.focus_labels",
    "skpaper.language.lm_logits",
    "skpaper.language.pad_sequences",
    "skpaper.language.sample_responses",
    "skpaper.language.sequence_log_probs",
    "skpaper.language.token_log_probs",
    # skpaper.nn: 91
    "skpaper.nn.BaseTorchEstimator",
    "skpaper.nn.BaseTorchState",
    "skpaper.nn.Callback",
    "skpaper.nn.Callback.on_batch_begin",
    "skpaper.nn.Callback.on_batch_end",
    "skpaper.nn.Callback.on_epoch_begin",
    "skpaper.nn.Callback.on_epoch_end",
    "skpaper.nn.Callback.on_grad_computed",
    "skpaper.nn.Callback.on_train_begin",
    "skpaper.nn.Callback.on_train_end",
    "skpaper.nn.Checkpoint",
    "skpaper.nn.Checkpoint.on_batch_begin",
    "skpaper.nn.Checkpoint.on_batch_end",
    "skpaper.nn.Checkpoint.on_epoch_begin",
    "skpaper.nn.Checkpoint.on_epoch_end",
    "skpaper.nn.Checkpoint.on_grad_computed",
    "skpaper.nn.Checkpoint.on_train_begin",
    "skpaper.nn.Checkpoint.on_train_end",
    "skpaper.nn.Checkpoint.restore",
    "skpaper.nn.EarlyStopping.on_batch_begin",
    "skpaper.nn.EarlyStopping.on_batch_end",
    "skpaper.nn.EarlyStopping.on_epoch_begin",
    "skpaper.nn.EarlyStopping.on_epoch_end",
    "skpaper.nn.EarlyStopping.on_grad_computed",
    "skpaper.nn.EarlyStopping.on_train_begin",
    "skpaper.nn.EarlyStopping.on_train_end",
    "skpaper.nn.GradNormClipping",
    "skpaper.nn.GradNormClipping.on_batch_begin",
    "skpaper.nn.GradNormClipping.on_batch_end",
    "skpaper.nn.GradNormClipping.on_epoch_begin",
    "skpaper.nn.GradNormClipping.on_epoch_end",
    "skpaper.nn.GradNormClipping.on_grad_computed",
    "skpaper.nn.GradNormClipping.on_train_begin",
    "skpaper.nn.GradNormClipping.on_train_end",
    "skpaper.nn.HalveOnPlateau",
    "skpaper.nn.HalveOnPlateau.on_batch_begin",
    "skpaper.nn.HalveOnPlateau.on_batch_end",
    "skpaper.nn.HalveOnPlateau.on_epoch_begin",
    "skpaper.nn.HalveOnPlateau.on_epoch_end",
    "skpaper.nn.HalveOnPlateau.on_grad_computed",
    "skpaper.nn.HalveOnPlateau.on_train_begin",
    "skpaper.nn.HalveOnPlateau.on_train_end",
    "skpaper.nn.LRScheduler.on_batch_begin",
    "skpaper.nn.LRScheduler.on_batch_end",
    "skpaper.nn.LRScheduler.on_epoch_begin",
    "skpaper.nn.LRScheduler.on_epoch_end",
    "skpaper.nn.LRScheduler.on_grad_computed",
    "skpaper.nn.LRScheduler.on_train_begin",
    "skpaper.nn.LRScheduler.on_train_end",
    "skpaper.nn.LaurelBlock",
    "skpaper.nn.LaurelBlock.forward",
    "skpaper.nn.LaurelConvNetClassifier",
    "skpaper.nn.LaurelConvNetClassifier.fit",
    "skpaper.nn.LaurelConvNetClassifier.predict",
    "skpaper.nn.LaurelConvNetClassifier.predict_proba",
    "skpaper.nn.LaurelMLPClassifier",
    "skpaper.nn.LaurelMLPClassifier.fit",
    "skpaper.nn.LaurelMLPClassifier.predict",
    "skpaper.nn.LaurelMLPClassifier.predict_proba",
    "skpaper.nn.LaurelMLPRegressor",
    "skpaper.nn.LaurelMLPRegressor.fit",
    "skpaper.nn.LaurelMLPRegressor.predict",
    "skpaper.nn.LaurelResidual",
    "skpaper.nn.LaurelResidual.extra_repr",
    "skpaper.nn.LaurelResidual.learned_weights",
    "skpaper.nn.LaurelResidual.residual_weights",
    "skpaper.nn.LaurelSequential",
    "skpaper.nn.LaurelSequential.forward",
    "skpaper.nn.MLPClassifier",
    "skpaper.nn.MLPClassifier.fit",
    "skpaper.nn.MLPClassifier.predict",
    "skpaper.nn.MLPClassifier.predict_proba",
    "skpaper.nn.MLPRegressor",
    "skpaper.nn.MLPRegressor.fit",
    "skpaper.nn.MLPRegressor.predict",
    "skpaper.nn.SelfAttention.forward",
    "skpaper.nn.TransformerBlock.forward",
    "skpaper.nn.ValidationSplit",
    "skpaper.nn.ValidationSplit.on_batch_begin",
    "skpaper.nn.ValidationSplit.on_batch_end",
    "skpaper.nn.ValidationSplit.on_epoch_begin",
    "skpaper.nn.ValidationSplit.on_epoch_end",
    "skpaper.nn.ValidationSplit.on_grad_computed",
    "skpaper.nn.ValidationSplit.on_train_begin",
    "skpaper.nn.ValidationSplit.on_train_end",
    "skpaper.nn.ValidationSplit.split",
    "skpaper.nn.make_laurel_convnet",
    "skpaper.nn.make_laurel_mlp",
    "skpaper.nn.make_mlp",
    "skpaper.nn.resolve_device",
    "skpaper.nn.with_laurel",
    # skpaper.representation: 88
    "skpaper.representation.BlockSearchProbe",
    "skpaper.representation.BlockSearchProbe.fit",
    "skpaper.representation.BlockSearchProbe.get_feature_names_out",
    "skpaper.representation.BlockSearchProbe.score",
    "skpaper.representation.BlockSearchProbe.transform",
    "skpaper.representation.DeepLinearRegressor",
    "skpaper.representation.DeepLinearRegressor.fit",
    "skpaper.representation.DeepLinearRegressor.fit_population",
    "skpaper.representation.DeepLinearRegressor.predict",
    "skpaper.representation.DeepLinearRegressor.risk",
    "skpaper.representation.LatentSelector.fit",
    "skpaper.representation.MaskedAutoencoderViT",
    "skpaper.representation.MaskedAutoencoderViT.decode",
    "skpaper.representation.MaskedAutoencoderViT.forward",
    "skpaper.representation.MaskedAutoencoderViT.prepare",
    "skpaper.representation.MicroscopyMAE",
    "skpaper.representation.MicroscopyMAE.fit",
    "skpaper.representation.MicroscopyMAE.score",
    "skpaper.representation.MicroscopyMAE.transform",
    "skpaper.representation.MicroscopyMAE.transform_all_blocks",
    "skpaper.representation.MultiHeadSelfAttention",
    "skpaper.representation.MultiHeadSelfAttention.forward",
    "skpaper.representation.PaperCV.get_n_splits",
    "skpaper.representation.PaperCV.split",
    "skpaper.representation.PerturbationConsistencyFilter",
    "skpaper.representation.PerturbationConsistencyFilter.fit",
    "skpaper.representation.PerturbationConsistencyFilter.sample_mask",
    "skpaper.representation.ProbeSearchCV",
    "skpaper.representation.ProbeSearchCV.decision_function",
    "skpaper.representation.ProbeSearchCV.fit",
    "skpaper.representation.ProbeSearchCV.predict",
    "skpaper.representation.ProbeSearchCV.predict_proba",
    "skpaper.representation.QuiverOfArrows",
    "skpaper.representation.QuiverOfArrows.decision_function",
    "skpaper.representation.QuiverOfArrows.fit",
    "skpaper.representation.QuiverOfArrows.predict",
    "skpaper.representation.QuiverOfArrows.predict_proba",
    "skpaper.representation.SAEProbeClassifier",
    "skpaper.representation.SAEProbeClassifier.decision_function",
    "skpaper.representation.SAEProbeClassifier.fit",
    "skpaper.representation.SAEProbeClassifier.predict",
    "skpaper.representation.SAEProbeClassifier.predict_proba",
    "skpaper.representation.SparseAutoencoder",
    "skpaper.representation.SparseAutoencoder.fit",
    "skpaper.representation.SparseAutoencoder.inverse_transform",
    "skpaper.representation.SparseAutoencoder.score",
    "skpaper.representation.SparseAutoencoder.transform",
    "skpaper.representation.TransferRegressor",
    "skpaper.representation.TransferRegressor.fit",
    "skpaper.representation.TransferRegressor.predict",
    "skpaper.representation.TwoLayerReLURegressor",
    "skpaper.representation.TwoLayerReLURegressor.fit",
    "skpaper.representation.TwoLayerReLURegressor.fit_population",
    "skpaper.representation.TwoLayerReLURegressor.predict",
    "skpaper.representation.TypicalVariationNormalizer",
    "skpaper.representation.TypicalVariationNormalizer.fit",
    "skpaper.representation.TypicalVariationNormalizer.fit_transform",
    "skpaper.representation.TypicalVariationNormalizer.transform",
    "skpaper.representation.ViTBlock",
    "skpaper.representation.ViTBlock.forward",
    "skpaper.representation.VisionTransformer",
    "skpaper.representation.VisionTransformer.block_features",
    "skpaper.representation.VisionTransformer.embed",
    "skpaper.representation.VisionTransformer.forward",
    "skpaper.representation.VisionTransformer.pool",
    "skpaper.representation.VisionTransformer.run_blocks",
    "skpaper.representation.VisionTransformer.trim",
    "skpaper.representation.aggregate_embeddings",
    "skpaper.representation.covariate_shift_split",
    "skpaper.representation.finetune_risk",
    "skpaper.representation.flip_labels",
    "skpaper.representation.fourier_loss",
    "skpaper.representation.imbalance_split",
    "skpaper.representation.linear_separability",
    "skpaper.representation.linear_transfer_risk",
    "skpaper.representation.linear_transferability",
    "skpaper.representation.mae_loss",
    "skpaper.representation.minilm_activations",
    "skpaper.representation.patchify",
    "skpaper.representation.random_masking",
    "skpaper.representation.regime_grid",
    "skpaper.representation.relationship_recall",
    "skpaper.representation.replicate_consistency_cvm",
    "skpaper.representation.replicate_consistency_ks",
    "skpaper.representation.replicate_pair_similarities",
    "skpaper.representation.scarcity_split",
    "skpaper.representation.sincos_pos_embed_2d",
    "skpaper.representation.unpatchify",
    # skpaper.shape: 42
    "skpaper.shape.OctahedralFlipper",
    "skpaper.shape.OctahedralFlipper.calibrate_conformal",
    "skpaper.shape.OctahedralFlipper.conformal_scores",
    "skpaper.shape.OctahedralFlipper.fit",
    "skpaper.shape.OctahedralFlipper.predict",
    "skpaper.shape.OctahedralFlipper.predict_proba",
    "skpaper.shape.OctahedralFlipper.predict_set",
    "skpaper.shape.OctahedralFlipper.predict_top_k",
    "skpaper.shape.PCAOrienter.fit",
    "skpaper.shape.PCAOrienter.predict",
    "skpaper.shape.PCAOrienter.score",
    "skpaper.shape.PCAOrienter.transform",
    "skpaper.shape.QuotientOrienter",
    "skpaper.shape.QuotientOrienter.fit",
    "skpaper.shape.QuotientOrienter.predict",
    "skpaper.shape.QuotientOrienter.predict_raw",
    "skpaper.shape.QuotientOrienter.score",
    "skpaper.shape.QuotientOrienter.transform",
    "skpaper.shape.TwoStageOrienter",
    "skpaper.shape.TwoStageOrienter.fit",
    "skpaper.shape.TwoStageOrienter.predict",
    "skpaper.shape.TwoStageOrienter.predict_stages",
    "skpaper.shape.TwoStageOrienter.predict_top_k",
    "skpaper.shape.TwoStageOrienter.score",
    "skpaper.shape.TwoStageOrienter.transform",
    "skpaper.shape.angle_modulo_group",
    "skpaper.shape.apply_rotation",
    "skpaper.shape.axis_angle_to_matrix",
    "skpaper.shape.axis_errors",
    "skpaper.shape.check_point_clouds",
    "skpaper.shape.geodesic_distance",
    "skpaper.shape.matrix_to_quaternion",
    "skpaper.shape.nearest_group_element",
    "skpaper.shape.octahedral_cayley_table",
    "skpaper.shape.octahedral_group",
    "skpaper.shape.octahedral_medoid",
    "skpaper.shape.quaternion_to_matrix",
    "skpaper.shape.random_rotations",
    "skpaper.shape.random_small_rotations",
    "skpaper.shape.special_procrustes",
    "skpaper.shape.top_k_axis_errors",
    "skpaper.shape.up_axis_accuracy",
    # skpaper.sketch: 14
    "skpaper.sketch.BottomKSketch.copy",
    "skpaper.sketch.BottomKSketch.estimate",
    "skpaper.sketch.BottomKSketch.from_bytes",
    "skpaper.sketch.BottomKSketch.get_params",
    "skpaper.sketch.BottomKSketch.k",
    "skpaper.sketch.BottomKSketch.merge",
    "skpaper.sketch.BottomKSketch.seed",
    "skpaper.sketch.BottomKSketch.to_bytes",
    "skpaper.sketch.BottomKSketch.update",
    "skpaper.sketch.RobustCardinalitySketch.fit",
    "skpaper.sketch.RobustCardinalitySketch.score",
    "skpaper.sketch.attacks.secret_lowest_keys",
    "skpaper.sketch.checks.yield_checks",
    "skpaper.sketch.deactivation_budget",
    # skpaper.vision: 37
    "skpaper.vision.ClassifierGuidance.loss",
    "skpaper.vision.EmbeddingGuidance.loss",
    "skpaper.vision.KeypointMotionTransfer",
    "skpaper.vision.KeypointMotionTransfer.anytime_transfer",
    "skpaper.vision.KeypointMotionTransfer.detect_keypoints",
    "skpaper.vision.KeypointMotionTransfer.fit",
    "skpaper.vision.KeypointMotionTransfer.interpolate",
    "skpaper.vision.KeypointMotionTransfer.predict",
    "skpaper.vision.KeypointMotionTransfer.score",
    "skpaper.vision.KeypointMotionTransfer.transform",
    "skpaper.vision.LandmarkDetector",
    "skpaper.vision.LandmarkDetector.device",
    "skpaper.vision.LandmarkDetector.predict",
    "skpaper.vision.MaskedReconstruction.loss",
    "skpaper.vision.TokenObjective",
    "skpaper.vision.TokenObjective.loss",
    "skpaper.vision.TokenTestTimeOptimizer",
    "skpaper.vision.TokenTestTimeOptimizer.generate",
    "skpaper.vision.VQTokenizer1D",
    "skpaper.vision.VQTokenizer1D.decode_tensor",
    "skpaper.vision.VQTokenizer1D.embed_codes",
    "skpaper.vision.VQTokenizer1D.encode_continuous",
    "skpaper.vision.VQTokenizer1D.encode_tensor",
    "skpaper.vision.VQTokenizer1D.fit",
    "skpaper.vision.VQTokenizer1D.get_feature_names_out",
    "skpaper.vision.VQTokenizer1D.inverse_transform",
    "skpaper.vision.VQTokenizer1D.quantize_tensor",
    "skpaper.vision.VQTokenizer1D.score",
    "skpaper.vision.VQTokenizer1D.transform",
    "skpaper.vision.WeightedSum",
    "skpaper.vision.WeightedSum.loss",
    "skpaper.vision.average_euclidean_distance",
    "skpaper.vision.l1_reconstruction",
    "skpaper.vision.swap_tokens",
    "skpaper.vision.token_noise_schedule",
    "skpaper.vision.train_contrastive_encoders",
    "skpaper.vision.train_landmark_detector",
})


def _public_submodule_objects(package_name, module):
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):
            yield from _public_submodule_objects(f"{package_name}.{name}", obj)
        elif inspect.isclass(obj) or inspect.isfunction(obj):
            yield f"{package_name}.{name}", obj


def _defined_in_skpaper(cls, name):
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass.__module__.startswith("skpaper.")
    return False


def _public_members(cls):
    for name in sorted(dir(cls)):
        if name.startswith("_") or not _defined_in_skpaper(cls, name):
            continue
        member = inspect.getattr_static(cls, name)
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if isinstance(member, property) or inspect.isfunction(member):
            yield name


def _public_objects():
    """Yield ``(qualified name, kind)`` of every checked object, once each."""
    packages = {}
    for family in FAMILIES:
        module = _family_module(family)
        if module is not None:
            packages[f"skpaper.{family}"] = module
    for extra in EXTRA_PACKAGES:
        packages[f"skpaper.{extra}"] = importlib.import_module(f"skpaper.{extra}")

    candidates = {}
    for name, cls in all_estimators():
        candidates.setdefault(id(cls), (cls, []))[1].append(
            f"skpaper.{cls.__module__.split('.')[1]}.{name}")
    for package_name, module in packages.items():
        for name, obj in _public_submodule_objects(package_name, module):
            if obj.__module__.startswith("skpaper."):
                candidates.setdefault(id(obj), (obj, []))[1].append(name)

    found = {}
    for obj, names in candidates.values():
        # A re-exported object is checked once, under the package that defines it.
        home = [n for n in names if obj.__module__.startswith(n.rsplit(".", 1)[0] + ".")]
        found[id(obj)] = (min(home or names), obj)

    for name, obj in sorted(found.values(), key=lambda item: item[0]):
        if inspect.isclass(obj):
            yield name, "class"
            for member in _public_members(obj):
                yield f"{name}.{member}", "method"
        else:
            yield name, "function"


OBJECTS = list(_public_objects())


def _resolve(qualified_name):
    parts = qualified_name.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            obj = inspect.getattr_static(obj, attribute)
        return obj
    raise ImportError(qualified_name)


def _errors(qualified_name, kind):
    """Return the numpydoc result and its errors that count for ``kind`` objects."""
    result = numpydoc_validation.validate(qualified_name)
    ignored = set(IGNORED_EVERYWHERE)
    if kind == "method":
        ignored |= set(IGNORED_ON_METHODS)
        # A property has no parameters to document and returns through its summary.
        if isinstance(_resolve(qualified_name), property):
            ignored |= {"PR01", "PR02", "RT01"}
    return result, [(code, message) for code, message in result["errors"]
                    if code not in ignored]


def _report(qualified_name, result, errors):
    lines = [f"{qualified_name} ({result['file']}:{result['file_line']})"]
    lines += [f"  {code}: {message}" for code, message in errors]
    return "\n".join(lines)


@pytest.mark.parametrize(
    "qualified_name, kind",
    [pytest.param(name, kind, marks=pytest.mark.xfail(
        strict=True, reason="docstring not yet numpydoc-valid")) if name in _PENDING
     else (name, kind) for name, kind in OBJECTS],
    ids=[name for name, _ in OBJECTS],
)
def test_docstring(qualified_name, kind):
    result, errors = _errors(qualified_name, kind)
    assert not errors, _report(qualified_name, result, errors)


def test_pending_names_exist():
    """Every pending entry names a checked object, so that stale entries are removed."""
    checked = {name for name, _ in OBJECTS}
    assert not sorted(_PENDING - checked)


def test_objects_cover_estimators_and_functions():
    """The enumeration reaches estimators, their methods and plain functions."""
    kinds = dict(OBJECTS)
    assert kinds["skpaper.bandits.Exp3"] == "class"
    assert kinds["skpaper.bandits.Exp3.fit"] == "method"
    assert kinds["skpaper.datasets.make_first_price_auction"] == "function"
    assert kinds["skpaper.multilabel.metrics.hamming_loss"] == "function"
    assert len(kinds) == len(OBJECTS)


if __name__ == "__main__":
    kinds = dict(OBJECTS)
    for target in sys.argv[1:]:
        result, errors = _errors(target, kinds.get(target, "function"))
        print(_report(target, result, errors) if errors else f"{target}: no errors")
