// Command allreducebench times Gloo all-reduces between processes on this
// machine through caffe2go's Allreduce operator (engine GLOO), for the
// comparison with PyTorch's torch.distributed on its Gloo backend that
// compare.py runs (allreduce_torch.py is the PyTorch side, and
// cxx/allreduce_gloo.cc the same all-reduce in plain C++ on libgloo, the
// library both call).
//
// Start one process per rank, all with the same -size and -store:
//
//	go build -tags gloo -o /tmp/arb ./operators/gloo/allreducebench
//	for r in 0 1; do /tmp/arb -rank $r -size 2 -store /tmp/s & done; wait
//
// Each rank all-reduces a float32 tensor of each -mb size -iters times
// after one warm-up all-reduce; rank 0 prints one JSON line per size with
// the median seconds per all-reduce. It needs a build with -tags gloo
// (and libgloo-dev).
package main
