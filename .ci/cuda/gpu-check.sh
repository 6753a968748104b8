#!/usr/bin/env bash
# The GPU machine's checks, in two halves: `build KITDIR` here (no GPU needed) writes the
# cuda-tagged test binaries and examples, and pure-Go CPU test and bench binaries, as one gzipped
# tar, to .cuda/bin/gpu-check.tgz; `run OUTDIR [cuda|cpu|all]` on a machine with the NVIDIA
# driver, CUDA 13, cuDNN 9 and NCCL 2 unpacks and runs them and writes their output under OUTDIR
# (summary.txt first): `cuda` the GPU tests, LeNet and the GPU benchmark (issue 12), `cpu` the
# AVX-512 kernel tests and the CPU benchmark against PyTorch on its Xeon (issue 16). Carry
# .cuda/bin to the GPU machine with the working tree (the tests read testdata/ and data/mnist/
# from it).
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=.cuda/bin
# The cuda-tagged test packages, each with the tests it runs on the GPU machine (the rest of
# ./tests, the hostile probe and the fuzzers among them, runs in CI and need not run there).
packages=(devicescope/cuda operators/cuda tests brew/dataparallel)
declare -A runs=([tests]='^(TestOperatorConformance|TestCUDA.*)$' [brew/dataparallel]='GPU')
# The pure-Go packages whose AVX-512 kernels the GPU machine's CPU (a Xeon with AVX-512) checks
# natively, and the tests that do it.
cpupackages=(operators/kernels/gemm operators/internal/vec operators/convpool)
cpurun='AVX512'

case "${1:-}" in
build)
  kit=$(realpath "${2:?usage: gpu-check.sh build KITDIR}")
  set -e
  tmp=$(mktemp -d)
  for p in "${cpupackages[@]}"; do
    CGO_ENABLED=0 go test -ldflags="-s -w" -c -o "$tmp/cpu_$(echo "$p" | tr / _).test" "./$p"
  done
  CGO_ENABLED=0 go build -ldflags="-s -w" -o "$tmp/bench-cpu" ./examples/bench
  export CGO_CFLAGS="-I$kit/include" CGO_LDFLAGS="-L$kit/stubs"
  for p in "${packages[@]}"; do
    go test -tags cuda -ldflags="-s -w" -c -o "$tmp/$(echo "$p" | tr / _).test" "./$p"
  done
  for e in dataparallel bench; do
    go build -tags cuda -ldflags="-s -w" -o "$tmp/$e" "./examples/$e"
  done
  rm -rf "$bin" && mkdir -p "$bin"
  tar czf "$bin/gpu-check.tgz" -C "$tmp" .
  rm -rf "$tmp"
  du -sh "$bin"
  ;;
run)
  out=$(realpath -m "${2:?usage: gpu-check.sh run OUTDIR [cuda|cpu|all]}")
  part=${3:-all}
  mkdir -p "$out"
  exe=$(mktemp -d)
  tar xzf "$bin/gpu-check.tgz" -C "$exe"
  summary="$out/summary.txt"
  touch "$summary"
  if [ "$part" = cuda ] || [ "$part" = all ]; then
    cudnn=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(os.path.dirname(nvidia.cudnn.__file__), "lib"))' 2>/dev/null ||
      echo /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib)
    export LD_LIBRARY_PATH="/usr/local/nvidia/lib64:/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu:$cudnn${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    nvidia-smi -L >> "$summary" 2>&1
    for p in "${packages[@]}"; do
      name=$(echo "$p" | tr / _)
      (cd "$p" && timeout 150 "$exe/$name.test" -test.v -test.timeout 140s -test.run "${runs[$p]:-.}") > "$out/$name.txt" 2>&1
      echo "$p: exit $?, $(grep -c -- '--- FAIL' "$out/$name.txt") failed, $(grep -c -- '--- PASS' "$out/$name.txt") passed" >> "$summary"
    done
    timeout 200 "$exe/dataparallel" -device cuda -devices 1 -epochs 3 -fresh -root "$exe/lenet" > "$out/lenet-gpu.txt" 2>&1
    echo "lenet 3 epochs on 1 GPU: exit $?, $(grep 'test accuracy' "$out/lenet-gpu.txt")" >> "$summary"
    timeout 60 "$exe/bench" -device cuda -seconds 2 > "$out/bench-gpu.txt" 2>&1
    echo "bench -device cuda: exit $?" >> "$summary"
    cat "$out/bench-gpu.txt" >> "$summary"
    timeout 60 python3 examples/bench/torch_reference.py --device cuda --seconds 2 > "$out/torch-gpu.txt" 2>&1
    echo "torch_reference.py --device cuda: exit $?" >> "$summary"
    cat "$out/torch-gpu.txt" >> "$summary"
  fi
  if [ "$part" = cpu ] || [ "$part" = all ]; then
    grep -m1 'model name' /proc/cpuinfo >> "$summary"
    for p in "${cpupackages[@]}"; do
      name=cpu_$(echo "$p" | tr / _)
      (cd "$p" && timeout 60 "$exe/$name.test" -test.v -test.run "$cpurun") > "$out/$name.txt" 2>&1
      echo "$p ($cpurun): exit $?, $(grep -c -- '--- FAIL' "$out/$name.txt") failed, $(grep -c -- '--- PASS' "$out/$name.txt") passed, $(grep -c -- '--- SKIP' "$out/$name.txt") skipped" >> "$summary"
    done
    # Issue 16's table: both sides pinned to two cores, then on all sixteen, in alternating
    # rounds; and the AVX2 kernels on the same cores (GODEBUG turns AVX-512 off).
    for round in 1 2; do
      taskset -c 0,1 timeout 60 "$exe/bench-cpu" -threads 2 -seconds 2 > "$out/bench-cpu2-$round.txt" 2>&1
      taskset -c 0,1 timeout 60 python3 examples/bench/torch_reference.py --threads 2 --seconds 2 > "$out/torch-cpu2-$round.txt" 2>&1
    done
    GODEBUG=cpu.avx512f=off taskset -c 0,1 timeout 60 "$exe/bench-cpu" -threads 2 -seconds 2 > "$out/bench-cpu2-avx2.txt" 2>&1
    timeout 60 "$exe/bench-cpu" -threads 16 -seconds 2 > "$out/bench-cpu16.txt" 2>&1
    timeout 60 python3 examples/bench/torch_reference.py --threads 16 --seconds 2 > "$out/torch-cpu16.txt" 2>&1
    for f in "$out"/bench-cpu*.txt "$out"/torch-cpu*.txt; do
      echo "== $(basename "$f")" >> "$summary"
      grep -v '^#.*path' "$f" >> "$summary"
    done
  fi
  cat "$summary"
  ;;
*)
  echo "usage: gpu-check.sh build KITDIR | run OUTDIR [cuda|cpu|all]" >&2
  exit 2
  ;;
esac
