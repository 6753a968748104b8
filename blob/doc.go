// Package blob holds the values a workspace stores under names: Tensor (a
// typed, shaped array on a device) and Blob (a named slot holding a tensor,
// a byte string, or another value such as a mutex or a DB cursor), and their
// conversion to and from Caffe2's TensorProto and BlobProto messages.
//
// A tensor's elements live in a Go slice of the element type ([]float32,
// []int64, []string, …); Data returns it without copying, so kernels work on
// plain slices. Resize keeps the storage while the element count does not
// grow, which is what lets a net run with no allocations in steady state.
package blob
