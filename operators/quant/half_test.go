package quant

//go:generate python3 testdata/gen_half.py

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestFloatToHalfMatchesNumPy converts the inputs of testdata/half_x.npy
// and compares every bit pattern with NumPy's float16 conversion
// (half_y.npy): ties to even, subnormals, overflow to infinity.
func TestFloatToHalfMatchesNumPy(t *testing.T) {
	x, err := optest.ReadNPY("testdata/half_x.npy")
	if err != nil {
		t.Fatal(err)
	}
	want, err := optest.ReadNPY("testdata/half_y.npy")
	if err != nil {
		t.Fatal(err)
	}
	y := optest.MustRunOp(t, netdef.NewOperator("FloatToHalf", []string{"x"}, []string{"y"}), x)[0]
	if y.DataType() != blob.Float16 {
		t.Fatalf("output type %v", y.DataType())
	}
	for i, h := range blob.Data[blob.Half](y) {
		if w := blob.Data[int32](want)[i]; int32(h) != w {
			t.Errorf("FloatToHalf(%g) = %#04x, NumPy %#04x", blob.Data[float32](x)[i], uint16(h), w)
		}
	}
	// Back to float: exact, and the round trip of a half is the identity.
	back := optest.MustRunOp(t, netdef.NewOperator("HalfToFloat", []string{"h"}, []string{"f"}), y)[0]
	again := optest.MustRunOp(t, netdef.NewOperator("FloatToHalf", []string{"x"}, []string{"y"}), back)[0]
	for i, h := range blob.Data[blob.Half](again) {
		if h != blob.Data[blob.Half](y)[i] {
			t.Fatalf("round trip of %#04x gives %#04x", uint16(blob.Data[blob.Half](y)[i]), uint16(h))
		}
	}
}

func TestFloatToHalfClip(t *testing.T) {
	x := blob.MustFromSlice([]float32{1e6, -1e6, 70000, 1})
	for _, c := range []struct {
		clip bool
		want []uint16
	}{{false, []uint16{0x7c00, 0xfc00, 0x7c00, 0x3c00}}, {true, []uint16{0x7bff, 0xfbff, 0x7bff, 0x3c00}}} {
		y := optest.MustRunOp(t, netdef.NewOperator("FloatToHalf", []string{"x"}, []string{"y"}, netdef.ArgBool("clip", c.clip)), x)[0]
		for i, h := range blob.Data[blob.Half](y) {
			if uint16(h) != c.want[i] {
				t.Errorf("clip %v: element %d = %#04x, want %#04x", c.clip, i, uint16(h), c.want[i])
			}
		}
	}
}

func TestHalfGradients(t *testing.T) {
	for _, c := range []struct{ fwd, grad string }{{"FloatToHalf", "HalfToFloat"}, {"HalfToFloat", "FloatToHalf"}} {
		def := netdef.NewOperator(c.fwd, []string{"x"}, []string{"y"})
		g, err := operators.GetGradientDefs(def, optest.DenseGradients(def))
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Ops) != 1 || g.Ops[0].GetType() != c.grad || g.Ops[0].Input[0] != "y_grad" || g.Ops[0].Output[0] != "x_grad" {
			t.Errorf("%s gradient: %v", c.fwd, g.Ops)
		}
	}
}

func TestGivenFills(t *testing.T) {
	y := optest.MustRunOp(t, netdef.NewOperator("GivenTensorFp16Fill", nil, []string{"y"},
		netdef.ArgInts("shape", 2, 2), netdef.ArgFloats("values", 1, 0.1, -2, 65536)))[0]
	want := []uint16{0x3c00, 0x2e66, 0xc000, 0x7c00}
	if y.DataType() != blob.Float16 || len(y.Dims()) != 2 {
		t.Fatalf("got %v", y)
	}
	for i, h := range blob.Data[blob.Half](y) {
		if uint16(h) != want[i] {
			t.Errorf("element %d = %#04x, want %#04x", i, uint16(h), want[i])
		}
	}
	b := optest.MustRunOp(t, netdef.NewOperator("GivenTensorByteStringToUInt8Fill", []string{"like"}, []string{"y"},
		netdef.ArgStrings("values", "\x00\x7f\x80\xff\x01\x02"), netdef.ArgInts("extra_shape", 2), netdef.ArgString("dtype", "string")), blob.MustFromSlice([]float32{0, 0, 0}))[0]
	if got := blob.Data[uint8](b); b.DataType() != blob.Uint8 || len(got) != 6 || got[2] != 0x80 || got[3] != 0xff || b.Dims()[1] != 2 {
		t.Errorf("GivenTensorByteStringToUInt8Fill: %v %v", b, got)
	}
	for _, bad := range []*netdef.OperatorDef{
		netdef.NewOperator("GivenTensorFp16Fill", nil, []string{"y"}, netdef.ArgInts("shape", 3), netdef.ArgFloats("values", 1)),
		netdef.NewOperator("GivenTensorByteStringToUInt8Fill", nil, []string{"y"}, netdef.ArgInts("shape", 2), netdef.ArgString("values", "abc")),
		netdef.NewOperator("GivenTensorByteStringToUInt8Fill", nil, []string{"y"}, netdef.ArgInts("shape", 1), netdef.ArgString("values", "a"), netdef.ArgInt("dtype", 2)),
		netdef.NewOperator("GivenTensorByteStringToUInt8Fill", nil, []string{"y"}, netdef.ArgInts("shape", 1), netdef.ArgStrings("values", "a", "b")),
	} {
		if _, err := optest.RunOp(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
