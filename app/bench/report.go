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
	HTTP       Quantiles // the same over Streamable HTTP on loopback, with the token
	Direct     Quantiles // one docker exec of python3 -c 'print(1)' per call
	Pool       Quantiles // create_sandbox + first execute_code, warm pool
	Other      Quantiles // the same, an image not in pool.images, used once before
	Burst      Quantiles // the same, each create of bursts of five
	NoPool     Quantiles // the same, no pool: the cold path
	ColdCreate Quantiles // the cold path's create_sandbox alone
	ColdFirst  Quantiles // the cold path's first execute_code alone
	Bare       Quantiles // Docker's create + start alone, same image and run
	Ops        Ops       // what goes through the sandbox's agent (ops.go)
	Rates      []Rate
	Idle       []Idle // idle CPU with 50 sandboxes (Options.Idle > 0)
	RSS        []RSS
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
	rowHTTP   = "warm execute_code, MCP over HTTP (loopback, bearer token)"
	rowDirect = "per-call Engine API exec (docker exec python3 -c 'print(1)')"
	rowRatio  = "  ratio: per-call exec p50 / socket p50"
	rowCmd    = "execute_command true, MCP socket"
	rowWrite  = "write_file, 100 bytes"
	rowRead   = "read_file, 100 bytes"
	rowFwd    = "new connection to a forwarded port, from the host (one byte back)"
	rowLoop   = "in the sandbox: new HTTP request on its own loopback"
	rowGate   = "in the sandbox: the same through the egress gate (to a host server)"
	rowGateO  = "  the gate's addition (p50)"
	rowGateMB = "in the sandbox: 32 MB download through the gate"
	rowCopy   = "copy_from_sandbox, 100 MB file"
	rowPool   = "new sandbox to first result, warm pool"
	rowOther  = "  the same, an image used once before (not in pool.images)"
	rowBurst  = "  the same, each of a burst of 5 back to back"
	rowNoPool = "new sandbox to first result, no pool (cold path)"
	rowColdC  = "  of which create_sandbox"
	rowColdF  = "  of which the first execute_code (kernel start)"
	rowBare   = "bare Docker create + start, same image, same run"
	rowOver   = "  cold path over bare create + start (p50)"
	rowIdle   = "CPU, %d idle sandboxes, window %s: engine / dockerd"
	rowRSS    = "engine process RSS, %d sandboxes"
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
	row(rowHTTP, r.HTTP)
	row(rowDirect, r.Direct)
	fmt.Fprintf(w, "%s\t%.1f×\t\n", rowRatio, r.Ratio())
	row(rowCmd, r.Ops.Command)
	row(rowWrite, r.Ops.Write)
	row(rowRead, r.Ops.Read)
	row(rowFwd, r.Ops.Forward)
	row(rowLoop, r.Ops.Loopback)
	row(rowGate, r.Ops.Gate)
	fmt.Fprintf(w, "%s\t%s\t\n", rowGateO, ms(r.Ops.Gate.P50-r.Ops.Loopback.P50))
	fmt.Fprintf(w, "%s\t%.0f MB/s\t\n", rowGateMB, r.Ops.GateMBps)
	fmt.Fprintf(w, "%s\t%.0f MB/s\t\n", rowCopy, r.Ops.CopyMBps)
	row(rowPool, r.Pool)
	row(rowOther, r.Other)
	row(rowBurst, r.Burst)
	row(rowNoPool, r.NoPool)
	row(rowColdC, r.ColdCreate)
	row(rowColdF, r.ColdFirst)
	row(rowBare, r.Bare)
	fmt.Fprintf(w, "%s\t%s\t\n", rowOver, ms(r.NoPool.P50-r.Bare.P50))
	for _, rate := range r.Rates {
		fmt.Fprintf(w, rowRate+"\t%.0f/s\t\n", rate.Clients, plural(rate.Clients), rate.PerSecond)
	}
	for _, i := range r.Idle {
		fmt.Fprintf(w, rowIdle+"\t%s / %s\t\n", i.Sandboxes, i.Window, percent(i.Sandtray), percent(i.Dockerd))
	}
	for _, m := range r.RSS {
		fmt.Fprintf(w, rowRSS+"\t%.0f MB\t\n", m.Sandboxes, float64(m.Bytes)/1e6)
	}
	w.Flush()
	return b.String()
}

// ms writes a duration in milliseconds with three significant digits.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 0:
		return "-" + ms(-d)
	case v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 100:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

// percent writes a share of one core, or "n/a" when it was not read.
func percent(p float64) string {
	if p < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f %%", p)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
