package tests

import (
	"bytes"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// testNet is workspace_test.py's fixture: a net "test-net" with one
// ConstantFill of ones into "testblob", shape (1,2,3,4).
func testNet() *netdef.Net {
	n := netdef.NewNet("test-net")
	n.Op("ConstantFill", nil, []string{"testblob"}, netdef.ArgInts("shape", 1, 2, 3, 4), netdef.ArgFloat("value", 1.0))
	return n
}

func resetDefault(t *testing.T) {
	t.Helper()
	if err := workspace.SwitchWorkspace(workspace.DefaultName, false); err != nil {
		t.Fatal(err)
	}
	if err := workspace.ResetWorkspace(); err != nil {
		t.Fatal(err)
	}
}

func TestWorkspaceRootFolder(t *testing.T) {
	resetDefault(t)
	if got := workspace.RootFolder(); got != "." {
		t.Fatalf("RootFolder() = %q, want %q", got, ".")
	}
	dir := filepath.Join(t.TempDir(), "caffe-workspace-test")
	if err := workspace.ResetWorkspace(dir); err != nil {
		t.Fatal(err)
	}
	if got := workspace.RootFolder(); got != dir {
		t.Fatalf("RootFolder() = %q, want %q", got, dir)
	}
	// Resetting without an argument keeps the root folder.
	if err := workspace.ResetWorkspace(); err != nil {
		t.Fatal(err)
	}
	if got := workspace.RootFolder(); got != dir {
		t.Fatalf("after reset RootFolder() = %q, want %q", got, dir)
	}
	if err := workspace.ResetWorkspace("."); err != nil {
		t.Fatal(err)
	}
}

func TestWorkspaceHasBlobWithNonexistingName(t *testing.T) {
	resetDefault(t)
	if workspace.HasBlob("non-existing") {
		t.Fatal("HasBlob(non-existing) = true")
	}
}

func TestWorkspaceRunOperatorOnce(t *testing.T) {
	resetDefault(t)
	op := testNet().Proto().Op[0]
	if err := workspace.RunOperatorOnce(op); err != nil {
		t.Fatal(err)
	}
	if !workspace.HasBlob("testblob") {
		t.Fatal("testblob missing after RunOperatorOnce")
	}
	if got := workspace.Blobs(); !reflect.DeepEqual(got, []string{"testblob"}) {
		t.Fatalf("Blobs() = %v", got)
	}
}

func TestWorkspaceRunNetOnce(t *testing.T) {
	resetDefault(t)
	if err := workspace.RunNetOnce(testNet()); err != nil {
		t.Fatal(err)
	}
	if !workspace.HasBlob("testblob") {
		t.Fatal("testblob missing after RunNetOnce")
	}
	if len(workspace.Nets()) != 0 {
		t.Fatalf("RunNetOnce registered a net: %v", workspace.Nets())
	}
}

func TestWorkspaceCurrentWorkspaceWrapper(t *testing.T) {
	resetDefault(t)
	if slices.Contains(workspace.Blobs(), "testblob") {
		t.Fatal("testblob present before run")
	}
	if err := workspace.RunNetOnce(testNet()); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(workspace.Blobs(), "testblob") {
		t.Fatal("testblob absent after run")
	}
	if err := workspace.ResetWorkspace(); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(workspace.Blobs(), "testblob") {
		t.Fatal("testblob present after reset")
	}
}

func TestWorkspaceRunPlan(t *testing.T) {
	resetDefault(t)
	n := testNet()
	plan := netdef.NewPlan("test-plan")
	if err := plan.AddStep(netdef.NewExecutionStep("test-step", n.Proto())); err != nil {
		t.Fatal(err)
	}
	if err := workspace.RunPlan(plan.Proto()); err != nil {
		t.Fatal(err)
	}
	if !workspace.HasBlob("testblob") {
		t.Fatal("testblob missing after RunPlan")
	}
	// The plan's nets stay registered (test_plan_run).
	if !slices.Contains(workspace.Nets(), n.Name()) {
		t.Fatalf("net %q not registered after the plan: %v", n.Name(), workspace.Nets())
	}
}

func TestWorkspaceRunPlanInBackground(t *testing.T) {
	resetDefault(t)
	plan := netdef.NewPlan("test-plan")
	if err := plan.AddStep(netdef.NewExecutionStep("test-step", testNet().Proto())); err != nil {
		t.Fatal(err)
	}
	h := workspace.RunPlanInBackground(plan.Proto())
	if err := h.Wait(); err != nil {
		t.Fatal(err)
	}
	if !h.IsDone() {
		t.Fatal("IsDone() = false after Wait")
	}
	if !workspace.HasBlob("testblob") {
		t.Fatal("testblob missing after the background plan")
	}
}

func TestWorkspaceConstructPlanFromSteps(t *testing.T) {
	resetDefault(t)
	n := testNet()
	if err := workspace.CreateNet(n, false); err != nil {
		t.Fatal(err)
	}
	step := netdef.NewExecutionStep("test-step-as-plan", n.Proto())
	if err := workspace.RunPlan(step.Proto()); err != nil {
		t.Fatal(err)
	}
	if !workspace.HasBlob("testblob") {
		t.Fatal("testblob missing after running a bare step")
	}
}

func TestWorkspaceResetWorkspace(t *testing.T) {
	resetDefault(t)
	if err := workspace.RunNetOnce(testNet()); err != nil {
		t.Fatal(err)
	}
	if !workspace.HasBlob("testblob") {
		t.Fatal("testblob missing")
	}
	if err := workspace.ResetWorkspace(); err != nil {
		t.Fatal(err)
	}
	if workspace.HasBlob("testblob") {
		t.Fatal("testblob survived ResetWorkspace")
	}
}

func TestWorkspaceTensorAccess(t *testing.T) {
	ws := workspace.New("")
	// (1) a fetched tensor is a copy; writes through the blob's own tensor
	// are visible.
	if err := ws.FeedBlob("a", blob.MustFromSlice([]float32{1.1, 1.2, 1.3})); err != nil {
		t.Fatal(err)
	}
	blob.Data[float32](ws.GetBlob("a").Tensor())[0] = 3.3
	got, err := ws.FetchBlob("a")
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{3.3, 1.2, 1.3}; !reflect.DeepEqual(blob.Data[float32](got), want) {
		t.Fatalf("fetch = %v, want %v", blob.Data[float32](got), want)
	}
	// (2) init an int32 tensor and write one element.
	tt := ws.CreateBlob("b").MutableTensor()
	if err := tt.Init(blob.Int32, 2, 3); err != nil {
		t.Fatal(err)
	}
	blob.Data[int32](tt)[1*3+1] = 100
	got, _ = ws.FetchBlob("b")
	if want := []int32{0, 0, 0, 0, 100, 0}; !reflect.DeepEqual(blob.Data[int32](got), want) {
		t.Fatalf("int tensor = %v, want %v", blob.Data[int32](got), want)
	}
	// (4) string tensors.
	if err := ws.FeedBlob("c", blob.MustFromSlice([]string{"abc", "def", "ghi", "jkl"}, 2, 2)); err != nil {
		t.Fatal(err)
	}
	got, _ = ws.FetchBlob("c")
	if s := blob.Data[string](got); s[0] != "abc" || !reflect.DeepEqual(got.Shape(), []int{2, 2}) {
		t.Fatalf("string tensor = %v %v", s, got.Shape())
	}
	// (5) feeding copies: changing the source later does not change the blob.
	src := blob.MustFromSlice([]float32{1, 2, 3})
	if err := ws.FeedBlob("d", src); err != nil {
		t.Fatal(err)
	}
	blob.Data[float32](src)[0] = 42
	got, _ = ws.FetchBlob("d")
	if blob.Data[float32](got)[0] != 1 {
		t.Fatal("feed did not copy")
	}
	// (6) fetching copies.
	blob.Data[float32](got)[1] = 42
	again, _ := ws.FetchBlob("d")
	if blob.Data[float32](again)[1] != 2 {
		t.Fatal("fetch did not copy")
	}
}

func TestWorkspaceFetchFeedBlob(t *testing.T) {
	resetDefault(t)
	if err := workspace.RunNetOnce(testNet()); err != nil {
		t.Fatal(err)
	}
	got, err := workspace.FetchBlob("testblob")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Shape(), []int{1, 2, 3, 4}) {
		t.Fatalf("shape %v", got.Shape())
	}
	for _, v := range blob.Data[float32](got) {
		if v != 1 {
			t.Fatalf("value %v, want 1", v)
		}
	}
	twos := make([]float32, 24)
	for i := range twos {
		twos[i] = 2
	}
	if err := workspace.FeedBlob("testblob", blob.MustFromSlice(twos, 1, 2, 3, 4)); err != nil {
		t.Fatal(err)
	}
	got, _ = workspace.FetchBlob("testblob")
	if !reflect.DeepEqual(blob.Data[float32](got), twos) {
		t.Fatalf("after feed: %v", blob.Data[float32](got))
	}
}

func TestWorkspaceFetchFeedBlobTypes(t *testing.T) {
	resetDefault(t)
	r := rand.New(rand.NewPCG(1, 2))
	shape := []int{2, 3, 4}
	cases := map[string]*blob.Tensor{
		"float16": blob.MustFromSlice(fill(24, func(int) blob.Half { return blob.HalfFromFloat32(float32(r.Float64()*2000 - 1000)) }), shape...),
		"float32": blob.MustFromSlice(fill(24, func(int) float32 { return float32(r.Float64()*2000 - 1000) }), shape...),
		"float64": blob.MustFromSlice(fill(24, func(int) float64 { return r.Float64()*2000 - 1000 }), shape...),
		"bool":    blob.MustFromSlice(fill(24, func(int) bool { return r.IntN(2) == 1 }), shape...),
		"int8":    blob.MustFromSlice(fill(24, func(int) int8 { return int8(r.IntN(256) - 128) }), shape...),
		"int16":   blob.MustFromSlice(fill(24, func(int) int16 { return int16(r.IntN(65536) - 32768) }), shape...),
		"int32":   blob.MustFromSlice(fill(24, func(int) int32 { return int32(r.Uint32()) }), shape...),
		"int64":   blob.MustFromSlice(fill(24, func(int) int64 { return int64(r.Uint64()) }), shape...),
		"uint8":   blob.MustFromSlice(fill(24, func(int) uint8 { return uint8(r.IntN(256)) }), shape...),
		"uint16":  blob.MustFromSlice(fill(24, func(int) uint16 { return uint16(r.IntN(65536)) }), shape...),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if err := workspace.FeedBlob("testblob_types", in); err != nil {
				t.Fatal(err)
			}
			got, err := workspace.FetchBlob("testblob_types")
			if err != nil {
				t.Fatal(err)
			}
			if got.DataType() != in.DataType() || !reflect.DeepEqual(got.Shape(), in.Shape()) || !reflect.DeepEqual(got.Raw(), in.Raw()) {
				t.Fatalf("round trip changed %v %v into %v %v", in.DataType(), in.Shape(), got.DataType(), got.Shape())
			}
		})
	}
}

func fill[T any](n int, f func(int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestWorkspaceFetchFeedBlobBool(t *testing.T) {
	resetDefault(t)
	in := blob.MustFromSlice(fill(24, func(i int) bool { return i%2 == 0 }), 2, 3, 4)
	if err := workspace.FeedBlob("testblob_bool", in); err != nil {
		t.Fatal(err)
	}
	got, _ := workspace.FetchBlob("testblob_bool")
	if !reflect.DeepEqual(got.Raw(), in.Raw()) || got.DataType() != blob.Bool {
		t.Fatal("bool round trip failed")
	}
}

func TestWorkspaceGetBlobSizeBytes(t *testing.T) {
	resetDefault(t)
	for _, dt := range []blob.DataType{blob.Float16, blob.Float32, blob.Float64, blob.Bool, blob.Int8, blob.Int16, blob.Int32, blob.Int64, blob.Uint8, blob.Uint16} {
		in, err := blob.New(dt, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		if err := workspace.FeedBlob("sized", in); err != nil {
			t.Fatal(err)
		}
		n, err := workspace.BlobSizeBytes("sized")
		if err != nil {
			t.Fatal(err)
		}
		if n != 6*dt.ItemSize() {
			t.Fatalf("%v: size %d, want %d", dt, n, 6*dt.ItemSize())
		}
	}
	a := []string{"Hello World!", "abcd"}
	b := []string{"element1", "element2"}
	_ = workspace.FeedBlob("s1", blob.MustFromSlice(a))
	_ = workspace.FeedBlob("s2", blob.MustFromSlice(b))
	n1, _ := workspace.BlobSizeBytes("s1")
	n2, _ := workspace.BlobSizeBytes("s2")
	if n1-n2 != (len(a[0])+len(a[1]))-(len(b[0])+len(b[1])) {
		t.Fatalf("string size difference %d", n1-n2)
	}
}

func TestWorkspaceFetchFeedBlobZeroDim(t *testing.T) {
	resetDefault(t)
	in, _ := blob.New(blob.Float32, 2, 0, 3)
	if err := workspace.FeedBlob("testblob_empty", in); err != nil {
		t.Fatal(err)
	}
	got, err := workspace.FetchBlob("testblob_empty")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Shape(), []int{2, 0, 3}) || got.DataType() != blob.Float32 {
		t.Fatalf("got %v", got)
	}
}

func TestWorkspaceFetchFeedStrings(t *testing.T) {
	resetDefault(t)
	long := strings.Repeat("very long string", 128)
	for name, data := range map[string][]string{
		"long":  {long, "\x00\x01\x02 embedded", ""},
		"short": {"elem1", "elem 2", "element 3"},
	} {
		if err := workspace.FeedBlob(name, blob.MustFromSlice(data)); err != nil {
			t.Fatal(err)
		}
		got, err := workspace.FetchBlob(name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(blob.Data[string](got), data) {
			t.Fatalf("%s: got %q", name, blob.Data[string](got))
		}
	}
	plain := []byte("Hello, world! I have special \x00 symbols \x01!")
	if err := workspace.FeedBlob("plain", plain); err != nil {
		t.Fatal(err)
	}
	got, err := workspace.FetchBytes("plain")
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("plain string: %q, %v", got, err)
	}
}

func TestWorkspaceFetchBlobs(t *testing.T) {
	resetDefault(t)
	_ = workspace.FeedBlob("s1", "test1")
	_ = workspace.FeedBlob("s2", "test2")
	got, err := workspace.FetchValues([]string{"s1", "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []any{[]byte("test1"), []byte("test2")}) {
		t.Fatalf("FetchValues = %q", got)
	}
	if _, err := workspace.FetchBlob("s1"); err == nil || !strings.Contains(err.Error(), "s1") {
		t.Fatalf("FetchBlob of a string blob: %v", err)
	}
	if _, err := workspace.FetchBlob("missing"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("FetchBlob of a missing blob: %v", err)
	}
}

func TestMultiWorkspacesCreateWorkspace(t *testing.T) {
	resetDefault(t)
	defer func() { _ = workspace.SwitchWorkspace(workspace.DefaultName, false) }()
	if err := workspace.RunNetOnce(testNet()); err != nil {
		t.Fatal(err)
	}
	if !workspace.HasBlob("testblob") {
		t.Fatal("testblob missing")
	}
	if err := workspace.SwitchWorkspace("test", true); err != nil {
		t.Fatal(err)
	}
	if workspace.HasBlob("testblob") {
		t.Fatal("the new workspace sees the default workspace's blob")
	}
	if err := workspace.SwitchWorkspace(workspace.DefaultName, false); err != nil {
		t.Fatal(err)
	}
	if !workspace.HasBlob("testblob") {
		t.Fatal("testblob lost after switching back")
	}
	if err := workspace.SwitchWorkspace("non-existing", false); err == nil {
		t.Fatal("switching to a missing workspace without create succeeded")
	}
	ws := workspace.Workspaces()
	if !slices.Contains(ws, "default") || !slices.Contains(ws, "test") || !slices.IsSorted(ws) {
		t.Fatalf("Workspaces() = %v", ws)
	}
	if workspace.CurrentWorkspace() != workspace.DefaultName {
		t.Fatalf("current = %q", workspace.CurrentWorkspace())
	}
}

func TestCppEnforceAsException(t *testing.T) {
	resetDefault(t)
	op := netdef.NewOperator("Relu", []string{"X"}, []string{"Y"})
	err := workspace.RunOperatorOnce(op)
	if err == nil || !strings.Contains(err.Error(), `"X"`) {
		t.Fatalf("Relu without X: %v", err)
	}
}

func TestCWorkspaceNetExecution(t *testing.T) {
	ws := workspace.New("")
	if len(ws.Nets()) != 0 || len(ws.Blobs()) != 0 {
		t.Fatal("fresh workspace not empty")
	}
	n := testNet()
	if err := ws.CreateNet(n, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.CreateNet(n, false); err == nil || !strings.Contains(err.Error(), "refuse") {
		t.Fatalf("second CreateNet without overwrite: %v", err)
	}
	if err := ws.CreateNet(n, true); err != nil {
		t.Fatal(err)
	}
	if !ws.HasBlob("testblob") {
		t.Fatal("outputs are not created with the net")
	}
	if len(ws.Nets()) != 1 || !strings.Contains(ws.Nets()[0], "test-net") {
		t.Fatalf("Nets() = %v", ws.Nets())
	}
	if err := ws.RunNet(ws.Nets()[0], 1); err != nil {
		t.Fatal(err)
	}
	got, _ := ws.FetchBlob("testblob")
	if got.DataType() != blob.Float32 || got.Size() != 24 || blob.Data[float32](got)[23] != 1 {
		t.Fatalf("testblob = %v", got)
	}
}

func TestCWorkspaceOperatorRun(t *testing.T) {
	ws := workspace.New("")
	for i, name := range []string{"x", "名前", "with space", "a/b/c"} {
		v := float32(i)/2 - 0.75
		op := netdef.NewOperator("ConstantFill", nil, []string{name}, netdef.ArgInts("shape", 1), netdef.ArgFloat("value", v))
		if err := ws.RunOperatorOnce(op); err != nil {
			t.Fatal(err)
		}
		got, err := ws.FetchBlob(name)
		if err != nil {
			t.Fatal(err)
		}
		if d := blob.Data[float32](got)[0]; math.Abs(float64(d-v)) > 1e-4 {
			t.Fatalf("%q = %v, want %v", name, d, v)
		}
	}
}

func TestCWorkspaceNetRunAndPlanRun(t *testing.T) {
	ws := workspace.New("")
	n := testNet()
	if err := ws.RunNetOnce(n); err != nil {
		t.Fatal(err)
	}
	if !ws.HasBlob("testblob") || len(ws.Nets()) != 0 {
		t.Fatalf("RunNetOnce: blobs %v nets %v", ws.Blobs(), ws.Nets())
	}
	ws2 := workspace.New("")
	plan := netdef.NewPlan("test-plan")
	if err := plan.AddStep(netdef.NewExecutionStep("step", n.Proto()).SetIter(1)); err != nil {
		t.Fatal(err)
	}
	if err := ws2.RunPlan(plan.Proto()); err != nil {
		t.Fatal(err)
	}
	if !ws2.HasBlob("testblob") || !slices.Contains(ws2.Nets(), n.Name()) {
		t.Fatalf("plan run: blobs %v nets %v", ws2.Blobs(), ws2.Nets())
	}
}

func TestCWorkspaceArrayAndStringSerde(t *testing.T) {
	ws := workspace.New("")
	r := rand.New(rand.NewPCG(3, 4))
	in := blob.MustFromSlice(fill(30, func(int) float32 { return float32(r.NormFloat64()) }), 5, 6)
	if err := ws.FeedBlob("arr", in); err != nil {
		t.Fatal(err)
	}
	data, err := ws.SerializeBlob("arr")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.DeserializeBlob("arr2", data); err != nil {
		t.Fatal(err)
	}
	got, _ := ws.FetchBlob("arr2")
	if !reflect.DeepEqual(got.Raw(), in.Raw()) || !reflect.DeepEqual(got.Shape(), in.Shape()) {
		t.Fatal("array serde round trip differs")
	}
	_ = ws.FeedBlob("str", "some ascii bytes")
	data, err = ws.SerializeBlob("str")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.DeserializeBlob("str2", data); err != nil {
		t.Fatal(err)
	}
	if s, _ := ws.FetchBytes("str2"); string(s) != "some ascii bytes" {
		t.Fatalf("string serde = %q", s)
	}
}

func TestWorkspaceChildSeesParent(t *testing.T) {
	parent := workspace.New("")
	_ = parent.FeedBlob("p", []float32{1})
	child := parent.NewChild()
	if !child.HasBlob("p") {
		t.Fatal("child does not see the parent's blob")
	}
	if child.CreateBlob("p") != parent.GetBlob("p") {
		t.Fatal("CreateBlob in the child did not return the parent's blob")
	}
	_ = child.FeedBlob("c", []float32{2})
	if parent.HasBlob("c") {
		t.Fatal("the parent sees the child's blob")
	}
	if got := child.Blobs(); !reflect.DeepEqual(got, []string{"c", "p"}) {
		t.Fatalf("child.Blobs() = %v", got)
	}
	fw, err := workspace.NewForwarding(parent, map[string]string{"local": "p"})
	if err != nil {
		t.Fatal(err)
	}
	if fw.GetBlob("local") != parent.GetBlob("p") || fw.HasBlob("p") {
		t.Fatal("forwarding workspace resolves names wrongly")
	}
	if _, err := workspace.NewForwarding(parent, map[string]string{"x": "missing"}); err == nil {
		t.Fatal("forwarding a missing parent blob succeeded")
	}
}

func TestWorkspaceFeedHonoursDeviceScope(t *testing.T) {
	if workspace.NumCudaDevices() > 0 {
		t.Skip("this build has CUDA devices; the CUDA tests cover feeding onto them")
	}
	ws := workspace.New("")
	var err error
	devicescope.DeviceScope(devicescope.CUDA(0), func() {
		err = ws.FeedBlob("g", []float32{1})
	})
	// Without a CUDA build the device does not exist: the feed must fail
	// naming the blob and leave nothing behind.
	if err == nil || !strings.Contains(err.Error(), `"g"`) {
		t.Fatalf("feed under a CUDA scope: %v", err)
	}
	if ws.HasBlob("g") {
		t.Fatal("failed feed created the blob")
	}
	if err := ws.FeedBlob("c", []float32{1}, workspace.OnDevice(devicescope.CPU())); err != nil {
		t.Fatal(err)
	}
}
