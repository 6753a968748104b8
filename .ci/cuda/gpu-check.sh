#!/usr/bin/env bash
# The GPU check, in two halves: `build KITDIR` here (no GPU needed) writes the cuda-tagged
# test binaries and examples, as one gzipped tar, to .cuda/bin/gpu-check.tgz; `run OUTDIR` on a
# machine with the NVIDIA driver, CUDA 13, cuDNN 9 and NCCL 2 unpacks and runs them all and
# writes their output under OUTDIR (summary.txt first). Carry .cuda/bin to the GPU machine with
# the working tree (the tests read testdata/ and data/mnist/ from it).
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=.cuda/bin
packages=(devicescope/cuda operators/cuda tests brew/dataparallel)

case "${1:-}" in
build)
  kit=$(realpath "${2:?usage: gpu-check.sh build KITDIR}")
  export CGO_CFLAGS="-I$kit/include" CGO_LDFLAGS="-L$kit/stubs"
  set -e
  tmp=$(mktemp -d)
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
  out=$(realpath -m "${2:?usage: gpu-check.sh run OUTDIR}")
  mkdir -p "$out"
  exe=$(mktemp -d)
  tar xzf "$bin/gpu-check.tgz" -C "$exe"
  cudnn=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(os.path.dirname(nvidia.cudnn.__file__), "lib"))' 2>/dev/null ||
    echo /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib)
  export LD_LIBRARY_PATH="/usr/local/nvidia/lib64:/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu:$cudnn${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  summary="$out/summary.txt"
  : > "$summary"
  nvidia-smi -L >> "$summary" 2>&1
  for p in "${packages[@]}"; do
    name=$(echo "$p" | tr / _)
    (cd "$p" && timeout 300 "$exe/$name.test" -test.v -test.timeout 280s) > "$out/$name.txt" 2>&1
    echo "$p: exit $?, $(grep -c -- '--- FAIL' "$out/$name.txt") failed, $(grep -c -- '--- PASS' "$out/$name.txt") passed" >> "$summary"
  done
  timeout 300 "$exe/dataparallel" -device cuda -devices 1 -epochs 3 -fresh -root "$exe/lenet" > "$out/lenet-gpu.txt" 2>&1
  echo "lenet 3 epochs on 1 GPU: exit $?, $(grep 'test accuracy' "$out/lenet-gpu.txt")" >> "$summary"
  timeout 120 "$exe/bench" -device cuda -seconds 2 > "$out/bench-gpu.txt" 2>&1
  echo "bench -device cuda: exit $?" >> "$summary"
  cat "$out/bench-gpu.txt" >> "$summary"
  if [ -f examples/bench/torch_reference.py ]; then
    timeout 120 python3 examples/bench/torch_reference.py --device cuda > "$out/torch-gpu.txt" 2>&1
    echo "torch_reference.py --device cuda: exit $?" >> "$summary"
    cat "$out/torch-gpu.txt" >> "$summary"
  fi
  cat "$summary"
  ;;
*)
  echo "usage: gpu-check.sh build KITDIR | run OUTDIR" >&2
  exit 2
  ;;
esac
