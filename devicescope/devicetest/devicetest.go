// Package devicetest registers a device type for tests: a device with
// memory of its own, kept in host RAM but reachable only through the
// devicescope.Allocator and devicescope.Copier interfaces, the way a GPU's
// memory is. Importing it lets a CPU-only test exercise every path that
// moves tensors between the host and a device (feeding, fetching, copy
// operators, wrong-device checks, device checkpoints) without a GPU.
//
// Devices of the type are "device1000_0", "device1000_1", …; any id is
// valid, and each device counts its allocations so that tests can assert a
// steady state.
package devicetest

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// Type is the test device type. It is no Caffe2 device type.
const Type netdef.DeviceType = 1000

// NumDevices is what devicescope.NumDevices reports for Type.
const NumDevices = 4

func init() {
	devicescope.MustRegisterDeviceType(Type, func(id int32) (devicescope.Device, error) {
		return &Device{id: id}, nil
	}, func() int { return NumDevices })
}

// Option returns the device option of test device id.
func Option(id int) *netdef.DeviceOption { return netdef.NewDeviceOption(Type, int32(id)) }

// Get returns test device id.
func Get(id int) *Device {
	d, err := devicescope.Get(Option(id))
	if err != nil {
		panic(err) // the type is registered in init and takes any id ≥ 0
	}
	return d.(*Device)
}

// Device is one test device: synchronous, with its memory in blocks that
// no Go slice outside this package reaches.
type Device struct {
	id     int32
	allocs atomic.Int64
	mu     sync.Mutex
	fail   error
}

// Memory is a block of a test device's memory.
type Memory struct {
	dev *Device
	b   []byte
}

// Bytes implements devicescope.Memory.
func (m *Memory) Bytes() int { return len(m.b) }

// Key implements devicescope.Device.
func (d *Device) Key() devicescope.Key { return devicescope.Key{Type: Type, ID: d.id} }

// Option implements devicescope.Device.
func (d *Device) Option() *netdef.DeviceOption { return Option(int(d.id)) }

// EnsureWorkers implements devicescope.Device; tasks run on goroutines of
// their own.
func (d *Device) EnsureWorkers(int) {}

// Submit implements devicescope.Device.
func (d *Device) Submit(t devicescope.Task) { go t.Run() }

// Synchronize implements devicescope.Device; the device's work is
// synchronous.
func (d *Device) Synchronize() error { return nil }

// Allocations returns how many blocks the device has allocated.
func (d *Device) Allocations() int64 { return d.allocs.Load() }

// FailWith makes every later allocation and copy on the device fail with
// err (nil to stop failing), to test error paths.
func (d *Device) FailWith(err error) {
	d.mu.Lock()
	d.fail = err
	d.mu.Unlock()
}

func (d *Device) failure() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fail
}

// Allocate implements devicescope.Allocator.
func (d *Device) Allocate(nbytes int) (devicescope.Memory, error) {
	if err := d.failure(); err != nil {
		return nil, err
	}
	if nbytes < 0 {
		return nil, fmt.Errorf("devicetest: allocating %d bytes", nbytes)
	}
	d.allocs.Add(1)
	return &Memory{dev: d, b: make([]byte, nbytes)}, nil
}

// block returns m's bytes [off, off+n) after checking that m is memory of
// a test device and the range lies inside it.
func block(m devicescope.Memory, off, n int) ([]byte, error) {
	tm, ok := m.(*Memory)
	if !ok {
		return nil, fmt.Errorf("devicetest: %T is not test device memory", m)
	}
	if off < 0 || n < 0 || off+n > len(tm.b) {
		return nil, fmt.Errorf("devicetest: bytes [%d, %d) outside a block of %d", off, off+n, len(tm.b))
	}
	return tm.b[off : off+n], nil
}

// CopyFromHost implements devicescope.Copier.
func (d *Device) CopyFromHost(dst devicescope.Memory, dstOff int, src []byte) error {
	if err := d.failure(); err != nil {
		return err
	}
	b, err := block(dst, dstOff, len(src))
	if err != nil {
		return err
	}
	copy(b, src)
	return nil
}

// CopyToHost implements devicescope.Copier.
func (d *Device) CopyToHost(dst []byte, src devicescope.Memory, srcOff int) error {
	if err := d.failure(); err != nil {
		return err
	}
	b, err := block(src, srcOff, len(dst))
	if err != nil {
		return err
	}
	copy(dst, b)
	return nil
}

// CopyDevice implements devicescope.Copier; src may be another test
// device's memory.
func (d *Device) CopyDevice(dst devicescope.Memory, dstOff int, src devicescope.Memory, srcOff, nbytes int) error {
	if err := d.failure(); err != nil {
		return err
	}
	to, err := block(dst, dstOff, nbytes)
	if err != nil {
		return err
	}
	from, err := block(src, srcOff, nbytes)
	if err != nil {
		return err
	}
	copy(to, from)
	return nil
}
