"""
A small decoder-only transformer (nanoGPT-style), readable in one sitting.

- Token embeddings + positions, either learned absolute embeddings or rotary embeddings (RoPE, applied to queries
  and keys; the default for the embedded model, because copying numbers from the problem into code and from the
  tool output into the answer needs relative-position heads, which RoPE makes easy to learn). Positions are passed
  in explicitly, so a caller that pads or batches requests of different lengths controls each token's position.
- Pre-LayerNorm blocks: x + attn(ln(x)), x + mlp(ln(x)).
- Causal self-attention that takes and returns a key/value cache, so the same forward() does the prompt
  (prefill: seq = prompt length, empty past) and one-token decode (seq = 1, past = everything so far).
- The output projection shares its weight with the token embedding.

Runs on PyTorch 1.13 and 2.x (no scaled_dot_product_attention, no 2.x-only APIs).
"""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    vocab_size: int = 96
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64
    block_size: int = 128
    init_std: float = 0.02
    pos_emb: str = "learned"  # "learned" | "rope"

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    def to_dict(self) -> dict:
        return asdict(self)


# Added to the attention scores of masked keys. Finite (not -inf) so a row can never turn into NaN; exp() of it
# underflows to exactly 0 in float32.
MASK_VALUE = -1e9


def rotary(x, positions):
    """Rotate pairs (x[..., i], x[..., i + D/2]) of x [B, H, T, D] by positions [B, T] * 10000^(-2i/D)."""
    half = x.shape[-1] // 2
    inv = 1.0 / (10000.0 ** (torch.arange(0, half, dtype=torch.float32, device=x.device) / half))
    ang = positions.to(torch.float32).unsqueeze(-1) * inv  # [B, T, half]
    cos, sin = ang.cos().unsqueeze(1), ang.sin().unsqueeze(1)  # [B, 1, T, half]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        assert cfg.n_embd % cfg.n_head == 0
        self.n_head = cfg.n_head
        self.head_dim = cfg.head_dim
        self.rope = cfg.pos_emb == "rope"
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)

    def forward(self, x, past_k, past_v, attn_bias, positions):
        # x: [B, T, C]; past_k/past_v: [B, H, P, D]; attn_bias: [B, 1, T, P+T] (0 = attend, MASK_VALUE = don't)
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # [B, H, T, D]
        k = k.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        if self.rope:  # cached keys are stored rotated, so the past needs no positions
            q, k = rotary(q, positions), rotary(k, positions)
        k = torch.cat([past_k, k], dim=2)  # [B, H, P+T, D]
        v = torch.cat([past_v, v], dim=2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim)) + attn_bias
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y), k, v  # the new cache is past + this step's keys/values


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x, past_k, past_v, attn_bias, positions):
        a, k, v = self.attn(self.ln1(x), past_k, past_v, attn_bias, positions)
        x = x + a
        x = x + self.mlp(self.ln2(x))
        return x, k, v


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd) if cfg.pos_emb == "learned" else None
        assert cfg.pos_emb in ("learned", "rope"), f"pos_emb must be learned or rope, not {cfg.pos_emb}"
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.head.weight = self.wte.weight  # weight tying
        self.apply(self._init)

    def _init(self, m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=self.cfg.init_std)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def empty_cache(self, batch: int, device=None):
        """A zero-length KV cache: one (key, value) pair of [batch, n_head, 0, head_dim] per layer."""
        z = torch.zeros(batch, self.cfg.n_head, 0, self.cfg.head_dim, device=device)
        return [(z, z) for _ in range(self.cfg.n_layer)]

    def forward(self, idx, past_kv=None, positions=None, attention_mask=None):
        """
        idx:            [B, T] int64 token ids.
        past_kv:        list (one per layer) of (k, v), each [B, H, P, D]; None = empty (prefill).
        positions:      [B, T] int64 positions of the tokens in idx; None = P, P+1, ..., P+T-1.
        attention_mask: [B, P+T] float, 1 = a real token, 0 = padding (keys to ignore); None = all ones.
        Returns logits [B, T, vocab] and the new cache (past + these T tokens), same layout as past_kv.

        Query t may attend key j when attention_mask[b, j] == 1 and j <= P + t (causal within this chunk; the
        whole past is visible). Padding inside the past therefore only needs a 0 in attention_mask.
        """
        B, T = idx.shape
        dev = idx.device  # every tensor made here lives where the model does (CPU or CUDA, same code)
        if past_kv is None:
            past_kv = self.empty_cache(B, dev)
        P = past_kv[0][0].shape[2]
        if positions is None:
            positions = torch.arange(T, dtype=torch.long, device=dev).unsqueeze(0).expand(B, T) + P
        if attention_mask is None:
            attention_mask = torch.ones(B, P + T, device=dev)
        # Causal part: [T, P+T], key j visible to query t when j <= P + t.
        key_idx = torch.arange(P + T, dtype=torch.long, device=dev).unsqueeze(0)
        qry_idx = torch.arange(T, dtype=torch.long, device=dev).unsqueeze(1) + P
        causal = (key_idx <= qry_idx).to(torch.float32)
        allowed = causal.unsqueeze(0).unsqueeze(0) * attention_mask.to(torch.float32).unsqueeze(1).unsqueeze(1)
        attn_bias = (1.0 - allowed) * MASK_VALUE  # [B, 1, T, P+T]

        x = self.wte(idx) if self.wpe is None else self.wte(idx) + self.wpe(positions)
        present = []
        for block, (pk, pv) in zip(self.blocks, past_kv):
            x, k, v = block(x, pk, pv, attn_bias, positions)
            present.append((k, v))
        logits = self.head(self.ln_f(x))
        return logits, present
