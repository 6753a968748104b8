package convpool

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

// The column buffer of one image holds, for every output position, the
// input values its window sees (zero where the window lies in the padding).
//
// NCHW: a (C·kSize) × outSize matrix; row (c, kd, kh, kw) holds, for every
// output position, the input of channel c at that kernel offset. The rows of
// group g are rows g·(C/G)·kSize onwards, matching a filter [M, C/G, k…].
// The NCHW functions take the matrix's row stride ld (outSize or more), so
// that the columns of several images can lie side by side in one buffer.
//
// NHWC: an outSize × (C·kSize) matrix; the row of an output position holds,
// for each group g, for each kernel offset (kd, kh, kw), the C/G channels of
// that group, matching a filter [M, k…, C/G].

// rowRange returns the output columns [lo, hi) of a row of n outputs whose
// input column x·stride + off lies in [0, size).
func rowRange(n, stride, off, size int) (lo, hi int) {
	if off < 0 {
		lo = (-off + stride - 1) / stride
	}
	if size-off > 0 {
		hi = (size - off + stride - 1) / stride
	}
	lo, hi = min(lo, n), min(hi, n)
	return lo, max(lo, hi)
}

// shiftable reports whether every row of an NCHW column buffer is its
// input plane shifted by a constant offset, with the positions that fall in
// the padding zeroed: a 2-D window of stride 1 whose output rows are as
// wide as the input rows (a "same" convolution, such as 3×3 with pad 1).
// im2colShift and col2imShift then move each row with one contiguous copy
// or add instead of one per output row, which for 32-wide rows (or 8-wide,
// in the small layers) is several times faster.
func shiftable(w *convargs.Window) bool {
	return w.In[0] == 1 && w.Out[0] == 1 && w.K[0] == 1 && w.S[1] == 1 && w.S[2] == 1 && w.Out[2] == w.In[2]
}

// span returns, for the kernel offset (kh, kw) of a shiftable window w, the
// offset of the input plane that the column row holds (input index =
// output index + shift), the output positions [a, b) that the row's one
// contiguous copy covers (empty when none is in the input), and the output
// columns [lo, hi) that lie in the input: the others, within [a, b), are
// the ones the copy wraps across row ends.
func span(w *convargs.Window, kh, kw int) (shift, a, b, lo, hi int) {
	offH, offW := kh*w.D[1]-w.Pad[1], kw*w.D[2]-w.Pad[2]
	rlo, rhi := rowRange(w.Out[1], 1, offH, w.In[1])
	lo, hi = rowRange(w.Out[2], 1, offW, w.In[2])
	shift = offH*w.In[2] + offW
	if rlo >= rhi || lo >= hi {
		return shift, 0, 0, lo, hi
	}
	ow := w.Out[2]
	return shift, rlo*ow + lo, (rhi-1)*ow + hi, lo, hi
}

// im2colShift is im2colNCHW for a shiftable window: per row of col, one
// copy of the rows of the plane it sees, then zeros over the padding
// (whole rows above and below, and the columns that the copy wrapped
// across row ends).
func im2colShift[T blob.Float](w *convargs.Window, c int, img, col []T, ld int) {
	ow, n := w.Out[2], w.OutSize
	i := 0
	for ch := 0; ch < c; ch++ {
		plane := img[ch*w.InSize : (ch+1)*w.InSize]
		for kh := 0; kh < w.K[1]; kh++ {
			for kw := 0; kw < w.K[2]; kw++ {
				dst := col[i : i+n]
				i += ld
				shift, a, b, lo, hi := span(w, kh, kw)
				if a == b {
					clear(dst)
					continue
				}
				copy(dst[a:b], plane[a+shift:b+shift])
				clear(dst[:a])
				clear(dst[b:])
				zeroEdges(dst, ow, a, b, lo, hi)
			}
		}
	}
}

// col2imShift is col2imNCHW for a shiftable window. It zeroes the entries
// of col that lie in the padding, so that each row of col is added to its
// plane with one contiguous vector add: col is scratch to its callers.
func col2imShift[T blob.Float](w *convargs.Window, c int, col, img []T, ld int) {
	ow, n := w.Out[2], w.OutSize
	i := 0
	for ch := 0; ch < c; ch++ {
		plane := img[ch*w.InSize : (ch+1)*w.InSize]
		for kh := 0; kh < w.K[1]; kh++ {
			for kw := 0; kw < w.K[2]; kw++ {
				src := col[i : i+n]
				i += ld
				shift, a, b, lo, hi := span(w, kh, kw)
				if a == b {
					continue
				}
				zeroEdges(src, ow, a, b, lo, hi)
				vec.Add(plane[a+shift:b+shift], src[a:b])
			}
		}
	}
}

// zeroEdges zeroes, among the positions [a, b) of a row of col, those in
// the output columns [0, lo) and [hi, ow). There are only a few such
// columns (one on each side for a 3×3 window with pad 1), so it walks down
// them with stride ow: a clear of each row's edge, a call to memclr per
// element, took a third of im2colShift's time.
func zeroEdges[T blob.Float](col []T, ow, a, b, lo, hi int) {
	col = col[:b]
	for x := 0; x < ow; x++ {
		if x == lo {
			x = hi
			if x >= ow {
				break
			}
		}
		i := a - a%ow + x
		if i < a {
			i += ow
		}
		for ; i < b; i += ow {
			col[i] = 0
		}
	}
}

// im2colNCHW fills col, of row stride ld, from the c channels of one
// image.
func im2colNCHW[T blob.Float](w *convargs.Window, c int, img, col []T, ld int) {
	if shiftable(w) {
		im2colShift(w, c, img, col, ld)
	} else {
		im2colRows(w, c, img, col, ld)
	}
}

// im2colRows is im2colNCHW for any window, one output row at a time.
func im2colRows[T blob.Float](w *convargs.Window, c int, img, col []T, ld int) {
	id, ih, iw := w.In[0], w.In[1], w.In[2]
	od, oh, ow := w.Out[0], w.Out[1], w.Out[2]
	row := 0
	for ch := 0; ch < c; ch++ {
		plane := img[ch*w.InSize : (ch+1)*w.InSize]
		for kd := 0; kd < w.K[0]; kd++ {
			offD := kd*w.D[0] - w.Pad[0]
			for kh := 0; kh < w.K[1]; kh++ {
				offH := kh*w.D[1] - w.Pad[1]
				for kw := 0; kw < w.K[2]; kw++ {
					offW := kw*w.D[2] - w.Pad[2]
					i := row * ld
					row++
					lo, hi := rowRange(ow, w.S[2], offW, iw)
					for y := 0; y < od; y++ {
						z := y*w.S[0] + offD
						if z < 0 || z >= id {
							clear(col[i : i+oh*ow])
							i += oh * ow
							continue
						}
						for r := 0; r < oh; r++ {
							h := r*w.S[1] + offH
							dst := col[i : i+ow]
							i += ow
							if h < 0 || h >= ih {
								clear(dst)
								continue
							}
							row := plane[(z*ih+h)*iw : (z*ih+h+1)*iw]
							clear(dst[:lo])
							clear(dst[hi:])
							if s := w.S[2]; s == 1 {
								copy(dst[lo:hi], row[lo+offW:hi+offW])
							} else {
								for x := lo; x < hi; x++ {
									dst[x] = row[x*s+offW]
								}
							}
						}
					}
				}
			}
		}
	}
}

// col2imNCHW adds col, of row stride ld, back into the c channels of one
// image (the adjoint of im2colNCHW); img must be zeroed by the caller. It
// may overwrite col.
func col2imNCHW[T blob.Float](w *convargs.Window, c int, col, img []T, ld int) {
	if shiftable(w) {
		col2imShift(w, c, col, img, ld)
	} else {
		col2imRows(w, c, col, img, ld)
	}
}

// col2imRows is col2imNCHW for any window, one output row at a time.
func col2imRows[T blob.Float](w *convargs.Window, c int, col, img []T, ld int) {
	id, ih, iw := w.In[0], w.In[1], w.In[2]
	od, oh, ow := w.Out[0], w.Out[1], w.Out[2]
	row := 0
	for ch := 0; ch < c; ch++ {
		plane := img[ch*w.InSize : (ch+1)*w.InSize]
		for kd := 0; kd < w.K[0]; kd++ {
			offD := kd*w.D[0] - w.Pad[0]
			for kh := 0; kh < w.K[1]; kh++ {
				offH := kh*w.D[1] - w.Pad[1]
				for kw := 0; kw < w.K[2]; kw++ {
					offW := kw*w.D[2] - w.Pad[2]
					i := row * ld
					row++
					lo, hi := rowRange(ow, w.S[2], offW, iw)
					for y := 0; y < od; y++ {
						z := y*w.S[0] + offD
						if z < 0 || z >= id {
							i += oh * ow
							continue
						}
						for r := 0; r < oh; r++ {
							h := r*w.S[1] + offH
							src := col[i : i+ow]
							i += ow
							if h < 0 || h >= ih {
								continue
							}
							row := plane[(z*ih+h)*iw : (z*ih+h+1)*iw]
							if s := w.S[2]; s == 1 {
								dst := row[lo+offW : hi+offW]
								for x, v := range src[lo:hi] {
									dst[x] += v
								}
							} else {
								for x := lo; x < hi; x++ {
									row[x*s+offW] += src[x]
								}
							}
						}
					}
				}
			}
		}
	}
}

// im2colNHWC fills col from one image of c channels in g groups.
func im2colNHWC[T blob.Float](w *convargs.Window, c, g int, img, col []T) {
	id, ih, iw := w.In[0], w.In[1], w.In[2]
	cg := c / g
	i := 0
	for y := 0; y < w.Out[0]; y++ {
		for r := 0; r < w.Out[1]; r++ {
			for x := 0; x < w.Out[2]; x++ {
				for grp := 0; grp < g; grp++ {
					for kd := 0; kd < w.K[0]; kd++ {
						z := y*w.S[0] - w.Pad[0] + kd*w.D[0]
						for kh := 0; kh < w.K[1]; kh++ {
							h := r*w.S[1] - w.Pad[1] + kh*w.D[1]
							for kw := 0; kw < w.K[2]; kw++ {
								v := x*w.S[2] - w.Pad[2] + kw*w.D[2]
								dst := col[i : i+cg]
								i += cg
								if z < 0 || z >= id || h < 0 || h >= ih || v < 0 || v >= iw {
									clear(dst)
									continue
								}
								p := ((z*ih+h)*iw+v)*c + grp*cg
								copy(dst, img[p:p+cg])
							}
						}
					}
				}
			}
		}
	}
}

// col2imNHWC adds col back into one image (the adjoint of im2colNHWC); img
// must be zeroed by the caller.
func col2imNHWC[T blob.Float](w *convargs.Window, c, g int, col, img []T) {
	id, ih, iw := w.In[0], w.In[1], w.In[2]
	cg := c / g
	i := 0
	for y := 0; y < w.Out[0]; y++ {
		for r := 0; r < w.Out[1]; r++ {
			for x := 0; x < w.Out[2]; x++ {
				for grp := 0; grp < g; grp++ {
					for kd := 0; kd < w.K[0]; kd++ {
						z := y*w.S[0] - w.Pad[0] + kd*w.D[0]
						for kh := 0; kh < w.K[1]; kh++ {
							h := r*w.S[1] - w.Pad[1] + kh*w.D[1]
							for kw := 0; kw < w.K[2]; kw++ {
								v := x*w.S[2] - w.Pad[2] + kw*w.D[2]
								src := col[i : i+cg]
								i += cg
								if z < 0 || z >= id || h < 0 || h >= ih || v < 0 || v >= iw {
									continue
								}
								p := ((z*ih+h)*iw+v)*c + grp*cg
								dst := img[p : p+cg]
								for j, s := range src {
									dst[j] += s
								}
							}
						}
					}
				}
			}
		}
	}
}
