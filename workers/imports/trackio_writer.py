"""Writes one Toolsmith run into Trackio's local store through Trackio's own client.

workers/imports/export-tracker.ts streams the run on stdin, one JSON record a line (contracts/tracker-export.ts): the
run's header first (project, name, group, config), then its metrics by step and its trajectories as traces. Trackio
keeps its store in TRACKIO_DIR (its own default when unset). Trackio's banners go to stderr; stdout carries one JSON
line: what was written, or {"error": {"field", "message"}} for a refusal the CLI prints as it is.
"""

import json
import os
import sys


def answer(obj, out):
    out.write(json.dumps(obj) + "\n")
    out.flush()


def main():
    out = sys.stdout
    sys.stdout = sys.stderr  # Trackio prints where it logged to; only our answer goes to stdout
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    try:
        import trackio
        from trackio.sqlite_storage import SQLiteStorage
    except ImportError as e:
        answer({"error": {"field": "--to", "message": f"trackio is not installed in the trainer's Python ({e}); run: node scripts/setup.mjs"}}, out)
        return 0
    header = json.loads(sys.stdin.readline())
    project, name = header["project"], header["name"]
    # A second export of one run would add a second run of that name beside the first: refused instead.
    if name in SQLiteStorage.get_runs(project):
        answer({"error": {"field": "RUN", "message": f"Trackio project {project} already holds run {name}; not written again (pick another --project)"}}, out)
        return 0
    trackio.init(project=project, name=name, group=header.get("group"), config=header["config"], embed=False)
    metrics = traces = 0
    for line in sys.stdin:
        record = json.loads(line)
        if record["type"] == "metrics":
            trackio.log(record["values"], step=record["step"])
            metrics += len(record["values"])
        elif record["type"] == "trace":
            trace = trackio.Trace(messages=record["messages"], metadata=record["metadata"], spans=record["spans"])
            trackio.log({record["key"]: trace}, step=record["step"])
            traces += 1
    trackio.finish()
    directory = os.environ.get("TRACKIO_DIR") or str(trackio.TRACKIO_DIR)
    answer({"project": project, "run": name, "where": directory, "metrics": metrics, "traces": traces}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
