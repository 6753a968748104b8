#!/usr/bin/env bash
# Builds the kit that cuda-tagged code compiles and links against on a machine without a GPU or
# a CUDA toolkit: the headers of Debian's nvidia-cuda-dev (CUDA 11.8, bookworm non-free; its
# headers are the ones gorgonia.org/cu v0.9.6 compiles against unmodified) and link stubs named
# like a CUDA 13 machine's libraries (libcuda.so.1, libcublas.so.13, libcublasLt.so.13,
# libnvrtc.so.13, libnccl.so.2, libcudnn*.so.9; the cuDNN and NCCL stubs come from the symbol
# lists beside this script). A binary built against it runs on a machine with the NVIDIA driver,
# CUDA 13, cuDNN 9 and NCCL 2 (see the README). The headers are NVIDIA's: never commit them.
#   usage: kit.sh DIR        then: export CGO_CFLAGS="-I DIR/include" CGO_LDFLAGS="-L DIR/stubs"
set -euo pipefail
dir=$(realpath -m "${1:?usage: kit.sh DIR}"); here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/stubs" "$dir/deb"
src="$dir/apt/sources.list"
echo "deb http://deb.debian.org/debian bookworm main contrib non-free" > "$src"
o=(-o Dir::Etc::SourceList="$src" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$dir/apt/lists" -o Dir::Cache="$dir/apt/cache")
apt-get -q "${o[@]}" update >/dev/null
(cd "$dir/deb" && apt-get -q "${o[@]}" download nvidia-cuda-dev >/dev/null)
rm -rf "$dir/x"; dpkg -x "$dir"/deb/nvidia-cuda-dev_*.deb "$dir/x"
rm -rf "$dir/include"; mv "$dir/x/usr/include" "$dir/include"
s="$dir/x/usr/lib/x86_64-linux-gnu/stubs"
stub() { # stub NAME SONAME < symbol names (version suffixes and non-identifiers dropped)
  local c="$dir/stubs/$1.c"
  sed 's/@.*//' | grep -E '^[A-Za-z_][A-Za-z0-9_]*$' | sort -u | sed 's/.*/void &(void) {}/' > "$c"
  gcc -shared -fPIC -w -o "$dir/stubs/$1.so" -Wl,-soname,"$2" "$c"; rm -f "$c"
}
for l in cuda:libcuda.so.1 cublas:libcublas.so.13 cublasLt:libcublasLt.so.13 nvrtc:libnvrtc.so.13; do
  n=lib${l%%:*}; nm -D --defined-only "$s/$n.so" | awk '$2 ~ /[TW]/ {print $3}' | stub "$n" "${l#*:}"
done
stub libnccl libnccl.so.2 < "$here/syms-libnccl.so.2.txt"
for n in libcudnn libcudnn_ops libcudnn_cnn; do stub "$n" "$n.so.9" < "$here/syms-$n.so.9.txt"; done
rm -rf "$dir/x" "$dir/deb" "$dir/apt"
echo "export CGO_CFLAGS=\"-I$dir/include\" CGO_LDFLAGS=\"-L$dir/stubs\""
