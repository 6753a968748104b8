package parallel

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// busy does n steps of arithmetic on this goroutine, without touching
// memory another goroutine writes.
func busy(n int) float64 {
	x := 1.0
	for i := range n {
		x = x*0.999999 + float64(i&7)
	}
	return x
}

// stepsPerMicrosecond calibrates busy on this machine (the fastest of a
// few tries, as the machine may be busy).
var stepsPerMicrosecond = sync.OnceValue(func() int {
	best, sink := time.Duration(1<<62), 0.0
	for range 5 {
		start := time.Now()
		sink += busy(1_000_000)
		best = min(best, time.Since(start))
	}
	if sink == 0 {
		return 1 // never: busy's result is positive
	}
	return max(1, int(1_000_000*time.Microsecond/best))
})

// busyParts does busy(perUnit) per unit.
type busyParts struct {
	perUnit int
	sink    [maxBenchParts]struct {
		v float64
		_ [CacheLine - 8]byte
	}
}

const maxBenchParts = 64

func (b *busyParts) RunRange(part, lo, hi int) {
	for range hi - lo {
		b.sink[part%maxBenchParts].v += busy(b.perUnit)
	}
}

// cpuTime is the CPU time this process has used, every thread's together.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStep models a net step on the pool: serial work on the caller
// (an operator that does not split, or the executor between operators),
// then a kernel split into as many parts as GOMAXPROCS allows. Besides the
// time per step it reports cpu-ns/op, the CPU time of every thread, and
// overhead-cpu-ns/op, that less the CPU time of the same step with the
// kernel run on the caller alone: what the pool's goroutines burn polling
// for work shows there, not in ns/op.
func BenchmarkStep(b *testing.B) {
	for _, tc := range []struct{ serial, kernel int }{ // microseconds
		{5, 20}, {5, 200}, {50, 50}, {200, 200}, {1000, 200}, {20, 2000},
	} {
		b.Run(fmt.Sprintf("serial=%dus/kernel=%dus", tc.serial, tc.kernel), func(b *testing.B) {
			// The kernel's work is split into 64 units.
			steps := stepsPerMicrosecond()
			serial := tc.serial * steps
			r := &busyParts{perUnit: tc.kernel * steps / 64}
			var sink float64
			alone := max(10, 20_000/(tc.serial+tc.kernel))
			cpu0 := cpuTime(b)
			for range alone {
				sink += busy(serial)
				r.RunRange(0, 0, 64)
			}
			cpuAlone := float64(cpuTime(b)-cpu0) / float64(alone)
			cpu0 = cpuTime(b)
			for b.Loop() {
				sink += busy(serial)
				Run(r, 64, Parts(64, 64, 1<<30))
			}
			cpu := float64(cpuTime(b)-cpu0) / float64(b.N)
			b.ReportMetric(cpu, "cpu-ns/op")
			b.ReportMetric(cpu-cpuAlone, "overhead-cpu-ns/op")
			if sink == 0 {
				b.Log(sink)
			}
		})
	}
}
