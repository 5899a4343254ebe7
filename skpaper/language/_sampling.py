"""Sampling from causal language models (temperature, nucleus, no KV cache).

Prompts of different lengths are sampled in groups of equal length, so that no
padding enters the context.
"""

import torch

from ._lm_model import lm_logits

__all__ = ["sample_responses"]


def _top_p_filter(probs, top_p):
    """Zero the tail outside the smallest set of tokens holding ``top_p`` of the mass."""
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    cumulative = sorted_probs.cumsum(-1)
    # Keep a token when the mass strictly before it is below top_p (the top token always stays).
    keep_sorted = (cumulative - sorted_probs) < top_p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    probs = probs * keep
    return probs / probs.sum(-1, keepdim=True)


@torch.no_grad()
def sample_responses(model, prompts, *, max_new_tokens, temperature=1.0, top_p=1.0, eos_id=None,
                     generator=None, batch_size=512, max_len=None):
    """Sample a continuation of each prompt from a causal LM (no KV cache).

    Every step re-runs the model on the whole sequence, which is simple and
    exact for any model returning logits, and cheap at the sizes used here.
    Prompts are grouped by length so that no padding enters the context.

    Parameters
    ----------
    model : torch.nn.Module
        Maps ids ``(batch, length)`` to logits (or an output with ``.logits``).
    prompts : list of list of int
        Non-empty prompts (with their ``<bos>``).
    max_new_tokens : int
        Most tokens generated per prompt.
    temperature : float, default=1.0
        Softmax temperature; ``0`` takes the most likely token (greedy).
    top_p : float, default=1.0
        Nucleus sampling: sample within the smallest set of tokens whose
        probability reaches ``top_p``.
    eos_id : int or None, default=None
        A row stops after generating this token (it is kept).
    generator : torch.Generator or None, default=None
        CPU generator for the draws; sampling happens on the CPU so that the
        same seed gives the same text on every device.
    batch_size : int, default=512
        Most prompts (of one length) run through the model together.
    max_len : int or None, default=None
        Context window: only the last ``max_len`` tokens are fed to the model.

    Returns
    -------
    responses : list of list of int
        The generated ids, in the order of ``prompts``.

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import TinyCausalLM, sample_responses
    >>> lm = TinyCausalLM(6, n_layers=1, d_model=8, n_heads=2, max_len=8)
    >>> out = sample_responses(lm, [[1, 4], [1]], max_new_tokens=3,
    ...                        generator=torch.Generator().manual_seed(0))
    >>> [len(r) for r in out]
    [3, 3]
    """
    if not 0.0 < float(top_p) <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}.")
    if float(temperature) < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature!r}.")
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    responses = [None] * len(prompts)
    groups = {}
    for i, prompt in enumerate(prompts):
        if len(prompt) == 0:
            raise ValueError(f"prompts[{i}] is empty; start prompts with a <bos> token.")
        groups.setdefault(len(prompt), []).append(i)
    for length in sorted(groups):
        members = groups[length]
        for start in range(0, len(members), batch_size):
            rows = members[start:start + batch_size]
            ids = torch.as_tensor([prompts[i] for i in rows], dtype=torch.long, device=device)
            done = torch.zeros(len(rows), dtype=torch.bool)
            new = []
            for _ in range(int(max_new_tokens)):
                context = ids if max_len is None else ids[:, -int(max_len):]
                logits = lm_logits(model, context)[:, -1].float().cpu()
                if temperature == 0:
                    nxt = logits.argmax(-1)
                else:
                    probs = torch.softmax(logits / float(temperature), dim=-1)
                    if top_p < 1.0:
                        probs = _top_p_filter(probs, float(top_p))
                    nxt = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
                if eos_id is not None:
                    nxt = torch.where(done, torch.as_tensor(int(eos_id)), nxt)
                    done |= nxt == int(eos_id)
                new.append(nxt)
                ids = torch.cat([ids, nxt.to(device).unsqueeze(1)], dim=1)
                if eos_id is not None and bool(done.all()):
                    break
            gen = torch.stack(new, 1).tolist() if new else [[] for _ in rows]
            for i, row in zip(rows, gen):
                if eos_id is not None and int(eos_id) in row:
                    row = row[:row.index(int(eos_id)) + 1]
                responses[i] = row
    model.train(was_training)
    return responses
