package engine

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/config"
)

// stateDirKey names Config.StateDir (set by the host, not the file) in
// Reconfigure's answer.
const stateDirKey = "state_dir"

// Reconfigure applies cfg to the running engine, as far as a running
// engine can: what AppliesLive says applies now (to sandboxes created from
// now on; running ones keep their limits), and it returns the keys that
// changed but need a restart (such as http.listen, or "state_dir"), which
// the engine goes on running with their old values. cfg.StateDir "" means
// the current one. A cfg that fails Validate changes nothing.
func (e *Engine) Reconfigure(ctx context.Context, cfg config.Config) (restart []string, err error) {
	if err := e.reg.Enter(); err != nil {
		return nil, err
	}
	defer e.reg.Leave()
	e.reconf.Lock()
	defer e.reconf.Unlock()
	old := e.cfg()
	if cfg.StateDir == "" {
		cfg.StateDir = old.StateDir
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	changed := changedKeys(old.Config, cfg)
	if len(changed) == 0 {
		return nil, nil
	}
	merged := cfg
	var live []string
	for _, k := range changed {
		if config.AppliesLive(k) {
			live = append(live, k)
			continue
		}
		restart = append(restart, k)
		if err := copyKey(&merged, old.Config, k); err != nil {
			return nil, err
		}
	}
	if len(live) == 0 {
		return restart, nil
	}
	if err := merged.Validate(); err != nil {
		return nil, fmt.Errorf("%w (the settings that apply now do not fit the ones that wait for a restart: restart Sandtray to apply them all)", err)
	}
	if anyUnder(live, "egress") {
		eg := merged.Egress
		if err := e.networkPart.SetEgressRules(eg.Allow, eg.Deny, eg.Ask); err != nil {
			return nil, err
		}
	}
	e.conf.Store(&settings{Config: merged, labels: old.labels, engine: old.engine, agent: old.agent})
	if anyUnder(live, "pool", "default_image", "images", "limits", "sandbox") {
		e.warmPart.ReplacePool(ctx) // its spares were made for the old defaults
	}
	e.log.Info("settings applied", "now", live, "at_restart", restart)
	e.publish()
	return restart, nil
}

// anyUnder reports whether one of keys is one of prefixes or under one.
func anyUnder(keys []string, prefixes ...string) bool {
	return slices.ContainsFunc(keys, func(k string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return k == p || strings.HasPrefix(k, p+".") })
	})
}

// changedKeys lists the config keys whose values differ between a and b,
// as config.toml names them (sections' keys dotted; StateDir as
// "state_dir").
func changedKeys(a, b config.Config) []string {
	va, vb := configKeys(&a), configKeys(&b)
	var out []string
	for k, x := range va {
		if !reflect.DeepEqual(x.Interface(), vb[k].Interface()) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// copyKey sets key of dst to its value in src.
func copyKey(dst *config.Config, src config.Config, key string) error {
	d, s := configKeys(dst), configKeys(&src)
	dv, ok := d[key]
	if !ok {
		return fmt.Errorf("config has no key %q", key)
	}
	dv.Set(s[key])
	return nil
}

// durationType is a leaf of the config though it is a struct.
var durationType = reflect.TypeFor[config.Duration]()

// configKeys maps every key of c to its (settable) field.
func configKeys(c *config.Config) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		t := v.Type()
		for i := range t.NumField() {
			f, fv := t.Field(i), v.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
				walk(fv, prefix) // CopyLimits, JobLimits: their keys are the section's
				continue
			}
			name := tag
			switch {
			case f.Name == "StateDir":
				name = stateDirKey
			case tag == "-" || tag == "":
				continue
			}
			key := prefix + name
			if f.Type.Kind() == reflect.Struct && f.Type != durationType {
				walk(fv, key+".")
				continue
			}
			out[key] = fv
		}
	}
	walk(reflect.ValueOf(c).Elem(), "")
	return out
}
