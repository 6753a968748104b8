// Package netdef holds caffe2go's protobuf schema and the tools that build,
// read and write networks described in it.
//
// # Messages
//
// caffe2.proto is a wire-compatible copy of Caffe2's late-PyTorch
// caffe2.proto (proto2, package caffe2): NetDef, OperatorDef, Argument,
// DeviceOption, ExecutionStep, PlanDef, TensorProto, BlobProto and the rest.
// Field numbers match every Caffe2 release, so nets and blobs written by
// Caffe2 decode here and the other way round. The Go code in caffe2.pb.go is
// generated (see generate.go). The legacy field name cuda_gpu_id of
// DeviceOption field 2 is called device_id here; the text reader accepts both.
//
// args.go has small constructors for arguments and operators (ArgInt,
// ArgFloats, MakeArgument, NewOperator, NewDeviceOption, …).
//
// # Builders
//
// Net mirrors Caffe2's Python core.Net: it wraps a NetDef, gives it a
// process-unique name ("net", "net_1", …), records undeclared operator inputs
// as external inputs, generates blob names (NextName, NextBlob) and clones
// nets with blob renaming (Clone, ClonePartial). SSA computes the versioned
// (static single assignment) view of a net that autodiff and ClonePartial
// use. Step and Plan build ExecutionSteps and PlanDefs.
//
// Builders take blob names exactly as given: name scopes and device scopes
// are applied by the package above (devicescope), which keeps this package
// free of any state but the process-wide net and step name registries.
//
// # I/O
//
// MarshalNetDef and UnmarshalNetDef use the binary wire format; marshalling
// is deterministic and writes fields in field-number order, as Caffe2's C++
// serializer does, so re-encoding a decoded Caffe2 file reproduces its bytes.
// MarshalText and UnmarshalText use the protobuf text format (.pbtxt).
// ReadNetDef, WriteNetDef, ReadPlanDef and WritePlanDef pick the format from
// the file extension. DOT renders a net as a Graphviz graph.
package netdef
