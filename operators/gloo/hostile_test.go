//go:build gloo && cgo

package gloo_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// hostileBlobs are the blobs the hostile cases draw inputs and outputs
// from, besides the common world "cw": tensors of every kind the
// collectives may meet, an empty blob and a store handler.
func hostileBlobs(t *testing.T, ws *workspace.Workspace) []string {
	t.Helper()
	feeds := map[string]*blob.Tensor{
		"f32":    blob.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3),
		"f32b":   blob.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 6),
		"f64":    blob.MustFromSlice([]float64{1, 2, 3}, 3),
		"i32":    blob.MustFromSlice([]int32{1, 2, 3, 4, 5, 6}, 3, 2),
		"i64":    blob.MustFromSlice([]int64{7}, 1),
		"u8":     blob.MustFromSlice([]uint8{1, 2, 3}, 3),
		"bool":   blob.MustFromSlice([]bool{true, false}, 2),
		"str":    blob.MustFromSlice([]string{"a", "b"}, 2),
		"empty":  blob.MustFromSlice([]float32{}, 0),
		"empty2": blob.MustFromSlice([]float32{}, 0, 1<<40),
		"scalar": blob.MustFromSlice([]float32{3}),
	}
	var names []string
	for name, x := range feeds {
		if err := ws.FeedBlob(name, x); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	ws.CreateBlob("nothing")
	return append(names, "nothing", "store", "cw", "new")
}

// hostileTimeouts are timeout_ms values, among them ones whose
// milliseconds overflow a time.Duration or a deadline in nanoseconds.
var hostileTimeouts = []int64{-1, 0, 1, 50, 1 << 40, math.MaxInt64 / 1000, math.MaxInt64}

// TestHostileCollectives runs the collectives (and CreateCommonWorld and
// DestroyCommonWorld) on a real 1-rank common world with drawn inputs,
// outputs and arguments: dtypes they do not take, strings, empty tensors,
// mismatched sizes, the world or the store as a tensor, absurd roots and
// timeouts. Each case must end, with an error or not, without a panic and
// well before its deadline could matter; the world must still work after
// the cases that did not break it.
func TestHostileCollectives(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	types := []string{"Allreduce", "Broadcast", "Allgather", "Barrier", "DestroyCommonWorld", "CreateCommonWorld"}
	var counts [2]int
	for i := range 400 {
		ws, err := join(t.TempDir(), 0, 1, 2000)
		if err != nil {
			t.Fatal(err)
		}
		names := hostileBlobs(t, ws)
		typ := types[rng.IntN(len(types))]
		in, out := hostileIO(rng, typ, names)
		var args []*netdef.Argument
		if rng.IntN(2) == 0 {
			args = append(args, netdef.ArgInt("timeout_ms", hostileTimeouts[rng.IntN(len(hostileTimeouts))]))
		}
		if rng.IntN(2) == 0 {
			args = append(args, netdef.ArgInt("root", pickOf[int64](rng, -1, 0, 1, math.MaxInt32+1, math.MinInt64)))
		}
		if typ == "CreateCommonWorld" {
			args = append(args, netdef.ArgInt("size", pickOf[int64](rng, 0, 1, 1, 1, -1, math.MaxInt64)),
				netdef.ArgInt("rank", pickOf[int64](rng, 0, 0, 0, 1, -1)),
				netdef.ArgString("hostname", "127.0.0.1"))
		}
		def := glooOp(typ, in, out, args...)
		start := time.Now()
		err = ws.RunOperatorOnce(def)
		d := time.Since(start)
		desc := fmt.Sprintf("case %d: %s(%v) -> %v %v", i, typ, in, out, def.GetArg())
		if err != nil && strings.Contains(err.Error(), "panic") {
			t.Errorf("%s: %v", desc, err)
		}
		if d > 5*time.Second {
			t.Errorf("%s: took %v", desc, d)
		}
		if err == nil {
			counts[0]++
		} else {
			counts[1]++
			if testing.Verbose() && i < 20 {
				t.Logf("%s: %v", desc, err)
			}
		}
		// A world the case did not touch still all-reduces.
		if typ != "DestroyCommonWorld" && err == nil && !strings.Contains(strings.Join(out, " "), "cw") {
			if err := ws.FeedBlob("x", blob.MustFromSlice([]float32{2}, 1)); err != nil {
				t.Fatal(err)
			}
			if err := ws.RunOperatorOnce(glooOp("Allreduce", []string{"cw", "x"}, []string{"x"})); err != nil {
				t.Errorf("%s: the world no longer all-reduces: %v", desc, err)
			}
		}
	}
	t.Logf("%d cases ran, %d ended in an error", counts[0], counts[1])
}

// hostileIO draws the inputs and outputs of a case of typ: mostly what
// the operator takes, now and then not.
func hostileIO(rng *rand.Rand, typ string, names []string) (in, out []string) {
	odd := func() bool { return rng.IntN(8) == 0 }
	first := "cw"
	if typ == "CreateCommonWorld" {
		first = "store"
	}
	if odd() {
		first = names[rng.IntN(len(names))]
	}
	in = []string{first}
	tensors := 0
	switch typ {
	case "Allreduce", "Broadcast", "Allgather":
		tensors = 1 + rng.IntN(3)
	}
	if odd() {
		tensors = rng.IntN(3)
	}
	numeric := []string{"f32", "f32b", "f64", "i32", "i64", "u8", "bool", "empty", "empty2", "scalar"}
	for k := range tensors {
		switch {
		case k > 0 && rng.IntN(2) == 0: // another of the same dtype and size, or the same
			in = append(in, pickOf(rng, in[1], map[string]string{"f32": "f32b", "f32b": "f32", "empty": "empty2", "empty2": "empty"}[in[1]]))
		case odd():
			in = append(in, names[rng.IntN(len(names))])
		default:
			in = append(in, numeric[rng.IntN(len(numeric))])
		}
	}
	for k, n := range in {
		if n == "" {
			in[k] = "f32"
		}
	}
	switch typ {
	case "Allreduce", "Broadcast":
		out = append(out, in[1:]...)
	case "Allgather":
		out = []string{pickOf(rng, "y", "y", "f32", "cw")}
	case "DestroyCommonWorld":
		out = []string{in[0]}
	case "CreateCommonWorld":
		out = []string{pickOf(rng, "cw2", "cw2", "cw")}
	}
	if odd() {
		out = nil
		for range rng.IntN(3) {
			out = append(out, names[rng.IntN(len(names))])
		}
	}
	return in, out
}

func pickOf[T any](rng *rand.Rand, v ...T) T { return v[rng.IntN(len(v))] }

// TestHugeTimeout: a timeout_ms too large for a time.Duration means "wait
// very long", not a deadline that has passed: a barrier with one waits
// for a rank that comes 300 ms late.
func TestHugeTimeout(t *testing.T) {
	for _, ms := range []int64{1 << 40, math.MaxInt64 / 1000, math.MaxInt64} {
		t.Run(fmt.Sprint(ms), func(t *testing.T) {
			ranks(t, 2, func(r int, ws *workspace.Workspace) error {
				if r == 1 {
					time.Sleep(300 * time.Millisecond)
				}
				return ws.RunOperatorOnce(glooOp("Barrier", []string{"cw"}, nil, netdef.ArgInt("timeout_ms", ms)))
			})
		})
	}
}
