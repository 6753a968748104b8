package tensor

import (
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// printStderr is where Print writes when to_file is 0.
var printStderr io.Writer = os.Stderr

// printDefaultLimit is the number of elements Print shows when limit is 0.
const printDefaultLimit = 1000

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Print", MinInputs: 1, MaxInputs: 1, MinOutputs: 0, MaxOutputs: 0,
		Args: []operators.ArgSpec{
			{Name: "to_file", Default: 0, Doc: "1 writes to <root_folder>/<blob name>.log (truncated when the operator is created) instead of stderr"},
			{Name: "limit", Default: 0, Doc: "number of elements to print; 0 means 1000"},
			{Name: "every_n", Default: 1, Doc: "print on the first run and every every_n-th run after it"},
		},
		Doc: "Logs the type, shape and first elements of a tensor, one line per print.",
	}, newPrint)
	operators.MustRegisterGradientForbidden("Print")
}

type printOp struct {
	*operators.Base
	w      io.Writer // nil: printStderr
	limit  int
	everyN int
	count  int
	buf    []byte
}

func newPrint(b *operators.Base) (operators.Operator, error) {
	op := &printOp{Base: b, limit: int(b.ArgInt("limit", 0)), everyN: int(b.ArgInt("every_n", 1))}
	if op.everyN < 1 {
		return nil, b.Errorf("argument every_n is %d, must be >= 1", op.everyN)
	}
	if op.limit < 0 {
		return nil, b.Errorf("argument limit is %d, must be >= 0", op.limit)
	}
	if op.limit == 0 {
		op.limit = printDefaultLimit
	}
	if b.ArgInt("to_file", 0) != 0 {
		path := filepath.Join(b.Workspace().RootFolder(), b.InputName(0)+".log")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, b.Errorf("cannot create the folder of the print file for input 0 (%q): %v", b.InputName(0), err)
		}
		f, err := os.Create(path)
		if err != nil {
			return nil, b.Errorf("cannot open the print file for input 0 (%q): %v", b.InputName(0), err)
		}
		op.w = f
	}
	return op, nil
}

func (o *printOp) Run() error {
	o.count++
	if o.count > o.everyN {
		o.count -= o.everyN
	}
	if o.count != 1 {
		return nil
	}
	buf := o.buf[:0]
	if t := o.InputBlob(0).Tensor(); t == nil {
		buf = append(buf, "Blob of type: "...)
		buf = append(buf, o.InputBlob(0).TypeName()...)
	} else {
		buf = appendTensor(buf, o.InputName(0), t, o.limit)
	}
	buf = append(buf, '\n')
	o.buf = buf
	w := o.w
	if w == nil {
		w = printStderr
	}
	if _, err := w.Write(buf); err != nil {
		return o.Errorf("printing input 0 (%q): %v", o.InputName(0), err)
	}
	return nil
}

// cppTypeName is the C++ element type name Caffe2 prints for a tensor.
func cppTypeName(dt blob.DataType) string {
	switch dt {
	case blob.Float32:
		return "float"
	case blob.Float64:
		return "double"
	case blob.Float16:
		return "c10::Half"
	case blob.Int8:
		return "signed char"
	case blob.Int16:
		return "short"
	case blob.Int32:
		return "int"
	case blob.Int64:
		return "long"
	case blob.Uint8:
		return "unsigned char"
	case blob.Uint16:
		return "unsigned short"
	case blob.Bool:
		return "bool"
	case blob.String:
		return "std::string"
	}
	return dt.String()
}

// appendTensor formats t the way Caffe2's TensorPrinter does:
// "Tensor <name> of type <type>. Dims: (d0,d1,): v0,v1,…" with at most
// limit values.
func appendTensor(buf []byte, name string, t *blob.Tensor, limit int) []byte {
	buf = append(buf, "Tensor "...)
	buf = append(buf, name...)
	buf = append(buf, " of type "...)
	buf = append(buf, cppTypeName(t.DataType())...)
	buf = append(buf, ". Dims: ("...)
	for _, d := range t.Dims() {
		buf = strconv.AppendInt(buf, int64(d), 10)
		buf = append(buf, ',')
	}
	buf = append(buf, "): "...)
	n := min(t.Size(), limit)
	for i := 0; i < n; i++ {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendElement(buf, t, i)
	}
	return buf
}

// appendElement formats element i like C++'s ostream: six significant
// digits for floating point, 1 or 0 for booleans.
func appendElement(buf []byte, t *blob.Tensor, i int) []byte {
	switch t.DataType() {
	case blob.Float32:
		return strconv.AppendFloat(buf, float64(blob.Data[float32](t)[i]), 'g', 6, 32)
	case blob.Float64:
		return strconv.AppendFloat(buf, blob.Data[float64](t)[i], 'g', 6, 64)
	case blob.Float16:
		return strconv.AppendFloat(buf, float64(blob.Data[blob.Half](t)[i].Float32()), 'g', 6, 32)
	case blob.Int8:
		return strconv.AppendInt(buf, int64(blob.Data[int8](t)[i]), 10)
	case blob.Int16:
		return strconv.AppendInt(buf, int64(blob.Data[int16](t)[i]), 10)
	case blob.Int32:
		return strconv.AppendInt(buf, int64(blob.Data[int32](t)[i]), 10)
	case blob.Int64:
		return strconv.AppendInt(buf, blob.Data[int64](t)[i], 10)
	case blob.Uint8:
		return strconv.AppendUint(buf, uint64(blob.Data[uint8](t)[i]), 10)
	case blob.Uint16:
		return strconv.AppendUint(buf, uint64(blob.Data[uint16](t)[i]), 10)
	case blob.Bool:
		if blob.Data[bool](t)[i] {
			return append(buf, '1')
		}
		return append(buf, '0')
	case blob.String:
		return append(buf, blob.Data[string](t)[i]...)
	}
	return buf
}
