package parallel

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// counter records which units ran and under which part.
type counter struct {
	hits  []atomic.Int32
	parts []atomic.Int32
}

func (c *counter) RunRange(part, lo, hi int) {
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
		c.parts[i].Store(int32(part))
	}
}

func TestRunCoversEveryUnitOnce(t *testing.T) {
	for _, tc := range []struct{ units, parts int }{
		{0, 4}, {1, 4}, {7, 1}, {7, 2}, {7, 3}, {8, 8}, {5, 9}, {1000, 16},
	} {
		c := &counter{hits: make([]atomic.Int32, tc.units), parts: make([]atomic.Int32, tc.units)}
		Run(c, tc.units, tc.parts)
		last := int32(0)
		for i := range c.hits {
			if n := c.hits[i].Load(); n != 1 {
				t.Fatalf("units %d parts %d: unit %d ran %d times", tc.units, tc.parts, i, n)
			}
			p := c.parts[i].Load()
			if p < last || int(p) >= max(1, min(tc.parts, tc.units)) {
				t.Fatalf("units %d parts %d: unit %d ran as part %d after part %d", tc.units, tc.parts, i, p, last)
			}
			last = p
		}
	}
}

func TestParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tc := range []struct{ threads, units, work, want int }{
		{4, 1, 1 << 30, 1},
		{4, 100, 10, 1},
		{4, 100, MinPartWork * 2, 2},
		{4, 3, 1 << 30, 3},
		{2, 3, 1 << 30, 2},
		{1, 100, 1 << 30, 1},
		{0, 100, 1 << 30, 1},
	} {
		if got := Parts(tc.threads, tc.units, tc.work); got != tc.want {
			t.Errorf("Parts(%d, %d, %d) = %d, want %d", tc.threads, tc.units, tc.work, got, tc.want)
		}
	}
}

type nop struct{}

func (nop) RunRange(int, int, int) {}

func TestRunDoesNotAllocate(t *testing.T) {
	r := nop{}
	Run(r, 8, 4)
	if a := testing.AllocsPerRun(100, func() { Run(r, 8, 4) }); a != 0 {
		t.Fatalf("Run allocates %v times per call", a)
	}
}

// sum adds up its units per part, so that a wrong range, a part run twice
// or a part another call's helper ran shows in the total.
type sum struct {
	parts []int64
}

func (s *sum) RunRange(part, lo, hi int) {
	for i := lo; i < hi; i++ {
		s.parts[part] += int64(i)
	}
}

// TestConcurrentRuns runs many calls from several goroutines at once, so
// that helpers are scarce, callers compute most parts themselves and
// workers hold tokens of calls that already finished (and whose jobs were
// reused).
func TestConcurrentRuns(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range 500 {
				units, parts := 100+g*it%37, 1+(g+it)%6
				s := &sum{parts: make([]int64, parts)}
				Run(s, units, parts)
				var total int64
				for _, v := range s.parts {
					total += v
				}
				if want := int64(units * (units - 1) / 2); total != want {
					errs <- fmt.Sprintf("goroutine %d call %d: sum %d, want %d", g, it, total, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
