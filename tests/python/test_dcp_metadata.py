"""
The optimiser checkpoint's metadata (workers/trainer/dcp_metadata.py): written as JSON in place of DCP's pickle, and
read back from JSON only. A pickle that would run a command (touch a marker file) if DCP's own pickle.load read it
is never read, whether beside metadata.json or alone (an older checkpoint: refused); crafted JSON that would point
DCP outside the folder or at something other than tensors is refused naming the field. A real DCP folder saves and
loads. Run by tests/integration/trainer-python.test.ts:

    .venv/bin/python -m unittest -v tests/python/test_dcp_metadata.py
"""
import io
import json
import os
import pickle
import shutil
import sys
import tempfile
import unittest
import warnings

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workers", "trainer"))
import dcp_metadata  # noqa: E402
from dcp_metadata import MetadataError  # noqa: E402
from torch.distributed.checkpoint import metadata as md  # noqa: E402


class Evil:
    """Unpickling this runs `touch MARKER`."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, ("touch " + self.marker,))


def saved(folder, state=None):
    """A real DCP folder with its metadata in JSON, as checkpoint.save leaves it; returns the state saved."""
    import torch.distributed.checkpoint as dcp
    state = state or {"w.exp_avg": torch.arange(6, dtype=torch.float32).reshape(2, 3), "w.step": torch.tensor(3.0),
                      "b.exp_avg": torch.ones(4, dtype=torch.bfloat16)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "torch.distributed is disabled ... single process"
        dcp_metadata.write(folder, dcp.save(state, checkpoint_id=folder))
    return state


def loaded(folder, state):
    import torch.distributed.checkpoint as dcp
    back = {k: torch.zeros_like(v) for k, v in state.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dcp.load(back, storage_reader=dcp_metadata.reader(folder), planner=dcp_metadata.planner())
    return back


class Folder(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.marker = os.path.join(self.dir, "..", os.path.basename(self.dir) + "-ran")
        self.state = saved(self.dir)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        if os.path.exists(self.marker):
            os.remove(self.marker)

    def doc(self):
        with open(os.path.join(self.dir, dcp_metadata.FILE)) as f:
            return json.load(f)

    def rewritten(self, doc):
        with open(os.path.join(self.dir, dcp_metadata.FILE), "w") as f:
            json.dump(doc, f)
        return dcp_metadata.read(self.dir)


class Saved(Folder):
    def test_save_writes_json_and_no_pickle_and_loads_back(self):
        self.assertEqual(sorted(os.listdir(self.dir)), ["__0_0.distcp", "metadata.json"])
        back = loaded(self.dir, self.state)
        for k in self.state:
            self.assertTrue(torch.equal(back[k], self.state[k]), k)
        self.assertEqual(self.doc()["tensors"]["b.exp_avg"]["dtype"], "bfloat16")

    def test_a_pickle_beside_it_is_never_read(self):
        with open(os.path.join(self.dir, ".metadata"), "wb") as f:
            pickle.dump(Evil(self.marker), f)
        loaded(self.dir, self.state)
        self.assertFalse(os.path.exists(self.marker), "the pickle ran")

    def test_an_older_folder_with_only_the_pickle_is_refused_unread(self):
        os.remove(os.path.join(self.dir, dcp_metadata.FILE))
        with open(os.path.join(self.dir, ".metadata"), "wb") as f:
            pickle.dump(Evil(self.marker), f)
        with self.assertRaisesRegex(MetadataError, r"no metadata\.json \(it holds only DCP's pickled \.metadata.*never read"):
            dcp_metadata.read(self.dir)
        self.assertFalse(os.path.exists(self.marker), "the pickle ran")

    def test_bytes_entries_are_never_written_nor_loaded(self):
        with self.assertRaisesRegex(MetadataError, r"not a tensor entry \(BytesStorageMetadata\)"):
            dcp_metadata.to_json(md.Metadata(state_dict_metadata={"x": md.BytesStorageMetadata()}))

        class Item:
            class dest_index:
                fqn = "w.exp_avg"
        with self.assertRaisesRegex(MetadataError, r"a bytes entry"):
            dcp_metadata.planner().load_bytes(Item(), io.BytesIO(b"anything"))


class Crafted(Folder):
    def test_fields_are_checked_and_named(self):
        cases = [
            (lambda d: d.update(format="other"), r"format: expected"),
            (lambda d: d["tensors"]["w.exp_avg"].update(dtype="system"), r"tensors\[w\.exp_avg\]\.dtype: 'system' is not a torch dtype"),
            (lambda d: d["tensors"]["w.exp_avg"].update(dtype="os.system"), r"is not a torch dtype"),
            (lambda d: d["tensors"]["w.exp_avg"].update(size=[2, -3]), r"tensors\[w\.exp_avg\]\.size: expected a list of non-negative"),
            (lambda d: d["tensors"]["w.exp_avg"].update(size=[2, True]), r"\.size: expected"),
            (lambda d: d["tensors"]["w.exp_avg"].update(kind="bytes"), r"expected exactly dtype, size and a list of chunks"),
            (lambda d: d["tensors"]["w.exp_avg"]["chunks"][0].update(offsets="0"), r"\.offsets: expected"),
            (lambda d: d["storage"][0].update(fqn="other"), r"storage\[0\]: 'other' names no tensor entry"),
            (lambda d: d["storage"][0].update(at=-1), r"storage\[0\]: bad offset or length"),
            (lambda d: d["storage"][0].update(transforms=["zstd"]), r"storage\[0\]: expected exactly"),
            (lambda d: d["storage"][0].update(index="0"), r"storage\[0\]\.index"),
        ]
        good = json.dumps(self.doc())
        for change, why in cases:
            d = json.loads(good)
            change(d)
            with self.assertRaisesRegex(MetadataError, why, msg=why):
                self.rewritten(d)

    def test_storage_files_stay_inside_the_folder(self):
        outside = tempfile.mkdtemp()
        try:
            with open(os.path.join(outside, "x.distcp"), "wb") as f:
                f.write(b"\0" * 64)
            os.symlink(os.path.join(outside, "x.distcp"), os.path.join(self.dir, "link.distcp"))
            good = json.dumps(self.doc())
            for name, why in (("../x.distcp", "not a .distcp file of the folder"), (os.path.join(outside, "x.distcp"), "not a .distcp file of the folder"),
                              ("link.distcp", "not a file inside the folder"), ("missing.distcp", "not a file inside the folder"),
                              ("__0_0.py", "not a .distcp file")):
                d = json.loads(good)
                d["storage"][0]["file"] = name
                with self.assertRaisesRegex(MetadataError, r"storage\[0\]\.file: .*" + why, msg=name):
                    self.rewritten(d)
            # The metadata file itself as a link out of the folder.
            os.remove(os.path.join(self.dir, dcp_metadata.FILE))
            with open(os.path.join(outside, "m.json"), "w") as f:
                f.write(good)
            os.symlink(os.path.join(outside, "m.json"), os.path.join(self.dir, dcp_metadata.FILE))
            with self.assertRaisesRegex(MetadataError, r"metadata\.json is not a file inside the folder"):
                dcp_metadata.read(self.dir)
        finally:
            shutil.rmtree(outside, ignore_errors=True)

    def test_not_json(self):
        with open(os.path.join(self.dir, dcp_metadata.FILE), "wb") as f:
            f.write(pickle.dumps(Evil(self.marker)))
        with self.assertRaisesRegex(MetadataError, r"metadata\.json is not JSON"):
            dcp_metadata.read(self.dir)
        self.assertFalse(os.path.exists(self.marker))


if __name__ == "__main__":
    unittest.main()
