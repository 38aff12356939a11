"""
LoRA through peft in the trainer (workers/trainer/lora.py, trainer.py), in-process on a tiny random Qwen3:
a policy step changes adapter parameters only; a merged export gives the logits of base + adapter; a LoRA
checkpoint holds the adapter alone and resumes exactly.

    .venv/bin/python -m unittest tests/python/test_lora.py      (run by tests/integration/trainer-python.test.ts)
"""
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workers", "trainer"))
import trainer as T  # noqa: E402  (imports rpc first, which points fd 1 at stderr: harmless here)
import torch  # noqa: E402

import char_tokenizer  # noqa: E402
import hf_model  # noqa: E402

VOCAB = ["<unk>", "<eos>", "\n"] + [chr(c) for c in range(32, 127)]
SEQS = [[5 + (i * 7 + j * 3) % 90 for j in range(24 + i)] for i in range(4)]
LORA = {"rank": 4, "alpha": 8.0, "target_modules": ["q_proj", "v_proj", "gate_proj"]}
OPTIM = {"lr": 1e-2, "warmup_steps": 0, "weight_decay": 0.0}


def policy_params(tr, adv):
    rs = [4] * len(SEQS)
    old = tr.logprobs({"sequences": SEQS, "response_start": rs})["logprobs"]
    return {"sequences": SEQS, "response_start": rs, "response_mask": [[1] * (len(s) - 4) for s in SEQS],
            "old_logprobs": [[x - 0.1 for x in row] for row in old], "advantages": adv}


class LoraTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="lora-test-")
        cls.base = os.path.join(cls.tmp, "base")
        os.makedirs(cls.base)
        torch.manual_seed(0)
        cfg = hf_model.make_config(n_layer=2, n_embd=32, n_head=4, n_kv_head=2, vocab_size=len(VOCAB), block_size=64,
                                   eos_token_id=1, pad_token_id=1)
        hf_model.save(hf_model.build(cfg), cls.base, char_tokenizer.files(VOCAB, 64))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def lora_trainer(self):
        tr = T.Trainer(torch.device("cpu"))
        info = tr.load({"path": self.base, "fresh": True, "lora": LORA, "optim": OPTIM})
        self.assertLess(info["trainable_params"], info["params"] / 5)
        self.assertEqual(info["lora"]["rank"], 4)
        return tr

    def test_policy_step_changes_adapter_parameters_only(self):
        tr = self.lora_trainer()
        before = {n: p.detach().clone() for n, p in tr.model.named_parameters()}
        m = tr.policy_step(policy_params(tr, [1.0, -1.0, 0.5, -0.5]))
        self.assertFalse(m["skipped"])
        changed = {n for n, p in tr.model.named_parameters() if not torch.equal(p.detach(), before[n])}
        self.assertTrue(changed, "nothing changed")
        self.assertTrue(all("lora_" in n for n in changed), sorted(n for n in changed if "lora_" not in n))
        self.assertTrue(any("lora_B" in n for n in changed))  # B starts at 0: the adapter now does something
        self.assertEqual({n for n, p in tr.model.named_parameters() if p.requires_grad}, {n for n in before if "lora_" in n})

    def test_merged_export_gives_the_logits_of_base_plus_adapter(self):
        tr = self.lora_trainer()
        for adv in ([1.0, -1.0, 0.5, -0.5], [-1.0, 1.0, 1.0, -1.0]):
            tr.policy_step(policy_params(tr, adv))
        out = os.path.join(self.tmp, "merged")
        r = tr.export_hf({"dir": out})
        self.assertIn("model.safetensors", r["files"])
        merged = hf_model.load(out).eval()
        base = hf_model.load(self.base).eval()
        ids = torch.tensor([SEQS[1]])
        tr.model.eval()
        with torch.no_grad():
            live = tr.model(input_ids=ids).logits
            got = merged(input_ids=ids).logits
            plain = base(input_ids=ids).logits
        self.assertLess((live - got).abs().max().item(), 1e-4)
        self.assertGreater((live - plain).abs().max().item(), 1e-4)  # the adapter is not a no-op

    def test_lora_checkpoint_holds_the_adapter_alone_and_resumes_exactly(self):
        tr = self.lora_trainer()
        tr.policy_step(policy_params(tr, [1.0, -1.0, 0.5, -0.5]))
        ck = os.path.join(self.tmp, "ck")
        tr.save({"path": ck})
        files = set(os.listdir(ck))
        self.assertIn("adapter_model.safetensors", files)
        self.assertIn("adapter_config.json", files)
        self.assertNotIn("model.safetensors", files)
        self.assertLess(os.path.getsize(os.path.join(ck, "adapter_model.safetensors")),
                        os.path.getsize(os.path.join(self.base, "model.safetensors")) / 4)
        nxt = policy_params(tr, [-1.0, 1.0, 1.0, -1.0])
        want = tr.policy_step(nxt)
        u = T.Trainer(torch.device("cpu"))
        info = u.load({"path": ck})
        self.assertEqual(info["step"], 1)
        self.assertEqual(info["lora"], tr.lora)
        got = u.policy_step(nxt)
        self.assertAlmostEqual(got["loss"], want["loss"], places=6)
        self.assertAlmostEqual(got["grad_norm"], want["grad_norm"], places=5)

    def test_lora_on_a_model_built_from_scratch_is_refused(self):
        tr = T.Trainer(torch.device("cpu"))
        with self.assertRaises(T.RpcError) as e:
            tr.init({"model": {"n_layer": 1, "n_embd": 16, "n_head": 2}, "vocab": VOCAB, "lora": LORA})
        self.assertTrue(str(e.exception).startswith("lora:"))
        with self.assertRaises(T.RpcError) as e:
            tr.load({"path": self.base, "fresh": True, "lora": {**LORA, "target_modules": ["nope_proj"]}})
        self.assertTrue(str(e.exception).startswith("lora.target_modules:"), str(e.exception))


if __name__ == "__main__":
    unittest.main()
