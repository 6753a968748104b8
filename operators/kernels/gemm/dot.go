package gemm

import "github.com/caffe2go/caffe2go/operators/internal/parallel"

// The dot path computes C = alpha·A·Bᵀ + beta·C (A untransposed, B
// transposed) when C has few columns: the last layer of a classifier
// (batch × classes) and the weight gradient of a convolution (output
// channels × input channels·kernel, summed over the pixels). Both rows of
// A and rows of B are then contiguous k-vectors, and each element of C is
// their dot product: a kernel reads four rows of A and three of B where
// they are, eight values of each at a time, and reduces twelve
// accumulators at the end. The blocked path would instead transpose B
// into 16-column strips, most of them padding for a C this narrow.
const (
	dotRows, dotCols = 4, 3
	// dotMaxN is the most columns of C that take the dot path; wider
	// products keep B packed, where the blocked kernel's two broadcasts
	// per multiply-add beat the dot kernel's one load per row.
	dotMaxN = 32
	// dotMinK is the least k that takes it: the reduction of the
	// accumulators costs as much as a few dozen steps of k.
	dotMinK = 32
)

// useDot reports whether kern computes the product on the dot path.
func useDot[T float32 | float64](kern *kernel[T], transA, transB bool, n, k int) bool {
	return kern.dot != nil && transB && !transA && n <= dotMaxN && k >= dotMinK
}

// dotJob is one product on the dot path, its rows cut into groups of
// dotRows, computed in ranges of groups.
type dotJob[T float32 | float64] struct {
	p  problem[T]
	st *state[T]
}

// dotProduct computes p on the dot path, over at most threads
// goroutines.
func dotProduct[T float32 | float64](st *state[T], p problem[T], threads int) {
	groups := (p.m + dotRows - 1) / dotRows
	tasks := max(1, min(threads, p.m*p.n*p.k/p.kern.taskWork, groups))
	if tasks > 1 {
		took(PathDot)
		j := st.dots.Get()
		j.p, j.st = p, st
		parallel.Run(j, groups, tasks)
		j.p = problem[T]{}
		st.dots.Put(j)
		return
	}
	took(PathDot)
	buf := st.bufs.Get()
	p.dotRange(0, p.m, buf)
	st.bufs.Put(buf)
}

// RunRange computes the row groups [lo, hi).
func (j *dotJob[T]) RunRange(_, lo, hi int) {
	buf := j.st.bufs.Get()
	j.p.dotRange(lo*dotRows, min(hi*dotRows, j.p.m), buf)
	j.st.bufs.Put(buf)
}

// dotRange computes the rows [i0, i1) of C on the dot path. The kernel
// takes whole groups of four rows of A and three of B: a last partial
// group is copied, padded with zero rows, into buf.a or buf.b.
func (p *problem[T]) dotRange(i0, i1 int, buf *buffers[T]) {
	k, n := p.k, p.n
	dot := p.kern.dot
	buf.tile = grow(buf.tile, 16)
	out := buf.tile[:16]
	// The last columns, fewer than three, as a group of their own.
	fullN := n / dotCols * dotCols
	if fullN < n {
		buf.b = grow(buf.b, dotCols*k)
		clear(buf.b)
		for j := fullN; j < n; j++ {
			copy(buf.b[(j-fullN)*k:(j-fullN+1)*k], p.b[j*p.ldb:j*p.ldb+k])
		}
	}
	spanA := (dotRows-1)*p.lda + k
	spanB := (dotCols-1)*p.ldb + k
	for i := i0; i < i1; i += dotRows {
		rows := min(dotRows, i1-i)
		a, lda := p.a[i*p.lda:], p.lda
		if rows < dotRows {
			buf.a = grow(buf.a, dotRows*k)
			clear(buf.a)
			for r := 0; r < rows; r++ {
				copy(buf.a[r*k:(r+1)*k], p.a[(i+r)*p.lda:(i+r)*p.lda+k])
			}
			a, lda = buf.a, k
		} else {
			a = a[:spanA]
		}
		sa := (dotRows-1)*lda + k
		for j := 0; j < n; j += dotCols {
			off := i*p.ldc + j
			if j < fullN {
				dot(k, a[:sa], lda, p.b[j*p.ldb:j*p.ldb+spanB], p.ldb, out)
				store(out, 4, rows, dotCols, p.alpha, p.beta, p.c[off:], p.ldc)
				continue
			}
			dot(k, a[:sa], lda, buf.b[:dotCols*k], k, out)
			store(out, 4, rows, n-fullN, p.alpha, p.beta, p.c[off:], p.ldc)
		}
	}
}
