// Package tests holds caffe2go's cross-package integration and conformance
// tests: ports of Caffe2's own Python test suites (workspace, core,
// autodiff), the serialized operator-test conformance harness, and
// end-to-end training checks. It has no non-test code besides this file.
package tests
