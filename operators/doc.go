// Package operators is the operator runtime: the registry of
// implementations keyed by (type, device type, engine), operator schemas,
// the Operator interface and its Base, the gradient registry, and
// AddGradientOperators, which appends a net's backward pass.
//
// Implementations live in family subpackages (operators/math, operators/nn,
// operators/fill, operators/loss, operators/optim, operators/tensor) that
// register themselves in init, the way database/sql drivers do; importing
// operators/std links the standard set. A new operator is a schema, a
// registration and a kernel; a new device type is a registration under that
// device's type.
//
// Operators reach blobs through the small Workspace interface defined here,
// which package workspace implements, so this package never imports it.
package operators
