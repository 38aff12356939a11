"""
Unit tests of workers/trainer/batching.py's micro-batches (run by tests/integration/trainer-python.test.ts):

    .venv/bin/python -m unittest -v tests/python/test_batching.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workers", "trainer"))
import batching  # noqa: E402

SMOLLM2_VOCAB = 49152


def rows(batches):
    return sorted(i for b in batches for i in b)


class TokenBudget(unittest.TestCase):
    def test_a_large_vocabulary_gets_a_budget_that_splits_a_long_batch(self):
        # 32 rollouts of ~600 tokens: one round held 19 GB of logits and their gradients; the default splits it
        budget = batching.default_token_budget(SMOLLM2_VOCAB)
        self.assertEqual(budget, 5461)
        lengths = [560 + 3 * i for i in range(32)]
        mine, count = batching.micro_batches(32, lengths, {}, SMOLLM2_VOCAB)
        self.assertEqual(count, len(mine))
        self.assertGreater(count, 1)
        self.assertEqual(rows(mine), list(range(32)), "every sequence in exactly one round")
        for b in mine:
            self.assertLessEqual(len(b) * max(lengths[i] for i in b), budget)

    def test_a_character_vocabulary_keeps_one_round(self):
        mine, count = batching.micro_batches(64, [200] * 64, {}, 40)
        self.assertEqual(count, 1)
        self.assertEqual(rows(mine), list(range(64)))

    def test_the_request_budget_wins_over_the_default(self):
        mine, _ = batching.micro_batches(8, [100] * 8, {"micro_batch_tokens": 100_000}, SMOLLM2_VOCAB)
        self.assertEqual(len(mine), 1)
        mine, _ = batching.micro_batches(8, [100] * 8, {"micro_batch_tokens": 200}, SMOLLM2_VOCAB)
        self.assertEqual(len(mine), 4)

    def test_without_a_vocabulary_there_is_no_default(self):
        mine, _ = batching.micro_batches(8, [10_000] * 8, {})
        self.assertEqual(len(mine), 1)

    def test_a_sequence_over_the_budget_gets_a_round_of_its_own(self):
        mine, _ = batching.micro_batches(3, [9000, 10, 10], {}, SMOLLM2_VOCAB)
        self.assertIn([0], mine)
        self.assertEqual(rows(mine), [0, 1, 2])


if __name__ == "__main__":
    unittest.main()
