package script

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarktest"
	"go.starlark.net/syntax"

	"github.com/caffe2go/caffe2go/blob"
)

// FuzzScript runs mutated caffe2go scripts (seeded with every chunk of the
// golden scripts) through the interpreter, under a 256 MiB memory budget,
// a million Starlark steps and five seconds each. A script may fail, but
// the interpreter must not panic (a recovered panic is an "internal
// error"), no operator it runs may panic, and it must not crash the
// process. Run it under ulimit -v (as .ci/run does).
//
// Starlark itself lets a program build a list of 2^30 elements in one
// step ([0] * n, list(range(n))), or grow one step after step (s = s + s in
// a loop, name scopes nested by recursion), which no budget sees: the
// harness makes repetition (* and *= on a sequence and an int) and range
// refuse more than fuzzRepeatLimit elements, and cancels a script once the
// heap holds more than fuzzHeapLimit (Starlark checks cancellation at every
// step), so that the fuzzer searches the bindings rather than the
// interpreter's own allocations. (str.replace can still ask for the
// product of two strings' lengths in one step.)
func FuzzScript(f *testing.F) {
	files, err := filepath.Glob("testdata/*.star")
	if err != nil || len(files) == 0 {
		f.Fatalf("no golden scripts: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, c := range splitChunks(string(data)) {
			f.Add(c.text)
		}
	}
	assertModule, err := starlarktest.LoadAssertModule()
	if err != nil {
		f.Fatal(err)
	}
	extra := starlark.StringDict{fuzzMul: starlark.NewBuiltin(fuzzMul, boundedMul), "range": starlark.NewBuiltin("range", boundedRange)}
	for k, v := range assertModule {
		extra[k] = v
	}
	old := blob.SetMemoryBudget(256 << 20)
	f.Cleanup(func() { blob.SetMemoryBudget(old) })

	f.Fuzz(func(t *testing.T, src string) {
		file, err := FileOptions().Parse("fuzz.star", src, 0)
		if err != nil {
			return
		}
		boundRepetition(file)
		resetWorld(t)
		t.Chdir(t.TempDir()) // what the script writes with relative paths lands here
		in := New(Options{Stdout: io.Discard, Argv: []string{"fuzz.star"}, Extra: extra})
		starlarktest.SetReporter(in.Thread(), discardReports{})
		in.Thread().SetMaxExecutionSteps(1_000_000)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		defer watchHeap(in.Thread(), fuzzHeapLimit)()
		err = in.ExecREPLChunk(ctx, file)
		if err == nil {
			return
		}
		msg := err.Error()
		if ee, ok := err.(*starlark.EvalError); ok {
			msg = ee.Backtrace()
		}
		if strings.Contains(msg, "internal error") || strings.Contains(msg, "panic: ") {
			t.Fatalf("%s\n--- script:\n%s", msg, src)
		}
	})
}

// discardReports is the reporter of the fuzzed scripts' assert module: a
// failed assertion is the script's business.
type discardReports struct{}

func (discardReports) Error(...any) {}

// fuzzRepeatLimit is the most elements a repetition or a range makes in
// FuzzScript.
const fuzzRepeatLimit = 1 << 20

// fuzzMul is the predeclared function FuzzScript's scripts multiply with.
const fuzzMul = "__fuzz_mul"

// fuzzHeapLimit is the heap size at which watchHeap cancels a script.
const fuzzHeapLimit = 1 << 30

// watchHeap cancels thread once the heap's objects exceed limit bytes,
// checking every millisecond until the returned function is called.
func watchHeap(thread *starlark.Thread, limit uint64) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if metrics.Read(sample); sample[0].Value.Uint64() > limit {
					thread.Cancel(fmt.Sprintf("fuzz harness: the heap holds more than %d bytes", limit))
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// boundRepetition rewrites every x * y and x *= y in f into calls of
// fuzzMul, replacing the operator in whichever field of its parent node
// holds it.
func boundRepetition(f *syntax.File) {
	call := func(x, y syntax.Expr) *syntax.CallExpr {
		return &syntax.CallExpr{Fn: &syntax.Ident{Name: fuzzMul}, Args: []syntax.Expr{x, y}}
	}
	callType := reflect.TypeFor[*syntax.CallExpr]()
	rewrite := func(v reflect.Value) {
		if b, ok := v.Interface().(*syntax.BinaryExpr); ok && b.Op == syntax.STAR {
			v.Set(reflect.ValueOf(call(b.X, b.Y)))
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil { // the end of a node's children
			return true
		}
		if a, ok := n.(*syntax.AssignStmt); ok && a.Op == syntax.STAR_EQ {
			a.Op, a.RHS = syntax.EQ, call(a.LHS, a.RHS)
		}
		v := reflect.ValueOf(n).Elem()
		for i := range v.NumField() {
			fv := v.Field(i)
			switch {
			case !fv.CanSet():
			case fv.Kind() == reflect.Interface && callType.Implements(fv.Type()) && !fv.IsNil():
				rewrite(fv)
			case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Interface && callType.Implements(fv.Type().Elem()):
				for j := range fv.Len() {
					if !fv.Index(j).IsNil() {
						rewrite(fv.Index(j))
					}
				}
			}
		}
		return true
	})
}

// boundedMul is x * y, refusing a repetition of more than fuzzRepeatLimit
// elements.
func boundedMul(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("%s: want 2 operands", fuzzMul)
	}
	x, y := args[0], args[1]
	for _, p := range [][2]starlark.Value{{x, y}, {y, x}} {
		n, isInt := p[1].(starlark.Int)
		switch p[0].(type) {
		case starlark.String, starlark.Bytes, *starlark.List, starlark.Tuple: // Starlark's repeatable sequences
		default:
			continue
		}
		if !isInt {
			continue
		}
		length := max(starlark.Len(p[0]), 1)
		if k, exact := n.Int64(); !exact || k > int64(fuzzRepeatLimit/length) {
			return nil, fmt.Errorf("fuzz harness: repetition of %d elements %v times is over %d", length, n, fuzzRepeatLimit)
		}
	}
	return starlark.Binary(syntax.STAR, x, y)
}

// boundedRange is range, refusing more than fuzzRepeatLimit elements.
func boundedRange(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	r, err := starlark.Call(thread, starlark.Universe["range"], args, kwargs)
	if err != nil {
		return nil, err
	}
	if n := r.(starlark.Sequence).Len(); n > fuzzRepeatLimit {
		return nil, fmt.Errorf("fuzz harness: range of %d elements is over %d", n, fuzzRepeatLimit)
	}
	return r, nil
}

// TestFuzzHarnessBounds checks FuzzScript's guards: repetition and range
// beyond fuzzRepeatLimit are errors, a script whose strings keep doubling
// is cancelled, and everything else multiplies as Starlark does, nested and
// in place.
func TestFuzzHarnessBounds(t *testing.T) {
	extra := starlark.StringDict{fuzzMul: starlark.NewBuiltin(fuzzMul, boundedMul), "range": starlark.NewBuiltin("range", boundedRange)}
	cases := []struct {
		src  string
		want string // the error, or "" and the script sets ok
	}{
		{"ok = [1] * 3 == [1, 1, 1] and 2 * 3 * 4 == 24 and 'ab' * 2 == 'abab' and (1, 2) * 0 == ()", ""},
		{"x = 3\nx *= 5\nl = [0]\nl *= 2\nok = x == 15 and l == [0, 0] and [i * 2 for i in range(3)] == [0, 2, 4]", ""},
		{"f = lambda n: [n] * n\nok = f(2) == [2, 2] and len(np.array([1.0, 2.0]) * 2) == 2", ""},
		{"x = [0] * (1 << 30)", "repetition of 1 elements 1073741824 times is over 1048576"},
		{"x = 'ab' * (1 << 20)", "repetition of 2 elements 1048576 times"},
		{"x = b\"xyz\" * (1 << 19)", "repetition of 3 elements 524288 times"},
		{"l = [1, 2]\nl *= 1 << 20", "repetition of 2 elements"},
		{"x = list(range(1 << 30))", "range of 1073741824 elements is over 1048576"},
		{"s = 'x' * 1000000\nfor i in range(100):\n    s = s + s", "fuzz harness: the heap holds more than"},
	}
	for _, c := range cases {
		file, err := FileOptions().Parse("t.star", c.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		boundRepetition(file)
		in := New(Options{Stdout: io.Discard, Extra: extra})
		stop := watchHeap(in.Thread(), fuzzHeapLimit)
		err = in.ExecREPLChunk(context.Background(), file)
		stop()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.src, err)
		case c.want == "" && in.Globals()["ok"] != starlark.True:
			t.Errorf("%q: ok = %v", c.src, in.Globals()["ok"])
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want one containing %q", c.src, err, c.want)
		}
	}
}
