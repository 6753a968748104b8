package sparse

import (
	"encoding/binary"
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// qFormat is a rowwise-quantized embedding table's layout.
type qFormat int

const (
	// fused8: each row is its 8-bit codes, then scale and bias as two
	// little-endian float32 (8 bytes).
	fused8 qFormat = iota
	// fused4: each row is its 4-bit codes packed two to a byte (the even
	// column in the low nibble), then scale and bias as two float16.
	fused4
	// rowwise8: 8-bit codes [rows, …] and a separate FLOAT [rows, 2]
	// tensor of (scale, bias).
	rowwise8
)

// Caffe2's threshold under which FloatToRowwiseQuantized8Bits treats a row
// as constant.
const rowwise8Equal = 1e-10

func init() {
	for _, c := range []struct {
		typ      string
		format   qFormat
		quantize bool
		shape    operators.ShapeFunc
		doc      string
	}{
		{"FloatToFused8BitRowwiseQuantized", fused8, true, lastDimShape(blob.Uint8, func(c int) int { return c + 8 }),
			"FLOAT [..., C] -> UINT8 [..., C+8]: each row quantized to 8 bits with scale (max−min)/255 and bias min, stored as two float32 after the codes."},
		{"Fused8BitRowwiseQuantizedToFloat", fused8, false, lastDimShape(blob.Float32, func(c int) int { return c - 8 }),
			"UINT8 [..., C+8] (FloatToFused8BitRowwiseQuantized's layout) -> FLOAT [..., C]: code·scale + bias."},
		{"FloatToFused4BitRowwiseQuantized", fused4, true, lastDimShape(blob.Uint8, func(c int) int { return (c+1)/2 + 4 }),
			"FLOAT [..., C] (C even) -> UINT8 [..., C/2+4]: each row quantized to 4 bits, two codes a byte, with a float16 scale and bias after them."},
		{"Fused4BitRowwiseQuantizedToFloat", fused4, false, lastDimShape(blob.Float32, func(c int) int { return (c - 4) * 2 }),
			"UINT8 [..., B] (FloatToFused4BitRowwiseQuantized's layout) -> FLOAT [..., 2(B−4)]: code·scale + bias."},
		{"FloatToRowwiseQuantized8Bits", rowwise8, true, func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
			if in[0].Unknown || in[0].Rank() < 1 {
				return nil, nil
			}
			return []operators.TensorShape{in[0].WithType(blob.Uint8), operators.Shape(blob.Float32, in[0].Dim(0), 2)}, nil
		}, "FLOAT [N, ...] -> (UINT8 [N, ...], FLOAT scale_bias [N, 2]): each row quantized to 8 bits (rounding half away from zero); a constant row gets scale 1 and codes 0."},
		{"Rowwise8BitQuantizedToFloat", rowwise8, false, func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
			if in[0].Unknown {
				return nil, nil
			}
			return []operators.TensorShape{in[0].WithType(blob.Float32)}, nil
		}, "(UINT8 [N, ...], FLOAT scale_bias [N, 2]) -> FLOAT [N, ...]: code·scale + bias."},
	} {
		// FloatToRowwiseQuantized8Bits writes the scales and biases as a
		// second output, which Rowwise8BitQuantizedToFloat takes as a
		// second input.
		ins, outs := 1, 1
		if c.format == rowwise8 && c.quantize {
			outs = 2
		} else if c.format == rowwise8 {
			ins = 2
		}
		operators.MustRegisterCPU(operators.Schema{Type: c.typ, MinInputs: ins, MaxInputs: ins, MinOutputs: outs, MaxOutputs: outs, Doc: c.doc},
			func(b *operators.Base) (operators.Operator, error) {
				if c.quantize {
					return &quantizeOp{Base: b, format: c.format}, nil
				}
				return &dequantizeOp{Base: b, format: c.format}, nil
			})
		operators.MustRegisterNoGradient(c.typ)
		operators.MustRegisterShapeFunc(c.typ, c.shape)
	}

	lookups := []struct {
		suffix string
		format qFormat
	}{{"Fused8BitRowwise", fused8}, {"Fused4BitRowwise", fused4}, {"8BitsRowwise", rowwise8}}
	kinds := []struct {
		name string
		kind reduceKind
		l    layout
	}{{"Sum", reduceSum, sparseLayout}, {"WeightedSum", reduceWeightedSum, sparseWeightedLayout}, {"Mean", reduceMean, sparseLayout}}
	for _, lk := range lookups {
		for _, k := range kinds {
			lk, k := lk, k
			typ := "SparseLengths" + k.name + lk.suffix
			n := k.l.lengths + 1
			doc := "SparseLengths" + k.name + " of a table quantized by " + map[qFormat]string{
				fused8:   "FloatToFused8BitRowwiseQuantized: (DATA, ",
				fused4:   "FloatToFused4BitRowwiseQuantized: (DATA, ",
				rowwise8: "FloatToRowwiseQuantized8Bits: (DATA, ",
			}[lk.format]
			if k.l.weights >= 0 {
				doc += "WEIGHTS, "
			}
			doc += "INDICES, LENGTHS"
			if lk.format == rowwise8 {
				n++
				doc += ", SCALE_BIAS"
			}
			doc += ") -> FLOAT OUTPUT, each row dequantized as code·scale + bias."
			operators.MustRegisterCPU(operators.Schema{
				Type: typ, MinInputs: n, MaxInputs: n, MinOutputs: 1, MaxOutputs: 1, Doc: doc,
			}, func(b *operators.Base) (operators.Operator, error) {
				return &quantLookupOp{Base: b, format: lk.format, kind: k.kind, l: k.l}, nil
			})
			operators.MustRegisterNoGradient(typ)
			operators.MustRegisterShapeFunc(typ, quantLookupShape(lk.format, k.l))
		}
	}
}

// lastDimShape: the input's shape with its last dim mapped by f.
func lastDimShape(dt blob.DataType, f func(int) int) operators.ShapeFunc {
	return func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		if in[0].Unknown || in[0].Rank() < 1 {
			return nil, nil
		}
		dims := append([]int{}, in[0].Dims...)
		if c := dims[len(dims)-1]; c >= 0 {
			dims[len(dims)-1] = max(f(c), operators.AnyDim)
		}
		return []operators.TensorShape{operators.Shape(dt, dims...)}, nil
	}
}

func quantLookupShape(f qFormat, l layout) operators.ShapeFunc {
	return func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		d := in[l.data]
		if d.Unknown || d.Rank() < 1 {
			return nil, nil
		}
		m := operators.AnyDim
		if in[l.lengths].Rank() == 1 {
			m = in[l.lengths].Dim(0)
		}
		dims := outDims(nil, m, d.Dims)
		if f != rowwise8 && len(dims) == 2 && dims[1] >= 0 {
			if f == fused8 {
				dims[1] = max(dims[1]-8, operators.AnyDim)
			} else {
				dims[1] = max((dims[1]-4)*2, operators.AnyDim)
			}
		}
		return []operators.TensorShape{operators.Shape(blob.Float32, dims...)}, nil
	}
}

// lrint rounds x to the nearest integer, ties to even (C's lrintf in the
// default rounding mode).
func lrint(x float32) int { return int(math.RoundToEven(float64(x))) }

type quantizeOp struct {
	*operators.Base
	format qFormat
	dims   []int
}

// rowsOf reads input 0, a tensor of type dt with at least one dim, and
// returns it with its shape in dims (reused) and its last dim, the columns.
func rowsOf(b *operators.Base, dt blob.DataType, dims []int) (x *blob.Tensor, shape []int, cols int, err error) {
	if x, err = b.InputOf(0, dt); err != nil {
		return nil, dims, 0, err
	}
	if x.NumDims() < 1 {
		return nil, dims, 0, b.Errorf("input 0 (%q) must have at least 1 dim, has shape %v", b.InputName(0), x.Dims())
	}
	dims = append(dims[:0], x.Dims()...)
	return x, dims, dims[len(dims)-1], nil
}

// scaleBias reads input i, the FLOAT [rows, 2] scale and bias of each row
// of data (input di), a table quantized by FloatToRowwiseQuantized8Bits;
// what and dataWhat name them in errors.
func scaleBias(b *operators.Base, i int, what string, data *blob.Tensor, di int, dataWhat string) ([]float32, error) {
	s, err := b.InputOf(i, blob.Float32)
	if err != nil {
		return nil, err
	}
	if s.NumDims() != 2 || s.Dim(1) != 2 || s.Dim(0) != data.Dim(0) {
		return nil, b.Errorf("%s input %d (%q) has shape %v, want [%d, 2] for %s %d (%q) of shape %v",
			what, i, b.InputName(i), s.Dims(), data.Dim(0), dataWhat, di, b.InputName(di), data.Dims())
	}
	return blob.Data[float32](s), nil
}

func (o *quantizeOp) Run() error {
	x, dims, cols, err := rowsOf(o.Base, blob.Float32, o.dims)
	if err != nil {
		return err
	}
	o.dims = dims
	nd := len(dims)
	switch o.format {
	case fused8:
		o.dims[nd-1] = cols + 8
	case fused4:
		if cols%2 != 0 {
			return o.Errorf("input 0 (%q) of shape %v: FloatToFused4BitRowwiseQuantized needs an even number of columns", o.InputName(0), x.Dims())
		}
		o.dims[nd-1] = cols/2 + 4
	}
	y := o.Output(0)
	if err := y.Init(blob.Uint8, o.dims...); err != nil {
		return err
	}
	if o.format == rowwise8 {
		sb := o.Output(1)
		if err := sb.Init(blob.Float32, x.Dim(0), 2); err != nil {
			return err
		}
		if y.Size() == 0 {
			clear(blob.Data[float32](sb))
			for i := 0; i < sb.Size(); i += 2 {
				blob.Data[float32](sb)[i] = 1
			}
			return nil
		}
		quantizeRowwise8(blob.Data[uint8](y), blob.Data[float32](sb), blob.Data[float32](x), x.Size()/x.Dim(0))
		return nil
	}
	if y.Size() == 0 {
		return nil
	}
	if cols == 0 {
		return o.Errorf("input 0 (%q) of shape %v has rows of no columns, which have no range to quantize", o.InputName(0), x.Dims())
	}
	in, out := blob.Data[float32](x), blob.Data[uint8](y)
	ocols := o.dims[nd-1]
	for r := 0; r < x.Size()/cols; r++ {
		row, orow := in[r*cols:(r+1)*cols], out[r*ocols:(r+1)*ocols]
		if o.format == fused8 {
			quantizeFused8(orow, row)
		} else {
			quantizeFused4(orow, row)
		}
	}
	return nil
}

func minMax(row []float32) (lo, hi float32) {
	lo, hi = row[0], row[0]
	for _, v := range row[1:] {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// quantizeFused8 is Caffe2's FloatToFused8BitRowwiseQuantized of one row.
func quantizeFused8(out []uint8, row []float32) {
	const eps = float32(1e-8)
	lo, hi := minMax(row)
	rng := hi - lo
	binary.LittleEndian.PutUint32(out[len(row):], math.Float32bits(rng/255))
	binary.LittleEndian.PutUint32(out[len(row)+4:], math.Float32bits(lo))
	inv := 255 / (rng + eps)
	for j, v := range row {
		out[j] = uint8(lrint(float32(v-lo) * inv))
	}
}

// quantizeFused4 is Caffe2's FloatToFusedNBitRowwiseQuantizedSBHalf with 4
// bits, of one row.
func quantizeFused4(out []uint8, row []float32) {
	lo, hi := minMax(row)
	lo = blob.HalfFromFloat32(lo).Float32()
	rng := hi - lo
	scale := blob.HalfFromFloat32(1)
	if rng != 0 {
		scale = blob.HalfFromFloat32(rng / 15)
	}
	if scale.Float32() == 0 {
		scale = blob.HalfFromFloat32(1)
	}
	inv := 1 / scale.Float32()
	if math.IsInf(float64(inv), 0) {
		scale, inv = blob.HalfFromFloat32(1), 1
	}
	n := len(row) / 2
	binary.LittleEndian.PutUint16(out[n:], uint16(scale))
	binary.LittleEndian.PutUint16(out[n+2:], uint16(blob.HalfFromFloat32(lo)))
	for j, v := range row {
		q := uint8(min(max(lrint(float32(v-lo)*inv), 0), 15))
		if j%2 == 0 {
			out[j/2] = q
		} else {
			out[j/2] |= q << 4
		}
	}
}

// quantizeRowwise8 is Caffe2's FloatToRowwiseQuantized8Bits.
func quantizeRowwise8(out []uint8, sb, in []float32, block int) {
	for r := 0; r < len(in)/block; r++ {
		row, orow := in[r*block:(r+1)*block], out[r*block:(r+1)*block]
		lo, hi := minMax(row)
		if hi-lo < rowwise8Equal {
			sb[2*r], sb[2*r+1] = 1, lo
			clear(orow)
			continue
		}
		scale := (hi - lo) / 255
		sb[2*r], sb[2*r+1] = scale, lo
		inv := 1 / scale
		for j, v := range row {
			// Eigen's round (half away from zero), then a cast to uint8.
			orow[j] = uint8(int(math.Round(float64(float32(v-lo) * inv))))
		}
	}
}

type dequantizeOp struct {
	*operators.Base
	format qFormat
	dims   []int
}

func (o *dequantizeOp) Run() error {
	x, dims, cols, err := rowsOf(o.Base, blob.Uint8, o.dims)
	if err != nil {
		return err
	}
	o.dims = dims
	nd := len(dims)
	var sb []float32
	switch o.format {
	case fused8:
		if cols < 8 {
			return o.Errorf("input 0 (%q) of shape %v has rows of %d bytes, fewer than the 8 of scale and bias", o.InputName(0), x.Dims(), cols)
		}
		o.dims[nd-1] = cols - 8
	case fused4:
		if cols < 4 {
			return o.Errorf("input 0 (%q) of shape %v has rows of %d bytes, fewer than the 4 of scale and bias", o.InputName(0), x.Dims(), cols)
		}
		o.dims[nd-1] = (cols - 4) * 2
	case rowwise8:
		if sb, err = scaleBias(o.Base, 1, "scale_bias", x, 0, "input"); err != nil {
			return err
		}
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, o.dims...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	in, out := blob.Data[uint8](x), blob.Data[float32](y)
	if o.format == rowwise8 {
		block := x.Size() / x.Dim(0)
		for r := 0; r < x.Dim(0); r++ {
			scale, bias := sb[2*r], sb[2*r+1]
			for j, q := range in[r*block : (r+1)*block] {
				out[r*block+j] = float32(float32(q)*scale) + bias
			}
		}
		return nil
	}
	ocols := o.dims[nd-1]
	for r := 0; r < x.Size()/cols; r++ {
		row := in[r*cols : (r+1)*cols]
		scale, bias := rowScaleBias(row, o.format)
		orow := out[r*ocols : (r+1)*ocols]
		for j := range orow {
			orow[j] = float32(scale*float32(code(row, j, o.format))) + bias
		}
	}
	return nil
}

// rowScaleBias reads the scale and bias stored at the end of a fused row.
func rowScaleBias(row []uint8, f qFormat) (scale, bias float32) {
	n := len(row)
	if f == fused8 {
		return math.Float32frombits(binary.LittleEndian.Uint32(row[n-8:])), math.Float32frombits(binary.LittleEndian.Uint32(row[n-4:]))
	}
	return blob.Half(binary.LittleEndian.Uint16(row[n-4:])).Float32(), blob.Half(binary.LittleEndian.Uint16(row[n-2:])).Float32()
}

// code returns the j-th quantized value of a row.
func code(row []uint8, j int, f qFormat) uint8 {
	if f == fused4 {
		return (row[j/2] >> (4 * (j % 2))) & 15
	}
	return row[j]
}

// quantLookupOp is SparseLengths{Sum,WeightedSum,Mean} over a rowwise
// quantized table.
type quantLookupOp struct {
	*operators.Base
	segments
	format qFormat
	kind   reduceKind
	l      layout
	dims   []int
}

func (o *quantLookupOp) Run() error {
	data, err := o.InputOf(o.l.data, blob.Uint8)
	if err != nil {
		return err
	}
	var sb []float32
	switch {
	case o.format == rowwise8:
		if data.NumDims() < 1 {
			return o.Errorf("DATA input %d (%q) must have at least 1 dim, has shape %v", o.l.data, o.InputName(o.l.data), data.Dims())
		}
		if sb, err = scaleBias(o.Base, o.l.lengths+1, "SCALE_BIAS", data, o.l.data, "DATA input"); err != nil {
			return err
		}
	case data.NumDims() != 2:
		return o.Errorf("DATA input %d (%q) must be 2-D (rows of codes, scale and bias), has shape %v", o.l.data, o.InputName(o.l.data), data.Dims())
	case o.format == fused8 && data.Dim(1) < 8, o.format == fused4 && data.Dim(1) < 4:
		return o.Errorf("DATA input %d (%q) of shape %v has rows too short to hold a scale and a bias", o.l.data, o.InputName(o.l.data), data.Dims())
	}
	rows, w, err := o.read(o.Base, o.l, data)
	if err != nil {
		return err
	}
	o.dims = outDims(o.dims, len(o.lens), data.Dims())
	switch o.format {
	case fused8:
		o.dims[1] -= 8
	case fused4:
		o.dims[1] = (o.dims[1] - 4) * 2
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, o.dims...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	out, in := blob.Data[float32](y), blob.Data[uint8](data)
	block := y.Size() / len(o.lens)
	stride := data.Size() / data.Dim(0)
	pos := 0
	for m, l := range o.lens {
		om := out[m*block : (m+1)*block]
		clear(om)
		for k := pos; k < pos+l; k++ {
			r := rows[k]
			row := in[r*stride : (r+1)*stride]
			var scale, bias float32
			if sb != nil {
				scale, bias = sb[2*r], sb[2*r+1]
			} else {
				scale, bias = rowScaleBias(row, o.format)
			}
			wk := float32(1)
			if w != nil {
				wk = w[k]
			}
			scale, bias = wk*scale, wk*bias
			if o.format == rowwise8 {
				// Caffe2's EmbeddingLookup: an axpy of the codes, then the bias.
				for j, q := range row {
					om[j] += scale * float32(q)
				}
				for j := range om {
					om[j] += bias
				}
				continue
			}
			// fbgemm's reference: fma(scale, code, out + bias).
			for j := range om {
				om[j] = float32(float64(scale)*float64(code(row, j, o.format)) + float64(om[j]+bias))
			}
		}
		if o.kind == reduceMean && l > 0 {
			s := 1 / float32(l)
			for j := range om {
				om[j] *= s
			}
		}
		pos += l
	}
	return nil
}
