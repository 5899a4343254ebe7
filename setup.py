"""Cython extensions of skpaper; all other metadata lives in pyproject.toml."""

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

_DIRECTIVES = {
    "language_level": "3",
    "boundscheck": False,
    "wraparound": False,
    "initializedcheck": False,
    "cdivision": True,
}

# Shared inline hashing code: a change rebuilds every module, and the sdist ships it.
_DEPENDS = ["src_ext/_hashcore.pxd", "src_ext/_skhash.h"]

extensions = [
    Extension(
        "skpaper._ext._hashing",
        ["src_ext/_hashing.pyx"],
        include_dirs=[np.get_include(), "src_ext"],
        depends=_DEPENDS,
        extra_compile_args=["-O3"],
    ),
    # StringDType hashing needs the numpy 2 C API; the module is imported lazily.
    Extension(
        "skpaper._ext._strings",
        ["src_ext/_strings.pyx"],
        include_dirs=[np.get_include(), "src_ext"],
        depends=_DEPENDS,
        define_macros=[("NPY_TARGET_VERSION", "NPY_2_0_API_VERSION")],
        extra_compile_args=["-O3"],
    ),
    Extension(
        "skpaper._ext._bottomk",
        ["src_ext/_bottomk.pyx"],
        include_dirs=[np.get_include(), "src_ext"],
        depends=_DEPENDS,
        extra_compile_args=["-O3"],
    ),
]

setup(
    ext_modules=cythonize(
        extensions, compiler_directives=_DIRECTIVES, include_path=["src_ext"]
    )
)
