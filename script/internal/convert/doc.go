// Package convert reads Starlark values as the Go values caffe2go's
// bindings take (ints, bytes, floats, blob names) and makes the Starlark
// values they return (string lists, structs, floats of float32s).
package convert
