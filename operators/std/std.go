// Package std links Caffe2's standard operator set: importing it (for its
// side effects) registers every operator family that ships with caffe2go.
// Package workspace imports it, so users of workspace need not. Built with
// the cuda tag, it also registers the CUDA operators (operators/cuda).
package std

import (
	// Each family registers its operators, schemas and gradients in init.
	_ "github.com/caffe2go/caffe2go/operators/comm"
	_ "github.com/caffe2go/caffe2go/operators/convpool"
	_ "github.com/caffe2go/caffe2go/operators/detect"
	_ "github.com/caffe2go/caffe2go/operators/fill"
	_ "github.com/caffe2go/caffe2go/operators/gloo"
	_ "github.com/caffe2go/caffe2go/operators/image"
	_ "github.com/caffe2go/caffe2go/operators/logic"
	_ "github.com/caffe2go/caffe2go/operators/loss"
	_ "github.com/caffe2go/caffe2go/operators/math"
	_ "github.com/caffe2go/caffe2go/operators/nn"
	_ "github.com/caffe2go/caffe2go/operators/norm"
	_ "github.com/caffe2go/caffe2go/operators/optim"
	_ "github.com/caffe2go/caffe2go/operators/quant"
	_ "github.com/caffe2go/caffe2go/operators/reduce"
	_ "github.com/caffe2go/caffe2go/operators/rnn"
	_ "github.com/caffe2go/caffe2go/operators/sequence"
	_ "github.com/caffe2go/caffe2go/operators/sparse"
	_ "github.com/caffe2go/caffe2go/operators/tensor"
)
