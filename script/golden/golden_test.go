package golden

import (
	"slices"
	"testing"
)

func TestOutput(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"none", "x = 1\nprint(x)\n", nil},
		{"one", "print(1)\n#=> 1\n", []string{"1"}},
		{"in order", "#=> a\nprint(2)\n#=> b\n", []string{"a", "b"}},
		{"empty line", "print()\n#=>\n", []string{""}},
		{"indented", "if True:\n    print(1)\n    #=> 1\n", []string{"1"}},
		{"spaces kept", "#=>   two  spaces \n", []string{"  two  spaces "}},
		{"after code", "print(1)  #=> 1\n", nil},
		{"no space", "#=>1\n", nil},
		{"other comment", "# => 1\n## #=> 2\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Output(c.src); !slices.Equal(got, c.want) {
				t.Errorf("Output(%q) = %q, want %q", c.src, got, c.want)
			}
		})
	}
}
