package quant

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// env runs operators on int8 and float blobs.
type env struct {
	t *testing.T
	w *optest.Workspace
}

func newEnv(t *testing.T) *env { return &env{t: t, w: optest.NewWorkspace()} }

func (e *env) feed(name string, v any) { e.w.CreateBlob(name).Set(v) }

func (e *env) run(def *netdef.OperatorDef) {
	e.t.Helper()
	if err := e.w.Run(def); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) q(name string) *Int8Tensor {
	e.t.Helper()
	q, ok := e.w.Blobs[name].Get().(*Int8Tensor)
	if !ok {
		e.t.Fatalf("%q holds %s", name, e.w.Blobs[name].TypeName())
	}
	return q
}

func op(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(typ, in, out, args...)
}

func yq(scale float32, zero int) []*netdef.Argument {
	return []*netdef.Argument{netdef.ArgFloat("Y_scale", scale), netdef.ArgInt("Y_zero_point", int64(zero))}
}

func with(args []*netdef.Argument, more ...*netdef.Argument) []*netdef.Argument {
	return append(append([]*netdef.Argument{}, args...), more...)
}

// setq is the setq of Caffe2's int8_test.cc: codes of real values.
func setq(scale float32, zero int32, vs []float32, shape ...int) *Int8Tensor {
	codes := make([]uint8, len(vs))
	for i, v := range vs {
		codes[i] = uint8(math.RoundToEven(float64(float32(zero) + v/scale)))
	}
	q, _ := NewInt8Tensor(codes, scale, zero, shape...)
	return q
}

// biasq is the biassetq of int8_test.cc: INT32 codes with zero point 0.
func biasq(scale float32, vs []float32) *Int8Tensor {
	codes := make([]int32, len(vs))
	for i, v := range vs {
		codes[i] = int32(math.RoundToEven(float64(v / scale)))
	}
	return &Int8Tensor{T: blob.MustFromSlice(codes), Scale: scale}
}

// TestCaffe2Int8Vectors runs the cases of Caffe2's int8_test.cc whose
// expected codes it states (TFLite's test vectors): Conv, Conv2 and FC.
func TestCaffe2Int8Vectors(t *testing.T) {
	cases := []struct {
		name    string
		x, w    *Int8Tensor
		bias    []float32
		typ     string
		args    []*netdef.Argument
		want    []uint8
		outDims []int
	}{
		{"Conv", setq(0.5, 127, []float32{1, 1, 1, 1, 2, 2, 2, 2, 1, 2, 3, 4, 1, 2, 3, 4}, 2, 2, 4, 1),
			setq(0.5, 127, []float32{1, 2, 3, 4, -1, 1, -1, 1, -1, -1, 1, 1}, 3, 2, 2, 1), []float32{1, 2, 3}, "Int8Conv",
			[]*netdef.Argument{netdef.ArgInt("kernel", 2), netdef.ArgString("order", "NHWC"), netdef.ArgInt("stride", 2)},
			[]uint8{145, 129, 132, 145, 129, 132, 144, 131, 130, 164, 131, 130}, []int{2, 1, 2, 3}},
		{"Conv2", setq(0.5, 127, []float32{3, 2, 1, -1, -2, -3, 4, 3, 2, -2, -3, -4, 5, 4, 3, -3, -4, -5}, 1, 3, 6, 1),
			setq(0.5, 127, []float32{1, 2, 3, 4}, 1, 2, 2, 1), []float32{-1}, "Int8Conv",
			[]*netdef.Argument{netdef.ArgInt("kernel", 2), netdef.ArgString("order", "NHWC"), netdef.ArgInt("stride_w", 3), netdef.ArgInt("stride_h", 1)},
			[]uint8{157, 103, 167, 93}, []int{1, 2, 2, 1}},
		{"FC", setq(0.5, 127, []float32{1, 2, 3, 4, 5, 6, 7, 8, -9, -10, 1, 2, 3, 4, 5, 6, 7, -8, 9, -10}, 2, 10),
			setq(0.5, 127, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 3, 10),
			[]float32{1, 2, 3}, "Int8FC", nil, []uint8{151, 152, 153, 185, 186, 187}, []int{2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.feed("XQ", c.x)
			e.feed("WQ", c.w)
			e.feed("BQ", biasq(c.x.Scale*c.w.Scale, c.bias))
			e.run(op(c.typ, []string{"XQ", "WQ", "BQ"}, []string{"YQ"}, with(c.args, yq(1, 127)...)...))
			y := e.q("YQ")
			if got := blob.Data[uint8](y.T); !slices.Equal(got, c.want) || !slices.Equal(y.T.Dims(), c.outDims) {
				t.Errorf("got %v %v, Caffe2 expects %v %v", y.T.Dims(), got, c.outDims, c.want)
			}
			if y.Scale != 1 || y.ZeroPoint != 127 {
				t.Errorf("output quantization %g %d", y.Scale, y.ZeroPoint)
			}
		})
	}
}

// randQ returns random codes of the given shape with a scale and zero point.
func randQ(rng *rand.Rand, scale float32, zero int32, shape ...int) *Int8Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	codes := make([]uint8, n)
	for i := range codes {
		codes[i] = uint8(rng.IntN(256))
	}
	q, _ := NewInt8Tensor(codes, scale, zero, shape...)
	return q
}

// refRequant is QNNPACK's requantization of acc for output scale
// sx·sw/sy (float32) and zero point zy, clamped to [lo, hi].
func refRequant(acc int32, sx, sw, sy float32, zy, lo, hi int32) uint8 {
	m, s := qnnpParams(float32(sx*sw) / sy)
	v := qnnpRequantize(acc, m, s) + zy
	return uint8(max(lo, min(hi, v)))
}

func TestInt8ConvMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type geo struct {
		n, h, w, c, m, k, stride, pad, dil, group int
		legacy                                    int
		relu                                      bool
	}
	geos := []geo{
		{1, 5, 5, 3, 4, 3, 1, 1, 1, 1, 0, false},
		{2, 7, 6, 4, 6, 3, 2, 0, 1, 2, 0, true},
		{1, 8, 8, 6, 6, 3, 1, 2, 2, 6, 0, false}, // depthwise, dilated
		{1, 9, 9, 5, 7, 1, 1, 0, 1, 1, 0, true},  // 1×1
		{1, 7, 7, 2, 3, 3, 2, 0, 1, 1, 2, false}, // SAME
		{3, 4, 5, 16, 8, 2, 1, 1, 1, 4, 0, true},
		{2, 10, 9, 64, 33, 3, 1, 1, 1, 1, 0, true}, // K = 576: the matrix product's blocking
		{1, 6, 6, 8, 8, 3, 2, 1, 1, 2, 0, false},   // 4 outputs per group: the matrix product, grouped
	}
	for gi, g := range geos {
		sx, sw := float32(0.02+rng.Float32()*0.05), float32(0.005+rng.Float32()*0.02)
		sy := float32(0.05 + rng.Float32()*0.3)
		zx, zw, zy := int32(rng.IntN(256)), int32(rng.IntN(256)), int32(rng.IntN(256))
		x := randQ(rng, sx, zx, g.n, g.h, g.w, g.c)
		cg := g.c / g.group
		w := randQ(rng, sw, zw, g.m, g.k, g.k, cg)
		bias := make([]int32, g.m)
		for i := range bias {
			bias[i] = int32(rng.IntN(20001) - 10000)
		}
		args := []*netdef.Argument{netdef.ArgInt("kernel", int64(g.k)), netdef.ArgInt("stride", int64(g.stride)),
			netdef.ArgInt("dilation", int64(g.dil)), netdef.ArgInt("group", int64(g.group)), netdef.ArgString("order", "NHWC")}
		if g.legacy != 0 {
			args = append(args, netdef.ArgInt("legacy_pad", int64(g.legacy)))
		} else {
			args = append(args, netdef.ArgInt("pad", int64(g.pad)))
		}
		typ := "Int8Conv"
		if g.relu {
			typ = "Int8ConvRelu"
		}
		e := newEnv(t)
		e.feed("X", x)
		e.feed("W", w)
		e.feed("B", &Int8Tensor{T: blob.MustFromSlice(bias), Scale: sx * sw})
		e.run(op(typ, []string{"X", "W", "B"}, []string{"Y"}, with(args, yq(sy, int(zy))...)...))
		y := e.q("Y")
		// Reference: direct convolution over NHWC, padding from the
		// output size (SAME pads split with the smaller part first).
		dk := g.dil*(g.k-1) + 1
		oh, ow, ph, pw := (g.h+2*g.pad-dk)/g.stride+1, (g.w+2*g.pad-dk)/g.stride+1, g.pad, g.pad
		if g.legacy == 2 {
			oh, ow = (g.h+g.stride-1)/g.stride, (g.w+g.stride-1)/g.stride
			ph, pw = max(0, (oh-1)*g.stride+g.k-g.h)/2, max(0, (ow-1)*g.stride+g.k-g.w)/2
		}
		if !slices.Equal(y.T.Dims(), []int{g.n, oh, ow, g.m}) {
			t.Fatalf("geometry %d: output %v, want %v", gi, y.T.Dims(), []int{g.n, oh, ow, g.m})
		}
		lo := int32(0)
		if g.relu {
			lo = zy
		}
		xc, wc, yc := blob.Data[uint8](x.T), blob.Data[uint8](w.T), blob.Data[uint8](y.T)
		mg := g.m / g.group
		for b := range g.n {
			for oy := range oh {
				for ox := range ow {
					for m := range g.m {
						acc := bias[m]
						grp := m / mg
						for ky := range g.k {
							for kx := range g.k {
								iy, ix := oy*g.stride-ph+ky*g.dil, ox*g.stride-pw+kx*g.dil
								if iy < 0 || iy >= g.h || ix < 0 || ix >= g.w {
									continue
								}
								for c := range cg {
									xv := int32(xc[((b*g.h+iy)*g.w+ix)*g.c+grp*cg+c]) - zx
									wv := int32(wc[((m*g.k+ky)*g.k+kx)*cg+c]) - zw
									acc += xv * wv
								}
							}
						}
						want := refRequant(acc, sx, sw, sy, zy, lo, 255)
						if got := yc[((b*oh+oy)*ow+ox)*g.m+m]; got != want {
							t.Fatalf("geometry %d: Y[%d,%d,%d,%d] = %d, want %d (acc %d)", gi, b, oy, ox, m, got, want, acc)
						}
					}
				}
			}
		}
	}
}

func TestInt8FCMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, shape := range [][]int{{4, 10}, {3, 2, 5}, {1, 64}} {
		k := shape[len(shape)-1]
		if len(shape) == 3 {
			k = shape[1] * shape[2]
		}
		sx, sw, sy := float32(0.03), float32(0.01), float32(0.2)
		x := randQ(rng, sx, 100, shape...)
		w := randQ(rng, sw, 131, 7, k)
		bias := make([]int32, 7)
		for i := range bias {
			bias[i] = int32(rng.IntN(4001) - 2000)
		}
		e := newEnv(t)
		e.feed("X", x)
		e.feed("W", w)
		e.feed("B", &Int8Tensor{T: blob.MustFromSlice(bias), Scale: sx * sw})
		e.run(op("Int8FC", []string{"X", "W", "B"}, []string{"Y"}, yq(sy, 7)...))
		y := e.q("Y")
		rows := x.T.Size() / k
		if !slices.Equal(y.T.Dims(), []int{rows, 7}) {
			t.Fatalf("%v: output %v", shape, y.T.Dims())
		}
		for i := range rows {
			for j := range 7 {
				acc := bias[j]
				for c := range k {
					acc += (int32(blob.Data[uint8](x.T)[i*k+c]) - 100) * (int32(blob.Data[uint8](w.T)[j*k+c]) - 131)
				}
				if got, want := blob.Data[uint8](y.T)[i*7+j], refRequant(acc, sx, sw, sy, 7, 0, 255); got != want {
					t.Fatalf("%v: Y[%d,%d] = %d, want %d", shape, i, j, got, want)
				}
			}
		}
	}
}

// refMultiplier is QuantizeMultiplierSmallerThanOne in exact arithmetic:
// m = q·2^−s with q·2^−31 in [½, 1), q rounded to nearest even.
func refMultiplier(m float64) (int64, int) {
	s := 0
	for m*math.Pow(2, float64(s)) < 0.5 {
		s++
	}
	f := new(big.Float).SetPrec(200).SetFloat64(m)
	f.SetMantExp(f, 31+s)
	q, acc := f.Int(nil)
	frac := new(big.Float).Sub(f, new(big.Float).SetInt(q))
	switch c := frac.Cmp(big.NewFloat(0.5)); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		q.Add(q, big.NewInt(1))
	}
	_ = acc
	if q.Int64() == 1<<31 {
		return 1 << 30, s - 1
	}
	return q.Int64(), s
}

func TestInt8AddMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := range 20 {
		sa, sb := float32(0.01+rng.Float32()*0.1), float32(0.01+rng.Float32()*0.1)
		sy := float32(0.05 + rng.Float32()*0.2)
		za, zb, zy := int32(rng.IntN(256)), int32(rng.IntN(256)), int32(rng.IntN(256))
		relu := trial%2 == 1
		a, b := randQ(rng, sa, za, 3, 4, 5), randQ(rng, sb, zb, 3, 4, 5)
		typ := []string{"Int8Add", "Int8AddRelu", "Int8Sum", "Int8SumRelu"}[trial%4]
		e := newEnv(t)
		e.feed("A", a)
		e.feed("B", b)
		e.run(op(typ, []string{"A", "B"}, []string{"Y"}, yq(sy, int(zy))...))
		y := e.q("Y")
		twice := 2 * float64(max(sa, sb))
		qa, sha := refMultiplier(float64(sa) / twice)
		qb, shb := refMultiplier(float64(sb) / twice)
		qy, shy := refMultiplier(twice / (float64(sy) * (1 << 20)))
		lo := int64(0)
		if relu {
			lo = int64(zy)
		}
		for i, got := range blob.Data[uint8](y.T) {
			xa := (int64(blob.Data[uint8](a.T)[i]) - int64(za)) << 20
			xb := (int64(blob.Data[uint8](b.T)[i]) - int64(zb)) << 20
			s := refDivPOT(refHighMul(int32(xa), int32(qa)), sha) + refDivPOT(refHighMul(int32(xb), int32(qb)), shb)
			want := max(lo, min(255, refDivPOT(refHighMul(int32(s), int32(qy)), shy)+int64(zy)))
			if int64(got) != want {
				t.Fatalf("%s trial %d: Y[%d] = %d, want %d", typ, trial, i, got, want)
			}
			// And it is the real sum to within a code (plus the clamp).
			real := sa*float32(int32(blob.Data[uint8](a.T)[i])-za) + sb*float32(int32(blob.Data[uint8](b.T)[i])-zb)
			ideal := max(float64(lo), min(255, math.Round(float64(real/sy))+float64(zy)))
			if math.Abs(float64(got)-ideal) > 1 {
				t.Fatalf("%s: Y[%d] = %d, the real sum is code %g", typ, i, got, ideal)
			}
		}
	}
}

func TestInt8Pools(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	x := randQ(rng, 0.1, 50, 2, 7, 6, 3)
	type pool struct {
		args        []*netdef.Argument
		oh, ow      int
		kh, kw, s   int
		ph, pw      int
		wantHW      [2]int
		globalPools bool
	}
	pools := []pool{
		{args: []*netdef.Argument{netdef.ArgInt("kernel", 2)}, kh: 2, kw: 2, s: 1, wantHW: [2]int{6, 5}},
		{args: []*netdef.Argument{netdef.ArgInt("kernel", 3), netdef.ArgInt("stride", 2), netdef.ArgInt("pad", 1)}, kh: 3, kw: 3, s: 2, ph: 1, pw: 1, wantHW: [2]int{4, 3}},
		{args: []*netdef.Argument{netdef.ArgInt("kernel", 3), netdef.ArgInt("stride", 2), netdef.ArgInt("legacy_pad", 3)}, kh: 3, kw: 3, s: 2, wantHW: [2]int{3, 3}},
		{args: []*netdef.Argument{netdef.ArgInt("global_pooling", 1)}, kh: 7, kw: 6, s: 1, wantHW: [2]int{1, 1}},
	}
	xc := blob.Data[uint8](x.T)
	for pi, p := range pools {
		for _, typ := range []string{"Int8MaxPool", "Int8AveragePool"} {
			e := newEnv(t)
			e.feed("X", x)
			e.run(op(typ, []string{"X"}, []string{"Y"}, with(p.args, with(yq(0.1, 50), netdef.ArgString("order", "NHWC"))...)...))
			y := e.q("Y")
			oh, ow := p.wantHW[0], p.wantHW[1]
			if !slices.Equal(y.T.Dims(), []int{2, oh, ow, 3}) || y.Scale != 0.1 || y.ZeroPoint != 50 {
				t.Fatalf("%s pool %d: %v", typ, pi, y)
			}
			for i, got := range blob.Data[uint8](y.T) {
				c, ox, oy, b := i%3, i/3%ow, i/3/ow%oh, i/3/ow/oh
				var best, sum, count int
				for ky := range p.kh {
					for kx := range p.kw {
						iy, ix := oy*p.s-p.ph+ky, ox*p.s-p.pw+kx
						if iy < 0 || iy >= 7 || ix < 0 || ix >= 6 {
							continue
						}
						v := int(xc[((b*7+iy)*6+ix)*3+c])
						best, sum, count = max(best, v), sum+v, count+1
					}
				}
				want := best
				if typ == "Int8AveragePool" {
					want = int(math.Floor(float64(sum)/float64(count) + 0.5))
				}
				if int(got) != want {
					t.Fatalf("%s pool %d: Y[%d] = %d, want %d", typ, pi, i, got, want)
				}
			}
		}
	}
}

func TestInt8Unary(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	x := randQ(rng, 0.05, 120, 4, 9)
	xc := blob.Data[uint8](x.T)
	e := newEnv(t)
	e.feed("X", x)
	e.run(op("Int8Relu", []string{"X"}, []string{"R"}, yq(0.05, 120)...))
	for i, v := range blob.Data[uint8](e.q("R").T) {
		if want := max(xc[i], 120); v != want {
			t.Fatalf("Relu[%d] = %d, want %d", i, v, want)
		}
	}
	e.run(op("Int8Sigmoid", []string{"X"}, []string{"S"}, yq(1.0/256, 0)...))
	for i, v := range blob.Data[uint8](e.q("S").T) {
		real := 0.05 * float64(int(xc[i])-120)
		sig := 256 / (1 + math.Exp(-real))
		if math.Abs(float64(v)-min(255, sig)) > 0.5+1e-4 {
			t.Fatalf("Sigmoid code %d: %d, 256·σ(%g) = %g", xc[i], v, real, sig)
		}
	}
	e.run(op("Int8Softmax", []string{"X"}, []string{"P"}, yq(1.0/256, 0)...))
	p := blob.Data[uint8](e.q("P").T)
	for r := range 4 {
		row := make([]float64, 9)
		for j := range row {
			row[j] = 0.05 * float64(int(xc[r*9+j])-120)
		}
		ref := optest.RefSoftmax(row, 9)
		for j := range row {
			if d := math.Abs(float64(p[r*9+j]) - 256*ref[j]); d > 0.5+1e-3 && !(p[r*9+j] == 255 && ref[j] > 254.5/256) {
				t.Fatalf("Softmax row %d: code %d, 256·p = %g", r, p[r*9+j], 256*ref[j])
			}
		}
	}
	// Quantize and dequantize.
	f := blob.MustFromSlice([]float32{-1, -0.025, 0, 0.025, 0.075, 3, 100, float32(math.NaN())})
	e.feed("F", f)
	e.run(op("Int8Quantize", []string{"F"}, []string{"FQ"}, yq(0.05, 20)...))
	if got, want := blob.Data[uint8](e.q("FQ").T), []uint8{0, 20, 20, 20, 22, 80, 255, 0}; !slices.Equal(got, want) {
		t.Errorf("Int8Quantize: %v, want %v", got, want)
	}
	e.run(op("Int8Dequantize", []string{"FQ"}, []string{"D"}))
	d := e.w.Tensor("D")
	if got := blob.Data[float32](d); got[4] != float32(2)*0.05 || got[0] != float32(-20)*0.05 || d.DataType() != blob.Float32 {
		t.Errorf("Int8Dequantize: %v", got)
	}
}

func TestInt8Shapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	a, b := randQ(rng, 0.5, 3, 2, 3, 4, 5), randQ(rng, 0.5, 3, 2, 3, 4, 2)
	e := newEnv(t)
	e.feed("A", a)
	e.feed("B", b)
	e.run(op("Int8Concat", []string{"A", "B"}, []string{"C", "split"}, with(yq(0.5, 3), netdef.ArgString("order", "NHWC"))...))
	c := e.q("C")
	if !slices.Equal(c.T.Dims(), []int{2, 3, 4, 7}) || !slices.Equal(blob.Data[int32](e.w.Tensor("split")), []int32{5, 2}) {
		t.Fatalf("Int8Concat: %v", c)
	}
	for i, v := range blob.Data[uint8](c.T) {
		ch, pix := i%7, i/7
		want := blob.Data[uint8](b.T)[pix*2+max(0, ch-5)]
		if ch < 5 {
			want = blob.Data[uint8](a.T)[pix*5+ch]
		}
		if v != want {
			t.Fatalf("Int8Concat[%d] = %d, want %d", i, v, want)
		}
	}
	e.run(op("Int8Reshape", []string{"A"}, []string{"R", "old"}, with(yq(0.5, 3), netdef.ArgInts("shape", 0, -1, 10))...))
	if r := e.q("R"); !slices.Equal(r.T.Dims(), []int{2, 6, 10}) || !slices.Equal(blob.Data[uint8](r.T), blob.Data[uint8](a.T)) ||
		!slices.Equal(blob.Data[int64](e.w.Tensor("old")), []int64{2, 3, 4, 5}) {
		t.Fatalf("Int8Reshape: %v", r)
	}
	e.run(op("Int8Flatten", []string{"A"}, []string{"F"}, with(yq(0.5, 3), netdef.ArgInt("axis", 2))...))
	if f := e.q("F"); !slices.Equal(f.T.Dims(), []int{6, 20}) || f.Scale != 0.5 || f.ZeroPoint != 3 {
		t.Fatalf("Int8Flatten: %v", f)
	}
	e.run(op("Int8GivenTensorFill", nil, []string{"G"}, with(yq(0.25, 9), netdef.ArgInts("shape", 2, 2), netdef.ArgString("values", "\x01\x02\xfe\xff"))...))
	if g := e.q("G"); !slices.Equal(blob.Data[uint8](g.T), []uint8{1, 2, 254, 255}) || g.Scale != 0.25 || g.ZeroPoint != 9 {
		t.Fatalf("Int8GivenTensorFill: %v", g)
	}
	e.run(op("Int8GivenIntTensorFill", nil, []string{"I"}, with(yq(0.001, 0), netdef.ArgInts("shape", 3), netdef.ArgInts("values", -5, 0, 1<<30))...))
	if g := e.q("I"); !slices.Equal(blob.Data[int32](g.T), []int32{-5, 0, 1 << 30}) || g.Scale != 0.001 {
		t.Fatalf("Int8GivenIntTensorFill: %v", g)
	}
}

// TestInt8InPlace runs the operators that allow it in place: the input's
// quantization is read before the output's replaces it.
func TestInt8InPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	x := randQ(rng, 0.1, 100, 2, 8)
	want := map[string][]uint8{}
	for _, typ := range []string{"Int8Relu", "Int8Softmax", "Int8Sigmoid"} {
		args := yq(1.0/256, 0)
		if typ == "Int8Relu" {
			args = yq(0.1, 100)
		}
		e := newEnv(t)
		xc, _ := NewInt8Tensor(blob.Data[uint8](x.T), x.Scale, x.ZeroPoint, x.T.Dims()...)
		e.feed("X", xc)
		e.run(op(typ, []string{"X"}, []string{"Y"}, args...))
		want[typ] = slices.Clone(blob.Data[uint8](e.q("Y").T))
		e.run(op(typ, []string{"X"}, []string{"X"}, args...))
		if got := blob.Data[uint8](e.q("X").T); !slices.Equal(got, want[typ]) {
			t.Errorf("%s in place: %v, out of place %v", typ, got, want[typ])
		}
	}
}

func TestInt8Errors(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	x := randQ(rng, 0.1, 10, 1, 4, 4, 2)
	w := randQ(rng, 0.1, 10, 3, 3, 3, 2)
	bias := &Int8Tensor{T: blob.MustFromSlice([]int32{0, 0, 0}), Scale: 0.01}
	conv := func(args ...*netdef.Argument) *netdef.OperatorDef {
		return op("Int8Conv", []string{"X", "W", "B"}, []string{"Y"}, with(args, netdef.ArgInt("kernel", 3))...)
	}
	for _, c := range []struct {
		def  *netdef.OperatorDef
		want string
	}{
		{conv(yq(1, 0)...), "NHWC"},
		{conv(with(yq(0.001, 0), netdef.ArgString("order", "NHWC"))...), "below 1"},
		{conv(with(yq(1, 300), netdef.ArgString("order", "NHWC"))...), "zero point"},
		{op("Int8Conv", []string{"X", "W"}, []string{"Y"}, netdef.ArgInt("kernel", 3), netdef.ArgString("order", "NHWC")), "bias"},
		{op("Int8MaxPool", []string{"X"}, []string{"Y"}, with(yq(0.2, 10), netdef.ArgInt("kernel", 2), netdef.ArgString("order", "NHWC"))...), "Y_scale"},
		{op("Int8Sigmoid", []string{"X"}, []string{"Y"}, yq(0.1, 0)...), "1/256"},
		{op("Int8Softmax", []string{"X"}, []string{"Y"}, yq(1.0/256, 1)...), "1/256"},
		{op("Int8Relu", []string{"F"}, []string{"Y"}, yq(0.1, 10)...), "not an int8 tensor"},
		{op("Int8Add", []string{"X", "W"}, []string{"Y"}, yq(0.1, 10)...), "one shape"},
		{op("Int8Add", []string{"X", "X"}, []string{"Y"}, yq(1e-9, 10)...), "too small"},
		{op("Int8Sum", []string{"X", "X", "X"}, []string{"Y"}, yq(1, 10)...), "2 inputs"},
		{op("Int8Reshape", []string{"X"}, []string{"Y", "old"}, with(yq(0.1, 10), netdef.ArgInts("shape", 5, -1))...), "reshape"},
		{op("Int8Flatten", []string{"X"}, []string{"Y"}, with(yq(0.1, 10), netdef.ArgInt("axis", 5))...), "axis"},
		{op("Int8GivenTensorFill", nil, []string{"Y"}, netdef.ArgInts("shape", 3), netdef.ArgString("values", "ab")), "do not match"},
		{op("Int8GivenIntTensorFill", nil, []string{"Y"}, netdef.ArgInts("shape", 1), netdef.ArgInts("values", 1<<40)), "INT32"},
		{op("Int8FC", []string{"X", "W", "B"}, []string{"Y"}, yq(1, 0)...), "2-D"},
	} {
		e := newEnv(t)
		e.feed("X", x)
		e.feed("W", w)
		e.feed("B", bias)
		e.feed("F", blob.MustFromSlice([]float32{1}))
		err := e.w.Run(c.def)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.def.GetType(), err, c.want)
		}
	}
}
