package binding

import (
	"context"
	"math/rand/v2"
	"time"

	"go.starlark.net/starlark"
)

// State is the per-interpreter state of the modules, kept on the
// interpreter's Starlark threads: np.random's generator, and the context of
// the call in progress.
type State struct {
	RNG *rand.Rand
	// Ctx is the context the interpreter's current Exec or Eval was given
	// (nil between calls); see Context.
	Ctx context.Context
}

// Context returns the context of the interpreter call running on thread,
// for the bindings whose Go calls can run long (RunNet, RunPlan): they pass
// it on so that cancelling the call stops them. Without one it is
// context.Background().
func Context(thread *starlark.Thread) context.Context {
	if c := StateOf(thread).Ctx; c != nil {
		return c
	}
	return context.Background()
}

const stateKey = "caffe2go.script.state"

// StateOf returns the state of the thread's interpreter, making it (with a
// generator seeded from the clock) on first use.
func StateOf(thread *starlark.Thread) *State {
	if s, ok := thread.Local(stateKey).(*State); ok {
		return s
	}
	s := &State{RNG: NewRNG(uint64(time.Now().UnixNano()))}
	thread.SetLocal(stateKey, s)
	return s
}

// ShareState gives thread the state of from's interpreter, as a thread that
// loads a file for the interpreter does.
func ShareState(thread, from *starlark.Thread) {
	thread.SetLocal(stateKey, StateOf(from))
}

// NewRNG returns the generator np.random uses, seeded with seed.
func NewRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}
