"""
What an import checks of a model directory without loading its weights (model_tool.py inspect, and the start of
`check`): the tokenizer files, the architecture built on the meta device from config.json, and the safetensors
headers (metadata only) checked against it name by name, shape by shape. A pickle is never opened.
"""
import glob
import json
import os

SUPPORTED_DTYPES = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}
DTYPE_NAMES = {"F64": "float64", "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8",
               "BOOL": "bool", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", **SUPPORTED_DTYPES}
PICKLE_EXTS = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
# The template the char tokenizer carries; also given to a tokenizer.json that comes without one.
CHATML_EOS = ("<|im_end|>", "<|endoftext|>")



class ToolError(Exception):
    def __init__(self, field, message):
        super().__init__(message)
        self.field = field
        self.message = message



# ------------------------------------------------------------------------------------------------ tokenizer files

def tokenizer_size(tok_json):
    """Ids a tokenizer.json can produce: the model's vocabulary and the added tokens (max id + 1)."""
    vocab = (tok_json.get("model") or {}).get("vocab")
    ids = list(vocab.values()) if isinstance(vocab, dict) else list(range(len(vocab or [])))
    ids += [t["id"] for t in tok_json.get("added_tokens") or [] if isinstance(t.get("id"), int)]
    return max(ids) + 1 if ids else 0


def token_in(tok_json, content):
    vocab = (tok_json.get("model") or {}).get("vocab")
    if any(t.get("content") == content for t in tok_json.get("added_tokens") or []):
        return True
    return isinstance(vocab, dict) and content in vocab


def chat_template_of(model_dir, tok_cfg):
    """The chat template a model directory carries (tokenizer_config.json's, or chat_template.jinja), or None."""
    t = tok_cfg.get("chat_template") if isinstance(tok_cfg, dict) else None
    if isinstance(t, list):
        t = next((x.get("template") for x in t if isinstance(x, dict) and x.get("name") == "default"), None) or \
            next((x.get("template") for x in t if isinstance(x, dict)), None)
    if isinstance(t, str) and t.strip():
        return t
    p = os.path.join(model_dir, "chat_template.jinja")
    if os.path.isfile(p):
        with open(p, encoding="utf-8") as f:
            text = f.read()
        return text if text.strip() else None
    return None


def tokenizer_files_from(file, block_size):
    """{name: text} for a model made with a real tokenizer.json: the file itself, and the tokenizer_config.json next
    to it when there is one (with chat_template.jinja when the template lives there); otherwise a config with the
    ChatML template and <|im_end|> (or <|endoftext|>) as eos when the vocabulary has it."""
    import char_tokenizer
    from tokenizers import Tokenizer

    if not os.path.isfile(file):
        raise ToolError("--tokenizer", f"{file} does not exist (give a tokenizer.json, or 'char')")
    try:
        Tokenizer.from_file(file)
        with open(file, encoding="utf-8") as f:
            text = f.read()
        tok_json = json.loads(text)
    except Exception as e:  # noqa: BLE001 - any parse failure is the user's file
        raise ToolError("--tokenizer", f"{file} is not a tokenizer.json the tokenizers library reads ({str(e).splitlines()[0]})")
    out = {"tokenizer.json": text}
    here = os.path.dirname(os.path.abspath(file))
    cfg_file = os.path.join(here, "tokenizer_config.json")
    if os.path.isfile(cfg_file):
        with open(cfg_file, encoding="utf-8") as f:
            cfg = json.load(f)
    else:
        eos = next((t for t in CHATML_EOS if token_in(tok_json, t)), None)
        pad = "<|endoftext|>" if token_in(tok_json, "<|endoftext|>") else eos
        cfg = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": eos, "pad_token": pad,
               "model_max_length": block_size, "clean_up_tokenization_spaces": False}
    if chat_template_of(here, cfg) is None:
        cfg["chat_template"] = char_tokenizer.CHAT_TEMPLATE
    elif not (isinstance(cfg.get("chat_template"), (str, list))) and os.path.isfile(os.path.join(here, "chat_template.jinja")):
        with open(os.path.join(here, "chat_template.jinja"), encoding="utf-8") as f:
            out["chat_template.jinja"] = f.read()
    out["tokenizer_config.json"] = json.dumps(cfg, ensure_ascii=False, indent=2)
    return out, tokenizer_size(tok_json)


# --------------------------------------------------------------------------------------------------------- inspect

def _read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _dir_bytes(model_dir):
    total = 0
    for name in os.listdir(model_dir):
        p = os.path.join(model_dir, name)
        if os.path.isfile(p):
            total += os.path.getsize(p)
    return total


def _weight_files(model_dir, problems):
    """The safetensors files of a model (the index's shards, or every *.safetensors), [] with a problem when none."""
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.isfile(index):
        try:
            shards = sorted(set(_read_json(index)["weight_map"].values()))
        except Exception as e:  # noqa: BLE001
            problems.append({"field": "weights", "message": f"model.safetensors.index.json is unreadable ({e}); it needs a weight_map"})
            return []
        missing = [s for s in shards if not os.path.isfile(os.path.join(model_dir, s))]
        if missing:
            problems.append({"field": "weights", "message": f"{len(missing)} of the {len(shards)} shards model.safetensors.index.json names are missing: {', '.join(missing[:3])}"})
            return []
        return [os.path.join(model_dir, s) for s in shards]
    files = sorted(glob.glob(os.path.join(model_dir, "*.safetensors")))
    if files:
        return files
    pickles = sorted(n for n in os.listdir(model_dir) if n.endswith(PICKLE_EXTS))
    if pickles:
        problems.append({"field": "weights", "message": (
            f"weights only as pickles ({', '.join(pickles[:3])}): Toolsmith never loads a pickle (unpickling runs code); "
            "convert them to safetensors first, where you trust the file (AutoModelForCausalLM.from_pretrained(DIR)"
            ".save_pretrained(OUT, safe_serialization=True))")})
    else:
        problems.append({"field": "weights", "message": "no weights: no *.safetensors file (model.safetensors, or shards listed by model.safetensors.index.json)"})
    return []


DTYPE_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "BF16": 2, "F16": 2, "I16": 2, "U16": 2,
               "I8": 1, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}


def read_header(fpath):
    """The JSON header of a safetensors file: 8 bytes of little-endian length, then the header. Read directly rather
    than through safetensors.safe_open, which maps the whole file: a 30 GB shard on a 16 GB laptop is refused."""
    size = os.path.getsize(fpath)
    with open(fpath, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError("shorter than a safetensors header")
        n = int.from_bytes(head, "little")
        if n <= 0 or n > 100 * 1024 * 1024 or 8 + n > size:
            raise ValueError(f"header length {n} does not fit the file ({size} bytes)")
        header = json.loads(f.read(n))
    if not isinstance(header, dict):
        raise ValueError("the header is not a JSON object")
    data = size - 8 - n
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        shape, dt, (start, end) = tuple(v["shape"]), v["dtype"], v["data_offsets"]
        if not 0 <= start <= end <= data:
            raise ValueError(f"{k}: data offsets {start}..{end} outside the file's {data} data bytes")
        if dt in DTYPE_BYTES and end - start != _numel(shape) * DTYPE_BYTES[dt]:
            raise ValueError(f"{k}: {end - start} bytes for a {dt} tensor of shape {list(shape)}")
        out[k] = (shape, dt)
    return out


def _headers(files, problems):
    """{tensor name: (shape, dtype)} from the safetensors headers: metadata only, no tensor is read."""
    out = {}
    for fpath in files:
        try:
            out.update(read_header(fpath))
        except Exception as e:  # noqa: BLE001
            problems.append({"field": "weights", "message": f"{os.path.basename(fpath)} is not a readable safetensors file ({str(e).splitlines()[0][:200]})"})
    return out


def _numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _architecture(model_dir, raw, problems):
    """The transformers config, or None with a problem: a causal LM (decoder-only) transformers knows, without remote code."""
    import transformers
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    model_type = raw.get("model_type")
    declared = raw.get("architectures") or []
    if not model_type:
        problems.append({"field": "architecture", "message": "config.json has no model_type: transformers cannot tell which architecture it is"})
        return None
    try:
        config = AutoConfig.from_pretrained(model_dir, trust_remote_code=False)
    except Exception as e:  # noqa: BLE001
        remote = " and it needs remote code (auto_map), which Toolsmith never runs" if raw.get("auto_map") else ""
        problems.append({"field": "architecture", "message": f"model_type {model_type!r} is not an architecture transformers {transformers.__version__} knows{remote} ({str(e).splitlines()[0][:200]})"})
        return None
    causal_classes = set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values())
    name = declared[0] if declared else model_type
    if config.model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        problems.append({"field": "architecture", "message": f"{name} ({model_type}) is not a causal language model: transformers' AutoModelForCausalLM has no class for it (supported: decoder-only models such as Qwen3, Qwen2, Llama)"})
        return None
    undeclared = [a for a in declared if a not in causal_classes]
    why = ("it is an encoder-decoder" if getattr(config, "is_encoder_decoder", False)
           else "it is an encoder (is_decoder is false)" if getattr(config, "is_decoder", None) is False
           else f"{undeclared[0]} is not one of transformers' causal LM classes" if undeclared else None)
    if why:
        problems.append({"field": "architecture", "message": f"{(undeclared or [name])[0]} ({model_type}) is not a decoder-only causal language model: {why}; Toolsmith trains decoder-only models such as Qwen3, Qwen2, Llama"})
        return None
    if raw.get("quantization_config"):
        method = (raw["quantization_config"] or {}).get("quant_method", "?")
        problems.append({"field": "dtype", "message": f"quantised weights ({method}) are not supported: float32, bfloat16 or float16 only"})
        return None
    return config


def _declared_dtype(raw):
    d = raw.get("dtype") or raw.get("torch_dtype")
    if d is None and isinstance(raw.get("text_config"), dict):
        d = raw["text_config"].get("dtype") or raw["text_config"].get("torch_dtype")
    return str(d).replace("torch.", "") if d else None


def inspect_dir(model_dir):
    """(problems, warnings, summary, context): everything an import checks, each problem naming its piece."""
    problems, warnings = [], []
    summary = {"architecture": None, "model_type": None, "parameters": None, "vocab": None, "tokenizer_vocab": None,
               "dtype": None, "layers": None, "hidden": None, "heads": None, "kv_heads": None, "head_dim": None,
               "intermediate": None, "block_size": None, "tie_word_embeddings": None, "weights_bytes": None,
               "size_bytes": None}
    ctx = {}
    if not os.path.isdir(model_dir):
        problems.append({"field": "dir", "message": f"{model_dir} is not a directory"})
        return problems, warnings, summary, ctx
    summary["size_bytes"] = _dir_bytes(model_dir)

    raw, config = _inspect_config(model_dir, summary, problems)
    headers = _inspect_weights(model_dir, raw, summary, problems, warnings)
    _inspect_meta_model(config, headers, summary, problems, ctx)
    _inspect_tokenizer(model_dir, summary, problems)
    return problems, warnings, summary, ctx


def _inspect_config(model_dir, summary, problems):
    """config.json → the architecture: (the raw JSON, the transformers config), each None when unreadable."""
    raw, config = None, None
    cfg_path = os.path.join(model_dir, "config.json")
    if not os.path.isfile(cfg_path):
        problems.append({"field": "config", "message": "no config.json: a Hugging Face model directory describes its architecture there"})
    else:
        try:
            raw = _read_json(cfg_path)
        except Exception as e:  # noqa: BLE001
            problems.append({"field": "config", "message": f"config.json is not valid JSON ({e})"})
        if isinstance(raw, dict):
            summary["model_type"] = raw.get("model_type")
            summary["architecture"] = (raw.get("architectures") or [None])[0]
            config = _architecture(model_dir, raw, problems)
        elif raw is not None:
            problems.append({"field": "config", "message": "config.json is not a JSON object"})
    if config is not None:
        text = config.get_text_config() if hasattr(config, "get_text_config") else config
        heads = getattr(text, "num_attention_heads", None)
        hidden = getattr(text, "hidden_size", None)
        summary.update({
            "layers": getattr(text, "num_hidden_layers", None), "hidden": hidden, "heads": heads,
            "kv_heads": getattr(text, "num_key_value_heads", None) or heads,
            "head_dim": getattr(text, "head_dim", None) or (hidden // heads if hidden and heads else None),
            "intermediate": getattr(text, "intermediate_size", None), "vocab": getattr(text, "vocab_size", None),
            "block_size": getattr(text, "max_position_embeddings", None),
            "tie_word_embeddings": bool(getattr(config, "tie_word_embeddings", False)),
        })
    return raw, config


def _inspect_weights(model_dir, raw, summary, problems, warnings):
    """The weights (safetensors only, headers only): their size and main dtype, checked against config.json's."""
    files = _weight_files(model_dir, problems)
    headers = _headers(files, problems) if files else {}
    if files:
        summary["weights_bytes"] = sum(os.path.getsize(f) for f in files)
    by_dtype = {}
    for name, (shape, dt) in headers.items():
        by_dtype[dt] = by_dtype.get(dt, 0) + _numel(shape)
    bad = {dt: n for dt, n in by_dtype.items() if dt not in SUPPORTED_DTYPES}
    if bad:
        example = next(k for k, (_, dt) in headers.items() if dt in bad)
        problems.append({"field": "dtype", "message": f"weights in {', '.join(DTYPE_NAMES.get(d, d) for d in bad)} (e.g. {example}): only float32, bfloat16 and float16 are supported"})
    floats = {dt: n for dt, n in by_dtype.items() if dt in SUPPORTED_DTYPES}
    main = SUPPORTED_DTYPES[max(floats, key=floats.get)] if floats else None
    declared = _declared_dtype(raw) if isinstance(raw, dict) else None
    if declared and declared not in SUPPORTED_DTYPES.values() and declared != "auto":
        problems.append({"field": "dtype", "message": f"config.json's dtype is {declared}: only float32, bfloat16 and float16 are supported"})
    elif declared and main and declared != main:
        warnings.append({"field": "dtype", "message": f"config.json says {declared} but the weights are mostly {main}: they load as {main}"})
    summary["dtype"] = main or declared
    return headers


def _inspect_meta_model(config, headers, summary, problems, ctx):
    """The model on the meta device: the parameter count, and what the headers must hold."""
    if config is not None:
        import torch
        from transformers import AutoModelForCausalLM

        try:
            with torch.device("meta"):
                model = AutoModelForCausalLM.from_config(config, trust_remote_code=False)
        except Exception as e:  # noqa: BLE001
            problems.append({"field": "architecture", "message": f"transformers could not build {summary['architecture'] or config.model_type} from config.json ({str(e).splitlines()[0][:200]})"})
            model = None
        if model is not None:
            params = dict(model.named_parameters())  # tied weights once, as the checkpoint stores them
            summary["parameters"] = sum(p.numel() for p in params.values())
            summary["architecture"] = summary["architecture"] or type(model).__name__
            ctx["meta_parameters"] = summary["parameters"]
            if headers:
                _cover(model, params, headers, problems)
    if summary["parameters"] is None and headers:
        summary["parameters"] = sum(_numel(s) for s, _ in headers.values())


def _inspect_tokenizer(model_dir, summary, problems):
    """tokenizer.json (readable, no larger than the embedding) and the chat template."""
    tok_path = os.path.join(model_dir, "tokenizer.json")
    if not os.path.isfile(tok_path):
        alt = [n for n in ("tokenizer.model", "vocab.json", "merges.txt") if os.path.isfile(os.path.join(model_dir, n))]
        hint = f" (it has {', '.join(alt)}: AutoTokenizer.from_pretrained(DIR).save_pretrained(DIR) writes a tokenizer.json)" if alt else ""
        problems.append({"field": "tokenizer", "message": f"no tokenizer.json: the rollout side and the trainer both read the tokenizer from it{hint}"})
    else:
        try:
            from tokenizers import Tokenizer

            Tokenizer.from_file(tok_path)
            summary["tokenizer_vocab"] = tokenizer_size(_read_json(tok_path))
        except Exception as e:  # noqa: BLE001
            problems.append({"field": "tokenizer", "message": f"tokenizer.json is not a tokenizer the tokenizers library reads ({str(e).splitlines()[0][:200]})"})
        if summary["tokenizer_vocab"] and summary["vocab"] and summary["tokenizer_vocab"] > summary["vocab"]:
            problems.append({"field": "vocab", "message": f"the tokenizer has {summary['tokenizer_vocab']} tokens but the model's embedding only {summary['vocab']} rows"})
    tok_cfg = {}
    cfg_file = os.path.join(model_dir, "tokenizer_config.json")
    if os.path.isfile(cfg_file):
        try:
            tok_cfg = _read_json(cfg_file)
        except Exception as e:  # noqa: BLE001
            problems.append({"field": "tokenizer_config", "message": f"tokenizer_config.json is not valid JSON ({e})"})
    if chat_template_of(model_dir, tok_cfg) is None:
        problems.append({"field": "chat_template", "message": "no chat template: neither tokenizer_config.json's chat_template nor chat_template.jinja (prompts are rendered with it; add one, e.g. the ChatML template Qwen uses)"})


def _cover(model, params, headers, problems):
    """Every parameter of the meta model must be in the headers with its shape (names as the checkpoint stores them)."""
    try:
        from transformers.conversion_mapping import extract_weight_conversions_for_model

        converted = bool(extract_weight_conversions_for_model(model))
    except Exception:  # noqa: BLE001 - older transformers: no conversions
        converted = False
    if converted:
        # transformers renames or fuses this architecture's weights as it loads them (e.g. MoE experts): compare sizes.
        want, have = sum(p.numel() for p in params.values()), sum(_numel(s) for s, dt in headers.values() if dt in SUPPORTED_DTYPES)
        if have < want:
            problems.append({"field": "weights", "message": f"the safetensors files hold {have:,} weights but the model has {want:,} parameters"})
        return
    prefix = f"{model.base_model_prefix}." if getattr(model, "base_model_prefix", "") else ""
    missing, wrong = [], []
    for name, p in params.items():
        h = headers.get(name)
        if h is None and prefix and name.startswith(prefix):
            h = headers.get(name[len(prefix):])
        if h is None:
            missing.append(name)
        elif tuple(h[0]) != tuple(p.shape):
            wrong.append(f"{name}: {list(h[0])} in the file, {list(p.shape)} in the model config.json describes")
    if missing:
        problems.append({"field": "weights", "message": f"the safetensors files lack {len(missing)} of the model's {len(params)} parameter tensors, e.g. {', '.join(missing[:3])}"})
    if wrong:
        problems.append({"field": "weights", "message": f"{len(wrong)} tensors have the wrong shape, e.g. {wrong[0]}"})
