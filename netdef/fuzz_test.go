package netdef_test

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

// addSeeds seeds f with the first ops of the smallest model-zoo net (whole
// model-zoo nets make the fuzzer spend its time minimising inputs;
// TestModelZooRoundTrip covers them), a plan built from them, a net with an
// embedded net, and a few small and broken inputs.
func addSeeds(f *testing.F) {
	def, err := netdef.ReadNetDef(zooPath("squeezenet"))
	if err != nil {
		f.Fatal(err)
	}
	def.Op = def.Op[:6]
	def.ExternalInput = def.ExternalInput[:7]
	b, err := netdef.MarshalNetDef(def)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	plan := &netdef.PlanDef{
		Name:    proto.String("plan"),
		Network: []*netdef.NetDef{def},
		ExecutionStep: []*netdef.ExecutionStep{{
			Name: proto.String("s"), Network: []string{def.GetName()}, NumIter: proto.Int64(2),
			Substep: []*netdef.ExecutionStep{{Name: proto.String("sub"), ShouldStopBlob: proto.String("stop")}},
		}},
	}
	pb, err := netdef.MarshalPlanDef(plan)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pb)
	nested := netdef.NewNet("fuzz_seed")
	nested.Op("If", []string{"c"}, []string{"y"}, netdef.ArgNet("then_net", &netdef.NetDef{
		Name: proto.String("then"),
		Op:   []*netdef.OperatorDef{netdef.NewOperator("Copy", []string{"x"}, []string{"y"})},
	}))
	nb, err := netdef.MarshalNetDef(nested.Proto())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(nb)
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x03, 'n', 'e', 't'})
	f.Add([]byte{0x12, 0x05, 0x0a})
	f.Add([]byte(`name: "t" op { input: "x" output: "y" type: "Relu" }`))
}

// checkBinaryRoundTrip checks that re-encoding m is stable.
func checkBinaryRoundTrip(t *testing.T, m proto.Message, parse func([]byte) (proto.Message, error)) {
	b1, err := netdef.Marshal(m)
	if err != nil {
		// Possible for decoded input only if a required field is missing,
		// which decoding already rejects.
		t.Fatalf("re-encoding a decoded message: %v", err)
	}
	m2, err := parse(b1)
	if err != nil {
		t.Fatalf("decoding a re-encoded message: %v", err)
	}
	b2, err := netdef.Marshal(m2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatalf("encoding is not stable")
	}
}

func FuzzUnmarshalNetDef(f *testing.F) {
	addSeeds(f)
	f.Fuzz(fuzzNetDef)
}

func fuzzNetDef(t *testing.T, b []byte) {
	{
		// Text decoding must not panic either.
		_ = netdef.UnmarshalText(b, new(netdef.NetDef))

		def, err := netdef.UnmarshalNetDef(b)
		if err != nil {
			return
		}
		checkBinaryRoundTrip(t, def, func(b []byte) (proto.Message, error) { return netdef.UnmarshalNetDef(b) })
		txt, err := netdef.MarshalText(def)
		if err != nil {
			t.Fatalf("MarshalText: %v", err)
		}
		if err := netdef.UnmarshalText(txt, new(netdef.NetDef)); err != nil {
			t.Fatalf("UnmarshalText(MarshalText(x)): %v\n%s", err, txt)
		}

		// The builder and helpers accept whatever decodes.
		n := netdef.NetFromProto(def)
		n.NextName("")
		n.NextName("Relu", 0)
		n.NextBlob("b")
		n.UsedBlobNames()
		netdef.SSA(def)
		netdef.DOT(def)
		remap := map[string]string{}
		for _, name := range n.UsedBlobNames() {
			remap[name] = "r/" + name
		}
		c := n.Clone("fuzz_clone", remap, []int{0, 2, 1, 0, -1})
		n.AppendNet(c.Proto())
		n.AddOp(netdef.NewOperator("Sum", n.ExternalOutputs(), []string{"s"}))
		outs := n.ExternalOutputs()
		if len(outs) > 2 {
			outs = outs[:2]
		}
		inputs := map[string]string{}
		for _, in := range n.ExternalInputs() {
			inputs[in] = in
			if len(inputs) == 2 {
				break
			}
		}
		_, _, _ = n.ClonePartial("fuzz_partial", inputs, outs)
		_ = netdef.NewExecutionStep("", def)
	}
}

func FuzzUnmarshalPlanDef(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = netdef.UnmarshalText(b, new(netdef.PlanDef))

		plan, err := netdef.UnmarshalPlanDef(b)
		if err != nil {
			return
		}
		checkBinaryRoundTrip(t, plan, func(b []byte) (proto.Message, error) { return netdef.UnmarshalPlanDef(b) })
		txt, err := netdef.MarshalText(plan)
		if err != nil {
			t.Fatalf("MarshalText: %v", err)
		}
		if err := netdef.UnmarshalText(txt, new(netdef.PlanDef)); err != nil {
			t.Fatalf("UnmarshalText(MarshalText(x)): %v\n%s", err, txt)
		}
		p := netdef.NewPlan(plan.GetName())
		s := netdef.NewExecutionStep("", plan.GetNetwork()...)
		_ = p.AddStep(s)
		_ = p.AddNets(plan.GetNetwork()...)
	})
}
