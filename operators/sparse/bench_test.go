package sparse

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// The embedding path's operators on a table of benchRows rows of benchCols
// floats, looked up in benchSegs segments of benchPerSeg indices.
const (
	benchRows, benchCols   = 1 << 14, 64
	benchSegs, benchPerSeg = 256, 16
)

// benchTable is the FLOAT table, and quantize (when not "") the operator
// that quantizes it for the lookup (its outputs: the table, then
// SCALE_BIAS for FloatToRowwiseQuantized8Bits).
func benchTable(b *testing.B, quantize string) []*blob.Tensor {
	d := make([]float32, benchRows*benchCols)
	for i := range d {
		d[i] = float32(i%97) / 13
	}
	data := blob.MustFromSlice(d, benchRows, benchCols)
	switch quantize {
	case "":
		return []*blob.Tensor{data}
	case "FloatToRowwiseQuantized8Bits":
		return optest.MustRunOp(b, netdef.NewOperator(quantize, []string{"D"}, []string{"Q", "SB"}), data)
	}
	return optest.MustRunOp(b, netdef.NewOperator(quantize, []string{"D"}, []string{"Q"}), data)
}

// benchLookup times typ(DATA, [WEIGHTS,] INDICES, LENGTHS[, SCALE_BIAS])
// after a first run.
func benchLookup(b *testing.B, typ string, weighted bool, quantize string) {
	n := benchSegs * benchPerSeg
	idx, lens, w := make([]int64, n), make([]int32, benchSegs), make([]float32, n)
	for k := range idx {
		idx[k] = int64(k*7919) % benchRows
		w[k] = float32(k%5) / 4
	}
	for m := range lens {
		lens[m] = benchPerSeg
	}
	table := benchTable(b, quantize)
	in, inputs := []string{"D"}, []*blob.Tensor{table[0]}
	if weighted {
		in, inputs = append(in, "W"), append(inputs, blob.MustFromSlice(w, n))
	}
	in, inputs = append(in, "I", "L"), append(inputs, blob.MustFromSlice(idx, n), blob.MustFromSlice(lens, benchSegs))
	if len(table) > 1 {
		in, inputs = append(in, "SB"), append(inputs, table[1])
	}
	optest.Benchmark(b, optest.Steady(b, netdef.NewOperator(typ, in, []string{"Y"}), inputs...))
}

// benchGradient times typ(dOUTPUT, LENGTHS[, INDICES]) -> dDATA values,
// SparseLengthsSum's and SparseLengthsMean's gradients.
func benchGradient(b *testing.B, typ string, indices bool) {
	n := benchSegs * benchPerSeg
	g, lens, idx := make([]float32, benchSegs*benchCols), make([]int32, benchSegs), make([]int64, n)
	for i := range g {
		g[i] = float32(i%31) / 7
	}
	for m := range lens {
		lens[m] = benchPerSeg
	}
	in, inputs := []string{"dY", "L"}, []*blob.Tensor{blob.MustFromSlice(g, benchSegs, benchCols), blob.MustFromSlice(lens, benchSegs)}
	if indices {
		in, inputs = append(in, "I"), append(inputs, blob.MustFromSlice(idx, n))
	}
	optest.Benchmark(b, optest.Steady(b, netdef.NewOperator(typ, in, []string{"dD"}), inputs...))
}

func BenchmarkSparseLengthsSum(b *testing.B)  { benchLookup(b, "SparseLengthsSum", false, "") }
func BenchmarkSparseLengthsMean(b *testing.B) { benchLookup(b, "SparseLengthsMean", false, "") }
func BenchmarkSparseLengthsWeightedSum(b *testing.B) {
	benchLookup(b, "SparseLengthsWeightedSum", true, "")
}
func BenchmarkSparseLengthsSumFused8BitRowwise(b *testing.B) {
	benchLookup(b, "SparseLengthsSumFused8BitRowwise", false, "FloatToFused8BitRowwiseQuantized")
}
func BenchmarkSparseLengthsWeightedSumFused4BitRowwise(b *testing.B) {
	benchLookup(b, "SparseLengthsWeightedSumFused4BitRowwise", true, "FloatToFused4BitRowwiseQuantized")
}
func BenchmarkSparseLengthsSum8BitsRowwise(b *testing.B) {
	benchLookup(b, "SparseLengthsSum8BitsRowwise", false, "FloatToRowwiseQuantized8Bits")
}
func BenchmarkSparseLengthsSumGradient(b *testing.B) {
	benchGradient(b, "SparseLengthsIndicesInGradientSumGradient", true)
}
func BenchmarkSparseLengthsMeanGradient(b *testing.B) {
	benchGradient(b, "SparseLengthsMeanGradient", false)
}
