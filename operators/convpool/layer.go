package convpool

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
	"github.com/caffe2go/caffe2go/operators/kernels/gemm"
)

// layer is the shape of a (transposed) convolution between an image side
// (what im2col reads: Conv's X, ConvTranspose's Y) with c channels and a
// column side (what the filter produces from the columns: Conv's Y,
// ConvTranspose's X) with m channels, both split into groups. The filter is
// [m, c/groups, k…] (NCHW) or [m, k…, c/groups] (NHWC): per group an
// (m/groups) × kdim matrix.
type layer struct {
	win     convargs.Window
	order   convargs.Order
	c, m    int
	groups  int
	kdim    int // (c/groups)·kSize: the filter row length
	imgLen  int // elements of one image-side image
	sideLen int // elements of one column-side image
	colLen  int // elements of one image's column buffer
	// dwT: accDW accumulates the transpose of the filter gradient (see
	// there).
	dwT bool
	// threads is the GEMM thread budget of one part of a batch (see
	// convBase.split).
	threads int
	// batch is how many images a batch job runs through one product
	// (runGroup); see setBatch.
	batch int
	// wino: the forward convolution and the input gradient take the
	// Winograd path (winogradFits), with the plans wf and wb.
	wino   bool
	wf, wb winoPlan
}

// fwdPad is how many columns past outSize the forward job's NCHW column
// rows are apart. Rows of 1024 columns (32×32 outputs) are 4 KiB apart and
// all fall in one set of L1, so that the GEMM had to pack them; padded,
// the GEMM reads them in place (its stridedB kernel, for products of at
// most 32 filters), which speeds up the convnet benchmark's
// 32→32-channel 32×32 forward.
const fwdPad = 16

// batchCols is the least number of columns (outSize times images) that
// setBatch gives a filter-gradient product.
const batchCols = 256

// setBatch sets l.batch for a job of kind over parts parts of n images.
// Convolution gradients (NCHW, not 1×1) of small outputs put several
// images' columns side by side: with 8×8 outputs each image's
// filter-gradient product is only 64 deep, so the micro-kernel loads and
// stores its partial of C, too large for L2 at 128 channels, every 64
// steps, and each image's input-gradient product reads all of W again.
// Four images at a time speed up the convnet benchmark's 128→128-channel
// 8×8 gradient. The forward product got slower that way and stays one
// image at a time.
func (l *layer) setBatch(kind jobKind, n, parts int) {
	l.batch = 1
	if (kind == convForward || kind == convBackward) && l.wino {
		l.batch = min((winoCols+l.wf.tiles-1)/l.wf.tiles, (n+parts-1)/parts)
		return
	}
	if kind == convBackward && l.order == convargs.NCHW && !l.win.OneByOne && l.win.OutSize < batchCols {
		l.batch = min((batchCols+l.win.OutSize-1)/l.win.OutSize, (n+parts-1)/parts)
	}
}

func newLayer(w convargs.Window, o convargs.Order, c, m, groups int) layer {
	l := layer{
		win: w, order: o, c: c, m: m, groups: groups,
		kdim:    c / groups * w.KSize,
		imgLen:  c * w.InSize,
		sideLen: m * w.OutSize,
		colLen:  c * w.KSize * w.OutSize,
		dwT:     o == convargs.NCHW && transposedFits(m/groups, c/groups*w.KSize),
	}
	if l.wino = winogradFits(&l); l.wino {
		l.wf, l.wb = winoForward(&l), winoBackward(&l)
	}
	return l
}

// transposedFits reports whether the filter-gradient product of a group of
// mg filters of kdim weights tiles the micro-kernel's 6×16 tiles with no
// more padding as kdim×mg (the transposed layout) than as mg×kdim. (LeNet's
// 50×500 is better as it is: 54×512 against 504×64.)
func transposedFits(mg, kdim int) bool {
	ru := func(x, unit int) int { return (x + unit - 1) / unit * unit }
	return ru(kdim, 6)*ru(mg, 16) <= ru(mg, 6)*ru(kdim, 16)
}

// im2col returns the columns of img: img itself for a 1×1 window, else col
// filled. NCHW columns have row stride ld (outSize, or more for a group of
// images side by side).
func im2col[T blob.Float](l *layer, img, col []T, ld int) []T {
	if l.win.OneByOne {
		return img
	}
	if l.order == convargs.NCHW {
		im2colNCHW(&l.win, l.c, img, col, ld)
		return col
	}
	col = col[:l.colLen]
	im2colNHWC(&l.win, l.c, l.groups, img, col)
	return col
}

// col2im sets img to the adjoint of im2col applied to col (of row stride
// ld, NCHW), which it may overwrite.
func col2im[T blob.Float](l *layer, col, img []T, ld int) {
	clear(img[:l.imgLen])
	if l.order == convargs.NCHW {
		col2imNCHW(&l.win, l.c, col, img, ld)
	} else {
		col2imNHWC(&l.win, l.c, l.groups, col, img)
	}
}

// mulW sets side = W·col, per group, plus b[ch] on channel ch when b is
// not nil: side starts as the broadcast bias and the product adds to it
// (beta 1). That saves a second pass over side adding the bias after the
// product. n is the number of columns of col and side (NCHW; NHWC: outSize
// rows), ldCol the row stride of NCHW columns.
func mulW[T blob.Float](l *layer, w, b, col []T, ldCol int, side []T, n int) {
	mg, k := l.m/l.groups, l.kdim
	beta := T(0)
	if b != nil {
		beta = 1
		fillBias(l.order, n, l.m, b, side)
	}
	for g := 0; g < l.groups; g++ {
		wg := w[g*mg*k:]
		if l.order == convargs.NCHW {
			gemm.Gemm(l.threads, false, false, mg, n, k, 1, wg, k, col[g*k*ldCol:], ldCol, beta, side[g*mg*n:], n)
		} else {
			gemm.Gemm(l.threads, false, true, n, mg, k, 1, col[g*k:], l.groups*k, wg, k, beta, side[g*mg:], l.m)
		}
	}
}

// fillBias sets every element of channel ch of one image of size positions
// and len(b) channels to b[ch]. NCHW planes are filled with vec.Fill,
// which copies a filled prefix instead of storing one element at a time,
// a gain for the convnet benchmark's forward convolutions, the
// 3→32-channel one most.
func fillBias[T blob.Float](o convargs.Order, size, channels int, b, img []T) {
	if o == convargs.NCHW {
		for ch, v := range b {
			vec.Fill(img[ch*size:(ch+1)*size], v)
		}
		return
	}
	for p := 0; p < size; p++ {
		copy(img[p*channels:(p+1)*channels], b)
	}
}

// mulWT sets col = Wᵀ·side, per group, for n columns (NCHW: outSize times
// the images of a group; NHWC: outSize rows). wt, when not nil, is the
// NCHW filter already transposed (transposeFilter), which the product
// reads like any untransposed matrix.
func mulWT[T blob.Float](l *layer, w, wt, side, col []T, n int) {
	mg, k := l.m/l.groups, l.kdim
	for g := 0; g < l.groups; g++ {
		wg := w[g*mg*k:]
		switch {
		case wt != nil:
			gemm.Gemm(l.threads, false, false, k, n, mg, 1, wt[g*mg*k:], mg, side[g*mg*n:], n, 0, col[g*k*n:], n)
		case l.order == convargs.NCHW:
			gemm.Gemm(l.threads, true, false, k, n, mg, 1, wg, k, side[g*mg*n:], n, 0, col[g*k*n:], n)
		default:
			gemm.Gemm(l.threads, false, false, n, k, mg, 1, side[g*mg:], l.m, wg, k, 0, col[g*k:], l.groups*k)
		}
	}
}

// transposeFilter sets wt, per group, to the transpose of the NCHW filter
// w: [groups][kdim][m/groups]. The input-gradient product of every image
// reads it, where reading W transposed made the GEMM pack it again for
// each image (or each group of images); untransposed it is read in place
// when the product is narrow.
func transposeFilter[T blob.Float](l *layer, w, wt []T) {
	mg, k := l.m/l.groups, l.kdim
	for g := 0; g < l.groups; g++ {
		src, dst := w[g*mg*k:(g+1)*mg*k], wt[g*mg*k:(g+1)*mg*k]
		for r := 0; r < mg; r++ {
			for q, v := range src[r*k : (r+1)*k] {
				dst[q*mg+r] = v
			}
		}
	}
}

// accDW adds side·colᵀ to dw, per group. With l.dwT (NCHW only) it adds
// the transpose, col·sideᵀ, to a [groups][kdim][m/groups] partial that
// addTransposed folds into the filter gradient. That product reads the
// column buffer (the large operand: kdim×outSize against the m/groups ×
// outSize of side) in place, where side·colᵀ had to transpose it while
// packing; and its tiles fit: kdim is a multiple of the kernel's 6 rows
// when the kernel size is 3×3, m/groups usually one of its 16 columns.
// n is the number of columns (see mulWT).
func accDW[T blob.Float](l *layer, side, col, dw []T, n int) {
	mg, k := l.m/l.groups, l.kdim
	for g := 0; g < l.groups; g++ {
		dg := dw[g*mg*k:]
		switch {
		case l.dwT:
			gemm.Gemm(l.threads, false, true, k, mg, n, 1, col[g*k*n:], n, side[g*mg*n:], n, 1, dg, mg)
		case l.order == convargs.NCHW:
			gemm.Gemm(l.threads, false, true, mg, k, n, 1, side[g*mg*n:], n, col[g*k*n:], n, 1, dg, k)
		default:
			gemm.Gemm(l.threads, true, false, mg, k, n, 1, side[g*mg:], l.m, col[g*k:], l.groups*k, 1, dg, k)
		}
	}
}

// biasGrad sets db to the sum of dy over images and positions, per channel
// (dy holds NHWC images of channels channels and size positions each). NCHW
// bias gradients are summed by the batch job instead (planeSums and
// foldSums).
func biasGradNHWC[T blob.Float](images, channels, size int, dy, db []T) {
	clear(db)
	for p := 0; p < images*size; p++ {
		for ch, v := range dy[p*channels : (p+1)*channels] {
			db[ch] += v
		}
	}
}

// planeSums sets sums[ch] to the sum of plane ch of one NCHW image of size
// positions per plane (len(sums) planes). The batch job calls it on each
// image right after its products, while the image is still in cache and on
// every part's core: as one serial pass over the whole gradient after the
// job it took a visible share of the convnet benchmark's step. A plane is
// summed in T with four partial sums (vec.Sum): a plane of a few thousand
// values loses nothing that matters in T, and the four chains run in
// parallel where one float64 conversion and add per value ran in series.
func planeSums[T blob.Float](img []T, size int, sums []T) {
	for ch := range sums {
		sums[ch] = vec.Sum(img[ch*size : (ch+1)*size])
	}
}

// foldSums sets db[ch] to the sum over images of sums[n·len(db)+ch] (the
// planeSums of images images), in float64 and in image order, so the result
// does not depend on how the batch was split.
func foldSums[T blob.Float](images int, sums, db []T) {
	for ch := range db {
		var s float64
		for n := 0; n < images; n++ {
			s += float64(sums[n*len(db)+ch])
		}
		db[ch] = T(s)
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
// batch, split by images into parts (package operators/internal/parallel).
// Each part has its own column buffer and, for gradients, its own
// filter-gradient partial sum (part 0 writes the output directly).
type batchJob[T blob.Float] struct {
	kind        jobKind
	l           *layer
	img, side   []T
	w, b        []T
	dimg, dside []T
	wt          []T // see mulWT
	// wu is the transformed filter of the Winograd path, wv, wo and wpad
	// each part's scratch for it (see winoRun); dz, dv, dy and dpad are
	// each part's accumulators and scratch of the filter gradient (winoDW).
	wu               []T
	wv, wo, wpad     [][]T
	dz, dv, dy, dpad [][]T
	cols             [][]T
	sides            [][]T
	dw               [][]T
	// sums, when not nil, receives the planeSums of each image of the
	// bias-gradient source (NCHW only): side for convBackward, img for
	// transBackward.
	sums []T
	// done is the run's cancellation (Base.Context): once it is closed
	// the parts start no further images, and the operator returns the
	// context's error.
	done <-chan struct{}
}

// RunRange runs the images [lo, hi) with part's scratch, l.batch images at
// a time.
func (j *batchJob[T]) RunRange(part, lo, hi int) {
	l := j.l
	for n := lo; n < hi; n += l.batch {
		select {
		case <-j.done:
			return
		default:
		}
		switch g := min(l.batch, hi-n); {
		case j.kind == convForward && l.wino:
			j.winoRun(&l.wf, part, g, j.img[n*l.imgLen:(n+g)*l.imgLen], j.b, j.side[n*l.sideLen:(n+g)*l.sideLen])
		case j.kind == convBackward && l.wino:
			j.winoBackward(part, n, g)
		case g > 1:
			j.runGroup(part, n, g)
		default:
			j.runImage(part, n)
		}
	}
	if j.kind == convBackward && l.wino {
		foldDW(&l.wf, j.dz[part], j.dw[part], l.dwT)
	}
}

// winoBackward runs the g images from n0 of a convBackward job on the
// Winograd path: their input gradient (winoRun on the plan wb), their
// products for the filter gradient (winoDW, into part's accumulators,
// which RunRange folds into the part's partial at its end) and their
// bias-gradient sums.
func (j *batchJob[T]) winoBackward(part, n0, g int) {
	l := j.l
	dy := j.side[n0*l.sideLen : (n0+g)*l.sideLen]
	if j.dimg != nil {
		j.winoRun(&l.wb, part, g, dy, nil, j.dimg[n0*l.imgLen:(n0+g)*l.imgLen])
	}
	winoDW(&l.wf, l.threads, g, j.img[n0*l.imgLen:(n0+g)*l.imgLen], dy, j.dz[part], j.dv[part], j.dy[part], j.dpad[part])
	if j.sums != nil {
		for n := n0; n < n0+g; n++ {
			planeSums(j.side[n*l.sideLen:(n+1)*l.sideLen], l.win.OutSize, j.sums[n*l.m:(n+1)*l.m])
		}
	}
}

// runImage runs image n with part's scratch.
func (j *batchJob[T]) runImage(part, n int) {
	l := j.l
	col, size := j.cols[part], l.win.OutSize
	img := j.img[n*l.imgLen : (n+1)*l.imgLen]
	side := j.side[n*l.sideLen : (n+1)*l.sideLen]
	switch j.kind {
	case convForward:
		ld := size
		if !l.win.OneByOne && l.order == convargs.NCHW {
			ld = size + fwdPad
		}
		mulW(l, j.w, j.b, im2col(l, img, col, ld), ld, side, size)
	case convBackward:
		accDW(l, side, im2col(l, img, col, size), j.dw[part], size)
		if j.dimg != nil {
			dimg := j.dimg[n*l.imgLen : (n+1)*l.imgLen]
			if l.wino {
				j.winoRun(&l.wb, part, 1, side, nil, dimg)
				break
			}
			if l.win.OneByOne {
				mulWT(l, j.w, j.wt, side, dimg, size)
			} else {
				mulWT(l, j.w, j.wt, side, col, size)
				col2im(l, col, dimg, size)
			}
		}
	case transForward:
		if l.win.OneByOne {
			mulWT(l, j.w, nil, side, img, size)
		} else {
			mulWT(l, j.w, nil, side, col, size)
			col2im(l, col, img, size)
		}
		if j.b != nil {
			addBiasImage(l, j.b, img)
		}
	case transBackward:
		c := im2col(l, img, col, size)
		accDW(l, side, c, j.dw[part], size)
		if j.dside != nil {
			mulW(l, j.w, nil, c, size, j.dside[n*l.sideLen:(n+1)*l.sideLen], size)
		}
	}
	if j.sums != nil {
		if j.kind == convBackward {
			planeSums(side, size, j.sums[n*l.m:(n+1)*l.m])
		} else {
			planeSums(img, l.win.InSize, j.sums[n*l.c:(n+1)*l.c])
		}
	}
}

// runGroup runs the g images from n0 of a convBackward job (NCHW, not
// 1×1) with one product per group of channels for them all: their columns
// lie side by side in part's column buffer, and their gradients dY in
// part's side buffer, [m][g·outSize]. See layer.setBatch for why.
func (j *batchJob[T]) runGroup(part, n0, g int) {
	l := j.l
	size := l.win.OutSize
	cols := g * size
	col, side := j.cols[part], j.sides[part]
	for i := range g {
		n := n0 + i
		im2colNCHW(&l.win, l.c, j.img[n*l.imgLen:(n+1)*l.imgLen], col[i*size:], cols)
		dy := j.side[n*l.sideLen : (n+1)*l.sideLen]
		for ch := range l.m {
			copy(side[(ch*g+i)*size:(ch*g+i+1)*size], dy[ch*size:(ch+1)*size])
		}
		if j.sums != nil {
			planeSums(dy, size, j.sums[n*l.m:(n+1)*l.m])
		}
	}
	accDW(l, side, col, j.dw[part], cols)
	if j.dimg != nil && l.wino {
		j.winoRun(&l.wb, part, g, j.side[n0*l.sideLen:(n0+g)*l.sideLen], nil, j.dimg[n0*l.imgLen:(n0+g)*l.imgLen])
	} else if j.dimg != nil {
		mulWT(l, j.w, j.wt, side, col, cols)
		for i := range g {
			n := n0 + i
			col2im(l, col[i*size:], j.dimg[n*l.imgLen:(n+1)*l.imgLen], cols)
		}
	}
}

// winoRun runs images images of the Winograd plan p from in to out (plus
// b, when not nil) with part's scratch.
func (j *batchJob[T]) winoRun(p *winoPlan, part, images int, in, b, out []T) {
	winoRun(p, j.l.threads, images, in, j.wu, b, out, j.wv[part], j.wo[part], j.wpad[part])
}

// addBiasImage adds b[ch] to channel ch of one image-side image.
func addBiasImage[T blob.Float](l *layer, b, img []T) {
	n := l.win.InSize
	if l.order == convargs.NCHW {
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

// scratch holds the per-part buffers of one element type.
type scratch[T blob.Float] struct {
	wu               []T
	wv, wo, wpad     [][]T
	dz, dv, dy, dpad [][]T
	wt               []T
	cols             [][]T
	sides            [][]T
	dw               [][]T
	sums             []T
	job              batchJob[T]
}

// prepare sizes the column buffers (none for a 1×1 window) of l.batch
// images (or of one with fwdPad more columns), the gradient buffers of runGroup when l.batch > 1 and, with
// filterLen > 0, the filter-gradient partials of parts from…parts−1,
// zeroed.
func (s *scratch[T]) prepare(l *layer, parts, from, filterLen int, needCols bool) {
	s.cols = grow(s.cols, parts)
	for i := range s.cols {
		if needCols && !l.win.OneByOne {
			s.cols[i] = grow(s.cols[i], l.batch*l.colLen+l.kdim*l.groups*fwdPad)
		}
	}
	if l.batch > 1 {
		s.sides = grow(s.sides, parts)
		for i := range s.sides {
			s.sides[i] = grow(s.sides[i], l.batch*l.sideLen)
		}
	}
	if filterLen > 0 {
		s.dw = grow(s.dw, parts)
		for i := from; i < parts; i++ {
			s.dw[i] = grow(s.dw[i], filterLen)
			clear(s.dw[i])
		}
	}
}

// prepareWino sizes the Winograd scratch of parts parts running plan p
// on l.batch images at a time, and sets s.wu to w's transformed filter
// (backward: the input gradient's).
func (s *scratch[T]) prepareWino(l *layer, p *winoPlan, parts int, backward bool, w []T) {
	s.wu = grow(s.wu, filterLen[T](p))
	transformFilter(p, backward, w, s.wu)
	v, o, pad := scratchLens[T](p, l.batch)
	s.wv, s.wo, s.wpad = grow(s.wv, parts), grow(s.wo, parts), grow(s.wpad, parts)
	for i := range parts {
		s.wv[i], s.wo[i], s.wpad[i] = grow(s.wv[i], v), grow(s.wo[i], o), grow(s.wpad[i], pad)
	}
}

// prepareWinoDW sizes the filter-gradient scratch of the Winograd path for
// parts parts running l.batch images at a time, its accumulators zeroed.
func (s *scratch[T]) prepareWinoDW(l *layer, parts int) {
	v, y, z, pad := dwScratchLens[T](&l.wf, l.batch)
	s.dz, s.dv, s.dy, s.dpad = grow(s.dz, parts), grow(s.dv, parts), grow(s.dy, parts), grow(s.dpad, parts)
	for i := range parts {
		s.dz[i], s.dv[i], s.dy[i], s.dpad[i] = grow(s.dz[i], z), grow(s.dv[i], v), grow(s.dy[i], y), grow(s.dpad[i], pad)
		clear(s.dz[i])
	}
}

// sumPartials adds the filter-gradient partials of parts from…parts−1
// into dw.
func (s *scratch[T]) sumPartials(from, parts int, dw []T) {
	for i := from; i < parts; i++ {
		for j, v := range s.dw[i][:len(dw)] {
			dw[j] += v
		}
	}
}

// addTransposed adds the [groups][kdim][m/groups] partials of parts
// 0…parts−1 (accDW's NCHW layout) into the filter gradient dw
// [groups][m/groups][kdim].
func (s *scratch[T]) addTransposed(l *layer, parts int, dw []T) {
	mg, k := l.m/l.groups, l.kdim
	for g := 0; g < l.groups; g++ {
		for i := 0; i < parts; i++ {
			src := s.dw[i][g*k*mg : (g+1)*k*mg]
			dst := dw[g*mg*k : (g+1)*mg*k]
			for q := 0; q < k; q++ {
				for r, v := range src[q*mg : (q+1)*mg] {
					dst[r*k+q] += v
				}
			}
		}
	}
}
