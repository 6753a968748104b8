package devicescope

import (
	"fmt"
	"strings"
	"sync"

	"github.com/caffe2go/caffe2go/netdef"
)

// Separator joins name-scope components.
const Separator = "/"

// Scope is an immutable name scope plus device scope. The zero value is the
// initial state: empty name scope and no device scope.
type Scope struct {
	name     string
	device   *netdef.DeviceOption
	nodeName string
}

// Name returns the current name-scope prefix ("" or "foo/bar/").
func (s Scope) Name() string { return s.name }

// Device returns a copy of the scope's device option, or nil for none.
func (s Scope) Device() *netdef.DeviceOption { return Clone(s.device) }

// Scoped prefixes name with the name scope (Caffe2's ScopedName).
func (s Scope) Scoped(name string) string { return s.name + name }

// WithName appends prefix to the name scope ("foo/" + "bar" = "foo/bar/").
// An empty prefix contributes nothing.
func (s Scope) WithName(prefix string) Scope {
	if prefix != "" {
		s.name += prefix + Separator
	}
	return s
}

// WithNameReset replaces the name scope with prefix (Caffe2's reset=True).
func (s Scope) WithNameReset(prefix string) Scope {
	s.name = ""
	return s.WithName(prefix)
}

// WithDevice replaces the device scope with a copy of opt (no merging). The
// outer scope's node name carries over when opt has none.
func (s Scope) WithDevice(opt *netdef.DeviceOption) Scope {
	s.device = Clone(opt)
	if s.device != nil && s.device.NodeName == nil && s.nodeName != "" {
		nn := s.nodeName
		s.device.NodeName = &nn
	}
	if s.device != nil {
		s.nodeName = s.device.GetNodeName()
	}
	return s
}

// WithDeviceNode is WithDevice with an explicit node name that overrides the
// option's. opt may be nil when nodeName is given.
func (s Scope) WithDeviceNode(opt *netdef.DeviceOption, nodeName string) (Scope, error) {
	if opt == nil && nodeName == "" {
		return s, fmt.Errorf("devicescope: a device scope needs a device option or a node name")
	}
	if opt == nil {
		opt = &netdef.DeviceOption{}
	} else {
		opt = Clone(opt)
	}
	if nodeName != "" {
		opt.NodeName = &nodeName
	}
	s.device = opt
	s.nodeName = opt.GetNodeName()
	return s, nil
}

// WithoutDevice clears the device scope (Caffe2's EmptyDeviceScope).
func (s Scope) WithoutDevice() Scope {
	s.device = nil
	s.nodeName = ""
	return s
}

// NameScopeOf returns the name-scope part of a blob name: everything up to
// and including its last separator ("gpu_0/fc_w" → "gpu_0/").
func NameScopeOf(blob string) string {
	if i := strings.LastIndex(blob, Separator); i >= 0 {
		return blob[:i+1]
	}
	return ""
}

// CreateOperator builds an OperatorDef as Caffe2's core.CreateOperator does
// for string names: inputs and outputs get the name scope prepended, and the
// device option is the scope's (absent when there is none). To take names as
// they are (Caffe2's BlobReference), use a scope made with WithNameReset("").
// Unregistered types are allowed.
func (s Scope) CreateOperator(typ string, inputs, outputs []string, args ...*netdef.Argument) *netdef.OperatorDef {
	op := netdef.NewOperator(typ, s.scopeAll(inputs), s.scopeAll(outputs), args...)
	op.DeviceOption = s.Device()
	return op
}

// Op creates an operator in scope and appends it to net.
func (s Scope) Op(net *netdef.Net, typ string, inputs, outputs []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return net.AddOp(s.CreateOperator(typ, inputs, outputs, args...))
}

func (s Scope) scopeAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = s.name + n
	}
	return out
}

var current struct {
	sync.Mutex
	scope Scope
}

// Current returns the process-wide current scope.
func Current() Scope {
	current.Lock()
	defer current.Unlock()
	return current.scope
}

// With makes s the process-wide current scope while fn runs, then restores
// the previous one (also when fn panics).
func With(s Scope, fn func()) {
	current.Lock()
	prev := current.scope
	current.scope = s
	current.Unlock()
	defer func() {
		current.Lock()
		current.scope = prev
		current.Unlock()
	}()
	fn()
}

// NameScope runs fn with prefix appended to the current name scope.
func NameScope(prefix string, fn func()) { With(Current().WithName(prefix), fn) }

// DeviceScope runs fn with opt as the current device scope.
func DeviceScope(opt *netdef.DeviceOption, fn func()) { With(Current().WithDevice(opt), fn) }
