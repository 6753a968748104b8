package caffe

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// ParseNet decodes a net description in the protobuf text format (a
// .prototxt file's contents).
func ParseNet(text []byte) (*NetParameter, error) {
	net := new(NetParameter)
	if err := prototext.Unmarshal(text, net); err != nil {
		return nil, fmt.Errorf("caffe net: %w", err)
	}
	return net, nil
}

// ParseWeights decodes a net with its trained blobs in the protobuf binary
// format (a .caffemodel file's contents).
func ParseWeights(data []byte) (*NetParameter, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("caffe weights: empty")
	}
	net := new(NetParameter)
	if err := proto.Unmarshal(data, net); err != nil {
		return nil, fmt.Errorf("caffe weights: %w", err)
	}
	return net, nil
}

// ReadNet reads a .prototxt net description (ParseNet); errors name the
// file.
func ReadNet(path string) (*NetParameter, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	net, err := ParseNet(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return net, nil
}

// ReadWeights reads a .caffemodel file (ParseWeights); errors name the file.
func ReadWeights(path string) (*NetParameter, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	net, err := ParseWeights(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return net, nil
}
