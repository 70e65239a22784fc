package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nextup-dev/nextup/internal/missing"
)

// rieVersion is the emulator's version, as DEPENDENCIES.md and .ci/run
// name it (tagged versions are not served).
const rieVersion = "v0.0.0-20261030222936-bef5c4ba774d"

// rie finds the Lambda Runtime Interface Emulator.
func rie(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p
	}
	gopath, _ := exec.Command("go", "env", "GOPATH").Output()
	p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "aws-lambda-rie")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	missing.Skip(t, "Lambda Runtime Interface Emulator", "aws-lambda-rie is not on PATH nor in $(go env GOPATH)/bin",
		"go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@"+rieVersion)
	return ""
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer is a bytes.Buffer several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
