package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Ranger is work over an iteration space of units: RunRange does the units
// [lo, hi) as part number part (0 … parts−1), which a kernel may use to pick
// a per-part scratch buffer or partial result. Each part runs exactly once,
// on one goroutine, so per-part state needs no locking; which goroutine runs
// which part is not fixed.
type Ranger interface {
	RunRange(part, lo, hi int)
}

// MinPartWork is the least work, in element operations, worth handing to
// another goroutine: below it the hand-off costs more than it saves.
const MinPartWork = 1 << 15

// Parts returns how many parts units units of total work (element
// operations) should be split into: at most threads (the caller's thread
// budget), at most units, and only as many as keep MinPartWork per part.
func Parts(threads, units, work int) int {
	return max(1, min(threads, units, work/MinPartWork))
}

// maxParts bounds parts so that a part index fits the 16 bits job.claims
// gives it.
const maxParts = 1<<16 - 1

// Run runs r over the units [0, units) split into parts contiguous ranges
// of nearly equal size (part p is [p·units/parts, (p+1)·units/parts)) and
// returns when all are done. The split depends only on units and parts, so
// a kernel that combines per-part results in part order gets the same
// result however the parts were scheduled.
func Run(r Ranger, units, parts int) {
	parts = min(parts, units, maxParts)
	if parts <= 1 {
		r.RunRange(0, 0, units)
		return
	}
	j := jobs.Get()
	j.r, j.units = r, units
	j.pending.Store(int32(parts))
	gen := j.open(parts)
	helpers := parts - 1
	ensureWorkers(int(pool.wanted.Add(int32(helpers))))
	for range helpers {
		select {
		case pool.ch <- token{j, gen}:
		default: // the pool is swamped: no helper
		}
	}
	j.work(gen)
	j.wait()
	pool.wanted.Add(-int32(helpers))
	j.r = nil
	jobs.Put(j)
}

// job is one Run call, shared by the caller and its helpers.
type job struct {
	r     Ranger
	units int
	// claims is the job's generation (bits 32-63; each use of the job is
	// a new one), its number of parts (bits 16-31) and the next part to
	// claim (bits 0-15), in one word so that a helper holding a token of
	// an earlier use can never claim a part of this one.
	claims  atomic.Uint64
	pending atomic.Int32 // the parts not yet computed
}

// open starts a use of the job with the given number of parts (at most
// maxParts) and returns its generation.
func (j *job) open(parts int) uint32 {
	gen := uint32(j.claims.Load()>>32) + 1
	j.claims.Store(uint64(gen)<<32 | uint64(parts)<<16)
	return gen
}

// claim returns the next part of generation gen to compute and the number
// of parts, or false when there is none left.
func (j *job) claim(gen uint32) (part, parts int, ok bool) {
	for {
		c := j.claims.Load()
		next, n := int(c&0xffff), int(c>>16&0xffff)
		if uint32(c>>32) != gen || next >= n {
			return 0, 0, false
		}
		if j.claims.CompareAndSwap(c, c+1) {
			return next, n, true
		}
	}
}

// work claims and computes parts of generation gen until none is left. It
// reads the job's fields only while it holds a part not yet done: once the
// last part is done the caller may reuse the job for another call.
func (j *job) work(gen uint32) {
	p, parts, ok := j.claim(gen)
	for ok {
		units := j.units
		j.r.RunRange(p, p*units/parts, (p+1)*units/parts)
		next, _, more := j.claim(gen)
		j.pending.Add(-1)
		p, ok = next, more
	}
}

// wait waits for the helpers to finish the parts they claimed. It spins
// rather than blocks: a goroutine that blocks is woken on the processor of
// the goroutine that wakes it, here a helper, which keeps polling for work
// there, so that the caller would sit until another processor steals it,
// tens of microseconds later on an idle core. By the time the caller waits
// it has computed every part nobody else claimed, so at most one part's
// worth of work is left per helper; the caller yields now and then in case
// a helper waits for its processor.
func (j *job) wait() {
	for i := 1; j.pending.Load() > 0; i++ {
		if i%256 == 0 {
			runtime.Gosched()
		}
	}
}

// token asks a worker to help with generation gen of a job.
type token struct {
	j   *job
	gen uint32
}

// pool is the set of worker goroutines that help with jobs. It grows to the
// most helpers that calls running at the same time have asked for together
// (so that replicas on several devices each find theirs) and never
// shrinks.
var pool struct {
	mu     sync.Mutex
	n      atomic.Int32 // workers started
	wanted atomic.Int32 // helpers asked for by the calls now running
	ch     chan token
}

// The channel holds tokens that no worker took yet; 256 is far more than
// the helpers of the calls that can run at once on any machine we target,
// and when it is full a call simply goes without more helpers.
func init() { pool.ch = make(chan token, 256) }

func ensureWorkers(n int) {
	if int(pool.n.Load()) >= n {
		return
	}
	pool.mu.Lock()
	for int(pool.n.Load()) < n {
		pool.n.Add(1)
		go worker(pool.ch)
	}
	pool.mu.Unlock()
}

// spin is how long a worker keeps polling for work after its last job
// before it blocks. Waking a blocked goroutine on an idle core can take
// tens of microseconds (more on a virtual machine, where the idle vCPU is
// halted), as long as a whole mid-sized product takes, while a
// polling worker starts within a microsecond; so, like OpenBLAS's threads,
// the workers spin a little between calls. They yield the processor every
// few microseconds meanwhile, so other goroutines do not wait for them.
const spin = 300 * time.Microsecond

func worker(ch <-chan token) {
	for {
		t, ok := poll(ch)
		if !ok {
			t = <-ch
		}
		t.j.work(t.gen)
	}
}

// poll waits for a token for up to spin without blocking.
func poll(ch <-chan token) (token, bool) {
	deadline := time.Now().Add(spin)
	for i := 1; ; i++ {
		select {
		case t := <-ch:
			return t, true
		default:
		}
		if i%64 == 0 {
			if time.Now().After(deadline) {
				return token{}, false
			}
			if i%1024 == 0 {
				runtime.Gosched()
			}
		}
	}
}

// FreeList recycles objects of type E for kernels that need per-call state
// (the pool's jobs, GEMM's jobs and packing buffers). Unlike a sync.Pool it
// keeps them across garbage collections, so that calls in steady state never
// allocate; it holds at most as many objects as were ever in use at once.
// The zero value is an empty list.
type FreeList[E any] struct {
	mu    sync.Mutex
	items []*E
}

// Get returns a recycled object, or a new zero one.
func (f *FreeList[E]) Get() *E {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.items)
	if n == 0 {
		return new(E)
	}
	e := f.items[n-1]
	f.items = f.items[:n-1]
	return e
}

// Put gives e back for a later Get.
func (f *FreeList[E]) Put(e *E) {
	f.mu.Lock()
	f.items = append(f.items, e)
	f.mu.Unlock()
}

var jobs FreeList[job]
