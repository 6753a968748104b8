"""Compares caffe2go's Gloo all-reduce (the Go command in this directory)
with PyTorch's torch.distributed on its Gloo backend (allreduce_torch.py)
between 2 and 4 processes on this machine, for 1, 10 and 100 MB of float32;
and, where g++ builds it, with the same all-reduce in plain C++ straight on
libgloo (cxx/allreduce_gloo.cc), the library both of them call.

    /usr/bin/python3 operators/gloo/allreducebench/compare.py --rounds 5

It builds the Go command (go build -tags gloo), then runs rounds; each
round runs every process count with every implementation, one after the
other, in an order that rotates from round to round, so that a change in
the machine's load hits them alike. It prints the median over the rounds
of each implementation's median seconds per all-reduce, the bandwidth
(MB / s) and the ratio of the speeds (caffe2go / PyTorch; 1 is as fast),
with the CPU and the load averages before and after.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run_ranks(cmds):
    """Starts every rank's command at once and returns rank 0's JSON lines."""
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in cmds]
    outs = [p.communicate() for p in procs]
    for c, p, (out, err) in zip(cmds, procs, outs):
        if p.returncode != 0:
            sys.exit("%s failed (%d):\n%s%s" % (" ".join(c), p.returncode, out, err))
    return [json.loads(line) for line in outs[0][0].splitlines() if line.startswith("{")]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--ranks", default="2,4")
    p.add_argument("--mb", default="1,10,100")
    p.add_argument("--iters", default="20,10,3")
    p.add_argument("--go-bin", help="the Go command, built with -tags gloo (default: build it)")
    a = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="allreducebench")
    try:
        gobin = a.go_bin
        if not gobin:
            gobin = os.path.join(tmp, "allreducebench")
            subprocess.run(["go", "build", "-tags", "gloo", "-o", gobin, "./operators/gloo/allreducebench"], cwd=ROOT, check=True)
        cxx = os.path.join(tmp, "allreduce_gloo")
        if subprocess.run(["g++", "-std=c++17", "-O3", os.path.join(HERE, "cxx", "allreduce_gloo.cc"), "-o", cxx,
                           "-lgloo", "-lpthread"]).returncode != 0:
            print("g++ could not build cxx/allreduce_gloo.cc: no plain libgloo column")
            cxx = None
        impls = ["caffe2go", "torch"] + (["libgloo"] if cxx else [])
        print("CPU: %s, %d cores; load averages before: %s" % (cpu_name(), os.cpu_count(), loadavg()), flush=True)
        results = {}  # (impl, ranks, mb) -> [seconds per round]
        run_id = 0
        for rnd in range(a.rounds):
            for n in [int(v) for v in a.ranks.split(",")]:
                for impl in impls[rnd % len(impls):] + impls[:rnd % len(impls)]:
                    run_id += 1
                    store = os.path.join(tmp, "store%d" % run_id)
                    if impl == "caffe2go":
                        cmds = [[gobin, "-rank", str(r), "-size", str(n), "-store", store, "-mb", a.mb, "-iters", a.iters] for r in range(n)]
                    elif impl == "libgloo":
                        os.makedirs(store)
                        cmds = [[cxx, str(r), str(n), store, a.mb, a.iters] for r in range(n)]
                    else:
                        cmds = [["/usr/bin/python3", os.path.join(HERE, "allreduce_torch.py"), "--rank", str(r), "--size", str(n),
                                 "--store", store, "--mb", a.mb, "--iters", a.iters] for r in range(n)]
                    for res in run_ranks(cmds):
                        results.setdefault((impl, n, res["mb"]), []).append(res["seconds"])
            print("round %d done, load averages %s" % (rnd + 1, loadavg()), flush=True)
        print("load averages after: %s" % loadavg())
        print("%6s %7s %12s %12s %12s %13s %11s %7s" % ("ranks", "MB", "caffe2go s", "torch s", "libgloo s", "caffe2go MB/s", "torch MB/s", "ratio"))
        for n in [int(v) for v in a.ranks.split(",")]:
            for mb in [float(v) for v in a.mb.split(",")]:
                g = statistics.median(results[("caffe2go", n, mb)])
                t = statistics.median(results[("torch", n, mb)])
                c = statistics.median(results[("libgloo", n, mb)]) if cxx else float("nan")
                print("%6d %7g %12.5f %12.5f %12.5f %13.0f %11.0f %7.2f" % (n, mb, g, t, c, mb / g, mb / t, t / g))
        print("libgloo: plain C++ on libgloo; ratio: PyTorch's seconds / caffe2go's (≥ 1: caffe2go as fast or faster); medians of %d rounds" % a.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
