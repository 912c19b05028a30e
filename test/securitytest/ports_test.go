package securitytest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// bigFileMB is the file each of the ten concurrent downloads fetches.
const bigFileMB = 50

// serveHTTP starts `python3 -m http.server port` as a background job in the
// sandbox, bound to 127.0.0.1, as the tool text tells a model to.
func serveHTTP(t *testing.T, c *client, id string, port int) {
	t.Helper()
	c.ok(t, "execute_command", map[string]any{"sandbox_id": id, "background": true,
		"command": fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1", port)})
}

// fetch GETs url from the host, returning the body's SHA-256 and length.
func fetch(ctx context.Context, url string) (string, int64, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", 0, 0, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, 0, err
	}
	defer res.Body.Close()
	h := sha256.New()
	n, err := io.Copy(h, res.Body)
	return hex.EncodeToString(h.Sum(nil)), n, res.StatusCode, err
}

// waitServing fetches url until the server answers 200: the forward exists
// before the server listens, and those early connections are just closed.
func waitServing(t *testing.T, url string) {
	t.Helper()
	eventually(t, 60*time.Second, "GET "+url+" never answered 200", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _, status, err := fetch(ctx, url)
		return err == nil && status == http.StatusOK
	})
}

// refusesConnections checks nothing listens on 127.0.0.1:port any more.
func refusesConnections(t *testing.T, port int, after string) {
	t.Helper()
	c, err := net.DialTimeout("tcp4", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second)
	if err == nil {
		c.Close()
		t.Errorf("host port %d still accepts connections after %s", port, after)
	}
}

// TestExposePortServesAnOfflineSandbox is the whole user story: a server
// started as a background job in a sandbox with no network is fetched from
// the host through expose_port's URL, ten 50 MB downloads at once come back
// intact, and the port closes on unexpose_port, on stop_sandbox and on
// delete_sandbox.
func TestExposePortServesAnOfflineSandbox(t *testing.T) {
	e := newEnv(t)
	c := e.client
	id := c.sandbox(t, map[string]any{"network": "none"})
	sum := c.command(t, id, fmt.Sprintf("head -c %d /dev/urandom > big.bin && sha256sum big.bin | cut -d' ' -f1", bigFileMB<<20), 120)
	want := strings.TrimSpace(sum.stdout)

	// Exposed before the server starts: early connections are closed, the forward stays.
	fw := c.ok(t, "expose_port", map[string]any{"sandbox_id": id, "port": 8000})
	url, hostPort := fw.str("url"), int(fw.num("host_port"))
	if !strings.HasPrefix(url, "http://127.0.0.1:"+strconv.Itoa(hostPort)) || fw.num("port") != 8000 {
		t.Fatalf("expose_port = %v; want a 127.0.0.1 url on host_port", fw.data)
	}
	serveHTTP(t, c, id, 8000)
	waitServing(t, url)

	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			got, n, status, err := fetch(ctx, url+"big.bin")
			if err != nil || status != http.StatusOK || got != want {
				t.Errorf("download %d: status %d, %d bytes, err %v, sha256 %s; want %s (%d MB)", i, status, n, err, got, want, bigFileMB)
			}
		})
	}
	wg.Wait()

	list := c.ok(t, "list_sandboxes", nil)
	if !strings.Contains(list.text, "8000→"+url) {
		t.Errorf("list_sandboxes does not show the forward %s:\n%s", url, list.text)
	}
	again := c.ok(t, "expose_port", map[string]any{"sandbox_id": id, "port": 8000})
	if again.str("url") != url {
		t.Errorf("exposing port 8000 again gave %s, want the same forward %s", again.str("url"), url)
	}

	c.ok(t, "unexpose_port", map[string]any{"sandbox_id": id, "port": 8000})
	refusesConnections(t, hostPort, "unexpose_port")
	c.refused(t, "unexpose_port", map[string]any{"sandbox_id": id, "port": 8000}, "not exposed")

	fw = c.ok(t, "expose_port", map[string]any{"sandbox_id": id, "port": 8000})
	waitServing(t, fw.str("url"))
	c.ok(t, "stop_sandbox", map[string]any{"sandbox_id": id})
	refusesConnections(t, int(fw.num("host_port")), "stop_sandbox")
	if list := c.ok(t, "list_sandboxes", nil); strings.Contains(list.text, "127.0.0.1") {
		t.Errorf("list_sandboxes still shows a forward of a stopped sandbox:\n%s", list.text)
	}

	serveHTTP(t, c, id, 8000) // starts the sandbox again
	fw = c.ok(t, "expose_port", map[string]any{"sandbox_id": id, "port": 8000})
	waitServing(t, fw.str("url"))
	c.ok(t, "delete_sandbox", map[string]any{"sandbox_id": id})
	refusesConnections(t, int(fw.num("host_port")), "delete_sandbox")
}

// TestExposePortPolicy: forbidden ports and the per-sandbox limit are
// refused with a sentence, host ports below 1024 or outside ports.host_range
// too, and a forward listens on the host's loopback only.
func TestExposePortPolicy(t *testing.T) {
	e := newEnv(t, func(cfg *config.Config) {
		cfg.Ports.Forbidden = []int{22}
		cfg.Ports.MaxPerSandbox = 2
	})
	c := e.client
	id := c.sandbox(t, nil)

	c.refused(t, "expose_port", map[string]any{"sandbox_id": id, "port": 22}, "forbids", "ports.forbidden")
	c.refused(t, "expose_port", map[string]any{"sandbox_id": id, "port": 8000, "host_port": 80}, "1024")
	// A port local software expects free (an OAuth callback, a dev server)
	// is outside ports.host_range (F39).
	c.refused(t, "expose_port", map[string]any{"sandbox_id": id, "port": 8000, "host_port": 8080}, "ports.host_range", "49152")
	first := c.ok(t, "expose_port", map[string]any{"sandbox_id": id, "port": 8000})
	if hp := int(first.num("host_port")); hp < 49152 {
		t.Errorf("a free host port was picked at %d, outside ports.host_range (49152-65535)", hp)
	}
	c.refused(t, "expose_port", map[string]any{"sandbox_id": id, "port": 8003, "host_port": int(first.num("host_port"))}, "in use")
	c.ok(t, "expose_port", map[string]any{"sandbox_id": id, "port": 8001})
	c.refused(t, "expose_port", map[string]any{"sandbox_id": id, "port": 8002}, "ports.max_per_sandbox = 2")

	hostPort := strconv.Itoa(int(first.num("host_port")))
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		ip, ok := a.(*net.IPNet)
		if !ok || ip.IP.IsLoopback() || ip.IP.To4() == nil {
			continue
		}
		if conn, err := net.DialTimeout("tcp4", net.JoinHostPort(ip.IP.String(), hostPort), 3*time.Second); err == nil {
			conn.Close()
			t.Errorf("the forward accepts connections on %s, not only on 127.0.0.1", ip.IP)
		}
	}

	// The forward gives the sandbox no way out: from inside, the host port is
	// nothing (its own loopback), and the sandbox still has no network.
	out := c.command(t, id, fmt.Sprintf(`python3 -c '
import socket
for host in ("127.0.0.1", "172.17.0.1", "host.docker.internal"):
    try:
        socket.create_connection((host, %s), timeout=3); print("reached", host)
    except OSError as e:
        print("refused", host)
'`, hostPort), 30)
	if strings.Contains(out.stdout, "reached") {
		t.Errorf("the sandbox reached the host's forward port from inside:\n%s", out.stdout)
	}
}

// TestCreateWithGPUsRefusedWithoutGPURuntime: on a Docker host without a GPU runtime
// (this one), create_sandbox with gpus is refused with a sentence about GPUs
// and what to install, and nothing is left behind.
func TestCreateWithGPUsRefusedWithoutGPURuntime(t *testing.T) {
	e := newEnv(t)
	if st := e.eng.GPUStatus(context.Background()); st.Available {
		t.Skipf("this Docker host has GPUs: %s", st.Detail)
	}
	e.client.refused(t, "create_sandbox", map[string]any{"gpus": "all"}, "GPUs", "no GPU runtime", "NVIDIA Container Toolkit")
	e.client.refused(t, "create_sandbox", map[string]any{"gpus": 1}, "GPUs", "no GPU runtime")
	e.client.refused(t, "create_sandbox", map[string]any{"gpus": "many"}, "all", "count")
	if list := e.client.ok(t, "list_sandboxes", nil); len(list.data["sandboxes"].([]any)) != 0 {
		t.Errorf("a refused create left a sandbox: %s", list.text)
	}
}

// TestGPUsForbiddenByConfig: gpu.allow = false and gpu.max refuse before
// Docker is asked.
func TestGPUsForbiddenByConfig(t *testing.T) {
	e := newEnv(t, func(cfg *config.Config) { cfg.GPU.Max = 1 })
	e.client.refused(t, "create_sandbox", map[string]any{"gpus": "all"}, "gpu.max")
	e.client.refused(t, "create_sandbox", map[string]any{"gpus": 2}, "gpu.max = 1")
	off := newEnv(t, func(cfg *config.Config) { cfg.GPU.Allow = false })
	off.client.refused(t, "create_sandbox", map[string]any{"gpus": 1}, "gpu.allow = false")
}

// TestPersistentSandboxForwardsComeBack: an engine that exits ends its
// forwards; the next engine brings back a persistent sandbox's forward on
// the same host port.
func TestPersistentSandboxForwardsComeBack(t *testing.T) {
	cfg := config.Default()
	cfg.DefaultImage = dockertest.Image(t)
	cfg.StateDir = t.TempDir()
	cfg.Pool.Size = 0
	labels := dockertest.Labels(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	owner := sandbox.Owner{Session: "s1", Client: "test 1"}

	first, err := engine.New(ctx, cfg, engine.Options{Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	info, err := first.Create(ctx, owner, sandbox.CreateRequest{Persistent: true}, nil)
	if err != nil {
		first.Close(ctx)
		t.Fatal(err)
	}
	// A server started outside the engine's jobs outlives the engine.
	_, err = dockertest.Client(t).Exec(ctx, info.ID, runtime.ExecOptions{Cmd: []string{"sh", "-c",
		"nohup python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 &"}})
	if err != nil {
		first.Close(ctx)
		t.Fatal(err)
	}
	fw, err := first.ExposePort(ctx, owner, info.ID, 8000, 0)
	if err != nil {
		first.Close(ctx)
		t.Fatal(err)
	}
	waitServing(t, fw.URL)
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	refusesConnections(t, fw.HostPort, "the engine closed")

	second, err := engine.New(ctx, cfg, engine.Options{Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close(ctx)
	got, err := second.Get(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Ports) != 1 || got.Ports[0] != fw {
		t.Fatalf("after a restart the sandbox's forwards are %+v, want %+v", got.Ports, fw)
	}
	waitServing(t, fw.URL)
	if err := second.Delete(ctx, owner, info.ID); err != nil {
		t.Fatal(err)
	}
	refusesConnections(t, fw.HostPort, "Delete")
}

// hashServer answers each connection, once the client has half-closed it,
// with the SHA-256 of everything the client sent.
const hashServer = `import hashlib,socket,threading
def serve(c):
    h=hashlib.sha256()
    while True:
        b=c.recv(1<<20)
        if not b: break
        h.update(b)
    c.sendall(h.hexdigest().encode()); c.close()
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)
s.bind(("127.0.0.1",9001)); s.listen(16)
while True:
    c,_=s.accept(); threading.Thread(target=serve,args=(c,),daemon=True).start()
`

// TestExposePortUploadWithHalfClose: a 50 MB upload through a forward, the
// client's half-close reaching the server in the sandbox, which answers
// after it; three at once.
func TestExposePortUploadWithHalfClose(t *testing.T) {
	e := newEnv(t)
	c := e.client
	id := c.sandbox(t, nil)
	c.ok(t, "write_file", map[string]any{"sandbox_id": id, "path": "hash_server.py", "content": hashServer})
	job := c.ok(t, "execute_command", map[string]any{"sandbox_id": id, "background": true, "command": "python3 hash_server.py"})
	fw := c.ok(t, "expose_port", map[string]any{"sandbox_id": id, "port": 9001})
	addr := "127.0.0.1:" + strconv.Itoa(int(fw.num("host_port")))

	payload := make([]byte, bigFileMB<<20)
	for i := range payload {
		payload[i] = byte(i * 7 / 3)
	}
	sum := sha256.Sum256(payload)
	want := hex.EncodeToString(sum[:])
	upload := func() (string, error) {
		conn, err := net.Dial("tcp4", addr)
		if err != nil {
			return "", err
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(3 * time.Minute))
		if _, err := conn.Write(payload); err != nil {
			return "", err
		}
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			return "", err
		}
		got, err := io.ReadAll(conn)
		return string(got), err
	}
	untilUploaded := func() {
		t.Helper()
		eventually(t, 60*time.Second, "upload through "+addr+" never got the server's hash "+want, func() bool { // until the server listens
			got, err := upload()
			return err == nil && got == want
		})
	}
	untilUploaded()
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			if got, err := upload(); err != nil || got != want {
				t.Errorf("upload %d: got %q, %v; want %s", i, got, err, want)
			}
		})
	}
	wg.Wait()

	// The server restarts: the same forward reaches the new one.
	c.ok(t, "job_stop", map[string]any{"job_id": job.str("job_id")})
	if got, err := upload(); got == want {
		t.Fatalf("the server still answered after job_stop (err %v)", err)
	}
	c.ok(t, "execute_command", map[string]any{"sandbox_id": id, "background": true, "command": "python3 hash_server.py"})
	untilUploaded()
}
