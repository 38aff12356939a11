"""
verl's own rollout dump, run without verl's dependencies (for the import tests). verl 0.9.1 cannot be installed
beside the project's transformers (it requires transformers<5.11) and needs Ray workers and GPUs to reach its dump,
so this reads `RayPPOTrainer._write_generations` (a staticmethod that needs only os and json) from the pinned wheel's
own source, unchanged, and calls it as RayPPOTrainer._dump_generations does: one `{step}.jsonl` per step.

usage: verl_dump.py WHEEL OUT_DIR
"""
import ast
import json
import os
import sys
import textwrap
import zipfile

wheel, out = sys.argv[1], sys.argv[2]
source = zipfile.ZipFile(wheel).read("verl/trainer/ppo/ray_trainer.py").decode()
fn = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == "_write_generations")
assert [ast.unparse(d) for d in fn.decorator_list] == ["staticmethod"], "verl changed _write_generations"
code = textwrap.dedent(ast.get_source_segment(source, fn, padded=True))
namespace = {"os": os, "json": json}
exec(compile(code.replace("@staticmethod\n", "", 1), f"{wheel}!ray_trainer.py", "exec"), namespace)
write = namespace["_write_generations"]

for step in (1, 2):
    inputs = [f"Q{g}: what is {g} + {step}?" for g in range(2) for _ in range(3)]
    outputs = [f"<think>...</think> {g + step if s else -1}" for g in range(2) for s in range(3)]
    gts = [str(g + step) for g in range(2) for _ in range(3)]
    scores = [1.0 if s else 0.0 for _ in range(2) for s in range(3)]
    extra = {"acc": [bool(s) for _ in range(2) for s in range(3)], "pred": [o.split()[-1] for o in outputs]}
    write(inputs, outputs, gts, scores, extra, os.path.join(out, "rollout"), step)
write(["V: 1 + 1?"], ["2"], ["2"], [1.0], {}, os.path.join(out, "validation"), 2)
