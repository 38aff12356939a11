"""Start an SGLang rollout server of a Ray run with the run's API key, without the key in argv.

SGLang takes its key only as the `--api-key` flag (docs.sglang.io "Server Arguments"), and a process's argv is
readable by every user of the node (`ps`, /proc/PID/cmdline). This launcher reads the key from
TOOLSMITH_SGLANG_API_KEY (which workers/cluster/ray_services.py passes to each service, like the other servers'
tokens), removes it from the environment, and adds it to the server's arguments inside this process, then starts the
server the way `python -m sglang.launch_server` does (prepare_server_args, then run_server). With the key, SGLang
answers 401 to any request without `Authorization: Bearer KEY`, its weight-reload routes included.

    python sglang_launch.py --model-path DIR --served-model-name policy --host H --port P --tp-size N
"""

import os
import sys

KEY_ENV = "TOOLSMITH_SGLANG_API_KEY"


class LaunchError(Exception):
    pass


def server_argv(argv: list[str], env: dict[str, str]) -> list[str]:
    """The server's arguments with the key from `env` added; a key in argv is refused (it would be readable)."""
    if any(a == "--api-key" or a.startswith("--api-key=") for a in argv):
        raise LaunchError(f"--api-key: give the key in {KEY_ENV}, never on the command line")
    key = env.get(KEY_ENV, "")
    if len(key) < 32:
        raise LaunchError(f"{KEY_ENV}: the run's API key is missing or shorter than 32 characters")
    return [*argv, "--api-key", key]


def main() -> int:
    try:
        argv = server_argv(sys.argv[1:], dict(os.environ))
    except LaunchError as e:
        print(f"sglang_launch: {e}", file=sys.stderr)
        return 2
    os.environ.pop(KEY_ENV, None)  # the server's own subprocesses get it from the parsed arguments, not the env
    try:
        from sglang.srt.server_args import prepare_server_args
        from sglang.srt.utils import kill_process_tree
    except ImportError as e:
        print(f"sglang_launch: SGLang is not installed on this node ({e})", file=sys.stderr)
        return 3
    try:
        from sglang.launch_server import run_server  # recent releases
    except ImportError:
        from sglang.srt.entrypoints.http_server import launch_server as run_server  # older ones
    server_args = prepare_server_args(argv)
    try:
        run_server(server_args)
    finally:
        kill_process_tree(os.getpid(), include_parent=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
