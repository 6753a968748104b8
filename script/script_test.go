package script

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/starlarktest"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/script/golden"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/workspace"
)

// The golden scripts in testdata/*.star are split into chunks by lines
// holding only "---". Each chunk runs in a fresh interpreter (with the
// starlarktest assert module) against a fresh default workspace rooted in a
// temporary folder. Within a chunk:
//
//   - a line ending in a comment `### "regexp"` must be where the chunk
//     fails, with an error whose traceback matches the regexp;
//   - comment lines `#=> text` give, in order, the lines the chunk prints
//     (`#=>` alone is an empty line; see package golden).
//
// The chunk's whole output must equal the expected lines.

var errorAnnot = regexp.MustCompile(`### "(.*)"\s*$`)

type chunk struct {
	line int // first line of the chunk in the file (1-based)
	text string
}

func splitChunks(src string) []chunk {
	var chunks []chunk
	lines := strings.Split(src, "\n")
	start := 0
	for i := 0; i <= len(lines); i++ {
		if i == len(lines) || strings.TrimSpace(lines[i]) == "---" {
			chunks = append(chunks, chunk{line: start + 1, text: strings.Join(lines[start:i], "\n")})
			start = i + 1
		}
	}
	return chunks
}

// resetWorld gives each chunk the default workspace, empty, rooted in a
// fresh temporary folder.
func resetWorld(t *testing.T) {
	t.Helper()
	if err := workspace.SwitchWorkspace(workspace.DefaultName, true); err != nil {
		t.Fatal(err)
	}
	if err := workspace.ResetWorkspace(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	brew.ResetOptimizerInstanceCount()
	t.Cleanup(func() {
		_ = workspace.SwitchWorkspace(workspace.DefaultName, true)
		_ = workspace.ResetWorkspace(".")
	})
}

func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.star")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden scripts: %v", err)
	}
	assertModule, err := starlarktest.LoadAssertModule()
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range splitChunks(string(data)) {
			name := filepath.Base(file) + ":" + strconv.Itoa(c.line)
			t.Run(name, func(t *testing.T) { runChunk(t, file, c, assertModule) })
		}
	}
}

func runChunk(t *testing.T, file string, c chunk, assertModule starlark.StringDict) {
	resetWorld(t)
	var out bytes.Buffer
	in := New(Options{Stdout: &out, Argv: []string{"test.star", "alpha", "beta"}, Extra: assertModule})
	starlarktest.SetReporter(in.Thread(), t)

	wantOut := golden.Output(c.text)
	wantErrLine, wantErr := 0, ""
	for i, line := range strings.Split(c.text, "\n") {
		if m := errorAnnot.FindStringSubmatch(line); m != nil {
			if wantErr != "" {
				t.Fatalf("%s:%d: a chunk can expect only one error", file, c.line+i)
			}
			wantErrLine, wantErr = c.line+i, m[1]
		}
	}
	// Pad the chunk so that positions are those of the file.
	src := strings.Repeat("\n", c.line-1) + c.text
	err := in.Exec(context.Background(), file, src)
	switch {
	case err == nil && wantErr != "":
		t.Errorf("%s:%d: want an error matching %q, got none", file, wantErrLine, wantErr)
	case err != nil && wantErr == "":
		t.Errorf("%s:%d: unexpected error:\n%s", file, c.line, FormatError(err))
	case err != nil:
		msg := FormatError(err)
		if ok, rerr := regexp.MatchString(wantErr, msg); rerr != nil || !ok {
			t.Errorf("%s:%d: error %q does not match %q", file, wantErrLine, msg, wantErr)
		}
		if line := errorLine(err); line != wantErrLine {
			t.Errorf("%s:%d: error reported at line %d, want %d:\n%s", file, wantErrLine, line, wantErrLine, msg)
		}
	}
	got := strings.TrimSuffix(out.String(), "\n")
	want := strings.Join(wantOut, "\n")
	if got != want {
		t.Errorf("%s:%d: output differs\n--- got:\n%s\n--- want:\n%s", file, c.line, got, want)
	}
}

// errorLine returns the script line an error points at: the innermost
// Starlark frame of an evaluation error, or a syntax error's position.
func errorLine(err error) int {
	if ee, ok := err.(*starlark.EvalError); ok {
		for i := len(ee.CallStack) - 1; i >= 0; i-- {
			if ee.CallStack[i].Pos.Filename() != "<builtin>" {
				return int(ee.CallStack[i].Pos.Line)
			}
		}
	}
	if m := regexp.MustCompile(`:(\d+):\d+: `).FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// TestEveryBindingIsExercised checks that the golden scripts mention every
// module member ("workspace.FeedBlob", "np.random.seed") and every method
// of every type with a method table (".reshape(").
func TestEveryBindingIsExercised(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.star")
	var all strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(data)
	}
	text := all.String()
	var missing []string
	var walk func(prefix string, m *starlarkstruct.Module)
	walk = func(prefix string, m *starlarkstruct.Module) {
		for name, v := range m.Members {
			if sub, ok := v.(*starlarkstruct.Module); ok {
				walk(prefix+name+".", sub)
				continue
			}
			if !strings.Contains(text, prefix+name) {
				missing = append(missing, prefix+name)
			}
		}
	}
	for name, v := range Predeclared(nil) {
		if m, ok := v.(*starlarkstruct.Module); ok {
			if name == "math" {
				continue
			}
			walk(name+".", m)
		} else if !strings.Contains(text, name+"(") {
			missing = append(missing, name)
		}
	}
	for _, table := range binding.MethodTables() {
		for _, m := range table.Names() {
			if !strings.Contains(text, "."+m+"(") {
				missing = append(missing, table.TypeName()+"."+m)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("bindings no golden script uses:\n  %s", strings.Join(missing, "\n  "))
	}
}

// TestHelp checks what help shows for modules, types and operators.
func TestHelp(t *testing.T) {
	resetWorld(t)
	var out bytes.Buffer
	in := New(Options{Stdout: &out})
	cases := []struct {
		expr string
		want []string
	}{
		{"help()", []string{"Modules: workspace, core, np", "help(net.Relu)"}},
		{"help(np)", []string{"np: NumPy's names", "Members:", "  zeros(shape, dtype=float64)", "  float32 = float32", "  random (module)"}},
		{"help(np.random)", []string{"  seed(seed=None)"}},
		{"help(workspace)", []string{"workspace.blobs is a dict-like view", "  FeedBlob(name, arr, device_option=None)", "  blobs = <blobs of workspace"}},
		{"help(core.Net(\"h\").Relu)", []string{"operator Relu", "inputs: 1, outputs: 1", "has a gradient"}},
		{"help(\"FC\")", []string{"operator FC", "arguments:", "axis"}},
		{"help(core.BlobReference(\"b\", core.Net(\"h2\")).Relu)", []string{"operator Relu"}},
		{"help(core.Net(\"h\"))", []string{"Net(name_or_proto): a net builder", "Methods:", "  AddGradientOperators(ys, skip=0)"}},
		{"help(np.zeros(1))", []string{"ndarray: a NumPy-style array", "  reshape(*shape)"}},
		{"help(caffe2_pb2.NetDef())", []string{"caffe2.NetDef message", "external_input", "SerializeToString"}},
		{"help(caffe2_pb2.NetDef().op)", []string{"A repeated field", "  append(x)"}},
		{"help(core.BlobReference(\"b\"))", []string{"BlobReference(name, net=None)", "  GetNameScope()"}},
		{"help(core.ExecutionStep(\"s\"))", []string{"ExecutionStep: an execution-step builder", "  SetIter(num_iter)"}},
		{"help(core.Plan(\"p\"))", []string{"Plan: a plan builder", "  AddStep(step)"}},
		{"help(workspace.RunPlanInBackground(core.Plan(\"p\")))", []string{"PlanHandle", "  is_done()"}},
		{"help(help)", []string{"help(x=None)"}},
		{"help(model_helper.ModelHelper(name = \"h\"))", []string{"ModelHelper(name=None", "  GetParams(namescope=None)"}},
		{"help(brew)", []string{"brew: Caffe2's model-building helpers", "  fc(model, blob_in, blob_out, dim_in, dim_out, **kw)"}},
		{"help(optimizer.build_sgd)", []string{"optimizer.build_sgd(model, base_learning_rate"}},
		{"help(optimizer)", []string{"  build_adam(model, base_learning_rate", "  build_adagrad(model, base_learning_rate, parameters=None",
			"  build_rms_prop(model, base_learning_rate", "  add_weight_decay(model, weight_decay)", "  reset_optimizer_instance_count()"}},
		{"help(optimizer.build_adam)", []string{"beta1=0.9, beta2=0.999, epsilon=1e-8", "_first_moment", "allow_lr_injection"}},
		{"help(optimizer.build_adagrad)", []string{"epsilon=1e-4, decay=1", "parameters is accepted and ignored"}},
		{"help(optimizer.build_rms_prop)", []string{"decay=0.9, momentum=0.0, epsilon=1e-5", "Dense gradients only"}},
		{"help(optimizer.add_weight_decay)", []string{"grad += weight_decay * param"}},
		{"help(brew.db_input)", []string{"brew.db_input(model, blobs_out, batch_size, db, db_type)", "TensorProtosDBInput"}},
		{"help(brew.arg_scope)", []string{"brew.arg_scope(helpers, fn, **kw)", "inner one winning"}},
		{"help(data_parallel_model)", []string{"data_parallel_model: trains one model on several devices", "  Parallelize(model_helper_obj, input_builder_fun",
			"  RunInitNet(model)", "  RunNet(model, num_iterations)", "  GetCheckpointParams(model)", "  FinalizeAfterCheckpoint(model, blobs=None)",
			"  AddBlobSync(model, blobs, net=None)", "  ConvertNetForDevice(net, device=None)", "  ExtractPredictorNet(model, inputs, outputs, device)",
			"  GetLearningRateBlobNames(model)", "  GetDevices(model)", "  Parallelize_CPU("}},
		{"help(data_parallel_model.ExtractPredictorNet)", []string{"data_parallel_model.ExtractPredictorNet(model, inputs, outputs, device)", "(predict_net, export_blobs)"}},
		{"help(utils.make_mnist_db)", []string{"utils.make_mnist_db(image_file, label_file, output_file, db=\"badger\")", "--channel_first"}},
		{"help(data_parallel_model.Parallelize)", []string{"cpu_device=False", "shared_model=False", "combine_spatial_bn=False", "net_type=\"dag\"", "loss_scale = 1/len(devices)"}},
		{"help(with_device)", []string{"core.with_device(scope, fn, node_name=None)"}},
		{"help(workspace.FeedBlob)", []string{"workspace.FeedBlob(name, arr, device_option=None)", "exact dtype"}},
	}
	for _, c := range cases {
		out.Reset()
		if err := in.Exec(context.Background(), "help.star", c.expr); err != nil {
			t.Fatalf("%s: %s", c.expr, FormatError(err))
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", c.expr, w, out.String())
			}
		}
	}
}

// TestErrorsCarryTheScriptLine checks the traceback a failing script gets:
// the file, the line and column of the call, the binding and the Go error.
func TestErrorsCarryTheScriptLine(t *testing.T) {
	resetWorld(t)
	in := New(Options{Stdout: &bytes.Buffer{}})
	err := in.Exec(context.Background(), "model.star", "x = 1\n\nworkspace.FetchBlob(\"missing\")\n")
	if err == nil {
		t.Fatal("no error")
	}
	msg := FormatError(err)
	for _, want := range []string{"model.star:3:20: in <toplevel>", "Error in workspace.FetchBlob:", `can't find blob: "missing"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("traceback lacks %q:\n%s", want, msg)
		}
	}
	// A syntax error names its position too, and the interpreter goes on.
	err = in.Exec(context.Background(), "bad.star", "x = (\n")
	if err == nil || !strings.Contains(FormatError(err), "bad.star:2:1") {
		t.Errorf("syntax error = %v", err)
	}
	if err := in.Exec(context.Background(), "next.star", "y = x + 1\n"); err != nil {
		t.Errorf("interpreter unusable after errors: %v", err)
	}
	if got := in.Globals()["y"]; got == nil || got.String() != "2" {
		t.Errorf("y = %v, want 2", got)
	}
}

// TestBrewErrorsInTheREPL checks that a failing brew helper raises its own
// error and leaves the model usable, as a REPL user needs after a typo: the
// next calls build on the model, and a second mistake reports itself, not
// the first one.
func TestBrewErrorsInTheREPL(t *testing.T) {
	resetWorld(t)
	var out bytes.Buffer
	in := New(Options{Stdout: &out})
	run := func(src string) error { return in.Exec(context.Background(), "repl.star", src) }
	if err := run("m = model_helper.ModelHelper(name = \"repl\")\nfc1 = brew.fc(m, \"data\", \"fc1\", 4, 8)\n"); err != nil {
		t.Fatal(FormatError(err))
	}
	err := run("brew.fc(m, fc1, \"fc2\", 0, 2)\n")
	if err == nil || !strings.Contains(FormatError(err), "dim_in must be positive, got 0") {
		t.Fatalf("brew.fc with dim_in 0: %v", err)
	}
	err = run("brew.conv(m, fc1, \"c\", 8, 2, 0)\n")
	if msg := FormatError(err); err == nil || !strings.Contains(msg, "kernel must be positive") || strings.Contains(msg, "dim_in") {
		t.Fatalf("brew.conv without a kernel after a failed brew.fc: %v", err)
	}
	if err := run("fc2 = brew.fc(m, fc1, \"fc2\", 8, 2)\nprint(fc2, [op.type for op in m.net.Proto().op])\n"); err != nil {
		t.Fatalf("the model is unusable after failed calls: %s", FormatError(err))
	}
	if got, want := out.String(), "fc2 [\"FC\", \"FC\"]\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

// TestLoadSharesModules runs a script that loads a helper file.
func TestLoadSharesModules(t *testing.T) {
	resetWorld(t)
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib.star")
	if err := os.WriteFile(lib, []byte("def relu_net(name):\n    n = core.Net(name)\n    n.Relu(\"x\", \"y\")\n    return n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in := New(Options{Stdout: &out})
	src := "load(" + strconv.Quote(lib) + ", \"relu_net\")\nload(" + strconv.Quote(lib) + ", \"relu_net\")\nprint(relu_net(\"r\").Proto().op[0].type)\n"
	if err := in.Exec(context.Background(), "main.star", src); err != nil {
		t.Fatal(FormatError(err))
	}
	if out.String() != "Relu\n" {
		t.Errorf("output %q", out.String())
	}
	cyc := filepath.Join(dir, "cycle.star")
	if err := os.WriteFile(cyc, []byte("load("+strconv.Quote(cyc)+", \"x\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := in.Exec(context.Background(), "main2.star", "load("+strconv.Quote(cyc)+", \"x\")\n"); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("load cycle: %v", err)
	}
}

// TestDisplay checks how the REPL shows values.
func TestDisplay(t *testing.T) {
	resetWorld(t)
	in := New(Options{Stdout: &bytes.Buffer{}})
	cases := map[string]string{
		`np.array([1.0, 2.0], dtype = np.float32)`: "array([1., 2.], dtype=float32)",
		`np.arange(3)`:                   "array([0, 1, 2])",
		`core.BlobReference("b")`:        `BlobReference("b")`,
		`core.Net("disp")`:               `<Net "disp": 0 ops>`,
		`1.5`:                            "1.5",
		`"s"`:                            `"s"`,
		`core.DeviceOption(core.CPU, 1)`: "device_type: 0\ndevice_id: 1",
		`model_helper.ModelHelper(name = "disp_model")`: `<ModelHelper "disp_model": 0 ops, 0 params>`,
	}
	for expr, want := range cases {
		f, err := FileOptions().ParseExpr("x.star", expr, 0)
		if err != nil {
			t.Fatal(err)
		}
		v, err := in.Eval(context.Background(), f)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got := Display(v); got != want {
			t.Errorf("Display(%s) = %q, want %q", expr, got, want)
		}
	}
}
