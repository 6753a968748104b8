package gemm

import "github.com/caffe2go/caffe2go/operators/internal/parallel"

// The dot path computes C = alpha·A·Bᵀ + beta·C (A untransposed, B
// transposed) when C has few columns or few rows and k is long: the last
// layer of a classifier (batch × classes), the weight gradient of a
// convolution (output channels × input channels·kernel, summed over the
// pixels), an FC layer on a batch of a few. Rows of A and rows of B are
// then contiguous k-vectors, and each element of C is their dot product:
// a kernel reads four rows of A and three of B where they are, eight
// values of each at a time, and reduces twelve accumulators at the end.
// The blocked path would instead transpose B into 16-column strips, most
// of them padding for a C this narrow, or all of B for a few rows.
const dotRows, dotCols = 4, 3

// useDot reports whether kern computes the product on the dot path:
// when B is transposed and A is not, and a cost model says the dot kernel
// is faster than the blocked one. Both are counted in multiply-adds at the
// rate each kernel reaches, measured on one AVX2 core (AMD EPYC, Zen):
//
//   - blocked: m·⌈n⌉nr·k at 95% of peak (C's columns padded to whole
//     strips of nr), plus about 16 for each of the n·k values of B it
//     transposes into strips;
//   - dot: ⌈m⌉4·⌈n⌉3·(k+100) at 85% of peak (the reduction of its
//     accumulators costs about as much as 100 steps of k).
//
// The model picks the faster kernel, or one within 25% of it, in all 21
// shapes measured: n = 9, 10, 24 and 25 with a long k (dot, up to 1.7×
// faster), m of 1 to 16 rows with n of 256 or 512 (dot, up to 2×: the
// blocked path transposes all of B for a few rows), n = 16, 32 and 48 and
// k of 32 to 64 (blocked), and m ≥ 64 with a wide n (blocked). Tile
// kernels faster than the dot kernel (tileSpeed, the AVX-512 ones) count
// their multiply-adds at that much more than 95%.
func useDot[T float32 | float64](kern *kernel[T], transA, transB bool, m, n, k int) bool {
	if kern.dot == nil || !transB || transA || k < 16 {
		return false
	}
	speed := kern.tileSpeed
	if speed == 0 {
		speed = 1
	}
	blocked := float64(m*roundUp(n, kern.nr)*k)/0.95/speed + 16*float64(n*k)
	dot := float64(roundUp(m, dotRows)*roundUp(n, dotCols)*(k+100)) / 0.85
	return dot < blocked
}

// dotJob is one product on the dot path, cut into ranges of groups of
// dotRows rows of C or, for a C of too few rows to share out, of dotCols
// columns.
type dotJob[T float32 | float64] struct {
	p      problem[T]
	st     *state[T]
	byCols bool
}

// dotProduct computes p on the dot path, over at most threads
// goroutines.
func dotProduct[T float32 | float64](st *state[T], p problem[T], threads int) {
	took(PathDot)
	rowGroups := (p.m + dotRows - 1) / dotRows
	colGroups := (p.n + dotCols - 1) / dotCols
	tasks := max(1, min(threads, p.m*p.n*p.k/p.kern.taskWork))
	units, byCols := rowGroups, false
	if rowGroups < tasks && colGroups > rowGroups {
		units, byCols = colGroups, true
	}
	tasks = min(tasks, units)
	if tasks > 1 {
		j := st.dots.Get()
		j.p, j.st, j.byCols = p, st, byCols
		parallel.Run(j, units, tasks)
		j.p = problem[T]{}
		st.dots.Put(j)
		return
	}
	buf := st.bufs.Get()
	p.dotRange(0, p.m, 0, p.n, buf)
	st.bufs.Put(buf)
}

// RunRange computes the groups [lo, hi).
func (j *dotJob[T]) RunRange(_, lo, hi int) {
	buf := j.st.bufs.Get()
	if j.byCols {
		j.p.dotRange(0, j.p.m, lo*dotCols, min(hi*dotCols, j.p.n), buf)
	} else {
		j.p.dotRange(lo*dotRows, min(hi*dotRows, j.p.m), 0, j.p.n, buf)
	}
	j.st.bufs.Put(buf)
}

// dotRange computes the rows [i0, i1) and columns [j0, j1) of C on the
// dot path, j0 a multiple of dotCols. The kernel takes whole groups of
// four rows of A and three of B: a last partial group is copied, padded
// with zero rows, into buf.a or buf.b.
func (p *problem[T]) dotRange(i0, i1, j0, j1 int, buf *buffers[T]) {
	k := p.k
	dot := p.kern.dot
	buf.tile = grow(buf.tile, 16)
	out := buf.tile[:16]
	// The last columns, fewer than three, as a group of their own.
	fullN := j0 + (j1-j0)/dotCols*dotCols
	if fullN < j1 {
		buf.b = grow(buf.b, dotCols*k)
		clear(buf.b)
		for j := fullN; j < j1; j++ {
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
		for j := j0; j < j1; j += dotCols {
			off := i*p.ldc + j
			if j < fullN {
				dot(k, a[:sa], lda, p.b[j*p.ldb:j*p.ldb+spanB], p.ldb, out)
				store(out, 4, rows, dotCols, p.alpha, p.beta, p.c[off:], p.ldc)
				continue
			}
			dot(k, a[:sa], lda, buf.b[:dotCols*k], k, out)
			store(out, 4, rows, j1-fullN, p.alpha, p.beta, p.c[off:], p.ldc)
		}
	}
}
