// Package gloo registers the operators of multi-host training: the
// rendezvous stores and, built with the gloo tag (and cgo, and Debian's
// libgloo-dev), Gloo's collectives across processes and machines, as
// Caffe2's contrib/gloo has them.
//
// # Operators
//
//   - FileStoreHandlerCreate(path, prefix) and RedisStoreHandlerCreate(host,
//     port, prefix) output a store handler blob: a key-value Store the
//     ranks meet through. Both are plain Go and need no build tag. Keys are
//     set once; a key found already set (a store directory or Redis
//     database left from an earlier run) is refused with ErrKeyExists, so a
//     rendezvous never dials an old run's addresses.
//   - CreateCommonWorld(store) → comm_world, engine GLOO, with size, rank,
//     timeout_ms (default 30 s), transport ("tcp"), interface or hostname:
//     meets the other ranks through the store, under the operator's name
//     as key prefix, and connects to each of them. A rank that never
//     arrives fails it with a timeout naming the missing keys.
//   - Allreduce(comm_world, X…) → X… sums every rank's tensors (float,
//     double, int32, int64; several inputs are summed here first),
//     Broadcast(comm_world, X…) → X… copies rank root's, Allgather(
//     comm_world, X…) → Y gathers them into one 1-D tensor rank by rank,
//     Barrier(comm_world) waits for every rank; all with engine GLOO, in
//     place where Caffe2's are, each with a timeout_ms of its own
//     (default: the world's).
//   - DestroyCommonWorld(comm_world) → comm_world closes the connections.
//
// # Faults
//
// Every collective has a deadline. A peer that exits or is killed fails
// the collectives that need it at once ("Connection reset by peer"); one
// that hangs fails them when the deadline passes ("Timed out waiting …").
// The error is a *CollectiveError naming the operation, the rank and
// Gloo's cause (errors.Is(err, ErrTimeout) for deadlines). The first
// failure breaks the common world: its connections are closed, which
// makes the other ranks fail at once too, and every later collective on
// it fails with ErrBroken; all ranks must create a new world (through a
// fresh store or prefix).
//
// # Concurrency
//
// Collectives on one world may run at the same time (a dag net's
// all-reduces of several gradients): each operator has a Gloo tag made
// from its type and blob names, the same in every process that builds
// the same net.
//
// # Building
//
// The binding is a small C++ shim (shim.cc) compiled by cgo with the gloo
// tag: go test -tags gloo ./operators/gloo/ after apt-get install
// libgloo-dev. Without the tag the package registers the stores and the
// schemas only, and nets with engine GLOO fail to create, naming the
// missing implementation.
package gloo
