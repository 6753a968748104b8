package convpool

import (
	"runtime"
	"sync"
)

// ranger is work split into units (images, or planes): runRange does units
// [lo, hi) with the scratch of worker w.
type ranger interface {
	runRange(w, lo, hi int)
}

// task is one range of a ranger, run by a pool worker.
type task struct {
	r      ranger
	w      int
	lo, hi int
	wg     *sync.WaitGroup
}

// pool is a set of long-lived worker goroutines shared by the package's
// operators; it grows to the most helpers a call has wanted and never
// shrinks, so that a parallel run in steady state starts no goroutine and
// allocates nothing.
var pool struct {
	mu sync.Mutex
	n  int
	ch chan task
}

func init() { pool.ch = make(chan task, 64) }

func ensureWorkers(n int) {
	pool.mu.Lock()
	for pool.n < n {
		pool.n++
		go func() {
			for t := range pool.ch {
				t.r.runRange(t.w, t.lo, t.hi)
				t.wg.Done()
			}
		}()
	}
	pool.mu.Unlock()
}

// workers returns how many workers should share units units of work of
// about work elements each: one per unit up to GOMAXPROCS, and just one when
// the whole job is too small to be worth a hand-off.
func workers(units, work int) int {
	const minParallelWork = 1 << 15
	if units <= 1 || units*work < minParallelWork {
		return 1
	}
	return min(units, runtime.GOMAXPROCS(0))
}

// parallel runs r over units units split into parts contiguous ranges, one
// per worker index 0…parts−1; the caller runs range 0 itself. It returns when
// all ranges are done.
func parallel(r ranger, units, parts int, wg *sync.WaitGroup) {
	if parts <= 1 || units <= 1 {
		r.runRange(0, 0, units)
		return
	}
	chunk := (units + parts - 1) / parts
	parts = (units + chunk - 1) / chunk
	ensureWorkers(parts - 1)
	wg.Add(parts - 1)
	for w := 1; w < parts; w++ {
		pool.ch <- task{r: r, w: w, lo: w * chunk, hi: min((w+1)*chunk, units), wg: wg}
	}
	r.runRange(0, 0, chunk)
	wg.Wait()
}
