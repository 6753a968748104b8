// Package cuda is the CUDA device: NVIDIA GPUs as devicescope devices of
// type netdef.CUDA (gpu_0, gpu_1, …), built on the CUDA driver API through
// gorgonia.org/cu.
//
// The device code needs the cuda build tag and cgo (go build -tags cuda),
// and a machine with an NVIDIA driver to run: gorgonia.org/cu initializes
// the driver when the program starts and exits when it cannot. Without the
// tag the package holds only what needs no GPU — the allocator's size
// classes, the kernel cache's keys, the compiler options for a device
// architecture — and registers nothing, so devicescope.NumDevices(CUDA) is
// 0.
//
// # Device
//
// Each GPU is one Device: its primary context, one stream, and one worker
// goroutine locked to an OS thread on which the context is current. Every
// call into the driver, cuBLAS, cuDNN or NCCL for the device runs on that
// worker (Exec), in order on the stream, so kernels and copies are
// asynchronous to the host and ordered with each other; Synchronize waits
// for the stream. Executors' tasks (Submit) run on a pool of goroutines
// that hand their GPU work to the worker.
//
// # Memory
//
// Tensors on a GPU keep their elements in a Block of device memory, which
// no Go slice reaches (the device implements devicescope.Allocator and
// devicescope.Copier). A caching allocator hands out blocks by size class
// and takes them back when the garbage collector finds them unreachable, so
// a net that runs again allocates nothing on the device or the Go heap.
// When the device runs out of memory the allocator collects garbage, frees
// the cache and tries once more before it reports the failure.
//
// # Kernels
//
// CUDA C sources are compiled with NVRTC for the device's architecture the
// first time a module is loaded, and the PTX is cached in memory and under
// the user cache directory (caffe2go/cuda), keyed by the source, the
// options and the architecture. Kernels launch with an argument block in C
// memory that each caller keeps, so a launch allocates nothing.
package cuda
