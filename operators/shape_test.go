package operators_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterShapeFunc("ShapeTestDouble", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		if in[0].Unknown {
			return nil, nil
		}
		if in[0].Rank() != 1 {
			return nil, b.InputShapeError(in, "want a vector")
		}
		return []operators.TensorShape{operators.Shape(in[0].Type, 2*in[0].Dims[0])}, nil
	})
	operators.MustRegisterShapeFunc("ShapeTestPanic", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{in[5]}, nil
	})
}

func TestInferShapes(t *testing.T) {
	lookup := func(name string) operators.TensorShape {
		if name == "x" {
			return operators.Shape(blob.Float32, 3)
		}
		return operators.UnknownShape
	}
	tests := []struct {
		name    string
		ops     [][3]string // type, input, output
		want    map[string]string
		wantErr string
	}{
		{"chain", [][3]string{{"ShapeTestDouble", "x", "y"}, {"ShapeTestDouble", "y", "z"}},
			map[string]string{"y": "[6]", "z": "[12]"}, ""},
		{"no shape function", [][3]string{{"NoSuchOp", "x", "y"}, {"ShapeTestDouble", "y", "z"}},
			map[string]string{"y": "unknown", "z": "unknown"}, ""},
		{"unknown input", [][3]string{{"ShapeTestDouble", "u", "y"}}, map[string]string{"y": "unknown"}, ""},
		{"output overwrites", [][3]string{{"ShapeTestDouble", "x", "x"}, {"ShapeTestDouble", "x", "y"}},
			map[string]string{"x": "[6]", "y": "[12]"}, ""},
		{"panic", [][3]string{{"ShapeTestDouble", "x", "y"}, {"ShapeTestPanic", "y", "z"}}, nil, `operator 1 ShapeTestPanic: shape inference failed for inputs "y" [6]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := netdef.NewNet("shapes")
			for _, op := range tc.ops {
				n.Op(op[0], []string{op[1]}, []string{op[2]})
			}
			got, err := operators.InferShapes(n.Proto(), lookup)
			if tc.wantErr != "" {
				var opErr *operators.OpError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &opErr) {
					t.Fatalf("InferShapes = %v, want an OpError with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tc.want {
				if s := got[name].String(); s != want {
					t.Errorf("%s: %s, want %s", name, s, want)
				}
			}
		})
	}
}

func TestInferShapesError(t *testing.T) {
	n := netdef.NewNet("bad")
	n.Op("ShapeTestDouble", []string{"m"}, []string{"y"})
	_, err := operators.InferShapes(n.Proto(), func(string) operators.TensorShape {
		return operators.Shape(blob.Float32, 2, operators.AnyDim)
	})
	if err == nil || err.Error() != `operator 0 ShapeTestDouble: inputs "m" [2 ?]: want a vector` {
		t.Fatalf("InferShapes = %v", err)
	}
}

func TestRegisterShapeFuncTwice(t *testing.T) {
	if err := operators.RegisterShapeFunc("ShapeTestDouble", operators.SameAsInput0); err == nil {
		t.Fatal("a second shape function for ShapeTestDouble was accepted")
	}
}

func TestAnyDims(t *testing.T) {
	cases := []struct {
		n      int
		want   []int
		wantOK bool
	}{
		{0, []int{}, true},
		{3, []int{operators.AnyDim, operators.AnyDim, operators.AnyDim}, true},
		{64, nil, true},
		{65, nil, false},
		{1 << 40, nil, false},
		{-1, nil, false},
	}
	for _, c := range cases {
		dims, ok := operators.AnyDims(c.n)
		if ok != c.wantOK || (c.want != nil && !slices.Equal(dims, c.want)) || (ok && len(dims) != c.n) || (!ok && dims != nil) {
			t.Errorf("AnyDims(%d) = %v, %v; want %v, %v", c.n, dims, ok, c.want, c.wantOK)
		}
	}
}
