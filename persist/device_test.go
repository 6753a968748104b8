package persist

import (
	"math/rand/v2"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope/devicetest"
)

// TestCheckpointDeviceTensors saves tensors that live in a device's own
// memory (the test device), in records and in the data file, and loads
// them back onto the devices they came from.
func TestCheckpointDeviceTensors(t *testing.T) {
	s := openStStore(t)
	r := rand.New(rand.NewPCG(3, 4))
	ws := newStWS()
	want := map[string]*blob.Tensor{
		"small": stRandomTensor(r, blob.Float32, 3, 5),
		"big":   stRandomTensor(r, blob.Float64, 1, 600_000), // ~5 MB: the data file
		"ints":  stRandomTensor(r, blob.Int64, 7),
	}
	dev := map[string]int{"small": 1, "big": 2, "ints": 1}
	for name, host := range want {
		onDev, err := host.CopyTo(devicetest.Option(dev[name]))
		if err != nil {
			t.Fatal(err)
		}
		ws.set(name, onDev)
	}
	if err := s.SaveCheckpoint(ws, 1, []string{"big", "ints", "small"}); err != nil {
		t.Fatal(err)
	}
	m, err := s.Checkpoint(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range m.Blobs {
		if inFile := b.Name == "big"; b.InDataFile != inFile {
			t.Fatalf("%s: in the data file %v, want %v (both paths must be exercised)", b.Name, b.InDataFile, inFile)
		}
		if b.DeviceType != devicetest.Type || int(b.DeviceID) != dev[b.Name] {
			t.Errorf("%s: the manifest records device %v:%d", b.Name, b.DeviceType, b.DeviceID)
		}
	}
	out := newStWS()
	if err := s.LoadCheckpoint(out, 1); err != nil {
		t.Fatal(err)
	}
	for name, host := range want {
		got := out.GetBlob(name).Tensor()
		if got.OnHost() || got.Device().Type() != devicetest.Type || int(got.Device().GetDeviceId()) != dev[name] {
			t.Fatalf("%s loaded on %v (host %v), want device %d of the test type", name, got.Device(), got.OnHost(), dev[name])
		}
		back, err := got.ToHost()
		if err != nil {
			t.Fatal(err)
		}
		stSameTensor(t, name, back, host)
	}
}
