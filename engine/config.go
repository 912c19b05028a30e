package engine

import "github.com/sandtray/sandtray/engine/config"

// The configuration is package engine/config's. These names are the ones
// the app and the tests knew when it was the engine's; new code imports
// engine/config.
type (
	Config     = config.Config
	Duration   = config.Duration
	PoolConfig = config.Pool
	HTTPConfig = config.HTTP
)

// Profiles and pull policies, as config names them.
const (
	ProfileStandard = config.ProfileStandard
	ProfileStrict   = config.ProfileStrict
	PullNever       = config.PullNever
)

// DefaultConfig returns settings that work with no config file.
func DefaultConfig() Config { return config.Default() }

// LoadConfig reads path over the defaults; see config.Load.
func LoadConfig(path string) (Config, error) { return config.Load(path) }

// settings is the configuration an engine runs with; configuredImages is
// config.Config.ConfiguredImages under the name the engine's callers use.
type settings struct {
	config.Config
	labels map[string]string // added to every container (tests tag theirs)
	engine string            // the engine's identity, sandbox.LabelEngine (identity.go)
}

func (s *settings) configuredImages() []string { return s.ConfiguredImages() }

// cfg is the configuration in force. Reconfigure replaces it whole; a
// caller that reads several values together reads them from one cfg().
func (e *Engine) cfg() *settings { return e.conf.Load() }
