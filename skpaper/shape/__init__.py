"""3D shape orientation estimation robust to symmetries (Scarvelis et al., ICML 2025).

Stage 1 (:class:`QuotientOrienter`, or the :class:`PCAOrienter` baseline)
estimates a shape's orientation modulo the 24 cube rotations; stage 2
(:class:`OctahedralFlipper`) resolves which cube rotation; :class:`TwoStageOrienter`
chains them. Rotation helpers are exact numpy.
"""

from ._base import apply_rotation, check_point_clouds
from ._flipper import OctahedralFlipper, flip_confusion_distances, octahedral_cayley_table
from ._orienter import PCAOrienter, QuotientOrienter, octahedral_medoid
from ._rotations import (
    angle_modulo_group,
    axis_angle_to_matrix,
    axis_errors,
    geodesic_distance,
    matrix_to_quaternion,
    nearest_group_element,
    octahedral_group,
    quaternion_to_matrix,
    random_rotations,
    random_small_rotations,
    special_procrustes,
    top_k_axis_errors,
    up_axis_accuracy,
)
from ._two_stage import TwoStageOrienter

__all__ = [
    "OctahedralFlipper",
    "PCAOrienter",
    "QuotientOrienter",
    "TwoStageOrienter",
    "angle_modulo_group",
    "apply_rotation",
    "axis_angle_to_matrix",
    "axis_errors",
    "check_point_clouds",
    "flip_confusion_distances",
    "geodesic_distance",
    "matrix_to_quaternion",
    "nearest_group_element",
    "octahedral_cayley_table",
    "octahedral_group",
    "octahedral_medoid",
    "quaternion_to_matrix",
    "random_rotations",
    "random_small_rotations",
    "special_procrustes",
    "top_k_axis_errors",
    "up_axis_accuracy",
]
