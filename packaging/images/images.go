// Package images holds the sandbox image's Dockerfile, embedded so that the
// sandtray binary alone can build the image where Docker can pull its base
// (engine/internal/imagebuild; `sandtray image build`). `make image` builds
// from the same file.
package images

import (
	_ "embed"
	"strings"
)

// Dockerfile is the recommended sandbox image's Dockerfile.
//
//go:embed Dockerfile
var Dockerfile []byte

// Base is the image the Dockerfile starts FROM.
func Base() string {
	for _, line := range strings.Split(string(Dockerfile), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.EqualFold(f[0], "FROM") {
			return f[1]
		}
	}
	return ""
}
