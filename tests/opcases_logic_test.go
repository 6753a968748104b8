package tests

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// Conformance cases of operators/logic: comparisons, logical operators,
// Where and the NaN operators.
func init() {
	caseSets = append(caseSets, func(s *sampler) []optest.Case {
		op := cgParse
		ai := netdef.ArgInt
		bools := func(shape []int, v ...bool) *blob.Tensor { return blob.MustFromSlice(v, shape...) }
		nan := float32(math.NaN())
		cases := []optest.Case{
			{Op: op("Not(X) -> Y"), Inputs: ts(bools([]int{2, 2}, true, false, false, true))},
			{Op: op("Where(C, X, Y) -> Z"), Inputs: ts(bools([]int{2, 2}, true, false, false, true), s.x(2, 2), s.x(2, 2))},
			{Name: "rows", Op: op("Where(C, X, Y) -> Z", netdef.ArgBool("broadcast_on_rows", true)), Inputs: ts(bools([]int{3}, true, false, true), s.x(3, 2), s.x(3, 2))},
			{Op: op("IsNaN(X) -> Y"), Inputs: ts(f32(1, nan, -2, nan))},
			{Op: op("ReplaceNaN(X) -> Y", netdef.ArgFloat("value", 3)), Inputs: ts(f32(1, nan, -2, nan))},
			{Op: op("NanCheck(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: []int{0}},
		}
		for _, typ := range []string{"EQ", "NE", "LT", "LE", "GT", "GE"} {
			a, b := s.in(-2, 2, 2, 3), s.in(-2, 2, 3)
			cases = append(cases,
				optest.Case{Op: op(typ + "(A, B) -> C"), Inputs: ts(a, b)},
				optest.Case{Name: "integers, legacy broadcast", Op: op(typ+"(A, B) -> C", ai("broadcast", 1), ai("axis", 0)), Inputs: ts(blob.MustFromSlice([]int64{1, 2, 3, 3, 2, 1}, 2, 3), i64(2, 2))},
			)
		}
		// Tensor shaping (operators/tensor) and DiagonalFill (operators/fill).
		cases = append(cases,
			optest.Case{Op: op("Slice(X) -> Y", netdef.ArgInts("starts", 1, 0), netdef.ArgInts("ends", -1, 2)), Inputs: ts(s.x(3, 4)), Grad: []int{0}},
			optest.Case{Name: "inputs", Op: op("Slice(X, s, e) -> Y"), Inputs: ts(s.x(2, 3, 4), i64(0, 0, 1), i64(-1, -1, 3)), Grad: []int{0}},
			optest.Case{Op: op("SliceGradient(X, dY) -> dX", netdef.ArgInts("starts", 1), netdef.ArgInts("ends", 3)), Inputs: ts(s.x(4, 2), s.x(2, 2))},
			optest.Case{Op: op("Size(X) -> n"), Inputs: ts(s.x(3, 4))},
			optest.Case{Op: op("Expand(X, shape) -> Y"), Inputs: ts(s.x(3, 1), i64(2, 3, 4)), Grad: []int{0}},
			optest.Case{Op: op("ExpandGradient(dY, X) -> dX"), Inputs: ts(s.x(2, 3, 4), s.x(3, 1))},
			optest.Case{Op: op("NumpyTile(X, r) -> Y"), Inputs: ts(s.x(2, 3), i64(2, 2))},
			optest.Case{Op: op("LengthsToShape(L) -> s"), Inputs: ts(i32(3, 3))},
			optest.Case{Op: op("Range(a, b, c) -> Y"), Inputs: ts(blob.Scalar(int32(1)), blob.Scalar(int32(9)), blob.Scalar(int32(3)))},
			optest.Case{Name: "float", Op: op("Range(b) -> Y"), Inputs: ts(blob.Scalar(float32(2.5)))},
			optest.Case{Op: op("Summarize(X) -> Y"), Inputs: ts(s.x(3, 4))},
			optest.Case{Op: op("SplitByLengths(X, L) -> a, b", ai("axis", 1)), Inputs: ts(s.x(2, 5), i32(1, 1, 3, 0)), Grad: []int{0}},
			optest.Case{Op: op("DiagonalFill() -> Y", netdef.ArgInts("shape", 3, 4), netdef.ArgFloat("value", 2))},
		)
		for _, typ := range []string{"And", "Or", "Xor"} {
			cases = append(cases, optest.Case{Op: op(typ + "(A, B) -> C"), Inputs: ts(bools([]int{2, 2}, true, false, false, true), bools([]int{2}, true, false))})
		}
		return cases
	})
}
