package core

import "testing"

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"rleu", "relu", 1}, // a transposition
		{"rleu", "le", 2},
		{"kitten", "sitting", 3},
		{"ab", "ba", 1},
		{"", "abc", 3},
		{"ca", "abc", 3},
		{"relu", "relu", 0},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
