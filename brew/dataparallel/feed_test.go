package dataparallel_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
)

func feedModel(t *testing.T, devices []int) *dataparallel.Parallel {
	t.Helper()
	p, err := dataparallel.Parallelize(brew.NewModel("feed"), dataparallel.Options{
		Devices: devices, ForwardBuilder: fcForward(nil), ParamUpdateBuilder: perDeviceSGD(0.1), Workspace: newWorkspace(t)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScatter checks that a batch is split in consecutive equal shares,
// in device order, on the devices, and the errors.
func TestScatter(t *testing.T) {
	p := feedModel(t, []int{2, 0})
	rows := []int32{10, 11, 12, 13, 14, 15}
	batch := brew.Dataset{
		"data":  blob.MustFromSlice([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 6, 2),
		"label": blob.MustFromSlice(rows, 6),
	}
	if err := p.Scatter(batch); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		blob string
		want any
	}{
		{"cpu_2/data", []float32{0, 1, 2, 3, 4, 5}},
		{"cpu_0/data", []float32{6, 7, 8, 9, 10, 11}},
		{"cpu_2/label", []int32{10, 11, 12}},
		{"cpu_0/label", []int32{13, 14, 15}},
	}
	for _, tc := range tests {
		v, err := p.Workspace().FetchBlob(tc.blob)
		if err != nil {
			t.Fatal(err)
		}
		var ok bool
		switch want := tc.want.(type) {
		case []float32:
			ok = slices.Equal(blob.Data[float32](v), want) && v.Dim(0) == 3 && v.Dim(1) == 2
		case []int32:
			ok = slices.Equal(blob.Data[int32](v), want)
		}
		if !ok {
			t.Errorf("%s = %v, want %v", tc.blob, v, tc.want)
		}
	}
	errs := []struct {
		name  string
		batch brew.Dataset
		want  string
	}{
		{"uneven", brew.Dataset{"data": blob.MustFromSlice(make([]float32, 5), 5)}, "does not split evenly"},
		{"mismatch", brew.Dataset{"data": blob.MustFromSlice(make([]float32, 4), 4), "label": blob.MustFromSlice(make([]float32, 2), 2)}, "examples"},
		{"scalar", brew.Dataset{"data": blob.Scalar[float32](1)}, "scalar"},
		{"empty", brew.Dataset{}, "empty"},
	}
	for _, tc := range errs {
		if err := p.Scatter(tc.batch); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := p.FeedDevice(1, "data", []float32{1}); err == nil {
		t.Error("feeding device 1, which the model does not use, succeeded")
	}
}

// TestLoader checks that a loader goes through the whole batches of an
// epoch, in order or shuffled, and wraps around.
func TestLoader(t *testing.T) {
	p := feedModel(t, []int{0, 1})
	ids := make([]int64, 10)
	for i := range ids {
		ids[i] = int64(i)
	}
	data := brew.Dataset{"id": blob.MustFromSlice(ids, 10)}
	read := func(l *dataparallel.Loader) []int64 {
		if err := l.Next(); err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, d := range p.Devices() {
			v, err := p.Workspace().FetchBlob(p.DeviceBlob(d, "id"))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, blob.Data[int64](v)...)
		}
		return out
	}
	l, err := dataparallel.NewLoader(p, data, dataparallel.LoaderOptions{BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if l.BatchesPerEpoch() != 2 {
		t.Errorf("BatchesPerEpoch = %d", l.BatchesPerEpoch())
	}
	for i, want := range [][]int64{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 2, 3}} {
		if got := read(l); !slices.Equal(got, want) {
			t.Errorf("batch %d = %v, want %v", i, got, want)
		}
	}
	if l.Epoch() != 1 {
		t.Errorf("Epoch = %d after wrapping once", l.Epoch())
	}
	shuffled, err := dataparallel.NewLoader(p, data, dataparallel.LoaderOptions{BatchSize: 4, Shuffle: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for range 2 {
		for _, id := range read(shuffled) {
			if seen[id] {
				t.Errorf("example %d read twice in one epoch", id)
			}
			seen[id] = true
		}
	}
	for _, o := range []dataparallel.LoaderOptions{{BatchSize: 3}, {BatchSize: 0}, {BatchSize: 12}} {
		if _, err := dataparallel.NewLoader(p, data, o); err == nil {
			t.Errorf("NewLoader with batch %d succeeded", o.BatchSize)
		}
	}
}
