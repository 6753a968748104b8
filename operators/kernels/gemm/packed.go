package gemm

import (
	"fmt"

	"github.com/caffe2go/caffe2go/operators/internal/parallel"
)

// PackedB is the layout in which MulPackedB takes its B operand, a k×n
// matrix already packed the way the blocked product packs it, so that a
// caller that builds B element by element (the columns of a convolution)
// writes it there directly instead of into a matrix the product then
// copies.
//
// The k rows are cut into blocks of KC rows (the last block may be
// shorter), and each block into strips of NR columns, the last one padded
// with zeros to NR. Block b (rows [b·KC, b·KC+kb)) starts at b·KC·NP,
// NP = N rounded up to NR; its strip s starts kb·NR after strip s−1 and
// holds the NR values of each of its kb rows one after the other.
// Offset gives the position of one element.
type PackedB struct {
	K, N   int // the matrix is K×N
	NR, KC int // strip width and block depth
	NP     int // N rounded up to a multiple of NR
}

// PackedBLayout returns the layout of a packed k×n B of element type T for
// the micro-kernel Gemm uses on this machine.
func PackedBLayout[T float32 | float64](k, n int) PackedB {
	return packedBLayout(stateFor[T]().kern, k, n)
}

func packedBLayout[T float32 | float64](kn *kernel[T], k, n int) PackedB {
	return PackedB{K: k, N: n, NR: kn.nr, KC: max(1, blockSize(k, kn.kc, 1)), NP: roundUp(n, kn.nr)}
}

// TileRows is the number of rows of C the micro-kernel for T computes at
// a time on this machine: MulPackedB packs an A (or the last rows of one)
// whose rows are not a multiple of it, and reads a whole number of them
// in place where it can.
func TileRows[T float32 | float64]() int { return stateFor[T]().kern.mr }

// Len is the number of elements of a packed B.
func (l PackedB) Len() int { return l.K * l.NP }

// Offset returns where element (q, j) of B lies in its packed form.
func (l PackedB) Offset(q, j int) int {
	pc := q / l.KC * l.KC
	kb := min(l.KC, l.K-pc)
	return pc*l.NP + j/l.NR*l.NR*kb + (q-pc)*l.NR + j%l.NR
}

// MulPackedB computes C = alpha·A·B + beta·C, where A is m×k (row-major,
// leading dimension lda), B is k×n packed in PackedBLayout[T](k, n) in
// bp, and C is m×n with leading dimension ldc; beta 0 overwrites C without
// reading it. What the padding columns of bp hold never reaches C. The product is split like Gemm's over at most
// threads goroutines, and its result does not depend on threads. It
// panics when a dimension is negative or a slice is too short, like Gemm.
func MulPackedB[T float32 | float64](threads, m, n, k int, alpha T, a []T, lda int, bp []T, beta T, c []T, ldc int) {
	mulPackedB(stateFor[T]().kern, threads, m, n, k, alpha, a, lda, bp, beta, c, ldc)
}

func mulPackedB[T float32 | float64](kern *kernel[T], threads, m, n, k int, alpha T, a []T, lda int, bp []T, beta T, c []T, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension: m=%d n=%d k=%d", m, n, k))
	}
	checkMatrix("A", m, k, len(a), lda)
	checkMatrix("C", m, n, len(c), ldc)
	lay := packedBLayout(kern, k, n)
	if len(bp) < lay.Len() {
		panic(fmt.Sprintf("gemm: packed B has %d elements, a packed %d×%d matrix needs %d", len(bp), k, n, lay.Len()))
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	st := stateFor[T]()
	pj := packedJob[T]{
		p: problem[T]{
			kern: kern, m: m, n: n, k: k, alpha: alpha, beta: beta,
			a: a, lda: lda, b: bp, ldb: lay.NP, c: c, ldc: ldc,
		},
		lay: lay, st: st,
	}
	tasks, byRows, chunk := split(m, n, k, threads, kern.mr, kern.nr, kern.taskWork)
	if tasks <= 1 {
		pj.RunRange(0, 0, 1)
		return
	}
	pj.byRows, pj.chunk, pj.extent = byRows, chunk, n
	if byRows {
		pj.extent = m
	}
	jobs := packedJobsFor[T]()
	j := jobs.Get()
	*j = pj
	parallel.Run(j, tasks, tasks)
	*j = packedJob[T]{}
	jobs.Put(j)
}

// The free lists of split MulPackedB calls, one per element type.
var (
	packedJobs32 parallel.FreeList[packedJob[float32]]
	packedJobs64 parallel.FreeList[packedJob[float64]]
)

func packedJobsFor[T float32 | float64]() *parallel.FreeList[packedJob[T]] {
	var l any
	switch any((*T)(nil)).(type) {
	case *float32:
		l = &packedJobs32
	case *float64:
		l = &packedJobs64
	}
	return l.(*parallel.FreeList[packedJob[T]])
}

// packedJob is one MulPackedB call, split by rows or columns (the column
// ranges are multiples of nr, so each range starts at a strip) like job.
type packedJob[T float32 | float64] struct {
	p             problem[T]
	lay           PackedB
	st            *state[T]
	byRows        bool
	extent, chunk int
}

// RunRange computes the ranges [lo, hi); a job that is not split (chunk 0)
// computes all of C.
func (j *packedJob[T]) RunRange(_, lo, hi int) {
	buf := j.st.bufs.Get()
	switch {
	case j.chunk == 0:
		j.run(0, j.p.m, 0, j.p.n, buf)
	case j.byRows:
		j.run(lo*j.chunk, min(hi*j.chunk, j.extent), 0, j.p.n, buf)
	default:
		j.run(0, j.p.m, lo*j.chunk, min(hi*j.chunk, j.extent), buf)
	}
	j.st.bufs.Put(buf)
}

// run computes rows [i0, i1) and columns [j0, j1) of C (j0 a multiple of
// nr) the way problem.run does, with the panels of B read from the packed
// operand instead of packed into buf.b.
func (j *packedJob[T]) run(i0, i1, j0, j1 int, buf *buffers[T]) {
	p, lay := &j.p, j.lay
	kn := p.kern
	mr, nr := kn.mr, kn.nr
	mcb := blockSize(i1-i0, kn.mc, mr)
	ncb := blockSize(j1-j0, kn.nc, nr)
	buf.a = grow(buf.a, roundUp(mcb, mr)*lay.KC)
	buf.tile = grow(buf.tile, mr*nr)
	// The macro-kernels read B from local.b; buf.b, the free list's
	// buffer, is left alone.
	local := buffers[T]{a: buf.a, tile: buf.tile}
	for jc := j0; jc < j1; jc += ncb {
		nb := min(ncb, j1-jc)
		strips := (nb + nr - 1) / nr
		for pc := 0; pc < p.k; pc += lay.KC {
			kb := min(lay.KC, p.k-pc)
			beta := p.beta
			if pc > 0 {
				beta = 1
			}
			off := pc*lay.NP + jc*kb
			local.b = p.b[off : off+strips*nr*kb]
			inPlace := kn.strided != nil && strips <= inPlaceStrips
			for ic := i0; ic < i1; ic += mcb {
				mb := min(mcb, i1-ic)
				if inPlace {
					p.macroInPlace(&local, ic, mb, pc, jc, nb, kb, beta)
					continue
				}
				p.packA(local.a, ic, mb, pc, kb)
				p.macro(&local, ic, mb, jc, nb, kb, beta)
			}
		}
	}
}
