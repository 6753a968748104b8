// Package logic registers Caffe2's comparison and logical operators on the
// CPU:
//
//   - comparisons EQ, NE, LT, LE, GT, GE of BOOL, INT32, INT64, FLOAT or
//     DOUBLE tensors, giving BOOL;
//   - logical And, Or, Xor of BOOL tensors, and Not;
//   - Where (select between two tensors by a BOOL condition, optionally
//     one condition per row with broadcast_on_rows);
//   - IsNaN (UINT8 flags), NanCheck (an identity that fails on NaN or
//     infinity, and is its own gradient) and ReplaceNaN.
//
// The two-input operators broadcast as Add and Mul do (operators/math's
// Broadcaster): with broadcast=1 Caffe2's legacy rule, B being a block of
// A's dimensions starting at axis (or axis_str in order), and otherwise
// NumPy broadcasting. Both inputs must have one element type. None of the
// operators but NanCheck has a gradient: Caffe2 forbids one.
//
// Importing the package (for its side effects) registers the operators,
// their schemas and shape functions.
package logic
