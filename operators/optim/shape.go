package optim

import "github.com/caffe2go/caffe2go/operators"

func init() {
	// The updates write a parameter and its moments in place: their
	// outputs have the shapes of those inputs, and the gradient must match
	// the parameter.
	operators.MustRegisterShapeFunc("MomentumSGDUpdate", operators.SameShapes([]int{0, 1, 3}, 0, 1, 3))
	operators.MustRegisterShapeFunc("Adam", operators.SameShapes([]int{0, 1, 2, 3}, 0, 1, 2))
	operators.MustRegisterShapeFunc("Adagrad", operators.SameShapes([]int{0, 1, 2}, 0, 1))
}
