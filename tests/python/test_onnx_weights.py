"""
Unit tests of workers/trainer/onnx_weights.py's blockwise quantizer (run by tests/integration/engine-onnx.test.ts):

    .venv/bin/python -m unittest -v tests/python/test_onnx_weights.py
"""
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workers", "trainer"))
import onnx_weights as q  # noqa: E402


class Blocks(unittest.TestCase):
    def test_round_trip_within_half_a_step(self):
        rng = np.random.default_rng(0)
        for bits in (4, 8):
            for k in (64, 70):  # 70: the last block zero-padded
                w = rng.standard_normal((5, k)).astype(np.float32)
                codes, scales, zps = q.quantize_blocks(w, bits)
                blocks = -(-k // q.BLOCK)
                self.assertEqual(codes.shape, (5, blocks, q.BLOCK * bits // 8))
                self.assertEqual(scales.shape, (5 * blocks,))
                self.assertEqual(zps.shape, (5 * (-(-blocks * bits // 8)),))
                err = np.abs(q.dequantize_blocks(codes, scales, zps, bits, k) - w)
                step = np.repeat(scales.reshape(5, blocks), q.BLOCK, axis=1)[:, :k]
                self.assertTrue(np.all(err <= step / 2 + 1e-6), (bits, k, float(err.max())))

    def test_four_bit_codes_low_nibble_first_and_zero_exact(self):
        w = np.zeros((1, q.BLOCK), np.float32)
        w[0, 0], w[0, 1] = -1.0, 2.0  # range [-1, 2] over 15 steps: zero point 5, codes 0 and 15
        codes, scales, zps = q.quantize_blocks(w, 4)
        self.assertAlmostEqual(float(scales[0]), 0.2, places=6)
        self.assertEqual(int(zps[0]) & 15, 5)
        self.assertEqual(int(codes[0, 0, 0]), 0 | (15 << 4))
        self.assertEqual(int(codes[0, 0, 1]), 5 | (5 << 4))  # zeros decode to exactly 0
        self.assertEqual(float(q.dequantize_blocks(codes, scales, zps, 4, q.BLOCK)[0, 2]), 0.0)


if __name__ == "__main__":
    unittest.main()
