// Package parallel runs kernel work on a shared set of long-lived worker
// goroutines. A kernel splits its iteration space into contiguous ranges;
// the caller runs the first range itself and the pool runs the others.
// Workers are started on first need and never stop, so a parallel kernel in
// steady state starts no goroutine and allocates nothing.
package parallel

import (
	"runtime"
	"sync"
)

// Ranger is work over an iteration space of units: RunRange does the units
// [lo, hi) as part number part (0 … parts−1), which a kernel may use to pick
// a per-part scratch buffer or partial result.
type Ranger interface {
	RunRange(part, lo, hi int)
}

// MinPartWork is the least work, in element operations, worth handing to
// another goroutine: below it the hand-off costs more than it saves.
const MinPartWork = 1 << 15

// Parts returns how many parts units units of total work (element
// operations) should be split into: at most GOMAXPROCS, at most units, and
// only as many as keep MinPartWork per part.
func Parts(units, work int) int {
	return max(1, min(runtime.GOMAXPROCS(0), units, work/MinPartWork))
}

type task struct {
	r      Ranger
	part   int
	lo, hi int
	wg     *sync.WaitGroup
}

var pool struct {
	mu sync.Mutex
	n  int
	ch chan task
}

// Run runs r over the units [0, units) split into parts contiguous ranges
// of nearly equal size and returns when all are done. wg must not be in use
// by another call; keeping it in the caller's operator makes Run
// allocation-free.
func Run(r Ranger, wg *sync.WaitGroup, units, parts int) {
	parts = min(parts, units)
	if parts <= 1 {
		r.RunRange(0, 0, units)
		return
	}
	ensureWorkers(parts - 1)
	wg.Add(parts - 1)
	for p := 1; p < parts; p++ {
		pool.ch <- task{r: r, part: p, lo: p * units / parts, hi: (p + 1) * units / parts, wg: wg}
	}
	r.RunRange(0, 0, units/parts)
	wg.Wait()
}

func ensureWorkers(n int) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.ch == nil {
		pool.ch = make(chan task, 256)
	}
	for ; pool.n < n; pool.n++ {
		go func(ch <-chan task) {
			for t := range ch {
				t.r.RunRange(t.part, t.lo, t.hi)
				t.wg.Done()
			}
		}(pool.ch)
	}
}
