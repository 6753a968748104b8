package netdef

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"
)

// ArgInt returns an integer (or boolean) argument.
func ArgInt(name string, v int64) *Argument { return &Argument{Name: &name, I: &v} }

// ArgBool returns a boolean argument, stored as 0 or 1 in the integer field.
func ArgBool(name string, v bool) *Argument {
	var i int64
	if v {
		i = 1
	}
	return ArgInt(name, i)
}

// ArgFloat returns a float argument.
func ArgFloat(name string, v float32) *Argument { return &Argument{Name: &name, F: &v} }

// ArgString returns a string argument (stored as bytes in field s).
func ArgString(name, v string) *Argument { return &Argument{Name: &name, S: []byte(v)} }

// ArgInts returns an integer-list argument.
func ArgInts(name string, v ...int64) *Argument {
	return &Argument{Name: &name, Ints: append([]int64{}, v...)}
}

// ArgFloats returns a float-list argument.
func ArgFloats(name string, v ...float32) *Argument {
	return &Argument{Name: &name, Floats: append([]float32{}, v...)}
}

// ArgStrings returns a string-list argument.
func ArgStrings(name string, v ...string) *Argument {
	a := &Argument{Name: &name}
	for _, s := range v {
		a.Strings = append(a.Strings, []byte(s))
	}
	return a
}

// ArgNet returns an argument holding a nested net.
func ArgNet(name string, n *NetDef) *Argument { return &Argument{Name: &name, N: n} }

// MakeArgument maps a Go value to an Argument the way Caffe2's MakeArgument
// maps Python values: floats to f, integers and booleans to i, strings and
// byte slices to s, a NetDef to n, other protobuf messages to s (serialized),
// and slices to the matching repeated field. A nil value, a mixed list or an
// unsupported type is an error naming the argument.
func MakeArgument(name string, value any) (*Argument, error) {
	switch v := value.(type) {
	case nil:
		return nil, fmt.Errorf("netdef: argument %q: unknown argument type <nil>", name)
	case float32:
		return ArgFloat(name, v), nil
	case float64:
		return ArgFloat(name, float32(v)), nil
	case int:
		return ArgInt(name, int64(v)), nil
	case int8:
		return ArgInt(name, int64(v)), nil
	case int16:
		return ArgInt(name, int64(v)), nil
	case int32:
		return ArgInt(name, int64(v)), nil
	case int64:
		return ArgInt(name, v), nil
	case uint8:
		return ArgInt(name, int64(v)), nil
	case uint16:
		return ArgInt(name, int64(v)), nil
	case uint32:
		return ArgInt(name, int64(v)), nil
	case uint64:
		if v > math.MaxInt64 {
			return nil, fmt.Errorf("netdef: argument %q: value %d overflows int64", name, v)
		}
		return ArgInt(name, int64(v)), nil
	case bool:
		return ArgBool(name, v), nil
	case string:
		return ArgString(name, v), nil
	case []byte:
		return &Argument{Name: &name, S: append([]byte{}, v...)}, nil
	case *NetDef:
		return ArgNet(name, v), nil
	case []float32:
		return ArgFloats(name, v...), nil
	case []float64:
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return ArgFloats(name, f...), nil
	case []int:
		n := make([]int64, len(v))
		for i, x := range v {
			n[i] = int64(x)
		}
		return ArgInts(name, n...), nil
	case []int32:
		n := make([]int64, len(v))
		for i, x := range v {
			n[i] = int64(x)
		}
		return ArgInts(name, n...), nil
	case []int64:
		return ArgInts(name, v...), nil
	case []bool:
		n := make([]int64, len(v))
		for i, x := range v {
			if x {
				n[i] = 1
			}
		}
		return ArgInts(name, n...), nil
	case []string:
		return ArgStrings(name, v...), nil
	case [][]byte:
		a := &Argument{Name: &name}
		for _, s := range v {
			a.Strings = append(a.Strings, append([]byte{}, s...))
		}
		return a, nil
	case []*NetDef:
		return &Argument{Name: &name, Nets: v}, nil
	case proto.Message:
		b, err := proto.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("netdef: argument %q: %w", name, err)
		}
		return &Argument{Name: &name, S: b}, nil
	}
	return nil, fmt.Errorf("netdef: argument %q: unknown argument type %T", name, value)
}

// FindArg returns the argument called name, or nil.
func FindArg(args []*Argument, name string) *Argument {
	for _, a := range args {
		if a.GetName() == name {
			return a
		}
	}
	return nil
}

// NewOperator builds an OperatorDef with the given type, blob names and
// arguments, taking the names as they are (no name scope applied).
func NewOperator(typ string, inputs, outputs []string, args ...*Argument) *OperatorDef {
	return &OperatorDef{
		Type:   proto.String(typ),
		Input:  append([]string{}, inputs...),
		Output: append([]string{}, outputs...),
		Arg:    args,
	}
}

// NewDeviceOption returns an option with its type and id set, as Caffe2's
// core.DeviceOption always sets both.
func NewDeviceOption(deviceType DeviceType, deviceID int32) *DeviceOption {
	return &DeviceOption{DeviceType: proto.Int32(int32(deviceType)), DeviceId: proto.Int32(deviceID)}
}
