"""
Checking request params. Every check raises RpcError("bad_request", "<field>: <what is wrong>"), so the caller reads
which field to fix; the error types of the protocol are listed in trainer.py's docstring.
"""
import math


class RpcError(Exception):
    """A failure that becomes an error response {"type": type_, "message": message}."""

    def __init__(self, type_, message):
        super().__init__(message)
        self.type = type_


def bad(field, msg):
    return RpcError("bad_request", f"{field}: {msg}")


def get_int(params, name, default=None, lo=None):
    v = params.get(name, default)
    if v is None:
        if default is None and name not in params:
            raise bad(name, "required")
        return v
    if isinstance(v, bool) or not isinstance(v, int):
        raise bad(name, f"expected an integer, got {type(v).__name__}")
    if lo is not None and v < lo:
        raise bad(name, f"must be >= {lo}")
    return v


def get_num(params, name, default=None, required=False):
    v = params.get(name, default)
    if v is None:
        if required:
            raise bad(name, "required")
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise bad(name, f"expected a number, got {type(v).__name__}")
    return float(v)


def get_vocab(params):
    vocab = params.get("vocab")
    if not isinstance(vocab, list) or len(vocab) < 2 or not all(isinstance(v, str) for v in vocab):
        raise bad("vocab", "expected an array of at least 2 strings")
    return vocab


MODEL_FIELDS = {"arch": str, "n_layer": int, "n_head": int, "n_kv_head": int, "n_embd": int, "block_size": int,
                "intermediate_size": int, "rope_theta": float, "init_std": float, "qk_norm_gain": float}


def get_model_config(params, vocab):
    """params["model"]: the sizes of a model to build from scratch (hf_model.make_config's arguments)."""
    mc = params.get("model", {})
    if not isinstance(mc, dict):
        raise bad("model", "expected an object {arch, n_layer, n_head, n_kv_head, n_embd, block_size, ...}")
    out = {}
    for k, v in mc.items():
        if k == "vocab_size":
            if v != len(vocab):
                raise bad("model.vocab_size", f"{v} != len(vocab) {len(vocab)}")
            continue
        if k not in MODEL_FIELDS:
            raise bad(f"model.{k}", "unknown field")
        if MODEL_FIELDS[k] is str:
            if v not in ("qwen3", "qwen2", "llama"):
                raise bad("model.arch", "expected qwen3, qwen2 or llama")
            out[k] = v
        elif MODEL_FIELDS[k] is int:
            out[k] = get_int(mc, k, lo=1)
        else:
            out[k] = get_num(mc, k, required=True)
    out.setdefault("block_size", 512)
    n_embd, n_head = out.get("n_embd", 64), out.get("n_head", 4)
    if n_embd % n_head:
        raise bad("model.n_head", "must divide n_embd")
    if "n_kv_head" in out and n_head % out["n_kv_head"]:
        raise bad("model.n_kv_head", "must divide n_head")
    return out


def get_sequences(params, vocab_size, block_size, name="sequences"):
    seqs = params.get(name)
    if not isinstance(seqs, list) or len(seqs) == 0:
        raise bad(name, "expected a non-empty array of token-id arrays")
    for i, s in enumerate(seqs):
        if not isinstance(s, list) or len(s) < 2:
            raise bad(f"{name}[{i}]", "expected an array of at least 2 token ids")
        if len(s) > block_size:
            raise bad(f"{name}[{i}]", f"length {len(s)} exceeds block_size {block_size}")
        # One pass of C-level checks per row (every step checks thousands of ids); the slow loop only finds the culprit.
        if set(map(type, s)) == {int} and min(s) >= 0 and max(s) < vocab_size:
            continue
        for j, t in enumerate(s):
            if isinstance(t, bool) or not isinstance(t, int) or t < 0 or t >= vocab_size:
                raise bad(f"{name}[{i}][{j}]", f"token id {t!r} not an integer in [0, {vocab_size})")
    return seqs


def get_aligned(params, name, lengths, kind, required=True, allow_null=False):
    """An array of arrays with row i of length lengths[i]; kind 'mask' (0/1) or 'num'."""
    rows = params.get(name)
    if rows is None:
        if required:
            raise bad(name, "required")
        return None
    if not isinstance(rows, list) or len(rows) != len(lengths):
        raise bad(name, f"expected an array of {len(lengths)} arrays")
    for i, (r, n) in enumerate(zip(rows, lengths)):
        if not isinstance(r, list) or len(r) != n:
            raise bad(f"{name}[{i}]", f"expected an array of length {n}")
        if _row_ok(r, kind, allow_null):
            continue
        for j, v in enumerate(r):
            if kind == "mask":
                if v not in (0, 1) or isinstance(v, float) and not v.is_integer():
                    raise bad(f"{name}[{i}][{j}]", f"expected 0 or 1, got {v!r}")
            else:
                if v is None and allow_null:
                    continue
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise bad(f"{name}[{i}][{j}]", f"expected a finite number, got {v!r}")
    return rows


def _row_ok(row, kind, allow_null):
    """The whole row valid, by C-level passes (the per-value loop of get_aligned then only runs to name a culprit)."""
    if kind == "mask":
        try:
            return set(row) <= {0, 1}  # 1.0 and True equal 1, as the per-value check accepts them
        except TypeError:  # an unhashable value (a list): the per-value check names it
            return False
    types = set(map(type, row))
    if allow_null and type(None) in types:
        types.discard(type(None))
        row = [v for v in row if v is not None]
    return types <= {int, float} and all(map(math.isfinite, row))


def get_response_start(params, lengths, required):
    rs = params.get("response_start")
    if rs is None:
        if required:
            raise bad("response_start", "required")
        return None
    if not isinstance(rs, list) or len(rs) != len(lengths):
        raise bad("response_start", f"expected an array of {len(lengths)} integers")
    for i, (r, n) in enumerate(zip(rs, lengths)):
        if isinstance(r, bool) or not isinstance(r, int) or r < 1 or r > n:
            raise bad(f"response_start[{i}]", f"expected an integer in [1, {n}], got {r!r}")
    return rs


def get_old_logprobs(params, lengths, response_mask):
    """Response-aligned rollout log-probs; null only where the token is not trained on (mask 0)."""
    old = get_aligned(params, "old_logprobs", lengths, "num", allow_null=True)
    for i, (mrow, orow) in enumerate(zip(response_mask, old)):
        for j, (m, o) in enumerate(zip(mrow, orow)):
            if m and o is None:
                raise bad(f"old_logprobs[{i}][{j}]", "null where response_mask is 1")
    return old


def get_advantages(params, n):
    adv = params.get("advantages")
    if not isinstance(adv, list) or len(adv) != n:
        raise bad("advantages", f"expected an array of {n} numbers")
    for i, a in enumerate(adv):
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a):
            raise bad(f"advantages[{i}]", f"expected a finite number, got {a!r}")
    return adv


def get_clip(params):
    """(eps_low, eps_high, dual_clip or None) of the clipped surrogate (losses.policy_loss)."""
    eps_low = get_num(params, "eps_low", 0.2)
    eps_high = get_num(params, "eps_high", 0.28)
    if not (0 <= eps_low < 1):
        raise bad("eps_low", "expected a number in [0, 1)")
    if eps_high < 0:
        raise bad("eps_high", "expected a number >= 0")
    dual = get_num(params, "dual_clip", None)
    if dual is not None and dual <= 1:
        raise bad("dual_clip", "expected a number > 1 (or null)")
    return eps_low, eps_high, dual


def get_rollout_logprobs(params, lengths):
    """The engine's response-aligned log-probs (π_rollout, for TIS); null wherever the engine gave none. Absent: none."""
    return get_aligned(params, "rollout_logprobs", lengths, "num", required=False, allow_null=True)


TIS_MODES = ("off", "token", "sequence", "mask")


def get_tis(params):
    """(mode, cap) of the train–inference mismatch correction (losses.tis_weights): default token-level, C = 2."""
    mode = params.get("tis_mode", "token")
    if mode not in TIS_MODES:
        raise bad("tis_mode", f"expected one of {', '.join(TIS_MODES)}, got {mode!r}")
    cap = get_num(params, "tis_cap", 2.0)
    if not cap > 1:
        raise bad("tis_cap", "expected a number > 1")
    return mode, cap
