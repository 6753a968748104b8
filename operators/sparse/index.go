package sparse

import (
	"cmp"
	"slices"
	"sort"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// Index utilities: BatchGather, ScatterAssign, Unique,
// FindDuplicateElements, IsMemberOf, Find, IndexHash, Bucketize and
// BatchBucketize.

func init() {
	reg := func(s operators.Schema, f func(*indexOp) error, sh operators.ShapeFunc) {
		operators.MustRegisterCPU(s, func(b *operators.Base) (operators.Operator, error) { return &indexOp{Base: b, run: f}, nil })
		operators.MustRegisterShapeFunc(s.Type, sh)
	}
	reg(operators.Schema{Type: "BatchGather", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(DATA, INDICES) -> OUTPUT: Gather along axis 1; the output shape is DATA.dims[:1] + INDICES.dims + DATA.dims[2:]."},
		batchGather, func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
			if in[0].Unknown || in[1].Unknown || in[0].Rank() < 2 {
				return nil, nil
			}
			dims := append(append([]int{in[0].Dim(0)}, in[1].Dims...), in[0].Dims[2:]...)
			return []operators.TensorShape{operators.Shape(in[0].Type, dims...)}, nil
		})
	operators.MustRegisterGradient("BatchGather", func(g *operators.GradientContext) error {
		g.Op("BatchGatherGradient", []string{g.I(0), g.I(1), g.GO(0)}, []string{g.GI(0)})
		return nil
	})

	reg(operators.Schema{Type: "ScatterAssign", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		EnforceInplace: [][2]int{{0, 0}},
		Doc:            "(DATA, INDICES, SLICES) -> DATA (in place): row INDICES[i] of DATA becomes SLICES[i]."},
		scatterAssign, operators.SameAsInput0)
	operators.MustRegisterGradientForbidden("ScatterAssign")

	reg(operators.Schema{Type: "Unique", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 2,
		Doc: "INDICES (INT32 or INT64 vector) -> (UNIQUE, [REMAPPING]): the distinct values in ascending order, and for each input the position of its value in UNIQUE (INT32)."},
		unique, func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
			out := []operators.TensorShape{operators.Shape(in[0].Type, operators.AnyDim)}
			if b.NumOutputs() == 2 {
				out = append(out, operators.Shape(blob.Int32, dim0(in[0])))
			}
			return out, nil
		})
	operators.MustRegisterNoGradient("Unique")

	reg(operators.Schema{Type: "FindDuplicateElements", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "DATA (a vector) -> INDICES INT64: the positions of the elements equal to an earlier one."},
		findDuplicates, vectorShape(blob.Int64))
	operators.MustRegisterNoGradient("FindDuplicateElements")

	reg(operators.Schema{Type: "IsMemberOf", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "value", Doc: "the list of values (ints, or strings for a STRING input)"}, {Name: "dtype", Doc: "the values' type (ignored: the input's type decides)"}},
		Doc:  "X -> BOOL Y of X's shape: whether each element is in the list value."},
		isMemberOf, func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
			if in[0].Unknown {
				return nil, nil
			}
			return []operators.TensorShape{in[0].WithType(blob.Bool)}, nil
		})
	operators.MustRegisterNoGradient("IsMemberOf")

	reg(operators.Schema{Type: "Find", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "missing_value", Default: -1, Doc: "the answer for a query not in INDEX"}},
		Doc:  "(INDEX, QUERIES) -> the position in INDEX of each query (its last occurrence), or missing_value; INT32 or INT64 like the inputs."},
		find, func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
			return in[1:2], nil
		})
	operators.MustRegisterNoGradient("Find")

	reg(operators.Schema{Type: "IndexHash", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "seed", Default: 0}, {Name: "modulo", Doc: "the range of the hashes, > 0 (required)"}},
		Doc:  "INDICES (INT32 or INT64) -> HASHED_INDICES: Caffe2's hash of each index (its bytes folded into seed·0xDEADBEEF by ·65537 + byte), modulo modulo."},
		indexHash, operators.SameAsInput0)
	operators.MustRegisterNoGradient("IndexHash")

	reg(operators.Schema{Type: "Bucketize", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "boundaries", Doc: "sorted bucket boundaries"}},
		Doc:  "FLOAT X -> INT32 of X's shape: the number of boundaries below each element (buckets are right-inclusive)."},
		bucketize, func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
			if in[0].Unknown {
				return nil, nil
			}
			return []operators.TensorShape{in[0].WithType(blob.Int32)}, nil
		})
	operators.MustRegisterNoGradient("Bucketize")

	reg(operators.Schema{Type: "BatchBucketize", MinInputs: 4, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(FEATURE [N, D], INDICES [K], BOUNDARIES, LENGTHS [K]) -> INT32 [N, K]: column INDICES[k] of FEATURE bucketized by the k-th run of LENGTHS[k] boundaries."},
		batchBucketize, func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
			return []operators.TensorShape{operators.Shape(blob.Int32, dim0(in[0]), dim0(in[1]))}, nil
		})
	operators.MustRegisterNoGradient("BatchBucketize")
}

type indexOp struct {
	*operators.Base
	run  func(*indexOp) error
	idx  []int
	dims []int
	// Scratch kept from run to run: BatchGather's source rows; Unique's
	// order of the indices, distinct values and remapping.
	rows, order, vals []int
	remap             []int32
}

func (o *indexOp) Run() error { return o.run(o) }

func batchGather(o *indexOp) error {
	data, err := o.Input(0)
	if err != nil {
		return err
	}
	ind, err := o.Input(1)
	if err != nil {
		return err
	}
	if data.NumDims() < 2 {
		return o.Errorf("DATA input 0 (%q) must have at least 2 dims, has shape %v", o.InputName(0), data.Dims())
	}
	o.dims = append(append(append(o.dims[:0], data.Dim(0)), ind.Dims()...), data.Dims()[2:]...)
	y := o.Output(0)
	if err := y.Init(data.DataType(), o.dims...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	if o.idx, _, err = readInts(o.Base, 1, "INDICES", o.idx); err != nil {
		return err
	}
	axis := data.Dim(1)
	for k, v := range o.idx {
		if v < 0 || v >= axis {
			return o.Errorf("INDICES input 1 (%q) element %d is %d, out of range for dim 1 of DATA input 0 (%q) of shape %v", o.InputName(1), k, v, o.InputName(0), data.Dims())
		}
	}
	// Row (i, idx[k]) of DATA, viewed as [N·axis, block], goes to row
	// i·len(idx) + k of the output.
	block := data.SizeFromDim(2)
	o.rows = o.rows[:0]
	for i := range data.Dim(0) {
		for _, v := range o.idx {
			o.rows = append(o.rows, i*axis+v)
		}
	}
	copyRows(y, data, block, o.rows)
	return nil
}

func scatterAssign(o *indexOp) error {
	data, err := o.Input(0)
	if err != nil {
		return err
	}
	rows, err := o.InputOf(2, data.DataType())
	if err != nil {
		return err
	}
	if data.NumDims() < 1 {
		return o.Errorf("DATA input 0 (%q) must have at least 1 dim, has shape %v", o.InputName(0), data.Dims())
	}
	if o.idx, err = readIndices(o.Base, 1, data.Dim(0), o.InputName(0), o.idx); err != nil {
		return err
	}
	if rows.NumDims() < 1 || rows.Dim(0) != len(o.idx) || !equalDims(rows.Dims()[1:], data.Dims()[1:]) {
		return o.Errorf("SLICES input 2 (%q) has shape %v, want %d rows shaped like those of DATA input 0 (%q) of shape %v",
			o.InputName(2), rows.Dims(), len(o.idx), o.InputName(0), data.Dims())
	}
	if data.Size() == 0 || len(o.idx) == 0 {
		return nil
	}
	block := data.Size() / data.Dim(0)
	// The last assignment to a row wins, as in Caffe2's loop.
	scatterRows(data, rows, block, o.idx)
	return nil
}

func unique(o *indexOp) error {
	var err error
	var t *blob.Tensor
	if o.idx, t, err = readInts(o.Base, 0, "INDICES", o.idx); err != nil {
		return err
	}
	if t.NumDims() != 1 {
		return o.Errorf("input 0 (%q) must be a vector, has shape %v", o.InputName(0), t.Dims())
	}
	o.order = o.order[:0]
	for i := range o.idx {
		o.order = append(o.order, i)
	}
	slices.SortStableFunc(o.order, func(a, b int) int { return cmp.Compare(o.idx[a], o.idx[b]) })
	o.vals, o.remap = o.vals[:0], slices.Grow(o.remap[:0], len(o.idx))[:len(o.idx)]
	for k, i := range o.order {
		if k == 0 || o.idx[i] != o.vals[len(o.vals)-1] {
			o.vals = append(o.vals, o.idx[i])
		}
		o.remap[i] = int32(len(o.vals) - 1)
	}
	y := o.Output(0)
	if err := y.Init(t.DataType(), len(o.vals)); err != nil {
		return err
	}
	setInts(y, o.vals)
	if o.NumOutputs() == 2 {
		r := o.Output(1)
		if err := r.Init(blob.Int32, len(o.remap)); err != nil {
			return err
		}
		copy(blob.Data[int32](r), o.remap)
	}
	return nil
}

// setInts writes v into an INT32 or INT64 tensor.
func setInts(t *blob.Tensor, v []int) {
	if t.DataType() == blob.Int32 {
		for i, x := range v {
			blob.Data[int32](t)[i] = int32(x)
		}
		return
	}
	for i, x := range v {
		blob.Data[int64](t)[i] = int64(x)
	}
}

func findDuplicates(o *indexOp) error {
	t, err := o.Input(0)
	if err != nil {
		return err
	}
	if t.NumDims() != 1 {
		return o.Errorf("input 0 (%q) must be a vector, has shape %v", o.InputName(0), t.Dims())
	}
	var dup []int64
	switch t.DataType() {
	case blob.Int32:
		dup = duplicates(blob.Data[int32](t))
	case blob.Int64:
		dup = duplicates(blob.Data[int64](t))
	case blob.Float32:
		dup = duplicates(blob.Data[float32](t))
	case blob.Float64:
		dup = duplicates(blob.Data[float64](t))
	case blob.String:
		dup = duplicates(blob.Data[string](t))
	default:
		return o.Errorf("input 0 (%q) has type %v, want INT32, INT64, FLOAT, DOUBLE or STRING", o.InputName(0), t.DataType())
	}
	y := o.Output(0)
	if err := y.Init(blob.Int64, len(dup)); err != nil {
		return err
	}
	copy(blob.Data[int64](y), dup)
	return nil
}

func duplicates[T comparable](v []T) []int64 {
	seen := make(map[T]bool, len(v))
	var dup []int64
	for j, x := range v {
		if seen[x] {
			dup = append(dup, int64(j))
			continue
		}
		seen[x] = true
	}
	return dup
}

func isMemberOf(o *indexOp) error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Bool, x.Dims()...); err != nil {
		return err
	}
	out := blob.Data[bool](y)
	switch x.DataType() {
	case blob.Int32:
		member(out, blob.Data[int32](x), o.ArgInts("value", nil), func(v int64) int32 { return int32(v) })
	case blob.Int64:
		member(out, blob.Data[int64](x), o.ArgInts("value", nil), func(v int64) int64 { return v })
	case blob.Bool:
		member(out, blob.Data[bool](x), o.ArgInts("value", nil), func(v int64) bool { return v != 0 })
	case blob.String:
		member(out, blob.Data[string](x), o.ArgStrings("value", nil), func(v string) string { return v })
	default:
		return o.Errorf("input 0 (%q) has type %v, want INT32, INT64, BOOL or STRING", o.InputName(0), x.DataType())
	}
	return nil
}

func member[T comparable, A any](out []bool, x []T, values []A, conv func(A) T) {
	set := make(map[T]bool, len(values))
	for _, v := range values {
		set[conv(v)] = true
	}
	for i, v := range x {
		out[i] = set[v]
	}
}

func find(o *indexOp) error {
	index, t, err := readInts(o.Base, 0, "INDEX", nil)
	if err != nil {
		return err
	}
	if o.idx, _, err = readInts(o.Base, 1, "QUERIES", o.idx); err != nil {
		return err
	}
	q, _ := o.Input(1)
	if q.DataType() != t.DataType() {
		return o.Errorf("QUERIES input 1 (%q) has type %v, INDEX input 0 (%q) has type %v", o.InputName(1), q.DataType(), o.InputName(0), t.DataType())
	}
	pos := make(map[int]int, len(index))
	for j, v := range index {
		pos[v] = j
	}
	missing := int(o.ArgInt("missing_value", -1))
	for i, v := range o.idx {
		p, ok := pos[v]
		if !ok {
			p = missing
		}
		o.idx[i] = p
	}
	y := o.Output(0)
	if err := y.Init(t.DataType(), q.Dims()...); err != nil {
		return err
	}
	setInts(y, o.idx)
	return nil
}

func indexHash(o *indexOp) error {
	modulo := o.ArgInt("modulo", 0)
	if modulo <= 0 {
		return o.Errorf("argument modulo is %d, must be > 0", modulo)
	}
	seed := o.ArgInt("seed", 0)
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	switch x.DataType() {
	case blob.Int32:
		if modulo > 1<<31-1 {
			return o.Errorf("argument modulo %d is larger than INT32 indices hold", modulo)
		}
		if err := y.Init(blob.Int32, x.Dims()...); err != nil {
			return err
		}
		out := blob.Data[int32](y)
		for i, v := range blob.Data[int32](x) {
			h := int32(seed * 0xDEADBEEF)
			for k := 0; k < 4; k++ {
				h = h*65537 + int32(int8(uint32(v)>>(8*k)))
			}
			m := int64(h) % modulo
			if m < 0 {
				m += modulo
			}
			out[i] = int32(m)
		}
	case blob.Int64:
		if err := y.Init(blob.Int64, x.Dims()...); err != nil {
			return err
		}
		out := blob.Data[int64](y)
		for i, v := range blob.Data[int64](x) {
			h := seed * 0xDEADBEEF
			for k := 0; k < 8; k++ {
				h = h*65537 + int64(int8(uint64(v)>>(8*k)))
			}
			m := h % modulo
			if m < 0 {
				m += modulo
			}
			out[i] = m
		}
	default:
		return o.Errorf("INDICES input 0 (%q) has type %v, want INT32 or INT64", o.InputName(0), x.DataType())
	}
	return nil
}

// lowerBound is std::lower_bound: the number of boundaries below x.
func lowerBound(bounds []float32, x float32) int {
	return sort.Search(len(bounds), func(i int) bool { return !(bounds[i] < x) })
}

func bucketize(o *indexOp) error {
	bounds := o.ArgFloats("boundaries", nil)
	if !slices.IsSortedFunc(bounds, cmp.Compare[float32]) {
		return o.Errorf("argument boundaries %v must be sorted", bounds)
	}
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Int32, x.Dims()...); err != nil {
		return err
	}
	out := blob.Data[int32](y)
	for i, v := range blob.Data[float32](x) {
		out[i] = int32(lowerBound(bounds, v))
	}
	return nil
}

func batchBucketize(o *indexOp) error {
	feat, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	if feat.NumDims() != 2 {
		return o.Errorf("FEATURE input 0 (%q) must be 2-D, has shape %v", o.InputName(0), feat.Dims())
	}
	cols, _, err := readInts(o.Base, 1, "INDICES", nil)
	if err != nil {
		return err
	}
	lens, total, err := o.LengthsInput(3, nil)
	if err != nil {
		return err
	}
	bt, err := o.InputOf(2, blob.Float32)
	if err != nil {
		return err
	}
	bounds := blob.Data[float32](bt)
	if len(lens) != len(cols) || total != len(bounds) {
		return o.Errorf("INDICES input 1 (%q) has %d elements, LENGTHS input 3 (%q) has %d adding up to %d, BOUNDARIES input 2 (%q) has %d: want as many indices as lengths, and as many boundaries as their sum",
			o.InputName(1), len(cols), o.InputName(3), len(lens), total, o.InputName(2), len(bounds))
	}
	for k, c := range cols {
		if c < 0 || c >= feat.Dim(1) {
			return o.Errorf("INDICES input 1 (%q) element %d is %d, out of range for FEATURE of shape %v", o.InputName(1), k, c, feat.Dims())
		}
	}
	y := o.Output(0)
	if err := y.Init(blob.Int32, feat.Dim(0), len(cols)); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	out, in, d := blob.Data[int32](y), blob.Data[float32](feat), feat.Dim(1)
	for i := range feat.Dim(0) {
		off := 0
		for k, c := range cols {
			out[i*len(cols)+k] = int32(lowerBound(bounds[off:off+lens[k]], in[i*d+c]))
			off += lens[k]
		}
	}
	return nil
}
