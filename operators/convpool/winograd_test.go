package convpool

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// refConvGradX is the input gradient of a 2-D NCHW convolution of stride
// 1, dilation 1 and one group, written out directly: dX[c][y][x] = Σ over
// m and the kernel of W[m][c][i][j]·dY[m][y−i+pt][x−j+pl].
func refConvGradX(w, dy []float64, n, c, h, wd, m, kh, kw, pt, pl, oh, ow int) []float64 {
	dx := make([]float64, n*c*h*wd)
	for in := range n {
		for ch := range c {
			for y := range h {
				for x := range wd {
					var s float64
					for om := range m {
						for i := range kh {
							for j := range kw {
								r, q := y-i+pt, x-j+pl
								if r < 0 || r >= oh || q < 0 || q >= ow {
									continue
								}
								s += w[((om*c+ch)*kh+i)*kw+j] * dy[((in*m+om)*oh+r)*ow+q]
							}
						}
					}
					dx[((in*c+ch)*h+y)*wd+x] = s
				}
			}
		}
	}
	return dx
}

// refConvGradW is the filter and bias gradient of the same convolution:
// dW[m][c][i][j] = Σ over images and outputs of dY[m][y][x]·X[c][y+i−pt][x+j−pl],
// db[m] = Σ dY[m].
func refConvGradW(x, dy []float64, n, c, h, wd, m, kh, kw, pt, pl, oh, ow int) (dw, db []float64) {
	dw, db = make([]float64, m*c*kh*kw), make([]float64, m)
	for in := range n {
		for om := range m {
			for y := range oh {
				for q := range ow {
					g := dy[((in*m+om)*oh+y)*ow+q]
					db[om] += g
					for ch := range c {
						for i := range kh {
							for j := range kw {
								r, s := y+i-pt, q+j-pl
								if r < 0 || r >= h || s < 0 || s >= wd {
									continue
								}
								dw[((om*c+ch)*kh+i)*kw+j] += g * x[((in*c+ch)*h+r)*wd+s]
							}
						}
					}
				}
			}
		}
	}
	return dw, db
}

// winoCase is a convolution that takes the Winograd path.
type winoCase struct {
	n, c, m, h, w  int
	pt, pl, pb, pr int
}

func (wc winoCase) String() string {
	return fmt.Sprintf("n%d c%d m%d %dx%d pads %d,%d,%d,%d", wc.n, wc.c, wc.m, wc.h, wc.w, wc.pt, wc.pl, wc.pb, wc.pr)
}

func winoCases() []winoCase {
	return []winoCase{
		{2, 16, 16, 8, 8, 1, 1, 1, 1},
		{3, 16, 24, 7, 9, 1, 1, 1, 1},   // odd output sizes: tiles cut at the edges
		{17, 16, 16, 8, 8, 1, 1, 1, 1},  // a group of 16 images and one more
		{1, 33, 17, 5, 6, 0, 2, 2, 0},   // asymmetric pads; 33 channels, over two strips of 16
		{2, 20, 16, 3, 3, 2, 2, 2, 2},   // pad 2: a 5×5 output
		{1, 16, 16, 3, 4, 0, 0, 0, 0},   // no padding: a 1×2 output
		{2, 16, 20, 1, 1, 1, 1, 1, 1},   // a 1×1 image
		{1, 16, 16, 32, 32, 1, 1, 1, 1}, // 256 tiles in one image
		{1, 300, 16, 4, 4, 1, 1, 1, 1},  // 300 input channels: two k blocks of the product
		{2, 16, 16, 17, 21, 1, 2, 0, 1}, // rows of 11 tiles: eight in the AVX kernels, three not
		{3, 16, 16, 16, 35, 2, 1, 2, 1}, // odd left pad, 17 tiles a row
	}
}

func (wc winoCase) def(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	args = append(args, ai("kernel", 3), ais("pads", int64(wc.pt), int64(wc.pl), int64(wc.pb), int64(wc.pr)))
	return op(typ, in, out, args...)
}

func (wc winoCase) outSize() (int, int) { return wc.h + wc.pt + wc.pb - 2, wc.w + wc.pl + wc.pr - 2 }

// TestWinogradMatchesDirect runs convolutions that take the Winograd path
// forward and backward against direct reference sums: Y (with bias) and dX
// within 1e-11 in float64 and 1e-4 in float32 (relative to
// max(1, |want|); the transforms add and subtract tiles of inputs and
// products, which loses a few more bits than im2col's dot products), and
// dW and db likewise (dW summed over all images and outputs: within 1e-3
// in float32). It also checks that the cases
// do take the path, and that its result does not depend on the thread
// budget.
func TestWinogradMatchesDirect(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	defer func(old int) { winoBreakEven = old }(winoBreakEven)
	winoBreakEven = 8 // the path for these cases' 16 channels and up
	r := newRand(16)
	for _, wc := range winoCases() {
		oh, ow := wc.outSize()
		l := newLayer(convargs.NewWindow([]int{wc.h, wc.w}, []int{oh, ow}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{wc.pt, wc.pl}, []int{wc.pb, wc.pr}), convargs.NCHW, wc.c, wc.m, 1)
		if !l.wino {
			t.Fatalf("%v: does not take the Winograd path", wc)
		}
		x := randTensor(r, blob.Float64, wc.n, wc.c, wc.h, wc.w)
		w := randTensor(r, blob.Float64, wc.m, wc.c, 3, 3)
		b := randTensor(r, blob.Float64, wc.m)
		dy := randTensor(r, blob.Float64, wc.n, wc.m, oh, ow)
		wantY := blob.MustFromSlice(refConv2D(x.AsFloat64s(), w.AsFloat64s(), b.AsFloat64s(), wc.n, wc.c, wc.h, wc.w, wc.m, 3, 3, 1, 1, 1, 1, 1, wc.pt, wc.pl, oh, ow), wc.n, wc.m, oh, ow)
		wantDX := blob.MustFromSlice(refConvGradX(w.AsFloat64s(), dy.AsFloat64s(), wc.n, wc.c, wc.h, wc.w, wc.m, 3, 3, wc.pt, wc.pl, oh, ow), wc.n, wc.c, wc.h, wc.w)
		dw, db := refConvGradW(x.AsFloat64s(), dy.AsFloat64s(), wc.n, wc.c, wc.h, wc.w, wc.m, 3, 3, wc.pt, wc.pl, oh, ow)
		wantDW, wantDB := blob.MustFromSlice(dw, wc.m, wc.c, 3, 3), blob.MustFromSlice(db, wc.m)
		for _, dt := range []blob.DataType{blob.Float64, blob.Float32} {
			tol := 1e-11
			if dt == blob.Float32 {
				tol = 1e-4
			}
			in := []*blob.Tensor{as(x, dt), as(w, dt), as(b, dt)}
			y := optest.MustRunOp(t, wc.def("Conv", []string{"X", "W", "b"}, []string{"Y"}), in...)[0]
			checkTensor(t, fmt.Sprintf("%v %v Y", wc, dt), y, wantY, tol)
			grad := wc.def("ConvGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"})
			g := optest.MustRunOp(t, grad, as(x, dt), as(w, dt), as(dy, dt))
			checkTensor(t, fmt.Sprintf("%v %v dX", wc, dt), g[2], wantDX, tol)
			checkTensor(t, fmt.Sprintf("%v %v dW", wc, dt), g[0], wantDW, 10*tol)
			checkTensor(t, fmt.Sprintf("%v %v db", wc, dt), g[1], wantDB, tol)
			// Without dX: the same dW.
			g2 := optest.MustRunOp(t, wc.def("ConvGradient", []string{"X", "W", "dY"}, []string{"dW", "db"}), as(x, dt), as(w, dt), as(dy, dt))
			checkTensor(t, fmt.Sprintf("%v %v dW without dX", wc, dt), g2[0], g[0], 0)
			if dt == blob.Float32 {
				runtime.GOMAXPROCS(1)
				y1 := optest.MustRunOp(t, wc.def("Conv", []string{"X", "W", "b"}, []string{"Y"}), in...)[0]
				g1 := optest.MustRunOp(t, grad, as(x, dt), as(w, dt), as(dy, dt))
				runtime.GOMAXPROCS(3)
				checkTensor(t, fmt.Sprintf("%v Y, 1 thread against 3", wc), y1, y, 0)
				checkTensor(t, fmt.Sprintf("%v dX, 1 thread against 3", wc), g1[2], g[2], 0)
			}
		}
	}
}

// TestWinogradNumericGradient checks a convolution on the Winograd path
// against finite differences, in float64, for every input.
func TestWinogradNumericGradient(t *testing.T) {
	defer func(old int) { winoBreakEven = old }(winoBreakEven)
	winoBreakEven = 8
	r := newRand(17)
	f := blob.Float64
	wc := winoCase{2, 16, 16, 3, 5, 1, 0, 1, 2}
	def := wc.def("Conv", []string{"X", "W", "b"}, []string{"Y"})
	inputs := []*blob.Tensor{randTensor(r, f, wc.n, wc.c, wc.h, wc.w), randTensor(r, f, wc.m, wc.c, 3, 3), randTensor(r, f, wc.m)}
	for i := range inputs {
		cfg := optest.GradientCheck{Step: 1e-4, Threshold: 1e-5}
		if _, err := optest.CheckGradient(def, inputs, i, cfg); err != nil {
			t.Fatalf("d%s: %v", def.Input[i], err)
		}
	}
}

// TestWinogradRule checks which convolutions take the Winograd path.
func TestWinogradRule(t *testing.T) {
	win := func(h, w, k, s, d, pad int) convargs.Window {
		o := (h+2*pad-(d*(k-1)+1))/s + 1
		ow := (w+2*pad-(d*(k-1)+1))/s + 1
		return convargs.NewWindow([]int{h, w}, []int{o, ow}, []int{k, k}, []int{s, s}, []int{d, d}, []int{pad, pad}, []int{pad, pad})
	}
	for _, c := range []struct {
		name   string
		w      convargs.Window
		o      convargs.Order
		c, m   int
		groups int
		want   bool
	}{
		{"3x3 pad 1, 32 channels", win(32, 32, 3, 1, 1, 1), convargs.NCHW, 32, 32, 1, true},
		{"3x3 pad 0, 24 and 128", win(8, 8, 3, 1, 1, 0), convargs.NCHW, 24, 128, 1, true},
		{"16 channels", win(32, 32, 3, 1, 1, 1), convargs.NCHW, 16, 16, 1, false},
		{"16 and 128", win(8, 8, 3, 1, 1, 0), convargs.NCHW, 16, 128, 1, false},
		{"3 input channels", win(32, 32, 3, 1, 1, 1), convargs.NCHW, 3, 32, 1, false},
		{"8 output channels", win(32, 32, 3, 1, 1, 1), convargs.NCHW, 32, 8, 1, false},
		{"NHWC", win(32, 32, 3, 1, 1, 1), convargs.NHWC, 32, 32, 1, false},
		{"groups", win(32, 32, 3, 1, 1, 1), convargs.NCHW, 32, 32, 2, false},
		{"stride 2", win(32, 32, 3, 2, 1, 1), convargs.NCHW, 32, 32, 1, false},
		{"dilation 2", win(32, 32, 3, 1, 2, 1), convargs.NCHW, 32, 32, 1, false},
		{"5x5", win(12, 12, 5, 1, 1, 0), convargs.NCHW, 20, 50, 1, false},
		{"pad 3", win(8, 8, 3, 1, 1, 3), convargs.NCHW, 32, 32, 1, false},
		{"1-D", convargs.NewWindow([]int{9}, []int{7}, []int{3}, []int{1}, []int{1}, []int{0}, []int{0}), convargs.NCHW, 32, 32, 1, false},
	} {
		l := newLayer(c.w, c.o, c.c, c.m, c.groups)
		if l.wino != c.want {
			t.Errorf("%s: Winograd %v, want %v", c.name, l.wino, c.want)
		}
	}
}

// BenchmarkConvWinograd times the 3×3 convolutions of the convnet
// benchmark (batch 16 here, against its 128) and a few others, forward
// and gradient, on the Winograd path and on im2col with it turned off:
//
//	go test -run '^$' -bench ConvWinograd -cpu 1 ./operators/convpool/
func BenchmarkConvWinograd(b *testing.B) {
	for _, s := range []struct{ c, m, hw int }{{8, 8, 32}, {16, 16, 32}, {32, 32, 32}, {32, 64, 16}, {64, 64, 16}, {64, 128, 8}, {128, 128, 8}} {
		r := newRand(1)
		f := blob.Float32
		x, w, bias := randTensor(r, f, 16, s.c, s.hw, s.hw), randTensor(r, f, s.m, s.c, 3, 3), randTensor(r, f, s.m)
		dy := randTensor(r, f, 16, s.m, s.hw, s.hw)
		flops := float64(2 * 16 * s.c * s.m * 9 * s.hw * s.hw)
		fwd := op("Conv", []string{"X", "W", "b"}, []string{"Y"}, ai("kernel", 3), ai("pad", 1))
		grad := op("ConvGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}, ai("kernel", 3), ai("pad", 1))
		for _, path := range []string{"im2col", "winograd"} {
			name := fmt.Sprintf("%dx%dx%d/%s", s.c, s.m, s.hw, path)
			breakEven := 0
			if path == "im2col" {
				breakEven = 1 << 30
			}
			b.Run(name+"/fwd", func(b *testing.B) {
				defer func(old int) { winoBreakEven = old }(winoBreakEven)
				winoBreakEven = breakEven
				benchConv(b, fwd, flops, x, w, bias)
			})
			b.Run(name+"/grad", func(b *testing.B) {
				defer func(old int) { winoBreakEven = old }(winoBreakEven)
				winoBreakEven = breakEven
				benchConv(b, grad, 2*flops, x, w, dy)
			})
		}
	}
}

// TestWinoKernelsMatchGo checks the AVX transforms bit for bit against the
// Go code for one tile, eight tiles at a time, on random data with
// strides that are not multiples of eight.
func TestWinoKernelsMatchGo(t *testing.T) {
	if !hasWinoAVX {
		t.Skip("no AVX kernels in this build or on this CPU (the Go transforms run)")
	}
	r := newRand(18)
	rnd := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		return s
	}
	const ld, vl = 13, 37
	e, o := rnd(3*ld+9), rnd(3*ld+9)
	got, want := make([]float32, 15*vl+8), make([]float32, 15*vl+8)
	winoIn8S(e, o, ld, got, vl)
	for j := range 8 {
		winoInputTile(e[j:], o[j:], ld, want[j:], vl)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("winoIn8S: v[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	// Two rows of four tiles, the second 2·ld further.
	e, o = rnd(5*ld+5), rnd(5*ld+5)
	clear(got)
	clear(want)
	winoIn4x2S(e, o, ld, 2*ld, got, vl)
	for j := range 8 {
		at := j%4 + j/4*2*ld
		winoInputTile(e[at:], o[at:], ld, want[j:], vl)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("winoIn4x2S: v[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	m := rnd(15*vl + 8)
	for _, c := range []struct{ w, h, off int }{{16, 2, 8}, {8, 4, 16}} {
		p := &winoPlan{outW: c.w, outH: c.h}
		y := make([]float32, 32)
		winoOut8S(m, vl, 0.25, y, c.w, c.off)
		wantY := make([]float32, 32)
		for j := range 8 {
			x, r := 2*j, 0
			if c.off != 8 {
				x, r = 2*(j%4), 2*(j/4)
			}
			winoOutputTile(p, m[j:], vl, 0.25, wantY, x, r)
		}
		for i := range wantY {
			if y[i] != wantY[i] {
				t.Fatalf("winoOut8S (%d wide): y[%d] = %v, want %v", c.w, i, y[i], wantY[i])
			}
		}
	}
	if !hasWinoAVX2 {
		t.Skip("no AVX2 kernels on this CPU (the Go transforms run)")
	}
	plane := rnd(32)
	plane[3] = float32(math.Copysign(0, -1)) // −0 and +0 negate to different bits
	plane[16+5] = 0
	for _, c := range []struct{ w, h, off int }{{16, 2, 8}, {8, 4, 16}} {
		clear(got)
		clear(want)
		winoGrad8S(plane, c.w, c.off, got, vl)
		for j := range 8 {
			x, r := 2*j, 0
			if c.off != 8 {
				x, r = 2*(j%4), 2*(j/4)
			}
			winoGradTile(&winoPlan{outW: c.w, outH: c.h}, plane, x, r, want[j:], vl)
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("winoGrad8S (%d wide): y[%d] = %v, want %v", c.w, i, got[i], want[i])
			}
		}
	}
	src := rnd(37)
	for _, n := range []int{0, 1, 15, 16, 17, 36, 37} {
		a, b := make([]float32, (n+1)/2), make([]float32, n/2)
		deinterleave(src[:n], a, b)
		for i := range n {
			if g := [][]float32{a, b}[i%2][i/2]; g != src[i] {
				t.Fatalf("deinterleave of %d: element %d is %v, want %v", n, i, g, src[i])
			}
		}
	}
}
