// Package binding is the machinery of caffe2go's Starlark modules: a
// module's or a type's built-in functions are declared with their
// documentation (which help shows), run behind a guard that turns a Go
// panic into a script error, and share a per-interpreter State on the
// Starlark thread.
package binding
