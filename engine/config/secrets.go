package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"

	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/homedir"
)

// Secret is one [secrets.NAME] section: a value the sandboxes of network
// "egress" never see. They hold a placeholder in NAME; the egress gate
// swaps it for the value only in requests to Hosts. The value comes from
// Sandtray's own environment (Env), a file (File), or, with neither, the
// OS keychain (the Settings window's Secrets section puts it there).
type Secret struct {
	Hosts []string `toml:"hosts"` // egress rule patterns: host, *.domain, host:port
	Env   string   `toml:"env"`   // the variable of Sandtray's environment holding the value
	File  string   `toml:"file"`  // a file holding the value (a trailing line break is dropped)
	// Body lets the gate swap the placeholder in request bodies too; else
	// only in headers and the URL's query.
	Body bool `toml:"body"`
	// Header, when set, is the one request header the gate puts the value
	// in ("Authorization"); Query, the one query parameter ("api_key").
	// With neither, any header and any query parameter.
	Header string `toml:"header"`
	Query  string `toml:"query"`
}

// Source says where the value comes from: "env VAR", "file PATH" or
// "keychain".
func (s Secret) Source() string {
	switch {
	case s.Env != "":
		return "env " + s.Env
	case s.File != "":
		return "file " + s.File
	}
	return "keychain"
}

// ExpandedFile is File with a leading "~/" made the user's home.
func (s Secret) ExpandedFile() string { return homedir.Expand(s.File) }

// headerName and queryName are what secrets.NAME.header and .query may be:
// an HTTP header's name (RFC 9110's token), and a query parameter's name
// written as it is sent.
var (
	headerName = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$")
	queryName  = regexp.MustCompile(`^[A-Za-z0-9._~\[\]-]{1,128}$`)
)

// secretName is what a secret may be called: an environment variable's name.
var secretName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// reservedSecretNames are variables Sandtray sets in an egress sandbox, or
// that change how everything in it runs.
var reservedSecretNames = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy", "NODE_USE_ENV_PROXY",
	"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "PIP_CERT",
	"PATH", "HOME", "USER", "SHELL", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "NODE_OPTIONS",
}

// ValidSecretName checks a secret's name, saying what a good one is.
func ValidSecretName(name string) error {
	if !secretName.MatchString(name) {
		return fmt.Errorf("secret name %q must be an environment variable's name: letters, digits and '_', not starting with a digit, such as OPENAI_API_KEY: %w", name, sandbox.ErrInvalid)
	}
	if slices.Contains(reservedSecretNames, name) {
		return fmt.Errorf("secret name %q is a variable Sandtray or the sandbox's programs need for themselves; pick another name: %w", name, sandbox.ErrInvalid)
	}
	return nil
}

// SecretNames are the configured secrets' names, sorted.
func (c *Config) SecretNames() []string {
	names := make([]string, 0, len(c.Secrets))
	for n := range c.Secrets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// validateSecrets checks [secrets.*] and egress.trust_ca, naming the bad key.
func (c *Config) validateSecrets() error {
	if t := c.Egress.TrustCA; t != "" && !filepath.IsAbs(homedir.Expand(t)) {
		return fmt.Errorf("egress.trust_ca %q must be an absolute path to a PEM file: %w", t, sandbox.ErrInvalid)
	}
	for _, name := range c.SecretNames() {
		s := c.Secrets[name]
		key := "secrets." + name
		if err := ValidSecretName(name); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if len(s.Hosts) == 0 {
			return fmt.Errorf("%s.hosts is empty: name the hosts the secret is for, such as [\"api.openai.com\"]: %w", key, sandbox.ErrInvalid)
		}
		if _, err := hostrule.ParseList(key+".hosts", s.Hosts, hostrule.SourceConfig); err != nil {
			return err
		}
		if s.Env != "" && s.File != "" {
			return fmt.Errorf("%s sets both env and file: keep one (or neither, for the OS keychain): %w", key, sandbox.ErrInvalid)
		}
		if s.File != "" && !filepath.IsAbs(s.ExpandedFile()) {
			return fmt.Errorf("%s.file %q must be an absolute path: %w", key, s.File, sandbox.ErrInvalid)
		}
		if s.Header != "" && !headerName.MatchString(s.Header) {
			return fmt.Errorf("%s.header %q must be a header's name, such as \"Authorization\" or \"X-Api-Key\": %w", key, s.Header, sandbox.ErrInvalid)
		}
		if s.Query != "" && !queryName.MatchString(s.Query) {
			return fmt.Errorf("%s.query %q must be a query parameter's name, such as \"api_key\": %w", key, s.Query, sandbox.ErrInvalid)
		}
	}
	return nil
}
