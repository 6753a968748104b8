package tests

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Ports of Caffe2's core_test.py (TestScopes, TestCreateOperator,
// TestOpRegistryKey, TestDeviceOption). The builder's naming tests
// (TestAutoNaming, test_next_blob, AppendNet, Clone) live in netdef's tests.

func TestScopesNameScopeWithOp(t *testing.T) {
	var root devicescope.Scope
	foo := root.WithName("foo")
	op := foo.CreateOperator("Relu", []string{"x"}, []string{"y"})
	if op.Input[0] != "foo/x" || op.Output[0] != "foo/y" {
		t.Fatalf("scoped names: %v -> %v", op.Input, op.Output)
	}
	// Blob references (names taken as they are) ignore the name scope.
	ref := foo.WithNameReset("").CreateOperator("Relu", []string{"x"}, []string{"y"})
	if ref.Input[0] != "x" || ref.Output[0] != "y" {
		t.Fatalf("unscoped names: %v -> %v", ref.Input, ref.Output)
	}
}

func TestScopesNameScopeWithReset(t *testing.T) {
	devicescope.NameScope("foo", func() {
		devicescope.NameScope("bar", func() {
			if got := devicescope.Current().CreateOperator("Relu", []string{"x"}, []string{"y"}).Input[0]; got != "foo/bar/x" {
				t.Fatalf("nested: %q", got)
			}
		})
		if got := devicescope.Current().CreateOperator("Relu", []string{"x"}, []string{"y"}).Input[0]; got != "foo/x" {
			t.Fatalf("after nested: %q", got)
		}
		devicescope.With(devicescope.Current().WithNameReset("bar"), func() {
			if got := devicescope.Current().CreateOperator("Relu", []string{"x"}, []string{"y"}).Input[0]; got != "bar/x" {
				t.Fatalf("reset: %q", got)
			}
		})
		if got := devicescope.Current().CreateOperator("Relu", []string{"x"}, []string{"y"}).Input[0]; got != "foo/x" {
			t.Fatalf("after reset: %q", got)
		}
	})
}

func TestScopesDeviceScope(t *testing.T) {
	var root devicescope.Scope
	// No scope: no device_option field at all.
	op := root.CreateOperator("Relu", []string{"x"}, []string{"y"})
	if op.DeviceOption != nil {
		t.Fatalf("device option set without a scope: %v", op.DeviceOption)
	}
	// An explicit option is copied.
	op = root.CreateOperator("Relu", []string{"x"}, []string{"y"})
	op.DeviceOption = devicescope.CUDA(1)
	if op.GetDeviceOption().Type() != netdef.CUDA || op.GetDeviceOption().GetDeviceId() != 1 {
		t.Fatal("explicit option lost")
	}
	devicescope.DeviceScope(devicescope.CUDA(1), func() {
		op := devicescope.Current().CreateOperator("Relu", []string{"x"}, []string{"y"})
		if op.GetDeviceOption().Type() != netdef.CUDA || op.GetDeviceOption().GetDeviceId() != 1 {
			t.Fatalf("scoped option: %v", op.DeviceOption)
		}
		// An explicit CPU option set afterwards overrides the scope's.
		op.DeviceOption = devicescope.CPU()
		if op.GetDeviceOption().Type() != netdef.CPU {
			t.Fatal("explicit CPU option did not override")
		}
	})
	if op := devicescope.Current().CreateOperator("Relu", []string{"x"}, []string{"y"}); op.DeviceOption != nil {
		t.Fatal("device scope leaked out")
	}
}

func TestScopesNameAndDeviceScopeTogether(t *testing.T) {
	s := devicescope.Scope{}.WithName("foo").WithDevice(devicescope.CUDA(1))
	op := s.CreateOperator("Relu", []string{"x"}, []string{"y"})
	if op.Input[0] != "foo/x" || op.Output[0] != "foo/y" || op.GetDeviceOption().GetDeviceId() != 1 || op.GetDeviceOption().Type() != netdef.CUDA {
		t.Fatalf("got %v", op)
	}
}

func TestCreateOperator(t *testing.T) {
	args := []*netdef.Argument{}
	for _, kv := range []struct {
		k string
		v any
	}{{"arg1", 1}, {"arg2", "2"}, {"arg3", []int{1, 2, 3}}} {
		a, err := netdef.MakeArgument(kv.k, kv.v)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, a)
	}
	op := devicescope.Scope{}.WithDevice(devicescope.CUDA(1)).CreateOperator("Ludicrous", []string{"x"}, []string{"y"}, args...)
	op.Name = proto.String("ludicrous")
	op.ControlInput = []string{"z"}
	op.Engine = proto.String("WARP")
	if op.GetType() != "Ludicrous" || op.GetName() != "ludicrous" || op.Input[0] != "x" || op.Output[0] != "y" ||
		op.ControlInput[0] != "z" || op.GetEngine() != "WARP" ||
		op.GetDeviceOption().Type() != netdef.CUDA || op.GetDeviceOption().GetDeviceId() != 1 {
		t.Fatalf("fields: %v", op)
	}
	if a := netdef.FindArg(op.Arg, "arg1"); a.GetI() != 1 {
		t.Fatalf("arg1 = %v", a)
	}
	if a := netdef.FindArg(op.Arg, "arg2"); string(a.GetS()) != "2" {
		t.Fatalf("arg2 = %v", a)
	}
	if a := netdef.FindArg(op.Arg, "arg3"); !reflect.DeepEqual(a.GetInts(), []int64{1, 2, 3}) {
		t.Fatalf("arg3 = %v", a)
	}
	// testCreateWithNoneKwarg: an argument without a value is an error.
	if _, err := netdef.MakeArgument("arg", nil); err == nil {
		t.Fatal("MakeArgument(nil) succeeded")
	}
	if _, err := netdef.MakeArgument("arg", []any{1, 2.5}); err == nil {
		t.Fatal("a mixed list was accepted")
	}
}

func TestOpRegistryKey(t *testing.T) {
	cases := []struct {
		typ, engine string
		want        bool
	}{
		{"Relu", operators.DefaultEngine, true},
		{"NOEXIST", operators.DefaultEngine, false},
		{"Relu", "NOEXIST", false},
	}
	for _, c := range cases {
		if got := operators.IsOperatorWithEngine(c.typ, c.engine); got != c.want {
			t.Errorf("IsOperatorWithEngine(%q, %q) = %v", c.typ, c.engine, got)
		}
	}
	if !operators.IsOperator("Relu") || operators.IsOperator("NOEXIST") {
		t.Error("IsOperator disagrees")
	}
}
