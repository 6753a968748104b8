package caffe

//go:generate protoc --go_out=. --go_opt=paths=source_relative caffe.proto
