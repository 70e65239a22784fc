package coldstart

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/aws/internal/dynotest"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
)

var (
	starts = flag.Int("coldstart.starts", 0, "TestMeasure: starts of each function to time (0: skip the measurement)")
	rounds = flag.Int("coldstart.rounds", 20, "TestMeasure: warm rounds (join, status, release, claim page, claim, timers)")
)

// table makes a table on the test server for the bootstrap, named table-.
func table(t *testing.T) (addr, name string) {
	t.Helper()
	addr, name = dynotest.Addr(t), dynotest.Table(t)
	ctx := context.Background()
	st, err := dynamo.Open(ctx, fmt.Sprintf("dynamodb://%s/%s-?region=us-east-1", addr, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	return addr, name
}

// createBusiness is a Function URL request every start answers first.
func createBusiness(ctx context.Context, f *Function, i int) (Sample, error) {
	c := &caller{ctx: ctx, f: f, out: map[string][]Sample{}}
	c.json(KindFirst, "POST", "/v1/businesses", "adm", fmt.Sprintf(`{"name":"Start %d","timezone":"UTC"}`, i), 201)
	if c.err != nil {
		return Sample{}, c.err
	}
	return c.out[KindFirst][0], nil
}

// TestHarness keeps the harness working (make test): the bootstrap is
// built and started twice under the Runtime API, each start's init is
// measured, and each answers a Function URL request creating a business.
// It checks that something was measured, never how fast.
func TestHarness(t *testing.T) {
	t.Parallel()
	addr, name := table(t)
	ctx := context.Background()
	bin, err := BuildBootstrap(ctx, t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		f, err := Start(ctx, "nextup-api", []string{bin}, BootstrapEnv(addr, name))
		if err != nil {
			t.Fatal(err)
		}
		s, err := createBusiness(ctx, f, i)
		f.Stop()
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		if f.Init <= 0 || s.Duration <= 0 {
			t.Errorf("start %d: init %v, first invocation %v: want both measured", i, f.Init, s.Duration)
		}
	}
}

// TestMeasure is `make coldstart`: the bootstrap's init over
// -coldstart.starts starts, its warm durations over -coldstart.rounds
// rounds, and the Python function's init with and without boto3,
// printed as a table. It is skipped unless -coldstart.starts is given.
func TestMeasure(t *testing.T) {
	if *starts < 1 {
		t.Skip("the measurement runs with -coldstart.starts N (make coldstart)")
	}
	ctx := context.Background()
	addr, name := table(t)
	dir := t.TempDir()
	bin, err := BuildBootstrap(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	w := os.Stdout
	const format = "  %-60s %10s %10s %12s %4s\n"
	row := func(what string, s []Sample) {
		d, c := Summarize(durations(s)), Summarize(cpus(s))
		fmt.Fprintf(w, format, what, ms(d.Median), ms(d.P90), ms(c.Median), fmt.Sprint(d.N))
	}
	var notes []string

	// The bootstrap's init.
	goInits, goFirsts := measureInits(t, *starts, func() (*Function, error) {
		return Start(ctx, "nextup-api", []string{bin}, BootstrapEnv(addr, name))
	}, func(f *Function, i int) (Sample, error) { return createBusiness(ctx, f, i) })
	fi, _ := os.Stat(bin)
	notes = append(notes, fmt.Sprintf("Go bootstrap: %s built as make lambda builds it (%s, %.1f MB), at this checkout.", BootstrapPackage, runtime.GOARCH, float64(fi.Size())/1e6))

	// Python, with boto3 and without.
	var pyInits, pyFirsts, bareInits []Sample
	var pyWhat string
	py, err := FindPython(filepath.Join(dir, "boto3"))
	if err != nil {
		notes = append(notes, fmt.Sprintf("Python: %v (not measured).", err))
	} else {
		argv, err := PythonArgv(py, dir)
		if err != nil {
			t.Fatal(err)
		}
		env := PythonRunEnv(py, dir, addr, dynamo.TableName(name+"-"))
		pyFirst := func(f *Function, _ int) (Sample, error) {
			res, cpu, err := f.Invoke(ctx, []byte(`{}`))
			if err == nil && res.Failed {
				err = fmt.Errorf("the Python function failed: %s", res.Payload)
			}
			return Sample{res.Duration, cpu}, err
		}
		pyWhat = "Python " + py.Version
		notes = append(notes, fmt.Sprintf("Python: %s (%s).", py.Version, py.Exe))
		if !strings.HasPrefix(py.Version, "3.14") {
			notes = append(notes, "  Not 3.14, the seed's runtime: no Python 3.14 here, and python.org (pyenv's source) is out of reach.")
		}
		if py.Boto3 != "" {
			from := ""
			if py.Boto3From != "" {
				from = ", linked from " + py.Boto3From + " (PyPI is out of reach)"
			}
			notes = append(notes, fmt.Sprintf("  boto3 %s%s.", py.Boto3, from))
			pyInits, pyFirsts = measureInits(t, *starts, func() (*Function, error) {
				return Start(ctx, "python", argv, env)
			}, pyFirst)
		} else {
			notes = append(notes, "  boto3: none found here and PyPI is out of reach: measured without it only.")
		}
		bareInits, _ = measureInits(t, *starts, func() (*Function, error) {
			return Start(ctx, "python", argv, append(env, "NEXTUP_COLDSTART_NO_BOTO3=1"))
		}, pyFirst)
	}

	// Warm durations.
	f, err := Start(ctx, "nextup-api", []string{bin}, BootstrapEnv(addr, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	samples, err := Warm(ctx, f, *rounds, true)
	if err != nil {
		t.Fatal(err)
	}

	fmt.Fprintf(w, "\nInit duration: exec → first GET .../invocation/next (%d starts each; a first start, filling caches, not counted)\n", *starts)
	fmt.Fprintf(w, format, "", "median", "p90", "CPU, median", "n")
	row("Go bootstrap", goInits)
	if len(pyInits) > 0 {
		row(pyWhat+", boto3 imported and a DynamoDB client made", pyInits)
	}
	if len(bareInits) > 0 {
		row(pyWhat+", no boto3 (the interpreter and urllib)", bareInits)
	}
	fmt.Fprintf(w, "First invocation after init\n")
	row("Go bootstrap: create a business (Function URL)", goFirsts)
	if len(pyFirsts) > 0 {
		row(pyWhat+": one GetItem", pyFirsts)
	}
	fmt.Fprintf(w, "Warm invocations of one Go bootstrap (%d rounds): duration as billed, CPU of the process\n", *rounds)
	for _, k := range Kinds[1:] {
		if s := samples[k]; len(s) > 0 {
			row(k, s)
		}
	}
	fmt.Printf("\nThe warm bootstrap wrote %d bytes of logs over %d invocations (Lambda adds its START, END and REPORT lines).\n",
		len(f.Logs()), f.Invocations)
	for _, n := range notes {
		fmt.Println(n)
	}
	fmt.Println("This machine: DynamoDB is dynoxide on loopback, a full core per thread; see the package doc for what that leaves out.")
}

// measureInits starts a function n+1 times (the first not counted),
// each answering one first invocation, and returns the inits (with their
// CPU times) and the first invocations.
func measureInits(t *testing.T, n int, start func() (*Function, error), first func(*Function, int) (Sample, error)) (inits, firsts []Sample) {
	t.Helper()
	for i := range n + 1 {
		f, err := start()
		if err != nil {
			t.Fatal(err)
		}
		s, err := first(f, i)
		f.Stop()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			continue
		}
		inits, firsts = append(inits, Sample{f.Init, f.InitCPU}), append(firsts, s)
	}
	return inits, firsts
}

func durations(s []Sample) []time.Duration {
	var out []time.Duration
	for _, x := range s {
		out = append(out, x.Duration)
	}
	return out
}

func cpus(s []Sample) []time.Duration {
	var out []time.Duration
	for _, x := range s {
		out = append(out, x.CPU)
	}
	return out
}
