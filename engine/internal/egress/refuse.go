package egress

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// refusal is the 403 (or 400, 502) with the verdict's one line, in the
// body and as the status line's reason phrase: a refused CONNECT's body is
// what few clients show (curl and git: only the code), its status line is
// what Python (urllib, requests, pip), wget and Go show.
func refusal(req *http.Request, v verdict) *http.Response {
	resp := goproxy.NewResponse(req, goproxy.ContentTypeText, v.status, v.body+"\n")
	resp.Status = strconv.Itoa(v.status) + " " + reasonPhrase(v.body)
	resp.Header.Set("X-Sandtray-Egress", "refused")
	resp.Close = true
	return resp
}

// reasonPhrase is text fit for a status line: printable, one line, at most
// 1 KiB.
func reasonPhrase(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 1024 {
		s = strings.ToValidUTF8(s[:1024], "")
	}
	return s
}

// badTarget refuses and records a request whose target (a CONNECT's, a
// URL's host) is no host:port the gate reads (hostrule.Target's err): 400,
// with what the sandbox wrote cut short in the record.
func (g *Gate) badTarget(box, target, method string, err error, start time.Time) verdict {
	why := strings.TrimSuffix(err.Error(), ": "+sandbox.ErrInvalid.Error())
	v := verdict{rule: "bad target", status: http.StatusBadRequest, body: "sandtray egress: " + why}
	host := target
	if len(host) > 64 {
		host = strings.ToValidUTF8(host[:64], "") + "…"
	}
	g.record(refusalRecord(request{box: box, host: host, method: method}, v, start))
	return v
}

func refusalRecord(r request, v verdict, start time.Time) Record {
	return Record{SandboxID: r.box, Host: r.host, Port: r.port, Method: r.method, Decision: DecisionDeny,
		Rule: v.rule, Error: v.body, DurationMS: time.Since(start).Milliseconds()}
}
