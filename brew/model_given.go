package brew

import (
	"fmt"
	"slices"

	"github.com/caffe2go/caffe2go/operators"
)

// AddGradientOperatorsWith is AddGradientOperators with given gradients:
// Caffe2's model.AddGradientOperators({loss: loss_grad, …}). ys lists the
// blobs to differentiate and given supplies their gradient blobs (see
// operators.AddGradientOperators); a target without one gets a
// ConstantFill of 1. Like AddGradientOperators it records each parameter's
// gradient, may run only once per model and returns the model's Err first.
func (m *Model) AddGradientOperatorsWith(ys []string, given map[string]operators.Gradient) (map[string]operators.Gradient, error) {
	if err := m.Err(); err != nil {
		return nil, err
	}
	if m.gradAdded {
		return nil, fmt.Errorf("brew: model %q: AddGradientOperators may run only once", m.Name)
	}
	if dup := m.Validate(); len(dup) > 0 {
		return nil, fmt.Errorf("brew: model %q: duplicate params: %v", m.Name, dup)
	}
	grads, err := operators.AddGradientOperators(m.Net.Proto(), ys, given)
	if err != nil {
		return nil, fmt.Errorf("brew: model %q: %w", m.Name, err)
	}
	m.gradAdded = true
	m.gradMap = grads
	for _, p := range m.state.params {
		if g, ok := grads[p]; ok && g.Dense != "" {
			m.state.infos[p].Grad = g.Dense
		}
	}
	return grads, nil
}

// KeepParams drops from the model's trainable parameters (and from its
// weights and biases) every one for which keep returns false, so that
// optimizers built afterwards leave them alone. Computed parameters and
// the ParamInfo records stay. Data-parallel training with one shared
// parameter set uses it to keep only the master device's copies (Caffe2's
// _PruneParametersForSharing).
func (m *Model) KeepParams(keep func(name string) bool) {
	drop := func(name string) bool { return !keep(name) }
	s := m.state
	s.params = slices.DeleteFunc(s.params, drop)
	s.weights = slices.DeleteFunc(s.weights, drop)
	s.biases = slices.DeleteFunc(s.biases, drop)
}
