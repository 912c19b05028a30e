// Package filelock takes an exclusive lock on an open file without
// waiting: flock on Unix, LockFileEx on Windows. The system drops it when
// the file is closed or the process ends, however it ends.
package filelock
