package gemm

import (
	"fmt"
	"runtime"

	"github.com/caffe2go/caffe2go/operators/internal/parallel"
)

const (
	// minSplit is the least number of rows (or columns) a task should get.
	minSplit = 16
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices, where op(A) is m×k (A is m×k with leading dimension lda, or k×m
// when transA), op(B) is k×n (B is k×n with leading dimension ldb, or n×k
// when transB), and C is m×n with leading dimension ldc. When beta is 0, C
// is overwritten without being read (NaNs in it do not propagate); when
// alpha or k is 0, A and B are not read (C = beta·C), as in a BLAS. It
// panics, like a BLAS, when a dimension is negative, a leading dimension is
// smaller than its row length, or a slice is too short for its matrix.
// It splits a large product over GOMAXPROCS goroutines.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	Gemm(runtime.GOMAXPROCS(0), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm is Sgemm for float64 matrices.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	Gemm(runtime.GOMAXPROCS(0), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Gemm is Sgemm and Dgemm for either element type, for callers that are
// generic over it, splitting a large product over at most threads
// goroutines (the caller's thread budget; less than 1 counts as 1). The
// split cuts rows or columns of C, never the k dimension, so every element
// of C is summed in the same order and the result does not depend on
// threads.
func Gemm[T float32 | float64](threads int, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemm(stateFor[T]().kern, threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemm is Gemm on the micro-kernel kern, which the tests choose to run
// every kernel this build has.
func gemm[T float32 | float64](kern *kernel[T], threads int, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	checkArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		took(PathScale)
		scaleC(m, n, beta, c, ldc)
		return
	}
	if m*n*k <= kern.smallWork {
		took(PathDirect)
		direct(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	st := stateFor[T]()
	p := problem[T]{
		kern:   kern,
		transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: alpha, beta: beta, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc,
	}
	if useDot(kern, transA, transB, m, n, k) {
		dotProduct(st, p, threads)
		return
	}
	tasks, byRows, chunk := split(m, n, k, threads, p.kern.mr, p.kern.nr, p.kern.taskWork)
	if byRows {
		if c, t, ok := columnsPay(transA, m, n, k, tasks, p.kern.nr); ok {
			tasks, byRows, chunk = t, false, c
		}
	}
	if tasks <= 1 {
		took(PathBlocked)
		buf := st.bufs.Get()
		p.run(0, m, 0, n, buf)
		st.bufs.Put(buf)
		return
	}
	took(PathBlockedParallel)
	j := st.jobs.Get()
	j.p, j.byRows, j.st = p, byRows, st
	j.extent, j.chunk = n, chunk
	if byRows {
		j.extent = m
	}
	parallel.Run(j, tasks, tasks)
	j.p = problem[T]{}
	st.jobs.Put(j)
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
	kern           *kernel[T]
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

// buffers are the packing buffers of one running range, and a tile for
// the micro-kernel's partial tiles at the edges of C.
type buffers[T float32 | float64] struct {
	a, b, tile []T
}

func grow[T float32 | float64](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func roundUp(x, unit int) int { return (x + unit - 1) / unit * unit }

// blockSize is the size of the blocks that cut extent into as few pieces of
// at most limit as it can, all of about the same size, rounded up to a
// multiple of unit (so that no block is left with a sliver).
func blockSize(extent, limit, unit int) int {
	if extent <= limit {
		return extent
	}
	blocks := (extent + limit - 1) / limit
	return min(limit, roundUp((extent+blocks-1)/blocks, unit))
}

// run computes the rows [i0, i1) and columns [j0, j1) of C.
func (p *problem[T]) run(i0, i1, j0, j1 int, buf *buffers[T]) {
	kn := p.kern
	mr, nr := kn.mr, kn.nr
	kcb := blockSize(p.k, kn.kc, 1)
	mcb := blockSize(i1-i0, kn.mc, mr)
	ncb := blockSize(j1-j0, kn.nc, nr)
	buf.a = grow(buf.a, roundUp(mcb, mr)*kcb)
	buf.b = grow(buf.b, roundUp(ncb, nr)*kcb)
	buf.tile = grow(buf.tile, mr*nr)
	for jc := j0; jc < j1; jc += ncb {
		nb := min(ncb, j1-jc)
		for pc := 0; pc < p.k; pc += kcb {
			kb := min(kcb, p.k-pc)
			beta := p.beta
			if pc > 0 {
				beta = 1
			}
			strips := (nb + nr - 1) / nr
			// One strip of A or less: B, read once, is read in place
			// whatever its leading dimension, and rather than A.
			oneStripB := kn.stridedB != nil && !p.transB && i1-i0 <= mr
			inPlace := !oneStripB && kn.strided != nil && (strips <= inPlaceStrips && !p.transA || strips <= inPlaceStrips/4)
			inPlaceB := oneStripB || !inPlace && kn.stridedB != nil && !p.transB && i1-i0 <= inPlaceBRows && p.ldb%64 != 0
			if inPlaceB {
				// Only a last partial strip is packed (at the start of buf.b).
				if full := nb / nr * nr; full < nb {
					p.packB(buf.b, pc, kb, jc+full, nb-full)
				}
			} else {
				p.packB(buf.b, pc, kb, jc, nb)
			}
			for ic := i0; ic < i1; ic += mcb {
				mb := min(mcb, i1-ic)
				switch {
				case inPlace:
					p.macroInPlace(buf, ic, mb, pc, jc, nb, kb, beta)
				case inPlaceB:
					p.packA(buf.a, ic, mb, pc, kb)
					p.macroInPlaceB(buf, ic, mb, pc, jc, nb, kb, beta)
				default:
					p.packA(buf.a, ic, mb, pc, kb)
					p.macro(buf, ic, mb, jc, nb, kb, beta)
				}
			}
		}
	}
}

// packA packs rows [ic, ic+mb) and columns [pc, pc+kb) of op(A) into
// mr-high strips: strip s holds, for each p, the mr values of column p,
// padded with zeros past the last row.
func (p *problem[T]) packA(dst []T, ic, mb, pc, kb int) {
	mr := p.kern.mr
	for s := 0; s < mb; s += mr {
		rows := min(mr, mb-s)
		d := dst[s*kb : s*kb+mr*kb]
		if rows < mr {
			clear(d)
		}
		switch {
		case p.transA && rows == 6 && mr == 6:
			// op(A)[i][q] = a[q*lda+i]: each column of the strip is contiguous.
			off := pc*p.lda + ic + s
			for q := 0; q < kb; q++ {
				// Element by element: the compiler copies a generic
				// array with a call to memmove.
				dq, sq := (*[6]T)(d[q*6:]), (*[6]T)(p.a[off:])
				dq[0], dq[1], dq[2], dq[3], dq[4], dq[5] = sq[0], sq[1], sq[2], sq[3], sq[4], sq[5]
				off += p.lda
			}
		case p.transA && rows == 12 && mr == 12:
			off := pc*p.lda + ic + s
			for q := 0; q < kb; q++ {
				dq, sq := (*[12]T)(d[q*12:]), (*[12]T)(p.a[off:])
				dq[0], dq[1], dq[2], dq[3], dq[4], dq[5] = sq[0], sq[1], sq[2], sq[3], sq[4], sq[5]
				dq[6], dq[7], dq[8], dq[9], dq[10], dq[11] = sq[6], sq[7], sq[8], sq[9], sq[10], sq[11]
				off += p.lda
			}
		case p.transA:
			off := pc*p.lda + ic + s
			for q := 0; q < kb; q++ {
				copy(d[q*mr:q*mr+rows], p.a[off:off+rows])
				off += p.lda
			}
		case rows == 6 && mr == 6:
			// Six rows at once: read six streams, write the strip in order.
			off := (ic+s)*p.lda + pc
			r0 := p.a[off : off+kb]
			r1 := p.a[off+p.lda:][:len(r0)]
			r2 := p.a[off+2*p.lda:][:len(r0)]
			r3 := p.a[off+3*p.lda:][:len(r0)]
			r4 := p.a[off+4*p.lda:][:len(r0)]
			r5 := p.a[off+5*p.lda:][:len(r0)]
			for q := range r0 {
				dq := (*[6]T)(d[q*6:])
				dq[0], dq[1], dq[2], dq[3], dq[4], dq[5] = r0[q], r1[q], r2[q], r3[q], r4[q], r5[q]
			}
		case rows == 12 && mr == 12:
			// Twelve rows in two passes of six streams each.
			for h := 0; h < 12; h += 6 {
				off := (ic+s+h)*p.lda + pc
				r0 := p.a[off : off+kb]
				r1 := p.a[off+p.lda:][:len(r0)]
				r2 := p.a[off+2*p.lda:][:len(r0)]
				r3 := p.a[off+3*p.lda:][:len(r0)]
				r4 := p.a[off+4*p.lda:][:len(r0)]
				r5 := p.a[off+5*p.lda:][:len(r0)]
				dh := d[h:]
				for q := range r0 {
					dq := (*[6]T)(dh[q*12:])
					dq[0], dq[1], dq[2], dq[3], dq[4], dq[5] = r0[q], r1[q], r2[q], r3[q], r4[q], r5[q]
				}
			}
		default:
			for r := 0; r < rows; r++ {
				off := (ic+s+r)*p.lda + pc
				src := p.a[off : off+kb]
				dr := d[r:]
				for q, v := range src {
					dr[q*mr] = v
				}
			}
		}
	}
}

// packB packs rows [pc, pc+kb) and columns [jc, jc+nb) of op(B) into
// nr-wide strips: strip t holds, for each p, the nr values of row p, padded
// with zeros past the last column.
func (p *problem[T]) packB(dst []T, pc, kb, jc, nb int) {
	kn := p.kern
	nr := kn.nr
	for t := 0; t < nb; t += nr {
		cols := min(nr, nb-t)
		d := dst[t*kb : t*kb+nr*kb]
		if cols < nr {
			clear(d)
		}
		if p.transB {
			// op(B)[q][j] = b[j*ldb+q]: each column is contiguous.
			q0 := 0
			if cols == nr && kn.transpose != nil && kb >= 8 {
				off := (jc+t)*p.ldb + pc
				q0 = kb &^ 7
				kn.transpose(q0, d[:q0*nr], p.b[off:off+(nr-1)*p.ldb+q0], p.ldb)
			}
			// Gather four columns at a time, writing each row of the
			// strip in order (rows [q0, kb), those the transpose left).
			c := 0
			for ; c+4 <= cols && q0 < kb; c += 4 {
				off := (jc+t+c)*p.ldb + pc
				s0 := p.b[off+q0 : off+kb]
				s1 := p.b[off+p.ldb+q0:][:len(s0)]
				s2 := p.b[off+2*p.ldb+q0:][:len(s0)]
				s3 := p.b[off+3*p.ldb+q0:][:len(s0)]
				dc := d[q0*nr+c:]
				for q := range s0 {
					dq := (*[4]T)(dc[q*nr:])
					dq[0], dq[1], dq[2], dq[3] = s0[q], s1[q], s2[q], s3[q]
				}
			}
			for ; c < cols && q0 < kb; c++ {
				off := (jc+t+c)*p.ldb + pc
				src := p.b[off+q0 : off+kb]
				dc := d[q0*nr+c:]
				for q, v := range src {
					dc[q*nr] = v
				}
			}
			continue
		}
		off := pc*p.ldb + jc + t
		if cols == nr && kn.copyRows != nil {
			kn.copyRows(kb, d, p.b[off:off+(kb-1)*p.ldb+nr], p.ldb)
			continue
		}
		for q := 0; q < kb; q++ {
			copy(d[q*nr:q*nr+cols], p.b[off:off+cols])
			off += p.ldb
		}
	}
}

// macro multiplies the packed mb×kb block of A in buf.a by the packed kb×nb
// panel of B in buf.b into C at (ic, jc), tile by tile.
func (p *problem[T]) macro(buf *buffers[T], ic, mb, jc, nb, kb int, beta T) {
	kn := p.kern
	mr, nr := kn.mr, kn.nr
	ldc := p.ldc
	for t := 0; t < nb; t += nr {
		cols := min(nr, nb-t)
		b := buf.b[t*kb : t*kb+nr*kb]
		for s := 0; s < mb; s += mr {
			rows := min(mr, mb-s)
			a := buf.a[s*kb : s*kb+mr*kb]
			off := (ic+s)*ldc + jc + t
			if rows == mr && cols == nr {
				kn.tile(kb, a, b, p.c[off:off+(mr-1)*ldc+nr], ldc, p.alpha, beta)
				continue
			}
			if cols == nr && kn.edge != nil {
				kn.edge[rows](kb, a, b, p.c[off:off+(rows-1)*ldc+nr], ldc, p.alpha, beta)
				continue
			}
			kn.tile(kb, a, b, buf.tile, nr, 1, 0)
			store(buf.tile, nr, rows, cols, p.alpha, beta, p.c[off:], ldc)
		}
	}
}

// inPlaceStrips is the most strips of B in a panel for which the kernel
// reads A in place rather than packing it: packing a strip of A costs
// about as much as multiplying it by one or two strips of B, and reading
// six rows of A in place is about as fast as reading a packed strip. A
// transposed A is read in place only for a quarter as many strips: each
// step of the kernel then reads another row of A, lda apart, which costs
// a cache line and often a TLB entry of its own.
var inPlaceStrips = 16

// macroInPlace is macro for an unpacked block of A: rows [ic, ic+mb) and
// columns [pc, pc+kb) of op(A), read where they are by the strided
// kernel. A last strip of fewer than mr rows is read in place too by the
// kernel of its rows where the kernel has one (stridedEdge), else packed.
func (p *problem[T]) macroInPlace(buf *buffers[T], ic, mb, pc, jc, nb, kb int, beta T) {
	kn := p.kern
	mr, nr := kn.mr, kn.nr
	ldc := p.ldc
	rs, cs := p.lda, 1
	if p.transA {
		rs, cs = 1, p.lda
	}
	full := mb / mr * mr
	if full < mb && kn.stridedEdge == nil {
		p.packA(buf.a, ic+full, mb-full, pc, kb)
	}
	span := (mr-1)*rs + (kb-1)*cs + 1
	for t := 0; t < nb; t += nr {
		cols := min(nr, nb-t)
		b := buf.b[t*kb : t*kb+nr*kb]
		for s := 0; s < mb; s += mr {
			rows := min(mr, mb-s)
			off := (ic+s)*ldc + jc + t
			switch {
			case rows < mr && kn.stridedEdge != nil:
				// The last strip, read in place too by the kernel of its rows.
				ao := (ic+s)*rs + pc*cs
				a := p.a[ao : ao+(rows-1)*rs+(kb-1)*cs+1]
				if cols == nr {
					kn.stridedEdge[rows](kb, a, rs, cs, b, p.c[off:off+(rows-1)*ldc+nr], ldc, p.alpha, beta)
					continue
				}
				kn.stridedEdge[rows](kb, a, rs, cs, b, buf.tile, nr, 1, 0)
				store(buf.tile, nr, rows, cols, p.alpha, beta, p.c[off:], ldc)
				continue
			case rows < mr:
				kn.tile(kb, buf.a[:mr*kb], b, buf.tile, nr, 1, 0)
				store(buf.tile, nr, rows, cols, p.alpha, beta, p.c[off:], ldc)
				continue
			}
			ao := (ic+s)*rs + pc*cs
			a := p.a[ao : ao+span]
			if cols == nr {
				kn.strided(kb, a, rs, cs, b, p.c[off:off+(mr-1)*ldc+nr], ldc, p.alpha, beta)
				continue
			}
			kn.strided(kb, a, rs, cs, b, buf.tile, nr, 1, 0)
			store(buf.tile, nr, rows, cols, p.alpha, beta, p.c[off:], ldc)
		}
	}
}

// inPlaceBRows is the most rows of C for which the kernel reads an
// untransposed B in place rather than packing it (when A is not read in
// place): each strip of B is then read by at most six strips of A, which
// it serves from L1 as well as a packed one. Only for a leading dimension
// that is not a multiple of 64 elements: rows of B 256 bytes apart or a
// multiple of that crowd into a few sets of L1 and are evicted before the
// next strip of A reads them.
const inPlaceBRows = 32

// macroInPlaceB is macro for an unpacked panel of B: rows [pc, pc+kb) and
// columns [jc, jc+nb) of B, read where they are by the stridedB kernel.
// A last strip of fewer than nr columns is packed at the start of buf.b.
func (p *problem[T]) macroInPlaceB(buf *buffers[T], ic, mb, pc, jc, nb, kb int, beta T) {
	kn := p.kern
	mr, nr := kn.mr, kn.nr
	ldc, ldb := p.ldc, p.ldb
	span := (kb-1)*ldb + nr
	for t := 0; t < nb; t += nr {
		cols := min(nr, nb-t)
		bo := pc*ldb + jc + t
		for s := 0; s < mb; s += mr {
			rows := min(mr, mb-s)
			a := buf.a[s*kb : s*kb+mr*kb]
			off := (ic+s)*ldc + jc + t
			switch {
			case cols < nr:
				kn.tile(kb, a, buf.b[:nr*kb], buf.tile, nr, 1, 0)
			case rows == mr:
				kn.stridedB(kb, a, p.b[bo:bo+span], ldb, p.c[off:off+(mr-1)*ldc+nr], ldc, p.alpha, beta)
				continue
			case kn.stridedBEdge != nil:
				kn.stridedBEdge[rows](kb, a, p.b[bo:bo+span], ldb, p.c[off:off+(rows-1)*ldc+nr], ldc, p.alpha, beta)
				continue
			default:
				kn.stridedB(kb, a, p.b[bo:bo+span], ldb, buf.tile, nr, 1, 0)
			}
			store(buf.tile, nr, rows, cols, p.alpha, beta, p.c[off:], ldc)
		}
	}
}

// store writes the top-left rows×cols of tile (row-major, nr wide) into C:
// C = alpha·tile + beta·C, without reading C when beta is 0.
func store[T float32 | float64](tile []T, nr, rows, cols int, alpha, beta T, c []T, ldc int) {
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
// how many rows or columns each gets (a multiple of the micro-tile's mr
// rows or nr columns). Each task gets at least taskWork of m·n·k.
func split(m, n, k, procs, mr, nr, taskWork int) (tasks int, byRows bool, chunk int) {
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

// job is one parallel product: its rows (or columns) cut into ranges of
// chunk, one part of parallel.Run each.
type job[T float32 | float64] struct {
	p             problem[T]
	byRows        bool
	st            *state[T]
	extent, chunk int
}

// RunRange computes the ranges [lo, hi) of the product.
func (j *job[T]) RunRange(_, lo, hi int) {
	buf := j.st.bufs.Get()
	lo, hi = lo*j.chunk, min(hi*j.chunk, j.extent)
	if j.byRows {
		j.p.run(lo, hi, 0, j.p.n, buf)
	} else {
		j.p.run(0, j.p.m, lo, hi, buf)
	}
	j.st.bufs.Put(buf)
}

// state holds the free lists of one element type, which serve every
// kernel (buffers grow to what a kernel's blocking needs).
type state[T float32 | float64] struct {
	kern *kernel[T] // the micro-kernel Gemm uses
	bufs parallel.FreeList[buffers[T]]
	jobs parallel.FreeList[job[T]]
	dots parallel.FreeList[dotJob[T]]
}

var (
	state32 = &state[float32]{kern: &generic32}
	state64 = &state[float64]{kern: &generic64}
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
