// Package core is the core module of caffe2go scripts: graph building, as
// Caffe2's caffe2.python.core. Its values, a file each, are Net (a net
// builder whose attributes are the registered operator types),
// BlobReference, GradientSlice, the dict of gradients that
// AddGradientOperators returns, Step (core.ExecutionStep) and Plan. The
// device and name scopes it sets are the process-wide ones of package
// devicescope.
package core
