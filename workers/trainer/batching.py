"""Micro-batches for a request's sequences (trainer.py): similar lengths together, sized by rows or by a token
budget, shared out over the ranks so that every rank runs the same number of forward/backward rounds (FSDP's
all-gathers are collectives), and padded into the model's input tensors."""
import math

import torch

import dist
from validation import get_int


# A round's logits, their log-softmax and its gradient are each rows × length × vocabulary floats, beside what every
# layer keeps for the backward pass. A request that sets no token budget gets the one that keeps one such tensor
# within LOGITS_BYTES: 5,461 tokens for a 49,152-token vocabulary, where 32 rollouts of ~600 tokens in one round took
# the trainer past 19 GB and out of a 24 GB machine (with the budget its RL steps peak at 14-17 GB: the layers' ~1.2 MB
# a token dominate); a character vocabulary's budget is far above any batch (one round, as before).
LOGITS_BYTES = 1 << 30


def default_token_budget(vocab_size):
    """The token budget of a request that sets none: one round's float32 logits within LOGITS_BYTES."""
    return max(1, LOGITS_BYTES // (4 * vocab_size)) if vocab_size else None


def micro_batches(n, lengths, p, vocab_size=None):
    """This rank's micro-batches (lists of sequence indices, similar lengths together: less padding), sized by
    micro_batch (rows) and micro_batch_tokens (rows × padded length; default_token_budget when not given), and the
    number every rank runs. Losses divide by the whole batch's token count, so the rounds add up to one batch."""
    mb = get_int(p, "micro_batch", n, lo=1)
    budget = (get_int(p, "micro_batch_tokens", None, lo=1) if p.get("micro_batch_tokens") is not None
              else default_token_budget(vocab_size))
    order = sorted(range(n), key=lambda i: lengths[i])
    batches, cur = [], []
    for i in order:
        if cur and (len(cur) >= mb or (budget and (len(cur) + 1) * lengths[i] > budget)):
            batches.append(cur)
            cur = []
        cur.append(i)
    batches.append(cur)
    mine = batches[dist.RANK::dist.WORLD] if dist.sharded() else batches
    rounds = math.ceil(len(batches) / dist.WORLD) if dist.sharded() else len(batches)
    return mine, rounds


def rounds(n, lengths, p, vocab_size=None):
    """(indices, weight) per forward/backward this rank runs: its micro-batches, then zero-weight repeats of its
    first (or of sequence 0) until every rank has run as many."""
    mine, count = micro_batches(n, lengths, p, vocab_size)
    filler = mine[0] if mine else [0]
    return [(b, 1.0) for b in mine] + [(filler, 0.0)] * (count - len(mine))


def pad(seqs, idxs, device):
    """The rows idxs of seqs, right-padded with 0, with their attention mask and padded length, on device."""
    rows = [torch.tensor(seqs[i], dtype=torch.long) for i in idxs]
    ids = torch.nn.utils.rnn.pad_sequence(rows, batch_first=True)
    T = ids.shape[1]
    lens = torch.tensor([len(r) for r in rows])
    attn = (torch.arange(T)[None, :] < lens[:, None]).float()
    return ids.to(device), attn.to(device), T
