package convpool

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators/kernels/gemm"
)

// layer is the shape of a (transposed) convolution between an image side
// (what im2col reads: Conv's X, ConvTranspose's Y) with c channels and a
// column side (what the filter produces from the columns: Conv's Y,
// ConvTranspose's X) with m channels, both split into groups. The filter is
// [m, c/groups, k…] (NCHW) or [m, k…, c/groups] (NHWC): per group an
// (m/groups) × kdim matrix.
type layer struct {
	win     window
	order   order
	c, m    int
	groups  int
	kdim    int // (c/groups)·kSize: the filter row length
	imgLen  int // elements of one image-side image
	sideLen int // elements of one column-side image
	colLen  int // elements of one image's column buffer
}

func newLayer(w window, o order, c, m, groups int) layer {
	return layer{
		win: w, order: o, c: c, m: m, groups: groups,
		kdim:    c / groups * w.kSize,
		imgLen:  c * w.inSize,
		sideLen: m * w.outSize,
		colLen:  c * w.kSize * w.outSize,
	}
}

// im2col returns the columns of img: img itself for a 1×1 window, else col
// filled.
func im2col[T blob.Float](l *layer, img, col []T) []T {
	if l.win.oneByOne {
		return img
	}
	col = col[:l.colLen]
	if l.order == nchw {
		im2colNCHW(&l.win, l.c, img, col)
	} else {
		im2colNHWC(&l.win, l.c, l.groups, img, col)
	}
	return col
}

// col2im sets img to the adjoint of im2col applied to col.
func col2im[T blob.Float](l *layer, col, img []T) {
	clear(img[:l.imgLen])
	if l.order == nchw {
		col2imNCHW(&l.win, l.c, col, img)
	} else {
		col2imNHWC(&l.win, l.c, l.groups, col, img)
	}
}

// mulW sets side = W·col, per group.
func mulW[T blob.Float](l *layer, w, col, side []T) {
	mg, k, n := l.m/l.groups, l.kdim, l.win.outSize
	for g := 0; g < l.groups; g++ {
		wg := w[g*mg*k:]
		if l.order == nchw {
			gemm.Gemm(false, false, mg, n, k, 1, wg, k, col[g*k*n:], n, 0, side[g*mg*n:], n)
		} else {
			gemm.Gemm(false, true, n, mg, k, 1, col[g*k:], l.groups*k, wg, k, 0, side[g*mg:], l.m)
		}
	}
}

// mulWT sets col = Wᵀ·side, per group.
func mulWT[T blob.Float](l *layer, w, side, col []T) {
	mg, k, n := l.m/l.groups, l.kdim, l.win.outSize
	for g := 0; g < l.groups; g++ {
		wg := w[g*mg*k:]
		if l.order == nchw {
			gemm.Gemm(true, false, k, n, mg, 1, wg, k, side[g*mg*n:], n, 0, col[g*k*n:], n)
		} else {
			gemm.Gemm(false, false, n, k, mg, 1, side[g*mg:], l.m, wg, k, 0, col[g*k:], l.groups*k)
		}
	}
}

// accDW adds side·colᵀ to dw, per group.
func accDW[T blob.Float](l *layer, side, col, dw []T) {
	mg, k, n := l.m/l.groups, l.kdim, l.win.outSize
	for g := 0; g < l.groups; g++ {
		dg := dw[g*mg*k:]
		if l.order == nchw {
			gemm.Gemm(false, true, mg, k, n, 1, side[g*mg*n:], n, col[g*k*n:], n, 1, dg, k)
		} else {
			gemm.Gemm(true, false, mg, k, n, 1, side[g*mg:], l.m, col[g*k:], l.groups*k, 1, dg, k)
		}
	}
}

// addBias adds b[ch] to every element of channel ch of one column-side
// image.
func addBias[T blob.Float](l *layer, b, side []T) {
	n := l.win.outSize
	if l.order == nchw {
		for ch, v := range b {
			row := side[ch*n : (ch+1)*n]
			for i := range row {
				row[i] += v
			}
		}
		return
	}
	for p := 0; p < n; p++ {
		row := side[p*l.m : (p+1)*l.m]
		for ch, v := range b {
			row[ch] += v
		}
	}
}

// biasGrad sets db to the sum of dy over images and positions, per channel
// (dy holds images of channels channels and size positions each).
func biasGrad[T blob.Float](o order, images, channels, size int, dy, db []T) {
	if o == nchw {
		for ch := range db {
			var s float64
			for n := 0; n < images; n++ {
				for _, v := range dy[(n*channels+ch)*size : (n*channels+ch+1)*size] {
					s += float64(v)
				}
			}
			db[ch] = T(s)
		}
		return
	}
	clear(db)
	for p := 0; p < images*size; p++ {
		for ch, v := range dy[p*channels : (p+1)*channels] {
			db[ch] += v
		}
	}
}

// jobKind is what a batch job computes per image.
type jobKind int

const (
	convForward   jobKind = iota // side = W·im2col(img) + b
	convBackward                 // dW += side·im2col(img)ᵀ; dimg = col2im(Wᵀ·side)
	transForward                 // img = col2im(Wᵀ·side) + b
	transBackward                // dW += side·im2col(img)ᵀ; dside = W·im2col(img)
)

// batchJob is one run of a (transposed) convolution or its gradient over a
// batch, split by images across workers. Each worker has its own column
// buffer and, for gradients, its own filter-gradient partial sum (worker 0
// writes the output directly).
type batchJob[T blob.Float] struct {
	kind        jobKind
	l           *layer
	img, side   []T
	w, b        []T
	dimg, dside []T
	cols        [][]T
	dw          [][]T
}

func (j *batchJob[T]) runRange(worker, lo, hi int) {
	l := j.l
	col := j.cols[worker]
	for n := lo; n < hi; n++ {
		img := j.img[n*l.imgLen : (n+1)*l.imgLen]
		side := j.side[n*l.sideLen : (n+1)*l.sideLen]
		switch j.kind {
		case convForward:
			mulW(l, j.w, im2col(l, img, col), side)
			if j.b != nil {
				addBias(l, j.b, side)
			}
		case convBackward:
			accDW(l, side, im2col(l, img, col), j.dw[worker])
			if j.dimg != nil {
				dimg := j.dimg[n*l.imgLen : (n+1)*l.imgLen]
				if l.win.oneByOne {
					mulWT(l, j.w, side, dimg)
				} else {
					mulWT(l, j.w, side, col)
					col2im(l, col, dimg)
				}
			}
		case transForward:
			if l.win.oneByOne {
				mulWT(l, j.w, side, img)
			} else {
				mulWT(l, j.w, side, col)
				col2im(l, col, img)
			}
			if j.b != nil {
				addBiasImage(l, j.b, img)
			}
		case transBackward:
			c := im2col(l, img, col)
			accDW(l, side, c, j.dw[worker])
			if j.dside != nil {
				mulW(l, j.w, c, j.dside[n*l.sideLen:(n+1)*l.sideLen])
			}
		}
	}
}

// addBiasImage adds b[ch] to channel ch of one image-side image.
func addBiasImage[T blob.Float](l *layer, b, img []T) {
	n := l.win.inSize
	if l.order == nchw {
		for ch, v := range b {
			row := img[ch*n : (ch+1)*n]
			for i := range row {
				row[i] += v
			}
		}
		return
	}
	for p := 0; p < n; p++ {
		row := img[p*l.c : (p+1)*l.c]
		for ch, v := range b {
			row[ch] += v
		}
	}
}

// grow returns s with length n, reusing its storage when it is large
// enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// scratch holds the per-worker buffers of one element type.
type scratch[T blob.Float] struct {
	cols [][]T
	dw   [][]T
	job  batchJob[T]
}

// prepare sizes the column buffers (none for a 1×1 window) and, with
// filterLen > 0, the filter-gradient partials of workers 1…parts−1, zeroed.
func (s *scratch[T]) prepare(l *layer, parts, filterLen int) {
	s.cols = grow(s.cols, parts)
	for i := range s.cols {
		if !l.win.oneByOne {
			s.cols[i] = grow(s.cols[i], l.colLen)
		}
	}
	if filterLen > 0 {
		s.dw = grow(s.dw, parts)
		for i := 1; i < parts; i++ {
			s.dw[i] = grow(s.dw[i], filterLen)
			clear(s.dw[i])
		}
	}
}

// sumPartials adds the filter-gradient partials of workers 1…parts−1 into
// dw.
func (s *scratch[T]) sumPartials(parts int, dw []T) {
	for i := 1; i < parts; i++ {
		for j, v := range s.dw[i][:len(dw)] {
			dw[j] += v
		}
	}
}
