//go:build unix

package sqlite

import (
	"os"
	"syscall"
)

// freeSpace is the space left to an unprivileged writer on the file system
// holding dir.
func freeSpace(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}

// dirWritable reports whether the process may create files in dir.
func dirWritable(dir string) bool {
	return syscall.Access(dir, 2 /* W_OK */) == nil
}

// sameOwner gives path the owner and group of like, when they differ.
func sameOwner(like os.FileInfo, path string) error {
	want, ok := like.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if got, ok := st.Sys().(*syscall.Stat_t); ok && got.Uid == want.Uid && got.Gid == want.Gid {
		return nil
	}
	return os.Chown(path, int(want.Uid), int(want.Gid))
}

// SQLite's locks on Unix are POSIX advisory locks (fcntl) on bytes of the
// database file and of its -shm file (os_unix.c): a connection in WAL mode
// holds a shared lock on the -shm file's "DMS" byte for as long as it has
// the database open, and a shared lock on the database file's shared
// range once it has read it.
const (
	pendingByte = 0x40000000
	sharedFirst = pendingByte + 2
	sharedSize  = 510
	shmBase     = (22 + 8) * 4 // UNIX_SHM_BASE: after the WAL-index header
	shmDMSByte  = shmBase + 8  // UNIX_SHM_DMS: after the 8 lock bytes
)

// heldByOther reports whether another process has the SQLite database at
// path open (a running nextup serve, a sqlite3 shell), going by the locks
// SQLite takes; the pid is one of the holders.
func heldByOther(path string) (bool, int, error) {
	for _, probe := range []struct {
		file        string
		start, size int64
	}{{path + "-shm", shmDMSByte, 1}, {path, sharedFirst, sharedSize}} {
		f, err := os.Open(probe.file)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return false, 0, err
		}
		lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: probe.start, Len: probe.size}
		err = syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk)
		f.Close()
		if err != nil {
			return false, 0, err
		}
		if lk.Type != syscall.F_UNLCK {
			return true, int(lk.Pid), nil
		}
	}
	return false, 0, nil
}
