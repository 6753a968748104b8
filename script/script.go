package script

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	starlarkmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/caffe2go/caffe2go/script/brew"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/core"
	"github.com/caffe2go/caffe2go/script/dataparallelmodel"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/modelhelper"
	"github.com/caffe2go/caffe2go/script/np"
	"github.com/caffe2go/caffe2go/script/optimizer"
	"github.com/caffe2go/caffe2go/script/utils"
	"github.com/caffe2go/caffe2go/script/workspace"
)

// modules lists the Starlark modules every interpreter predeclares.
var modules = []*starlarkstruct.Module{workspace.Module, core.Module, np.Module, utils.Module, caffe2pb2.Module,
	modelhelper.Module, brew.Module, optimizer.Module, dataparallelmodel.Module}

// Options configure an Interpreter.
type Options struct {
	// Stdout receives what print and help write; nil means os.Stdout.
	Stdout io.Writer
	// Argv is the script's sys.argv: the script name, then its arguments.
	Argv []string
	// Extra names are predeclared besides the standard ones (and win over
	// them).
	Extra starlark.StringDict
}

// Interpreter runs caffe2go scripts: Starlark with Caffe2's Python modules
// predeclared. Globals persist from one Exec call to the next, as in a REPL.
// The modules act on the process-wide current workspace and scopes (as
// Caffe2's do), so interpreters in one process share them.
type Interpreter struct {
	thread      *starlark.Thread
	predeclared starlark.StringDict
	globals     starlark.StringDict
	out         io.Writer
	loads       map[string]*loadEntry
}

type loadEntry struct {
	globals starlark.StringDict
	err     error
}

// FileOptions are the Starlark dialect options of caffe2go scripts: while
// loops, top-level if/for, reassignment of globals, sets and recursion are
// allowed, so scripts read like Python.
func FileOptions() *syntax.FileOptions {
	return &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}
}

// New returns an interpreter.
func New(opts Options) *Interpreter {
	in := &Interpreter{out: opts.Stdout, globals: starlark.StringDict{}, loads: map[string]*loadEntry{}}
	if in.out == nil {
		in.out = os.Stdout
	}
	in.predeclared = Predeclared(opts.Argv)
	for k, v := range opts.Extra {
		in.predeclared[k] = v
	}
	in.thread = &starlark.Thread{
		Name:  "caffe2go",
		Print: func(_ *starlark.Thread, msg string) { fmt.Fprintln(in.out, msg) },
		Load:  in.load,
	}
	binding.StateOf(in.thread)
	return in
}

// Predeclared returns a fresh set of the modules and global functions
// scripts see: workspace, core, np, utils, caffe2_pb2, math, sys (with
// argv), help, with_device and with_namescope. The modules hold no state,
// so that every set shares them.
func Predeclared(argv []string) starlark.StringDict {
	d := starlark.StringDict{}
	for _, m := range modules {
		d[m.Name] = m
	}
	d["math"] = starlarkmath.Module
	args := make([]starlark.Value, len(argv))
	for i, a := range argv {
		args[i] = starlark.String(a)
	}
	d["sys"] = &starlarkstruct.Module{Name: "sys", Members: starlark.StringDict{"argv": starlark.NewList(args)}}
	d["help"] = starlark.NewBuiltin("help", binding.Safe(builtinHelp))
	d["with_device"] = core.Module.Members["with_device"]
	d["with_namescope"] = core.Module.Members["with_namescope"]
	return d
}

// Thread returns the interpreter's Starlark thread.
func (in *Interpreter) Thread() *starlark.Thread { return in.thread }

// Globals returns the globals defined so far (live: later runs add to it).
func (in *Interpreter) Globals() starlark.StringDict { return in.globals }

// Predeclared returns the interpreter's predeclared names.
func (in *Interpreter) Predeclared() starlark.StringDict { return in.predeclared }

// Exec runs a whole script (src is a string, []byte, io.Reader or nil to
// read filename). Its globals are added to the interpreter's. A failure is
// a *starlark.EvalError (use FormatError for the traceback) or a syntax
// error.
//
// Once ctx is done the script stops: the Starlark code at its next step,
// and a long Go call in progress (RunNet, RunPlan, data_parallel_model's
// RunNet) before its next operator; the error says it was cancelled. The
// interpreter stays usable for later calls.
func (in *Interpreter) Exec(ctx context.Context, filename string, src any) error {
	f, err := FileOptions().Parse(filename, src, 0)
	if err != nil {
		return err
	}
	return in.ExecREPLChunk(ctx, f)
}

// ExecREPLChunk runs parsed statements as a REPL does: they may use and
// redefine the globals of earlier chunks. ctx stops them as it does Exec.
func (in *Interpreter) ExecREPLChunk(ctx context.Context, f *syntax.File) (err error) {
	defer in.withContext(ctx)()
	defer recoverPanic(&err)
	return starlark.ExecREPLChunk(f, in.thread, in.globalsWithPredeclared())
}

// Eval evaluates an expression (parsed by the REPL) against the globals.
// ctx stops it as it does Exec.
func (in *Interpreter) Eval(ctx context.Context, expr syntax.Expr) (v starlark.Value, err error) {
	defer in.withContext(ctx)()
	defer recoverPanic(&err)
	return starlark.EvalExprOptions(FileOptions(), in.thread, expr, in.globalsWithPredeclared())
}

// withContext makes ctx the context of the call that starts (the bindings
// pass it to long Go calls, and its end cancels the Starlark thread); the
// returned function ends the call and makes the thread usable again.
func (in *Interpreter) withContext(ctx context.Context) func() {
	st := binding.StateOf(in.thread)
	st.Ctx = ctx
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		in.thread.Cancel(context.Cause(ctx).Error())
		close(fired)
	})
	return func() {
		if !stop() {
			<-fired // the thread is cancelled before it is made usable again
		}
		st.Ctx = nil
		in.thread.Uncancel()
	}
}

// globalsWithPredeclared returns the globals map the REPL functions use:
// starlark.ExecREPLChunk resolves free names against one dict, so the
// predeclared names that a script has not shadowed are kept in it.
func (in *Interpreter) globalsWithPredeclared() starlark.StringDict {
	for k, v := range in.predeclared {
		if _, ok := in.globals[k]; !ok {
			in.globals[k] = v
		}
	}
	return in.globals
}

// recoverPanic turns a panic escaping the interpreter into an error. (The
// scope helpers restore the process-wide scopes while unwinding.)
func recoverPanic(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("internal error: %v", r)
	}
}

// load implements load("file.star", "name"): the file, resolved against the
// working directory, runs once with the same predeclared names.
func (in *Interpreter) load(_ *starlark.Thread, module string) (starlark.StringDict, error) {
	path := filepath.Clean(module)
	if e, ok := in.loads[path]; ok {
		if e == nil {
			return nil, fmt.Errorf("cycle in load graph at %s", module)
		}
		return e.globals, e.err
	}
	in.loads[path] = nil
	thread := &starlark.Thread{Name: "load " + module, Print: in.thread.Print, Load: in.load}
	binding.ShareState(thread, in.thread)
	_, prog, err := starlark.SourceProgramOptions(FileOptions(), path, nil, in.predeclared.Has)
	var globals starlark.StringDict
	if err == nil {
		globals, err = prog.Init(thread, in.predeclared)
	}
	in.loads[path] = &loadEntry{globals, err}
	return globals, err
}

// FormatError renders an error from Exec for a person: a Starlark
// evaluation error as its traceback (file:line:col of each frame, then the
// message), anything else as its message.
func FormatError(err error) string {
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		return ee.Backtrace()
	}
	return err.Error()
}

// Display renders a value the way the REPL shows an expression's result:
// NumPy's repr for arrays (array([...], dtype=float32)), a description for
// nets and blob references, and Starlark's repr for everything else.
func Display(v starlark.Value) string {
	if r, ok := v.(interface{ Repr() string }); ok {
		return r.Repr()
	}
	return v.String()
}
