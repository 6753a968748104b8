package norm

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func op(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(typ, in, out, args...)
}

func argInt(name string, v int64) *netdef.Argument     { return netdef.ArgInt(name, v) }
func argFloat(name string, v float32) *netdef.Argument { return netdef.ArgFloat(name, v) }
func argStr(name, v string) *netdef.Argument           { return netdef.ArgString(name, v) }

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x0e0f)) }

// randT returns a tensor of dtype with values uniform in [lo, hi).
func randT(r *rand.Rand, dtype blob.DataType, lo, hi float64, shape ...int) *blob.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
	}
	return convert(optest.F32(v, shape...), dtype)
}

// readGolden reads testdata/<name>.npy.
func readGolden(tb testing.TB, name string) *blob.Tensor {
	tb.Helper()
	t, err := optest.ReadNPY(filepath.Join("testdata", name+".npy"))
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// convert returns t's values as a tensor of dtype (Float32 or Float64).
func convert(t *blob.Tensor, dtype blob.DataType) *blob.Tensor {
	v := t.AsFloat64s()
	if dtype == blob.Float64 {
		return blob.MustFromSlice(slices.Clone(v), t.Shape()...)
	}
	return optest.F32(v, t.Shape()...)
}

// permute4 returns the 4-D tensor t with its dimensions permuted: output
// dimension i is input dimension perm[i].
func permute4(t *blob.Tensor, perm [4]int) *blob.Tensor {
	in := t.Dims()
	var out, stride [4]int
	stride[3] = 1
	for i := 2; i >= 0; i-- {
		stride[i] = stride[i+1] * in[i+1]
	}
	for i := range out {
		out[i] = in[perm[i]]
	}
	src := t.AsFloat64s()
	dst := make([]float64, len(src))
	k := 0
	for a := range out[0] {
		for b := range out[1] {
			for c := range out[2] {
				for d := range out[3] {
					idx := [4]int{a, b, c, d}
					off := 0
					for i, p := range perm {
						off += idx[i] * stride[p]
					}
					dst[k] = src[off]
					k++
				}
			}
		}
	}
	return convert(blob.MustFromSlice(dst, out[:]...), t.DataType())
}

func toNHWC(t *blob.Tensor) *blob.Tensor { return permute4(t, [4]int{0, 2, 3, 1}) }
func toNCHW(t *blob.Tensor) *blob.Tensor { return permute4(t, [4]int{0, 3, 1, 2}) }

// expectTensor fails tb unless got has want's shape and values within tol
// (relative to max(1, |want|)).
func expectTensor(tb testing.TB, what string, got, want *blob.Tensor, tol float64) {
	tb.Helper()
	if got == nil {
		tb.Fatalf("%s: no output", what)
	}
	if !slices.Equal(got.Dims(), want.Dims()) {
		tb.Fatalf("%s: shape %v, want %v", what, got.Dims(), want.Dims())
	}
	optest.CheckClose(tb, what, got.AsFloat64s(), want.AsFloat64s(), tol)
}

func sqrtf(v float64) float64 { return math.Sqrt(v) }
