"""Scoring modules of the temporal link predictors (tkbc-style tensor factorisations).

Every model scores a quadruple as a real inner product

    φ(s, r, o, t) = ⟨e_s ⊗ r_t, e_o⟩,

where ⊗ is the product of the model's algebra (complex numbers for ComplEx,
TNTComplEx and TeAST, quaternions for TeDS) taken coordinate-wise over ``rank``
coordinates, and r_t is a time-aware relation built by each model. Because right
multiplication by r_t has right multiplication by its conjugate as adjoint,
φ = ⟨e_s, e_o ⊗ r̄_t⟩ too, which scores head queries without reciprocal relations.

A table row stores its components block by block, [re | im] or [w | x | y | z],
each block ``rank`` wide; the algebra works on tuples of these blocks.
"""

import math

import torch
from torch import nn

from ._quaternion import hamilton_parts

__all__ = ["ComplExModule", "TeASTModule", "TeDSModule", "TNTComplExModule", "TKGModule"]


def complex_parts(a, b):
    """Complex product of (re, im) tuples of same-shape tensors."""
    a_re, a_im = a
    b_re, b_im = b
    return (a_re * b_re - a_im * b_im, a_re * b_im + a_im * b_re)


def _conjugate(parts):
    return (parts[0], *(-p for p in parts[1:]))


def _sq_modulus(parts):
    return sum(p * p for p in parts)


def _add(a, b):
    return tuple(x + y for x, y in zip(a, b))


def _table(n_rows, width, init_scale):
    return nn.Parameter(init_scale * torch.randn(n_rows, width))


class TKGModule(nn.Module):
    """Entity table and scoring shared by the link-prediction models.

    Subclasses set ``n_components`` (2 or 4) and implement :meth:`relation_time`.

    Parameters
    ----------
    n_entities, n_relations, n_timestamps : int
        Sizes of the tables (``n_relations`` already counts reciprocal relations).
    rank : int
        Number of complex or quaternion coordinates per embedding.
    init_scale : float
        Standard deviation of the Gaussian initialisation (tkbc's ``init_size``).
    """

    n_components = 2

    def __init__(self, n_entities, n_relations, n_timestamps, rank, init_scale):
        super().__init__()
        self.n_entities = int(n_entities)
        self.n_relations = int(n_relations)
        self.n_timestamps = int(n_timestamps)
        self.rank = int(rank)
        self.entity = _table(n_entities, rank * self.n_components, init_scale)

    def _split(self, x):
        return x.view(*x.shape[:-1], self.n_components, self.rank).unbind(-2)

    def _product(self, a, b):
        return complex_parts(a, b)

    def relation_time(self, r, t):
        """Time-aware relation r_t as a tuple of (batch, rank) components, and the
        squared moduli (batch, rank) of its parts for the N3 regulariser."""
        raise NotImplementedError

    def time_tables(self):
        """Timestamp tables (n_timestamps, rank * n_components) to smooth over time."""
        return []

    def temporal_smoothness(self):
        """Σ_t Σ_d ‖τ_{t+1,d} − τ_{t,d}‖³ / (T − 1) over every timestamp table (tkbc's
        Lambda3, with the complex or quaternion modulus of each coordinate)."""
        total = self.entity.new_zeros(())
        for table in self.time_tables():
            if table.shape[0] > 1:
                sq = _sq_modulus(self._split(table[1:] - table[:-1]))
                total = total + sq.pow(1.5).sum() / (table.shape[0] - 1)
        return total

    def query(self, head, r, t, inverse=False):
        """Query vectors e_head ⊗ r_t (or e_head ⊗ r̄_t when ``inverse``), flattened.

        Returns the (batch, rank * n_components) queries and the squared moduli of
        the relation parts.
        """
        rt, factors = self.relation_time(r, t)
        if inverse:
            rt = _conjugate(rt)
        return torch.cat(self._product(self._split(self.entity[head]), rt), dim=-1), factors

    def entity_sq_moduli(self, idx):
        """Squared modulus of each complex/quaternion coordinate of the entities ``idx``."""
        return _sq_modulus(self._split(self.entity[idx]))

    def forward(self, x, inverse=False):
        """Scores (batch, n_entities) of every candidate for queries ``x`` (batch, 4).

        ``inverse=False`` completes (s, r, ?, t); ``inverse=True`` completes
        (?, r, o, t) through the adjoint, reading the known entity from column 2.
        """
        head = x[:, 2] if inverse else x[:, 0]
        q, _ = self.query(head, x[:, 1], x[:, 3], inverse=inverse)
        return q @ self.entity.t()


class ComplExModule(TKGModule):
    """Static ComplEx: r_t = r, time ignored (Trouillon et al., 2016)."""

    def __init__(self, n_entities, n_relations, n_timestamps, rank, init_scale):
        super().__init__(n_entities, n_relations, n_timestamps, rank, init_scale)
        self.relation = _table(n_relations, 2 * rank, init_scale)

    def relation_time(self, r, t):
        rel = self._split(self.relation[r])
        return rel, [_sq_modulus(rel)]


class TNTComplExModule(TKGModule):
    """TNTComplEx: r_t = r ⊙ τ_t + r^{nt} (Lacroix et al., 2020)."""

    def __init__(self, n_entities, n_relations, n_timestamps, rank, init_scale):
        super().__init__(n_entities, n_relations, n_timestamps, rank, init_scale)
        self.relation = _table(n_relations, 2 * rank, init_scale)
        self.relation_static = _table(n_relations, 2 * rank, init_scale)
        self.time = _table(n_timestamps, 2 * rank, init_scale)

    def relation_time(self, r, t):
        temporal = complex_parts(self._split(self.relation[r]), self._split(self.time[t]))
        static = self._split(self.relation_static[r])
        return _add(temporal, static), [_sq_modulus(temporal), _sq_modulus(static)]

    def time_tables(self):
        return [self.time]


class TeASTModule(TKGModule):
    """TeAST: r_t = π r ⊙ τ_t + (1 + i)(sin|p_t| + i sin|p'_t|) (Li et al., 2023).

    The relation, scaled by π, is multiplied by a timestamp embedding and shifted
    by a per-timestamp phase term, as in the authors' code.
    """

    def __init__(self, n_entities, n_relations, n_timestamps, rank, init_scale):
        super().__init__(n_entities, n_relations, n_timestamps, rank, init_scale)
        self.relation = _table(n_relations, 2 * rank, init_scale)
        self.time = _table(n_timestamps, 2 * rank, init_scale)
        self.phase = _table(n_timestamps, 2 * rank, init_scale)

    def relation_time(self, r, t):
        rel = tuple(math.pi * p for p in self._split(self.relation[r]))
        p_re, p_im = (torch.sin(p.abs()) for p in self._split(self.phase[t]))
        rt = _add(complex_parts(rel, self._split(self.time[t])), (p_re - p_im, p_re + p_im))
        return rt, [_sq_modulus(rt)]

    def time_tables(self):
        return [self.time, self.phase]


class TeDSModule(TKGModule):
    """TeDS in quaternion space: synchronic and diachronic timestamps.

    Reconstructed from the paper's abstract (the body and code were not available):
    the swapped components of the composites, the angle schedule, the axis û and
    the composition are this library's choices, documented in
    :class:`~skpaper.kg.TeDSLinkPredictor`.

    Parameters
    ----------
    time_angle : {"linear", "learned"}
        Angle schedule of the diachronic quaternion: θ_t = π t / T, or
        θ_{t,d} = ω_d t / T + φ_d with learned ω (initialised at π) and φ (at 0).
    composition : {"sum", "product", "synchronic", "diachronic"}
        How the two perspectives form r_t (see :class:`~skpaper.kg.TeDSLinkPredictor`).
    """

    n_components = 4

    def __init__(self, n_entities, n_relations, n_timestamps, rank, init_scale,
                 time_angle="linear", composition="sum"):
        super().__init__(n_entities, n_relations, n_timestamps, rank, init_scale)
        self.time_angle = time_angle
        self.composition = composition
        self.relation = _table(n_relations, 4 * rank, init_scale)
        self.time = _table(n_timestamps, 4 * rank, init_scale)  # synchronic timestamps
        self.axis = nn.Parameter(torch.randn(3, rank))  # û_d, normalised when used
        if time_angle == "learned":
            self.omega = nn.Parameter(torch.full((rank,), math.pi))
            self.phi = nn.Parameter(torch.zeros(rank))

    def _product(self, a, b):
        return hamilton_parts(a, b)

    def diachronic(self, t):
        """Diachronic timestamp q_t = (cos θ, sin θ û) as a tuple of (batch, rank) parts."""
        position = t.to(self.axis.dtype).unsqueeze(-1) / self.n_timestamps
        if self.time_angle == "learned":
            theta = self.omega * position + self.phi
        else:
            theta = (math.pi * position).expand(-1, self.rank)
        sin = torch.sin(theta)
        unit = self.axis / torch.linalg.vector_norm(self.axis, dim=0).clamp_min(1e-12)
        return (torch.cos(theta), sin * unit[0], sin * unit[1], sin * unit[2])

    @staticmethod
    def synchronic(rel, tau):
        """r_syn = c₁ ⊗ c₂ with c₁ = (r_w, r_x, τ_y, τ_z) and c₂ = (τ_w, τ_x, r_y, r_z)."""
        return hamilton_parts((rel[0], rel[1], tau[2], tau[3]), (tau[0], tau[1], rel[2], rel[3]))

    def relation_time(self, r, t):
        rel = self._split(self.relation[r])
        if self.composition == "diachronic":
            rt = hamilton_parts(rel, self.diachronic(t))
        else:
            r_syn = self.synchronic(rel, self._split(self.time[t]))
            if self.composition == "synchronic":
                rt = r_syn
            elif self.composition == "product":
                rt = hamilton_parts(r_syn, self.diachronic(t))
            else:
                rt = _add(r_syn, hamilton_parts(rel, self.diachronic(t)))
        return rt, [_sq_modulus(rt)]

    def time_tables(self):
        return [self.time]
