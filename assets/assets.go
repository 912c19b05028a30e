// Package assets embeds Sandtray's icons, so every binary carries them.
package assets

import _ "embed"

// Icon is the application icon (PNG, 256×256).
//
//go:embed icon.png
var Icon []byte

// TrayLight is the system tray icon for light panels: a dark glyph on a
// transparent background (PNG, 64×64).
//
//go:embed tray-light.png
var TrayLight []byte

// TrayDark is the system tray icon for dark panels: a light glyph on a
// transparent background (PNG, 64×64).
//
//go:embed tray-dark.png
var TrayDark []byte
