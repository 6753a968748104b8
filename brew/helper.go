package brew

import (
	"fmt"
	"strings"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// call is one helper invocation under construction: the model, the
// resolved keyword arguments, the scope the operators are emitted in and
// the resolved output name.
type call struct {
	m     *Model
	name  string // the Go function, for messages: "FC", "Conv", …
	scope devicescope.Scope
	kw    Kwargs
	out   string // the full name of the main output
	// engine is the operator engine a kwarg "engine" asked for.
	engine string
}

// cudnnKwargs are Caffe2 keyword arguments that only select cuDNN. There
// is no cuDNN here, so helpers drop them.
var cudnnKwargs = []string{"use_cudnn", "cudnn_exhaustive_search", "ws_nbytes_limit"}

// begin resolves the keyword arguments of a call of helper h and its
// output name out in the current scope. An empty out gets an automatic
// name: autoPrefix == "" gives Caffe2's NextName() ("<net>_blob_<k>"),
// otherwise NextName(autoPrefix) ("<net>/<autoPrefix>").
func (m *Model) begin(h Helper, name, out, autoPrefix string, opts []Option) (*call, error) {
	kw, err := resolveKwargs(m, h, opts)
	if err != nil {
		return nil, fmt.Errorf("brew: %s(%q): %v", name, out, err)
	}
	c := &call{m: m, name: name, scope: devicescope.Current(), kw: kw}
	if out == "" {
		out = m.Net.NextName(autoPrefix)
	}
	c.out = scoped(c.scope.Name(), out)
	for _, k := range cudnnKwargs {
		c.kw.pop(k)
	}
	if c.engine, err = c.kw.popString("engine", ""); err != nil {
		return nil, c.errorf("%v", err)
	}
	return c, nil
}

func (c *call) errorf(format string, args ...any) error {
	return fmt.Errorf("brew: %s(%q): %s", c.name, c.out, fmt.Sprintf(format, args...))
}

// input resolves an input blob of the call (see Model.resolveInput).
func (c *call) input(name string) (string, error) {
	full, err := c.m.resolveInput(c.scope.Name(), name)
	if err != nil {
		return "", c.errorf("%v", err)
	}
	return full, nil
}

// inputs resolves several input blobs; there must be at least one.
func (c *call) inputs(names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, c.errorf("no input blobs")
	}
	out := make([]string, len(names))
	for i, n := range names {
		var err error
		if out[i], err = c.input(n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// output resolves a further output name in the call's scope.
func (c *call) output(name string) string { return scoped(c.scope.Name(), name) }

// derived returns the blob named prefix + out + suffix in out's scope, as
// Caffe2 names a helper's side outputs ("_" + blob_out + "_mask"): the
// prefix goes after the current name scope.
func (c *call) derived(prefix, suffix string) string {
	ns := c.scope.Name()
	return ns + prefix + strings.TrimPrefix(c.out, ns) + suffix
}

// param creates the parameter c.out+suffix with the initializer under
// key (def when there is none).
func (c *call) param(suffix string, shape []int64, key string, def Initializer, tags ...Tag) (string, error) {
	p, err := c.m.createParam(c.out+suffix, shape, c.kw.initOr(key, def), tags)
	if err != nil {
		return "", c.errorf("%v", err)
	}
	return p, nil
}

// order removes and checks the order argument (default "NCHW") and
// returns it with the argument to emit.
func (c *call) order() (string, *netdef.Argument, error) {
	o, err := c.kw.popString("order", "NCHW")
	if err != nil {
		return "", nil, c.errorf("%v", err)
	}
	if o != "NCHW" && o != "NHWC" {
		return "", nil, c.errorf("order must be NCHW or NHWC, got %q", o)
	}
	return o, netdef.ArgString("order", o), nil
}

// emit appends an operator to net with the call's device scope (names are
// already resolved) and engine.
func (c *call) emit(net *netdef.Net, typ string, inputs, outputs []string, args []*netdef.Argument) *netdef.OperatorDef {
	op := c.scope.WithNameReset("").Op(net, typ, inputs, outputs, args...)
	if c.engine != "" {
		op.Engine = &c.engine
	}
	return op
}

// rest returns the arguments left after the helper took its own, in order.
func (c *call) rest() []*netdef.Argument { return c.kw.Args() }

// positive checks that each named dimension is at least 1.
func (c *call) positive(names []string, values ...int) error {
	for i, v := range values {
		if v <= 0 {
			return c.errorf("%s must be positive, got %d", names[i], v)
		}
	}
	return nil
}

// unary emits typ(in) → out with leading args first, then the remaining
// keyword arguments: the shape of the activation and pooling helpers. It
// is a building call (see Model.Err).
func (m *Model) unary(h Helper, name, typ, in, out string, withOrder bool, opts []Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(h, name, out, typ, opts)
		if err != nil {
			return "", err
		}
		x, err := c.input(in)
		if err != nil {
			return "", err
		}
		var args []*netdef.Argument
		if withOrder {
			_, a, err := c.order()
			if err != nil {
				return "", err
			}
			args = append(args, a)
		}
		c.emit(m.Net, typ, []string{x}, []string{c.out}, append(args, c.rest()...))
		return c.out, nil
	})
}
