// Package caffe reads BVLC Caffe models: net descriptions (.prototxt) and
// trained weights (.caffemodel).
//
// # Messages
//
// caffe.proto is a wire-compatible copy of Caffe's schema (package caffe):
// NetParameter, LayerParameter and every layer's parameters, BlobProto, and
// the V1LayerParameter of the V1 format. The Go code in caffe.pb.go is
// generated (see generate.go). ParseNet and ReadNet read the text format,
// ParseWeights and ReadWeights the binary one.
package caffe
