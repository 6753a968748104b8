package brew_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// TestLSTMMatchesUnrolledNet checks brew.LSTM's RecurrentNetwork against
// the same LSTM unrolled into a plain net of T copies of its step (FC of
// the input row, FC of h_{t-1}, Sum, LSTMUnit), differentiated by
// AddGradientOperators: the hidden states, and the gradients of the loss
// Σ ½·h_t² with respect to every parameter, the input and both initial
// states, must agree. One sequence ends early, so the length masks run.
func TestLSTMMatchesUnrolledNet(t *testing.T) {
	for _, memOpt := range []bool{false, true} {
		t.Run(fmt.Sprintf("MemoryOptimization=%v", memOpt), func(t *testing.T) { lstmMatchesUnrolledNet(t, memOpt) })
	}
}

// lstmMatchesUnrolledNet is TestLSTMMatchesUnrolledNet with or without
// recomputing the gates on the backward pass.
func lstmMatchesUnrolledNet(t *testing.T, memOpt bool) {
	const T, N, DIn, D = 5, 3, 4, 3
	rng := rand.New(rand.NewPCG(1, 2))
	randn := func(shape ...int) *blob.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 0.5)
		}
		return blob.MustFromSlice(v, shape...)
	}
	params := map[string]*blob.Tensor{
		"LSTM/i2h_w": randn(4*D, DIn), "LSTM/i2h_b": randn(4 * D),
		"LSTM/gates_t_w": randn(4*D, D), "LSTM/gates_t_b": randn(4 * D),
	}
	x, h0, c0 := randn(T, N, DIn), randn(1, N, D), randn(1, N, D)
	lengths := blob.MustFromSlice([]int32{T, 2, T}, N)

	// The recurrent net.
	m := brew.NewModel("lstm")
	m.AddExternalInputs("x", "seq_lengths", "h0", "c0", "h_all_seed")
	hAll, _, _, _ := brew.LSTM(m, "x", "seq_lengths", [2]string{"h0", "c0"}, DIn, D, "LSTM", brew.LSTMOptions{ForgetBias: 0.5, MemoryOptimization: memOpt})
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	given := map[string]operators.Gradient{hAll: operators.Dense("h_all_seed")}
	rnnGrads, err := m.AddGradientOperatorsWith([]string{hAll}, given)
	if err != nil {
		t.Fatal(err)
	}
	ws := workspace.New("")
	defer ws.Close()
	feed := func(name string, v *blob.Tensor) {
		t.Helper()
		if err := ws.FeedBlob(name, v); err != nil {
			t.Fatal(err)
		}
	}
	for name, v := range params {
		feed(name, v)
	}
	feed("x", x)
	feed("h0", h0)
	feed("c0", c0)
	feed("seq_lengths", lengths)
	// The seed is h_all itself (dL/dh = h), which a forward run gives.
	fwd := &netdef.NetDef{Name: ptr("fwd"), Op: m.Net.Proto().GetOp()[:2]} // i2h FC and RecurrentNetwork
	if err := ws.RunNetOnce(fwd); err != nil {
		t.Fatal(err)
	}
	hAllT, err := ws.FetchBlob(hAll)
	if err != nil {
		t.Fatal(err)
	}
	feed("h_all_seed", hAllT)
	if err := ws.RunNetOnce(m.Net); err != nil {
		t.Fatal(err)
	}

	// The unrolled net, in a workspace of its own.
	u := workspace.New("")
	defer u.Close()
	net := netdef.NewNet("unrolled")
	ufeed := func(name string, v *blob.Tensor) {
		t.Helper()
		if err := u.FeedBlob(name, v); err != nil {
			t.Fatal(err)
		}
	}
	for name, v := range params {
		ufeed(name, v)
	}
	ufeed("h0", h0)
	ufeed("c0", c0)
	ufeed("seq_lengths", lengths)
	xs := blob.Data[float32](x)
	hPrev, cPrev := "h0", "c0"
	ugiven := map[string]operators.Gradient{}
	var hs []string
	for s := 0; s < T; s++ {
		xt := fmt.Sprintf("x_%d", s)
		ufeed(xt, blob.MustFromSlice(append([]float32{}, xs[s*N*DIn:(s+1)*N*DIn]...), 1, N, DIn))
		ufeed(fmt.Sprintf("t_%d", s), blob.MustFromSlice([]int32{int32(s)}, 1))
		i2h, g := fmt.Sprintf("i2h_%d", s), fmt.Sprintf("gates_%d", s)
		h, c := fmt.Sprintf("h_%d", s), fmt.Sprintf("c_%d", s)
		net.Op("FC", []string{xt, "LSTM/i2h_w", "LSTM/i2h_b"}, []string{i2h}, netdef.ArgInt("axis", 2))
		net.Op("FC", []string{hPrev, "LSTM/gates_t_w", "LSTM/gates_t_b"}, []string{g}, netdef.ArgInt("axis", 2))
		net.Op("Sum", []string{g, i2h}, []string{g})
		net.Op("LSTMUnit", []string{hPrev, cPrev, g, "seq_lengths", fmt.Sprintf("t_%d", s)}, []string{h, c}, netdef.ArgFloat("forget_bias", 0.5))
		// The loss reads each h_t through a copy, so that its gradient
		// adds to the one from the later steps.
		net.Op("Copy", []string{h}, []string{h + "_out"})
		ugiven[h+"_out"] = operators.Dense(h + "_seed")
		hs = append(hs, h)
		hPrev, cPrev = h, c
	}
	// The last cell state feeds nothing: its gradient is zero.
	ugiven[cPrev] = operators.Dense("c_last_seed")
	ufeed("c_last_seed", blob.MustFromSlice(make([]float32, N*D), 1, N, D))
	if err := u.RunNetOnce(net); err != nil {
		t.Fatal(err)
	}
	hsAll := blob.Data[float32](hAllT)
	for s, h := range hs {
		ht, err := u.FetchBlob(h)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, "h_"+fmt.Sprint(s), blob.Data[float32](ht), hsAll[s*N*D:(s+1)*N*D])
		ufeed(h+"_seed", ht)
	}
	forwardOps := len(net.Proto().GetOp())
	full := &netdef.NetDef{Op: net.Proto().GetOp()}
	unrolledGrads, err := operators.AddGradientOperators(full, nil, ugiven)
	if err != nil {
		t.Fatal(err)
	}
	back := &netdef.NetDef{Name: ptr("unrolled_backward"), Op: full.Op[forwardOps:]}
	if err := u.RunNetOnce(back); err != nil {
		t.Fatal(err)
	}

	fetch := func(w *workspace.Workspace, g operators.Gradient, what string) []float32 {
		t.Helper()
		if g.Dense == "" {
			t.Fatalf("no gradient for %s", what)
		}
		v, err := w.FetchBlob(g.Dense)
		if err != nil {
			t.Fatal(err)
		}
		return blob.Data[float32](v)
	}
	for _, p := range []string{"LSTM/i2h_w", "LSTM/i2h_b", "LSTM/gates_t_w", "LSTM/gates_t_b", "h0", "c0"} {
		closeTo(t, "d"+p, fetch(ws, rnnGrads[p], p), fetch(u, unrolledGrads[p], p))
	}
	dx := fetch(ws, rnnGrads["x"], "x")
	for s := 0; s < T; s++ {
		closeTo(t, fmt.Sprintf("dx_%d", s), dx[s*N*DIn:(s+1)*N*DIn], fetch(u, unrolledGrads[fmt.Sprintf("x_%d", s)], "x_t"))
	}
}

func closeTo(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*math.Max(1, math.Abs(float64(want[i]))) {
			t.Errorf("%s[%d] = %g, unrolled net %g", what, i, got[i], want[i])
			return
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestLSTMRunAllocatesNothing: once the step nets exist, a training step
// through RecurrentNetwork and its gradient allocates nothing (the links
// and aliases find their views in place).
func TestLSTMRunAllocatesNothing(t *testing.T) {
	m := brew.NewModel("lstm_allocs")
	m.AddExternalInputs("x", "seq_lengths", "h0", "c0")
	hAll, _, _, _ := brew.LSTM(m, "x", "seq_lengths", [2]string{"h0", "c0"}, 4, 3, "LSTM", brew.LSTMOptions{})
	brew.AveragedLoss(m, hAll, "loss")
	if _, err := m.AddGradientOperators("loss"); err != nil {
		t.Fatal(err)
	}
	ws := workspace.New("")
	defer ws.Close()
	if err := ws.RunNetOnce(m.InitNet); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]*blob.Tensor{
		"x": blob.MustFromSlice(make([]float32, 5*2*4), 5, 2, 4), "h0": blob.MustFromSlice(make([]float32, 6), 1, 2, 3),
		"c0": blob.MustFromSlice(make([]float32, 6), 1, 2, 3), "seq_lengths": blob.MustFromSlice([]int32{5, 3}, 2),
	} {
		if err := ws.FeedBlob(name, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := ws.CreateNet(m.Net, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.RunNet(m.Net.Name(), 2); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(10, func() {
		if err := ws.RunNet(m.Net.Name(), 1); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per run", n)
	}
}
