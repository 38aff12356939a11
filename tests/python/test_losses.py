"""
Unit tests of workers/trainer/losses.py on small hand-computed values (run by tests/integration/trainer-python.test.ts):

    /usr/bin/python3 -m unittest -v tests/python/test_losses.py
"""
import math
import os
import sys
import unittest

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workers", "trainer"))
import losses  # noqa: E402

LN2 = math.log(2)


def t(x):
    return torch.tensor(x, dtype=torch.float32)


class ClippedObjective(unittest.TestCase):
    def obj(self, ratio, adv, dual_clip=None):
        return float(losses.clipped_objective(t([ratio]), t([adv]), 0.2, 0.28, dual_clip)[0])

    def test_positive_advantage_upper_clip(self):
        # min(1.5 · 1, clip(1.5, 0.8, 1.28) · 1) = min(1.5, 1.28) = 1.28
        self.assertAlmostEqual(self.obj(1.5, 1.0), 1.28, places=6)

    def test_positive_advantage_below_one_is_not_clipped(self):
        # min(0.5 · 2, clip(0.5, 0.8, 1.28) · 2) = min(1.0, 1.6) = 1.0
        self.assertAlmostEqual(self.obj(0.5, 2.0), 1.0, places=6)

    def test_negative_advantage_lower_clip(self):
        # min(0.5 · -1, clip(0.5, 0.8, 1.28) · -1) = min(-0.5, -0.8) = -0.8
        self.assertAlmostEqual(self.obj(0.5, -1.0), -0.8, places=6)

    def test_negative_advantage_above_one_is_not_clipped(self):
        # min(1.5 · -1, 1.28 · -1) = min(-1.5, -1.28) = -1.5
        self.assertAlmostEqual(self.obj(1.5, -1.0), -1.5, places=6)

    def test_dual_clip_bounds_negative_advantage_from_below(self):
        # without: min(5 · -1, 1.28 · -1) = -5; dual clip c = 3: max(-5, 3 · -1) = -3
        self.assertAlmostEqual(self.obj(5.0, -1.0), -5.0, places=6)
        self.assertAlmostEqual(self.obj(5.0, -1.0, dual_clip=3.0), -3.0, places=6)

    def test_dual_clip_leaves_positive_advantage_alone(self):
        # Â > 0: min(5 · 1, 1.28 · 1) = 1.28, with or without c = 3 (max(1.28, 3) would be 3)
        self.assertAlmostEqual(self.obj(5.0, 1.0, dual_clip=3.0), 1.28, places=6)


class PolicyLoss(unittest.TestCase):
    def test_token_level_mean_over_the_mask(self):
        # old_logp = 0, so ρ = exp(logp). Row 0: Â = +1, ρ = [1.0, 1.5, (masked) 9]; row 1: Â = -2, ρ = [0.5, masked, masked].
        # objective: row 0 [min(1, 1) = 1, min(1.5, 1.28) = 1.28]; row 1 [min(-1.0, 0.8 · -2 = -1.6) = -1.6]
        # loss = -(1 + 1.28 - 1.6) / 3 masked tokens = -0.68 / 3 = -0.2266667
        logp = t([[0.0, math.log(1.5), math.log(9.0)], [math.log(0.5), 5.0, 5.0]])
        mask = t([[1, 1, 0], [1, 0, 0]])
        adv = t([[1.0], [-2.0]])
        loss, ratio, log_ratio = losses.policy_loss(logp, torch.zeros(2, 3), adv, mask, 0.2, 0.28, None, 3)
        self.assertAlmostEqual(float(loss), -0.68 / 3, places=6)
        # masked positions: log ρ forced to 0, so ρ = 1 there whatever logp says
        self.assertEqual(ratio[0, 2].item(), 1.0)
        self.assertEqual(log_ratio[1, 1].item(), 0.0)

    def test_micro_batches_add_up_to_the_batch(self):
        # n_tokens is the whole batch's count: loss(row 0) + loss(row 1) = loss(both rows), each divided by 3
        logp = t([[0.0, math.log(1.5)], [math.log(0.5), 0.0]])
        old = torch.zeros(2, 2)
        mask = t([[1, 1], [1, 0]])
        adv = t([[1.0], [-2.0]])
        both = losses.policy_loss(logp, old, adv, mask, 0.2, 0.28, None, 3)[0]
        parts = [losses.policy_loss(logp[i:i + 1], old[i:i + 1], adv[i:i + 1], mask[i:i + 1], 0.2, 0.28, None, 3)[0]
                 for i in range(2)]
        self.assertAlmostEqual(float(parts[0] + parts[1]), float(both), places=6)
        self.assertAlmostEqual(float(both), -(1 + 1.28 - 1.6) / 3, places=6)

    def test_clipped_token_has_no_gradient(self):
        # Â = +1, n = 2: token 0 ρ = 1.5 clipped at 1.28 (constant in logp) → d loss / d logp = 0;
        # token 1 ρ = 1 unclipped: loss term -ρÂ/2, d/d logp = -ρÂ/2 = -0.5 (dρ/d logp = ρ)
        logp = t([[math.log(1.5), 0.0]]).requires_grad_()
        loss = losses.policy_loss(logp, torch.zeros(1, 2), t([[1.0]]), t([[1, 1]]), 0.2, 0.28, None, 2)[0]
        loss.backward()
        self.assertAlmostEqual(float(loss), -(1.28 + 1.0) / 2, places=6)
        self.assertAlmostEqual(logp.grad[0, 0].item(), 0.0, places=7)
        self.assertAlmostEqual(logp.grad[0, 1].item(), -0.5, places=6)


class Aggregation(unittest.TestCase):
    def test_token_mean(self):
        # masked values 1, 2 (row 0) and 6 (row 1): (1 + 2 + 6) / 3 = 3
        # (a per-sequence mean would give ((1 + 2) / 2 + 6) / 2 = 3.75)
        x = t([[1, 2, 3], [4, 5, 6]])
        mask = t([[1, 1, 0], [0, 0, 1]])
        self.assertAlmostEqual(float(losses.token_mean(x, mask, 3)), 3.0, places=6)

    def test_masked_cross_entropy_two_tokens(self):
        # V = 2. Token 0: logits [0, 0], p = [1/2, 1/2], target 0 → -log(1/2) = ln 2.
        # Token 1: logits [ln 3, 0], p = [3/4, 1/4], target 1 → -log(1/4) = 2 ln 2.
        # Both masked: (ln 2 + 2 ln 2) / 2 = 1.5 ln 2 = 1.0397208; only token 0: ln 2 / 1 = 0.6931472
        logits = t([[[0.0, 0.0], [math.log(3), 0.0]]])
        targets = torch.tensor([[0, 1]])
        self.assertAlmostEqual(float(losses.masked_cross_entropy(logits, targets, t([[1, 1]]), 2)), 1.5 * LN2, places=6)
        self.assertAlmostEqual(float(losses.masked_cross_entropy(logits, targets, t([[1, 0]]), 1)), LN2, places=6)

    def test_token_logprobs_shift(self):
        # ids [0, 1, 0]: column 0 (logits [0, 0]) scores ids[1] = 1 → ln(1/2); column 1 (logits [ln 3, 0]) scores
        # ids[2] = 0 → ln(3/4); the last position's logits predict nothing and are dropped
        ids = torch.tensor([[0, 1, 0]])
        logits = t([[[0.0, 0.0], [math.log(3), 0.0], [100.0, -100.0]]])
        lp, lsm = losses.token_logprobs(logits, ids)
        self.assertEqual(tuple(lsm.shape), (1, 2, 2))
        self.assertAlmostEqual(lp[0, 0].item(), math.log(0.5), places=6)
        self.assertAlmostEqual(lp[0, 1].item(), math.log(0.75), places=6)


class PolicyStats(unittest.TestCase):
    def test_clip_fractions_kl_entropy(self):
        # Row 0: Â = +1, ρ = [1.0, 1.5, masked: 2.0, 1.0]; row 1: Â = -1, ρ = [0.5, 4.0, masked: 5.0, 0.1]; ε 0.2 / 0.28, c = 3.
        # clip_frac_low  (Â < 0, ρ < 0.8):  row 1's 0.5 → 1 (the masked 0.1 would make it 2)
        # clip_frac_high (Â > 0, ρ > 1.28): row 0's 1.5 → 1 (the masked 2.0 would make it 2)
        # dual_clip_frac (Â < 0, ρ > 3):    row 1's 4.0 → 1 (the masked 5.0 would make it 2)
        # approx_kl Σ (ρ - 1) - ln ρ: 0 + (0.5 - ln 1.5) + (-0.5 - ln 0.5) + (3 - ln 4)
        #   = 0 + 0.0945349 + 0.1931472 + 1.6137056 = 1.9013877
        # entropy: uniform over V = 2 at each of the 4 masked tokens: 4 ln 2 = 2.7725887
        ratio = t([[1.0, 1.5, 2.0, 1.0], [0.5, 4.0, 5.0, 0.1]])
        mask = t([[1, 1, 0, 0], [1, 1, 0, 0]])
        adv = t([[1.0], [-1.0]])
        lsm = torch.full((2, 4, 2), -LN2)
        s = losses.policy_stats(ratio, torch.log(ratio), lsm, adv, mask, 0.2, 0.28, 3.0)
        self.assertEqual(s["clip_frac_low"], 1.0)
        self.assertEqual(s["clip_frac_high"], 1.0)
        self.assertEqual(s["dual_clip_frac"], 1.0)
        self.assertAlmostEqual(s["approx_kl"], 1.9013877, places=5)
        self.assertAlmostEqual(s["entropy"], 4 * LN2, places=5)
        # no dual clip: nothing counted
        self.assertEqual(losses.policy_stats(ratio, torch.log(ratio), lsm, adv, mask, 0.2, 0.28)["dual_clip_frac"], 0.0)


def lg(x):
    return math.log(x)


class Tis(unittest.TestCase):
    # One row, five tokens; ρ = π_old / π_rollout built as old = log ρ, rollout = 0. Token 3 is a tool token (mask 0),
    # token 4 has no engine log-prob (valid 0): both get weight 1 and are not counted.
    RHO = [0.25, 1.5, 3.0, 9.0, 5.0]
    VALID = [[1, 1, 1, 0, 0]]

    def run_mode(self, mode, cap=2.0, rho=None, valid=None):
        rho = rho or self.RHO
        old = t([[lg(r) for r in rho]])
        return losses.tis_weights(old, torch.zeros_like(old), t(valid or self.VALID), mode, cap)

    def k3(self, rhos):
        return sum(r - 1 - lg(r) for r in rhos)

    def test_token_truncates_at_the_cap(self):
        # w = min(ρ, 2): [0.25, 1.5, 2] then 1, 1 (not valid); truncated: only ρ = 3 (ρ = 9 is not valid)
        w, trunc, masked, st = self.run_mode("token")
        for a, b in zip(w[0].tolist(), [0.25, 1.5, 2.0, 1.0, 1.0]):
            self.assertAlmostEqual(a, b, places=6)
        self.assertEqual(trunc[0].tolist(), [False, False, True, False, False])
        self.assertFalse(masked.any())
        # k3 Σ (ρ - 1) - ln ρ: (−0.75 + 1.3862944) + (0.5 − 0.4054651) + (2 − 1.0986123) = 1.6322170
        self.assertAlmostEqual(st["mismatch_kl"], self.k3([0.25, 1.5, 3.0]), places=5)
        self.assertAlmostEqual(st["mismatch_kl"], 1.6322170, places=5)
        self.assertAlmostEqual(st["weight"], 3.75, places=5)  # 0.25 + 1.5 + 2
        self.assertEqual((st["truncated"], st["masked"], st["tokens"]), (1.0, 0.0, 3.0))

    def test_sequence_one_weight_per_sequence(self):
        # Row 0: Π ρ = 0.25 · 1.5 · 3 = 1.125 < 2 → 1.125 on its valid tokens; row 1: Π = 1.5 · 1.5 = 2.25 → capped at 2
        old = t([[lg(0.25), lg(1.5), lg(3.0)], [lg(1.5), lg(1.5), lg(7.0)]])
        valid = t([[1, 1, 1], [1, 1, 0]])
        w, trunc, masked, st = losses.tis_weights(old, torch.zeros_like(old), valid, "sequence", 2.0)
        for a, b in zip(w.flatten().tolist(), [1.125, 1.125, 1.125, 2.0, 2.0, 1.0]):
            self.assertAlmostEqual(a, b, places=5)
        self.assertEqual(trunc.tolist(), [[False, False, False], [True, True, False]])
        self.assertAlmostEqual(st["weight"], 3 * 1.125 + 2 * 2.0, places=5)
        self.assertEqual((st["truncated"], st["tokens"]), (2.0, 5.0))
        self.assertAlmostEqual(st["mismatch_kl"], self.k3([0.25, 1.5, 3.0, 1.5, 1.5]), places=5)

    def test_sequence_weight_does_not_overflow(self):
        # Π ρ = e^(200 · 5) overflows a float; the cap is applied in log space first
        old = torch.full((1, 200), 5.0)
        w, trunc, _, _ = losses.tis_weights(old, torch.zeros_like(old), torch.ones(1, 200), "sequence", 2.0)
        self.assertTrue(torch.isfinite(w).all())
        self.assertAlmostEqual(w.max().item(), 2.0, places=5)
        self.assertTrue(trunc.all())

    def test_an_absurd_engine_logprob_keeps_the_metrics_finite(self):
        # log ρ = 1000 (engine logprob −1000 on a token the trainer finds likely): weight C, KL large but finite
        old = t([[0.0, 0.0]])
        w, trunc, _, st = losses.tis_weights(old, t([[-1000.0, 0.0]]), t([[1, 1]]), "token", 2.0)
        self.assertEqual(w[0].tolist(), [2.0, 1.0])
        self.assertTrue(math.isfinite(st["mismatch_kl"]) and st["mismatch_kl"] > 1e20)

    def test_mask_zeroes_tokens_outside_the_band(self):
        # [1/2, 2]: ρ = 0.25 and 3 are masked (w 0), 1.5 kept at w 1 (not reweighted); invalid tokens untouched
        w, trunc, masked, st = self.run_mode("mask")
        self.assertEqual(w[0].tolist(), [0.0, 1.0, 0.0, 1.0, 1.0])
        self.assertEqual(masked[0].tolist(), [True, False, True, False, False])
        self.assertFalse(trunc.any())
        self.assertEqual((st["masked"], st["truncated"], st["weight"], st["tokens"]), (2.0, 0.0, 1.0, 3.0))

    def test_off_weighs_one_but_still_measures(self):
        w, trunc, masked, st = self.run_mode("off")
        self.assertEqual(w[0].tolist(), [1.0] * 5)
        self.assertFalse(trunc.any() or masked.any())
        self.assertAlmostEqual(st["mismatch_kl"], self.k3([0.25, 1.5, 3.0]), places=5)
        self.assertEqual(st["weight"], 3.0)

    def test_no_rollout_logprobs_is_a_no_op(self):
        w, trunc, masked, st = self.run_mode("token", valid=[[0, 0, 0, 0, 0]])
        self.assertEqual(w[0].tolist(), [1.0] * 5)
        self.assertEqual((st["tokens"], st["mismatch_kl"]), (0.0, 0.0))

    def test_weight_multiplies_the_objective_without_gradient(self):
        # ρ_θ = 1 (on-policy), Â = +1: objective 1 per token; weights [0.5, 2] → loss = -(0.5 + 2) / 2 = -1.25
        # d loss / d logp_t = -w_t ρ Â / n: [-0.25, -1]; no gradient reaches the weight
        logp = t([[0.0, 0.0]]).requires_grad_()
        wt = t([[0.5, 2.0]]).requires_grad_()
        loss = losses.policy_loss(logp, torch.zeros(1, 2), t([[1.0]]), t([[1, 1]]), 0.2, 0.28, None, 2, weight=wt)[0]
        loss.backward()
        self.assertAlmostEqual(float(loss), -1.25, places=6)
        self.assertAlmostEqual(logp.grad[0, 0].item(), -0.25, places=6)
        self.assertAlmostEqual(logp.grad[0, 1].item(), -1.0, places=6)
        self.assertIsNone(wt.grad)


class ClipStates(unittest.TestCase):
    def test_ppo_states_then_tis(self):
        # Row 0 Â = −1: ρ = [0.5 (low), 4 (dual, c = 3), 1 (none), 1 (none; TIS-truncated), 0.5 (masked out)]
        # Row 1 Â = +1: ρ = [1.5 (high; also TIS-masked: PPO wins), 1 (TIS-masked), 1, 1, 1]
        ratio = t([[0.5, 4.0, 1.0, 1.0, 0.5], [1.5, 1.0, 1.0, 1.0, 1.0]])
        mask = t([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
        ppo = losses.ppo_clip_states(ratio, t([[-1.0], [1.0]]), mask, 0.2, 0.28, 3.0)
        self.assertEqual(ppo.tolist(), [[1, 3, 0, 0, 0], [2, 0, 0, 0, 0]])
        trunc = torch.tensor([[False, False, False, True, False], [False] * 5])
        masked = torch.tensor([[False] * 5, [True, True, False, False, False]])
        self.assertEqual(losses.clip_states(ppo, trunc, masked).tolist(), [[1, 3, 0, 4, 0], [2, 5, 0, 0, 0]])
        # without a dual clip the ρ = 4 token of a negative advantage is unclipped
        self.assertEqual(losses.ppo_clip_states(ratio, t([[-1.0], [1.0]]), mask, 0.2, 0.28)[0, 1].item(), 0)


if __name__ == "__main__":
    unittest.main()
