"""Writes one Toolsmith run into an MLflow tracking server through MLflow's own client.

workers/imports/export-tracker.ts streams the run on stdin, one JSON record a line (contracts/tracker-export.ts): the
run's header first, then its metrics by step and its trajectories as traces. The server is MLFLOW_TRACKING_URI. The
project is the experiment (created when missing); the run is named by the Toolsmith run's name and tagged with its
id; the config becomes parameters ("recipe.rl.steps"), each cut at MLflow's 6,000 characters, and the whole config
an artifact (toolsmith/config.json), so nothing is lost to the cut; each trajectory a trace linked to the run, its
root span the trajectory, a child span per generation turn (LLM) and per tool call (TOOL). MLflow's spans need
times: where the source kept none, a span takes its trajectory's and says so (attribute toolsmith.untimed).
Stdout carries one JSON line: what was written, or {"error": {"field", "message"}}.
"""

import json
import os
import sys
from datetime import datetime

MAX_PARAM = 6000
BATCH = 1000  # MLflow's limit on metrics per log_batch
PARAM_BATCH = 100  # and on parameters


def answer(obj, out):
    out.write(json.dumps(obj) + "\n")
    out.flush()


def flatten(value, prefix, into):
    if isinstance(value, dict) and value:
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), into)
        return
    text = value if isinstance(value, str) else json.dumps(value)
    into.append((prefix, text if len(text) <= MAX_PARAM else text[: MAX_PARAM - 40] + f"… ({len(text)} chars: config.json)"))


def ns(iso):
    return round(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000) * 1_000_000


def span_window(spans):
    times = [ns(s[k]) for s in spans for k in ("start_time", "end_time") if s.get(k)]
    return (min(times), max(times)) if times else (None, None)


def write_trace(client, exp_id, run_id, record):
    from mlflow.entities import SpanType

    start, end = span_window(record["spans"])
    if start is None:  # nothing timed: the export's own time, said so
        start = end = int(datetime.now().timestamp() * 1e9)
    meta = record["metadata"]
    root = client.start_trace(
        name=f"trajectory {meta['trajectoryId']}",
        inputs={"messages": record["messages"][:1]},
        attributes={k: json.dumps(v) for k, v in meta.items()},
        tags={"toolsmith.trajectory_id": meta["trajectoryId"], "toolsmith.split": meta["split"], "toolsmith.step": str(record["step"])},
        experiment_id=exp_id,
        start_time_ns=start,
        run_id=run_id,
    )
    for s in record["spans"]:
        timed = bool(s.get("start_time"))
        span = client.start_span(
            name=s["name"],
            trace_id=root.trace_id,
            parent_id=root.span_id,
            span_type=SpanType.LLM if s["kind"] == "generation" else SpanType.TOOL,
            inputs={"code": s["input"]} if "input" in s else None,
            attributes={**{k: json.dumps(v) for k, v in s["metadata"].items()}, **({} if timed else {"toolsmith.untimed": "true"})},
            start_time_ns=ns(s["start_time"]) if timed else start,
        )
        client.end_span(
            trace_id=root.trace_id,
            span_id=span.span_id,
            outputs={"text": s.get("output", "")},
            status="OK" if s["status"] == "success" else "ERROR",
            end_time_ns=ns(s["end_time"]) if timed else end,
        )
    client.end_trace(trace_id=root.trace_id, outputs={"messages": record["messages"][1:], "answer": meta.get("answer")}, end_time_ns=end)


def main():
    out = sys.stdout
    sys.stdout = sys.stderr  # MLflow prints links to what it made; only our answer goes to stdout
    uri = os.environ.get("MLFLOW_TRACKING_URI", "")
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    # A server that is not there is said within seconds, not after MLflow's default 7 retries with backoff; once it
    # has answered, the export's many requests get MLflow's own retries (or the user's), so that a long export
    # rides out a moment's failure. MLflow reads the variable at each request (mlflow/utils/rest_utils.py).
    retries = os.environ.get("MLFLOW_HTTP_REQUEST_MAX_RETRIES")
    os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] = retries or "2"
    try:
        from mlflow import MlflowClient
        from mlflow.entities import Metric, Param
    except ImportError as e:
        answer({"error": {"field": "--to", "message": f"mlflow is not installed in the trainer's Python ({e}); run: node scripts/setup.mjs"}}, out)
        return 0
    header = json.loads(sys.stdin.readline())
    project, name = header["project"], header["name"]
    client = MlflowClient(uri)
    try:
        exp = client.get_experiment_by_name(project)
    except Exception as e:  # the server's refusal or absence, named
        answer({"error": {"field": "--tracking-uri", "message": f"the MLflow server at {uri} did not answer: {str(e).splitlines()[0][:300]}"}}, out)
        return 0
    if retries is None:
        del os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"]
    exp_id = exp.experiment_id if exp else client.create_experiment(project)
    # A second export of one run would add a second MLflow run for it: refused instead.
    if client.search_runs([exp_id], filter_string=f"tags.`toolsmith.run_id` = '{name}'", max_results=1):
        answer({"error": {"field": "RUN", "message": f"MLflow experiment {project} already holds run {name}; not written again (pick another --project)"}}, out)
        return 0
    run = client.create_run(exp_id, run_name=header["group"], tags={"toolsmith.run_id": name})
    run_id = run.info.run_id
    params = []
    flatten(header["config"], "", params)
    for i in range(0, len(params), PARAM_BATCH):
        client.log_batch(run_id, params=[Param(k, v) for k, v in params[i : i + PARAM_BATCH]])
    client.log_dict(run_id, header["config"], "toolsmith/config.json")
    metrics, pending, traces = 0, [], 0
    for line in sys.stdin:
        record = json.loads(line)
        if record["type"] == "metrics":
            pending += [Metric(k, v, record.get("time", 0), record["step"]) for k, v in record["values"].items()]
            while len(pending) >= BATCH:
                client.log_batch(run_id, metrics=pending[:BATCH])
                metrics += BATCH
                pending = pending[BATCH:]
        elif record["type"] == "trace":
            write_trace(client, exp_id, run_id, record)
            traces += 1
    if pending:
        client.log_batch(run_id, metrics=pending)
        metrics += len(pending)
    # The run's end as Toolsmith knows it; one still queued, running or paused stays RUNNING there too.
    status = {"succeeded": "FINISHED", "failed": "FAILED", "cancelled": "KILLED"}.get(header["config"]["toolsmith"]["status"])
    if status:
        client.set_terminated(run_id, status)
    import mlflow

    mlflow.flush_trace_async_logging()
    where = f"{uri.rstrip('/')}/#/experiments/{exp_id}/runs/{run_id}"
    answer({"project": project, "run": run_id, "where": where, "metrics": metrics, "traces": traces}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
