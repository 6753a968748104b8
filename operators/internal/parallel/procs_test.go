package parallel

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestPartsFollowGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	for _, procs := range []int{8, 3, 2, 1} {
		runtime.GOMAXPROCS(procs)
		if got := Parts(16, 1000, 1<<30); got != procs {
			t.Errorf("GOMAXPROCS %d: Parts(16, 1000, 1<<30) = %d, want %d", procs, got, procs)
		}
	}
}

// inFlight counts the parts running at once, sleeping in each so that
// every goroutine that could take a part does.
type inFlight struct {
	now, most atomic.Int32
	nap       time.Duration
}

func (f *inFlight) RunRange(_, lo, hi int) {
	for range hi - lo {
		n := f.now.Add(1)
		for {
			m := f.most.Load()
			if n <= m || f.most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(f.nap)
		f.now.Add(-1)
	}
}

// TestRunFollowsGOMAXPROCS lowers GOMAXPROCS after the pool has grown to
// many workers: a call then runs no more parts at once than GOMAXPROCS
// however many it is split into.
func TestRunFollowsGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	grow := &inFlight{nap: time.Millisecond}
	Run(grow, 8, 8)
	if n := pool.n.Load(); n < 7 {
		t.Fatalf("the pool has %d workers after a call of 8 parts at GOMAXPROCS 8, want at least 7", n)
	}
	for _, procs := range []int{3, 2, 1} {
		runtime.GOMAXPROCS(procs)
		f := &inFlight{nap: 200 * time.Microsecond}
		for range 5 {
			Run(f, 32, 16)
		}
		if m := f.most.Load(); int(m) > procs {
			t.Errorf("GOMAXPROCS %d: %d parts ran at once", procs, m)
		}
	}
}

// TestSpinnersFollowGOMAXPROCS runs calls from several goroutines at once,
// each asking for helpers, so that the pool holds more workers than
// GOMAXPROCS: no more of them poll for work, then or afterwards, than
// could run beside a caller (GOMAXPROCS−1); the others block. A worker
// that polled on would take a core from a caller or another process.
func TestSpinnersFollowGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	for _, procs := range []int{8, 2} {
		runtime.GOMAXPROCS(procs)
		var done atomic.Bool
		finished := make(chan struct{})
		for g := range 4 {
			go func() {
				defer func() { finished <- struct{}{} }()
				f := &inFlight{nap: time.Duration(g) * 20 * time.Microsecond}
				for !done.Load() {
					Run(f, procs, procs)
				}
			}()
		}
		most := int32(0)
		for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
			most = max(most, pool.spinning.Load())
			runtime.Gosched()
		}
		done.Store(true)
		for range 4 {
			<-finished
		}
		for deadline := time.Now().Add(2 * time.Millisecond); time.Now().Before(deadline); {
			most = max(most, pool.spinning.Load())
		}
		if int(most) > procs-1 {
			t.Errorf("GOMAXPROCS %d: %d workers polled for work at once", procs, most)
		}
		if n := pool.n.Load(); int(n) <= procs-1 {
			t.Errorf("GOMAXPROCS %d: the pool has %d workers, too few to test", procs, n)
		}
	}
}

// jittered sleeps or spins for a random time around waitSpin in each unit,
// so that the caller sometimes finds the parts done, sometimes polls and
// sometimes sleeps, and the last helper finishes at every point of that.
type jittered struct {
	seed  uint64
	parts []atomic.Int32
}

func (j *jittered) RunRange(part, lo, hi int) {
	r := rand.New(rand.NewPCG(j.seed, uint64(part)))
	for range hi - lo {
		d := time.Duration(r.IntN(int(3 * waitSpin)))
		if r.IntN(2) == 0 {
			time.Sleep(d)
		} else {
			for start := time.Now(); time.Since(start) < d; {
			}
		}
	}
	j.parts[part].Add(1)
}

// TestCallerSleeps runs calls whose helpers finish before, while and after
// the caller stops polling and sleeps: each call returns, once, after
// every part ran, and leaves no wake-up behind for the next call (which
// would return before its parts are done).
func TestCallerSleeps(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for it := range 300 {
		parts := 2 + it%3
		j := &jittered{seed: uint64(it), parts: make([]atomic.Int32, parts)}
		Run(j, parts, parts)
		for p := range j.parts {
			if n := j.parts[p].Load(); n != 1 {
				t.Fatalf("call %d: part %d ran %d times by the time Run returned", it, p, n)
			}
		}
	}
}

// TestGapsLearn feeds a worker's gap learner the gaps of a net like
// LeNet's (kernels a few microseconds apart, or milliseconds apart across
// serial operators, now and then 250 µs): it polls long enough for the
// short gaps and not through the long ones. Gaps of 60 µs it polls
// through.
func TestGapsLearn(t *testing.T) {
	g := gaps{longest: catchGap}
	for i := range 2000 {
		switch {
		case i%50 == 0:
			g.saw(250 * time.Microsecond)
		case i%2 == 0:
			g.saw(3 * time.Microsecond)
		default:
			g.saw(2 * time.Millisecond)
		}
	}
	if s := g.spin(); s < 3*time.Microsecond || s > 20*time.Microsecond {
		t.Errorf("gaps of 3 µs, 250 µs and 2 ms: polls %v, want 3 to 20 µs", s)
	}
	for range 10 {
		g.saw(60 * time.Microsecond)
	}
	if s := g.spin(); s < 60*time.Microsecond {
		t.Errorf("gaps of 60 µs: polls %v, want at least 60 µs", s)
	}
}
