"""The PyTorch side of allreducebench: torch.distributed on its Gloo backend
all-reduces (SUM) a float32 tensor of each size, as the Go command does
through caffe2go's Allreduce operator, and rank 0 prints one JSON line per
size with the median seconds per all-reduce.

    /usr/bin/python3 allreduce_torch.py --rank 0 --size 2 --store /tmp/f &
    /usr/bin/python3 allreduce_torch.py --rank 1 --size 2 --store /tmp/f

Debian's python3-torch (1.13) has the Gloo backend; the ranks connect
over 127.0.0.1 (GLOO_SOCKET_IFNAME=lo), as the Go command's do.
"""

import argparse
import datetime
import json
import os
import time

os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--store", required=True, help="a fresh file the ranks meet through")
    p.add_argument("--mb", default="1,10,100")
    p.add_argument("--iters", default="20,10,3")
    a = p.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + a.store, rank=a.rank,
                            world_size=a.size, timeout=datetime.timedelta(seconds=600))
    mbs = [float(v) for v in a.mb.split(",")]
    iters = [int(v) for v in a.iters.split(",")]
    for mb, k in zip(mbs, iters):
        n = int(mb * 1e6 / 4)
        x = torch.full((n,), float(a.rank + 1), dtype=torch.float32)
        dist.all_reduce(x)  # warm-up
        # Rank r started with r+1 everywhere: 1+2+…+size now (later
        # all-reduces multiply it by size, up to inf, which sums as fast).
        want = a.size * (a.size + 1) / 2
        if x[-1].item() != want:
            raise SystemExit("rank %d: the all-reduced tensor holds %s, want %s" % (a.rank, x[-1].item(), want))
        dist.barrier()
        times = []
        for _ in range(k):
            start = time.perf_counter()
            dist.all_reduce(x)
            times.append(time.perf_counter() - start)
        dist.barrier()
        if a.rank == 0:
            times.sort()
            print(json.dumps({"impl": "torch", "ranks": a.size, "mb": mb, "iters": k,
                              "seconds": times[len(times) // 2]}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
