package netdef_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

func TestMakeArgument(t *testing.T) {
	name := proto.String("a")
	sub := &netdef.NetDef{Name: proto.String("sub")}
	dev := netdef.NewDeviceOption(netdef.CUDA, 1)
	devBytes, err := proto.Marshal(dev)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		value any
		want  *netdef.Argument
	}{
		{float32(1.5), &netdef.Argument{Name: name, F: proto.Float32(1.5)}},
		{2.5, &netdef.Argument{Name: name, F: proto.Float32(2.5)}},
		{7, &netdef.Argument{Name: name, I: proto.Int64(7)}},
		{int8(-3), &netdef.Argument{Name: name, I: proto.Int64(-3)}},
		{uint32(9), &netdef.Argument{Name: name, I: proto.Int64(9)}},
		{true, &netdef.Argument{Name: name, I: proto.Int64(1)}},
		{false, &netdef.Argument{Name: name, I: proto.Int64(0)}},
		{"NCHW", &netdef.Argument{Name: name, S: []byte("NCHW")}},
		{[]byte{0, 1}, &netdef.Argument{Name: name, S: []byte{0, 1}}},
		{sub, &netdef.Argument{Name: name, N: sub}},
		{dev, &netdef.Argument{Name: name, S: devBytes}},
		{[]float32{1, 2}, &netdef.Argument{Name: name, Floats: []float32{1, 2}}},
		{[]float64{0.5}, &netdef.Argument{Name: name, Floats: []float32{0.5}}},
		{[]int{1, 2, 3}, &netdef.Argument{Name: name, Ints: []int64{1, 2, 3}}},
		{[]int32{4}, &netdef.Argument{Name: name, Ints: []int64{4}}},
		{[]int64{5}, &netdef.Argument{Name: name, Ints: []int64{5}}},
		{[]bool{true, false}, &netdef.Argument{Name: name, Ints: []int64{1, 0}}},
		{[]string{"x", "y"}, &netdef.Argument{Name: name, Strings: [][]byte{[]byte("x"), []byte("y")}}},
		{[][]byte{{1}}, &netdef.Argument{Name: name, Strings: [][]byte{{1}}}},
		{[]*netdef.NetDef{sub}, &netdef.Argument{Name: name, Nets: []*netdef.NetDef{sub}}},
	}
	for _, tc := range tests {
		got, err := netdef.MakeArgument("a", tc.value)
		if err != nil {
			t.Errorf("MakeArgument(%T %v): %v", tc.value, tc.value, err)
			continue
		}
		if !proto.Equal(got, tc.want) {
			t.Errorf("MakeArgument(%T %v) = %v, want %v", tc.value, tc.value, got, tc.want)
		}
	}
	for _, bad := range []any{nil, []any{1, 2.0}, struct{}{}, uint64(1 << 63), map[string]int{}} {
		_, err := netdef.MakeArgument("bad_arg", bad)
		if err == nil {
			t.Errorf("MakeArgument(%T %v): no error", bad, bad)
		} else if !strings.Contains(err.Error(), "bad_arg") {
			t.Errorf("error %q does not name the argument", err)
		}
	}
}

// Port of core_test.py TestCreateOperator.testCreate (name scopes and device
// scopes live in devicescope; here fields are set directly).
func TestNewOperator(t *testing.T) {
	op := netdef.NewOperator("Ludicrous", []string{"x"}, []string{"y"},
		netdef.ArgInt("arg1", 1), netdef.ArgString("arg2", "2"), netdef.ArgInts("arg3", 1, 2, 3))
	op.Name = proto.String("ludicrous")
	op.ControlInput = []string{"z"}
	op.DeviceOption = netdef.NewDeviceOption(netdef.CUDA, 1)
	op.Engine = proto.String("WARP")
	if op.GetType() != "Ludicrous" || op.GetInput()[0] != "x" || op.GetOutput()[0] != "y" {
		t.Errorf("op = %v", op)
	}
	if op.GetDeviceOption().Type() != netdef.CUDA || op.GetDeviceOption().GetDeviceId() != 1 {
		t.Errorf("device option = %v", op.GetDeviceOption())
	}
	if netdef.FindArg(op.Arg, "arg1").GetI() != 1 ||
		string(netdef.FindArg(op.Arg, "arg2").GetS()) != "2" ||
		len(netdef.FindArg(op.Arg, "arg3").GetInts()) != 3 {
		t.Errorf("args = %v", op.Arg)
	}
	if netdef.FindArg(op.Arg, "missing") != nil {
		t.Errorf("FindArg(missing) != nil")
	}
	// No device scope: the device option stays absent on the wire.
	plain := netdef.NewOperator("Relu", []string{"x"}, []string{"y"})
	if plain.DeviceOption != nil || plain.ProtoReflect().Has(plain.ProtoReflect().Descriptor().Fields().ByName("device_option")) {
		t.Errorf("NewOperator set a device option")
	}
	// Inputs are copied.
	in := []string{"a"}
	cp := netdef.NewOperator("Relu", in, nil)
	in[0] = "changed"
	if cp.Input[0] != "a" {
		t.Errorf("NewOperator shares its input slice")
	}
	if netdef.ArgBool("b", true).GetI() != 1 || netdef.ArgFloats("f", 1, 2).GetFloats()[1] != 2 ||
		string(netdef.ArgStrings("s", "p", "q").GetStrings()[1]) != "q" || netdef.ArgFloat("g", 3).GetF() != 3 {
		t.Errorf("Arg constructors")
	}
	if netdef.CPU != 0 || netdef.CUDA != 1 {
		t.Errorf("CPU, CUDA = %d, %d", netdef.CPU, netdef.CUDA)
	}
}
