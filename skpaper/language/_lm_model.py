"""The tiny causal language model and the scoring helpers shared by trainers.

:class:`TinyCausalLM` is a pre-LayerNorm GPT-style ``nn.Module`` built from
:class:`skpaper.nn.TransformerBlock`; :func:`lm_logits` reads the logits of our
modules and of Hugging Face causal LMs alike; :func:`pad_sequences`,
:func:`token_log_probs` and :func:`sequence_log_probs` score right-padded
sequences. In a causal model a token never attends to later positions, so
right padding leaves every real position's logits exact and no attention mask
is needed.
"""

from numbers import Integral

import torch
from torch import nn

from ..nn._laurel import LAUREL_VARIANTS
from ..nn._transformer import TransformerBlock
from ..utils._docstring import Substitution

__all__ = [
    "TinyCausalLM",
    "lm_logits",
    "pad_sequences",
    "sequence_log_probs",
    "token_log_probs",
    "trim_to_targets",
]

#: Docstring pieces of the network parameters, shared with the estimators that
#: build a :class:`TinyCausalLM` (filled by ``Substitution``).
_MODEL_DOCS = {
    "n_layers": """
        n_layers : int, default=2
            Number of transformer blocks.""",
    "d_model": """
        d_model : int, default=64
            Width of the token embeddings and of the residual stream; a
            multiple of ``n_heads``.""",
    "n_heads": """
        n_heads : int, default=4
            Number of attention heads.""",
    "d_ff": """
        d_ff : int or None, default=None
            Hidden width of the MLP (``4 d_model`` when None).""",
    "dropout": """
        dropout : float, default=0.0
            Dropout rate of the embeddings and of every sub-block during
            training.""",
    "residual": """
        residual : {"standard", "rw", "lr", "pa", "rw+lr", "rw+lr+pa"}, default="standard"
            Residual connection of every sub-block: plain ``x + f(x)``, or a
            LAuReL variant (:class:`skpaper.nn.LaurelResidual`).""",
    "laurel_rank": """
        laurel_rank : int, default=8
            Rank of the LAuReL low-rank maps (unused by ``"standard"`` and
            ``"rw"``).""",
}


@Substitution(**_MODEL_DOCS)
class TinyCausalLM(nn.Module):
    """A small GPT-style decoder-only transformer returning next-token logits.

    Token and learned position embeddings, ``n_layers`` pre-LayerNorm
    :class:`skpaper.nn.TransformerBlock` blocks (causal multi-head
    self-attention, then a GELU MLP), a final LayerNorm and a linear head tied
    to the token embedding. Each of the ``2 n_layers`` sub-blocks joins the
    residual stream through a :class:`skpaper.nn.LaurelResidual`, so
    ``residual`` selects the plain ``x + f(x)`` (``"standard"``) or a LAuReL
    variant.

    Parameters
    ----------
    vocab_size : int
        Number of token ids (rows of the embedding table).
    {n_layers}
    {d_model}
    {n_heads}
    {d_ff}
    max_len : int, default=256
        Longest sequence the position table covers.
    {dropout}
    {residual}
    {laurel_rank}

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import TinyCausalLM
    >>> lm = TinyCausalLM(10, n_layers=1, d_model=16, n_heads=2, max_len=8)
    >>> lm(torch.zeros(3, 5, dtype=torch.long)).shape
    torch.Size([3, 5, 10])
    """

    def __init__(self, vocab_size, *, n_layers=2, d_model=64, n_heads=4, d_ff=None, max_len=256,
                 dropout=0.0, residual="standard", laurel_rank=8):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("n_layers", n_layers),
                            ("d_model", d_model), ("n_heads", n_heads), ("max_len", max_len),
                            ("laurel_rank", laurel_rank)):
            if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}.")
        if d_model % n_heads:
            raise ValueError(
                f"d_model must be a multiple of n_heads, got d_model={d_model}, n_heads={n_heads}."
            )
        if residual not in LAUREL_VARIANTS:
            raise ValueError(f"residual must be one of {LAUREL_VARIANTS}, got {residual!r}.")
        d_ff = 4 * d_model if d_ff is None else int(d_ff)
        self.vocab_size, self.max_len = int(vocab_size), int(max_len)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_len, d_model)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(d_model, n_heads, d_ff=d_ff, causal=True, dropout=dropout,
                             residual=residual, laurel_rank=laurel_rank)
            for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.apply(self._init_weights)
        self.head.weight = self.tok_emb.weight
        for block in self.blocks:
            for sublayer in block.sublayers:
                sublayer.residual.reset_parameters()

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, input_ids):
        """Compute the next-token logits of every position.

        Parameters
        ----------
        input_ids : torch.LongTensor of shape (batch, length)
            Token ids, ``length <= max_len``.

        Returns
        -------
        logits : torch.Tensor of shape (batch, length, vocab_size)
            At position ``t``, the logits of the token ``t + 1``.
        """
        length = input_ids.shape[1]
        if length > self.max_len:
            raise ValueError(
                f"input_ids has length {length}, but TinyCausalLM is expecting at most "
                f"max_len={self.max_len} tokens."
            )
        positions = torch.arange(length, device=input_ids.device)
        x = self.drop(self.tok_emb(input_ids) + self.pos_emb(positions))
        history = []
        for block in self.blocks:
            x = block(x, history)
        return self.head(self.norm(x))

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # Until the blocks were TransformerBlocks, the 2 n_layers residual branches
        # were one flat stack, "blocks.layers.{k}", with an unnested MLP.
        head = prefix + "blocks.layers."
        for key in [k for k in state_dict if k.startswith(head)]:
            index, _, rest = key[len(head):].partition(".")
            layer, branch = divmod(int(index), 2)
            if branch == 1:
                for old, new in (("block.1.", "block.1.0."), ("block.3.", "block.1.2.")):
                    if rest.startswith(old):
                        rest = new + rest[len(old):]
                        break
            state_dict[f"{prefix}blocks.{layer}.sublayers.{branch}.{rest}"] = state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)


def lm_logits(model, input_ids):
    """Return the logits of a causal LM: a tensor, or the ``.logits`` of its output.

    Parameters
    ----------
    model : torch.nn.Module
        A causal LM returning logits (as :class:`TinyCausalLM`) or an output
        object with ``.logits`` (as Hugging Face causal LMs).
    input_ids : torch.LongTensor of shape (batch, length)
        Token ids.

    Returns
    -------
    logits : torch.Tensor of shape (batch, length, vocab_size)
        The model's next-token logits.

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import TinyCausalLM, lm_logits
    >>> lm = TinyCausalLM(10, n_layers=1, d_model=8, n_heads=2, max_len=8)
    >>> lm_logits(lm, torch.zeros(2, 4, dtype=torch.long)).shape
    torch.Size([2, 4, 10])
    """
    out = model(input_ids)
    return getattr(out, "logits", out)


def pad_sequences(sequences, pad_id=0, device="cpu", loss_starts=None):
    """Right-pad token-id lists into a tensor and the mask of the positions to score.

    Parameters
    ----------
    sequences : list of list of int
        Token ids of each sequence (at least one token each).
    pad_id : int, default=0
        Id written after the end of the shorter sequences.
    device : str or torch.device, default="cpu"
        Device of the returned tensors.
    loss_starts : list of int or None, default=None
        Per sequence, the index of the first token that is a target (the
        prompt before it is context only). None scores every token but the
        first.

    Returns
    -------
    ids : torch.LongTensor of shape (n, max_length)
        The sequences, right-padded with ``pad_id``.
    mask : torch.BoolTensor of shape (n, max_length - 1)
        ``mask[i, t]`` says whether the prediction of ``ids[i, t + 1]`` (from
        position ``t``) is a target: padding and prompt tokens are excluded.

    Examples
    --------
    >>> from skpaper.language import pad_sequences
    >>> ids, mask = pad_sequences([[1, 5, 6, 2], [1, 7]], loss_starts=[2, 1])
    >>> ids.tolist(), mask.int().tolist()
    ([[1, 5, 6, 2], [1, 7, 0, 0]], [[0, 1, 1], [1, 0, 0]])
    """
    n = len(sequences)
    if n == 0:
        raise ValueError("sequences must hold at least one sequence, got an empty list.")
    lengths = [len(s) for s in sequences]
    if min(lengths) < 1:
        raise ValueError("every sequence must hold at least one token.")
    width = max(lengths)
    ids = torch.full((n, width), int(pad_id), dtype=torch.long)
    for i, seq in enumerate(sequences):
        ids[i, :len(seq)] = torch.as_tensor(seq, dtype=torch.long)
    starts = torch.ones(n, dtype=torch.long) if loss_starts is None \
        else torch.as_tensor(loss_starts, dtype=torch.long).clamp(min=1)
    target_pos = torch.arange(1, width).unsqueeze(0)
    lengths = torch.as_tensor(lengths).unsqueeze(1)
    mask = (target_pos < lengths) & (target_pos >= starts.unsqueeze(1))
    return ids.to(device), mask.to(device)


def trim_to_targets(ids, mask):
    """Cut right-padded rows after their last target: ``(ids, mask)`` of :func:`pad_sequences`.

    Keeps the columns up to the last position any row scores (at least two
    tokens), so that a batch of short sequences does not run over the padding
    of the longest sequence in the data.
    """
    width = int(mask.any(0).nonzero().max()) + 2 if bool(mask.any()) else 2
    return ids[:, :width], mask[:, :width - 1]


def token_log_probs(logits, ids):
    """Return the log-probability of each next token: ``log q(ids[:, t+1] | ids[:, :t+1])``.

    Parameters
    ----------
    logits : torch.Tensor of shape (batch, length, vocab)
        Next-token logits of every position (half precision is computed in
        float32).
    ids : torch.LongTensor of shape (batch, length)
        The token ids the logits were computed on.

    Returns
    -------
    log_probs : torch.Tensor of shape (batch, length - 1)
        ``log_probs[:, t]`` is the log-probability of ``ids[:, t + 1]``.

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import token_log_probs
    >>> logits = torch.zeros(1, 3, 4)  # uniform over 4 tokens
    >>> token_log_probs(logits, torch.tensor([[0, 1, 2]])).exp()
    tensor([[0.2500, 0.2500]])
    """
    logits = logits[:, :-1]
    if logits.dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()
    logp = torch.log_softmax(logits, dim=-1)
    return logp.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)


@torch.no_grad()
def sequence_log_probs(model, sequences, loss_starts=None, *, pad_id=0, batch_size=256):
    """Return the sum of the target tokens' log-probabilities under ``model``, per sequence.

    Parameters
    ----------
    model : torch.nn.Module
        A causal LM (logits, or an output with ``.logits``).
    sequences : list of list of int
        Prompt followed by response, for each sequence.
    loss_starts : list of int or None, default=None
        Index of the first scored token of each sequence (the response start);
        None scores every token but the first.
    pad_id : int, default=0
        Id used to right-pad the sequences of a batch.
    batch_size : int, default=256
        Sequences scored per forward pass.

    Returns
    -------
    log_prob_sums : ndarray of shape (n,)
        :math:`\\sum_t \\log q(x_t \\mid x_{<t})` over the scored tokens (float64).
    n_tokens : ndarray of shape (n,)
        Number of scored tokens.

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import TinyCausalLM, sequence_log_probs
    >>> lm = TinyCausalLM(6, n_layers=1, d_model=8, n_heads=2, max_len=8)
    >>> sums, counts = sequence_log_probs(lm, [[1, 4, 5, 2], [1, 3]], [2, 1])
    >>> counts.tolist()
    [2, 1]
    """
    device = next(model.parameters()).device
    starts = [1] * len(sequences) if loss_starts is None else list(loss_starts)
    sums, counts = [], []
    for lo in range(0, len(sequences), int(batch_size)):
        ids, mask = pad_sequences(sequences[lo:lo + batch_size], pad_id, device,
                                  starts[lo:lo + batch_size])
        logp = token_log_probs(lm_logits(model, ids).double(), ids)
        sums.append((logp * mask).sum(1).cpu())
        counts.append(mask.sum(1).cpu())
    return torch.cat(sums).numpy(), torch.cat(counts).numpy()
