package operators

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/caffe2go/caffe2go/devicescope"
)

// Factory builds an operator from its Base, reading its arguments once.
type Factory func(b *Base) (Operator, error)

type regKey struct {
	typ    string
	device int32
	engine string
}

var registry struct {
	sync.RWMutex
	impls map[regKey]Factory
}

// DefaultEngine is the engine name that selects the default implementation.
const DefaultEngine = "DEFAULT"

func normEngine(e string) string {
	if e == DefaultEngine {
		return ""
	}
	return e
}

// Register adds the implementation of typ for a device type and engine (""
// for the default one). Registering the same key twice is an error.
func Register(typ string, deviceType int32, engine string, f Factory) error {
	if typ == "" || f == nil {
		return fmt.Errorf("operators: Register needs a type and a factory")
	}
	k := regKey{typ, deviceType, normEngine(engine)}
	registry.Lock()
	defer registry.Unlock()
	if registry.impls == nil {
		registry.impls = map[regKey]Factory{}
	}
	if _, dup := registry.impls[k]; dup {
		return fmt.Errorf("operators: %s is already registered for device %s engine %q", typ, devicescope.TypeName(deviceType), engine)
	}
	registry.impls[k] = f
	return nil
}

// MustRegister is Register for use in init functions: a duplicate
// registration is a programming error and panics at program start.
func MustRegister(typ string, deviceType int32, engine string, f Factory) {
	if err := Register(typ, deviceType, engine, f); err != nil {
		panic(err)
	}
}

// lookup finds the implementation for typ on a device type, trying each of
// the comma-separated engines first and falling back to the default one, as
// Caffe2 does (unknown engines fall back silently).
func lookup(typ string, deviceType int32, engines string) (Factory, string, bool) {
	registry.RLock()
	defer registry.RUnlock()
	if engines != "" {
		for _, e := range strings.Split(engines, ",") {
			e = normEngine(strings.TrimSpace(e))
			if e == "" {
				continue
			}
			if f, ok := registry.impls[regKey{typ, deviceType, e}]; ok {
				return f, e, true
			}
		}
	}
	f, ok := registry.impls[regKey{typ, deviceType, ""}]
	return f, "", ok
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
		if k.typ == typ && k.engine == e {
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
		name := k.typ
		if k.engine != "" {
			name += "_ENGINE_" + k.engine
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
