package main

import (
	"archive/zip"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestLambdaZip builds the bootstrap as `make lambda` does (linux/arm64,
// no cgo) and zips it: the zip holds one file, bootstrap, executable, an
// arm64 ELF binary.
func TestLambdaZip(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", bin, "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "lambda-arm64.zip")
	if err := write(bin, out); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "bootstrap" || zr.File[0].Mode().Perm() != 0o755 {
		t.Fatalf("the zip holds %d files, the first %q mode %v; want bootstrap, 0755", len(zr.File), zr.File[0].Name, zr.File[0].Mode())
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "unzipped")
	f, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, rc); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	f.Close()
	e, err := elf.Open(tmp)
	if err != nil {
		t.Fatalf("bootstrap is not an ELF binary: %v", err)
	}
	defer e.Close()
	if e.Machine != elf.EM_AARCH64 {
		t.Errorf("bootstrap is for %v, want arm64", e.Machine)
	}
	fi, _ := os.Stat(out)
	t.Logf("dist/lambda-arm64.zip: %.1f MB", float64(fi.Size())/(1<<20))
}
