package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/nextup-dev/nextup/internal/missing"
)

// mountTmpfs mounts a tmpfs of the given size ("24m") on a new directory
// and unmounts it at the end of the test: a small file system that a test
// can fill. It needs root (CI runs as root); elsewhere the test skips,
// loudly.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		missing.Skip(t, "a small file system (tmpfs)", "mount -t tmpfs failed: "+string(out)+err.Error(), "run the tests as root, where mount is allowed (CI does)")
	}
	// Registered after t.TempDir's own cleanup, so it runs first.
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// bindReadOnly makes a read-only view of dir (a bind mount remounted
// read-only): writes through it fail with EROFS, even for root.
func bindReadOnly(t *testing.T, dir string) string {
	t.Helper()
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", dir, ro).CombinedOutput(); err != nil {
		missing.Skip(t, "a read-only mount", "mount --bind failed: "+string(out)+err.Error(), "run the tests as root, where mount is allowed (CI does)")
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", ro).Run() })
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", ro).CombinedOutput(); err != nil {
		missing.Skip(t, "a read-only mount", "mount -o remount,bind,ro failed: "+string(out)+err.Error(), "run the tests as root, where mount is allowed (CI does)")
	}
	return ro
}

// fillDisk writes path until the file system has no space left.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}
