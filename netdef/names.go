package netdef

import (
	"strconv"
	"sync"
)

// nameRegistry hands out process-unique names: the first request for a base
// name gets it unchanged, later ones get base_1, base_2, … skipping any name
// already taken (also one that was requested directly, such as "net_1").
// It is safe for concurrent use.
type nameRegistry struct {
	mu   sync.Mutex
	used map[string]struct{}
	next map[string]int // per base name, the first suffix worth trying
}

func newNameRegistry() *nameRegistry {
	return &nameRegistry{used: map[string]struct{}{}, next: map[string]int{}}
}

func (r *nameRegistry) unique(base string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := base
	if _, taken := r.used[name]; taken {
		// Names are never released, so every suffix below next[base] is
		// still taken and the search can resume there.
		idx := max(r.next[base], 1)
		for {
			name = base + "_" + strconv.Itoa(idx)
			idx++
			if _, taken := r.used[name]; !taken {
				break
			}
		}
		r.next[base] = idx
	}
	r.used[name] = struct{}{}
	return name
}

var (
	// netNames makes builder net names unique (Caffe2's
	// Net._net_names_used).
	netNames = newNameRegistry()
	// stepNames makes generated step names unique (Caffe2's
	// ExecutionStep._step_names_used).
	stepNames = newNameRegistry()
)
