package netdef

//go:generate protoc --go_out=. --go_opt=paths=source_relative caffe2.proto
