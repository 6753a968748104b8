// Package workspace is the workspace module of caffe2go scripts: the
// package-level API of caffe2go's package workspace with the names and
// keywords of Caffe2's caffe2.python.workspace (FeedBlob, FetchBlob,
// CreateNet, RunNet, RunPlan, SaveNet, LoadNet, …) and workspace.blobs, a
// dict-like view of the current workspace's blobs. Like Caffe2's, it acts
// on the process-wide current workspace.
package workspace
