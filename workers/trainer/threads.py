"""
How many threads the trainer's CPU work uses. On a machine of its own the trainer is fastest with one
thread per core; beside a busy neighbour (a browser, an evaluation, a second worker) those threads wait for each
other at every barrier, and one thread is faster (measured on 2 cores: 16.9 steps/s alone with 2 threads, 5.5 beside
one busy process, 11.4 with 1 thread). No setting is right for both, and the neighbour comes and goes, so the count
is chosen by measurement: the tuner times each compute call per token, now and then tries the other count for a few
calls, and keeps whichever was faster. TOOLSMITH_TRAINER_THREADS=N fixes the count instead.

Pure: the caller applies the count (torch.set_num_threads) and passes the time; tested with a fake clock.
"""
import os


def usable_cores():
    """The cores this process may run on (its affinity mask, which containers and taskset narrow), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class FixedThreads:
    """A count set by the operator: never changed."""

    def __init__(self, n):
        self.n = n

    def begin(self):
        return self.n

    def end(self, seconds, tokens):
        pass

    def describe(self):
        return {"policy": "fixed", "threads": self.n}


class ThreadTuner:
    """
    Keeps the faster of two thread counts by measuring: `begin()` gives the count for the next call, `end()` takes
    how long it took and how many tokens it did. After `explore_every` calls it runs `trial` calls on the other count
    and switches when their median time per token beats the last `trial` calls on the current count by `margin`. A
    trial that does not win doubles the wait before the next (up to `max_every`): a machine that stays as it is pays
    less and less for the looking; a switch starts the waits over. The current count getting slower than it was when
    chosen (a neighbour arriving) calls a trial at once. A trial call far slower than the current count (beside a busy
    process, all cores are 2-3× slower than one) ends the trial there: looking costs one slow call, not `trial`. The
    first trial comes after `first` calls: at start nothing is known.
    """

    def __init__(self, counts, explore_every=12, trial=3, margin=0.1, max_every=96, first=4):
        self.counts = list(dict.fromkeys(counts))
        self.current = self.counts[0]
        self.explore_every = explore_every
        self.max_every = max_every
        self.every = first
        self.trial = trial
        self.margin = margin
        self.calls = 0
        self.recent = []  # cost per token of the last calls on the current count
        self.exploring = []  # costs of the trial in progress
        self.switches = 0
        self.baseline = None  # cost per token of the current count when it was last chosen or confirmed

    def _other(self):
        return next((c for c in self.counts if c != self.current), self.current)

    def _due(self):
        if len(self.counts) < 2 or len(self.recent) < self.trial:
            return False
        # Batches differ (cost per token grows with length): only a clear, lasting slowdown calls an early trial.
        slower = (
            self.baseline is not None
            and self.calls >= self.trial
            and _median(self.recent[-self.trial:]) > (1 + 4 * self.margin) * self.baseline
        )
        return self.calls >= self.every or slower

    def begin(self):
        if self.exploring or self._due():
            return self._other()
        return self.current

    def end(self, seconds, tokens):
        cost = seconds / max(1, tokens)
        if self.exploring or self._due():
            self.exploring.append(cost)
            mine = _median(self.recent[-self.trial:])
            clearly_worse = cost > (1 + 4 * self.margin) * mine
            if len(self.exploring) >= self.trial or clearly_worse:
                if not clearly_worse and _median(self.exploring) < (1 - self.margin) * mine:
                    self.current = self._other()
                    self.switches += 1
                    self.recent = list(self.exploring)
                    self.every = self.explore_every
                    self.baseline = _median(self.exploring)
                else:
                    self.every = min(2 * self.every, self.max_every)
                    self.baseline = mine
                self.exploring = []
                self.calls = 0
            return
        self.calls += 1
        self.recent = (self.recent + [cost])[-max(self.trial, 8):]
        if self.baseline is None and len(self.recent) >= self.trial:
            self.baseline = _median(self.recent[-self.trial:])

    def describe(self):
        return {"policy": "auto", "threads": self.current, "candidates": self.counts, "switches": self.switches}


def _median(xs):
    s = sorted(xs)
    return s[len(s) // 2]


def policy_from_env(env=os.environ, cores=None):
    """TOOLSMITH_TRAINER_THREADS: a number fixes the count; unset or "auto" tunes between all cores and one."""
    value = (env.get("TOOLSMITH_TRAINER_THREADS") or "auto").strip()
    if value != "auto":
        n = int(value)
        if n < 1:
            raise ValueError(f"TOOLSMITH_TRAINER_THREADS: a positive number or auto, not {value}")
        return FixedThreads(n)
    n = cores if cores is not None else usable_cores()
    return ThreadTuner([n, 1]) if n > 1 else FixedThreads(1)
