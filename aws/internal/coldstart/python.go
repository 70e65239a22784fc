package coldstart

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// HandlerPy is the Python function of the comparison (handler.py).
//
//go:embed handler.py
var HandlerPy []byte

// PythonEnv names the interpreter to compare with, instead of the newest
// one found.
const PythonEnv = "NEXTUP_COLDSTART_PYTHON"

// Python is an interpreter found for the comparison.
type Python struct {
	Exe     string // the real executable, not a pyenv shim
	Version string // e.g. 3.13.0
	// Path is the PYTHONPATH that lets it import boto3 ("" when it does
	// on its own, or when Boto3 is ""), and Boto3 the version imported
	// ("" when none could be found).
	Path, Boto3 string
	// Boto3From says where boto3 came from when Path is set.
	Boto3From string
}

// pythonNames are the interpreters looked for, newest first: the seed's
// functions run on Lambda's python3.14 runtime.
var pythonNames = []string{"python3.14", "python3.13", "python3.12", "python3.11", "python3"}

// FindPython returns the interpreter named by NEXTUP_COLDSTART_PYTHON, or
// else the newest one that runs among python3.14 … python3 on PATH and
// pyenv's versions, resolved to its real executable (a pyenv shim is a
// shell script that would be timed too). boto3 is made importable from
// another local interpreter's site-packages when the chosen one lacks it
// (PyPI cannot be reached here to install it); linkDir is where the links
// to it go.
func FindPython(linkDir string) (Python, error) {
	var candidates []string
	if p := os.Getenv(PythonEnv); p != "" {
		candidates = []string{p}
	} else {
		candidates = append(candidates, pythonNames...)
		candidates = append(candidates, pyenvPythons()...)
	}
	var best Python
	for _, c := range candidates {
		exe, version, err := probe(c)
		if err != nil {
			continue
		}
		if best.Exe == "" || newer(version, best.Version) {
			best = Python{Exe: exe, Version: version}
		}
		if os.Getenv(PythonEnv) != "" {
			break
		}
	}
	if best.Exe == "" {
		return best, errors.New("no Python interpreter found (set " + PythonEnv + ")")
	}
	if v, err := boto3Version(best.Exe, ""); err == nil {
		best.Boto3 = v
		return best, nil
	}
	// boto3 from another interpreter's site-packages: pure Python, so
	// linking its packages (boto3's whole dependency closure) into a
	// directory on PYTHONPATH serves any Python 3.
	for _, c := range append(slices.Clone(pythonNames), pyenvPythons()...) {
		exe, _, err := probe(c)
		if err != nil || exe == best.Exe {
			continue
		}
		out, err := exec.Command(exe, "-c", "import boto3, os; print(os.path.dirname(os.path.dirname(boto3.__file__)))").Output()
		if err != nil {
			continue
		}
		site := strings.TrimSpace(string(out))
		if err := os.MkdirAll(linkDir, 0o755); err != nil {
			return best, err
		}
		for _, pkg := range []string{"boto3", "botocore", "jmespath", "dateutil", "s3transfer", "urllib3", "six.py"} {
			if _, err := os.Stat(filepath.Join(site, pkg)); err == nil {
				_ = os.Symlink(filepath.Join(site, pkg), filepath.Join(linkDir, pkg))
			}
		}
		if v, err := boto3Version(best.Exe, linkDir); err == nil {
			best.Path, best.Boto3, best.Boto3From = linkDir, v, site
			return best, nil
		}
	}
	return best, nil
}

// probe runs name and returns its real executable and version.
func probe(name string) (exe, version string, err error) {
	out, err := exec.Command(name, "-c", "import sys; print(sys.executable); print('%d.%d.%d' % sys.version_info[:3])").Output()
	if err != nil {
		return "", "", err
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 {
		return "", "", fmt.Errorf("%s: unexpected answer %q", name, out)
	}
	return lines[0], lines[1], nil
}

// pyenvPythons are pyenv's interpreters, if pyenv is there.
func pyenvPythons() []string {
	root := os.Getenv("PYENV_ROOT")
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".pyenv")
	}
	ps, _ := filepath.Glob(filepath.Join(root, "versions", "*", "bin", "python3"))
	return ps
}

// boto3Version is the boto3 exe imports with PYTHONPATH path.
func boto3Version(exe, path string) (string, error) {
	cmd := exec.Command(exe, "-c", "import boto3; print(boto3.__version__)")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+path)
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// newer reports whether version a (x.y.z) is later than b.
func newer(a, b string) bool {
	var x, y [3]int
	fmt.Sscanf(a, "%d.%d.%d", &x[0], &x[1], &x[2])
	fmt.Sscanf(b, "%d.%d.%d", &y[0], &y[1], &y[2])
	return slices.Compare(x[:], y[:]) > 0
}
