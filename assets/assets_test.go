package assets

import (
	"bytes"
	"image/png"
	"testing"
)

func TestIconIsA256PNG(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(Icon))
	if err != nil {
		t.Fatalf("icon is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 256 || b.Dy() != 256 {
		t.Errorf("icon is %dx%d, want 256x256", b.Dx(), b.Dy())
	}
}
