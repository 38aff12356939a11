"""
The losses and policy metrics, as pure functions on tensors (no model, no optimiser, no I/O).

Shapes: B sequences, T positions, V vocabulary. Column t of a [B, T-1] tensor is about token t+1 of its sequence
(the token predicted from the first t+1). Masks are float 0/1 tensors of the same shape; n_tokens is the number
of masked tokens in the WHOLE batch, so that the losses of its micro-batches add up to the batch's loss.
"""
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


def policy_loss(logp, old_logp, adv, mask, eps_low, eps_high, dual_clip, n_tokens):
    """The GRPO loss (docs/method.md §5): -token_mean of clipped_objective, no KL term, no entropy term.
    logp, old_logp, mask [B, T-1]; adv [B, 1], one advantage per sequence. Returns (loss, ratio, log_ratio)."""
    log_ratio = (logp - old_logp) * mask  # 0 at unmasked positions: keeps exp() finite there
    ratio = torch.exp(log_ratio)
    return -token_mean(clipped_objective(ratio, adv, eps_low, eps_high, dual_clip), mask, n_tokens), ratio, log_ratio


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
