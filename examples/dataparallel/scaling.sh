#!/usr/bin/env bash
# Measures how the example's LeNet training scales from 1 process to 2
# processes (Gloo across them, -tags gloo) with one core each: taskset -c 0
# (and -c 1 for the second shard) and GOMAXPROCS=1. Both train on the same
# first N training images (-train-limit, default 6400), 32 images per
# process per step: 1 process does N/32 steps, each of 2 shards N/64 on its
# half. Rounds alternate the two layouts; it prints each run's images/s
# (2 shards: the sum of both) and the median speed-up. Each round also runs
# two independent 1-process trainings at once, one per core, each on half
# the images (as a shard): their summed images/s is what 2 shards would
# reach if the all-reduces and the waits for the slower shard cost
# nothing, under the machine's load of the moment (on a shared machine the
# speed-up alone mostly measures how busy core 0 was during the 1-process
# run, and a process that waits in all-reduces gets more than its share of
# a busy core when it wakes). The CPU time per image of the training loops
# does not depend on the load: a shard's over the 1 process's is the
# communication's cost, and 2 × the 1 process's over the shard's is the
# speed-up 2 one-core shards reach on an idle machine if waiting for each
# other costs nothing more.
#
#   examples/dataparallel/scaling.sh [rounds] [train-limit] [flags for the shards, e.g. -coalesce=false]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
limit=${2:-6400}
shift $(($# < 2 ? $# : 2))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -tags gloo -o "$work/dp" ./examples/dataparallel
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load averages $(cut -d' ' -f1-3 /proc/loadavg)"
common=(-devices 1 -batch 32 -epochs 1 -train-limit "$limit" -test-limit 200 -checkpoint-every 1000000 -fresh -log-every 1000000)
ips() { sed -n 's/.* \([0-9.]*\) images\/s, .*/\1/p' "$1"; }
# cpu LOG IMAGES: milliseconds of CPU per image of the training loop.
cpu() { sed -n 's/.*, \([0-9.]*\) s of CPU$/\1/p' "$1" | awk -v n="$2" '{printf "%.3f", 1000 * $1 / n}'; }
# Import MNIST into every root once, outside the timings.
for r in single single1 shard0 shard1; do "$work/dp" "${common[@]}" -train-limit 64 -root "$work/$r" >/dev/null; done
singles=() pairs=() indeps=() cpu1=() cpu2=()
for i in $(seq "$rounds"); do
	GOMAXPROCS=1 taskset -c 0 "$work/dp" "${common[@]}" -root "$work/single" >"$work/s.log" 2>&1
	s=$(ips "$work/s.log")
	rm -rf "$work/store$i"
	for k in 0 1; do
		GOMAXPROCS=1 taskset -c $k "$work/dp" "${common[@]}" -root "$work/shard$k" -num-shards 2 -shard-id $k \
			-rendezvous "file://$work/store$i" -hostname 127.0.0.1 "$@" >"$work/p$k.log" 2>&1 &
	done
	wait
	p=$(echo "$(ips "$work/p0.log") + $(ips "$work/p1.log")" | bc -l)
	GOMAXPROCS=1 taskset -c 0 "$work/dp" "${common[@]}" -train-limit $((limit / 2)) -root "$work/single" >"$work/i0.log" 2>&1 &
	GOMAXPROCS=1 taskset -c 1 "$work/dp" "${common[@]}" -train-limit $((limit / 2)) -root "$work/single1" >"$work/i1.log" 2>&1 &
	wait
	n=$(echo "$(ips "$work/i0.log") + $(ips "$work/i1.log")" | bc -l)
	printf 'round %d: 1 process %.0f images/s; 2 processes %.0f images/s (%s + %s): %.2fx; 2 independent processes %.0f images/s (%s + %s): the 2 shards reach %.2f of it; load averages %s\n' \
		"$i" "$s" "$p" "$(ips "$work/p0.log")" "$(ips "$work/p1.log")" "$(echo "$p / $s" | bc -l)" \
		"$n" "$(ips "$work/i0.log")" "$(ips "$work/i1.log")" "$(echo "$p / $n" | bc -l)" "$(cut -d' ' -f1-3 /proc/loadavg)"
	c1=$(cpu "$work/s.log" "$limit") c2=$(cpu "$work/p0.log" $((limit / 2)))
	printf '         CPU per image: 1 process %s ms, shard 0 %s ms\n' "$c1" "$c2"
	singles+=("$s") pairs+=("$p") indeps+=("$n") cpu1+=("$c1") cpu2+=("$c2")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ms=$(median "${singles[@]}") mp=$(median "${pairs[@]}") mi=$(median "${indeps[@]}")
printf 'medians of %d rounds: 1 process %.0f images/s, 2 processes %.0f images/s: %.2fx; 2 independent processes %.0f images/s (%.2fx of 1): the 2 shards reach %.2f of it\n' \
	"$rounds" "$ms" "$mp" "$(echo "$mp / $ms" | bc -l)" "$mi" "$(echo "$mi / $ms" | bc -l)" "$(echo "$mp / $mi" | bc -l)"
mc1=$(median "${cpu1[@]}") mc2=$(median "${cpu2[@]}")
printf 'CPU per image, medians: 1 process %.3f ms, a shard %.3f ms: on idle cores 2 shards would reach %.2fx\n' "$mc1" "$mc2" "$(echo "2 * $mc1 / $mc2" | bc -l)"
