package doctor

import (
	"context"
	"fmt"

	"github.com/sandtray/sandtray/engine"
)

// checkSecrets says where the secrets' values are kept (the OS keychain,
// or a 0600 file where none answers) and which secret has no value.
func checkSecrets(_ context.Context, e *Env) []Line {
	if len(e.Config.Secrets) == 0 {
		return []Line{{Info, "secrets", "none configured ([secrets.NAME] in config.toml, or Settings → Secrets)", ""}}
	}
	var lines []Line
	where, keychain := engine.SecretsBackend(e.Config)
	if keychain {
		lines = append(lines, Line{OK, "secrets", fmt.Sprintf("%d configured; values without env or file are in %s", len(e.Config.Secrets), where), ""})
	} else {
		lines = append(lines, Line{Warn, "secrets", fmt.Sprintf("%d configured; values without env or file are in %s", len(e.Config.Secrets), where),
			"start a Secret Service (gnome-keyring or KeePassXC) to keep them in the OS keychain, or keep the file private"})
	}
	for _, s := range engine.SecretsStatus(e.Config) {
		if !s.Available {
			lines = append(lines, Line{Warn, "secrets", s.Name + ": no value, so egress sandboxes do not get it: " + s.Why, "add the value in Settings → Secrets, or fix env or file in [secrets." + s.Name + "]"})
		}
	}
	return lines
}
