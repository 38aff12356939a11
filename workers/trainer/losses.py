"""
The losses and policy metrics, as pure functions on tensors (no model, no optimiser, no I/O).

Shapes: B sequences, T positions, V vocabulary. Column t of a [B, T-1] tensor is about token t+1 of its sequence
(the token predicted from the first t+1). Masks are float 0/1 tensors of the same shape; n_tokens is the number
of masked tokens in the WHOLE batch, so that the losses of its micro-batches add up to the batch's loss.
"""
import math

import torch
import torch.nn.functional as F


def token_logprobs(logits, ids):
    """logits [B, T, V] of ids [B, T] → (log p of ids[:, t+1] at column t [B, T-1], log_softmax [B, T-1, V])."""
    lsm = F.log_softmax(logits.float()[:, :-1], dim=-1)
    return lsm.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1), lsm


def token_mean(x, mask, n_tokens):
    """Token-level aggregation: every masked token weighs the same, however long its sequence (docs/method.md §5)."""
    return (x * mask).sum() / n_tokens


def masked_cross_entropy(logits, targets, mask, n_tokens):
    """The SFT loss: mean of -log p(target) over the masked tokens. logits [B, T, V] predict targets [B, T].
    F.cross_entropy is fused: no [B, T, V] log-softmax is kept for backward."""
    nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none")
    return token_mean(nll.view(mask.shape), mask, n_tokens)


def clipped_objective(ratio, adv, eps_low, eps_high, dual_clip=None):
    """Per token min(ρÂ, clip(ρ, 1-ε_low, 1+ε_high)Â) (PPO's clipped surrogate with Clip-Higher: ε_high > ε_low
    leaves unlikely tokens more room to grow); dual_clip c bounds it below by cÂ where Â < 0, so one token whose
    probability rose far (ρ > c) cannot dominate a negative update."""
    obj = torch.min(ratio * adv, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * adv)
    if dual_clip is not None:
        obj = torch.where(adv < 0, torch.max(obj, dual_clip * adv), obj)
    return obj


def policy_loss(logp, old_logp, adv, mask, eps_low, eps_high, dual_clip, n_tokens, weight=None):
    """The GRPO loss (docs/method.md §5): -token_mean of clipped_objective, no KL term, no entropy term.
    logp, old_logp, mask [B, T-1]; adv [B, 1], one advantage per sequence; weight [B, T-1], the TIS weight of each
    token (tis_weights), a constant multiplier (no gradient flows through it). Returns (loss, ratio, log_ratio)."""
    log_ratio = (logp - old_logp) * mask  # 0 at unmasked positions: keeps exp() finite there
    ratio = torch.exp(log_ratio)
    obj = clipped_objective(ratio, adv, eps_low, eps_high, dual_clip)
    if weight is not None:
        obj = obj * weight.detach()
    return -token_mean(obj, mask, n_tokens), ratio, log_ratio


@torch.no_grad()
def tis_weights(old_logp, rollout_logp, valid, mode, cap):
    """Truncated importance sampling against the train–inference mismatch (docs/method.md §5, "TIS"), on
    response-aligned [B, R] tensors: old_logp the trainer's log π_old, rollout_logp the engine's log π_rollout, valid
    a 0/1 mask of the tokens that are trained on AND have an engine log-prob. With ρ = π_old / π_rollout per token:
      token:    w = min(ρ, C);
      sequence: w = min(Π_t ρ_t, C) over the sequence's valid tokens, the same for each of them;
      mask:     w = 0 where ρ ∉ [1/C, C], else 1;
      off:      w = 1.
    Tokens that are not valid get w = 1 (no correction is possible without the engine's log-prob).
    Returns (w, truncated, masked, stats): truncated / masked are bool [B, R] (ρ > C in token and sequence mode,
    ρ outside [1/C, C] in mask mode); stats sums over the valid tokens: mismatch_kl of (ρ - 1) - log ρ (k3, an
    estimate of KL(π_rollout || π_old) from the engine's samples, ≥ 0), weight, truncated, masked, and their count."""
    v = valid.bool()
    log_rho = torch.where(v, old_logp - rollout_logp, torch.zeros_like(old_logp))
    # exp() bounded so that a broken engine's logprob cannot make the metric infinite (JSON null); every weight and
    # test below reads log_rho or stays under the cap, so they are unaffected
    rho = torch.exp(torch.clamp(log_rho, max=50.0))
    ones = torch.ones_like(rho)
    none = torch.zeros_like(v)
    log_cap = math.log(cap)
    if mode == "token":
        w, truncated, masked = torch.clamp(rho, max=cap), v & (log_rho > log_cap), none
    elif mode == "sequence":
        seq = log_rho.sum(-1, keepdim=True)  # log Π_t ρ_t; exp() only after the cap, so a long sequence cannot overflow
        w = torch.exp(torch.clamp(seq, max=log_cap)).expand_as(rho)
        truncated, masked = v & (seq > log_cap), none
    elif mode == "mask":
        masked = v & ((log_rho > log_cap) | (log_rho < -log_cap))
        w, truncated = torch.where(masked, torch.zeros_like(rho), ones), none
    elif mode == "off":
        w, truncated, masked = ones, none, none
    else:
        raise ValueError(f"tis mode {mode!r}: expected off, token, sequence or mask")
    w = torch.where(v, w, ones)
    vf = v.float()
    stats = {
        "mismatch_kl": float(((rho - 1 - log_rho) * vf).sum()),
        "weight": float((w * vf).sum()),
        "truncated": float(truncated.float().sum()),
        "masked": float(masked.float().sum()),
        "tokens": float(vf.sum()),
    }
    return w, truncated, masked, stats


# ClipState (contracts/trajectory.ts): the PPO clip states win over the TIS ones when both apply to a token.
CLIP_NONE, CLIP_LOW, CLIP_HIGH, CLIP_DUAL, TIS_TRUNCATED, TIS_MASKED = range(6)


@torch.no_grad()
def ppo_clip_states(ratio, adv, mask, eps_low, eps_high, dual_clip=None):
    """Per token: CLIP_LOW where the lower clip binds (Â < 0, ρ < 1-ε_low), CLIP_HIGH where the upper one does
    (Â > 0, ρ > 1+ε_high), CLIP_DUAL where the dual clip does (Â < 0, ρ > c), else CLIP_NONE; int8, 0 off the mask.
    The three conditions are disjoint (c > 1 > 1-ε_low), the same as policy_stats' fractions."""
    out = torch.zeros(ratio.shape, dtype=torch.int8, device=ratio.device)
    on = mask.bool()
    out[on & (adv < 0) & (ratio < 1 - eps_low)] = CLIP_LOW
    out[on & (adv > 0) & (ratio > 1 + eps_high)] = CLIP_HIGH
    if dual_clip is not None:
        out[on & (adv < 0) & (ratio > dual_clip)] = CLIP_DUAL
    return out


def clip_states(ppo, truncated, masked):
    """The ClipState of each token: the PPO state where one applies, else TIS-truncated / TIS-masked, else none."""
    tis = torch.where(masked, TIS_MASKED, torch.where(truncated, TIS_TRUNCATED, CLIP_NONE)).to(torch.int8)
    return torch.where(ppo != CLIP_NONE, ppo, tis)


@torch.no_grad()
def policy_stats(ratio, log_ratio, lsm, adv, mask, eps_low, eps_high, dual_clip=None):
    """Sums over the masked tokens (divide by n_tokens for the metrics of that name, summed over micro-batches first):
    clip_frac_low where the lower clip binds (Â < 0, ρ < 1-ε_low), clip_frac_high where the upper one does (Â > 0,
    ρ > 1+ε_high), dual_clip_frac where the dual clip does (Â < 0, ρ > c); approx_kl of (ρ - 1) - log ρ, the k3
    estimator of KL(π_old || π_θ), ≥ 0; entropy of π_θ from its log_softmax lsm [B, T-1, V]."""
    def masked_sum(x):
        return float(x.float().mul(mask).sum())

    entropy = -(lsm.exp() * lsm).sum(-1)
    return {
        "clip_frac_low": masked_sum((adv < 0) & (ratio < 1 - eps_low)),
        "clip_frac_high": masked_sum((adv > 0) & (ratio > 1 + eps_high)),
        "dual_clip_frac": masked_sum((adv < 0) & (ratio > dual_clip)) if dual_clip is not None else 0.0,
        "approx_kl": masked_sum((ratio - 1) - log_ratio),
        "entropy": masked_sum(entropy),
    }
