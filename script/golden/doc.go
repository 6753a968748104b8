// Package golden reads what a caffe2go script says it prints: its comment
// lines "#=> text", in order, each the next line of output ("#=>" alone is
// an empty line). The golden scripts of package script and the example
// scripts are checked against them.
package golden
