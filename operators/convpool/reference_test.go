package convpool

import (
	"fmt"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"math"
	"runtime"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// refConv2D is a direct 2-D convolution of NCHW x [n, c, h, w] with filter
// [m, c/g, kh, kw] and bias b (nil for none), output oh×ow.
func refConv2D(x, wt, b []float64, n, c, h, w, m, kh, kw, g, sh, sw, dh, dw, pt, pl, oh, ow int) []float64 {
	y := make([]float64, n*m*oh*ow)
	cg, mg := c/g, m/g
	for in := 0; in < n; in++ {
		for om := 0; om < m; om++ {
			grp := om / mg
			for r := 0; r < oh; r++ {
				for q := 0; q < ow; q++ {
					var s float64
					if b != nil {
						s = b[om]
					}
					for ci := 0; ci < cg; ci++ {
						ch := grp*cg + ci
						for i := 0; i < kh; i++ {
							for j := 0; j < kw; j++ {
								hh, ww := r*sh-pt+i*dh, q*sw-pl+j*dw
								if hh < 0 || hh >= h || ww < 0 || ww >= w {
									continue
								}
								s += x[((in*c+ch)*h+hh)*w+ww] * wt[((om*cg+ci)*kh+i)*kw+j]
							}
						}
					}
					y[((in*m+om)*oh+r)*ow+q] = s
				}
			}
		}
	}
	return y
}

// refPool2D pools NCHW x [n, c, h, w] into oh×ow with windows clipped to
// the input.
func refPool2D(x []float64, n, c, h, w, kh, kw, sh, sw, pt, pl, oh, ow int, isMax, countPad bool) []float64 {
	y := make([]float64, n*c*oh*ow)
	for p := 0; p < n*c; p++ {
		for r := 0; r < oh; r++ {
			for q := 0; q < ow; q++ {
				best, sum, cnt := math.Inf(-1), 0.0, 0
				for i := 0; i < kh; i++ {
					for j := 0; j < kw; j++ {
						hh, ww := r*sh-pt+i, q*sw-pl+j
						if hh < 0 || hh >= h || ww < 0 || ww >= w {
							continue
						}
						v := x[(p*h+hh)*w+ww]
						best = math.Max(best, v)
						sum += v
						cnt++
					}
				}
				// An empty window (Caffe's ceil mode without padding can put
				// the last one past the input) gives the lowest finite value
				// or 0.
				switch {
				case isMax && cnt == 0:
					y[(p*oh+r)*ow+q] = -math.MaxFloat64
				case isMax:
					y[(p*oh+r)*ow+q] = best
				case cnt == 0:
					y[(p*oh+r)*ow+q] = 0
				case countPad:
					y[(p*oh+r)*ow+q] = sum / float64(kh*kw)
				default:
					y[(p*oh+r)*ow+q] = sum / float64(cnt)
				}
			}
		}
	}
	return y
}

// TestRandomConfigurations compares Conv and the pools, NCHW and NHWC, with
// direct references on random configurations with explicit pads (and
// Caffe's pooling sizes), and checks the output size rule for explicit pads.
func TestRandomConfigurations(t *testing.T) {
	r := newRand(11)
	f := blob.Float64
	for it := 0; it < 150; it++ {
		n, g := 1+r.IntN(3), 1+r.IntN(3)
		c, m := g*(1+r.IntN(3)), g*(1+r.IntN(3))
		h, w := 3+r.IntN(8), 3+r.IntN(8)
		kh, kw := 1+r.IntN(4), 1+r.IntN(4)
		sh, sw := 1+r.IntN(3), 1+r.IntN(3)
		dh, dw := 1+r.IntN(2), 1+r.IntN(2)
		pt, pl, pb, pr := r.IntN(kh), r.IntN(kw), r.IntN(kh), r.IntN(kw)
		pads := ais("pads", int64(pt), int64(pl), int64(pb), int64(pr))
		kernels, strides := ais("kernels", int64(kh), int64(kw)), ais("strides", int64(sh), int64(sw))
		x := randTensor(r, f, n, c, h, w)
		name := fmt.Sprintf("%d: x %v k %dx%d s %dx%d d %dx%d pads %d,%d,%d,%d g %d", it, x.Dims(), kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, g)

		// Conv.
		oh := (h+pt+pb-(dh*(kh-1)+1))/sh + 1
		ow := (w+pl+pr-(dw*(kw-1)+1))/sw + 1
		wt, b := randTensor(r, f, m, c/g, kh, kw), randTensor(r, f, m)
		if oh > 0 && ow > 0 && h+pt+pb >= dh*(kh-1)+1 && w+pl+pr >= dw*(kw-1)+1 {
			want := refConv2D(x.AsFloat64s(), wt.AsFloat64s(), b.AsFloat64s(), n, c, h, w, m, kh, kw, g, sh, sw, dh, dw, pt, pl, oh, ow)
			for _, order := range []string{"NCHW", "NHWC"} {
				def := op("Conv", []string{"X", "W", "b"}, []string{"Y"}, kernels, strides, pads, ais("dilations", int64(dh), int64(dw)), ai("group", int64(g)), astr("order", order))
				in := []*blob.Tensor{x, wt, b}
				if order == "NHWC" {
					in = []*blob.Tensor{toNHWC(x), toNHWC(wt), b}
				}
				y := optest.MustRunOp(t, def, in...)[0]
				if order == "NHWC" {
					y = toNCHW(y)
				}
				checkTensor(t, name+" Conv "+order, y, blob.MustFromSlice(want, n, m, oh, ow), 1e-12)
			}
		}

		// Pools: explicit pads, and Caffe's ceil-mode sizes with symmetric pads.
		for _, legacy := range []bool{false, true} {
			args := []*netdef.Argument{kernels, strides, pads}
			poh := (h+pt+pb-kh)/sh + 1
			pow := (w+pl+pr-kw)/sw + 1
			if legacy {
				if h+2*pt < kh || w+2*pl < kw {
					continue // no output
				}
				args = []*netdef.Argument{kernels, strides, ais("pads", int64(pt), int64(pl), int64(pt), int64(pl)), ai("legacy_pad", convargs.PadCaffeLegacyPool)}
				poh, pow = -1, -1 // from the operator; the rule has its own table test
			} else if h+pt+pb < kh || w+pl+pr < kw {
				continue // an error, tested elsewhere
			}
			for _, typ := range []string{"MaxPool", "AveragePool"} {
				for _, countPad := range []bool{false, true} {
					if typ == "MaxPool" && countPad {
						continue
					}
					for _, order := range []string{"NCHW", "NHWC"} {
						def := op(typ, []string{"X"}, []string{"Y"}, append(args, astr("order", order), ai("count_include_pad", map[bool]int64{false: 0, true: 1}[countPad]))...)
						in := x
						if order == "NHWC" {
							in = toNHWC(x)
						}
						y := optest.MustRunOp(t, def, in)[0]
						if order == "NHWC" {
							y = toNCHW(y)
						}
						yh, yw := y.Dim(2), y.Dim(3)
						if poh >= 0 && (yh != poh || yw != pow) {
							t.Fatalf("%s %s: output %v, want %d×%d", name, typ, y.Dims(), poh, pow)
						}
						want := refPool2D(x.AsFloat64s(), n, c, h, w, kh, kw, sh, sw, pt, pl, yh, yw, typ == "MaxPool", countPad)
						checkTensor(t, fmt.Sprintf("%s %s %s legacy=%v countPad=%v", name, typ, order, legacy, countPad), y, blob.MustFromSlice(want, n, c, yh, yw), 1e-12)
					}
				}
			}
		}
	}
}

// TestParallelMatchesSerial runs batches large enough to be split across
// workers and checks that the results (including the filter gradients summed
// from per-worker partials) equal a run on one worker.
func TestParallelMatchesSerial(t *testing.T) {
	r := newRand(3)
	f := blob.Float64
	x, wt, b := randTensor(r, f, 6, 8, 14, 13), randTensor(r, f, 6, 4, 3, 3), randTensor(r, f, 6)
	conv := op("Conv", []string{"X", "W", "b"}, []string{"Y"}, ai("kernel", 3), ai("pad", 1), ai("stride", 1), ai("group", 2))
	ct := op("ConvTranspose", []string{"X", "W", "b"}, []string{"Y"}, ai("kernel", 3), ai("stride", 2), ai("pad", 1))
	xt, wtt, bt := randTensor(r, f, 6, 8, 9, 9), randTensor(r, f, 8, 5, 3, 3), randTensor(r, f, 5)
	pool := op("MaxPool", []string{"X"}, []string{"Y"}, ai("kernel", 3), ai("stride", 2), astr("order", "NHWC"))
	avg := op("AveragePool", []string{"X"}, []string{"Y"}, ai("kernel", 2), ai("stride", 1))
	run := func(procs int) [][]float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var out [][]float64
		for _, c := range []struct {
			def *netdef.OperatorDef
			in  []*blob.Tensor
		}{{conv, []*blob.Tensor{x, wt, b}}, {ct, []*blob.Tensor{xt, wtt, bt}}, {pool, []*blob.Tensor{x}}, {avg, []*blob.Tensor{x}}} {
			dy := randTensor(newRand(5), f, optest.MustRunOp(t, c.def, c.in...)[0].Dims()...)
			y, grads := runGrad(t, c.def, c.in, dy)
			out = append(out, y.AsFloat64s())
			for _, g := range grads {
				out = append(out, g.AsFloat64s())
			}
		}
		return out
	}
	serial, par := run(1), run(4)
	for i := range serial {
		optest.CheckClose(t, fmt.Sprintf("result %d", i), par[i], serial[i], 1e-12)
	}
}
