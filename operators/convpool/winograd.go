package convpool

//go:generate go run -C ../kernels/gemm/asmgen . -out ../../../convpool/wino_amd64.s -stubs ../../../convpool/wino_amd64.go -pkg convpool

import (
	"unsafe"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"github.com/caffe2go/caffe2go/operators/kernels/gemm"
)

// Winograd's F(2×2, 3×3) computes a 3×3 convolution of stride 1 tile by
// tile: each 2×2 tile of output from the 4×4 tile of input under it, as
// Y = Aᵀ·[(G·g·Gᵀ) ⊙ (Bᵀ·d·B)]·A. Summed over the input channels, the
// element-wise product at each of the 16 positions ξ of the 4×4 transform
// is a matrix product, U_ξ (out × in channels) times V_ξ (in channels ×
// tiles), so a convolution becomes 16 GEMMs of 16/36 of im2col's
// multiply-adds, plus the transforms of the input tiles (written straight
// into the GEMM's packed-B layout, with no column buffer) and of the
// products (with the bias added on the way to Y).
//
// Conv takes it forward (X ∗ W), for its input gradient, which is the
// convolution of dY with the filter turned by 180° and its channel axes
// swapped, padded by 2 − pad, and for its filter gradient (winoDW). See
// winogradFits for when.

// winoBreakEven sets which convolutions take the Winograd path: those of
// c input and m output channels with c·m ≥ winoBreakEven·(c + m). The
// transforms cost about the same per channel and tile on either side, c +
// m of them per tile, while the products save 20 multiply-adds per tile
// of each of the c·m pairs of channels. Measured on the convnet
// benchmark's shapes (BenchmarkConvWinograd), 16 and 16 channels (c·m =
// 8·(c+m)) came out even, 32 and 32 (16·(c+m)) a quarter faster forward
// and backward, 64 and more a third.
var winoBreakEven = 16

// winoCols is the least number of tiles (times images) a forward product
// gets: images with few tiles are put side by side, so that each of the 16
// products has enough columns for the micro-kernel and each U_ξ is read
// once for several images.
const winoCols = 256

// winoPlan is the geometry of one Winograd convolution: in channels of
// inH×inW planes into out channels of outH×outW, the input padded by padT
// rows above and padL columns to the left (the rest of the padding is
// what the output size implies).
type winoPlan struct {
	in, out      int
	inH, inW     int
	outH, outW   int
	padT, padL   int
	tilesH       int // ⌈outH/2⌉
	tilesW       int // ⌈outW/2⌉
	tiles        int // tilesH·tilesW, per image
	padH, padW   int // the padded input plane: 2·tiles + 2 each way
	inLen, outSz int // elements of one input image and of one output plane
	// outP32 and outP64 are out rounded up to the GEMM's tile rows for
	// float32 and float64: U and the products have that many rows (the
	// rows past out zero in U), so that the products read U in place
	// without packing a last partial strip.
	outP32, outP64 int
}

// outP returns out rounded up to the GEMM's tile rows for T.
func outP[T blob.Float](p *winoPlan) int {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return p.outP32
	}
	return p.outP64
}

// winogradFits reports whether the convolution of l takes the Winograd
// path, forward and for the input gradient: NCHW, one group, a 2-D 3×3
// window (or 3-D with depth 1) of stride 1 and dilation 1, every pad at
// most 2 (the input gradient pads by 2 − pad), and enough channels
// (winoBreakEven).
func winogradFits(l *layer) bool {
	w := &l.win
	if l.order != convargs.NCHW || l.groups != 1 || l.c*l.m < winoBreakEven*(l.c+l.m) {
		return false
	}
	if w.In[0] != 1 || w.Out[0] != 1 || w.K[0] != 1 || w.Pad[0] != 0 {
		return false
	}
	for i := 1; i < 3; i++ {
		if w.K[i] != 3 || w.S[i] != 1 || w.D[i] != 1 || w.Pad[i] < 0 || w.Pad[i] > 2 || w.Out[i] < 1 {
			return false
		}
		if tail := w.Out[i] + 2 - w.In[i] - w.Pad[i]; tail < 0 || tail > 2 {
			return false
		}
	}
	return true
}

// winoForward is the plan of Conv's forward Winograd path: X (c channels)
// to Y (m channels).
func winoForward(l *layer) winoPlan {
	w := &l.win
	return newWinoPlan(l.c, l.m, w.In[1], w.In[2], w.Out[1], w.Out[2], w.Pad[1], w.Pad[2])
}

// winoBackward is the plan of the input gradient: dY (m channels) to dX
// (c channels), padded by 2 − pad.
func winoBackward(l *layer) winoPlan {
	w := &l.win
	return newWinoPlan(l.m, l.c, w.Out[1], w.Out[2], w.In[1], w.In[2], 2-w.Pad[1], 2-w.Pad[2])
}

func newWinoPlan(in, out, inH, inW, outH, outW, padT, padL int) winoPlan {
	p := winoPlan{in: in, out: out, inH: inH, inW: inW, outH: outH, outW: outW, padT: padT, padL: padL}
	p.outP32 = (out + gemm.TileRows[float32]() - 1) / gemm.TileRows[float32]() * gemm.TileRows[float32]()
	p.outP64 = (out + gemm.TileRows[float64]() - 1) / gemm.TileRows[float64]() * gemm.TileRows[float64]()
	p.tilesH, p.tilesW = (outH+1)/2, (outW+1)/2
	p.tiles = p.tilesH * p.tilesW
	p.padH, p.padW = 2*p.tilesH+2, 2*p.tilesW+2
	p.inLen, p.outSz = in*inH*inW, outH*outW
	return p
}

// advance returns the image, row and column of the tile step tiles after
// (img, ty, tx), step 1, or 8 or 16 within one row of tiles, or 8 over two
// rows of four.
func (p *winoPlan) advance(img, ty, tx, step int) (int, int, int) {
	if tx += step; tx >= p.tilesW {
		ty += tx / p.tilesW
		tx %= p.tilesW
		if ty >= p.tilesH {
			ty -= p.tilesH
			img++
		}
	}
	return img, ty, tx
}

// eightTiles returns how far apart in an output plane the two halves of
// the eight output tiles from tile (ty, tx), the t-th of n, lie when the
// eight-tile kernels can take them, else 0: 8 for eight whole tiles side
// by side, two output rows for two rows of four whole tiles.
func (p *winoPlan) eightTiles(tx, ty, t, n int) int {
	x, y := 2*tx, 2*ty
	switch {
	case t+8 > n || y+1 >= p.outH:
	case tx+8 <= p.tilesW && x+16 <= p.outW:
		return 8
	case p.tilesW == 4 && tx == 0 && p.outW == 8 && y+3 < p.outH:
		return 2 * p.outW
	}
	return 0
}

// filterLen is the number of elements of the transformed filter, 16
// matrices of outP × in, panelStride apart.
func filterLen[T blob.Float](p *winoPlan) int { return 16 * panelStride(outP[T](p)*p.in) }

// winoL2 is the bytes of one block of tiles' V and products together
// (see tileBlock): half of a 512 KiB L2.
const winoL2 = 256 << 10

// tileBlock is how many tiles winoRun transforms and multiplies at a time:
// as many, in whole strips of the GEMM's 16 columns, as keep the block's 16
// V_ξ and 16 products (16·(in + out) values per tile) in winoL2, at least
// one strip and at most all of nt.
func tileBlock[T blob.Float](p *winoPlan, nt int) int {
	var z T
	size := int(unsafe.Sizeof(z))
	tb := max(16, winoL2/(16*(p.in+p.out)*size)/16*16)
	return min(tb, nt)
}

// scratchLens returns the sizes of the scratch of one part running
// images images at a time: the packed V (16 of them) and the products (16
// matrices of out × tiles) of one block of tiles, and the padded input
// planes of the images.
func scratchLens[T blob.Float](p *winoPlan, images int) (v, o, pad int) {
	tb := tileBlock[T](p, images*p.tiles)
	return 16 * panelStride(gemm.PackedBLayout[T](p.in, tb).Len()), 16 * panelStride(outP[T](p)*tb), images * p.in * p.padH * p.padW
}

// panelStride is how far apart the 16 matrices of n elements each of U, V
// and the products are put: a cache line more than n rounded up to one.
// The transforms read or write the 16 at one offset at a time, and 16
// addresses a multiple of 4 KiB apart all fall in one set of L1, which
// holds 8: the padding moves each to the next set.
func panelStride(n int) int { return (n+15)/16*16 + 16 }

// transformFilter sets u to the 16 matrices U_ξ = (G·g·Gᵀ)_ξ, each outP ×
// in (rows past out zero) and panelStride apart, of the filter w
// [m][c][3][3]: for the forward plan (out = m) of g = w[o][i]; for the
// backward one (out = c) of g = w[i][o] turned by 180°.
func transformFilter[T blob.Float](p *winoPlan, backward bool, w, u []T) {
	n := panelStride(outP[T](p) * p.in)
	for xi := range 16 {
		clear(u[xi*n+p.out*p.in : xi*n+outP[T](p)*p.in])
	}
	var g [9]T
	for o := range p.out {
		for i := range p.in {
			if backward {
				src := w[(i*p.out+o)*9 : (i*p.out+o)*9+9]
				for k := range 9 {
					g[k] = src[8-k]
				}
			} else {
				copy(g[:], w[(o*p.in+i)*9:(o*p.in+i)*9+9])
			}
			// G·g: 4×3, rows g0, (g0+g1+g2)/2, (g0−g1+g2)/2, g2.
			var t [12]T
			for c := range 3 {
				g0, g1, g2 := g[c], g[3+c], g[6+c]
				t[c], t[3+c], t[6+c], t[9+c] = g0, (g0+g1+g2)/2, (g0-g1+g2)/2, g2
			}
			// (G·g)·Gᵀ: 4×4.
			off := o*p.in + i
			for r := range 4 {
				g0, g1, g2 := t[3*r], t[3*r+1], t[3*r+2]
				u[(4*r)*n+off] = g0
				u[(4*r+1)*n+off] = (g0 + g1 + g2) / 2
				u[(4*r+2)*n+off] = (g0 - g1 + g2) / 2
				u[(4*r+3)*n+off] = g2
			}
		}
	}
}

// winoRun computes images images of the convolution of plan p: out = the
// convolution of in (images·p.inLen values) with the transformed filter u
// (transformFilter), plus b[ch] on output channel ch when b is not nil, in
// images·p.out·p.outSz values. v, o and pad are scratch of scratchLens.
// The images' planes are padded once; then each block of tileBlock tiles
// (numbered by image, then row, then column) is transformed, multiplied
// and transformed back while its V and products are in L2.
func winoRun[T blob.Float](p *winoPlan, threads, images int, in, u, b, out, v, o, pad []T) {
	nt := images * p.tiles
	for i := range images * p.in {
		padPlane(p, in[i*p.inH*p.inW:(i+1)*p.inH*p.inW], pad[i*p.padH*p.padW:(i+1)*p.padH*p.padW])
	}
	tb := tileBlock[T](p, nt)
	op := outP[T](p)
	us := panelStride(op * p.in)
	for t0 := 0; t0 < nt; t0 += tb {
		n := min(tb, nt-t0)
		lay := gemm.PackedBLayout[T](p.in, n)
		vs, os := panelStride(lay.Len()), panelStride(op*n)
		winoInput(p, lay, vs, t0, pad, v[:16*vs])
		for xi := range 16 {
			gemm.MulPackedB(threads, op, n, p.in, 1, u[xi*us:xi*us+op*p.in], p.in, v[xi*vs:xi*vs+lay.Len()], 0, o[xi*os:xi*os+op*n], n)
		}
		winoOutput(p, os, t0, n, o[:16*os], b, out)
	}
}

// winoInput transforms the tiles [t0, t0+lay.N) of the padded planes pad
// (padPlane) into the 16 packed matrices V_ξ (in channels × tiles, laid
// out by lay, vl apart) in v: V_ξ[c][t−t0] = (Bᵀ·d·B)_ξ for the 4×4 tile d
// of channel c under output tile t. Sixteen tiles side by side in a row of
// tiles that start a strip of V go through winoIn16S where it runs (and
// the strips are a multiple of sixteen wide), eight that start a half
// strip through winoIn8S, and in rows of four tiles, eight from two rows
// through winoIn4x2S.
func winoInput[T blob.Float](p *winoPlan, lay gemm.PackedB, vl, t0 int, pad, v []T) {
	hw := p.tilesW + 1
	planeLen := p.padH * p.padW
	pad32, _ := any(pad).([]float32)
	v32, _ := any(v).([]float32)
	fast := hasWinoAVX && v32 != nil && lay.NR%8 == 0
	fast16 := hasWinoAVX512 && v32 != nil && lay.NR%16 == 0
	for c := range p.in {
		pc := c / lay.KC * lay.KC
		kb := min(lay.KC, lay.K-pc)
		row := pc*lay.NP + (c-pc)*lay.NR
		stripStep := lay.NR * kb
		js, sbase := 0, 0
		img, rest := t0/p.tiles, t0%p.tiles
		ty, tx := rest/p.tilesW, rest%p.tilesW
		for t := 0; t < lay.N; {
			off := (img*p.in+c)*planeLen + 2*ty*hw + tx
			step := 1
			switch {
			case fast16 && js%16 == 0 && tx+16 <= p.tilesW && t+16 <= lay.N:
				e := pad32[off : off+3*hw+17]
				o := pad32[off+p.padH*hw : off+p.padH*hw+3*hw+17]
				winoIn16S(e, o, hw, v32[row+sbase+js:row+sbase+js+15*vl+16], vl)
				step = 16
			case fast && js%8 == 0 && tx+8 <= p.tilesW && t+8 <= lay.N:
				e := pad32[off : off+3*hw+9]
				o := pad32[off+p.padH*hw : off+p.padH*hw+3*hw+9]
				winoIn8S(e, o, hw, v32[row+sbase+js:row+sbase+js+15*vl+8], vl)
				step = 8
			case fast && js%8 == 0 && p.tilesW == 4 && tx == 0 && ty+1 < p.tilesH && t+8 <= lay.N:
				// The next row of tiles starts two padded rows down.
				e := pad32[off : off+5*hw+5]
				o := pad32[off+p.padH*hw : off+p.padH*hw+5*hw+5]
				winoIn4x2S(e, o, hw, 2*hw, v32[row+sbase+js:row+sbase+js+15*vl+8], vl)
				step = 8
			default:
				winoInputTile(pad[off:], pad[off+p.padH*hw:], hw, v[row+sbase+js:], vl)
			}
			t += step
			if js += step; js == lay.NR {
				js = 0
				sbase += stripStep
			}
			img, ty, tx = p.advance(img, ty, tx, step)
		}
	}
}

// winoInputTile transforms one input tile: column k of row r of d is
// e[r·ld+k/2] for even k, o[r·ld+k/2] for odd k; element ξ of Bᵀ·d·B goes
// to v[ξ·vl].
func winoInputTile[T blob.Float](e, o []T, ld int, v []T, vl int) {
	r0e, r0o := e[0:2:2], o[0:2:2]
	r1e, r1o := e[ld:ld+2:ld+2], o[ld:ld+2:ld+2]
	r2e, r2o := e[2*ld:2*ld+2:2*ld+2], o[2*ld:2*ld+2:2*ld+2]
	r3e, r3o := e[3*ld:3*ld+2:3*ld+2], o[3*ld:3*ld+2:3*ld+2]
	// Bᵀ·d: rows d0−d2, d1+d2, d2−d1, d1−d3, per column.
	m00, m01, m02, m03 := r0e[0]-r2e[0], r0o[0]-r2o[0], r0e[1]-r2e[1], r0o[1]-r2o[1]
	m10, m11, m12, m13 := r1e[0]+r2e[0], r1o[0]+r2o[0], r1e[1]+r2e[1], r1o[1]+r2o[1]
	m20, m21, m22, m23 := r2e[0]-r1e[0], r2o[0]-r1o[0], r2e[1]-r1e[1], r2o[1]-r1o[1]
	m30, m31, m32, m33 := r1e[0]-r3e[0], r1o[0]-r3o[0], r1e[1]-r3e[1], r1o[1]-r3o[1]
	// (Bᵀ·d)·B: the same on each row's columns.
	v = v[:15*vl+1]
	v[0*vl], v[1*vl], v[2*vl], v[3*vl] = m00-m02, m01+m02, m02-m01, m01-m03
	v[4*vl], v[5*vl], v[6*vl], v[7*vl] = m10-m12, m11+m12, m12-m11, m11-m13
	v[8*vl], v[9*vl], v[10*vl], v[11*vl] = m20-m22, m21+m22, m22-m21, m21-m23
	v[12*vl], v[13*vl], v[14*vl], v[15*vl] = m30-m32, m31+m32, m32-m31, m31-m33
}

// padPlane copies an inH×inW plane into its padded form in pad: the
// padH×padW plane with the input at (padT, padL) and zeros around it,
// stored as two padH×(padW/2) planes, its even columns and then its odd
// ones, so that the columns a row of tiles reads at one position of their
// windows are consecutive.
func padPlane[T blob.Float](p *winoPlan, plane, pad []T) {
	hw := p.padW / 2
	even, odd := pad[:p.padH*hw], pad[p.padH*hw:2*p.padH*hw]
	clear(even[:p.padT*hw])
	clear(odd[:p.padT*hw])
	rows := min(p.inH, p.padH-p.padT)
	cols := min(p.inW, p.padW-p.padL)
	// Padded column x = sx + padL is column x/2 of the even or the odd
	// plane: the even columns of src go to a from column padL/2 on, the
	// odd ones to b from column (padL+1)/2 on.
	first, second := even, odd
	if p.padL%2 == 1 {
		first, second = odd, even
	}
	la, lb := p.padL/2, (p.padL+1)/2
	na, nb := (cols+1)/2, cols/2
	for y := range rows {
		src := plane[y*p.inW : y*p.inW+cols]
		r := (p.padT + y) * hw
		a, b := first[r:r+hw], second[r:r+hw]
		// A column or two of padding at each end: stores, where clear
		// would call memclr four times a row.
		zero(a[:la])
		zero(a[la+na:])
		zero(b[:lb])
		zero(b[lb+nb:])
		deinterleave(src, a[la:la+na], b[lb:lb+nb])
	}
	clear(even[(p.padT+rows)*hw:])
	clear(odd[(p.padT+rows)*hw:])
}

// zero sets the few elements of s to 0.
func zero[T blob.Float](s []T) {
	for i := 0; i < len(s); i++ {
		s[i] = 0
	}
}

// deinterleave sets a[i] = src[2i] and b[i] = src[2i+1], for len(a) =
// ⌈len(src)/2⌉ and len(b) = ⌊len(src)/2⌋, with deinterleaveS for whole
// blocks of 16 where it runs.
func deinterleave[T blob.Float](src, a, b []T) {
	i := 0
	if s32, ok := any(src).([]float32); ok && hasWinoAVX2 {
		if n := len(b) &^ 7; n > 0 {
			deinterleaveS(s32[:2*n], any(a).([]float32)[:n], any(b).([]float32)[:n])
			i = n
		}
	}
	src = src[2*i:]
	a, b = a[i:], b[i:]
	b = b[:len(src)/2]
	for j := range b {
		a[j], b[j] = src[2*j], src[2*j+1]
	}
	if len(a) > len(b) {
		a[len(b)] = src[len(src)-1]
	}
}

// winoOutput sets the outputs of the tiles [t0, t0+n) from the 16
// products in o (each out × n, ol apart): the 2×2 tile Aᵀ·M·A, plus the
// bias, cut at the plane's bottom and right edges. Sixteen whole tiles
// side by side in a row of tiles go through winoOut16S where it runs;
// eight side by side, or in two rows of four, through winoOut8S.
func winoOutput[T blob.Float](p *winoPlan, ol, t0, n int, o, b, out []T) {
	ow := p.outW
	o32, _ := any(o).([]float32)
	out32, _ := any(out).([]float32)
	fast := hasWinoAVX && o32 != nil
	fast16 := hasWinoAVX512 && o32 != nil
	for ch := range p.out {
		var bias T
		if b != nil {
			bias = b[ch]
		}
		img, rest := t0/p.tiles, t0%p.tiles
		ty, tx := rest/p.tilesW, rest%p.tilesW
		for t := 0; t < n; {
			plane := out[(img*p.out+ch)*p.outSz : (img*p.out+ch+1)*p.outSz]
			x, y := 2*tx, 2*ty
			step := 1
			if fast16 && t+16 <= n && y+1 < p.outH && tx+16 <= p.tilesW && x+32 <= p.outW {
				base := (img*p.out+ch)*p.outSz + y*ow + x
				winoOut16S(o32[ch*n+t:ch*n+t+15*ol+16], ol, float32(bias), out32[base:base+ow+32], ow)
				step = 16
			} else if off := p.eightTiles(tx, ty, t, n); fast && off > 0 {
				base := (img*p.out+ch)*p.outSz + y*ow + x
				winoOut8S(o32[ch*n+t:ch*n+t+15*ol+8], ol, float32(bias), out32[base:base+ow+off+8], ow, off)
				step = 8
			} else {
				winoOutputTile(p, o[ch*n+t:], ol, bias, plane, x, y)
			}
			t += step
			img, ty, tx = p.advance(img, ty, tx, step)
		}
	}
}

// winoOutputTile writes the 2×2 output tile at (y, x) of plane, Aᵀ·M·A
// plus bias for the product tile M whose element ξ is at mm[ξ·ol], cut at
// the plane's bottom and right edges.
func winoOutputTile[T blob.Float](p *winoPlan, mm []T, ol int, bias T, plane []T, x, y int) {
	ow := p.outW
	mm = mm[:15*ol+1]
	// Aᵀ·M: rows m0+m1+m2 and m1−m2−m3, per column.
	s0, d0 := mm[0*ol]+mm[4*ol]+mm[8*ol], mm[4*ol]-mm[8*ol]-mm[12*ol]
	s1, d1 := mm[1*ol]+mm[5*ol]+mm[9*ol], mm[5*ol]-mm[9*ol]-mm[13*ol]
	s2, d2 := mm[2*ol]+mm[6*ol]+mm[10*ol], mm[6*ol]-mm[10*ol]-mm[14*ol]
	s3, d3 := mm[3*ol]+mm[7*ol]+mm[11*ol], mm[7*ol]-mm[11*ol]-mm[15*ol]
	y00, y01 := s0+s1+s2+bias, s1-s2-s3+bias
	y10, y11 := d0+d1+d2+bias, d1-d2-d3+bias
	if x+1 < ow && y+1 < p.outH {
		r0 := plane[y*ow+x : y*ow+x+2 : y*ow+x+2]
		r1 := plane[(y+1)*ow+x : (y+1)*ow+x+2 : (y+1)*ow+x+2]
		r0[0], r0[1], r1[0], r1[1] = y00, y01, y10, y11
		return
	}
	plane[y*ow+x] = y00
	if x+1 < ow {
		plane[y*ow+x+1] = y01
	}
	if y+1 < p.outH {
		plane[(y+1)*ow+x] = y10
		if x+1 < ow {
			plane[(y+1)*ow+x+1] = y11
		}
	}
}

// The filter gradient is the adjoint of the forward map g ↦ Aᵀ·[(G·g·Gᵀ) ⊙
// V]·A, summed over the tiles: dg = Gᵀ·[(A·dY·Aᵀ) ⊙ V]·G, with V = Bᵀ·d·B the
// forward's input transform and dY the 2×2 output-gradient tile (zero
// past the output's edges, which the forward cut). Summed over the tiles
// and the channels, position ξ is a matrix product again: Z_ξ (out × in)
// += Y_ξ (out × tiles) · V_ξᵀ (tiles × in), deep in the tiles, accumulated
// over all the images of a part; its 16 Z_ξ go through Gᵀ·Z·G into the
// part's filter-gradient partial once, at the end.

// winoDWMax is the most bytes of the 16 V_ξ and Y_ξ of one block of tiles
// of the filter gradient: the block is the products' depth, so it is made
// deeper than the forward's (tileBlock) at the cost of leaving L2.
const winoDWMax = 1 << 20

// dwBlock is how many tiles winoDW transforms and multiplies at a time: as
// many, in multiples of 16, as keep the block's V and Yᵀ in winoDWMax, at
// least 16 and at most nt.
func dwBlock[T blob.Float](p *winoPlan, nt int) int {
	var z T
	size := int(unsafe.Sizeof(z))
	tb := max(16, winoDWMax/(16*(p.in+p.out)*size)/16*16)
	return min(tb, nt)
}

// dwScratchLens returns the sizes of the filter-gradient scratch of one
// part running images images at a time on the forward plan p: the 16 V_ξ
// and the 16 Y_ξ of a block, the 16 accumulators Z_ξ, and the padded
// input planes.
func dwScratchLens[T blob.Float](p *winoPlan, images int) (v, y, z, pad int) {
	tb := dwBlock[T](p, images*p.tiles)
	return 16 * panelStride(p.in*roundUp8(tb)), 16 * panelStride(p.out*tb), 16 * panelStride(p.in*p.out), images * p.in * p.padH * p.padW
}

func roundUp8(n int) int { return (n + 7) / 8 * 8 }

// winoDW adds to the accumulators z (16 matrices out × in, panelStride
// apart) the products of images images of the forward plan p: the input
// in and the output gradient dy. v, y and pad are scratch of
// dwScratchLens.
func winoDW[T blob.Float](p *winoPlan, threads, images int, in, dy, z, v, y, pad []T) {
	nt := images * p.tiles
	for i := range images * p.in {
		padPlane(p, in[i*p.inH*p.inW:(i+1)*p.inH*p.inW], pad[i*p.padH*p.padW:(i+1)*p.padH*p.padW])
	}
	tb := dwBlock[T](p, nt)
	zs := panelStride(p.in * p.out)
	for t0 := 0; t0 < nt; t0 += tb {
		n := min(tb, nt-t0)
		// V_ξ row-major, in × n with rows ld apart: a "packed" layout of
		// one strip as wide as the matrix.
		ld := roundUp8(n)
		lay := gemm.PackedB{K: p.in, N: n, NR: ld, KC: p.in, NP: ld}
		vs, ys := panelStride(p.in*ld), panelStride(p.out*n)
		winoInput(p, lay, vs, t0, pad, v[:16*vs])
		winoGradTiles(p, ys, t0, n, dy, y[:16*ys])
		for xi := range 16 {
			gemm.Gemm(threads, false, true, p.out, p.in, n, 1, y[xi*ys:xi*ys+p.out*n], n, v[xi*vs:xi*vs+p.in*ld], ld, 1, z[xi*zs:xi*zs+p.out*p.in], p.in)
		}
	}
}

// winoGradTiles sets y to the 16 matrices Y_ξ (out × n, yl apart) of the
// output-gradient tiles [t0, t0+n): Y_ξ[ch][t−t0] = (A·e·Aᵀ)_ξ for the 2×2
// tile e of channel ch of dy under tile t, zero past the edges. Sixteen
// whole tiles side by side in a row of tiles go through winoGrad16S where
// it runs; eight side by side, or in two rows of four, through winoGrad8S.
func winoGradTiles[T blob.Float](p *winoPlan, yl, t0, n int, dy, y []T) {
	ow := p.outW
	dy32, _ := any(dy).([]float32)
	y32, _ := any(y).([]float32)
	fast := hasWinoAVX2 && dy32 != nil
	fast16 := hasWinoAVX512 && dy32 != nil
	for ch := range p.out {
		img, rest := t0/p.tiles, t0%p.tiles
		ty, tx := rest/p.tilesW, rest%p.tilesW
		for t := 0; t < n; {
			base := (img*p.out + ch) * p.outSz
			plane := dy[base : base+p.outSz]
			x, r := 2*tx, 2*ty
			step := 1
			if fast16 && t+16 <= n && r+1 < p.outH && tx+16 <= p.tilesW && x+32 <= ow {
				at := base + r*ow + x
				winoGrad16S(dy32[at:at+ow+32], ow, y32[ch*n+t:ch*n+t+15*yl+16], yl)
				step = 16
			} else if off := p.eightTiles(tx, ty, t, n); fast && off > 0 {
				at := base + r*ow + x
				winoGrad8S(dy32[at:at+ow+off+8], ow, off, y32[ch*n+t:ch*n+t+15*yl+8], yl)
				step = 8
			} else {
				winoGradTile(p, plane, x, r, y[ch*n+t:], yl)
			}
			t += step
			img, ty, tx = p.advance(img, ty, tx, step)
		}
	}
}

// winoGradTile transforms the 2×2 tile e at (r, x) of the output-gradient
// plane (zero past its edges) into A·e·Aᵀ, element ξ to y[ξ·yl].
func winoGradTile[T blob.Float](p *winoPlan, plane []T, x, r int, y []T, yl int) {
	ow := p.outW
	var e00, e01, e10, e11 T
	if x+1 < ow && r+1 < p.outH {
		r0 := plane[r*ow+x : r*ow+x+2 : r*ow+x+2]
		r1 := plane[(r+1)*ow+x : (r+1)*ow+x+2 : (r+1)*ow+x+2]
		e00, e01, e10, e11 = r0[0], r0[1], r1[0], r1[1]
	} else {
		e00 = plane[r*ow+x]
		if x+1 < ow {
			e01 = plane[r*ow+x+1]
		}
		if r+1 < p.outH {
			e10 = plane[(r+1)*ow+x]
			if x+1 < ow {
				e11 = plane[(r+1)*ow+x+1]
			}
		}
	}
	// A·e: rows e0, e0+e1, e0−e1, −e1; then the same on columns.
	a0, a1 := e00, e01
	b0, b1 := e00+e10, e01+e11
	c0, c1 := e00-e10, e01-e11
	d0, d1 := -e10, -e11
	y = y[:15*yl+1]
	y[0*yl], y[1*yl], y[2*yl], y[3*yl] = a0, a0+a1, a0-a1, -a1
	y[4*yl], y[5*yl], y[6*yl], y[7*yl] = b0, b0+b1, b0-b1, -b1
	y[8*yl], y[9*yl], y[10*yl], y[11*yl] = c0, c0+c1, c0-c1, -c1
	y[12*yl], y[13*yl], y[14*yl], y[15*yl] = d0, d0+d1, d0-d1, -d1
}

// foldDW adds Gᵀ·Z·G of the accumulators z (16 matrices out × in,
// panelStride apart) to the filter-gradient partial dw of the forward plan
// p: [out][in][3][3], or its transpose [in][3][3][out] when transposed.
func foldDW[T blob.Float](p *winoPlan, z, dw []T, transposed bool) {
	zs := panelStride(p.in * p.out)
	for m := range p.out {
		for c := range p.in {
			zz := z[m*p.in+c:]
			zz = zz[:15*zs+1]
			// Gᵀ·Z: rows z0+(z1+z2)/2, (z1−z2)/2, (z1+z2)/2+z3, per column.
			var h [12]T
			for col := range 4 {
				z0, z1, z2, z3 := zz[col*zs], zz[(4+col)*zs], zz[(8+col)*zs], zz[(12+col)*zs]
				s := (z1 + z2) / 2
				h[col], h[4+col], h[8+col] = z0+s, (z1-z2)/2, s+z3
			}
			for r := range 3 {
				a, b, cc, d := h[4*r], h[4*r+1], h[4*r+2], h[4*r+3]
				s := (b + cc) / 2
				g := [3]T{a + s, (b - cc) / 2, s + d}
				for k, v := range g {
					if transposed {
						dw[((c*9)+3*r+k)*p.out+m] += v
					} else {
						dw[(m*p.in+c)*9+3*r+k] += v
					}
				}
			}
		}
	}
}
