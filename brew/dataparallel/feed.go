package dataparallel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/workspace"
)

// FeedDevice feeds value into device d's copy of blob ("cpu_<d>/<blob>"),
// placed on that device: what a Caffe2 driver does with FeedBlob under the
// device's scope. value is anything workspace.FeedBlob takes.
func (p *Parallel) FeedDevice(d int, blob string, value any) error {
	if !slices.Contains(p.devices, d) {
		return fmt.Errorf("dataparallel: FeedDevice: device %d is not one of %v", d, p.devices)
	}
	if err := p.Workspace().FeedBlob(p.DeviceBlob(d, blob), value, workspace.OnDevice(p.DeviceOption(d))); err != nil {
		return fmt.Errorf("dataparallel: %w", err)
	}
	return nil
}

// Scatter splits a batch across the devices, as PyTorch's DataParallel
// scatters its input: every tensor of batch is cut along its first
// dimension into len(Devices()) equal parts, and the j-th device of the
// list gets rows [j·B/N, (j+1)·B/N) in its copy of the blob ("data" →
// "cpu_<d>/data"). Every tensor must have the same number of rows B, a
// multiple of the number of devices (the loss scale assumes equal shares).
// The device blobs are overwritten in place, without allocating once
// their shapes are set.
func (p *Parallel) Scatter(batch brew.Dataset) error {
	n, err := batch.Len()
	if err != nil {
		return fmt.Errorf("dataparallel: Scatter: %w", err)
	}
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	return p.scatterRows(batch, sortedNames(batch), rows)
}

func sortedNames(d brew.Dataset) []string {
	names := make([]string, 0, len(d))
	for name := range d {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// scatterRows feeds the examples rows of data, split in equal consecutive
// shares, to the devices in order.
func (p *Parallel) scatterRows(data brew.Dataset, names []string, rows []int) error {
	nd := len(p.devices)
	if len(rows)%nd != 0 {
		return fmt.Errorf("dataparallel: Scatter: a batch of %d examples does not split evenly over %d devices", len(rows), nd)
	}
	per := len(rows) / nd
	ws := p.Workspace()
	var dims []int
	for _, name := range names {
		src := data[name]
		if src.NumDims() == 0 {
			return fmt.Errorf("dataparallel: Scatter: blob %q is a scalar; its first dimension must index the examples", name)
		}
		dims = append(dims[:0], src.Dims()...)
		dims[0] = per
		for j, d := range p.devices {
			dname := p.DeviceBlob(d, name)
			dst := ws.CreateBlob(dname).MutableTensor()
			opt := p.DeviceOption(d)
			dst.SetDevice(opt) // CPU tensors record no device
			// A device with memory of its own gets the rows gathered on
			// the host first.
			host := dst
			if _, onDevice := devicescope.MemoryOf(opt); onDevice {
				if p.staging == nil {
					p.staging = map[string]*blob.Tensor{}
				}
				if host = p.staging[dname]; host == nil {
					host = blob.MustFromSlice([]float32{})
					p.staging[dname] = host
				}
			}
			if host.DataType() != src.DataType() || !slices.Equal(host.Dims(), dims) {
				if err := host.Init(src.DataType(), dims...); err != nil {
					return fmt.Errorf("dataparallel: Scatter: %q: %w", dname, err)
				}
			}
			if err := gather(host, src, rows[j*per:(j+1)*per]); err != nil {
				return fmt.Errorf("dataparallel: Scatter: %q: %w", name, err)
			}
			if host != dst {
				if err := dst.CopyFrom(host); err != nil {
					return fmt.Errorf("dataparallel: Scatter: %q: %w", dname, err)
				}
			}
		}
	}
	return nil
}

// gather copies the rows of src (first-dimension slices) into dst, which
// has their shape.
func gather(dst, src *blob.Tensor, rows []int) error {
	w := src.SizeFromDim(1)
	switch s := src.Raw().(type) {
	case []float32:
		gatherRows(dst.Raw().([]float32), s, rows, w)
	case []float64:
		gatherRows(dst.Raw().([]float64), s, rows, w)
	case []blob.Half:
		gatherRows(dst.Raw().([]blob.Half), s, rows, w)
	case []int8:
		gatherRows(dst.Raw().([]int8), s, rows, w)
	case []int16:
		gatherRows(dst.Raw().([]int16), s, rows, w)
	case []int32:
		gatherRows(dst.Raw().([]int32), s, rows, w)
	case []int64:
		gatherRows(dst.Raw().([]int64), s, rows, w)
	case []uint8:
		gatherRows(dst.Raw().([]uint8), s, rows, w)
	case []uint16:
		gatherRows(dst.Raw().([]uint16), s, rows, w)
	case []bool:
		gatherRows(dst.Raw().([]bool), s, rows, w)
	case []string:
		gatherRows(dst.Raw().([]string), s, rows, w)
	default:
		return fmt.Errorf("element type %v cannot be scattered", src.DataType())
	}
	return nil
}

func gatherRows[T any](dst, src []T, rows []int, width int) {
	for i, r := range rows {
		copy(dst[i*width:(i+1)*width], src[r*width:(r+1)*width])
	}
}

// LoaderOptions configure a Loader.
type LoaderOptions struct {
	// BatchSize is the total number of examples per step, split evenly
	// over the devices; it must be a positive multiple of their number.
	BatchSize int
	// Shuffle draws a new order of the examples at the start of every
	// epoch, from a generator seeded with Seed; otherwise they are read in
	// order.
	Shuffle bool
	Seed    uint64
}

// Loader feeds a data-parallel model batch after batch from an in-memory
// dataset, scattering each batch over the devices (see Scatter). An epoch
// is the whole batches of the dataset; the remaining examples of an epoch
// are skipped. A Loader is not safe for concurrent use.
type Loader struct {
	p       *Parallel
	data    brew.Dataset
	names   []string
	o       LoaderOptions
	rng     *rand.Rand
	order   []int
	pos     int
	epoch   int
	batches int
}

// NewLoader returns a loader over data for p. data must hold at least one
// batch.
func NewLoader(p *Parallel, data brew.Dataset, o LoaderOptions) (*Loader, error) {
	n, err := data.Len()
	if err != nil {
		return nil, fmt.Errorf("dataparallel: NewLoader: %w", err)
	}
	nd := len(p.devices)
	if o.BatchSize <= 0 || o.BatchSize%nd != 0 {
		return nil, fmt.Errorf("dataparallel: NewLoader: batch size %d is not a positive multiple of the %d devices", o.BatchSize, nd)
	}
	if n < o.BatchSize {
		return nil, fmt.Errorf("dataparallel: NewLoader: %d examples, fewer than one batch of %d", n, o.BatchSize)
	}
	l := &Loader{p: p, data: data, names: sortedNames(data), o: o, order: make([]int, n), batches: n / o.BatchSize}
	for i := range l.order {
		l.order[i] = i
	}
	if o.Shuffle {
		l.rng = rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
		l.shuffle()
	}
	return l, nil
}

func (l *Loader) shuffle() {
	l.rng.Shuffle(len(l.order), func(i, j int) { l.order[i], l.order[j] = l.order[j], l.order[i] })
}

// Next feeds the next batch to the devices, starting a new epoch (with a
// new order when shuffling) after the last whole batch of one.
func (l *Loader) Next() error {
	if l.pos+l.o.BatchSize > len(l.order) {
		l.pos = 0
		l.epoch++
		if l.rng != nil {
			l.shuffle()
		}
	}
	rows := l.order[l.pos : l.pos+l.o.BatchSize]
	l.pos += l.o.BatchSize
	return l.p.scatterRows(l.data, l.names, rows)
}

// Epoch returns the number of completed passes before the last batch fed.
func (l *Loader) Epoch() int { return l.epoch }

// BatchesPerEpoch returns the number of batches in one epoch.
func (l *Loader) BatchesPerEpoch() int { return l.batches }
