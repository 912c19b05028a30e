package assets

import (
	"bytes"
	"image"
	"image/png"
	"testing"
)

func decode(t *testing.T, name string, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", name, err)
	}
	return img
}

func TestIconIsA256PNG(t *testing.T) {
	if b := decode(t, "icon", Icon).Bounds(); b.Dx() != 256 || b.Dy() != 256 {
		t.Errorf("icon is %dx%d, want 256x256", b.Dx(), b.Dy())
	}
}

// TestTrayIcons checks both tray icons are 64×64 with a transparent corner,
// and that the light-panel icon is darker than the dark-panel one.
func TestTrayIcons(t *testing.T) {
	brightness := map[string]uint32{}
	for name, data := range map[string][]byte{"light": TrayLight, "dark": TrayDark} {
		img := decode(t, name, data)
		if b := img.Bounds(); b.Dx() != 64 || b.Dy() != 64 {
			t.Errorf("tray %s is %dx%d, want 64x64", name, b.Dx(), b.Dy())
		}
		if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
			t.Errorf("tray %s: corner alpha %d, want transparent", name, a)
		}
		r, _, _, _ := img.At(32, 12).RGBA() // on the frame's top edge
		brightness[name] = r
	}
	if brightness["light"] >= brightness["dark"] {
		t.Errorf("glyph brightness light %d >= dark %d: the light-panel icon should be the darker one",
			brightness["light"], brightness["dark"])
	}
}
