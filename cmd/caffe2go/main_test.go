package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/script"
	"github.com/caffe2go/caffe2go/workspace"
)

// runMain runs the command in-process and returns its status and output.
func runMain(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := realMain(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// isolate runs the test in a temporary directory with a fresh default
// workspace rooted there.
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	if err := workspace.SwitchWorkspace(workspace.DefaultName, true); err != nil {
		t.Fatal(err)
	}
	if err := workspace.ResetWorkspace(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = workspace.ResetWorkspace(wd)
		_ = os.Chdir(wd)
	})
	return dir
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUsageAndVersion(t *testing.T) {
	if code, _, errOut := runMain(t, ""); code != 2 || !strings.Contains(errOut, "caffe2go run script.star") {
		t.Errorf("no args: code %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runMain(t, "", "frobnicate"); code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: code %d, stderr %q", code, errOut)
	}
	if code, out, _ := runMain(t, "", "help"); code != 0 || !strings.Contains(out, "caffe2go bench") {
		t.Errorf("help: code %d, out %q", code, out)
	}
	code, out, _ := runMain(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "caffe2go ") || !strings.Contains(out, "go.starlark.net") {
		t.Errorf("version: code %d, out %q", code, out)
	}
}

// TestHelp asks every command and subcommand for its usage: it goes to
// stdout with status 0 and nothing on stderr.
func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-h"}, "caffe2go bench [flags] net.pb"},
		{[]string{"help"}, "caffe2go bench [flags] net.pb"},
		{[]string{"run", "-h"}, "usage: caffe2go run script.star"},
		{[]string{"repl", "-help"}, "usage: caffe2go repl [-history file]"},
		{[]string{"net", "-h"}, "caffe2go net draw [-format dot|svg]"},
		{[]string{"net", "--help"}, "caffe2go net draw [-format dot|svg]"},
		{[]string{"net", "show", "-h"}, "usage: caffe2go net show net.pb"},
		{[]string{"net", "draw", "-help"}, "-format string"},
		{[]string{"bench", "-h"}, "-random-weights"},
		{[]string{"bench", "-runs", "3", "--help"}, "-width int"},
		{[]string{"version", "-h"}, "usage: caffe2go version"},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		if code != 0 || !strings.Contains(out, tc.want) || errOut != "" {
			t.Errorf("%v: code %d, stdout lacks %q or stderr is not empty:\nstdout: %s\nstderr: %s", tc.args, code, tc.want, out, errOut)
		}
	}
	for _, args := range [][]string{{"net"}, {"net", "list"}, {"version", "extra"}, {"bench", "-nope"}} {
		code, out, errOut := runMain(t, "", args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "usage: caffe2go") {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want 2, the usage on stderr only", args, code, out, errOut)
		}
	}
}

func TestRun(t *testing.T) {
	dir := isolate(t)
	ok := writeFile(t, filepath.Join(dir, "ok.star"), `
print(sys.argv)
net = core.Net("double")
net.Add(["x", "x"], "y")
workspace.FeedBlob("x", np.array([1.5, -2.0], dtype = np.float32))
workspace.RunNetOnce(net)
print(workspace.FetchBlob("y"))
`)
	code, out, errOut := runMain(t, "", "run", ok, "a", "b")
	if code != 0 {
		t.Fatalf("code %d, stderr %s", code, errOut)
	}
	want := "[\"" + ok + "\", \"a\", \"b\"]\n[ 3. -4.]\n"
	if out != want {
		t.Errorf("output %q, want %q", out, want)
	}

	bad := writeFile(t, filepath.Join(dir, "bad.star"), "x = 1\nworkspace.FetchBlob(\"nope\")\n")
	code, _, errOut = runMain(t, "", "run", bad)
	if code != 1 || !strings.Contains(errOut, "bad.star:2:20") || !strings.Contains(errOut, `can't find blob: "nope"`) {
		t.Errorf("failing script: code %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runMain(t, "", "run"); code != 2 || !strings.Contains(errOut, "no script given") {
		t.Errorf("no script: code %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runMain(t, "", "run", filepath.Join(dir, "missing.star")); code != 1 || !strings.Contains(errOut, "missing.star") {
		t.Errorf("missing script: code %d, stderr %q", code, errOut)
	}
}

// TestREPLSession drives the REPL through its standard input the way a
// person types: it defines a net over several lines, runs it, fetches a
// blob, makes a typo, reads the error and goes on in the same session.
func TestREPLSession(t *testing.T) {
	isolate(t)
	session := strings.Join([]string{
		`net = core.Net("session")`,
		`def build(n):`,
		`    n.Relu("x", "y")`,
		`    return n.Proto().op[-1].type`,
		``,
		`build(net)`,
		`workspace.FeedBlob("x", np.array([[-1.0, 2.0]], dtype = np.float32))`,
		`workspace.RunNetOnce(net)`,
		`workspace.FetchBlob("y")`,
		`net.Rleu("x", "z")`,
		`workspace.FetchBlob("z")`,
		`(1 +`,
		` 2)`,
		`_ * 10`,
		`help(workspace.FetchBlob)`,
		`x = (`,
	}, "\n") + "\n"
	code, out, errOut := runMain(t, session, "repl", "-history", "")
	if code != 0 {
		t.Fatalf("code %d, stderr %s", code, errOut)
	}
	for _, want := range []string{
		"caffe2go (devel)",
		`"Relu"`,
		"True",
		"array([[0., 2.]], dtype=float32)",
		"3\n",
		"30\n",
		"workspace.FetchBlob(name)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{
		"<stdin>:1:4: in <expr>",
		"Method Rleu is not a registered operator. Did you mean: [Relu",
		`can't find blob: "z"`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if code, _, _ := runMain(t, "", "repl", "extra"); code != 2 {
		t.Errorf("repl with arguments: code %d", code)
	}
}

func TestCompleter(t *testing.T) {
	in := script.New(script.Options{Stdout: io.Discard})
	if err := in.Exec(context.Background(), "c.star", "my_net = core.Net(\"c\")\n"); err != nil {
		t.Fatal(err)
	}
	c := completer{in}
	cases := []struct {
		line string
		want string
	}{
		{"workspace.FetchB", "lob,lobs"},
		{"x = np.random.ra", "nd,ndint,ndn"},
		{"my_n", "et"},
		{"my_net.Pro", "to"},
		{"nothing.at", ""},
	}
	for _, tc := range cases {
		got, _ := c.Do([]rune(tc.line), len([]rune(tc.line)))
		var parts []string
		for _, g := range got {
			parts = append(parts, string(g))
		}
		if strings.Join(parts, ",") != tc.want {
			t.Errorf("complete %q = %v, want %s", tc.line, parts, tc.want)
		}
	}
}

// testNet returns a small MLP predict net (and its init net) for the net
// and bench commands.
func testNet() (predict, init *netdef.NetDef) {
	p := netdef.NewNet("mlp")
	p.Op("FC", []string{"data", "fc1_w", "fc1_b"}, []string{"fc1"})
	p.Op("Relu", []string{"fc1"}, []string{"fc1"})
	p.Op("FC", []string{"fc1", "fc2_w", "fc2_b"}, []string{"fc2"})
	p.Op("Softmax", []string{"fc2"}, []string{"prob"}).Name = proto.String("softmax")
	i := netdef.NewNet("mlp_init")
	i.Op("XavierFill", nil, []string{"fc1_w"}, netdef.ArgInts("shape", 16, 8))
	i.Op("ConstantFill", nil, []string{"fc1_b"}, netdef.ArgInts("shape", 16))
	i.Op("XavierFill", nil, []string{"fc2_w"}, netdef.ArgInts("shape", 4, 16))
	i.Op("ConstantFill", nil, []string{"fc2_b"}, netdef.ArgInts("shape", 4))
	return p.Proto(), i.Proto()
}

func TestNetShowAndDraw(t *testing.T) {
	dir := isolate(t)
	def, _ := testNet()
	bin := filepath.Join(dir, "mlp.pb")
	text := filepath.Join(dir, "mlp.pbtxt")
	for _, p := range []string{bin, text} {
		if err := netdef.WriteNetDef(p, def); err != nil {
			t.Fatal(err)
		}
	}
	want, err := netdef.MarshalText(def)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{bin, text} {
		code, out, errOut := runMain(t, "", "net", "show", p)
		if code != 0 || out != string(want) {
			t.Errorf("net show %s: code %d, stderr %s, output\n%s", p, code, errOut, out)
		}
	}

	code, out, _ := runMain(t, "", "net", "draw", bin)
	if code != 0 || out != netdef.DOT(def) {
		t.Errorf("net draw (dot): code %d, output\n%s", code, out)
	}
	svgPath := filepath.Join(dir, "mlp.svg")
	if code, _, errOut := runMain(t, "", "net", "draw", "-o", svgPath, bin); code != 0 {
		t.Fatalf("net draw -o svg: code %d, %s", code, errOut)
	}
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, string(svg), 4, 9, "softmax", "fc1_w")
	code, out, _ = runMain(t, "", "net", "draw", "-format", "svg", bin)
	if code != 0 || out != string(svg) {
		t.Errorf("net draw -format svg differs from -o mlp.svg (code %d)", code)
	}

	for _, args := range [][]string{
		{"net"}, {"net", "list"}, {"net", "show"}, {"net", "draw"},
		{"net", "draw", "-format", "png", bin}, {"net", "show", "-x", bin},
	} {
		if code, _, _ := runMain(t, "", args...); code != 2 {
			t.Errorf("%v: code %d, want 2", args, code)
		}
	}
	if code, _, errOut := runMain(t, "", "net", "show", filepath.Join(dir, "nope.pb")); code != 1 || !strings.Contains(errOut, "nope.pb") {
		t.Errorf("missing file: code %d, %s", code, errOut)
	}
}

// TestNetDrawFormat chooses the picture's format from -format and the -o
// extension, and refuses an extension it cannot write.
func TestNetDrawFormat(t *testing.T) {
	dir := isolate(t)
	def, _ := testNet()
	bin := filepath.Join(dir, "mlp.pb")
	if err := netdef.WriteNetDef(bin, def); err != nil {
		t.Fatal(err)
	}
	dot, svg := netdef.DOT(def), netSVG(def)
	for _, tc := range []struct {
		format, out string
		want        string // the file's content, or "" for a usage error
		errWant     string
	}{
		{"", "net.dot", dot, ""},
		{"", "net.GV", dot, ""},
		{"", "net.svg", svg, ""},
		{"svg", "net.svg", svg, ""},
		{"dot", "net.txt", dot, ""},
		{"svg", "picture", svg, ""},
		{"", "net.png", "", "cannot tell the format of -o net.png: net draw writes Graphviz DOT (.dot, .gv) and SVG (.svg); name the file so or give -format dot|svg. For a PNG picture, write DOT and convert it: dot -Tpng net.dot -o net.png"},
		{"", "net", "", "cannot tell the format of -o net:"},
		{"svg", "net.dot", "", "-format svg disagrees with -o net.dot (.dot means dot)"},
		{"dot", "net.svg", "", "-format dot disagrees with -o net.svg (.svg means svg)"},
		{"png", "net.png", "", `unknown -format "png" (want dot or svg)`},
	} {
		out := tc.out // isolate made dir the working directory
		os.Remove(out)
		args := []string{"net", "draw", "-o", out, bin}
		if tc.format != "" {
			args = append([]string{"net", "draw", "-format", tc.format}, args[2:]...)
		}
		code, _, errOut := runMain(t, "", args...)
		if tc.want == "" {
			if code != 2 || !strings.Contains(errOut, tc.errWant) {
				t.Errorf("-format %q -o %s: code %d, stderr %q; want 2 and %q", tc.format, tc.out, code, errOut, tc.errWant)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("-format %q -o %s: refused, but wrote the file", tc.format, tc.out)
			}
			continue
		}
		got, err := os.ReadFile(out)
		if code != 0 || err != nil || string(got) != tc.want {
			t.Errorf("-format %q -o %s: code %d, stderr %q, read error %v; the file is not the %d-byte picture wanted", tc.format, tc.out, code, errOut, err, len(tc.want))
		}
	}
}

// TestNetFiles reads nets that are not what their names say: an empty
// file, a text net named .pb (read as text, with a note), text that is no
// net, and bytes that are neither format.
func TestNetFiles(t *testing.T) {
	td := testdata(t)
	dir := isolate(t)
	garbage := filepath.Join(dir, "garbage.pb")
	if err := os.WriteFile(garbage, []byte{0x12, 0xff, 0x00}, 0o644); err != nil {
		t.Fatal(err)
	}
	relu, err := os.ReadFile(filepath.Join(td, "relu_text.pb"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file     string
		code     int
		out      string
		errWants []string
	}{
		{filepath.Join(td, "empty.pb"), 1, "", []string{"empty.pb is empty: it holds no NetDef"}},
		{filepath.Join(td, "relu_text.pb"), 0, string(relu), []string{"relu_text.pb holds the protobuf text format, so it is read as text (name it .pbtxt to say so)"}},
		{filepath.Join(td, "not_a_net.pb"), 1, "", []string{"not_a_net.pb looks like the protobuf text format (name it .pbtxt), but does not parse as text", "unknown field: this"}},
		{garbage, 1, "", []string{"garbage.pb: netdef: parse NetDef"}},
	} {
		for _, cmd := range [][]string{{"net", "show"}, {"net", "draw"}, {"bench", "-runs", "1", "-input", "x=2,3"}} {
			code, out, errOut := runMain(t, "", append(cmd, tc.file)...)
			if code != tc.code || cmd[1] == "show" && out != tc.out {
				t.Errorf("%v %s: code %d, want %d; output:\n%s\nstderr: %s", cmd, tc.file, code, tc.code, out, errOut)
			}
			for _, want := range tc.errWants {
				if !strings.Contains(errOut, want) {
					t.Errorf("%v %s: stderr lacks %q:\n%s", cmd, tc.file, want, errOut)
				}
			}
		}
	}
}

// testdata returns the absolute path of the package's testdata folder, for
// tests that leave the package folder (isolate).
func testdata(t *testing.T) string {
	t.Helper()
	td, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return td
}

// checkSVG parses an SVG, counts its operator boxes and blob ellipses and
// looks for labels.
func checkSVG(t *testing.T, svg string, ops, blobs int, labels ...string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	rects, ellipses := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "rect":
				for _, a := range se.Attr {
					if a.Name.Local == "class" && a.Value == "op" {
						rects++
					}
				}
			case "ellipse":
				ellipses++
			}
		}
	}
	if rects != ops || ellipses != blobs {
		t.Errorf("SVG has %d op boxes and %d blob ellipses, want %d and %d", rects, ellipses, ops, blobs)
	}
	for _, l := range labels {
		if !strings.Contains(svg, ">"+l+"<") {
			t.Errorf("SVG lacks the label %q:\n%s", l, svg)
		}
	}
}

func TestSVGControlInputs(t *testing.T) {
	n := netdef.NewNet("ctrl")
	n.Op("ConstantFill", nil, []string{"a"})
	op := n.Op("ConstantFill", nil, []string{"b"})
	op.ControlInput = []string{"a", "never_written"}
	svg := netSVG(n.Proto())
	if strings.Count(svg, `class="edge ctrl"`) != 2 {
		t.Errorf("want 2 dashed control edges:\n%s", svg)
	}
	checkSVG(t, svg, 2, 3, "a", "never_written")
	checkSVG(t, netSVG(&netdef.NetDef{}), 0, 0)
}

func TestBench(t *testing.T) {
	dir := isolate(t)
	predict, init := testNet()
	netPath := filepath.Join(dir, "predict_net.pb")
	if err := netdef.WriteNetDef(netPath, predict); err != nil {
		t.Fatal(err)
	}
	if err := netdef.WriteNetDef(filepath.Join(dir, "init_net.pb"), init); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMain(t, "", "bench", "-runs", "3", "-warmup", "1", "-input", "data=2,8", netPath)
	if code != 0 {
		t.Fatalf("bench: code %d, stderr %s", code, errOut)
	}
	for _, want := range []string{"4 operators, 3 timed runs after 1 warm-up runs", "whole net:", "ms/run", "Softmax", "prob", "per operator type:"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "FC") != 3 {
		t.Errorf("want two FC rows and one FC type total:\n%s", out)
	}

	// Without a shape for data it fails and says how to give one.
	code, _, errOut = runMain(t, "", "bench", netPath)
	if code != 1 || !strings.Contains(errOut, "no data for the inputs data: give their shapes with -input") {
		t.Errorf("bench without shapes: code %d, stderr %s", code, errOut)
	}
	code, _, errOut = runMain(t, "", "bench", "-input", "date=2x8", netPath)
	if code != 1 || !strings.Contains(errOut, `-input date=2x8:float: no operator of the net reads "date"`) {
		t.Errorf("bench with a misspelt input: code %d, stderr %s", code, errOut)
	}
	// value_info.json beside the net gives it.
	writeFile(t, filepath.Join(dir, "value_info.json"), `{"data": [1, [3, 8]]}`)
	if code, out, errOut := runMain(t, "", "bench", "-runs", "1", netPath); code != 0 || !strings.Contains(out, "whole net") {
		t.Errorf("bench with value_info.json: code %d, stderr %s", code, errOut)
	}
	writeFile(t, filepath.Join(dir, "value_info.json"), `{"data": [4, [3, 8]]}`)
	if code, _, errOut := runMain(t, "", "bench", netPath); code != 1 || !strings.Contains(errOut, "unsupported data type 4") {
		t.Errorf("bench with a string input: code %d, stderr %s", code, errOut)
	}
	vi := writeFile(t, filepath.Join(dir, "vi.json"), `{"data": [10, [3, 8]]}`)
	if code, _, errOut := runMain(t, "", "bench", "-value-info", vi, "-init", filepath.Join(dir, "init_net.pb"), netPath); code != 1 || !strings.Contains(errOut, "FC") {
		t.Errorf("bench with int64 data into FC: code %d, stderr %s", code, errOut)
	}
	for _, tc := range []struct {
		args    []string
		errWant string
	}{
		{[]string{"bench"}, "want one net file"},
		{[]string{"bench", "-runs", "0", netPath}, "-runs must be at least 1"},
		{[]string{"bench", "-input", "data", netPath}, `invalid value "data" for flag -input: "data": want name=d0xd1x...[:dtype]`},
		{[]string{"bench", "-input", "data=a", netPath}, `"data=a": dimension "a" is not a non-negative integer`},
		{[]string{"bench", "-input", "data=2x8:complex", netPath}, `"data=2x8:complex": unknown data type "complex" (want float (float32), double (float64)`},
		{[]string{"bench", "-width", "8", netPath}, "-width 8: want a positive width, with -random-weights"},
		{[]string{"bench", "-random-weights", "-width", "-1", netPath}, "-width -1: want a positive width"},
	} {
		code, _, errOut := runMain(t, "", tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.errWant) {
			t.Errorf("%v: code %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.errWant)
		}
	}
}

// TestBenchInitAndRandomWeights benches the MLP with an init net from
// elsewhere (-init, in the text format) that makes some of its parameters
// or all of them, with -random-weights making the rest, and with inputs of
// several types.
func TestBenchInitAndRandomWeights(t *testing.T) {
	td := testdata(t)
	dir := isolate(t)
	predict, init := testNet()
	netPath := filepath.Join(dir, "mlp.pb")
	if err := netdef.WriteNetDef(netPath, predict); err != nil {
		t.Fatal(err)
	}
	fullInit := filepath.Join(t.TempDir(), "weights.pbtxt")
	if err := netdef.WriteNetDef(fullInit, init); err != nil {
		t.Fatal(err)
	}
	fc1Init := filepath.Join(td, "mlp_fc1_init.pbtxt")
	for _, tc := range []struct {
		name  string
		args  []string
		made  string // the random-weights line, "" for none
		code  int
		wants []string // in stdout, or stderr for a failure
	}{
		{"init net elsewhere", []string{"-init", fullInit, "-input", "data=2x8"}, "", 0, []string{"whole net"}},
		{"all weights made up", []string{"-random-weights", "-width", "16", "-input", "data=2x8"},
			"random weights: 4 parameters made up; made-up Conv and FC layers have 16 output channels (-width), not necessarily the trained model's", 0, []string{"whole net"}},
		{"init makes fc1, random fc2", []string{"-init", fc1Init, "-random-weights", "-width", "4", "-input", "data=2x8"},
			"random weights: 2 parameters made up; made-up Conv and FC layers have 4 output channels", 0, []string{"whole net"}},
		{"init and -input give all", []string{"-init", fc1Init, "-random-weights", "-input", "data=2x8", "-input", "fc2_w=4x16", "-input", "fc2_b=4"},
			"", 0, []string{"whole net"}},
		{"double data, double weights", []string{"-random-weights", "-width", "4", "-value-info", filepath.Join(td, "value_info_double.json")},
			"random weights: 4 parameters made up", 0, []string{"whole net"}},
		{"fc2 needs a width", []string{"-init", fc1Init, "-random-weights", "-input", "data=2x8"}, "", 1,
			[]string{`-random-weights: "fc2_w" (input 1 of operator 2, FC): the net does not record the FC's output channels: pass -width N to give every Conv and FC whose weights are made up N of them, or give this one with -input fc2_w=Mx16`}},
		{"no data shape", []string{"-random-weights", "-width", "4"}, "", 1,
			[]string{`-random-weights: "data" (input 0 of operator 0, FC): it is the operator's data input, not a parameter: give its shape with -input data=d0xd1x...[:dtype] or value_info.json, or its value with -init`}},
		{"uint8 data into FC", []string{"-random-weights", "-width", "4", "-input", "data=2x8:uint8"}, "", 1, []string{`operator 0 FC`, "UINT8"}},
		{"data of the wrong size", []string{"-init", fc1Init, "-random-weights", "-width", "4", "-input", "data=2x7"}, "", 1,
			[]string{"-random-weights, inferring the shapes: operator 0 FC", "dimension mismatch"}},
		{"a value_info type by an unknown name", []string{"-random-weights", "-width", "4", "-value-info", filepath.Join(td, "value_info_complex.json")}, "", 1,
			[]string{`value_info_complex.json: "data": unknown data type "complex"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"bench", "-runs", "2", "-warmup", "0"}, tc.args...), netPath)
			code, out, errOut := runMain(t, "", args...)
			if code != tc.code {
				t.Fatalf("%v: code %d, want %d; stderr: %s", args, code, tc.code, errOut)
			}
			where := out
			if code != 0 {
				where = errOut
			}
			for _, want := range tc.wants {
				if !strings.Contains(where, want) {
					t.Errorf("%v: output lacks %q:\nstdout: %s\nstderr: %s", args, want, out, errOut)
				}
			}
			if got := strings.Contains(out, "random weights:"); code == 0 && (got != (tc.made != "") || !strings.Contains(out, tc.made)) {
				t.Errorf("%v: want the line %q:\n%s", args, tc.made, out)
			}
		})
	}
}

// TestBenchModelZoo benches the Caffe2 model-zoo predict nets of the
// repository (their trained weights are not kept) the way a user does
// with only the input shape of value_info.json: -random-weights makes
// every parameter, narrow (-width 8) to keep the test fast.
func TestBenchModelZoo(t *testing.T) {
	zoo, err := filepath.Abs("../../testdata/caffe2-models")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model  string
		ops    int
		params int
	}{
		{"squeezenet", 66, 52},
		{"bvlc_googlenet", 142, 116},
		{"resnet50", 175, 267},
		{"densenet121", 668, 848},
	} {
		t.Run(tc.model, func(t *testing.T) {
			netPath := filepath.Join(zoo, tc.model, "predict_net.pb")
			code, out, errOut := runMain(t, "", "bench", "-random-weights", "-width", "8", "-runs", "1", "-warmup", "0", netPath)
			if code != 0 {
				t.Fatalf("code %d, stderr %s", code, errOut)
			}
			for _, want := range []string{
				fmt.Sprintf("random weights: %d parameters made up; made-up Conv and FC layers have 8 output channels (-width)", tc.params),
				fmt.Sprintf(": %d operators, 1 timed runs after 0 warm-up runs", tc.ops),
				"whole net:",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}

	// Without -width the first Conv's filter is the error, with what to pass.
	squeezenet := filepath.Join(zoo, "squeezenet", "predict_net.pb")
	code, _, errOut := runMain(t, "", "bench", "-random-weights", squeezenet)
	want := `-random-weights: "conv1_w" (input 1 of operator 0, Conv): the net does not record the Conv's output channels: pass -width N to give every Conv and FC whose weights are made up N of them, or give this one with -input conv1_w=Mx3x3x3`
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("without -width: code %d, stderr %s\nwant %s", code, errOut, want)
	}
}

// TestRunInterrupted runs a script whose RunNet would take hours in a child
// process, sends it SIGINT once the run has started, and expects it to stop
// promptly with the traceback, the reason and exit status 130.
func TestRunInterrupted(t *testing.T) {
	if os.Getenv("CAFFE2GO_INTERRUPT_CHILD") != "" {
		os.Exit(realMain([]string{"run", os.Getenv("CAFFE2GO_INTERRUPT_CHILD")}, os.Stdin, os.Stdout, os.Stderr))
	}
	file := filepath.Join(t.TempDir(), "long.star")
	src := `net = core.Net("long")
net.Relu("x", "y")
workspace.FeedBlob("x", np.array([1.0, -1.0], dtype = np.float32))
workspace.CreateNet(net)
print("started")
workspace.RunNet("long", 1000000000)
print("not reached")
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunInterrupted$")
	cmd.Env = append(os.Environ(), "CAFFE2GO_INTERRUPT_CHILD="+file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "started\n" {
		t.Fatalf("child printed %q, %v", line, err)
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130; stderr:\n%s", err, stderr.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to stop", d)
	}
	if strings.Contains(string(rest), "not reached") {
		t.Error("the script went on after the interrupted RunNet")
	}
	for _, want := range []string{"long.star:6", `net "long"`, "context canceled (interrupted)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
}
