package persist

import "testing"

func TestFormatIterPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		iter    int64
		want    string
	}{
		{"ckpt_%08d.db", 42, "ckpt_00000042.db"},
		{"c_%lld", 7, "c_7"},
		{"c_%ld_%%", 7, "c_7_%"},
		{"x%5i", 12, "x   12"},
		{"%x", 255, "ff"},
		{"%-4u|", 3, "3   |"},
		{"plain", 9, "plain"},
	} {
		got, err := formatIterPattern(tc.pattern, tc.iter)
		if err != nil || got != tc.want {
			t.Errorf("formatIterPattern(%q, %d) = %q, %v; want %q", tc.pattern, tc.iter, got, err, tc.want)
		}
	}
	for _, bad := range []string{"%", "a%08", "%f", "%d%d", "%s"} {
		if _, err := formatIterPattern(bad, 1); err == nil {
			t.Errorf("formatIterPattern(%q) must fail", bad)
		}
	}
}
