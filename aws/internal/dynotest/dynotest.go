// Package dynotest gives tests a DynamoDB-compatible server: the one
// NEXTUP_TEST_DYNAMODB names (host:port), or else dynoxide (npm
// @dynoxide/linux-x64, installed in aws/node_modules by `npm install` in
// aws/, as .ci/run does, or found on PATH) started once per test binary,
// in memory. Without either the test skips, loudly (internal/missing),
// and fails under NEXTUP_REQUIRE_ALL=1.
package dynotest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nextup-dev/nextup/internal/missing"
)

// Env names the server tests use instead of starting dynoxide.
const Env = "NEXTUP_TEST_DYNAMODB"

const enable = "cd aws && npm install (dynoxide), or set " + Env + "=host:port of a DynamoDB-compatible server"

var (
	once   sync.Once
	addr   string
	reason string
)

// Addr returns host:port of the server, starting dynoxide the first time
// when NEXTUP_TEST_DYNAMODB is not set; it skips t (or fails it under
// NEXTUP_REQUIRE_ALL=1) when there is none.
func Addr(t testing.TB) string {
	t.Helper()
	once.Do(start)
	if addr == "" {
		missing.Skip(t, "DynamoDB (dynoxide)", reason, enable)
	}
	return addr
}

// Client returns an SDK client of the server.
func Client(t testing.TB) *dynamodb.Client {
	a := Addr(t)
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String("http://" + a),
	})
}

func start() {
	if a := os.Getenv(Env); a != "" {
		addr = a
		return
	}
	bin := binary()
	if bin == "" {
		reason = "no dynoxide in aws/node_modules or on PATH, and " + Env + " is not set"
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		reason = err.Error()
		return
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "serve", "--host", "127.0.0.1", "--port", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// The server dies with the test binary, its parent: nothing else
	// knows its port.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		reason = fmt.Sprintf("start %s: %v", bin, err)
		return
	}
	a := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", a, 200*time.Millisecond)
		if err == nil {
			c.Close()
			addr = a
			go func() { _ = cmd.Wait() }()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	reason = bin + " did not listen within 15s"
}

// binary finds dynoxide: aws/node_modules (from this file's place in the
// source tree), then PATH.
func binary() string {
	_, file, _, ok := runtime.Caller(0)
	if ok {
		p := filepath.Join(filepath.Dir(file), "..", "..", "node_modules", "@dynoxide", "linux-x64", "dynoxide")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			if fi.Mode()&0o111 == 0 {
				_ = os.Chmod(p, 0o755) // npm does not keep the run bit
			}
			return p
		}
	}
	if p, err := exec.LookPath("dynoxide"); err == nil {
		return p
	}
	return ""
}

// Table returns a name for a new table, unique in this run.
func Table(t testing.TB) string {
	return fmt.Sprintf("t%d_%d", time.Now().UnixNano(), seq.Add(1))
}

var seq atomic.Int64
