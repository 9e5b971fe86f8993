#!/usr/bin/env python3
"""Watch the processes of the local Flink cluster (deploy/flink/flink.sh)
while a job runs: per process group (the job manager, each task manager,
each worker pool with every SDK worker it started, the job server), the
peak of the group's summed resident memory and its CPU time.

    bench/flinkwatch.py HOME OUT.json &   # HOME: the cluster's CTXSIM_FLINK_HOME
    ...run the job...
    kill -TERM %1; wait                   # writes OUT.json

Each process of flink.sh leads a process group of its own, recorded in
HOME/pids; the SDK workers a pool starts stay in its group. CPU time is
each process's user+system time when last seen (sampled every 0.2 s), so
a worker that exits between two samples loses at most that much.
"""
import json
import os
import signal
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def groups(home):
    out = {}
    for name in os.listdir(os.path.join(home, "pids")):
        with open(os.path.join(home, "pids", name)) as f:
            out[int(f.read().strip())] = name
    return out


def sample(by_pgid, peak, cpu, peak_proc):
    rss = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rindex(")") + 2:].split()
        pgid = int(fields[2])
        name = by_pgid.get(pgid)
        if name is None:
            continue
        used = (int(fields[11]) + int(fields[12])) / TICK
        cpu[int(d)] = (name, used)
        r = int(fields[21]) * PAGE
        rss[name] = rss.get(name, 0) + r
        peak_proc[name] = max(peak_proc.get(name, 0), r)
    for name, r in rss.items():
        peak[name] = max(peak.get(name, 0), r)


def main():
    home, out = sys.argv[1], sys.argv[2]
    by_pgid = groups(home)
    peak, cpu, peak_proc = {}, {}, {}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    start = time.time()
    # CPU already spent before the watch (the JVMs' start-up) is subtracted.
    sample(by_pgid, {}, cpu, {})
    before = dict(cpu)
    while not stop:
        sample(by_pgid, peak, cpu, peak_proc)
        time.sleep(0.2)
    sample(by_pgid, peak, cpu, peak_proc)
    spent = {}
    for pid, (name, used) in cpu.items():
        spent[name] = spent.get(name, 0) + used - before.get(pid, (name, 0))[1]
    res = {
        "seconds": round(time.time() - start, 1),
        "groups": {
            name: {
                "peak_rss_mib": round(peak.get(name, 0) / 2**20, 1),
                "peak_process_rss_mib": round(peak_proc.get(name, 0) / 2**20, 1),
                "cpu_s": round(spent.get(name, 0), 1),
            }
            for name in sorted(set(by_pgid.values()))
        },
        "cpu_s": round(sum(spent.values()), 1),
    }
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
