package coldstart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Function is one function process started under a RuntimeAPI of its
// own, as Lambda starts a container's runtime: AWS_LAMBDA_RUNTIME_API
// names the API, and the process's init ends with its first GET next.
type Function struct {
	API *RuntimeAPI
	// Init is the init duration: from the process's exec to its first GET
	// of .../invocation/next, what Lambda reports as Init Duration.
	Init time.Duration
	// InitCPU is the CPU time the process had used by then (every thread,
	// user and system).
	InitCPU time.Duration

	// Invocations is how many events it answered.
	Invocations int

	cmd    *exec.Cmd
	exited chan struct{}
	logs   *syncBuffer
}

// lambdaEnv is the environment Lambda gives every function (the ones a
// runtime or an SDK may read), for a 256 MB function.
func lambdaEnv(name string) []string {
	return []string{
		"AWS_LAMBDA_FUNCTION_NAME=" + name, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256",
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST", "AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/" + name,
		"AWS_LAMBDA_LOG_STREAM_NAME=2026/01/01/[$LATEST]coldstart", "AWS_EXECUTION_ENV=AWS_Lambda_provided.al2023",
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand", "_HANDLER=bootstrap", "TZ=:UTC",
	}
}

// Start execs argv (with env added to this process's environment and
// Lambda's own variables) under a new RuntimeAPI and waits, up to a
// minute, for its init to end. A process that exits, or posts an init
// error, first is an error that carries its output.
func Start(ctx context.Context, name string, argv, env []string) (*Function, error) {
	api := NewRuntimeAPI()
	f := &Function{API: api, exited: make(chan struct{}), logs: &syncBuffer{}}
	f.cmd = exec.Command(argv[0], argv[1:]...)
	f.cmd.Env = append(append(append(os.Environ(), lambdaEnv(name)...), env...), "AWS_LAMBDA_RUNTIME_API="+api.Addr())
	f.cmd.Stdout, f.cmd.Stderr = f.logs, f.logs
	// The function dies with its parent, as a container with its host.
	f.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now() // measurement: init begins at exec
	if err := f.cmd.Start(); err != nil {
		api.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	go func() {
		_ = f.cmd.Wait()
		close(f.exited)
	}()
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	select {
	case <-api.First():
		f.Init = api.FirstAt().Sub(start)
		f.InitCPU = cpuTime(f.cmd.Process.Pid)
		return f, nil
	case msg := <-api.InitError():
		f.Stop()
		return nil, fmt.Errorf("%s: init error %s\n%s", name, msg, f.Logs())
	case <-f.exited:
		f.Stop()
		return nil, fmt.Errorf("%s exited during init (%v)\n%s", name, f.cmd.ProcessState, f.Logs())
	case <-timeout.C:
		f.Stop()
		return nil, fmt.Errorf("%s: no GET next within a minute\n%s", name, f.Logs())
	case <-ctx.Done():
		f.Stop()
		return nil, ctx.Err()
	}
}

// Invoke sends one event and returns the answer and the CPU time the
// process used meanwhile.
func (f *Function) Invoke(ctx context.Context, payload []byte) (Result, time.Duration, error) {
	before := cpuTime(f.cmd.Process.Pid)
	res, err := f.API.Invoke(ctx, payload, f.exited)
	if err != nil {
		return res, 0, fmt.Errorf("%w\n%s", err, f.Logs())
	}
	f.Invocations++
	return res, cpuTime(f.cmd.Process.Pid) - before, nil
}

// Logs is what the process wrote so far.
func (f *Function) Logs() string { return f.logs.String() }

// Stop kills the process and the API.
func (f *Function) Stop() {
	if f.cmd.Process != nil {
		_ = f.cmd.Process.Kill()
		<-f.exited
	}
	f.API.Close()
}

// cpuTime is the CPU time process pid has used, every thread's, in
// nanoseconds from /proc/PID/task/*/schedstat (its first field), or from
// /proc/PID/stat's clock ticks (utime, stime: 10 ms steps) when the
// kernel keeps no schedstat. It is 0 where /proc is missing.
func cpuTime(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			total += time.Duration(ns)
		}
	}
	if total > 0 {
		return total
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count from its ")".
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// Stats summarises a sample of durations.
type Stats struct {
	N                 int
	Median, P90, Mean time.Duration
}

// Summarize returns the median, 90th percentile (nearest rank) and mean
// of ds.
func Summarize(ds []time.Duration) Stats {
	if len(ds) == 0 {
		return Stats{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	rank := (len(s)*90 + 99) / 100 // nearest rank, 1-based
	return Stats{N: len(s), Median: med, P90: s[rank-1], Mean: sum / time.Duration(len(s))}
}

// String is "median 12.3 ms, p90 15.0 ms (n=20)".
func (s Stats) String() string {
	return fmt.Sprintf("median %s, p90 %s (n=%d)", ms(s.Median), ms(s.P90), s.N)
}

// ms formats d in milliseconds with one decimal.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// syncBuffer is a bytes.Buffer the process's stdout and stderr share.
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
