package gemm

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Blocking parameters. A packed A block is mc×kc, a packed B panel kc×nc;
// the micro-kernel computes an mr×nr tile of C.
const (
	mr = 4
	nr = 4
	kc = 256
	mc = 128
	nc = 512
)

const (
	// smallWork is the m·n·k at or below which the product is computed by a
	// direct loop, without packing.
	smallWork = 16 * 16 * 16
	// taskWork is the least m·n·k a parallel task should get.
	taskWork = 1 << 18
	// minSplit is the least number of rows (or columns) a task should get.
	minSplit = 16
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices, where op(A) is m×k (A is m×k with leading dimension lda, or k×m
// when transA), op(B) is k×n (B is k×n with leading dimension ldb, or n×k
// when transB), and C is m×n with leading dimension ldc. When beta is 0, C
// is overwritten without being read (NaNs in it do not propagate). It
// panics, like a BLAS, when a dimension is negative, a leading dimension is
// smaller than its row length, or a slice is too short for its matrix.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm is Sgemm for float64 matrices.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Gemm is Sgemm and Dgemm for either element type, for callers that are
// generic over it.
func Gemm[T float32 | float64](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	checkArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	if m*n*k <= smallWork {
		direct(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	p := problem[T]{
		transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: alpha, beta: beta, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc,
	}
	st := stateFor[T]()
	tasks, byRows, chunk := split(m, n, k, runtime.GOMAXPROCS(0))
	if tasks <= 1 {
		buf := st.bufs.get()
		p.run(0, m, 0, n, buf)
		st.bufs.put(buf)
		return
	}
	ensureWorkers(tasks - 1)
	j := st.jobs.get()
	j.p, j.byRows, j.st = p, byRows, st
	extent := n
	if byRows {
		extent = m
	}
	j.wg.Add(tasks)
	for lo := chunk; lo < extent; lo += chunk {
		pool.ch <- task{r: j, lo: lo, hi: min(lo+chunk, extent)}
	}
	j.runRange(0, chunk)
	j.wg.Wait()
	j.p = problem[T]{}
	st.jobs.put(j)
}

func checkArgs(transA, transB bool, m, n, k, la, lda, lb, ldb, lc, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension: m=%d n=%d k=%d", m, n, k))
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMatrix("A", ar, ac, la, lda)
	checkMatrix("B", br, bc, lb, ldb)
	checkMatrix("C", m, n, lc, ldc)
}

func checkMatrix(name string, rows, cols, length, ld int) {
	if ld < max(1, cols) {
		panic(fmt.Sprintf("gemm: leading dimension of %s is %d, less than its %d columns", name, ld, cols))
	}
	if rows > 0 && cols > 0 && length < (rows-1)*ld+cols {
		panic(fmt.Sprintf("gemm: %s has %d elements, a %d×%d matrix with leading dimension %d needs %d", name, length, rows, cols, ld, (rows-1)*ld+cols))
	}
}

// scaleC sets C = beta·C (C = 0 when beta is 0).
func scaleC[T float32 | float64](m, n int, beta T, c []T, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// direct computes a small product with plain loops over the strided
// operands.
func direct[T float32 | float64](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ai, ap := lda, 1
	if transA {
		ai, ap = 1, lda
	}
	bp, bj := ldb, 1
	if transB {
		bp, bj = 1, ldb
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		for j := range row {
			var s T
			ia, ib := i*ai, j*bj
			for p := 0; p < k; p++ {
				s += a[ia] * b[ib]
				ia += ap
				ib += bp
			}
			if beta == 0 {
				row[j] = alpha * s
			} else {
				row[j] = alpha*s + beta*row[j]
			}
		}
	}
}

// problem is one product's operands.
type problem[T float32 | float64] struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    T
	a              []T
	lda            int
	b              []T
	ldb            int
	c              []T
	ldc            int
}

// buffers are the packing buffers of one running range.
type buffers[T float32 | float64] struct {
	a, b []T
}

func grow[T float32 | float64](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func roundUp(x, unit int) int { return (x + unit - 1) / unit * unit }

// run computes the rows [i0, i1) and columns [j0, j1) of C.
func (p *problem[T]) run(i0, i1, j0, j1 int, buf *buffers[T]) {
	kmax := min(kc, p.k)
	buf.a = grow(buf.a, roundUp(min(mc, i1-i0), mr)*kmax)
	buf.b = grow(buf.b, roundUp(min(nc, j1-j0), nr)*kmax)
	for jc := j0; jc < j1; jc += nc {
		nb := min(nc, j1-jc)
		for pc := 0; pc < p.k; pc += kc {
			kb := min(kc, p.k-pc)
			p.packB(buf.b, pc, kb, jc, nb)
			beta := p.beta
			if pc > 0 {
				beta = 1
			}
			for ic := i0; ic < i1; ic += mc {
				mb := min(mc, i1-ic)
				p.packA(buf.a, ic, mb, pc, kb)
				p.macro(buf.a, buf.b, ic, mb, jc, nb, kb, beta)
			}
		}
	}
}

// packA packs rows [ic, ic+mb) and columns [pc, pc+kb) of op(A) into
// mr-high strips: strip s holds, for each p, the mr values of column p,
// padded with zeros past the last row.
func (p *problem[T]) packA(dst []T, ic, mb, pc, kb int) {
	for s := 0; s < mb; s += mr {
		rows := min(mr, mb-s)
		d := dst[s*kb : s*kb+mr*kb]
		if rows < mr {
			clear(d)
		}
		if p.transA {
			// op(A)[i][q] = a[q*lda+i]: each column of the strip is contiguous.
			for q := 0; q < kb; q++ {
				off := (pc+q)*p.lda + ic + s
				src := p.a[off : off+rows]
				dq := d[q*mr : q*mr+rows]
				copy(dq, src)
			}
			continue
		}
		for r := 0; r < rows; r++ {
			off := (ic+s+r)*p.lda + pc
			src := p.a[off : off+kb]
			for q, v := range src {
				d[q*mr+r] = v
			}
		}
	}
}

// packB packs rows [pc, pc+kb) and columns [jc, jc+nb) of op(B) into
// nr-wide strips: strip t holds, for each p, the nr values of row p, padded
// with zeros past the last column.
func (p *problem[T]) packB(dst []T, pc, kb, jc, nb int) {
	for t := 0; t < nb; t += nr {
		cols := min(nr, nb-t)
		d := dst[t*kb : t*kb+nr*kb]
		if cols < nr {
			clear(d)
		}
		if p.transB {
			// op(B)[q][j] = b[j*ldb+q]: each column is contiguous.
			for c := 0; c < cols; c++ {
				off := (jc+t+c)*p.ldb + pc
				src := p.b[off : off+kb]
				for q, v := range src {
					d[q*nr+c] = v
				}
			}
			continue
		}
		if cols == nr {
			for q := 0; q < kb; q++ {
				off := (pc+q)*p.ldb + jc + t
				src := p.b[off : off+nr : off+nr]
				dq := d[q*nr : q*nr+nr : q*nr+nr]
				dq[0], dq[1], dq[2], dq[3] = src[0], src[1], src[2], src[3]
			}
			continue
		}
		for q := 0; q < kb; q++ {
			off := (pc+q)*p.ldb + jc + t
			copy(d[q*nr:q*nr+cols], p.b[off:off+cols])
		}
	}
}

// macro multiplies a packed mb×kb block of A by a packed kb×nb panel of B
// into C at (ic, jc), tile by tile.
func (p *problem[T]) macro(ap, bp []T, ic, mb, jc, nb, kb int, beta T) {
	var tile [mr * nr]T
	for t := 0; t < nb; t += nr {
		cols := min(nr, nb-t)
		b := bp[t*kb : t*kb+nr*kb]
		for s := 0; s < mb; s += mr {
			rows := min(mr, mb-s)
			micro(kb, ap[s*kb:s*kb+mr*kb], b, &tile)
			store(&tile, rows, cols, p.alpha, beta, p.c[(ic+s)*p.ldc+jc+t:], p.ldc)
		}
	}
}

// micro computes the mr×nr product of a packed A strip and a packed B
// strip, both kb deep, into tile (row-major). It makes two passes of mr×2
// columns: sixteen scalar accumulators do not fit the register file, eight
// do, and the A strip stays in L1 for the second pass.
func micro[T float32 | float64](kb int, a, b []T, tile *[mr * nr]T) {
	a = a[:kb*mr]
	b = b[:kb*nr]
	for h := 0; h < nr; h += 2 {
		var c00, c01, c10, c11, c20, c21, c30, c31 T
		bh := b[h:]
		for p := 0; p < kb; p++ {
			ap := a[p*mr : p*mr+4 : p*mr+4]
			bp := bh[p*nr : p*nr+2 : p*nr+2]
			a0, a1, a2, a3 := ap[0], ap[1], ap[2], ap[3]
			b0, b1 := bp[0], bp[1]
			c00 += a0 * b0
			c01 += a0 * b1
			c10 += a1 * b0
			c11 += a1 * b1
			c20 += a2 * b0
			c21 += a2 * b1
			c30 += a3 * b0
			c31 += a3 * b1
		}
		tile[0*nr+h], tile[0*nr+h+1] = c00, c01
		tile[1*nr+h], tile[1*nr+h+1] = c10, c11
		tile[2*nr+h], tile[2*nr+h+1] = c20, c21
		tile[3*nr+h], tile[3*nr+h+1] = c30, c31
	}
}

// store writes the top-left rows×cols of tile into C: C = alpha·tile +
// beta·C, without reading C when beta is 0.
func store[T float32 | float64](tile *[mr * nr]T, rows, cols int, alpha, beta T, c []T, ldc int) {
	for r := 0; r < rows; r++ {
		row := c[r*ldc : r*ldc+cols]
		src := tile[r*nr : r*nr+cols]
		switch beta {
		case 0:
			for j, v := range src {
				row[j] = alpha * v
			}
		case 1:
			for j, v := range src {
				row[j] += alpha * v
			}
		default:
			for j, v := range src {
				row[j] = alpha*v + beta*row[j]
			}
		}
	}
}

// split decides how to share a product among up to procs goroutines: the
// number of tasks, whether they split the rows (else the columns) of C, and
// how many rows or columns each gets.
func split(m, n, k, procs int) (tasks int, byRows bool, chunk int) {
	t := min(procs, m*n*k/taskWork)
	if t < 2 {
		return 1, true, m
	}
	extent, unit := m, mr
	byRows = true
	if m < t*minSplit && n > m {
		extent, unit, byRows = n, nr, false
	}
	t = min(t, extent/minSplit)
	if t < 2 {
		return 1, true, m
	}
	chunk = roundUp((extent+t-1)/t, unit)
	return (extent + chunk - 1) / chunk, byRows, chunk
}

// job is one parallel product, shared by its tasks.
type job[T float32 | float64] struct {
	p      problem[T]
	byRows bool
	st     *state[T]
	wg     sync.WaitGroup
}

// runRange computes rows (or columns) [lo, hi) of the job's product.
func (j *job[T]) runRange(lo, hi int) {
	buf := j.st.bufs.get()
	if j.byRows {
		j.p.run(lo, hi, 0, j.p.n, buf)
	} else {
		j.p.run(0, j.p.m, lo, hi, buf)
	}
	j.st.bufs.put(buf)
	j.wg.Done()
}

// state holds the free lists of one element type.
type state[T float32 | float64] struct {
	bufs freeList[buffers[T]]
	jobs freeList[job[T]]
}

// freeList recycles objects. Unlike a sync.Pool it keeps them across
// garbage collections, so that calls in steady state never allocate; it
// holds at most as many objects as were ever in use at once.
type freeList[E any] struct {
	mu    sync.Mutex
	items []*E
}

func (f *freeList[E]) get() *E {
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

func (f *freeList[E]) put(e *E) {
	f.mu.Lock()
	f.items = append(f.items, e)
	f.mu.Unlock()
}

var (
	state32 = new(state[float32])
	state64 = new(state[float64])
)

func stateFor[T float32 | float64]() *state[T] {
	var s any
	switch any((*T)(nil)).(type) {
	case *float32:
		s = state32
	case *float64:
		s = state64
	}
	return s.(*state[T])
}

// rangeRunner is a job that computes one range of its product.
type rangeRunner interface {
	runRange(lo, hi int)
}

type task struct {
	r      rangeRunner
	lo, hi int
}

// pool is the set of worker goroutines that run tasks; it grows to the
// largest number of helpers a call has asked for and never shrinks.
var pool struct {
	mu sync.Mutex
	n  atomic.Int32
	ch chan task
}

func init() { pool.ch = make(chan task, 256) }

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

func worker(ch <-chan task) {
	for t := range ch {
		t.r.runRange(t.lo, t.hi)
	}
}
