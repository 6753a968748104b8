package netdef_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

func TestDOT(t *testing.T) {
	def := &netdef.NetDef{
		Name: proto.String(`my "net"`),
		Op: []*netdef.OperatorDef{
			netdef.NewOperator("FC", []string{"x", "w"}, []string{"y"}),
			netdef.NewOperator("Relu", []string{"y"}, []string{"y"}),
			{Type: proto.String("Print"), Name: proto.String("show"), Input: []string{"y"}, ControlInput: []string{"x"}},
		},
	}
	got := netdef.DOT(def)
	want := `digraph "my \"net\"" {
  rankdir=TB;
  node [fontsize=10];
  op0 [label="FC", shape=box, style=filled, fillcolor=lightgray];
  b0 [label="x", shape=ellipse];
  b0 -> op0;
  b1 [label="w", shape=ellipse];
  b1 -> op0;
  b2 [label="y", shape=ellipse];
  op0 -> b2;
  op1 [label="Relu", shape=box, style=filled, fillcolor=lightgray];
  b2 -> op1;
  b3 [label="y", shape=ellipse];
  op1 -> b3;
  op2 [label="Print\nshow", shape=box, style=filled, fillcolor=lightgray];
  b3 -> op2;
  b0 -> op2 [style=dashed];
}
`
	if got != want {
		t.Errorf("DOT:\n%s\nwant:\n%s", got, want)
	}
	if got := netdef.DOT(nil); !strings.HasPrefix(got, `digraph "" {`) || !strings.HasSuffix(got, "}\n") {
		t.Errorf("DOT(nil) = %q", got)
	}
}

func TestDOTModelZoo(t *testing.T) {
	def, err := netdef.ReadNetDef(zooPath("squeezenet"))
	if err != nil {
		t.Fatal(err)
	}
	got := netdef.DOT(def)
	if n := strings.Count(got, "shape=box"); n != len(def.Op) {
		t.Errorf("%d op nodes, want %d", n, len(def.Op))
	}
}
