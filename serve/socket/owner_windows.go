package socket

import (
	"fmt"
	"io/fs"
	"net"

	"golang.org/x/sys/windows"
)

// ownerOf reports no owner: Windows files have a SID, not a uid, and
// os.Getuid is -1 there. The endpoint is a named pipe whose security
// descriptor names its owner, checked by Dial and Accept instead.
func ownerOf(fs.FileInfo) (int, bool) { return -1, false }

// currentSID is the user SID of this process's token.
func currentSID() (*windows.SID, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("socket: read this process's user: %w", err)
	}
	return tu.User.Sid.Copy()
}

// handleOf is the pipe handle under a go-winio connection.
func handleOf(c net.Conn) (windows.Handle, error) {
	f, ok := c.(interface{ Fd() uintptr })
	if !ok {
		return 0, fmt.Errorf("socket: %T has no handle", c)
	}
	return windows.Handle(f.Fd()), nil
}

// checkServerOwner verifies that the pipe c is connected to is owned by the
// current user: the owner of a pipe is whoever created its first instance.
func checkServerOwner(c net.Conn) error {
	h, err := handleOf(c)
	if err != nil {
		return err
	}
	sd, err := windows.GetSecurityInfo(h, windows.SE_KERNEL_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("socket: read the pipe's owner: %w", err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("socket: read the pipe's owner: %w", err)
	}
	me, err := currentSID()
	if err != nil {
		return err
	}
	if !owner.Equals(me) {
		return fmt.Errorf("%w: owner %s, not %s", ErrNotOwner, owner, me)
	}
	return nil
}

// clientSID is the user of the process at the client end of pipe c, the
// counterpart of a unix socket's peer credentials.
func clientSID(c net.Conn) (*windows.SID, error) {
	h, err := handleOf(c)
	if err != nil {
		return nil, err
	}
	var pid uint32
	if err := windows.GetNamedPipeClientProcessId(h, &pid); err != nil {
		return nil, fmt.Errorf("client process id: %w", err)
	}
	proc, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return nil, fmt.Errorf("open client process %d: %w", pid, err)
	}
	defer windows.CloseHandle(proc)
	var tok windows.Token
	if err := windows.OpenProcessToken(proc, windows.TOKEN_QUERY, &tok); err != nil {
		return nil, fmt.Errorf("client process %d token: %w", pid, err)
	}
	defer tok.Close()
	tu, err := tok.GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("client process %d user: %w", pid, err)
	}
	return tu.User.Sid.Copy()
}
