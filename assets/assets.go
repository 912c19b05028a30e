// Package assets embeds Sandtray's icons, so every binary carries them.
package assets

import _ "embed"

// Icon is the application icon (PNG, 256×256).
//
//go:embed icon.png
var Icon []byte
