package netdef

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// Marshal encodes m in the binary wire format, deterministically: known
// fields in field-number order (as Caffe2's C++ serializer writes them),
// then any unknown fields exactly as they were read. Decoding a Caffe2 file
// and marshalling it again therefore gives the same bytes.
func Marshal(m proto.Message) ([]byte, error) {
	b, err := marshalBinary(m)
	if err != nil {
		return nil, fmt.Errorf("netdef: marshal %s: %w", messageName(m), err)
	}
	return b, nil
}

// MarshalNetDef encodes def in the binary wire format (see Marshal).
func MarshalNetDef(def *NetDef) ([]byte, error) { return Marshal(def) }

// UnmarshalNetDef decodes a NetDef from the binary wire format.
func UnmarshalNetDef(b []byte) (*NetDef, error) {
	def := new(NetDef)
	if err := proto.Unmarshal(b, def); err != nil {
		return nil, fmt.Errorf("netdef: parse NetDef: %w", err)
	}
	return def, nil
}

// MarshalPlanDef encodes plan in the binary wire format (see Marshal).
func MarshalPlanDef(plan *PlanDef) ([]byte, error) { return Marshal(plan) }

// UnmarshalPlanDef decodes a PlanDef from the binary wire format.
func UnmarshalPlanDef(b []byte) (*PlanDef, error) {
	plan := new(PlanDef)
	if err := proto.Unmarshal(b, plan); err != nil {
		return nil, fmt.Errorf("netdef: parse PlanDef: %w", err)
	}
	return plan, nil
}

// MarshalText encodes m in the protobuf text format, laid out as Caffe2's
// Python and C++ printers do: one field per line, two-space indentation and
// "op {" for nested messages. The output is stable (the randomised spacing
// of prototext is removed) and ends with a newline unless it is empty.
func MarshalText(m proto.Message) ([]byte, error) {
	b, err := marshalText(m)
	if err != nil {
		return nil, fmt.Errorf("netdef: marshal %s as text: %w", messageName(m), err)
	}
	return b, nil
}

func marshalText(m proto.Message) ([]byte, error) {
	b, err := prototext.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(m)
	if err != nil {
		return nil, err
	}
	return normalizeText(b), nil
}

func marshalBinary(m proto.Message) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// UnmarshalText decodes the protobuf text format into m, replacing its
// contents. Both "op {" and "op: {" forms are accepted, as are comments, and
// the pre-2018 field name cuda_gpu_id is read as device_id.
func UnmarshalText(b []byte, m proto.Message) error {
	if m == nil || !m.ProtoReflect().IsValid() {
		return fmt.Errorf("netdef: parse %s text: nil message", messageName(m))
	}
	if err := prototext.Unmarshal(rewriteLegacyNames(b), m); err != nil {
		return fmt.Errorf("netdef: parse %s text: %w", messageName(m), err)
	}
	return nil
}

// IsTextPath reports whether path names a text-format file, that is whether
// its extension is .pbtxt or .prototxt (in any case). Every other path is
// read and written in the binary format.
func IsTextPath(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pbtxt", ".prototxt":
		return true
	}
	return false
}

// ReadNetDef reads a NetDef from path, in the text format if IsTextPath(path)
// and in the binary format otherwise.
func ReadNetDef(path string) (*NetDef, error) {
	def := new(NetDef)
	if err := readMessage(path, def); err != nil {
		return nil, err
	}
	return def, nil
}

// WriteNetDef writes def to path, in the text format if IsTextPath(path) and
// in the binary format otherwise, creating or truncating the file.
func WriteNetDef(path string, def *NetDef) error {
	if def == nil {
		return fmt.Errorf("netdef: write %s: nil NetDef", path)
	}
	return writeMessage(path, def)
}

// ReadPlanDef reads a PlanDef from path, in the text format if
// IsTextPath(path) and in the binary format otherwise.
func ReadPlanDef(path string) (*PlanDef, error) {
	plan := new(PlanDef)
	if err := readMessage(path, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// WritePlanDef writes plan to path, in the text format if IsTextPath(path)
// and in the binary format otherwise, creating or truncating the file.
func WritePlanDef(path string, plan *PlanDef) error {
	if plan == nil {
		return fmt.Errorf("netdef: write %s: nil PlanDef", path)
	}
	return writeMessage(path, plan)
}

func readMessage(path string, m proto.Message) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("netdef: read %s: %w", messageName(m), err)
	}
	if IsTextPath(path) {
		err = prototext.Unmarshal(rewriteLegacyNames(b), m)
	} else {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		return fmt.Errorf("netdef: parse %s from %s: %w", messageName(m), path, err)
	}
	return nil
}

func writeMessage(path string, m proto.Message) error {
	var (
		b   []byte
		err error
	)
	if IsTextPath(path) {
		b, err = marshalText(m)
	} else {
		b, err = marshalBinary(m)
	}
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		return fmt.Errorf("netdef: write %s to %s: %w", messageName(m), path, err)
	}
	return nil
}

func messageName(m proto.Message) string {
	if m == nil {
		return "message"
	}
	return string(m.ProtoReflect().Descriptor().Name())
}

// normalizeText turns prototext's multi-line output into the layout of
// Caffe2's printers: exactly one space after "name:" (prototext sometimes
// adds a second one on purpose), "name {" instead of "name: {", an empty
// message as "name {" / "}" on two lines, and a final newline.
func normalizeText(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var out strings.Builder
	out.Grow(len(b) + 1)
	for _, line := range lines {
		body := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(body)]
		// Field lines start with an identifier (the field name) followed by
		// ':'; values come after it, so the first ':' is the separator.
		if i := strings.IndexByte(body, ':'); i > 0 && isIdentifier(body[:i]) {
			key, value := body[:i], strings.TrimLeft(body[i+1:], " ")
			switch value {
			case "{":
				out.WriteString(indent + key + " {\n")
			case "{}":
				out.WriteString(indent + key + " {\n" + indent + "}\n")
			default:
				out.WriteString(indent + key + ": " + value + "\n")
			}
			continue
		}
		out.WriteString(line + "\n")
	}
	return []byte(out.String())
}

func isIdentifier(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

func isIdentStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || ('0' <= c && c <= '9') }

// legacyFieldNames maps field names of older caffe2.proto versions to the
// names used here (field numbers never changed, only names).
var legacyFieldNames = map[string]string{
	"cuda_gpu_id": "device_id",
}

// rewriteLegacyNames replaces legacy field names in text-format input,
// leaving string literals and comments untouched.
func rewriteLegacyNames(b []byte) []byte {
	found := false
	for old := range legacyFieldNames {
		if bytes.Contains(b, []byte(old)) {
			found = true
			break
		}
	}
	if !found {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(b) && b[j] != c && b[j] != '\n' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(b))
			out = append(out, b[i:j]...)
			i = j
		case c == '#':
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				j = len(b) - i
			}
			out = append(out, b[i:i+j]...)
			i += j
		case isIdentStart(c):
			j := i + 1
			for j < len(b) && isIdentChar(b[j]) {
				j++
			}
			word := b[i:j]
			if repl, ok := legacyFieldNames[string(word)]; ok {
				out = append(out, repl...)
			} else {
				out = append(out, word...)
			}
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}
