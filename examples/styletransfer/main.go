// Command styletransfer runs one of Caffe2's trained style-transfer models
// (crayon or mosaic, from the Caffe2 model zoo) on a photo and writes the
// stylized image as a PNG:
//
//	go run ./examples/styletransfer -model crayon -in photo.jpg -out crayon.png
//
// Without -in it uses a photo of a flower that ships with the example. The
// models are the zoo's own init_net.pb (GivenTensorFill weights) and
// predict_net.pb, embedded in the program and loaded unchanged into a
// workspace. Each style has its own weights, models/<style>/init_net.pb; the
// zoo ships the same predict_net.pb (the network without its weights) with
// every style, so it is stored once, as models/predict_net.pb, and the
// program runs it after whichever init net -model names.
package main

import (
	"bytes"
	"embed"
	"flag"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // decode JPEG photos
	"image/png"
	"log"
	"os"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

//go:embed models images/flower.jpg
var assets embed.FS

func main() {
	model := flag.String("model", "crayon", "style: crayon or mosaic")
	in := flag.String("in", "", "input photo (JPEG or PNG); default: the bundled flower photo")
	out := flag.String("out", "stylized.png", "output PNG")
	flag.Parse()
	photo, err := readPhoto(*in)
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	styled, err := stylize(*model, photo)
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, styled); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	b := styled.Bounds()
	fmt.Printf("wrote %s (%dx%d, %s style) in %v\n", *out, b.Dx(), b.Dy(), *model, time.Since(start).Round(time.Millisecond))
}

func readPhoto(path string) (image.Image, error) {
	var data []byte
	var err error
	if path == "" {
		data, err = assets.ReadFile("images/flower.jpg")
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return img, nil
}

// stylize runs the named model on img. The model wants a batch of one
// packed BGRA image whose sides are multiples of 4, so the photo is cropped
// to that; it returns BGRA, which is turned back into RGBA.
func stylize(model string, img image.Image) (*image.RGBA, error) {
	ws := workspace.New("")
	initNet, err := loadNet("models/" + model + "/init_net.pb")
	if err != nil {
		return nil, fmt.Errorf("unknown model %q (want crayon or mosaic): %w", model, err)
	}
	predictNet, err := loadNet("models/predict_net.pb")
	if err != nil {
		return nil, err
	}
	if err := ws.RunNetOnce(initNet); err != nil {
		return nil, err
	}
	b := img.Bounds()
	w, h := b.Dx()/4*4, b.Dy()/4*4
	if w == 0 || h == 0 {
		return nil, fmt.Errorf("the photo is %dx%d; it must be at least 4x4", b.Dx(), b.Dy())
	}
	bgra := make([]uint8, h*w*4)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			p := bgra[(y*w+x)*4:]
			p[0], p[1], p[2], p[3] = uint8(bl>>8), uint8(g>>8), uint8(r>>8), 255
		}
	}
	input, err := blob.FromSlice(bgra, 1, h, w, 4)
	if err != nil {
		return nil, err
	}
	if err := ws.FeedBlob(predictNet.GetExternalInput()[0], input); err != nil {
		return nil, err
	}
	if err := ws.RunNetOnce(predictNet); err != nil {
		return nil, err
	}
	styled, err := ws.FetchBlob(predictNet.GetExternalOutput()[0])
	if err != nil {
		return nil, err
	}
	px := blob.Data[uint8](styled)
	if px == nil || styled.Size() != h*w*4 {
		return nil, fmt.Errorf("model output %v, want uint8 [1 %d %d 4]", styled, h, w)
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			p := px[(y*w+x)*4:]
			out.SetRGBA(x, y, color.RGBA{R: p[2], G: p[1], B: p[0], A: 255})
		}
	}
	return out, nil
}

// loadNet reads the embedded net at path.
func loadNet(path string) (*netdef.NetDef, error) {
	data, err := assets.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return netdef.UnmarshalNetDef(data)
}
