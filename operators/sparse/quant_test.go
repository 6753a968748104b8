package sparse

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// quantGolden is testdata/quant_golden.json, which gen_quant.py writes
// with Caffe2's arithmetic spelled out in NumPy.
type quantGolden struct {
	Shape                 []int    `json:"shape"`
	XBits                 []uint32 `json:"x_bits"`
	Fused8                []uint8  `json:"fused8"`
	Fused8BackBits        []uint32 `json:"fused8_back_bits"`
	Fused4                []uint8  `json:"fused4"`
	Fused4BackBits        []uint32 `json:"fused4_back_bits"`
	Rowwise8              []uint8  `json:"rowwise8"`
	Rowwise8ScaleBiasBits []uint32 `json:"rowwise8_scale_bias_bits"`
	Rowwise8BackBits      []uint32 `json:"rowwise8_back_bits"`
}

func loadQuantGolden(t *testing.T) (*quantGolden, *blob.Tensor) {
	t.Helper()
	raw, err := os.ReadFile("testdata/quant_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g quantGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return &g, blob.MustFromSlice(fromBits(g.XBits), g.Shape...)
}

func fromBits(b []uint32) []float32 {
	v := make([]float32, len(b))
	for i, x := range b {
		v[i] = math.Float32frombits(x)
	}
	return v
}

func sameBytes(t *testing.T, what string, got, want []uint8) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: byte %d is %d, want %d", what, i, got[i], want[i])
		}
	}
}

func sameFloats(t *testing.T, what string, got []float32, want []uint32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i, v := range got {
		if math.Float32bits(v) != want[i] {
			t.Fatalf("%s: element %d is %v, want %v (bit for bit)", what, i, v, math.Float32frombits(want[i]))
		}
	}
}

// TestQuantizationBitExact holds the six conversions to the golden bytes.
func TestQuantizationBitExact(t *testing.T) {
	g, x := loadQuantGolden(t)
	op := netdef.NewOperator
	q8 := optest.MustRunOp(t, op("FloatToFused8BitRowwiseQuantized", []string{"X"}, []string{"Q"}), x)[0]
	sameBytes(t, "FloatToFused8BitRowwiseQuantized", blob.Data[uint8](q8), g.Fused8)
	back8 := optest.MustRunOp(t, op("Fused8BitRowwiseQuantizedToFloat", []string{"Q"}, []string{"Y"}), q8)[0]
	sameFloats(t, "Fused8BitRowwiseQuantizedToFloat", blob.Data[float32](back8), g.Fused8BackBits)

	q4 := optest.MustRunOp(t, op("FloatToFused4BitRowwiseQuantized", []string{"X"}, []string{"Q"}), x)[0]
	sameBytes(t, "FloatToFused4BitRowwiseQuantized", blob.Data[uint8](q4), g.Fused4)
	back4 := optest.MustRunOp(t, op("Fused4BitRowwiseQuantizedToFloat", []string{"Q"}, []string{"Y"}), q4)[0]
	sameFloats(t, "Fused4BitRowwiseQuantizedToFloat", blob.Data[float32](back4), g.Fused4BackBits)

	out := optest.MustRunOp(t, op("FloatToRowwiseQuantized8Bits", []string{"X"}, []string{"Q", "SB"}), x)
	sameBytes(t, "FloatToRowwiseQuantized8Bits", blob.Data[uint8](out[0]), g.Rowwise8)
	sameFloats(t, "FloatToRowwiseQuantized8Bits scale_bias", blob.Data[float32](out[1]), g.Rowwise8ScaleBiasBits)
	backR := optest.MustRunOp(t, op("Rowwise8BitQuantizedToFloat", []string{"Q", "SB"}, []string{"Y"}), out[0], out[1])[0]
	sameFloats(t, "Rowwise8BitQuantizedToFloat", blob.Data[float32](backR), g.Rowwise8BackBits)
}

// TestQuantizedLookups checks every quantized SparseLengths variant
// against the float operator run on the dequantized table.
func TestQuantizedLookups(t *testing.T) {
	_, x := loadQuantGolden(t)
	op := netdef.NewOperator
	idx, lens := i64(5, 0, 3, 3, 1), i32(2, 0, 3)
	w := f32(0.5, -2, 1, 0.25, 3)
	for _, f := range []struct{ suffix, quant, dequant string }{
		{"Fused8BitRowwise", "FloatToFused8BitRowwiseQuantized", "Fused8BitRowwiseQuantizedToFloat"},
		{"Fused4BitRowwise", "FloatToFused4BitRowwiseQuantized", "Fused4BitRowwiseQuantizedToFloat"},
		{"8BitsRowwise", "FloatToRowwiseQuantized8Bits", "Rowwise8BitQuantizedToFloat"},
	} {
		qouts := []string{"Q"}
		if f.suffix == "8BitsRowwise" {
			qouts = append(qouts, "SB")
		}
		q := optest.MustRunOp(t, op(f.quant, []string{"X"}, qouts), x)
		deq := optest.MustRunOp(t, op(f.dequant, qouts, []string{"D"}), q...)[0]
		for _, k := range []string{"Sum", "WeightedSum", "Mean"} {
			in, qin := []string{"D", "I", "L"}, []string{"Q", "I", "L"}
			vals := []*blob.Tensor{deq, idx, lens}
			qvals := []*blob.Tensor{q[0], idx, lens}
			if k == "WeightedSum" {
				in, qin = []string{"D", "W", "I", "L"}, []string{"Q", "W", "I", "L"}
				vals = []*blob.Tensor{deq, w, idx, lens}
				qvals = []*blob.Tensor{q[0], w, idx, lens}
			}
			if f.suffix == "8BitsRowwise" {
				qin = append(qin, "SB")
				qvals = append(qvals, q[1])
			}
			want := optest.MustRunOp(t, op("SparseLengths"+k, in, []string{"Y"}), vals...)[0]
			got := optest.MustRunOp(t, op("SparseLengths"+k+f.suffix, qin, []string{"Y"}), qvals...)[0]
			if len(got.Dims()) != 2 || got.Dim(0) != 3 || got.Dim(1) != 8 {
				t.Fatalf("SparseLengths%s%s: shape %v, want [3 8]", k, f.suffix, got.Dims())
			}
			optest.CheckClose(t, "SparseLengths"+k+f.suffix, got.AsFloat64s(), want.AsFloat64s(), 1e-5)
		}
	}
}

func TestQuantizationErrors(t *testing.T) {
	op := netdef.NewOperator
	if _, err := optest.RunOp(op("FloatToFused4BitRowwiseQuantized", []string{"X"}, []string{"Q"}), table(2, 3)); err == nil {
		t.Error("FloatToFused4BitRowwiseQuantized of an odd number of columns: no error")
	}
	if _, err := optest.RunOp(op("Fused8BitRowwiseQuantizedToFloat", []string{"Q"}, []string{"Y"}), blob.MustFromSlice(make([]uint8, 6), 2, 3)); err == nil {
		t.Error("Fused8BitRowwiseQuantizedToFloat of rows shorter than 8 bytes: no error")
	}
	q := blob.MustFromSlice(make([]uint8, 24), 2, 12)
	if _, err := optest.RunOp(op("SparseLengthsSumFused8BitRowwise", []string{"Q", "I", "L"}, []string{"Y"}), q, i32(2), i32(1)); err == nil {
		t.Error("SparseLengthsSumFused8BitRowwise with an index out of range: no error")
	}
}
