package brew

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot writes the training-progress figure, as MATLAB's
// plots="training-progress" shows it: accuracy above, loss below, training
// per iteration and validation as marked points, against the iteration.
// The format follows path's extension: .png or .svg.
func (h *History) Plot(path string) error {
	const width, height = 8 * vg.Inch, 6 * vg.Inch
	// Both canvases write themselves out with WriteTo.
	var canvas interface {
		vg.CanvasSizer
		io.WriterTo
	}
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	case ".svg":
		canvas = vgsvg.New(width, height)
	default:
		return fmt.Errorf("brew: plot %q: unknown format %q (want .png or .svg)", path, ext)
	}
	accuracy, err := h.panel("Accuracy", func(p Point) float64 { return p.Accuracy })
	if err != nil {
		return err
	}
	loss, err := h.panel("Loss", func(p Point) float64 { return p.Loss })
	if err != nil {
		return err
	}
	loss.X.Label.Text = "Iteration"
	plots := [][]*plot.Plot{{accuracy}, {loss}}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(8), PadY: vg.Points(12)}
	dc := draw.New(canvas)
	for i, row := range plot.Align(plots, tiles, dc) {
		plots[i][0].Draw(row[0])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("brew: plot: %w", err)
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("brew: plot %q: %w", path, err)
	}
	return f.Close()
}

// panel plots one quantity of the training and validation points.
func (h *History) panel(title string, value func(Point) float64) (*plot.Plot, error) {
	p := plot.New()
	p.Y.Label.Text = title
	p.Add(plotter.NewGrid())
	xy := func(points []Point) plotter.XYs {
		out := make(plotter.XYs, len(points))
		for i, pt := range points {
			out[i].X, out[i].Y = float64(pt.Iteration), value(pt)
		}
		return out
	}
	if len(h.Train) > 0 {
		// As MATLAB draws it: the noisy per-batch values faint, a moving
		// average over them bold.
		raw, err := plotter.NewLine(xy(h.Train))
		if err != nil {
			return nil, fmt.Errorf("brew: plot %s: %w", title, err)
		}
		raw.Color = color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0x50}
		smooth, err := plotter.NewLine(movingAverage(xy(h.Train), 25))
		if err != nil {
			return nil, fmt.Errorf("brew: plot %s: %w", title, err)
		}
		smooth.Color = color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
		smooth.Width = vg.Points(1.5)
		p.Add(raw, smooth)
		p.Legend.Add("training (smoothed)", smooth)
	}
	if len(h.Validation) > 0 {
		line, points, err := plotter.NewLinePoints(xy(h.Validation))
		if err != nil {
			return nil, fmt.Errorf("brew: plot %s: %w", title, err)
		}
		line.Color, points.Color = color.Black, color.Black
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(line, points)
		p.Legend.Add("validation", line, points)
	}
	// Accuracy climbs and loss falls, so the legend goes where the curves
	// are not: bottom right for accuracy, top right for loss.
	p.Legend.Top = title == "Loss"
	return p, nil
}

// movingAverage smooths xy over a trailing window of up to k points.
func movingAverage(xy plotter.XYs, k int) plotter.XYs {
	out := make(plotter.XYs, len(xy))
	sum := 0.0
	for i := range xy {
		sum += xy[i].Y
		if i >= k {
			sum -= xy[i-k].Y
		}
		out[i].X, out[i].Y = xy[i].X, sum/float64(min(i+1, k))
	}
	return out
}
