package sandbox

import "time"

// NetworkEgress is the network mode whose connections go through
// Sandtray's egress gate: the container has no network but loopback, and
// its HTTP(S) proxy variables name a port there that the engine carries to
// the gate, which allows, denies or asks the user about each host.
const NetworkEgress = "egress"

// EgressPending is a request waiting for the user's answer: a connection
// no rule matched (it waits until Deadline, then is refused), or a host a
// model asked for up front with request_network (with its Reason).
type EgressPending struct {
	ID        string    `json:"id"`
	SandboxID string    `json:"sandbox_id"`
	Sandbox   string    `json:"sandbox"` // its name
	Client    string    `json:"client,omitempty"`
	Host      string    `json:"host"`
	Port      int       `json:"port"`
	Method    string    `json:"method,omitempty"` // CONNECT, GET, …; "" for request_network
	Reason    string    `json:"reason,omitempty"` // the model's, from request_network
	Since     time.Time `json:"since"`
	Deadline  time.Time `json:"deadline"`
}

// EgressAnswer is the user's answer to a pending request.
type EgressAnswer string

// The answers: allow this once, always for this sandbox, always for every
// sandbox; deny this once, or always for this sandbox.
const (
	EgressAllowOnce    EgressAnswer = "once"
	EgressAllowSandbox EgressAnswer = "sandbox"
	EgressAllowGlobal  EgressAnswer = "global"
	EgressDeny         EgressAnswer = "deny"
	EgressDenySandbox  EgressAnswer = "deny_sandbox"
)

// EgressRecord is one decision of the egress gate.
type EgressRecord struct {
	Time       time.Time `json:"time"`
	SandboxID  string    `json:"sandbox_id"`
	Sandbox    string    `json:"sandbox"`
	Client     string    `json:"client,omitempty"`
	Host       string    `json:"host"`
	Port       int       `json:"port"`
	Method     string    `json:"method"`            // CONNECT, GET, …
	Decision   string    `json:"decision"`          // allow or deny
	Rule       string    `json:"rule"`              // what decided: `allow "pypi.org" (default)`, `no rule`, …
	Address    string    `json:"address,omitempty"` // the address dialed
	BytesUp    int64     `json:"bytes_up"`          // from the sandbox
	BytesDown  int64     `json:"bytes_down"`        // to the sandbox
	DurationMS int64     `json:"duration_ms"`
	Error      string    `json:"error,omitempty"` // a refusal's body, or why an allowed connection failed
	// Secrets names the secrets whose placeholders the gate swapped for
	// their values in this request (never the values).
	Secrets []string `json:"secrets,omitempty"`
	// Violation names the secret whose placeholder was sent to a host it
	// is not bound to: the request was refused.
	Violation string `json:"violation,omitempty"`
}

// EgressRules are the rules the user gave one sandbox.
type EgressRules struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// EgressHost sums a sandbox's decisions for one host.
type EgressHost struct {
	Host      string `json:"host"`
	Allowed   int    `json:"allowed"`
	Denied    int    `json:"denied"`
	BytesUp   int64  `json:"bytes_up"`
	BytesDown int64  `json:"bytes_down"`
	Last      string `json:"last"` // the last decision: allow or deny
	LastRule  string `json:"last_rule"`
}

// EgressNetwork is one sandbox's view of the egress gate: its rules (its
// own, the approvals for every sandbox, the config's), the hosts it reached
// or tried, and its latest decisions.
type EgressNetwork struct {
	Rules       EgressRules    `json:"rules"`
	GlobalAllow []string       `json:"global_allow,omitempty"`
	ConfigAllow []string       `json:"config_allow,omitempty"` // [egress] allow, or the defaults
	ConfigDeny  []string       `json:"config_deny,omitempty"`
	Ask         bool           `json:"ask"`
	Hosts       []EgressHost   `json:"hosts,omitempty"`
	Recent      []EgressRecord `json:"recent,omitempty"` // newest last
}

// EgressRefusal is a host request_network could not have, and why.
type EgressRefusal struct {
	Host string `json:"host"`
	Why  string `json:"why"`
}

// EgressRequestResult is what request_network answers: the hosts a rule
// allows now, those refused, and those waiting for the user.
type EgressRequestResult struct {
	Allowed []string        `json:"allowed"`
	Denied  []EgressRefusal `json:"denied"`
	Pending []string        `json:"pending"`
}

// SecretInfo is one secret as list_secrets tells a model of it: never its
// value.
type SecretInfo struct {
	Name  string   `json:"name"`  // the environment variable holding its placeholder
	Hosts []string `json:"hosts"` // the hosts the gate puts its value in requests to
	Body  bool     `json:"body"`  // also in request bodies (else headers and the URL's query)
	// Header and Query, when set, are the one header and the one query
	// parameter the gate puts the value in; with neither, any of them.
	Header string `json:"header,omitempty"`
	Query  string `json:"query,omitempty"`
	// Available is false when Sandtray has no value for it (Why says
	// why); sandboxes then do not get it.
	Available bool   `json:"available"`
	Why       string `json:"why,omitempty"`
}
