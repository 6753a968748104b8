// Package ndarray is NumPy's semantics on caffe2go tensors, shared by the
// np module and the modules that take arrays: element types with NumPy's
// names, kinds and promotion; conversions between Starlark values and
// tensors; shapes, broadcasting and the gathering of elements; and NumPy's
// printing of arrays.
package ndarray
