package main

import (
	"image"
	"image/color"
	"testing"
)

// TestStylize runs both models on a crop of the bundled photo: the output
// has the cropped size, is deterministic (the models' noise is seeded), and
// is a real transformation of the photo rather than a copy or a flat image.
func TestStylize(t *testing.T) {
	photo, err := readPhoto("")
	if err != nil {
		t.Fatal(err)
	}
	crop := image.NewRGBA(image.Rect(0, 0, 130, 98)) // cropped to 128×96 by stylize
	for y := 0; y < 98; y++ {
		for x := 0; x < 130; x++ {
			crop.Set(x, y, photo.At(600+x, 300+y))
		}
	}
	for _, model := range []string{"crayon", "mosaic"} {
		first, err := stylize(model, crop)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		if b := first.Bounds(); b.Dx() != 128 || b.Dy() != 96 {
			t.Fatalf("%s: output %v, want 128x96", model, b)
		}
		again, err := stylize(model, crop)
		if err != nil {
			t.Fatal(err)
		}
		if string(first.Pix) != string(again.Pix) {
			t.Errorf("%s: two runs differ", model)
		}
		var changed, distinct int
		seen := map[color.RGBA]bool{}
		for y := 0; y < 96; y++ {
			for x := 0; x < 128; x++ {
				c := first.RGBAAt(x, y)
				seen[c] = true
				r, g, b, _ := crop.At(x, y).RGBA()
				if diff(c.R, r) > 24 || diff(c.G, g) > 24 || diff(c.B, b) > 24 {
					changed++
				}
			}
		}
		distinct = len(seen)
		if changed < 128*96/4 || distinct < 1000 {
			t.Errorf("%s: %d of %d pixels changed noticeably, %d distinct colours; want a stylized image", model, changed, 128*96, distinct)
		}
	}
	if _, err := stylize("cubism", crop); err == nil {
		t.Error("an unknown model was accepted")
	}
}

func diff(a uint8, b uint32) int {
	d := int(a) - int(b>>8)
	if d < 0 {
		return -d
	}
	return d
}
