"""Response-aligned rows (one entry per token of s[response_start:], trainer.py's alignment) as tensors: a whole
batch's as one table, and a micro-batch's at the columns of the logits that predict those tokens (response token t
is predicted at column t - 1)."""
import torch


def response_columns(idxs, T, lens, rs, rows, device):
    """[len(idxs), T-1]: the response-aligned rows[i] at the columns that predict s[rs[i]:]; 0 elsewhere and for null."""
    out = torch.zeros(len(idxs), T - 1, dtype=torch.float32)
    for r, i in enumerate(idxs):
        if lens[i] > rs[i]:
            out[r, rs[i] - 1:lens[i] - 1] = torch.tensor([0.0 if x is None else x for x in rows[i]], dtype=torch.float32)
    return out.to(device)


def response_table(rows, rlens, fill=0.0):
    """[N, max response length] float64 on the CPU from response-aligned rows (None → fill), and a 0/1 table of
    where a value was given."""
    R = max(rlens) if rlens else 0
    vals = torch.full((len(rlens), R), fill, dtype=torch.float64)
    given = torch.zeros(len(rlens), R, dtype=torch.float64)
    for i, row in enumerate(rows):
        if row:
            vals[i, :len(row)] = torch.tensor([fill if x is None else x for x in row], dtype=torch.float64)
            given[i, :len(row)] = torch.tensor([x is not None for x in row], dtype=torch.float64)
    return vals, given


def table_columns(idxs, T, lens, rs, table, device):
    """[len(idxs), T-1] float32 on device: rows of a response-aligned table at the columns predicting s[rs[i]:]."""
    out = torch.zeros(len(idxs), T - 1, dtype=torch.float32)
    for r, i in enumerate(idxs):
        n = lens[i] - rs[i]
        if n > 0:
            out[r, rs[i] - 1:lens[i] - 1] = table[i, :n].float()
    return out.to(device)
