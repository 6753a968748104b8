//go:build cuda && cgo

package std

import "github.com/caffe2go/caffe2go/operators/cuda"

// In cuda builds the standard set also holds the CUDA operators, and every
// other CPU operator runs on a GPU through its host fallback. This init
// runs after the families above have registered.
func init() { cuda.RegisterHostFallbacks() }
