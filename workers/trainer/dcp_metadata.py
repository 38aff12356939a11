"""
The optimiser's torch.distributed.checkpoint (DCP) folder described in JSON, so that nothing of it is ever unpickled.

DCP writes its `.metadata` as a pickle and reads it with a plain pickle.load; its default planner reads any entry
the metadata calls "bytes" with an unrestricted torch.load. Both would run a crafted checkpoint's code. So:

- at save, the Metadata that dcp.save returns is written as `metadata.json` (to_json: per tensor its dtype, size
  and chunks; per stored chunk its file, offset and length) and DCP's pickle is deleted;
- at load, the Metadata is built from that JSON only (read/from_json), every field checked on the way: tensors only,
  dtypes by name from torch's own list, sizes of non-negative integers, every storage entry a plain `*.distcp` file
  inside the folder (after symlinks), no stream transforms. A folder without it (an older checkpoint, whose only
  metadata is DCP's pickle) is refused, never unpickled;
- the planner refuses "bytes" entries as well (TensorOnlyPlanner). Tensor data is read by DCP with
  torch.load(weights_only=True).
"""
import json
import os

import torch

FILE = "metadata.json"
FORMAT = "toolsmith-dcp-metadata/1"
# The largest metadata.json read (a model's optimiser state has a few entries per parameter tensor).
MAX_BYTES = 64 << 20


class MetadataError(ValueError):
    """The optimiser folder is not one this trainer reads (crafted, corrupt, or written before metadata.json)."""


def _md():
    from torch.distributed.checkpoint import filesystem, metadata
    return metadata, filesystem


def _dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def to_json(md_obj):
    """The JSON form of DCP Metadata that describes tensors (what optimizer_tensors saves)."""
    md, _ = _md()
    tensors = {}
    for fqn, m in md_obj.state_dict_metadata.items():
        if type(m) is not md.TensorStorageMetadata:
            raise MetadataError(f"{fqn}: not a tensor entry ({type(m).__name__}); optimiser state is tensors only")
        tensors[fqn] = {"dtype": _dtype_name(m.properties.dtype), "size": list(m.size),
                        "chunks": [{"offsets": list(c.offsets), "sizes": list(c.sizes)} for c in m.chunks]}
    storage = []
    for k, s in md_obj.storage_data.items():
        if s.transform_descriptors:
            raise MetadataError(f"{k.fqn}: stream transforms are not written")
        storage.append({"fqn": k.fqn, "offset": None if k.offset is None else list(k.offset), "index": k.index,
                        "file": s.relative_path, "at": s.offset, "length": s.length})
    return {"format": FORMAT, "tensors": tensors, "storage": storage}


def write(folder, md_obj):
    """metadata.json in a folder dcp.save has just written, and DCP's own pickle removed (nothing reads it)."""
    with open(os.path.join(folder, FILE), "w") as f:
        json.dump(to_json(md_obj), f)
    pickled = os.path.join(folder, ".metadata")
    if os.path.exists(pickled):
        os.remove(pickled)


def _ints(v, what):
    if not isinstance(v, list) or not all(type(x) is int and x >= 0 for x in v):
        raise MetadataError(f"{what}: expected a list of non-negative integers")
    return torch.Size(v)


def _dtype(name, what):
    dtype = getattr(torch, name, None) if isinstance(name, str) and name.isidentifier() else None
    if not isinstance(dtype, torch.dtype):
        raise MetadataError(f"{what}: {str(name)[:40]!r} is not a torch dtype")
    return dtype


def _storage_file(name, folder, what):
    if not isinstance(name, str) or os.path.basename(name) != name or name in ("", ".", "..") or "\0" in name \
            or not name.endswith(".distcp"):
        raise MetadataError(f"{what}: {str(name)[:100]!r} is not a .distcp file of the folder")
    real = os.path.realpath(os.path.join(folder, name))
    if os.path.dirname(real) != os.path.realpath(folder) or not os.path.isfile(real):
        raise MetadataError(f"{what}: {name} is not a file inside the folder")
    return name


def from_json(doc, folder):
    """DCP Metadata from the JSON form, each field checked (MetadataError naming it); storage files in folder."""
    md, fs = _md()
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise MetadataError(f"format: expected {FORMAT!r}")
    tensors, storage = doc.get("tensors"), doc.get("storage")
    if not isinstance(tensors, dict) or not isinstance(storage, list):
        raise MetadataError("expected an object of tensors and a list of storage entries")
    sdm = {}
    for fqn, t in tensors.items():
        what = f"tensors[{fqn[:100]}]"
        if not isinstance(t, dict) or set(t) != {"dtype", "size", "chunks"} or not isinstance(t["chunks"], list):
            raise MetadataError(f"{what}: expected exactly dtype, size and a list of chunks")
        chunks = []
        for c in t["chunks"]:
            if not isinstance(c, dict) or set(c) != {"offsets", "sizes"}:
                raise MetadataError(f"{what}.chunks: expected offsets and sizes")
            chunks.append(md.ChunkStorageMetadata(offsets=_ints(c["offsets"], f"{what}.offsets"),
                                                  sizes=_ints(c["sizes"], f"{what}.sizes")))
        sdm[fqn] = md.TensorStorageMetadata(properties=md.TensorProperties(dtype=_dtype(t["dtype"], f"{what}.dtype")),
                                            size=_ints(t["size"], f"{what}.size"), chunks=chunks)
    storage_data = {}
    for i, s in enumerate(storage):
        what = f"storage[{i}]"
        if not isinstance(s, dict) or set(s) != {"fqn", "offset", "index", "file", "at", "length"}:
            raise MetadataError(f"{what}: expected exactly fqn, offset, index, file, at and length")
        if s["fqn"] not in sdm:
            raise MetadataError(f"{what}: {str(s['fqn'])[:100]!r} names no tensor entry")
        if s["index"] is not None and (type(s["index"]) is not int or s["index"] < 0):
            raise MetadataError(f"{what}.index: expected a non-negative integer or null")
        if not all(type(s[k]) is int and s[k] >= 0 for k in ("at", "length")):
            raise MetadataError(f"{what}: bad offset or length")
        offset = None if s["offset"] is None else _ints(s["offset"], f"{what}.offset")
        key = md.MetadataIndex(fqn=s["fqn"], offset=offset, index=s["index"])
        storage_data[key] = fs._StorageInfo(relative_path=_storage_file(s["file"], folder, f"{what}.file"),
                                            offset=s["at"], length=s["length"])
    return md.Metadata(state_dict_metadata=sdm, storage_data=storage_data, storage_meta=md.StorageMeta())


def read(folder):
    """The checked Metadata of an optimiser folder, from its metadata.json."""
    path = os.path.join(folder, FILE)
    if not os.path.lexists(path):
        older = " (it holds only DCP's pickled .metadata, written by an older Toolsmith; pickles are never read)" \
            if os.path.lexists(os.path.join(folder, ".metadata")) else ""
        raise MetadataError(f"no {FILE}{older}")
    real = os.path.realpath(path)
    if os.path.dirname(real) != os.path.realpath(folder) or not os.path.isfile(real):
        raise MetadataError(f"{FILE} is not a file inside the folder")
    if os.path.getsize(real) > MAX_BYTES:
        raise MetadataError(f"{FILE} is over {MAX_BYTES >> 20} MB")
    with open(real, "rb") as f:
        try:
            doc = json.loads(f.read())
        except ValueError as e:
            raise MetadataError(f"{FILE} is not JSON ({str(e)[:100]})")
    return from_json(doc, folder)


def reader(folder):
    """A DCP FileSystemReader whose metadata comes from read() (its tensors DCP reads with weights_only)."""
    from torch.distributed.checkpoint import FileSystemReader

    class JsonMetadataReader(FileSystemReader):
        def read_metadata(self, *args, **kwargs):
            md_obj = read(folder)
            md_obj.storage_meta.load_id = getattr(self, "load_id", None)
            return md_obj

    return JsonMetadataReader(folder)


def planner():
    """DCP's default load planner, refusing "bytes" entries (it would load them with an unrestricted torch.load)."""
    from torch.distributed.checkpoint import DefaultLoadPlanner

    class TensorOnlyPlanner(DefaultLoadPlanner):
        def load_bytes(self, read_item, value):
            raise MetadataError(f"{read_item.dest_index.fqn[:100]}: a bytes entry; optimiser state is tensors only")

    return TensorOnlyPlanner()
