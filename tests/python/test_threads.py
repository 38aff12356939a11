"""
Unit tests of workers/trainer/threads.py, the trainer's thread policy, on a simulated machine whose speed per thread
count changes when a neighbour starts and stops (run by tests/integration/trainer-python.test.ts):

    .venv/bin/python -m unittest -v tests/python/test_threads.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workers", "trainer"))
import threads  # noqa: E402

# Seconds per token with 2 threads and with 1, alone and beside a busy process (the ratios measured on 2 cores:
# 16.9 steps/s with 2 threads alone, 11.4 with 1; 5.5 with 2 beside a neighbour, 11.4 with 1).
ALONE = {2: 1 / 16.9, 1: 1 / 11.4}
BUSY = {2: 1 / 5.5, 1: 1 / 11.4}


def run(policy, machine, calls, tokens=100):
    used = []
    for _ in range(calls):
        n = policy.begin()
        used.append(n)
        policy.end(machine[n] * tokens, tokens)
    return used


class ThreadPolicy(unittest.TestCase):
    def test_alone_it_keeps_all_cores_and_explores_rarely(self):
        t = threads.ThreadTuner([2, 1])
        used = run(t, ALONE, 200)
        self.assertEqual(t.current, 2)
        self.assertLess(used.count(1) / len(used), 0.25, "exploration is a small share of the calls")

    def test_a_busy_neighbour_moves_it_to_one_thread_and_back_when_it_leaves(self):
        t = threads.ThreadTuner([2, 1])
        run(t, ALONE, 40)
        self.assertEqual(t.current, 2)
        used = run(t, BUSY, 40)
        self.assertEqual(t.current, 1, "one thread is faster beside a busy process")
        self.assertGreater(used[-20:].count(1), 15)
        run(t, ALONE, 60)
        self.assertEqual(t.current, 2, "the neighbour left: all cores again")
        self.assertEqual(t.switches, 2)

    def test_throughput_beside_a_neighbour_is_near_the_best_fixed_count(self):
        t = threads.ThreadTuner([2, 1])
        run(t, ALONE, 30)
        used = run(t, BUSY, 300)
        seconds = sum(BUSY[n] for n in used)
        best = 300 * BUSY[1]
        self.assertLess(seconds / best, 1.06, "within 6% of always choosing right")

    def test_from_a_cold_start_beside_a_neighbour_the_wrong_count_costs_few_calls(self):
        t = threads.ThreadTuner([2, 1])
        used = run(t, BUSY, 120)
        self.assertEqual(t.current, 1)
        self.assertLessEqual(used.count(2), 10, "4 calls before the first trial, then one call per later trial")

    def test_batches_of_varying_cost_alone_do_not_set_off_trials(self):
        import random
        rnd = random.Random(7)
        t = threads.ThreadTuner([2, 1])
        used = []
        for _ in range(300):
            n = t.begin()
            used.append(n)
            t.end(ALONE[n] * 100 * rnd.uniform(0.75, 1.3), 100)  # batch lengths move cost per token by ±25%
        self.assertEqual(t.current, 2)
        self.assertLess(used.count(1), 12, f"{used.count(1)} calls on one thread out of 300")

    def test_noise_below_the_margin_does_not_flap(self):
        t = threads.ThreadTuner([2, 1], margin=0.1)
        run(t, {2: 1.0, 1: 0.95}, 200)
        self.assertEqual(t.switches, 0)

    def test_env_fixes_or_tunes(self):
        self.assertEqual(threads.policy_from_env({"TOOLSMITH_TRAINER_THREADS": "3"}).begin(), 3)
        self.assertIsInstance(threads.policy_from_env({}, cores=4), threads.ThreadTuner)
        self.assertEqual(threads.policy_from_env({}, cores=4).counts, [4, 1])
        self.assertIsInstance(threads.policy_from_env({"TOOLSMITH_TRAINER_THREADS": "auto"}, cores=1), threads.FixedThreads)
        with self.assertRaises(ValueError):
            threads.policy_from_env({"TOOLSMITH_TRAINER_THREADS": "0"})
        self.assertGreaterEqual(threads.usable_cores(), 1)


class SetThreads(unittest.TestCase):
    """The trainer's set_threads request (async RL caps it while the engine generates beside it), on a real Trainer."""

    def setUp(self):
        import torch
        import trainer as T
        self.torch, self.T = torch, T
        self.saved = os.environ.pop("TOOLSMITH_TRAINER_THREADS", None)
        self.tr = T.Trainer(torch.device("cpu"))
        self.tr.init({"model": {"n_layer": 1, "n_embd": 16, "n_head": 2, "block_size": 32}, "vocab": ["<unk>", "<eos>"] + list("ab+=0123")})

    def tearDown(self):
        if self.saved is not None:
            os.environ["TOOLSMITH_TRAINER_THREADS"] = self.saved

    def sft(self):
        self.tr.sft_step({"sequences": [[1, 2, 3, 4, 5], [2, 3, 4, 5, 6]]})
        return self.torch.get_num_threads()

    def test_a_cap_fixes_every_call_then_null_gives_the_policy_back(self):
        self.assertEqual(self.tr.set_threads({"threads": 1}), {"threads": 1})
        self.assertEqual([self.sft() for _ in range(20)], [1] * 20)
        self.assertEqual(self.tr.set_threads({"threads": None}), {"threads": None})
        self.assertNotIn("sft_step", self.tr.thread_policies, "measured afresh under the new budget")
        self.sft()
        if threads.usable_cores() > 1:
            self.assertIsInstance(self.tr.thread_policies["sft_step"], threads.ThreadTuner)

    def test_the_operators_count_wins_and_bad_values_are_refused(self):
        os.environ["TOOLSMITH_TRAINER_THREADS"] = "2"
        self.assertEqual(self.tr.set_threads({"threads": 1}), {"threads": None})
        del os.environ["TOOLSMITH_TRAINER_THREADS"]
        for bad in (0, -1, 1.5, "2", True):
            with self.assertRaises(self.T.RpcError):
                self.tr.set_threads({"threads": bad})


if __name__ == "__main__":
    unittest.main()
