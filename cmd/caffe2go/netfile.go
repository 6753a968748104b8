package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/caffe2go/caffe2go/netdef"
)

// readNet reads a NetDef file: the text format when its name ends in
// .pbtxt or .prototxt, the binary format otherwise. An empty file is an
// error, not an empty net. A file of another name whose bytes are text
// (printable UTF-8) is parsed as the text format, as Caffe2's
// ReadProtoFromFile falls back to it, with a note on stderr; if it parses
// neither as text nor as binary, the error says that it looks like text.
func readNet(path string, stderr io.Writer) (*netdef.NetDef, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%s is empty: it holds no NetDef", path)
	}
	def := new(netdef.NetDef)
	if netdef.IsTextPath(path) {
		if err := netdef.UnmarshalText(b, def); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return def, nil
	}
	if !looksLikeText(b) {
		if def, err = netdef.UnmarshalNetDef(b); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return def, nil
	}
	textErr := netdef.UnmarshalText(b, def)
	if textErr == nil {
		fmt.Fprintf(stderr, "caffe2go: %s holds the protobuf text format, so it is read as text (name it .pbtxt to say so)\n", path)
		return def, nil
	}
	if def, err := netdef.UnmarshalNetDef(b); err == nil {
		return def, nil
	}
	return nil, fmt.Errorf("%s looks like the protobuf text format (name it .pbtxt), but does not parse as text: %w", path, textErr)
}

// looksLikeText reports whether b is UTF-8 without control characters
// other than white space: a binary NetDef has field tags and lengths below
// 0x20 (the name's tag is '\n', but an operator's is 0x12).
func looksLikeText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c == 0x7f || c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' {
			return false
		}
	}
	return true
}
