package nextup_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layout rules of STYLE.md, checked on what ships (a package's own
// files, not its tests: tests use real adapters on purpose, SQLite and
// PostgreSQL above all).

const module = "github.com/nextup-dev/nextup"

// adapters are the packages that adapt one technology each (STYLE.md
// rule 2, "one package per adapter, named after the technology it
// adapts"): the stores, the notifier channels, the intake readers that
// talk to a server or an SDK, the payment and booking-system clients, the
// web server itself, and everything in the AWS module. They meet only in
// cmd/: no other package may import one. Pure readers of a format
// (intake/csvrows, intake/mailmsg, intake/parse) and the machinery that
// works on nextup.Store (timer, outbox, store/storetest, store/storecopy)
// are not adapters.
var adapters = []string{
	"store/sqlite",
	"store/postgres",
	"notify/capture",
	"notify/smtp",
	"notify/twilio",
	"notify/webhook",
	"intake/sheet",
	"intake/smtpd",
	"intake/anthropic",
	"pay/stripepay",
	"booksys/httpbook",
	"web",
	"aws/...", // every package of the AWS module but its commands
}

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath string
	Imports    []string
	Standard   bool
	Error      *struct{ Err string }
}

// goList runs `go list -json` on patterns from the repository root (the
// go.work there takes in the AWS module).
func goList(t *testing.T, patterns ...string) []listed {
	t.Helper()
	args := append([]string{"list", "-e", "-json=ImportPath,Imports,Standard,Error"}, patterns...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go %s listed nothing", strings.Join(args, " "))
	}
	return pkgs
}

// rel is path relative to the module root ("" for the root package).
func rel(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// adapterOf returns the adapter path imp belongs to, or "".
func adapterOf(imp string) string {
	if !strings.HasPrefix(imp, module+"/") {
		return ""
	}
	r := rel(imp)
	for _, a := range adapters {
		if dir, ok := strings.CutSuffix(a, "/..."); ok {
			if under(r, dir) && !slices.ContainsFunc(commands, func(c string) bool { return under(r, c) }) {
				return r
			}
			continue
		}
		if r == a {
			return a
		}
	}
	return ""
}

// commands are the trees of main packages (and the command line they
// share, cmd/nextup/cli), where adapters are wired together.
var commands = []string{"cmd", "aws/cmd"}

// mayImport reports whether the package at path may import adapter a:
// commands may, and so may a package of the adapter's own tree (a test
// helper such as pay/stripepay/stripetest).
func mayImport(path, a string) bool {
	return under(path, a) || slices.ContainsFunc(commands, func(c string) bool { return under(path, c) })
}

// TestAdaptersMeetOnlyInCmd fails when a package outside cmd/ imports an
// adapter package.
func TestAdaptersMeetOnlyInCmd(t *testing.T) {
	t.Parallel()
	for _, p := range goList(t, "./...", "./aws/...") {
		path := rel(p.ImportPath)
		for _, imp := range p.Imports {
			if a := adapterOf(imp); a != "" && !mayImport(path, a) {
				t.Errorf("%s imports the adapter %s: adapters meet only in cmd/ (STYLE.md rule 2); take an interface or a root type instead",
					p.ImportPath, imp)
			}
		}
	}
}

// TestDomainImportsOnlyStandardLibrary fails when the root package or the
// engine imports anything but the standard library and the root package
// (STYLE.md rule 1: the domain imports no database, HTTP or SDK code, and
// the engine is pure).
func TestDomainImportsOnlyStandardLibrary(t *testing.T) {
	t.Parallel()
	std := map[string]bool{}
	for _, p := range goList(t, "std") {
		std[p.ImportPath] = true
	}
	pkgs := goList(t, ".", "./engine")
	if got := len(pkgs); got != 2 {
		t.Fatalf("listed %d packages, want the root and engine", got)
	}
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if !std[imp] && imp != module {
				t.Errorf("%s imports %s: the root package and engine import only the standard library and %s", p.ImportPath, imp, module)
			}
		}
	}
}

// TestAdapterListIsUpToDate keeps the list above honest: each entry names
// a package that exists.
func TestAdapterListIsUpToDate(t *testing.T) {
	t.Parallel()
	var paths []string
	for _, p := range goList(t, "./...", "./aws/...") {
		paths = append(paths, rel(p.ImportPath))
	}
	for _, a := range adapters {
		dir, tree := strings.CutSuffix(a, "/...")
		if !slices.ContainsFunc(paths, func(p string) bool { return p == dir || (tree && under(p, dir)) }) {
			t.Errorf("adapter %s is in the list but no such package exists", a)
		}
	}
}

// TestNoProviderSDKs fails when a provider's SDK reaches a package that
// must not carry it: the use cases, the web layer and the simulation
// (with its tests) carry none — they see interfaces, and cmd/ wires the
// adapters in — and the default binary carries no AWS SDK (that is the
// AWS module's, STYLE.md rule 4).
func TestNoProviderSDKs(t *testing.T) {
	t.Parallel()
	sdks := []string{"google.golang.org/api/", "cloud.google.com/", "github.com/aws/", "github.com/stripe/",
		"github.com/anthropics/", "github.com/twilio/"}
	for _, tc := range []struct {
		args []string
		sdks []string
	}{
		{[]string{"-deps", "./waitlist", "./web"}, sdks},
		{[]string{"-deps", "-test", "./sim"}, sdks},
		{[]string{"-deps", "./cmd/nextup"}, []string{"github.com/aws/"}},
	} {
		for _, p := range goList(t, tc.args...) {
			for _, sdk := range tc.sdks {
				if strings.HasPrefix(p.ImportPath+"/", sdk) {
					t.Errorf("go list %s: %s is a dependency", strings.Join(tc.args, " "), p.ImportPath)
					break
				}
			}
		}
	}
}
