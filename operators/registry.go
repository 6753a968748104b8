package operators

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/caffe2go/caffe2go/netdef"
)

// Factory builds an operator from its Base, reading its arguments once.
type Factory func(b *Base) (Operator, error)

// Implementation names one registered implementation: an operator type on
// a device type with an engine ("" for the default one).
type Implementation struct {
	Type   string
	Device netdef.DeviceType
	Engine string
}

// String returns "Type on DEVICE" ("on any device" for AnyDevice) plus
// " engine ENGINE" for a non-default engine.
func (i Implementation) String() string {
	s := i.Type + " on " + i.Device.String()
	if i.Device == AnyDevice {
		s = i.Type + " on any device"
	}
	if i.Engine != "" {
		s += " engine " + i.Engine
	}
	return s
}

var registry struct {
	sync.RWMutex
	impls map[Implementation]Factory
}

// DefaultEngine is the engine name that selects the default implementation.
const DefaultEngine = "DEFAULT"

// AnyDevice, as the device type of a registration, makes the
// implementation serve every device type that has no implementation of its
// own for the operator type. Such implementations move tensors only with
// blob.Tensor's device-neutral methods (Init, CopyFrom, ShareData,
// SetDevice, Reshape) — the copy operators, for example — so that a new
// device gets them without registering anything.
const AnyDevice netdef.DeviceType = -1

func normEngine(e string) string {
	if e == DefaultEngine {
		return ""
	}
	return e
}

// Register adds the implementation of typ for a device type and engine (""
// for the default one). Registering the same key twice is an error.
func Register(typ string, deviceType netdef.DeviceType, engine string, f Factory) error {
	if typ == "" || f == nil {
		return fmt.Errorf("operators: Register needs a type and a factory")
	}
	k := Implementation{typ, deviceType, normEngine(engine)}
	registry.Lock()
	defer registry.Unlock()
	if registry.impls == nil {
		registry.impls = map[Implementation]Factory{}
	}
	if _, dup := registry.impls[k]; dup {
		return fmt.Errorf("operators: %v is already registered", k)
	}
	registry.impls[k] = f
	return nil
}

// MustRegister is Register for use in init functions: a duplicate
// registration is a programming error and panics at program start.
func MustRegister(typ string, deviceType netdef.DeviceType, engine string, f Factory) {
	if err := Register(typ, deviceType, engine, f); err != nil {
		panic(err)
	}
}

// MustRegisterCPU registers the schema s and f as the default CPU
// implementation of s.Type, the pair most operators start with. It panics
// on an error, for init functions.
func MustRegisterCPU(s Schema, f Factory) {
	MustRegisterSchema(s)
	MustRegister(s.Type, netdef.CPU, "", f)
}

// MustRegisterAnyDevice registers the schema s and f as the default
// implementation of s.Type on every device (AnyDevice). It panics on an
// error, for init functions.
func MustRegisterAnyDevice(s Schema, f Factory) {
	MustRegisterSchema(s)
	MustRegister(s.Type, AnyDevice, "", f)
}

// Implementations returns every registered implementation of typ, or of
// every type when typ is "", sorted by type, device type and engine.
func Implementations(typ string) []Implementation {
	registry.RLock()
	out := make([]Implementation, 0, len(registry.impls))
	for k := range registry.impls {
		if typ == "" || k.Type == typ {
			out = append(out, k)
		}
	}
	registry.RUnlock()
	slices.SortFunc(out, func(a, b Implementation) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Device, b.Device), cmp.Compare(a.Engine, b.Engine))
	})
	return out
}

// lookup finds the implementation for typ on a device type, trying each of
// the comma-separated engines first and falling back to the default one, as
// Caffe2 does (unknown engines fall back silently), then to the default
// implementation for any device.
func lookup(typ string, deviceType netdef.DeviceType, engines string) (Factory, Implementation, bool) {
	registry.RLock()
	defer registry.RUnlock()
	if engines != "" {
		for _, e := range strings.Split(engines, ",") {
			e = normEngine(strings.TrimSpace(e))
			if e == "" {
				continue
			}
			if k := (Implementation{typ, deviceType, e}); registry.impls[k] != nil {
				return registry.impls[k], k, true
			}
		}
	}
	for _, k := range []Implementation{{typ, deviceType, ""}, {typ, AnyDevice, ""}} {
		if f := registry.impls[k]; f != nil {
			return f, k, true
		}
	}
	return nil, Implementation{}, false
}

// IsOperator reports whether typ has a default implementation on any device.
func IsOperator(typ string) bool { return IsOperatorWithEngine(typ, DefaultEngine) }

// IsOperatorWithEngine reports whether typ has an implementation for the
// given engine on any device.
func IsOperatorWithEngine(typ, engine string) bool {
	registry.RLock()
	defer registry.RUnlock()
	e := normEngine(engine)
	for k := range registry.impls {
		if k.Type == typ && k.Engine == e {
			return true
		}
	}
	return false
}

// RegisteredOperators returns the registry keys of every implementation,
// sorted and without duplicates: "Type" for default engines and
// "Type_ENGINE_<engine>" for others, as Caffe2 lists them.
func RegisteredOperators() []string {
	registry.RLock()
	seen := map[string]bool{}
	for k := range registry.impls {
		name := k.Type
		if k.Engine != "" {
			name += "_ENGINE_" + k.Engine
		}
		seen[name] = true
	}
	registry.RUnlock()
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
