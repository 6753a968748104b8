package utils

import (
	"fmt"
	"os"
	"path/filepath"

	"go.starlark.net/starlark"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/mnist"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/ndarray"
	"github.com/caffe2go/caffe2go/script/internal/protoarg"
	"github.com/caffe2go/caffe2go/script/np"
	"github.com/caffe2go/caffe2go/workspace"
)

// Module is the utils module.
var Module = binding.NewModule(binding.ModuleSpec{
	Name: "utils",
	Doc:  "utils: helpers from Caffe2's caffe2.python.utils.",
	Funcs: []binding.Fn{
		{Name: "MakeArgument", Doc: "MakeArgument(key, value)\n\nReturns an Argument: a float sets f, an int or bool i, a string or bytes s, a NetDef n,\na list of floats floats, of ints ints, of strings strings, of NetDefs nets; a float32 array floats.\nNone and mixed lists are errors.", Body: utilsMakeArgument},
		{Name: "ArgsToDict", Doc: "ArgsToDict(args)\n\nReturns a dict argument name -> value of a list of Arguments (such as op.arg).", Body: utilsArgsToDict},
		{Name: "Caffe2TensorToNumpyArray", Doc: "Caffe2TensorToNumpyArray(tensor)\n\nReturns the ndarray a TensorProto holds.", Body: utilsTensorToArray},
		{Name: "NumpyArrayToCaffe2Tensor", Doc: "NumpyArrayToCaffe2Tensor(arr, name=None)\n\nReturns a TensorProto holding arr.", Body: utilsArrayToTensor},
		{Name: "make_mnist_db", Doc: "make_mnist_db(image_file, label_file, output_file, db=\"badger\")\n\n" +
			"Caffe2's make_mnist_db tool (with --channel_first) as a function: converts the MNIST idx files\n" +
			"(gzip-compressed or not) into a new DB of type db at output_file (relative to the workspace's\n" +
			"root folder, as CreateDB resolves it) and returns the number of records. Record i holds the\n" +
			"image, a uint8 [1, 28, 28] tensor, and its int32 label: brew.db_input(model, [\"data_uint8\",\n" +
			"\"label\"], batch_size, output_file, db) reads them back in batches.", Body: utilsMakeMNISTDB},
		{Name: "TempDir", Doc: "TempDir(prefix=\"caffe2go-\")\n\n" +
			"Creates a new, empty directory in the system's temporary folder ($TMPDIR, else /tmp) whose name\n" +
			"is prefix followed by random digits, and returns its path, as Python's tempfile.mkdtemp does.\n" +
			"Nothing removes it. workspace.ResetWorkspace(utils.TempDir()) makes it the root folder, where\n" +
			"the workspace's store and relative DB paths go.", Body: utilsTempDir},
	},
})

func utilsMakeArgument(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var key string
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "key", &key, "value", &v); err != nil {
		return nil, err
	}
	arg, err := protoarg.MakeArgument(key, v)
	if err != nil {
		return nil, err
	}
	return caffe2pb2.NewMessage(arg), nil
}

// argValue returns the value an Argument holds, as Caffe2's ArgsToDict
// reads it: the first set field among f, i, s, floats, ints, strings, n,
// nets.
func argValue(a *netdef.Argument) starlark.Value {
	switch {
	case a.F != nil:
		return convert.Float32Value(a.GetF())
	case a.I != nil:
		return starlark.MakeInt64(a.GetI())
	case a.S != nil:
		return starlark.Bytes(a.S)
	case len(a.Floats) > 0:
		vals := make([]starlark.Value, len(a.Floats))
		for i, f := range a.Floats {
			vals[i] = convert.Float32Value(f)
		}
		return starlark.NewList(vals)
	case len(a.Ints) > 0:
		vals := make([]starlark.Value, len(a.Ints))
		for i, n := range a.Ints {
			vals[i] = starlark.MakeInt64(n)
		}
		return starlark.NewList(vals)
	case len(a.Strings) > 0:
		vals := make([]starlark.Value, len(a.Strings))
		for i, s := range a.Strings {
			vals[i] = starlark.Bytes(s)
		}
		return starlark.NewList(vals)
	case a.N != nil:
		return caffe2pb2.NewMessage(proto.Clone(a.N))
	case len(a.Nets) > 0:
		vals := make([]starlark.Value, len(a.Nets))
		for i, n := range a.Nets {
			vals[i] = caffe2pb2.NewMessage(proto.Clone(n))
		}
		return starlark.NewList(vals)
	}
	return starlark.NewList(nil)
}

func utilsArgsToDict(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "args", &v); err != nil {
		return nil, err
	}
	list, err := protoarg.Arguments(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	d := starlark.NewDict(len(list))
	for _, a := range list {
		if err := d.SetKey(starlark.String(a.GetName()), argValue(a)); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func utilsTensorToArray(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var m *caffe2pb2.Message
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "tensor", &m); err != nil {
		return nil, err
	}
	p, ok := m.Proto().(*netdef.TensorProto)
	if !ok {
		return nil, fmt.Errorf("%s: want a TensorProto, got %s", b.Name(), m.Type())
	}
	t, err := blob.TensorFromProto(p)
	if err != nil {
		return nil, err
	}
	return np.NewArray(t), nil
}

func utilsArrayToTensor(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var arr starlark.Value
	name := ""
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "arr", &arr, "name?", &name); err != nil {
		return nil, err
	}
	t, err := ndarray.TensorArg(b.Name(), arr)
	if err != nil {
		return nil, err
	}
	p, err := blob.TensorToProto(name, t)
	if err != nil {
		return nil, err
	}
	p.Segment = nil
	if name == "" {
		p.Name = nil
	}
	return caffe2pb2.NewMessage(p), nil
}

func utilsMakeMNISTDB(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var images, labels, output string
	db := persist.DefaultDBType
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "image_file", &images, "label_file", &labels,
		"output_file", &output, "db?", &db); err != nil {
		return nil, err
	}
	if output == "" {
		return nil, fmt.Errorf("%s: output_file is empty", b.Name())
	}
	if !filepath.IsAbs(output) {
		output = filepath.Join(workspace.RootFolder(), output)
	}
	n, err := mnist.Import(images, labels, db, output)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlark.MakeInt(n), nil
}

func utilsTempDir(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	prefix := "caffe2go-"
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "prefix?", &prefix); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", prefix+"*")
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlark.String(dir), nil
}
