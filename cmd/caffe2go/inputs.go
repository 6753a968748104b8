package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
)

// inputSpec is the type and shape of an external input to fill.
type inputSpec struct {
	dtype blob.DataType
	dims  []int
}

// String writes the spec the way -input takes it: 1x3x224x224:float.
func (s inputSpec) String() string {
	parts := make([]string, len(s.dims))
	for i, d := range s.dims {
		parts[i] = strconv.Itoa(d)
	}
	return strings.Join(parts, "x") + ":" + strings.ToLower(s.dtype.String())
}

// dataTypeNames lists the names parseDataType takes, for error messages.
const dataTypeNames = "float (float32), double (float64), float16 (half), int8, int16, int32, int64, uint8, uint16, bool"

// dataTypeAliases are the NumPy names of the types whose Caffe2 names
// differ.
var dataTypeAliases = map[string]blob.DataType{
	"float32": blob.Float32,
	"float64": blob.Float64,
	"half":    blob.Float16,
}

// parseDataType reads an element type by its Caffe2 TensorProto name
// (float, double, int32, …, in any case) or its NumPy name (float32,
// float64, half). Strings are not random-fillable, so they are refused.
func parseDataType(s string) (blob.DataType, bool) {
	if dt, ok := dataTypeAliases[strings.ToLower(s)]; ok {
		return dt, true
	}
	v, ok := netdef.TensorProto_DataType_value[strings.ToUpper(s)]
	dt := blob.DataType(v)
	return dt, ok && dt.Valid() && dt != blob.String
}

// parseInputSpec reads the value of -input: name=d0xd1x...[:dtype], the
// dims separated by x or commas, the type float when it is left out.
func parseInputSpec(s string) (string, inputSpec, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return "", inputSpec{}, fmt.Errorf("%q: want name=d0xd1x...[:dtype], such as data=1x3x224x224:float", s)
	}
	spec := inputSpec{dtype: blob.Float32}
	if i := strings.LastIndexByte(value, ':'); i >= 0 {
		dt, ok := parseDataType(value[i+1:])
		if !ok {
			return "", inputSpec{}, fmt.Errorf("%q: unknown data type %q (want %s)", s, value[i+1:], dataTypeNames)
		}
		spec.dtype, value = dt, value[:i]
	}
	if value == "" {
		return "", inputSpec{}, fmt.Errorf("%q: no dimensions after %s=", s, name)
	}
	for _, d := range strings.Split(strings.ReplaceAll(value, ",", "x"), "x") {
		n, err := strconv.Atoi(strings.TrimSpace(d))
		if err != nil || n < 0 {
			return "", inputSpec{}, fmt.Errorf("%q: dimension %q is not a non-negative integer", s, d)
		}
		spec.dims = append(spec.dims, n)
	}
	return name, spec, nil
}

// inputFlags collects repeated -input flags by blob name.
type inputFlags map[string]inputSpec

func (f inputFlags) String() string {
	var parts []string
	for name, spec := range f {
		parts = append(parts, name+"="+spec.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func (f inputFlags) Set(s string) error {
	name, spec, err := parseInputSpec(s)
	if err != nil {
		return err
	}
	f[name] = spec
	return nil
}

// readValueInfo reads a Caffe2 model-zoo value_info.json: a map from input
// name to [data type, shape], the data type a TensorProto number (1 for
// FLOAT) or a name parseDataType takes ("float", "uint8").
func readValueInfo(path string) (map[string]inputSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string][]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	out := map[string]inputSpec{}
	for name, v := range raw {
		if len(v) != 2 {
			return nil, fmt.Errorf("%s: %q: want [data_type, shape]", path, name)
		}
		dt, err := valueInfoType(v[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %v", path, name, err)
		}
		var dims []int
		if err := json.Unmarshal(v[1], &dims); err != nil {
			return nil, fmt.Errorf("%s: %q: shape: %v", path, name, err)
		}
		out[name] = inputSpec{dtype: dt, dims: dims}
	}
	return out, nil
}

// valueInfoType reads the data type of a value_info.json entry.
func valueInfoType(raw json.RawMessage) (blob.DataType, error) {
	var code int32
	if json.Unmarshal(raw, &code) == nil {
		dt := blob.DataType(code)
		if !dt.Valid() || dt == blob.String {
			return 0, fmt.Errorf("unsupported data type %d", code)
		}
		return dt, nil
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return 0, fmt.Errorf("data type %s is neither a TensorProto number nor a name", raw)
	}
	dt, ok := parseDataType(name)
	if !ok {
		return 0, fmt.Errorf("unknown data type %q (want %s)", name, dataTypeNames)
	}
	return dt, nil
}

// randomTensor returns a tensor of the spec's type and shape: uniform
// floats in [0, 1), or integers in [0, 10).
func randomTensor(spec inputSpec, rng *rand.Rand) (*blob.Tensor, error) {
	t, err := blob.New(spec.dtype, spec.dims...)
	if err != nil {
		return nil, err
	}
	if fillUniform(t, 0, 1, rng) {
		return t, nil
	}
	switch d := t.Raw().(type) {
	case []int8:
		fillInts(d, rng)
	case []int16:
		fillInts(d, rng)
	case []int32:
		fillInts(d, rng)
	case []int64:
		fillInts(d, rng)
	case []uint8:
		fillInts(d, rng)
	case []uint16:
		fillInts(d, rng)
	case []bool:
		for i := range d {
			d[i] = rng.IntN(2) == 1
		}
	default:
		return nil, fmt.Errorf("cannot fill a %s input", spec.dtype)
	}
	return t, nil
}

// fillUniform fills a floating-point tensor with uniform values in [lo,
// hi) and reports whether t has a floating-point type.
func fillUniform(t *blob.Tensor, lo, hi float64, rng *rand.Rand) bool {
	switch d := t.Raw().(type) {
	case []float32:
		for i := range d {
			d[i] = float32(lo + (hi-lo)*rng.Float64())
		}
	case []float64:
		for i := range d {
			d[i] = lo + (hi-lo)*rng.Float64()
		}
	case []blob.Half:
		for i := range d {
			d[i] = blob.HalfFromFloat32(float32(lo + (hi-lo)*rng.Float64()))
		}
	default:
		return false
	}
	return true
}

// fillInts fills d with integers in [0, 10).
func fillInts[T int8 | int16 | int32 | int64 | uint8 | uint16](d []T, rng *rand.Rand) {
	for i := range d {
		d[i] = T(rng.IntN(10))
	}
}
