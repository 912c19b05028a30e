package portfwd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Helper is the program a relay runs inside the sandbox: once it reads a
// go byte (a newline) on stdin, it connects to 127.0.0.1:<port> there and
// copies stdin to the socket and the socket to stdout. Sandtray puts nothing in the image; it uses what the image has.
type Helper string

// The helpers, best first. python3 shuts the socket's write side down when
// stdin ends (a client's half-close reaches the server); bash's /dev/tcp
// cannot, so with it a server that waits for the client's EOF before
// answering never answers (HTTP servers do not wait for it). socat and nc
// are not used: socat ends a half-closed connection after its -t timeout
// whichever side closed, and nc's variants disagree on EOF.
const (
	HelperPython3 Helper = "python3"
	HelperBash    Helper = "bash"
)

// exitRefused is the helpers' exit code when nothing listens on the port.
const exitRefused = 3

// pythonRelay connects (IPv4 loopback first, then IPv6), then pumps both ways.
// stdin's end shuts the socket's write side down (the client's half-close
// reaches the server). The server's end ends the helper: Docker ends an
// exec's output only when its process exits, so that is the only way the
// client can see EOF; a server that half-closes and still reads gets no more.
const pythonRelay = `import os,socket,sys,threading
if not os.read(0,1):sys.exit(0)
p=int(sys.argv[1])
s=None
for a in ("127.0.0.1","::1"):
    try:
        s=socket.create_connection((a,p));break
    except OSError as e:
        err=e
if s is None:
    sys.stderr.write("nothing accepts connections on port %d in the sandbox (%s)\n"%(p,err.strerror));sys.exit(3)
s.setsockopt(socket.IPPROTO_TCP,socket.TCP_NODELAY,1)
def up():
    try:
        while True:
            b=os.read(0,262144)
            if not b:break
            s.sendall(b)
    except OSError:pass
    try:s.shutdown(socket.SHUT_WR)
    except OSError:pass
t=threading.Thread(target=up,daemon=True);t.start()
try:
    while True:
        b=s.recv(262144)
        if not b:break
        v=memoryview(b)
        while v:v=v[os.write(1,v):]
except OSError:pass
os._exit(0)
`

// bashRelay has no half-close: stdin's end cannot shut the socket's write
// side. The server's end ends it (and the stdin copier with it). The copier
// names its stdin: bash gives a background command /dev/null otherwise.
const bashRelay = `read -r _ || exit 0
exec 3<>/dev/tcp/127.0.0.1/"$1" 2>/dev/null || { echo "nothing accepts connections on port $1 in the sandbox" >&2; exit 3; }
cat <&0 >&3 & up=$!; cat <&3; kill $up 2>/dev/null; exit 0`

// Command is the argv that relays one connection to port inside the sandbox.
func (h Helper) Command(port int) []string {
	p := strconv.Itoa(port)
	switch h {
	case HelperPython3:
		return []string{"python3", "-I", "-S", "-c", pythonRelay, p}
	default:
		return []string{"bash", "-c", bashRelay, "relay", p}
	}
}

// probeScript prints the first helper the image can run.
const probeScript = `command -v python3 >/dev/null 2>&1 && { echo python3; exit 0; }
command -v bash >/dev/null 2>&1 && command -v cat >/dev/null 2>&1 && { echo bash; exit 0; }
exit 1`

// ErrNoHelper is returned by Probe when the image has no program a relay can use.
// It wraps sandbox.ErrUnsupported.
var ErrNoHelper = fmt.Errorf("the sandbox's image has no program to relay a connection with: "+
	"install python3 in it (install_packages), or use an image that has python3 or bash: %w", sandbox.ErrUnsupported)

// Probe finds the helper the sandbox can run, through one short exec. It
// fails with ErrNoHelper when there is none (or no sh to look with).
func Probe(ctx context.Context, o Opener) (Helper, error) {
	c, err := o.Open(ctx, []string{"sh", "-c", probeScript})
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.CloseWrite()
	var out bytes.Buffer
	if _, err := io.Copy(&out, io.LimitReader(c, 256)); err != nil {
		return "", fmt.Errorf("look for a relay program: %w", err)
	}
	switch h := Helper(strings.TrimSpace(out.String())); h {
	case HelperPython3, HelperBash:
		return h, nil
	}
	return "", ErrNoHelper
}
