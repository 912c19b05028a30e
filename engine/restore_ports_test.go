package engine

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestRestoreEndsTheForwardsOfItsJobs: a server runs as a background job
// behind a forward; restore_sandbox ends the job (which says it was ended
// by the restore, in job_status and in the app's Jobs list) and with it
// the server, so the forward goes from the sandbox's ports and its host
// port closes; the result names it.
func TestRestoreEndsTheForwardsOfItsJobs(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	snapshotImages(t, te)
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{Name: "served"}).ID
	s, err := te.Snapshot(ctx, te.owner, id, sandbox.SnapshotRequest{})
	if err != nil {
		t.Fatal(err)
	}
	job, err := te.ExecCommand(ctx, te.owner, id, sandbox.CommandRequest{Command: "exec python3 -m http.server 8000", Background: true})
	if err != nil || job.JobID == "" {
		t.Fatalf("start the server: %+v %v", job, err)
	}
	fw, err := te.ExposePort(ctx, te.owner, id, 8000, 0)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the server to answer through the forward", func() bool {
		r, err := http.Get(fw.URL)
		if err == nil {
			r.Body.Close()
		}
		return err == nil && r.StatusCode == 200
	})
	res, err := te.Restore(ctx, te.owner, id, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.JobsEnded != 1 || !slices.Equal(res.PortsClosed, []int{8000}) {
		t.Errorf("restore = %+v; want one job ended and the forward of port 8000 closed", res)
	}
	if info, _ := te.Get(ctx, id); len(info.Ports) != 0 {
		t.Errorf("after restore the sandbox lists forwards %+v, whose server the restore ended", info.Ports)
	}
	c, err := net.DialTimeout("tcp4", "127.0.0.1:"+strconv.Itoa(fw.HostPort), 5*time.Second)
	if err == nil {
		c.Close()
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("host port %d still listens after the restore (%v)", fw.HostPort, err)
	}
	st, err := te.JobStatus(ctx, job.JobID, 0)
	if err != nil || st.Status != sandbox.JobStopped || !strings.Contains(st.Error, "ended by restore_sandbox") {
		t.Errorf("job_status of the job the restore ended: %+v %v", st, err)
	}
	if list := te.Jobs(id); len(list) != 1 || list[0].Status != sandbox.JobStopped || !strings.Contains(list[0].Error, "ended by restore_sandbox") {
		t.Errorf("the app's Jobs list: %+v", list)
	}
}
