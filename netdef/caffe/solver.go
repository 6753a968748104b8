package caffe

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/encoding/prototext"
)

// ParseSolver decodes a solver description in the protobuf text format (a
// solver .prototxt file's contents: base_lr, lr_policy, max_iter, the net
// or train_net and test_net, ...).
func ParseSolver(text []byte) (*SolverParameter, error) {
	s := new(SolverParameter)
	if err := prototext.Unmarshal(text, s); err != nil {
		return nil, fmt.Errorf("caffe solver: %w", err)
	}
	return s, nil
}

// ReadSolver reads a solver .prototxt file (ParseSolver); errors name the
// file.
func ReadSolver(path string) (*SolverParameter, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseSolver(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
