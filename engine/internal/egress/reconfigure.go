package egress

import "github.com/sandtray/sandtray/engine/internal/egress/hostrule"

// SetRules replaces the config's rules (egress.allow, egress.deny and
// egress.ask) while the gate runs: the next decision uses them. allow nil
// means DefaultAllow, as in Options. Rules a person gave a sandbox or every
// sandbox stay; pending requests are settled again, so one the new rules
// now allow goes through at once.
func (g *Gate) SetRules(allow, deny []string, ask bool) error {
	allowPatterns, source := allow, hostrule.SourceConfig
	if allowPatterns == nil {
		allowPatterns, source = DefaultAllow, hostrule.SourceDefault
	}
	a, err := hostrule.ParseList("egress.allow", allowPatterns, source)
	if err != nil {
		return err
	}
	d, err := hostrule.ParseList("egress.deny", deny, hostrule.SourceConfig)
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.allow, g.deny = a, d
	g.o.Allow, g.o.Deny, g.o.Ask = allow, deny, ask
	g.settleLocked()
	g.mu.Unlock()
	g.changed()
	return nil
}
