package caffe2pb2

import (
	"go.starlark.net/starlark"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/script/internal/binding"
)

// Module is the caffe2_pb2 module.
var Module = binding.NewModule(binding.ModuleSpec{
	Name: "caffe2_pb2",
	Doc: "caffe2_pb2: the message types of caffe2.proto.\n\n" +
		"Each type is a constructor taking fields as keywords, e.g. caffe2_pb2.OperatorDef(type = \"Relu\", input = [\"x\"]);\n" +
		"nested enum values are its attributes (caffe2_pb2.TensorProto.FLOAT). CPU and CUDA are the device types.",
	Values: func() starlark.StringDict {
		d := starlark.StringDict{
			"CPU":  starlark.MakeInt(int(netdef.CPU)),
			"CUDA": starlark.MakeInt(int(netdef.CUDA)),
		}
		for _, t := range protoTypes {
			d[t.name] = t
		}
		return d
	},
})

// protoTypes are the message types of caffe2.proto that caffe2_pb2 makes.
var protoTypes = []messageType{
	{func() proto.Message { return &netdef.NetDef{} }, "NetDef"},
	{func() proto.Message { return &netdef.OperatorDef{} }, "OperatorDef"},
	{func() proto.Message { return &netdef.Argument{} }, "Argument"},
	{func() proto.Message { return &netdef.DeviceOption{} }, "DeviceOption"},
	{func() proto.Message { return &netdef.PlanDef{} }, "PlanDef"},
	{func() proto.Message { return &netdef.ExecutionStep{} }, "ExecutionStep"},
	{func() proto.Message { return &netdef.TensorProto{} }, "TensorProto"},
	{func() proto.Message { return &netdef.TensorProtos{} }, "TensorProtos"},
	{func() proto.Message { return &netdef.TensorShape{} }, "TensorShape"},
	{func() proto.Message { return &netdef.BlobProto{} }, "BlobProto"},
}

func init() {
	for _, t := range protoTypes {
		binding.SetDoc("caffe2_pb2."+t.name, t.name+"(**fields)\n\nReturns a new caffe2."+t.name+" message with the given fields set.")
	}
}
