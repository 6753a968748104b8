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
// # Cancellation
//
// RunNetContext, RunPlanContext and Net.RunContext take a context.Context:
// once it is done no further operator, net run or plan iteration starts,
// the operators already running finish, and the error wraps ctx.Err(). The
// blobs keep what the finished operators wrote, so a program can stop on
// Ctrl-C and still save its last complete step. RunNet and RunPlan are the
// same calls with context.Background().
//
// # Errors
//
// Errors name the net, the operator (index, type, name) and the blob
// involved. An operator that panics is reported as an error; nothing panics
// across this package's API, and a failed call leaves the workspace usable.
// The common mistakes wrap a sentinel for errors.Is: ErrBlobNotFound,
// ErrNetNotFound, ErrUnknownOperator, ErrCorrupt.
//
// # Store
//
// SaveNet, LoadNet and the checkpoint calls use a persist.Store opened on
// first use: in <root>/caffe2go.store for a workspace given a root folder,
// otherwise in $CAFFE2GO_STORE or under the user's cache directory (see
// Workspace.StoreDir).
package workspace
