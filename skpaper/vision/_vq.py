"""Vector quantization with a straight-through gradient, cosine lookup and dead-code reset.

The quantizer follows TiTok's ``VectorQuantizer`` [1]_ (the tokenizer used by
Lao Beyer et al. [2]_): nearest-code lookup, optionally on l2-normalised
vectors (``cosine=True``, TiTok's ``use_l2_norm``), a codebook loss and a
commitment loss weighted by ``beta``, and the straight-through estimator
``z + (q - z).detach()`` so that gradients reach the encoder (in training) or
the free tokens (in test-time optimisation).

Codebook initialisation from encoder outputs and the reset of unused codes are
not part of TiTok's quantizer; they are the usual remedies against codebook
collapse in small tokenizers and are marked as reconstructed where they are
used.

References
----------
.. [1] Q. Yu et al., "An Image is Worth 32 Tokens for Reconstruction and
   Generation", NeurIPS 2024.
.. [2] L. Lao Beyer, T. Li, X. Chen, S. Karaman and K. He, "Highly Compressed
   Tokenizer Can Generate Without Training", ICML 2025.
"""

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["VectorQuantizer"]


class VectorQuantizer(nn.Module):
    """Nearest-code vector quantizer over a learned codebook.

    Parameters
    ----------
    codebook_size : int
        Number of codes ``K``.
    token_dim : int
        Dimension ``d`` of each token and code.
    cosine : bool, default=True
        Look codes up by cosine similarity: tokens and codes are
        l2-normalised before the lookup and the quantized vectors are unit
        vectors (TiTok's ``use_l2_norm``).
    beta : float, default=0.25
        Weight of the commitment loss ``beta * ||sg(q) - z||^2``.
    """

    def __init__(self, codebook_size, token_dim, cosine=True, beta=0.25):
        super().__init__()
        self.codebook_size = int(codebook_size)
        self.token_dim = int(token_dim)
        self.cosine = bool(cosine)
        self.beta = float(beta)
        self.embedding = nn.Parameter(
            torch.empty(self.codebook_size, self.token_dim).uniform_(
                -1.0 / self.codebook_size, 1.0 / self.codebook_size
            )
        )

    def prepare(self, z):
        """Map free tokens to the space the decoder sees (unit sphere when ``cosine``)."""
        return F.normalize(z, dim=-1) if self.cosine else z

    def codes(self):
        """The code vectors as the decoder sees them, shape ``(K, d)``."""
        return self.prepare(self.embedding)

    def lookup(self, z):
        """Index of the nearest code for each token of ``z`` (shape ``(..., d)``)."""
        flat = self.prepare(z).reshape(-1, self.token_dim)
        codes = self.codes()
        # Squared distances without forming the (N, K, d) difference tensor.
        dist = (
            flat.pow(2).sum(1, keepdim=True)
            - 2.0 * flat @ codes.T
            + codes.pow(2).sum(1)
        )
        return dist.argmin(dim=1).reshape(z.shape[:-1])

    def embed(self, indices):
        """Code vectors of integer ``indices`` (any shape), with a trailing ``d`` axis."""
        return self.codes()[indices]

    def forward(self, z):
        """Quantize ``z`` of shape ``(..., d)``.

        Returns
        -------
        z_q : Tensor
            Quantized vectors carrying the straight-through gradient of ``z``.
        indices : LongTensor
            Code index of each token.
        loss : Tensor
            Codebook loss plus ``beta`` times the commitment loss.
        """
        indices = self.lookup(z)
        q = self.embed(indices)
        z_prep = self.prepare(z)
        loss = F.mse_loss(q, z_prep.detach()) + self.beta * F.mse_loss(z_prep, q.detach())
        return z_prep + (q - z_prep).detach(), indices, loss

    @torch.no_grad()
    def init_from(self, vectors, generator):
        """Set every code to a randomly drawn row of ``vectors`` (shape ``(N, d)``).

        Reconstructed: TiTok initialises its codebook uniformly at random; a
        data-dependent start keeps a small codebook from collapsing.
        """
        idx = torch.randint(vectors.shape[0], (self.codebook_size,), generator=generator)
        self.embedding.copy_(self._jitter(vectors[idx.to(vectors.device)], generator))

    @torch.no_grad()
    def reset_codes(self, dead, vectors, generator):
        """Re-initialise the codes flagged in boolean ``dead`` from rows of ``vectors``.

        Returns the number of codes reset.
        """
        n_dead = int(dead.sum())
        if n_dead == 0:
            return 0
        idx = torch.randint(vectors.shape[0], (n_dead,), generator=generator)
        self.embedding[dead] = self._jitter(vectors[idx.to(vectors.device)], generator)
        return n_dead

    def _jitter(self, rows, generator):
        # Duplicated rows would tie forever; a tiny perturbation separates them.
        scale = 1e-3 * (rows.detach().std() + 1e-8)
        noise = torch.randn(rows.shape, generator=generator).to(rows.device, rows.dtype)
        return rows + scale * noise
