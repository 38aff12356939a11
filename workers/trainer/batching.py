"""Micro-batches for a request's sequences (trainer.py): similar lengths together, sized by rows or by a token
budget, shared out over the ranks so that every rank runs the same number of forward/backward rounds (FSDP's
all-gathers are collectives), and padded into the model's input tensors."""
import math

import torch

import dist
from validation import get_int


def micro_batches(n, lengths, p):
    """This rank's micro-batches (lists of sequence indices, similar lengths together: less padding), sized by
    micro_batch (rows) and micro_batch_tokens (rows × padded length), and the number every rank runs."""
    mb = get_int(p, "micro_batch", n, lo=1)
    budget = get_int(p, "micro_batch_tokens", None, lo=1) if p.get("micro_batch_tokens") is not None else None
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


def rounds(n, lengths, p):
    """(indices, weight) per forward/backward this rank runs: its micro-batches, then zero-weight repeats of its
    first (or of sequence 0) until every rank has run as many."""
    mine, count = micro_batches(n, lengths, p)
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
