package script

import (
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/core"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/np"
)

const overview = `caffe2go scripts: Starlark (a small Python dialect) with Caffe2's Python modules.

Modules: workspace, core, np, utils, caffe2_pb2, model_helper, brew, optimizer, data_parallel_model,
math, sys.
Globals: help(x), with_device(opt, fn), with_namescope(prefix, fn).

  net = core.Net("my_net")
  y = net.Relu(["x"], ["y"])
  workspace.FeedBlob("x", np.array([[-1.0, 2.0]], dtype = np.float32))
  workspace.RunNetOnce(net)
  print(workspace.FetchBlob("y"))

help(workspace) lists a module; help(workspace.FeedBlob), help(net.Relu) or help("Relu")
describe one binding or operator. Python's "with" blocks are calls taking a callable:
core.DeviceScope(opt, lambda: ...). Differences from Python: no classes, no exceptions
(an error stops the script with the line it happened on), and // for integer division.`

const helpDoc = "help(x=None)\n\nPrints the documentation of a module, function, method, value or operator type\n(help(\"Relu\")); without an argument, an overview."

func init() { binding.SetDoc("help", helpDoc) }

func builtinHelp(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0, &x); err != nil {
		return nil, err
	}
	thread.Print(thread, Help(x))
	return starlark.None, nil
}

// Help returns the documentation of a value as help(x) prints it: a
// module's members, a function's signature and description, a value's type
// and methods, an operator's schema. A nil x gives the overview.
func Help(x starlark.Value) string {
	switch v := x.(type) {
	case nil:
		return overview
	case *starlarkstruct.Module:
		return moduleHelp(v)
	case *starlark.Builtin:
		return builtinHelpText(v)
	case *starlark.Function:
		doc := v.Doc()
		if doc == "" {
			doc = "(no docstring)"
		}
		return fmt.Sprintf("def %s(...)\n\n%s", v.Name(), doc)
	case starlark.String:
		if d, ok := binding.DocOf(string(v)); ok {
			return string(v) + ": " + d
		}
		if core.IsOperatorType(string(v)) {
			return operatorHelp(string(v))
		}
		return fmt.Sprintf("no documentation for %q", string(v))
	case *caffe2pb2.Message:
		d, _ := binding.DocOf("Message")
		return fmt.Sprintf("%s message. %s\nFields and methods: %s", v.Type(), d, strings.Join(v.AttrNames(), ", "))
	case *caffe2pb2.RepeatedField:
		t, _ := binding.MethodTableOf("repeated")
		return typeHelp(t)
	case np.DType:
		return fmt.Sprintf("dtype %s: a NumPy element type. Call it to convert: %s(x).", v, v)
	}
	if t, ok := binding.MethodTableOf(x.Type()); ok {
		return typeHelp(t)
	}
	return fmt.Sprintf("%s value: no documentation", x.Type())
}

// typeHelp describes a type by its documentation and its methods'
// signatures.
func typeHelp(t *binding.MethodTable) string {
	name := t.TypeName()
	d, _ := binding.DocOf(name)
	var b strings.Builder
	b.WriteString(d)
	b.WriteString("\n\nMethods:\n")
	for _, m := range t.Names() {
		md, _ := binding.DocOf(name + "." + m)
		fmt.Fprintf(&b, "  %s\n", firstLine(md))
	}
	return strings.TrimRight(b.String(), "\n")
}

func moduleHelp(m *starlarkstruct.Module) string {
	var b strings.Builder
	d, ok := binding.DocOf(m.Name)
	if !ok {
		d = "module " + m.Name
	}
	b.WriteString(d)
	b.WriteString("\n\nMembers:\n")
	names := make([]string, 0, len(m.Members))
	for k := range m.Members {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		switch v := m.Members[k].(type) {
		case *starlark.Builtin:
			md, _ := binding.DocOf(v.Name())
			fmt.Fprintf(&b, "  %s\n", firstLine(md))
		case *starlarkstruct.Module:
			fmt.Fprintf(&b, "  %s (module)\n", k)
		default:
			fmt.Fprintf(&b, "  %s = %s\n", k, m.Members[k])
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func builtinHelpText(b *starlark.Builtin) string {
	name := b.Name()
	if d, ok := binding.DocOf(name); ok {
		module := name
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			module = name[:i+1]
		} else {
			module = ""
		}
		return module + d
	}
	if typ, ok := strings.CutPrefix(name, "Net."); ok && core.IsOperatorType(typ) {
		return operatorHelp(typ)
	}
	if typ, ok := strings.CutPrefix(name, "BlobReference."); ok && core.IsOperatorType(typ) {
		return operatorHelp(typ)
	}
	return fmt.Sprintf("built-in function %s (see the Starlark language reference)", name)
}

// operatorHelp describes an operator type from its schema.
func operatorHelp(typ string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "operator %s", typ)
	s, ok := operators.SchemaOf(typ)
	if !ok {
		b.WriteString(" (registered, no schema)")
		return b.String()
	}
	if s.Doc != "" {
		fmt.Fprintf(&b, "\n\n%s", s.Doc)
	}
	fmt.Fprintf(&b, "\n\ninputs: %s, outputs: %s", countRange(s.MinInputs, s.MaxInputs), countRange(s.MinOutputs, s.MaxOutputs))
	if len(s.Args) > 0 {
		b.WriteString("\narguments:")
		for _, a := range s.Args {
			fmt.Fprintf(&b, "\n  %s", a.Name)
			if a.Default != nil {
				fmt.Fprintf(&b, " = %v", a.Default)
			}
			if a.Doc != "" {
				fmt.Fprintf(&b, ": %s", a.Doc)
			}
		}
	}
	if operators.HasGradient(typ) {
		b.WriteString("\nhas a gradient")
	}
	return b.String()
}

func countRange(lo, hi int) string {
	switch {
	case hi == operators.Unbounded:
		return fmt.Sprintf("%d or more", lo)
	case lo == hi:
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
