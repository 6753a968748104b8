// Package caffe2pb2 is the caffe2_pb2 module of caffe2go scripts: the
// message types of caffe2.proto as constructors taking fields as keywords.
// Its values are Message, a live protobuf message whose fields read and
// write as attributes and which prints in the text format, and
// RepeatedField, a live view of one of its repeated fields.
package caffe2pb2
