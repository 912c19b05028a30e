package ui

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// EgressTarget names a host and port as the gate does: "pypi.org:443",
// "[fd00::1]:80".
func EgressTarget(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// Bounds of what a model or an MCP client wrote that the approval dialog
// shows (F49): a request_network reason, and the client's name.
const (
	reasonShown = 300
	clientShown = 80
)

// OneLine is text someone else wrote, fit for one line of a dialog: runs
// of white space (line breaks too) become one space, characters that do
// not print (controls, direction overrides) go, and it is cut at max
// characters with "…". So it cannot draw lines that pass for the dialog's
// own, nor push the dialog's buttons off the screen.
func OneLine(s string, max int) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }), " ")
	if r := []rune(s); len(r) > max {
		s = strings.TrimSpace(string(r[:max-1])) + "…"
	}
	return s
}

// EgressHeading is the approval dialog's first line.
func EgressHeading(p sandbox.EgressPending) string {
	if p.Method == "" {
		return fmt.Sprintf("An assistant asks that sandbox %s may connect to %s.", p.Sandbox, EgressTarget(p.Host, p.Port))
	}
	return fmt.Sprintf("Sandbox %s is connecting to %s and waits for your answer.", p.Sandbox, EgressTarget(p.Host, p.Port))
}

// EgressMethodText says what kind of connection waits.
func EgressMethodText(method string) string {
	switch method {
	case "":
		return "asked up front (request_network)"
	case "CONNECT":
		return "HTTPS or other TLS (CONNECT)"
	}
	return "plain HTTP (" + method + ")"
}

// EgressWaitText says since when a request waits and when it is refused
// without an answer.
func EgressWaitText(p sandbox.EgressPending, now time.Time) string {
	since := p.Since.Local().Format("15:04:05")
	left := p.Deadline.Sub(now).Round(time.Second)
	if p.Deadline.IsZero() {
		return "since " + since
	}
	if left <= 0 {
		return "since " + since + " · being refused: no answer in time"
	}
	what := "refused"
	if p.Method == "" {
		what = "dropped"
	}
	return fmt.Sprintf("since %s · %s in %s without an answer", since, what, left)
}

// EgressHint is the dialog's note on what the answers do.
func EgressHint(p sandbox.EgressPending) string {
	s := "“Always” answers add a rule; the sandbox's Network tab lists its rules and takes them back."
	if p.Method == "" {
		s = "Nothing waits on this yet: “Allow once” lets the sandbox's connections to it through for the next 10 minutes. " + s
	}
	return s
}

// EgressQueueText says how many other requests wait after the one shown.
func EgressQueueText(others int) string {
	switch others {
	case 0:
		return ""
	case 1:
		return "1 more request waits after this one."
	}
	return fmt.Sprintf("%d more requests wait after this one.", others)
}

// egressRule is the rule an "always" answer to p adds, as the gate
// writes it: the host, with its port unless that is 80 or 443.
func egressRule(p sandbox.EgressPending) string {
	if p.Port == 80 || p.Port == 443 || p.Port == 0 {
		return p.Host
	}
	return EgressTarget(p.Host, p.Port)
}

// EgressAnsweredText is the status line after an answer.
func EgressAnsweredText(p sandbox.EgressPending, a sandbox.EgressAnswer) string {
	t := EgressTarget(p.Host, p.Port)
	switch a {
	case sandbox.EgressAllowOnce:
		return "Allowed " + t + " once for sandbox " + p.Sandbox + "."
	case sandbox.EgressAllowSandbox:
		return "Allowed " + egressRule(p) + " for sandbox " + p.Sandbox + " from now on (its Network tab can take it back)."
	case sandbox.EgressAllowGlobal:
		return "Allowed " + egressRule(p) + " for every sandbox from now on (a sandbox's Network tab can take it back)."
	case sandbox.EgressDenySandbox:
		return "Denied " + egressRule(p) + " for sandbox " + p.Sandbox + " from now on."
	}
	return "Denied " + t + " for sandbox " + p.Sandbox + "."
}

// EgressNoticeBody is the desktop notification of a new request.
func EgressNoticeBody(p sandbox.EgressPending) string {
	s := fmt.Sprintf("Sandbox %s wants to connect to %s", p.Sandbox, EgressTarget(p.Host, p.Port))
	if p.Reason != "" {
		s += ": “" + OneLine(p.Reason, reasonShown) + "”"
	}
	return s + ". Open Sandtray to allow or deny it."
}

// NetworkModeText is the Network tab's first line: what the sandbox's
// network mode means for its connections.
func NetworkModeText(info sandbox.Info, n sandbox.EgressNetwork) string {
	switch info.Spec.Network {
	case sandbox.NetworkEgress:
		s := "Network: egress. Every connection goes through Sandtray's gate, which allows the hosts the rules below allow and refuses the others"
		if n.Ask {
			s = "Network: egress. Every connection goes through Sandtray's gate: the hosts the rules below allow get through, denied ones are refused, and you are asked about any other host"
		}
		return s + "."
	case sandbox.NetworkBridge:
		return "Network: bridge. The sandbox reaches the whole network directly; nothing passes the gate and nothing is recorded here."
	}
	return "Network: none. The sandbox reaches nothing; only install_packages opens the way to its package hosts, through the gate, for that call."
}

// EgressRecordTexts are the cells of one connection in the Network tab:
// time, host:port, method, decision, bytes up (from the sandbox) / down,
// duration, rule.
func EgressRecordTexts(r sandbox.EgressRecord) []string {
	decision := "Allowed"
	if r.Decision != "allow" {
		decision = "Denied"
	} else if r.Error != "" {
		decision = "Failed"
	}
	bytes := placeholder
	if r.BytesUp > 0 || r.BytesDown > 0 {
		bytes = FormatBytes(uint64(max(0, r.BytesUp))) + " / " + FormatBytes(uint64(max(0, r.BytesDown)))
	}
	why := r.Rule
	if r.Error != "" {
		why += ": " + FirstLine(strings.TrimPrefix(r.Error, "sandtray egress: "), 200)
	}
	return []string{r.Time.Local().Format("15:04:05"), EgressTarget(r.Host, r.Port), r.Method, decision, bytes,
		FormatDuration(r.DurationMS), why}
}

// ConfigRulesText is the Network tab's line on the rules of config.toml
// (or the built-in defaults), which the app shows but does not edit.
func ConfigRulesText(n sandbox.EgressNetwork) string {
	allow := "none"
	if len(n.ConfigAllow) > 0 {
		allow = strings.Join(n.ConfigAllow, ", ")
	}
	s := "From config.toml ([egress], or the built-in package hosts): allowed " + allow
	if len(n.ConfigDeny) > 0 {
		s += "; denied " + strings.Join(n.ConfigDeny, ", ")
	}
	return s + ". Settings or config.toml change these."
}

// EgressRecordText is one connection in full, for the line under the
// Network tab's list: what, when, the decision and the rule that made
// it, the address dialed, the bytes, and a refusal's or failure's text.
func EgressRecordText(r sandbox.EgressRecord) string {
	decision := "allowed"
	if r.Decision != "allow" {
		decision = "denied"
	}
	s := fmt.Sprintf("%s %s at %s: %s by %s", r.Method, EgressTarget(r.Host, r.Port), r.Time.Local().Format("15:04:05"), decision, r.Rule)
	if r.Address != "" {
		s += ", to " + r.Address
	}
	if r.Decision == "allow" {
		s += fmt.Sprintf("; %s up, %s down in %s", FormatBytes(uint64(max(0, r.BytesUp))), FormatBytes(uint64(max(0, r.BytesDown))), FormatDuration(r.DurationMS))
	}
	if r.Error != "" {
		s += ". " + strings.TrimSpace(r.Error)
	}
	return s
}
