package bench

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what one run measured.
type Report struct {
	Machine    string // OS/arch, CPUs, Docker version
	Image      string
	N, Creates int
	Socket     Quantiles // warm execute_code print(1) through the MCP socket
	Direct     Quantiles // one docker exec of python3 -c 'print(1)' per call
	Pool       Quantiles // create_sandbox + first execute_code, warm pool
	NoPool     Quantiles // the same, no pool
	Rates      []Rate
	// Labels are the io.sandtray.test values of the run's containers (one
	// per engine), all removed by the time Run returns.
	Labels []string
}

// Rate is the executions per second some number of concurrent clients got.
type Rate struct {
	Clients   int
	PerSecond float64
}

// Ratio is how many times faster a warm call through the socket is than a
// per-call docker exec, at the median.
func (r Report) Ratio() float64 {
	if r.Socket.P50 <= 0 {
		return 0
	}
	return float64(r.Direct.P50) / float64(r.Socket.P50)
}

// Row labels of the table, in order.
const (
	rowSocket = "warm execute_code, MCP socket (python print(1))"
	rowDirect = "per-call Engine API exec (docker exec python3 -c 'print(1)')"
	rowRatio  = "  ratio: per-call exec p50 / socket p50"
	rowPool   = "new sandbox to first result, warm pool"
	rowNoPool = "new sandbox to first result, no pool"
	rowRate   = "executions/s, %d concurrent client%s (own connection and sandbox each)"
)

// Table renders the report as the text table `sandtray bench` prints.
func (r Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sandtray bench: %s; image %s; n=%d (new sandboxes: %d)\n\n", r.Machine, r.Image, r.N, r.Creates)
	w := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "measurement\tp50\tp90")
	row := func(label string, q Quantiles) { fmt.Fprintf(w, "%s\t%s\t%s\n", label, ms(q.P50), ms(q.P90)) }
	row(rowSocket, r.Socket)
	row(rowDirect, r.Direct)
	fmt.Fprintf(w, "%s\t%.1f×\t\n", rowRatio, r.Ratio())
	row(rowPool, r.Pool)
	row(rowNoPool, r.NoPool)
	for _, rate := range r.Rates {
		fmt.Fprintf(w, rowRate+"\t%.0f/s\t\n", rate.Clients, plural(rate.Clients), rate.PerSecond)
	}
	w.Flush()
	return b.String()
}

// ms writes a duration in milliseconds with three significant digits.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 100:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
