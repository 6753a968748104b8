package norm

import (
	"runtime"
	"sync"
)

// ranger is a kernel phase that processes the items [lo, hi) of its
// iteration space as part number part (parts that keep partial results
// use part to pick their slot).
type ranger interface {
	runRange(part, lo, hi int)
}

type task struct {
	r      ranger
	part   int
	lo, hi int
	wg     *sync.WaitGroup
}

// minPartWork is the least work (in element operations) worth handing to
// another goroutine.
const minPartWork = 1 << 15

// pool is the set of worker goroutines that run parts; it grows to the
// largest number of helpers asked for and never shrinks.
var pool struct {
	mu sync.Mutex
	n  int
	ch chan task
}

// numParts is how many parts n items of total work (element operations)
// are split into: at most GOMAXPROCS, at most n, and only as many as keep
// minPartWork per part.
func numParts(n, work int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n, work/minPartWork))
}

// parallel runs r over the items [0, n) split into parts contiguous ranges,
// part 0 on the calling goroutine and the others on the pool, and returns
// when all are done. wg must not be in use by another call.
func parallel(r ranger, wg *sync.WaitGroup, n, parts int) {
	if parts <= 1 || n <= 1 {
		r.runRange(0, 0, n)
		return
	}
	ensureWorkers(parts - 1)
	wg.Add(parts - 1)
	for p := 1; p < parts; p++ {
		pool.ch <- task{r: r, part: p, lo: p * n / parts, hi: (p + 1) * n / parts, wg: wg}
	}
	r.runRange(0, 0, n/parts)
	wg.Wait()
}

func ensureWorkers(n int) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.ch == nil {
		pool.ch = make(chan task, 64)
	}
	for ; pool.n < n; pool.n++ {
		go worker(pool.ch)
	}
}

func worker(ch <-chan task) {
	for t := range ch {
		t.r.runRange(t.part, t.lo, t.hi)
		t.wg.Done()
	}
}
