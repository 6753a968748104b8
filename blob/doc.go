// Package blob holds the values a workspace stores under names: Tensor (a
// typed, shaped array on a device) and Blob (a named slot holding a tensor,
// a byte string, or another value such as a mutex or a DB cursor), and their
// conversion to and from Caffe2's TensorProto and BlobProto messages.
//
// A tensor's elements live in a Go slice of the element type ([]float32,
// []int64, []string, …); Data returns it without copying, so kernels work on
// plain slices. Resize keeps the storage while the element count does not
// grow, which is what lets a net run with no allocations in steady state.
//
// # The memory budget
//
// Sizes often come from input a program does not control: the dims of a
// TensorProto read from a file, an operator's arguments, the shapes that
// shape inference derives from them. One memory budget keeps any of them
// from killing the process with a fatal out-of-memory: every tensor
// allocated in Go memory (New, Init, Resize, CopyFrom, the deserializers)
// is checked against it first, and so is the scratch memory of kernels
// whose size comes from input (CheckAllocation, CheckElements).
// A request is refused when it alone exceeds the budget, or, from 1 MiB
// on, when it would take the Go heap's objects past the budget even after
// a garbage collection; the error wraps ErrOverBudget and says the bytes
// asked for, those in use and the budget, and the caller's error names
// what it was for (the blob, the operator and its argument).
//
// The budget is, in order of precedence: what SetMemoryBudget set; what
// the environment variable CAFFE2GO_MEMORY_BUDGET says (bytes with an
// optional KiB, MiB, GiB or TiB, or a percentage: "6GiB", "25%"); else
// half of AvailableMemory, the least of the physical memory, the cgroup's
// memory limit, the address space left by ulimit -v and GOMEMLIMIT.
// MemoryBudget reports it. Tensors in a device's own memory are bounded
// by the device's allocator instead, except that dims read from a proto
// are checked against the budget wherever the tensor goes.
package blob
