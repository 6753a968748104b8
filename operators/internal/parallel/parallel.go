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

// CacheLine is how far apart, in bytes, per-part state that different parts
// write at the same time should lie: two cache lines of 64 bytes, since
// Intel cores fetch lines in pairs (the spatial prefetcher).
const CacheLine = 128

// Padded returns how far apart, in elements of size bytes, the slots of
// n elements that parts write at the same time should start in one slice
// so that no two parts write the same cache line wherever the slice
// starts: n rounded up to whole cache lines, and one more line between
// slots. size must divide CacheLine.
func Padded(n, size int) int {
	line := CacheLine / size
	return (n+line-1)/line*line + line
}

// Parts returns how many parts units units of total work (element
// operations) should be split into: at most threads (the caller's thread
// budget), at most GOMAXPROCS at the time of the call, at most units, and
// only as many as keep MinPartWork per part.
func Parts(threads, units, work int) int {
	return max(1, min(threads, runtime.GOMAXPROCS(0), units, work/MinPartWork))
}

// maxParts bounds parts so that a part index fits the 16 bits job.claims
// gives it.
const maxParts = 1<<16 - 1

// Run runs r over the units [0, units) split into parts contiguous ranges
// of nearly equal size (part p is [p·units/parts, (p+1)·units/parts)) and
// returns when all are done. The split depends only on units and parts, so
// a kernel that combines per-part results in part order gets the same
// result however the parts were scheduled. At most GOMAXPROCS goroutines,
// the caller's included, compute the parts of one call, whatever parts is:
// with more parts than that, each takes another part when it finishes one.
func Run(r Ranger, units, parts int) {
	parts = min(parts, units, maxParts)
	if parts <= 1 {
		r.RunRange(0, 0, units)
		return
	}
	procs := runtime.GOMAXPROCS(0)
	if int(pool.procs.Load()) != procs {
		pool.procs.Store(int32(procs))
	}
	helpers := min(parts, procs) - 1
	j := jobs.Get()
	if j.wake == nil {
		j.wake = make(chan struct{}, 1)
	}
	j.r, j.units = r, units
	j.pending.Store(int32(parts))
	gen := j.open(parts)
	if helpers > 0 {
		ensureWorkers(int(pool.wanted.Add(int32(helpers))))
		for range helpers {
			select {
			case pool.ch <- token{j, gen}:
			default: // the pool is swamped: no helper
			}
		}
	}
	j.work(gen)
	j.wait(gen)
	if helpers > 0 {
		pool.wanted.Add(-int32(helpers))
	}
	j.r = nil
	jobs.Put(j)
}

// job is one Run call, shared by the caller and its helpers. Every part
// writes claims and pending, so a job fills whole cache lines of its own
// (the size of a job is a multiple of CacheLine, and the allocator aligns
// such objects to it): jobs of calls that run at the same time never share
// a line.
type job struct {
	r     Ranger
	units int
	// claims is the job's generation (bits 32-63; each use of the job is
	// a new one, never 0), its number of parts (bits 16-31) and the next
	// part to claim (bits 0-15), in one word so that a helper holding a
	// token of an earlier use can never claim a part of this one.
	claims  atomic.Uint64
	pending atomic.Int32 // the parts not yet computed
	// sleeping is the generation whose caller blocks on wake until the
	// last part is done (see wait), or 0.
	sleeping atomic.Uint32
	wake     chan struct{}
	_        [CacheLine - 48]byte
}

// open starts a use of the job with the given number of parts (at most
// maxParts) and returns its generation.
func (j *job) open(parts int) uint32 {
	gen := uint32(j.claims.Load()>>32) + 1
	if gen == 0 {
		gen = 1
	}
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
// last part is done the caller may reuse the job for another call. Whoever
// finishes the last part wakes the caller if it sleeps.
func (j *job) work(gen uint32) {
	p, parts, ok := j.claim(gen)
	for ok {
		units := j.units
		j.r.RunRange(p, p*units/parts, (p+1)*units/parts)
		next, _, more := j.claim(gen)
		if j.pending.Add(-1) == 0 {
			j.finish(gen)
		}
		p, ok = next, more
	}
}

// finish wakes the caller of generation gen if it sleeps, and hands it
// this goroutine's processor. A goroutine that wakes another puts it next
// in its own processor's queue: yielding runs the caller there at once,
// instead of when another processor steals it, tens of microseconds later
// on an idle core, while this goroutine waits in the global queue for a
// processor of its own (there is nothing left for it to do). The job is
// never freed, so touching sleeping after the last part is safe; if the
// caller already took the job for another call, sleeping no longer holds
// gen and nothing happens.
func (j *job) finish(gen uint32) {
	if j.sleeping.CompareAndSwap(gen, 0) {
		j.wake <- struct{}{}
		runtime.Gosched()
	}
}

// waitSpin is how long the caller polls for its helpers to finish before
// it sleeps. By the time the caller waits it has computed every part
// nobody else claimed, so at most one part per helper is left; a helper
// that takes longer than this has most likely lost its core to another
// process, and polling would only keep that core from it.
const waitSpin = 20 * time.Microsecond

// wait waits for the helpers of generation gen to finish the parts they
// claimed: it polls for up to waitSpin (yielding now and then in case a
// helper waits for this processor), then sleeps until the last helper
// wakes it (see finish).
func (j *job) wait(gen uint32) {
	if j.pending.Load() <= 0 {
		return
	}
	deadline := time.Now().Add(waitSpin)
	for i := 1; j.pending.Load() > 0; i++ {
		if i%64 != 0 {
			continue
		}
		if i%256 == 0 {
			runtime.Gosched()
		}
		if time.Now().After(deadline) {
			j.sleep(gen)
			return
		}
	}
}

// sleep blocks until the last part of generation gen is done. Once the
// caller has published gen in sleeping, whoever finishes the last part
// sends on wake; if that is done already, the caller takes sleeping back,
// or, when a helper took it first, takes the helper's wake-up so that none
// is left over for the next call.
func (j *job) sleep(gen uint32) {
	j.sleeping.Store(gen)
	if j.pending.Load() > 0 || !j.sleeping.CompareAndSwap(gen, 0) {
		<-j.wake
	}
}

// token asks a worker to help with generation gen of a job.
type token struct {
	j   *job
	gen uint32
}

// line keeps what follows it on another cache line.
type line [CacheLine]byte

// pool is the set of worker goroutines that help with jobs. It grows to the
// most helpers that calls running at the same time have asked for together
// (so that replicas on several devices each find theirs) and never
// shrinks. The counters that change often lie on cache lines of their own.
var pool struct {
	_      line
	mu     sync.Mutex
	n      atomic.Int32 // workers started
	ch     chan token
	procs  atomic.Int32 // GOMAXPROCS at the latest call
	_      line
	wanted atomic.Int32 // helpers asked for by the calls now running
	_      line
	// spinning is the number of workers polling for work; at most
	// GOMAXPROCS−1 do, the others block.
	spinning atomic.Int32
	_        line
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

// Between calls a worker polls for the next one for a while before it
// blocks: waking a blocked goroutine on an idle core can take tens of
// microseconds (more on a virtual machine, where the idle vCPU is halted),
// as long as a whole mid-sized product takes, while a polling worker
// starts within a microsecond. It yields the processor every few
// microseconds meanwhile, so that other goroutines do not wait for it.
//
// catchGap is the longest gap between jobs worth polling through. A gap
// polled through costs its length in CPU time; one slept through costs the
// next call the wake-up, some tens of microseconds of one helper's share
// at worst. Past catchGap polling costs several times what it saves.
const catchGap = 100 * time.Microsecond

// minSpin is the least a worker that may spin polls for work.
const minSpin = 5 * time.Microsecond

// gaps learns how long a worker should poll for work: half as long again
// as the longest of its recent gaps shorter than catchGap. A net's steps
// repeat the same kernels with the same gaps between them, so that covers
// the gaps polling is worth it for, however long the serial operators
// between some kernels take: a worker with gaps of a few microseconds and
// of milliseconds (LeNet's) polls a few microseconds, not through the
// long ones.
type gaps struct {
	longest time.Duration // decays by 1/256 with each gap seen
}

// spin returns how long to poll for the next job.
func (g *gaps) spin() time.Duration {
	return g.longest + g.longest/2 + minSpin
}

// saw records a gap between two jobs.
func (g *gaps) saw(d time.Duration) {
	g.longest -= g.longest >> 8
	if d < catchGap {
		g.longest = max(g.longest, d)
	}
}

func worker(ch <-chan token) {
	g := gaps{longest: catchGap}
	for {
		idle := time.Now()
		t, ok := poll(ch, g.spin())
		if !ok {
			t = <-ch
		}
		g.saw(time.Since(idle))
		t.j.work(t.gen)
	}
}

// poll waits up to spin for a token without blocking, unless GOMAXPROCS−1
// workers poll already (more could not run at once beside the caller).
func poll(ch <-chan token, spin time.Duration) (token, bool) {
	for {
		n := pool.spinning.Load()
		if n >= pool.procs.Load()-1 {
			return token{}, false
		}
		if pool.spinning.CompareAndSwap(n, n+1) {
			break
		}
	}
	defer pool.spinning.Add(-1)
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
// The zero value is an empty list. A FreeList fills whole cache lines, so
// that lists side by side, which different parts lock at the same time, do
// not share their locks' lines.
type FreeList[E any] struct {
	mu    sync.Mutex
	items []*E
	_     [CacheLine - 32]byte
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
