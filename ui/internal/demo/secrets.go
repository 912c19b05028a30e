package main

import (
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"

	"github.com/sandtray/sandtray/ui"
)

// The demo's Settings have two secrets (ui.SecretSettings), kept in memory.

var demoSecrets = []ui.SecretEntry{
	{Name: "OPENAI_API_KEY", Hosts: []string{"api.openai.com"}, Source: "keychain", HasValue: true},
	{Name: "GH_TOKEN", Hosts: []string{"api.github.com", "uploads.github.com"}, Source: "env GH_TOKEN", HasValue: true},
}

func (d *demoSettings) Secrets() ([]ui.SecretEntry, error) { return slices.Clone(demoSecrets), nil }
func (d *demoSettings) SecretsWhere() string               { return "the OS keychain" }
func (d *demoSettings) AddSecret(name, _ string, hosts []string) error {
	demoSecrets = append(demoSecrets, ui.SecretEntry{Name: name, Hosts: hosts, Source: "keychain", HasValue: true})
	return nil
}
func (d *demoSettings) BindSecret(name string, hosts []string) error {
	for i := range demoSecrets {
		if demoSecrets[i].Name == name {
			demoSecrets[i].Hosts = hosts
		}
	}
	return nil
}
func (d *demoSettings) RemoveSecret(name string) error {
	demoSecrets = slices.DeleteFunc(demoSecrets, func(s ui.SecretEntry) bool { return s.Name == name })
	return nil
}

// scrollSettingsToEnd shows the end of the Settings window, where the
// Secrets section is.
func scrollSettingsToEnd(a fyne.App) {
	go func() {
		time.Sleep(2 * time.Second)
		fyne.Do(func() {
			for _, w := range a.Driver().AllWindows() {
				if w.Title() != "Sandtray settings" {
					continue
				}
				var walk func(o fyne.CanvasObject)
				walk = func(o fyne.CanvasObject) {
					switch c := o.(type) {
					case *container.Scroll:
						c.ScrollToBottom()
					case *fyne.Container:
						for _, x := range c.Objects {
							walk(x)
						}
					}
				}
				walk(w.Content())
			}
		})
	}()
}
