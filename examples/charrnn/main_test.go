package main

import (
	"bytes"
	"context"
	"math"
	"testing"
)

// TestLossFalls trains the char-RNN briefly and requires the loss per
// sequence to fall from about the uniform guess, 25·ln(vocabulary), to
// below 60% of it: the LSTM's gradients reach its parameters through
// RecurrentNetworkGradient.
func TestLossFalls(t *testing.T) {
	c := config{seqLength: 25, batch: 4, hidden: 32, iters: 300, report: 50, seed: 1}
	var out bytes.Buffer
	reports, err := run(context.Background(), &out, alice, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	vocab := map[rune]bool{}
	for _, ch := range alice {
		vocab[ch] = true
	}
	uniform := float64(c.seqLength) * math.Log(float64(len(vocab)))
	first, last := reports[0], reports[len(reports)-1]
	if first > 1.1*uniform || last > 0.6*uniform || last > 0.7*first {
		t.Errorf("loss per sequence went from %.2f to %.2f (uniform guess %.2f): want below %.2f", first, last, uniform, 0.6*uniform)
	}
}
