package parallel

import (
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
		var wg sync.WaitGroup
		Run(c, &wg, tc.units, tc.parts)
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
	procs := runtime.GOMAXPROCS(0)
	for _, tc := range []struct{ units, work, want int }{
		{1, 1 << 30, 1},
		{100, 10, 1},
		{100, MinPartWork * 2, min(2, procs)},
		{3, 1 << 30, min(3, procs)},
	} {
		if got := Parts(tc.units, tc.work); got != tc.want {
			t.Errorf("Parts(%d, %d) = %d, want %d", tc.units, tc.work, got, tc.want)
		}
	}
}

type nop struct{}

func (nop) RunRange(int, int, int) {}

func TestRunDoesNotAllocate(t *testing.T) {
	var wg sync.WaitGroup
	r := nop{}
	Run(r, &wg, 8, 4)
	if a := testing.AllocsPerRun(100, func() { Run(r, &wg, 8, 4) }); a != 0 {
		t.Fatalf("Run allocates %v times per call", a)
	}
}
