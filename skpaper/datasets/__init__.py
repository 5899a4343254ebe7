"""Synthetic data generators (``make_*``) and loaders of data shipped in packages (``load_*``).

Nothing here downloads. Each family keeps its generators in a private module
(``_sketch.py``, ``_independence.py``, ...) whose ``__all__`` is re-exported here.
Generators whose family needs torch return numpy arrays all the same.
"""

from . import (
    _adaptation,
    _bandits,
    _graph,
    _independence,
    _kg,
    _language,
    _multilabel,
    _representation,
    _reward,
    _semisupervised,
    _shape,
    _sketch,
    _tabular,
    _vision,
)
from ._adaptation import *  # noqa: F401,F403
from ._bandits import *  # noqa: F401,F403
from ._graph import *  # noqa: F401,F403
from ._independence import *  # noqa: F401,F403
from ._kg import *  # noqa: F401,F403
from ._language import *  # noqa: F401,F403
from ._multilabel import *  # noqa: F401,F403
from ._representation import *  # noqa: F401,F403
from ._reward import *  # noqa: F401,F403
from ._semisupervised import *  # noqa: F401,F403
from ._shape import *  # noqa: F401,F403
from ._sketch import *  # noqa: F401,F403
from ._tabular import *  # noqa: F401,F403
from ._vision import *  # noqa: F401,F403

__all__ = sorted(
    name
    for module in (
        _adaptation, _bandits, _graph, _independence, _kg, _language, _multilabel,
        _representation, _reward, _semisupervised, _shape, _sketch, _tabular, _vision,
    )
    for name in module.__all__
)
