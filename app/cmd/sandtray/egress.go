package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/control"
	"github.com/sandtray/sandtray/serve/socket"
)

func init() {
	register(command{names: []string{"egress"}, run: runEgress,
		usage: "egress pending|allow|deny|rules   answer the egress gate of the running engine:\n" +
			"        egress pending                       what waits for an answer (sandbox, host, port, since)\n" +
			"        egress allow SANDBOX HOST[:PORT] [--always|--global]  let it through once, always for the sandbox, or for every sandbox\n" +
			"        egress deny SANDBOX HOST[:PORT] [--always]            refuse it (--always: from now on, for the sandbox)\n" +
			"        egress rules SANDBOX                 the sandbox's rules and its latest decisions"})
}

// runEgress talks to the running engine's control endpoint.
func runEgress(ctx context.Context, args []string, e env) error {
	if len(args) == 0 {
		return fmt.Errorf("egress needs a subcommand: pending, allow, deny or rules")
	}
	c, err := dialControl(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch args[0] {
	case "pending":
		return egressPending(ctx, c, e.stdout)
	case "allow", "deny":
		return egressAnswer(ctx, c, args[0], args[1:], e)
	case "rules":
		if len(args) != 2 {
			return fmt.Errorf("usage: sandtray egress rules SANDBOX")
		}
		return egressRules(ctx, c, args[1], e.stdout)
	}
	return fmt.Errorf("unknown egress subcommand %q: use pending, allow, deny or rules", args[0])
}

// dialControl connects to the engine's control endpoint, beside its MCP
// endpoint, checking that the engine serving it is the user's own.
func dialControl(ctx context.Context) (*control.Client, error) {
	mcpPath, err := socket.Path()
	if err != nil {
		return nil, err
	}
	path := control.Path(mcpPath)
	conn, err := socket.DialPrivate(ctx, path)
	if err != nil {
		if socket.NotServing(err) {
			return nil, fmt.Errorf("no Sandtray engine is running (nothing serves %s); start it with `sandtray` or `sandtray serve`", path)
		}
		return nil, fmt.Errorf("control endpoint %s: %w", path, err)
	}
	return control.NewClient(conn), nil
}

func egressPending(ctx context.Context, c *control.Client, out io.Writer) error {
	list, err := c.Pending(ctx)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(out, "Nothing waits for an answer.")
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SANDBOX\tHOST\tPORT\tSINCE\tLEFT\tCLIENT\tREASON")
	now := time.Now()
	for _, p := range list {
		left := "-"
		if p.Method != "" {
			left = p.Deadline.Sub(now).Round(time.Second).String()
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", p.Sandbox, p.Host, p.Port, p.Since.Local().Format("15:04:05"), left, dash(p.Client), dash(p.Reason))
	}
	return w.Flush()
}

func egressAnswer(ctx context.Context, c *control.Client, verb string, args []string, e env) error {
	fs := flag.NewFlagSet("egress "+verb, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	always := fs.Bool("always", false, "from now on, for this sandbox")
	global := false
	if verb == "allow" {
		fs.BoolVar(&global, "global", false, "from now on, for every sandbox")
	}
	var pos []string
	for len(args) > 0 { // flags may follow the arguments
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) > 0 {
			pos, args = append(pos, args[0]), args[1:]
		}
	}
	if len(pos) != 2 {
		return fmt.Errorf("usage: sandtray egress %s SANDBOX HOST[:PORT]%s", verb, map[bool]string{true: " [--always|--global]", false: " [--always]"}[verb == "allow"])
	}
	answer := map[string]sandbox.EgressAnswer{"allow": sandbox.EgressAllowOnce, "deny": sandbox.EgressDeny}[verb]
	switch {
	case global:
		answer = sandbox.EgressAllowGlobal
	case *always && verb == "allow":
		answer = sandbox.EgressAllowSandbox
	case *always:
		answer = sandbox.EgressDenySandbox
	}
	n, err := c.AnswerHost(ctx, pos[0], pos[1], answer)
	if err != nil {
		return err
	}
	what := map[sandbox.EgressAnswer]string{
		sandbox.EgressAllowOnce: "allowed once", sandbox.EgressAllowSandbox: "allowed for sandbox " + pos[0],
		sandbox.EgressAllowGlobal: "allowed for every sandbox", sandbox.EgressDeny: "denied",
		sandbox.EgressDenySandbox: "denied for sandbox " + pos[0],
	}[answer]
	if n == 0 {
		fmt.Fprintf(e.stdout, "%s: %s from now on (nothing was waiting).\n", pos[1], what)
	} else {
		fmt.Fprintf(e.stdout, "%s: %s (%d waiting %s).\n", pos[1], what, n, plural(n, "request", "requests"))
	}
	return nil
}

func egressRules(ctx context.Context, c *control.Client, ref string, out io.Writer) error {
	n, err := c.Network(ctx, ref)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "allow (this sandbox): %s\ndeny (this sandbox):  %s\nallow (every sandbox, approved): %s\nallow (config): %s\ndeny (config):  %s\nask: %v\n",
		list(n.Rules.Allow), list(n.Rules.Deny), list(n.GlobalAllow), list(n.ConfigAllow), list(n.ConfigDeny), n.Ask)
	if len(n.Recent) == 0 {
		return nil
	}
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "TIME\tMETHOD\tHOST\tDECISION\tRULE\tUP\tDOWN")
	for _, r := range n.Recent {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%d\n", r.Time.Local().Format("15:04:05"), r.Method, hostPort(r.Host, r.Port), r.Decision, r.Rule, r.BytesUp, r.BytesDown)
	}
	return w.Flush()
}

func hostPort(h string, p int) string {
	if strings.Contains(h, ":") {
		return fmt.Sprintf("[%s]:%d", h, p)
	}
	return fmt.Sprintf("%s:%d", h, p)
}

func list(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
