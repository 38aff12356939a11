"""
How export_onnx.py stores the static graph's weights (the bytes a batch-1 decode step reads are what bound it).

tie(model)            the output projection reads the embedding matrix itself (Gemm with transB) when the two are
                      the same weights (tie_word_embeddings), instead of a transposed copy: the file holds them once.
quantize(model, bits) every MatMul with a constant [K, N] weight, the output projection included (at 8 bits whatever
                      `bits` is: its rounding lands in the logits, whose log-probs RL uses, unaveraged), becomes
                      com.microsoft MatMulNBits (onnxruntime's CPU provider; what onnxruntime-genai runs for int4):
                      round-to-nearest per block of BLOCK along K, asymmetric (a float32 scale and a uint8 zero point
                      per block, as GGUF's Q4_1), accuracy_level 4 (activations quantized to int8 per block, int8 dot
                      products). The embedding lookup (Gather) stays float32: it reads one row per token.

WEIGHTS maps the export's --weights names to bits (None: float32).
"""
import numpy as np
from onnx import helper, numpy_helper

WEIGHTS = {"float32": None, "int8": 8, "int4": 4}
BLOCK = 32


def _init(model):
    return {t.name: t for t in model.graph.initializer}


def _embedding(model):
    """The name of the token-embedding initializer (the Gather on input_ids)."""
    inits = _init(model)
    for n in model.graph.node:
        if n.op_type == "Gather" and n.input[1] == "input_ids" and n.input[0] in inits:
            return n.input[0]
    raise ValueError("no embedding Gather on input_ids in the graph")


def _lm_head(model):
    return next((n for n in model.graph.node if n.op_type == "MatMul" and "lm_head" in n.name), None)


def _drop_unused(model):
    used = {i for n in model.graph.node for i in n.input}
    keep = [t for t in model.graph.initializer if t.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(keep)


def tie(model):
    """Point the output projection at the embedding when its weight is the embedding transposed; True if it was."""
    inits = _init(model)
    emb_name, head = _embedding(model), _lm_head(model)
    w = inits.get(head.input[1]) if head is not None else None
    if w is None:
        return False
    emb = numpy_helper.to_array(inits[emb_name])
    if not np.array_equal(numpy_helper.to_array(w), emb.T):
        return False
    # The static graph's lm_head input is [batch, n_embd] (the last position only): Gemm's 2-D form applies.
    gemm = helper.make_node("Gemm", [head.input[0], emb_name], list(head.output), name=head.name, transB=1)
    nodes = list(model.graph.node)
    nodes[nodes.index(head)] = gemm
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    _drop_unused(model)
    return True


def quantize_blocks(w_nk, bits):
    """w [N, K] float32 → (packed codes uint8 [N, blocks, BLOCK*bits/8], scales float32 [N*blocks],
    packed zero points uint8 [N * ceil(blocks*bits/8)]); K is zero-padded to a multiple of BLOCK."""
    n, k = w_nk.shape
    blocks = -(-k // BLOCK)
    w = np.zeros((n, blocks * BLOCK), np.float32)
    w[:, :k] = w_nk
    w = w.reshape(n, blocks, BLOCK)
    top = (1 << bits) - 1
    lo, hi = np.minimum(w.min(-1), 0.0), np.maximum(w.max(-1), 0.0)  # 0 stays exactly representable
    scale = (hi - lo) / top
    scale[scale == 0] = 1.0
    zp = np.clip(np.round(-lo / scale), 0, top).astype(np.uint8)
    q = np.clip(np.round(w / scale[..., None]) + zp[..., None], 0, top).astype(np.uint8)
    if bits == 4:  # two codes a byte, the lower K index in the low nibble
        q = q[..., 0::2] | (q[..., 1::2] << 4)
        if blocks % 2:
            zp = np.concatenate([zp, np.zeros((n, 1), np.uint8)], axis=1)
        zp = zp[:, 0::2] | (zp[:, 1::2] << 4)
    return q, scale.astype(np.float32).reshape(-1), zp.reshape(-1)


def dequantize_blocks(q, scale, zp, bits, k):
    """The float32 [N, K] weight MatMulNBits computes with (tests)."""
    n, blocks = q.shape[0], q.shape[1]
    if bits == 4:
        q = np.stack([q & 15, q >> 4], axis=-1).reshape(n, blocks, BLOCK)
        zp = np.stack([zp.reshape(n, -1) & 15, zp.reshape(n, -1) >> 4], axis=-1).reshape(n, -1)[:, :blocks]
    w = (q.astype(np.float32) - zp.reshape(n, blocks, 1)) * scale.reshape(n, blocks, 1)
    return w.reshape(n, -1)[:, :k]


def quantize(model, bits):
    """Every MatMul with a 2-D constant weight (and the tied Gemm) → MatMulNBits; returns how many."""
    inits = _init(model)
    nodes, count = [], 0
    for node in model.graph.node:
        b = inits.get(node.input[1]) if len(node.input) > 1 else None
        tied = node.op_type == "Gemm" and b is not None and any(a.name == "transB" and a.i == 1 for a in node.attribute)
        if b is None or len(b.dims) != 2 or not (node.op_type == "MatMul" or tied):
            nodes.append(node)
            continue
        w = numpy_helper.to_array(b)
        w_nk = w if tied else w.T  # MatMulNBits stores B as [N, K]
        n, k = w_nk.shape
        nb = 8 if tied or "lm_head" in node.name else bits
        q, scale, zp = quantize_blocks(np.ascontiguousarray(w_nk, np.float32), nb)
        base = f"{node.input[1]}_q{nb}_{count}"
        model.graph.initializer.extend([numpy_helper.from_array(q, base), numpy_helper.from_array(scale, base + "_scales"),
                                        numpy_helper.from_array(zp, base + "_zp")])
        nodes.append(helper.make_node("MatMulNBits", [node.input[0], base, base + "_scales", base + "_zp"],
                                      list(node.output), name=node.name, domain="com.microsoft",
                                      K=k, N=n, bits=nb, block_size=BLOCK, accuracy_level=4))
        count += 1
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    _drop_unused(model)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return count


def store(model, weights):
    """Rewrite the exported static graph in place: tied output projection, then the chosen weight format."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights {weights!r}: one of {', '.join(WEIGHTS)}")
    tie(model)
    if WEIGHTS[weights]:
        quantize(model, WEIGHTS[weights])
