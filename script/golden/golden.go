package golden

import (
	"regexp"
	"strings"
)

// outputLine matches a "#=>" comment line; its group is the text.
var outputLine = regexp.MustCompile(`^\s*#=>(?: (.*))?$`)

// Output returns the lines that the "#=>" comments of src give, in order,
// or nil when it has none.
func Output(src string) []string {
	var out []string
	for _, line := range strings.Split(src, "\n") {
		if m := outputLine.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}
