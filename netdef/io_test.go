package netdef_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

// modelZoo lists the Caffe2 model-zoo predict nets in the repository's
// testdata/caffe2-models.
var modelZoo = []struct {
	model    string
	ops      int
	lastType string // "" = not checked
}{
	{"squeezenet", 66, "Softmax"},
	{"resnet50", 175, "Softmax"},
	{"bvlc_googlenet", 142, "Softmax"},
	{"densenet121", 668, ""},
}

func zooPath(model string) string {
	return filepath.Join("..", "testdata", "caffe2-models", model, "predict_net.pb")
}

func TestModelZooRoundTrip(t *testing.T) {
	for _, tc := range modelZoo {
		t.Run(tc.model, func(t *testing.T) {
			raw, err := os.ReadFile(zooPath(tc.model))
			if err != nil {
				t.Fatal(err)
			}
			def, err := netdef.UnmarshalNetDef(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(def.GetOp()); got != tc.ops {
				t.Errorf("ops = %d, want %d", got, tc.ops)
			}
			if tc.lastType != "" {
				if got := def.GetOp()[len(def.GetOp())-1].GetType(); got != tc.lastType {
					t.Errorf("last op type = %q, want %q", got, tc.lastType)
				}
			}
			if len(def.ProtoReflect().GetUnknown()) != 0 {
				t.Errorf("unexpected unknown fields at NetDef level")
			}
			again, err := netdef.MarshalNetDef(def)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, raw) {
				t.Errorf("re-encoding differs from the Caffe2 file (%d vs %d bytes)", len(again), len(raw))
			}

			// Text round trip keeps every field.
			txt, err := netdef.MarshalText(def)
			if err != nil {
				t.Fatal(err)
			}
			back := new(netdef.NetDef)
			if err := netdef.UnmarshalText(txt, back); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(back, def) {
				t.Errorf("text round trip changed the net")
			}
			b2, err := netdef.MarshalNetDef(back)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b2, raw) {
				t.Errorf("binary -> text -> binary differs from the Caffe2 file")
			}
			// Text output is stable.
			txt2, _ := netdef.MarshalText(back)
			if !bytes.Equal(txt, txt2) {
				t.Errorf("MarshalText is not stable")
			}
		})
	}
}

func TestReadWriteFiles(t *testing.T) {
	def, err := netdef.ReadNetDef(zooPath("squeezenet"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"net.pb", "net.pbtxt", "net.prototxt", "net.PBTXT", "net.bin", "net"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := netdef.WriteNetDef(path, def); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			isText := bytes.HasPrefix(raw, []byte("name: "))
			if isText != netdef.IsTextPath(path) {
				t.Errorf("file written as text=%v, want text=%v", isText, netdef.IsTextPath(path))
			}
			got, err := netdef.ReadNetDef(path)
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(got, def) {
				t.Errorf("read back a different net")
			}
		})
	}
}

func TestReadErrorsNamePath(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pb")
	if err := os.WriteFile(bad, []byte{0x0a, 0xff, 0xff}, 0o644); err != nil {
		t.Fatal(err)
	}
	badText := filepath.Join(dir, "bad.pbtxt")
	if err := os.WriteFile(badText, []byte("op { nosuchfield: 1 }"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pb")
	for _, path := range []string{bad, badText, missing} {
		_, err := netdef.ReadNetDef(path)
		if err == nil {
			t.Errorf("ReadNetDef(%s): no error", path)
			continue
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("ReadNetDef(%s): error %q does not name the path", path, err)
		}
		_, err = netdef.ReadPlanDef(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("ReadPlanDef(%s): error %v does not name the path", path, err)
		}
	}
	if _, err := netdef.ReadNetDef(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error %v does not wrap fs.ErrNotExist", err)
	}
	if err := netdef.WriteNetDef(filepath.Join(dir, "no", "such", "dir.pb"), &netdef.NetDef{}); err == nil {
		t.Errorf("WriteNetDef into a missing directory: no error")
	}
	if err := netdef.WriteNetDef(filepath.Join(dir, "x.pb"), nil); err == nil {
		t.Errorf("WriteNetDef(nil): no error")
	}
	if err := netdef.WritePlanDef(filepath.Join(dir, "x.pb"), nil); err == nil {
		t.Errorf("WritePlanDef(nil): no error")
	}
}

func TestUnmarshalErrors(t *testing.T) {
	for _, b := range [][]byte{{0x0a}, {0x12, 0x05, 0x0a}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		if _, err := netdef.UnmarshalNetDef(b); err == nil {
			t.Errorf("UnmarshalNetDef(%x): no error", b)
		} else if !strings.Contains(err.Error(), "NetDef") {
			t.Errorf("UnmarshalNetDef error %q does not name the message", err)
		}
		if _, err := netdef.UnmarshalPlanDef(b); err == nil {
			t.Errorf("UnmarshalPlanDef(%x): no error", b)
		}
	}
	if err := netdef.UnmarshalText([]byte("name: 3 4"), &netdef.NetDef{}); err == nil {
		t.Errorf("UnmarshalText of bad text: no error")
	}
	if err := netdef.UnmarshalText([]byte(`name: "x"`), nil); err == nil {
		t.Errorf("UnmarshalText into nil: no error")
	}
	if err := netdef.UnmarshalText([]byte(`name: "x"`), (*netdef.NetDef)(nil)); err == nil {
		t.Errorf("UnmarshalText into a nil *NetDef: no error")
	}
}

func TestPlanDefRoundTrip(t *testing.T) {
	net, err := netdef.ReadNetDef(zooPath("squeezenet"))
	if err != nil {
		t.Fatal(err)
	}
	net.Name = proto.String("squeeze")
	plan := &netdef.PlanDef{
		Name:    proto.String("plan"),
		Network: []*netdef.NetDef{net},
		ExecutionStep: []*netdef.ExecutionStep{{
			Name:    proto.String("run"),
			Network: []string{"squeeze"},
			NumIter: proto.Int64(3),
		}},
	}
	b, err := netdef.MarshalPlanDef(plan)
	if err != nil {
		t.Fatal(err)
	}
	got, err := netdef.UnmarshalPlanDef(b)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, plan) {
		t.Errorf("binary round trip changed the plan")
	}
	dir := t.TempDir()
	for _, name := range []string{"plan.pb", "plan.pbtxt"} {
		path := filepath.Join(dir, name)
		if err := netdef.WritePlanDef(path, plan); err != nil {
			t.Fatal(err)
		}
		got, err := netdef.ReadPlanDef(path)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, plan) {
			t.Errorf("%s: round trip changed the plan", name)
		}
	}
}

func TestTextFormat(t *testing.T) {
	def := &netdef.NetDef{
		Name: proto.String("tiny"),
		Op: []*netdef.OperatorDef{{
			Input:        []string{"x"},
			Output:       []string{"y"},
			Type:         proto.String("Relu"),
			DeviceOption: &netdef.DeviceOption{},
			Arg:          []*netdef.Argument{netdef.ArgString("order", `N"C: {HW}`)},
		}},
		ExternalInput: []string{"x"},
	}
	got, err := netdef.MarshalText(def)
	if err != nil {
		t.Fatal(err)
	}
	want := `name: "tiny"
op {
  input: "x"
  output: "y"
  type: "Relu"
  arg {
    name: "order"
    s: "N\"C: {HW}"
  }
  device_option {
  }
}
external_input: "x"
`
	if string(got) != want {
		t.Errorf("MarshalText:\n%s\nwant:\n%s", got, want)
	}
	empty, err := netdef.MarshalText(&netdef.NetDef{})
	if err != nil || len(empty) != 0 {
		t.Errorf("MarshalText(empty) = %q, %v; want empty", empty, err)
	}
}

func TestUnmarshalTextCaffe2Style(t *testing.T) {
	// The layout of Caffe2's C++ and Python printers, with the pre-2018
	// field name cuda_gpu_id, a comment, and the same words inside strings.
	src := `# a net written by Caffe2
name: "legacy"
op {
  input: "data"
  output: "cuda_gpu_id"
  type: "Copy"
  device_option {
    device_type: 1
    cuda_gpu_id: 3 # cuda_gpu_id
  }
  arg { name: "s" s: 'it\'s cuda_gpu_id' }
}
device_option: { device_type: 1 cuda_gpu_id: 2 }
`
	def := new(netdef.NetDef)
	if err := netdef.UnmarshalText([]byte(src), def); err != nil {
		t.Fatal(err)
	}
	op := def.GetOp()[0]
	if got := op.GetDeviceOption().GetDeviceId(); got != 3 {
		t.Errorf("op device_id = %d, want 3", got)
	}
	if got := def.GetDeviceOption().GetDeviceId(); got != 2 {
		t.Errorf("net device_id = %d, want 2", got)
	}
	if got := op.GetOutput()[0]; got != "cuda_gpu_id" {
		t.Errorf("string value rewritten: %q", got)
	}
	if got := string(op.GetArg()[0].GetS()); got != "it's cuda_gpu_id" {
		t.Errorf("string value rewritten: %q", got)
	}
}

func TestMarshalErrors(t *testing.T) {
	// TensorProto.Segment.end is a proto2 required field.
	def := &netdef.NetDef{Op: []*netdef.OperatorDef{{
		Arg: []*netdef.Argument{{T: &netdef.TensorProto{Segment: &netdef.TensorProto_Segment{Begin: proto.Int64(0)}}}},
	}}}
	if _, err := netdef.MarshalNetDef(def); err == nil || !strings.Contains(err.Error(), "NetDef") {
		t.Errorf("MarshalNetDef with a missing required field: error %v", err)
	}
	if _, err := netdef.MarshalText(def); err == nil || !strings.Contains(err.Error(), "NetDef") {
		t.Errorf("MarshalText with a missing required field: error %v", err)
	}
	path := filepath.Join(t.TempDir(), "bad.pb")
	if err := netdef.WriteNetDef(path, def); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("WriteNetDef with a missing required field: error %v", err)
	}
}
