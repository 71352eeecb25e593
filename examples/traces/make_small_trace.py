#!/usr/bin/env python3
"""Writes examples/traces/small.csv: a small synthetic trace for `tessera sim`.

Three days of work by the quickstart's three teams (team-nlp, team-vision,
team-research) on a cluster of 16 nodes x 8 GPUs (128 GPUs; the README's
example, `--cluster 16x8xH100-80GB`), shaped so that the built-in policies
(static, borrowing, fractional, preemption) come out differently:

  - a steady stream from each team, about half the cluster busy on average:
    notebooks and experiments on 0.25 or 0.5 GPU (priority class development),
    single- and multi-GPU training (training), hyperparameter sweeps of 1-GPU
    jobs (batch, which never preempts), a few gangs of 2 pods x 8 GPUs
    (training) and a little production work that is never preempted;
  - on day 2, team-nlp submits a burst of 1-4 GPU training jobs far beyond
    its equal share of the cluster (43 GPUs): under `static` the burst waits
    for team-nlp's own quota, under `borrowing` it borrows what the others
    leave idle, and under `preemption` the others reclaim it (and training
    preempts development and batch work within a queue) when their own work
    arrives;
  - fractions take a whole GPU under `static` and `borrowing`, and share
    devices under `fractional` and `preemption`.

The columns are Tessera's own csv trace format (docs/simulator.md):
submit_time and duration in seconds, gpus per pod, pods of the gang, team,
user, priority_class (the four classes of the default policy). The job names
say what each job is.

Deterministic: the random numbers come from a fixed-seed generator written
out below (splitmix64) and only integer arithmetic is used, so every Python 3
writes the same bytes. Re-run it after a change and commit both files:

    python3 examples/traces/make_small_trace.py        # writes small.csv beside it
    python3 examples/traces/make_small_trace.py --check  # exit 1 if small.csv differs
"""

import argparse
import os
import sys

SEED = 20261202
DAY = 86400
HOUR = 3600
MINUTE = 60
TEAMS = ["team-nlp", "team-vision", "team-research"]


class SplitMix64:
    """The splitmix64 generator: 64-bit integers, the same on every platform."""

    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFFFFFFFFFF

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def below(self, n):
        """An integer in [0, n), without modulo bias."""
        limit = (1 << 64) - (1 << 64) % n
        while True:
            x = self.next()
            if x < limit:
                return x % n

    def between(self, lo, hi):
        """An integer in [lo, hi]."""
        return lo + self.below(hi - lo + 1)

    def pick(self, weighted):
        """One value of [(weight, value), ...], by integer weight."""
        total = sum(w for w, _ in weighted)
        x = self.below(total)
        for w, v in weighted:
            if x < w:
                return v
            x -= w
        raise AssertionError("unreachable")

    def duration(self, buckets):
        """A run time: a bucket [(weight, lo, hi), ...] by weight, then uniform in it."""
        lo, hi = self.pick([(w, (lo, hi)) for w, lo, hi in buckets])
        return self.between(lo, hi)


# Job kinds: (weight, kind, gpus per pod, pods, priority class, run-time buckets).
SHORT = [(6, 10 * MINUTE, 30 * MINUTE), (3, 30 * MINUTE, 2 * HOUR), (1, 2 * HOUR, 4 * HOUR)]
TRAIN = [(5, 20 * MINUTE, 1 * HOUR), (4, 1 * HOUR, 4 * HOUR), (1, 4 * HOUR, 10 * HOUR)]
LONG = [(3, 1 * HOUR, 4 * HOUR), (2, 4 * HOUR, 10 * HOUR)]
SWEEP = [(1, 15 * MINUTE, 1 * HOUR)]
KINDS = [
    (30, "notebook", ["0.25", "0.5"], 1, "development", SHORT),
    (15, "experiment", ["0.5", "1"], 1, "development", SHORT),
    (30, "train", ["1", "1", "2"], 1, "training", TRAIN),
    (5, "train-multi", ["4", "8"], 1, "training", LONG),
    (1, "train-gang", ["8"], 2, "training", LONG),
    (1, "serve", ["1"], 1, "production", LONG),
]
# A team's day: about this many jobs of KINDS, plus sweeps of 1-GPU batch jobs.
JOBS_PER_TEAM_DAY = {"team-nlp": 200, "team-vision": 170, "team-research": 150}
SWEEPS_PER_TEAM_DAY = 2
SWEEP_TRIALS = (20, 40)


def arrival(rng, day):
    """A submission time on `day`: more in working hours (8:00-20:00) than at night."""
    if rng.below(4) < 3:
        return day * DAY + rng.between(8 * HOUR, 20 * HOUR - 1)
    return day * DAY + rng.between(0, DAY - 1)


def generate():
    rng = SplitMix64(SEED)
    jobs = []  # (submit, duration, name, gpus, pods, team, user, priority_class)

    def add(submit, duration, kind, gpus, pods, team, priority):
        user = "{}-user{}".format(team.split("-", 1)[1], rng.between(1, 4))
        jobs.append([submit, duration, kind, gpus, pods, team, user, priority])

    for day in range(3):
        for team in TEAMS:
            for _ in range(JOBS_PER_TEAM_DAY[team]):
                _, kind, gpu_choices, pods, priority, buckets = rng.pick([(k[0], k) for k in KINDS])
                gpus = gpu_choices[rng.below(len(gpu_choices))]
                add(arrival(rng, day), rng.duration(buckets), kind, gpus, pods, team, priority)
            for _ in range(SWEEPS_PER_TEAM_DAY):
                start = arrival(rng, day)
                for trial in range(rng.between(*SWEEP_TRIALS)):
                    add(start + trial * rng.between(0, 20), rng.duration(SWEEP), "sweep-trial", "1", 1, team, "batch")
    # Day 2, 9:00-12:00: team-nlp's deadline push, 1-4 GPU training far beyond its share.
    for _ in range(200):
        submit = 1 * DAY + rng.between(9 * HOUR, 12 * HOUR - 1)
        gpus = rng.pick([(5, "1"), (3, "2"), (2, "4")])
        add(submit, rng.duration([(1, 1 * HOUR, 3 * HOUR), (1, 3 * HOUR, 6 * HOUR)]), "deadline-train", gpus, 1,
            "team-nlp", "training")

    jobs.sort(key=lambda j: (j[0], j[5], j[2]))
    lines = ["submit_time,duration,name,gpus,pods,team,user,priority_class"]
    for i, (submit, duration, kind, gpus, pods, team, user, priority) in enumerate(jobs):
        name = "{}-{}-{:04d}".format(team.split("-", 1)[1], kind, i)
        lines.append(",".join(str(v) for v in [submit, duration, name, gpus, pods, team, user, priority]))
    return "\n".join(lines) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description="Write the small synthetic trace for tessera sim.")
    parser.add_argument("--out", default=os.path.join(here, "small.csv"), help="where to write it (- for stdout)")
    parser.add_argument("--check", action="store_true", help="only compare with --out; exit 1 if it differs")
    args = parser.parse_args()
    text = generate()
    if args.check:
        with open(args.out, encoding="utf-8", newline="") as f:
            same = f.read() == text
        if not same:
            print("{} differs from what {} writes: re-run it".format(args.out, sys.argv[0]), file=sys.stderr)
        return 0 if same else 1
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
