#!/usr/bin/env python3
"""Runs the workspace's test binaries several at a time, as `cargo test` would one at a time.

`cargo test --workspace` runs its test binaries one after the other. Most of zv's integration
tests spend their time waiting: on Python interpreters (the reference, zarr-python, the format
libraries), on local servers (moto, the HTTP server, the emulators) and on the file system. Run
one at a time, two cores sit mostly idle for the 13 minutes the binaries take together; this
runs `--jobs` of them at once.

    cargo test --workspace --locked --no-run --message-format=json > binaries.json
    scripts/run-tests.py --jobs 3 binaries.json [--command 'cargo test --workspace --doc']

Each test binary of the JSON messages (compiler artifacts of the test profile with an
executable, benches excepted) is run as cargo runs it: from its package's directory, with no
arguments. Its output (stdout and stderr together) is printed whole when it finishes, under the line `Running …` that
cargo prints, so the output of binaries run at once is not interleaved; the `test result:` lines
are cargo's own. `--command` adds a shell command run as one more job (the doc tests). Every job
is run even after a failure (as `cargo test --no-fail-fast`); the exit status is 1 when any
failed, and the failed ones are listed last.

Binaries are started longest first, by the durations of an earlier run (`--timings FILE`, as
written by `--write-timings FILE`; `scripts/test-durations.json` is the one kept in the repository,
refreshed by hand: an outdated file only changes the order), otherwise in cargo's order.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass


@dataclass
class Job:
    label: str
    argv: list[str]
    cwd: str
    # the name of its duration: binary names carry a hash that changes with the build, the
    # package directory and the source path do not
    key: str
    shell: bool = False


def test_binaries(messages_path: str) -> list[Job]:
    jobs: list[Job] = []
    seen: set[str] = set()
    with open(messages_path, encoding="utf-8") as messages:
        for line in messages:
            line = line.strip()
            if not line.startswith("{"):
                continue
            message = json.loads(line)
            if message.get("reason") != "compiler-artifact":
                continue
            executable = message.get("executable")
            if not executable or not message.get("profile", {}).get("test"):
                continue
            if executable in seen:
                continue
            seen.add(executable)
            target = message["target"]
            # benches are built (`--all-targets`, so that clippy lints them) but, as in
            # `cargo test`, not run
            if "bench" in target.get("kind", []):
                continue
            package_dir = os.path.dirname(message["manifest_path"])
            source = os.path.relpath(target["src_path"], package_dir)
            label = f"{source} ({os.path.relpath(executable)})"
            key = f"{os.path.basename(package_dir)}/{source}"
            jobs.append(Job(label=label, argv=[executable], cwd=package_dir, key=key))
    return jobs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("messages", help="output of cargo test --no-run --message-format=json")
    parser.add_argument("--jobs", type=int, default=3, help="binaries run at once (default 3)")
    parser.add_argument("--command", action="append", default=[], help="a shell command run as one more job")
    parser.add_argument("--timings", help="durations of an earlier run, to start the longest first")
    parser.add_argument("--write-timings", help="where to write this run's durations")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")

    jobs = test_binaries(args.messages)
    if not jobs:
        print(f"error: no test binaries in {args.messages}", file=sys.stderr)
        return 1
    jobs += [Job(label=c, argv=[c], cwd=os.getcwd(), key=c, shell=True) for c in args.command]

    previous: dict[str, float] = {}
    if args.timings and os.path.exists(args.timings):
        try:
            with open(args.timings, encoding="utf-8") as timings:
                previous = {str(k): float(v) for k, v in json.load(timings).items()}
        except (OSError, ValueError, AttributeError) as error:
            print(f"warning: {args.timings} ignored: {error}", file=sys.stderr)

    queue = sorted(jobs, key=lambda job: -previous.get(job.key, 0.0))
    lock = threading.Lock()
    failed: list[str] = []
    durations: dict[str, float] = {}
    cpu_times: dict[str, float] = {}
    start = time.monotonic()

    def worker() -> None:
        while True:
            with lock:
                if not queue:
                    return
                job = queue.pop(0)
            began = time.monotonic()
            cpu = 0.0
            try:
                child = subprocess.Popen(
                    job.argv[0] if job.shell else job.argv,
                    cwd=job.cwd,
                    shell=job.shell,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                )
                assert child.stdout is not None
                output = child.stdout.read().decode("utf-8", "replace")
                child.stdout.close()
                # wait4, not wait: the CPU time of the binary and of the processes it waited
                # for (Python interpreters, servers it stopped), to see where the time goes.
                _, wait_status, usage = os.wait4(child.pid, 0)
                status = os.waitstatus_to_exitcode(wait_status)
                child.returncode = status
                cpu = usage.ru_utime + usage.ru_stime
            except OSError as error:
                output, status = f"error: could not run {job.argv[0]}: {error}\n", 127
            took = time.monotonic() - began
            with lock:
                durations[job.key] = took
                cpu_times[job.key] = cpu
                what = "Running" if not job.shell else "Running command"
                sys.stdout.write(f"     {what} {job.label}  [{took:.1f} s, {cpu:.1f} s CPU, exit {status}]\n{output}\n")
                sys.stdout.flush()
                if status != 0:
                    failed.append(f"{job.label} (exit {status})")

    threads = [threading.Thread(target=worker) for _ in range(min(args.jobs, len(jobs)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    elapsed = time.monotonic() - start
    print(
        f"{len(jobs)} jobs, {args.jobs} at a time, in {elapsed:.1f} s "
        f"({sum(durations.values()):.1f} s summed, {sum(cpu_times.values()):.1f} s of CPU)"
    )
    for name, cpu in sorted(cpu_times.items(), key=lambda item: -item[1])[:8]:
        print(f"  {cpu:7.1f} s CPU, {durations[name]:6.1f} s  {name}")
    if args.write_timings:
        try:
            with open(args.write_timings, "w", encoding="utf-8") as timings:
                json.dump(durations, timings, indent=1, sort_keys=True)
        except OSError as error:
            print(f"warning: could not write {args.write_timings}: {error}", file=sys.stderr)
    if failed:
        print(f"error: {len(failed)} failed:", file=sys.stderr)
        for label in failed:
            print(f"  {label}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
