package devicescope

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/caffe2go/caffe2go/netdef"
)

// Task is a unit of work a device's workers run. Passing a pointer that
// implements Task does not allocate, which keeps executors allocation-free.
type Task interface {
	Run()
}

// Device is a logical device: a place where operators run and tensors live.
// A new device type is a Device implementation registered with
// RegisterDeviceType, plus operator registrations for that type.
type Device interface {
	// Key identifies the device.
	Key() Key
	// Option returns a fresh DeviceOption naming the device.
	Option() *netdef.DeviceOption
	// EnsureWorkers makes the device run at least n tasks concurrently.
	EnsureWorkers(n int)
	// Submit queues t to run on one of the device's workers.
	Submit(t Task)
	// Synchronize waits until work the device started asynchronously (for
	// example on a GPU stream) is finished. CPU work is synchronous.
	Synchronize() error
}

// Factory creates the device with the given index of one device type.
type Factory func(id int32) (Device, error)

var devices struct {
	sync.Mutex
	factories map[netdef.DeviceType]Factory
	counts    map[netdef.DeviceType]func() int
	live      map[Key]Device
}

// RegisterDeviceType makes devices of deviceType available through Get;
// count reports how many physical devices of the type the machine has.
// A missing factory or count, or a type registered twice, is an error.
func RegisterDeviceType(deviceType netdef.DeviceType, f Factory, count func() int) error {
	if f == nil || count == nil {
		return fmt.Errorf("devicescope: RegisterDeviceType(%v) needs a factory and a count", deviceType)
	}
	devices.Lock()
	defer devices.Unlock()
	if devices.factories == nil {
		devices.factories = map[netdef.DeviceType]Factory{}
		devices.counts = map[netdef.DeviceType]func() int{}
	}
	if _, dup := devices.factories[deviceType]; dup {
		return fmt.Errorf("devicescope: device type %v registered twice", deviceType)
	}
	devices.factories[deviceType] = f
	devices.counts[deviceType] = count
	return nil
}

// MustRegisterDeviceType is RegisterDeviceType for init functions: it
// panics on an error.
func MustRegisterDeviceType(deviceType netdef.DeviceType, f Factory, count func() int) {
	if err := RegisterDeviceType(deviceType, f, count); err != nil {
		panic(err)
	}
}

// DeviceTypes returns the registered device types in increasing order.
func DeviceTypes() []netdef.DeviceType {
	devices.Lock()
	defer devices.Unlock()
	out := make([]netdef.DeviceType, 0, len(devices.factories))
	for t := range devices.factories {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// NumDevices returns how many devices of a type the machine has: 0 for a
// type this build does not support. For the CPU it is the number of cores,
// although any number of logical CPU devices can be used.
func NumDevices(deviceType netdef.DeviceType) int {
	devices.Lock()
	count := devices.counts[deviceType]
	devices.Unlock()
	if count == nil {
		return 0
	}
	return count()
}

// Get returns the device that opt names (nil = cpu_0), creating it on first
// use. An unsupported device type is an error naming it.
func Get(opt *netdef.DeviceOption) (Device, error) {
	key := KeyOf(opt)
	devices.Lock()
	defer devices.Unlock()
	if d, ok := devices.live[key]; ok {
		return d, nil
	}
	f, ok := devices.factories[key.Type]
	if !ok {
		return nil, fmt.Errorf("devicescope: device type %v (%d) is not available in this build", key.Type, int32(key.Type))
	}
	if key.ID < 0 {
		return nil, fmt.Errorf("devicescope: invalid device id %d for %v", key.ID, key.Type)
	}
	d, err := f(key.ID)
	if err != nil {
		return nil, fmt.Errorf("devicescope: creating %s: %w", key, err)
	}
	if devices.live == nil {
		devices.live = map[Key]Device{}
	}
	devices.live[key] = d
	return d, nil
}

func init() { MustRegisterDeviceType(netdef.CPU, newCPUDevice, runtime.NumCPU) }

// cpuDevice is a logical CPU device with its own pool of worker goroutines.
// Any number of them can exist (cpu_0 … cpu_N); they share the machine's
// cores but schedule independently, like separate GPUs would.
type cpuDevice struct {
	id    int32
	tasks chan Task
	mu    sync.Mutex
	n     int
}

func newCPUDevice(id int32) (Device, error) {
	return &cpuDevice{id: id, tasks: make(chan Task, 1024)}, nil
}

func (d *cpuDevice) Key() Key { return Key{Type: netdef.CPU, ID: d.id} }

func (d *cpuDevice) Option() *netdef.DeviceOption { return CPUDevice(int(d.id)) }

func (d *cpuDevice) EnsureWorkers(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for ; d.n < n; d.n++ {
		go func() {
			for t := range d.tasks {
				t.Run()
			}
		}()
	}
}

func (d *cpuDevice) Submit(t Task) {
	d.EnsureWorkers(1)
	select {
	case d.tasks <- t:
	default:
		// The queue is full, possibly because every worker is itself
		// blocked submitting; run the task beside the pool instead of
		// deadlocking.
		go t.Run()
	}
}

func (d *cpuDevice) Synchronize() error { return nil }
