//go:build unix

package hostfs

import "golang.org/x/sys/unix"

// freeBytes is the space an unprivileged writer may still use on dir's
// filesystem.
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return -1, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
