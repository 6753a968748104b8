// Package protoarg reads Starlark arguments as caffe2.proto messages:
// operator arguments (Caffe2's utils.MakeArgument), lists of Argument
// messages, nets (a core.Net or a NetDef) and device options.
package protoarg
