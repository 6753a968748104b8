// Package operators is the operator runtime: the registry of
// implementations keyed by (type, device type, engine), operator schemas,
// the Operator interface and its Base, the gradient registry, and
// AddGradientOperators, which appends a net's backward pass.
//
// Implementations live in family subpackages (operators/math, operators/nn,
// operators/fill, operators/loss, operators/optim, operators/tensor) that
// register themselves in init, the way database/sql drivers do; importing
// operators/std links the standard set. A new operator is a schema, a
// registration and a kernel (plus, optionally, a gradient maker and a shape
// function); a new device type is a registration under that device's type.
//
// Shape functions (RegisterShapeFunc) say how an operator's output shapes
// follow from its inputs'. InferShapes walks a net with them, from the
// shapes of the blobs that exist before it runs; dims it cannot know yet
// (the batch of an input not fed) are AnyDim, and it reports only what no
// value of those could fix, so that workspace.CreateNet can reject layers
// that do not fit together, naming the operator and the shapes.
//
// Arguments and input dims are untrusted: a net may come from a file. An
// operator's outputs get their storage through blob.Tensor.Init, which the
// memory budget bounds (see package blob); scratch sized by arguments or
// by dims is checked with blob.CheckAllocation; a rank a shape function
// takes from an argument alone goes through AnyDims. A tensor with no
// elements may have any dims beside its 0 ([2^31, 0, 3]): a kernel loops
// over, and sizes scratch by, what its input or output holds, not by those
// dims. Create refuses an operator that writes two outputs to one blob.
//
// Operators reach blobs through the small Workspace interface defined here,
// which package workspace implements, so this package never imports it.
package operators
