// Package workspace is Caffe2's workspace runtime: named blobs and nets in
// workspaces, the process-wide registry of named workspaces with a current
// one ("default" at start), net instantiation and the executors that run
// nets, plans, and benchmarking.
//
// Package-level functions (FeedBlob, FetchBlob, CreateNet, RunNet, …) act on
// the current workspace, as caffe2.python.workspace's module functions do.
// Every one is also a method on *Workspace for programs that hold workspaces
// explicitly or use several from different goroutines.
//
// A net is instantiated once by CreateNet: every operator resolves its
// blobs, checks its schema and picks its implementation then, so RunNet does
// no lookups and, in steady state, no allocations. Two executors run nets:
// "simple" (operators in order; the default) and "dag" (also registered as
// "async_scheduling" and the other asynchronous Caffe2 names), which runs
// ready operators concurrently on their devices' workers. Both give the same
// results.
//
// Errors name the net, the operator (index, type, name) and the blob
// involved. An operator that panics is reported as an error; nothing panics
// across this package's API, and a failed call leaves the workspace usable.
package workspace
