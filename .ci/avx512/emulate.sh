#!/usr/bin/env bash
# Run a Go package's tests on an emulated AVX-512 CPU (Bochs).
#
#   .ci/avx512/emulate.sh PKGDIR [test binary flags...]
#
# Builds `CGO_ENABLED=0 go test -c` of the package in directory PKGDIR (in
# whatever module holds it), boots it in Bochs with an AVX-512 CPU model
# under a small Linux kernel, runs it with the flags from the package
# directory (its testdata/ is copied in), streams its output and exits with
# its exit status: 124 on a timeout, 125 when the emulator could not be
# prepared or did not finish booting. See .ci/avx512/README.md.
#
# Environment:
#   AVX512_EMU_CPU      Bochs CPU model (default corei7_skylake_x: AVX-512
#                       F/CD/BW/DQ/VL; tigerlake adds VNNI, VBMI, GFNI...
#                       but see README.md; corei7_haswell_4770 has AVX2 and
#                       no AVX-512)
#   AVX512_EMU_TIMEOUT  wall-clock limit for boot and test (default 30m)
#   AVX512_EMU_MEGS     guest memory in MiB (default 1024)
#   AVX512_EMU_CACHE    cache directory (default .ci/avx512/.cache)
#   AVX512_EMU_VERBOSE  1 prints the kernel's boot messages
#   AVX512_EMU_KEEP     1 keeps the run directory (ISO, bochsrc, logs)
#
# The first run installs missing Debian packages with apt-get (root, or
# sudo), downloads Debian's linux-source-6.1 and builds the kernel (about
# ten minutes on two cores); later runs reuse the cache.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 PKGDIR [test binary flags...]" >&2
  exit 2
fi
pkgdir=$(cd "$1" && pwd) || { echo "avx512 emulator: no directory $1" >&2; exit 125; }
shift

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${AVX512_EMU_CACHE:-$here/.cache}
cpu=${AVX512_EMU_CPU:-corei7_skylake_x}
timeout=${AVX512_EMU_TIMEOUT:-30m}
megs=${AVX512_EMU_MEGS:-1024}
mkdir -p "$cache"
t0=$(date +%s.%N)
say() { echo "avx512 emulator: $*" >&2; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }'; }

# Serialise the one-time setup (packages, kernel) between concurrent runs.
exec 9>"$cache/setup.lock"
flock 9

# --- Debian packages -------------------------------------------------------
# bochs (emulator; its rfb display library is the one that needs no
# terminal or X server), bochsbios + vgabios (firmware), xorriso + isolinux
# + syslinux-common (bootable ISO), and what building the kernel needs.
pkgs="bochs bochsbios vgabios xorriso isolinux syslinux-common gcc make flex bison bc libelf-dev libssl-dev perl xz-utils"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  say "installing Debian packages:$missing"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# --- kernel ------------------------------------------------------------------
# A small kernel built from Debian's linux-source-6.1 with the fragment
# kernel/avx512emu.config. (Debian's own kernel image boots too, but its
# XZ decompression alone takes minutes of emulated time.)
config="$here/kernel/avx512emu.config"
srcver=$(apt-cache policy linux-source-6.1 2>/dev/null | awk '/Installed:|Candidate:/ && $2 != "(none)" { print $2; exit }')
[ -n "$srcver" ] || { say "apt-cache knows no linux-source-6.1 (is this Debian 12?)"; exit 125; }
key=$( (echo "$srcver"; cat "$config") | sha256sum | cut -c1-16)
kernel="$cache/kernel/bzImage-$key"
if [ ! -s "$kernel" ]; then
  tk=$(date +%s.%N)
  mkdir -p "$cache/deb" "$cache/kernel"
  deb=$(ls "$cache"/deb/linux-source-6.1_"${srcver//:/%3a}"_all.deb 2>/dev/null | head -n1 || true)
  if [ -z "$deb" ]; then
    say "downloading linux-source-6.1 $srcver"
    rm -f "$cache"/deb/linux-source-6.1_*.deb
    (cd "$cache/deb" && apt-get download -q "linux-source-6.1=$srcver" 2>&1 | grep -v 'unsandboxed' >&2 || true)
    deb=$(ls "$cache"/deb/linux-source-6.1_*_all.deb 2>/dev/null | head -n1 || true)
    [ -n "$deb" ] || { say "apt-get download linux-source-6.1 failed"; exit 125; }
  fi
  say "building the guest kernel (one time; about ten minutes)"
  src="$cache/kernel/src"
  obj="$cache/kernel/obj"
  rm -rf "$src" "$obj"
  mkdir -p "$src" "$obj"
  dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/src/linux-source-6.1.tar.xz |
    tar -xJ -C "$src" --strip-components=1 --exclude='*/tools/testing'
  jobs=$(nproc)
  if ! (make -s -C "$src" O="$obj" allnoconfig KCONFIG_ALLCONFIG="$config" &&
        nice make -s -C "$src" O="$obj" -j"$((jobs + 1))" bzImage) >"$cache/kernel/build.log" 2>&1; then
    tail -n 30 "$cache/kernel/build.log" >&2
    say "kernel build failed (log: $cache/kernel/build.log)"
    exit 125
  fi
  cp "$obj/arch/x86/boot/bzImage" "$kernel.tmp"
  cp "$obj/.config" "$kernel.config"
  mv "$kernel.tmp" "$kernel"
  rm -rf "$src" "$obj"
  say "kernel built in $(elapsed "$tk")"
fi

# --- harness binaries ------------------------------------------------------
mkdir -p "$cache/bin"
(cd "$here/harness" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$cache/bin/guestinit" ./guestinit &&
  go build -o "$cache/bin/runner" ./runner)
flock -u 9

# --- the test binary -------------------------------------------------------
mkdir -p "$cache/runs"
work=$(mktemp -d "$cache/runs/run.XXXXXX")
cleanup() { [ "${AVX512_EMU_KEEP:-}" = 1 ] && say "kept $work" || rm -rf "$work"; }
trap cleanup EXIT
tb=$(date +%s.%N)
# Bochs 2.7 gets some AVX512-VBMI/GFNI instruction wrong: Go's own
# internal/runtime/gc/scan TestExpandAVX512 fails under tigerlake, and
# since Go 1.26 the garbage collector uses that code on CPUs with
# VBMI+GFNI+BITALG, so test binaries die with "found pointer to free
# object". On such models build with the portable collector.
goexp=${GOEXPERIMENT:-}
case "$cpu" in
  tigerlake | corei7_icelake_u)
    say "note: $cpu has AVX512-VBMI/GFNI, which Bochs 2.7 emulates wrongly; building with GOEXPERIMENT=nogreenteagc"
    goexp=${goexp:+$goexp,}nogreenteagc ;;
esac
if ! (cd "$pkgdir" && GOEXPERIMENT=$goexp CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$work/pkg.test" .); then
  say "go test -c failed in $pkgdir"
  exit 125
fi
if [ ! -x "$work/pkg.test" ]; then
  say "$pkgdir has no test files"
  exit 125
fi
say "built $(basename "$pkgdir") tests in $(elapsed "$tb") ($(du -h "$work/pkg.test" | cut -f1)); setup total $(elapsed "$t0")"

verbose=()
[ "${AVX512_EMU_VERBOSE:-}" = 1 ] && verbose=(-v)
# The runner stops Bochs when it gets SIGTERM/SIGINT (and Bochs dies with
# it when it is killed); pass those signals on and wait for it, so that a
# cancelled job leaves no emulator behind.
set +e
"$cache/bin/runner" -kernel "$kernel" -init "$cache/bin/guestinit" -test "$work/pkg.test" \
  -pkgdir "$pkgdir" -work "$work" -cpu "$cpu" -megs "$megs" -timeout "$timeout" "${verbose[@]}" -- "$@" &
rpid=$!
trap 'kill -TERM "$rpid" 2>/dev/null' TERM INT HUP
while :; do
  wait "$rpid"
  status=$?
  kill -0 "$rpid" 2>/dev/null || break
done
trap - TERM INT HUP
set -e
say "total $(elapsed "$t0"), exit status $status"
exit $status
