package protoarg

import (
	"fmt"

	"go.starlark.net/starlark"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/ndarray"
)

// Arguments reads a list of Argument messages (an op's arg keyword,
// utils.ArgsToDict's argument) as copies.
func Arguments(v starlark.Value) ([]*netdef.Argument, error) {
	iter, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("arg must be a list of Arguments, got %s", v.Type())
	}
	var out []*netdef.Argument
	it := iter.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		m, ok := x.(*caffe2pb2.Message)
		a, isArg := (*netdef.Argument)(nil), false
		if ok {
			a, isArg = m.Proto().(*netdef.Argument)
		}
		if !isArg {
			return nil, fmt.Errorf("arg must be a list of Arguments, got a %s element", x.Type())
		}
		out = append(out, proto.Clone(a).(*netdef.Argument))
	}
	return out, nil
}

// MakeArgument is Caffe2's utils.MakeArgument for a Starlark value.
func MakeArgument(key string, v starlark.Value) (*netdef.Argument, error) {
	g, err := goArgValue(v)
	if err != nil {
		return nil, fmt.Errorf("Unknown argument type: key=%s value=%s, value type=%s", key, v, v.Type())
	}
	return netdef.MakeArgument(key, g)
}

// goArgValue converts a Starlark value to the Go value netdef.MakeArgument
// takes: a scalar, a blob name, a copy of a NetDef or message, an array's
// elements, or a list of one kind of them.
func goArgValue(v starlark.Value) (any, error) {
	switch x := v.(type) {
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		i, ok := x.Int64()
		if !ok {
			return nil, fmt.Errorf("integer too large")
		}
		return i, nil
	case starlark.Float:
		return float64(x), nil
	case starlark.String:
		return string(x), nil
	case starlark.Bytes:
		return []byte(x), nil
	case convert.BlobNamer:
		return x.BlobName(), nil
	case netdef.NetSource:
		return proto.Clone(x.Proto()), nil
	case *caffe2pb2.Message:
		return proto.Clone(x.Proto()), nil
	case ndarray.TensorValue:
		t := x.Tensor()
		switch ndarray.KindOf(t.DataType()) {
		case ndarray.KindFloat:
			if t.DataType() == blob.Float32 {
				return append([]float32{}, blob.Data[float32](t)...), nil
			}
			return append([]float64{}, ndarray.FloatsOf(t)...), nil
		case ndarray.KindString:
			return append([]string{}, blob.Data[string](t)...), nil
		case ndarray.KindBool:
			return append([]bool{}, blob.Data[bool](t)...), nil
		}
		return append([]int64{}, ndarray.IntsOf(t)...), nil
	case *starlark.List, starlark.Tuple:
		return goArgList(x.(starlark.Indexable))
	}
	return nil, fmt.Errorf("unsupported")
}

// goArgList converts a list whose elements are all floats, all ints, all
// names, all bytes, all nets or all messages.
func goArgList(seq starlark.Indexable) (any, error) {
	n := seq.Len()
	all := func(pred func(starlark.Value) bool) bool {
		for i := 0; i < n; i++ {
			if !pred(seq.Index(i)) {
				return false
			}
		}
		return true
	}
	switch {
	case all(func(v starlark.Value) bool { _, ok := v.(starlark.Float); return ok }):
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(seq.Index(i).(starlark.Float))
		}
		return out, nil
	case all(func(v starlark.Value) bool { _, ok := convert.IntOf(v); return ok }):
		out := make([]int64, n)
		for i := range out {
			out[i], _ = convert.IntOf(seq.Index(i))
		}
		return out, nil
	case all(func(v starlark.Value) bool {
		_, s := v.(starlark.String)
		_, r := v.(convert.BlobNamer)
		return s || r
	}):
		out := make([]string, n)
		for i := range out {
			if r, ok := seq.Index(i).(convert.BlobNamer); ok {
				out[i] = r.BlobName()
			} else {
				out[i] = string(seq.Index(i).(starlark.String))
			}
		}
		return out, nil
	case all(func(v starlark.Value) bool { _, ok := v.(starlark.Bytes); return ok }):
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte(seq.Index(i).(starlark.Bytes))
		}
		return out, nil
	case all(func(v starlark.Value) bool { _, ok := NetDef(v); return ok }):
		out := make([]*netdef.NetDef, n)
		for i := range out {
			d, _ := NetDef(seq.Index(i))
			out[i] = proto.Clone(d).(*netdef.NetDef)
		}
		return out, nil
	case all(func(v starlark.Value) bool { _, ok := v.(*caffe2pb2.Message); return ok }):
		out := make([][]byte, n)
		for i := range out {
			b, err := netdef.Marshal(seq.Index(i).(*caffe2pb2.Message).Proto())
			if err != nil {
				return nil, err
			}
			out[i] = b
		}
		return out, nil
	}
	return nil, fmt.Errorf("mixed list")
}

// NetDef returns the NetDef of a Net or of a NetDef message.
func NetDef(v starlark.Value) (*netdef.NetDef, bool) {
	switch x := v.(type) {
	case netdef.NetSource:
		return x.Proto(), true
	case *caffe2pb2.Message:
		d, ok := x.Proto().(*netdef.NetDef)
		return d, ok
	}
	return nil, false
}

// NetArg reads the net argument of the function fnName: a Net or a NetDef.
func NetArg(fnName string, v starlark.Value) (*netdef.NetDef, error) {
	if d, ok := NetDef(v); ok {
		return d, nil
	}
	return nil, fmt.Errorf("%s: want a Net or a NetDef, got %s", fnName, v.Type())
}

// DeviceOption reads an optional DeviceOption argument (None gives nil).
func DeviceOption(v starlark.Value) (*netdef.DeviceOption, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	if m, ok := v.(*caffe2pb2.Message); ok {
		if d, ok := m.Proto().(*netdef.DeviceOption); ok {
			return devicescope.Clone(d), nil
		}
	}
	return nil, fmt.Errorf("device_option must be a DeviceOption, got %s", v.Type())
}
