package rnn_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

const dim = 2

// lstmOp returns the RecurrentNetwork operator brew.LSTM builds, with
// inputs (i2h, h0, c0, seq_lengths, gates_t_w, gates_t_b).
func lstmOp(t *testing.T) *netdef.OperatorDef {
	t.Helper()
	m := brew.NewModel("rnn")
	m.AddExternalInputs("x", "seq_lengths", "h0", "c0")
	brew.LSTM(m, "x", "seq_lengths", [2]string{"h0", "c0"}, 2, dim, "LSTM", brew.LSTMOptions{})
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	return proto.Clone(m.Net.Proto().GetOp()[1]).(*netdef.OperatorDef)
}

func zeros(shape ...int) *blob.Tensor {
	t, err := blob.New(blob.Float32, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

func lstmInputs(seqLen, n int) []*blob.Tensor {
	lengths := make([]int32, n)
	for i := range lengths {
		lengths[i] = int32(seqLen)
	}
	return []*blob.Tensor{zeros(seqLen, n, 4*dim), zeros(1, n, dim), zeros(1, n, dim), blob.MustFromSlice(lengths, n), zeros(4*dim, dim), zeros(4 * dim)}
}

func setArg(def *netdef.OperatorDef, a *netdef.Argument) *netdef.OperatorDef {
	def = proto.Clone(def).(*netdef.OperatorDef)
	for i, old := range def.Arg {
		if old.GetName() == a.GetName() {
			def.Arg[i] = a
			return def
		}
	}
	def.Arg = append(def.Arg, a)
	return def
}

// TestRecurrentNetworkEmptySequence: T = 0 runs no step; the outputs have
// no rows and the gradient is all zeros for the initial states.
func TestRecurrentNetworkEmptySequence(t *testing.T) {
	def := lstmOp(t)
	res, err := optest.Gradients(def, lstmInputs(0, 3), []int{0}, 0, 1, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Y[0].Dims(); len(got) != 3 || got[0] != 0 || got[1] != 3 || got[2] != dim {
		t.Errorf("hidden_all has shape %v, want [0 3 %d]", got, dim)
	}
	if got := res.Y[1].Dims(); got[0] != 1 {
		t.Errorf("hidden_last has shape %v, want [1 3 %d]", got, dim)
	}
	for k, g := range res.Inputs {
		for _, v := range blob.Data[float32](g) {
			if v != 0 {
				t.Fatalf("gradient %d is not zero: %v", k, blob.Data[float32](g))
			}
		}
	}
}

// TestRecurrentNetworkHostile: arguments and shapes from an untrusted net
// are errors, never a crash or a stall.
func TestRecurrentNetworkHostile(t *testing.T) {
	def := lstmOp(t)
	huge := lstmInputs(1, 1)
	huge[0] = zeros(1<<40, 0, 4*dim) // 2^40 timesteps of nothing
	huge[1], huge[2], huge[3] = zeros(0, dim), zeros(0, dim), blob.MustFromSlice([]int32{}, 0)
	for _, c := range []struct {
		name, want string
		def        *netdef.OperatorDef
		in         []*blob.Tensor
	}{
		{"2^40 empty timesteps", "memory budget", def, huge},
		{"link past the end", "rows", setArg(def, netdef.ArgInts("link_offset", 0, 7, 0, 1, 0)), lstmInputs(3, 2)},
		{"negative link offset", "offset", setArg(def, netdef.ArgInts("link_offset", 0, -1, 0, 1, 0)), lstmInputs(3, 2)},
		{"links of unequal lists", "entries", setArg(def, netdef.ArgInts("link_offset", 0, 1)), lstmInputs(3, 2)},
		{"alias before the start", "offset", setArg(def, netdef.ArgInts("alias_offset", 1, -9, 1, -1)), lstmInputs(3, 2)},
		{"alias to no output", "alias_dst", setArg(def, netdef.ArgStrings("alias_dst", "a", "b", "c", "d")), lstmInputs(3, 2)},
		{"step net not a NetDef", "text format", setArg(def, netdef.ArgString("step_net", "op { type: ")), lstmInputs(3, 2)},
		{"initial state of no input", "initial_recurrent_state_ids", setArg(def, netdef.ArgInts("initial_recurrent_state_ids", 1, 99)), lstmInputs(3, 2)},
		{"initial state of another batch", "batch", def, append([]*blob.Tensor{zeros(3, 2, 4*dim), zeros(1, 5, dim)}, lstmInputs(3, 2)[2:]...)},
		{"step net of an unknown operator", "NoSuchOp", setArg(def, netdef.ArgString("step_net", `op { type: "NoSuchOp" }`)), lstmInputs(3, 2)},
	} {
		_, err := optest.RunOp(c.def, c.in...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error about %q", c.name, err, c.want)
		}
	}
}

// TestRecurrentNetworkGradientNeedsForward: the gradient operator refuses
// step workspaces that are missing or too few.
func TestRecurrentNetworkGradientNeedsForward(t *testing.T) {
	def := lstmOp(t)
	gd, err := operators.GetGradientDefs(def, []operators.Gradient{operators.Dense("h_all_grad"), {}, {}, {}, {}})
	if err != nil {
		t.Fatal(err)
	}
	g := gd.Ops[0]
	w := optest.NewWorkspace()
	for _, name := range g.Input {
		w.Feed(name, zeros(3, 2, 4*dim))
	}
	err = w.Run(g)
	if err == nil || !strings.Contains(err.Error(), "step workspaces") {
		t.Errorf("got %v, want an error about the step workspaces", err)
	}
}

// TestRecurrentNetworkMutations runs the forward and backward passes of a
// valid RecurrentNetwork with one argument or input changed at random
// (offsets, indices and windows to hostile values, shapes to others): each
// run succeeds or fails with an error, never a panic.
func TestRecurrentNetworkMutations(t *testing.T) {
	def := lstmOp(t)
	rng := rand.New(rand.NewPCG(3, 4))
	hostile := []int64{-1 << 40, -9, -2, -1, 0, 1, 2, 3, 7, 1 << 31, 1 << 40}
	var runs, failed int
	for k := 0; k < 400; k++ {
		d := proto.Clone(def).(*netdef.OperatorDef)
		in := lstmInputs(3, 2)
		switch rng.IntN(3) {
		case 0: // an integer list argument
			var lists []*netdef.Argument
			for _, a := range d.Arg {
				if len(a.Ints) > 0 {
					lists = append(lists, a)
				}
			}
			a := lists[rng.IntN(len(lists))]
			a.Ints[rng.IntN(len(a.Ints))] = hostile[rng.IntN(len(hostile))]
		case 1: // an input's shape
			i := rng.IntN(len(in))
			shape := make([]int, rng.IntN(4))
			for j := range shape {
				shape[j] = rng.IntN(5)
			}
			if i == 3 {
				n := 1
				for _, s := range shape {
					n *= s
				}
				in[i] = blob.MustFromSlice(make([]int32, n), shape...)
			} else {
				in[i] = zeros(shape...)
			}
		case 2: // a string list argument
			var lists []*netdef.Argument
			for _, a := range d.Arg {
				if len(a.Strings) > 0 {
					lists = append(lists, a)
				}
			}
			a := lists[rng.IntN(len(lists))]
			a.Strings[rng.IntN(len(a.Strings))] = []byte(pick(rng, "LSTM/i2h", "h0", "nope", "LSTM/hidden_t_all", ""))
		}
		runs++
		_, err := optest.Gradients(d, in, []int{0}, 0)
		if err != nil {
			failed++
			if strings.Contains(err.Error(), "panic") {
				t.Fatalf("mutation %d: %v\n%v", k, err, d)
			}
		}
	}
	t.Logf("%d mutated runs, %d errors, no panic", runs, failed)
}

func pick(rng *rand.Rand, s ...string) string { return s[rng.IntN(len(s))] }
