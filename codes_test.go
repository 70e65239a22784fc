package nextup_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/nextup-dev/nextup"

// notAPICodes are the packages whose error codes never reach a client:
// the senders' and the relay's codes are delivery failures recorded on a
// message (the simulation's fake providers' too), and the payment
// adapter's are wrapped by the waitlist package into
// payment_provider_unavailable before they could.
var notAPICodes = []string{"notify", "outbox", "pay", "sim"}

// declaredCode is one constant of codes.go.
type declaredCode struct {
	name, value string
	status      int    // the HTTP status its doc comment starts with
	doc         string // the doc comment
}

// declaredCodes reads codes.go: every constant with its value and the
// status its doc comment names ("CodeX is 409: ...").
func declaredCodes(t *testing.T) []declaredCode {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	statusRe := regexp.MustCompile(`^Code\w+ is (\d{3})\b`)
	var out []declaredCode
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("codes.go: %s is not a string literal", name.Name)
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				c := declaredCode{name: name.Name, value: v, doc: vs.Doc.Text()}
				if m := statusRe.FindStringSubmatch(vs.Doc.Text()); m != nil {
					c.status, _ = strconv.Atoi(m[1])
				} else {
					t.Errorf("codes.go: the doc comment of %s does not start %q", name.Name, name.Name+" is <HTTP status>:")
				}
				out = append(out, c)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("codes.go declares no codes")
	}
	return out
}

// TestErrorCodesAreDeclared fails when a code that could reach a client
// is written as a string literal, or names a constant whose value is not
// declared in codes.go: the code argument of nextup.Errorf, the Code of a
// nextup.Error literal or of any composite literal, an assignment to a
// .Code field, the codes ErrorCode returns, and comparisons with
// ErrorCode's result.
func TestErrorCodesAreDeclared(t *testing.T) {
	t.Parallel()
	declared := map[string]string{} // value → constant name
	for _, c := range declaredCodes(t) {
		if prev, dup := declared[c.value]; dup {
			t.Errorf("codes.go: %s and %s are both %q", prev, c.name, c.value)
		}
		declared[c.value] = c.name
	}

	// Every package's files, and its package-level string constants, so
	// that a reference like waitlist.X or a local X can be resolved.
	type pkg struct {
		files  map[string]*ast.File
		consts map[string]string
	}
	pkgs := map[string]*pkg{} // import path → package
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir // another module (aws/)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ip := modulePath
		if dir := filepath.ToSlash(filepath.Dir(path)); dir != "." {
			ip += "/" + dir
		}
		p := pkgs[ip]
		if p == nil {
			p = &pkg{files: map[string]*ast.File{}, consts: map[string]string{}}
			pkgs[ip] = p
		}
		p.files[path] = f
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								p.consts[name.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	checked := 0
	for ip, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(ip, modulePath), "/")
		if slices.ContainsFunc(notAPICodes, func(skip string) bool { return rel == skip || strings.HasPrefix(rel, skip+"/") }) {
			continue
		}
		for _, f := range p.files {
			imports := map[string]string{} // local name → import path
			for _, im := range f.Imports {
				v, _ := strconv.Unquote(im.Path.Value)
				name := v[strings.LastIndex(v, "/")+1:]
				if im.Name != nil {
					name = im.Name.Name
				}
				imports[name] = v
			}
			// check reports a code expression that is not a declared constant.
			check := func(e ast.Expr, what string) {
				checked++
				pos := fset.Position(e.Pos())
				var value string
				var found bool
				switch x := e.(type) {
				case *ast.BasicLit:
					t.Errorf("%s: %s is the literal %s: declare it in codes.go and use the constant", pos, what, x.Value)
					return
				case *ast.Ident:
					value, found = p.consts[x.Name]
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && pkgs[imports[id.Name]] != nil {
						value, found = pkgs[imports[id.Name]].consts[x.Sel.Name]
					}
				default:
					t.Errorf("%s: %s is not a constant", pos, what)
					return
				}
				switch {
				case !found:
					t.Errorf("%s: %s does not name a string constant of this module", pos, what)
				case declared[value] == "":
					t.Errorf("%s: %s is %q, which codes.go does not declare", pos, what, value)
				}
			}
			isErrorCodeCall := func(e ast.Expr) bool {
				call, ok := e.(*ast.CallExpr)
				if !ok {
					return false
				}
				switch fn := call.Fun.(type) {
				case *ast.SelectorExpr:
					id, ok := fn.X.(*ast.Ident)
					return ok && imports[id.Name] == modulePath && fn.Sel.Name == "ErrorCode"
				case *ast.Ident:
					return ip == modulePath && fn.Name == "ErrorCode"
				}
				return false
			}
			isRoot := func(e ast.Expr, name string) bool {
				switch x := e.(type) {
				case *ast.SelectorExpr:
					id, ok := x.X.(*ast.Ident)
					return ok && imports[id.Name] == modulePath && x.Sel.Name == name
				case *ast.Ident:
					return ip == modulePath && x.Name == name
				}
				return false
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CallExpr:
					if isRoot(x.Fun, "Errorf") && len(x.Args) >= 2 {
						check(x.Args[1], "the code of Errorf")
					}
				case *ast.KeyValueExpr:
					if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Code" {
						if lit, isLit := x.Value.(*ast.BasicLit); isLit && lit.Kind == token.STRING {
							check(x.Value, "a Code field")
						}
					}
				case *ast.CompositeLit:
					if isRoot(x.Type, "Error") {
						for _, el := range x.Elts {
							if kv, ok := el.(*ast.KeyValueExpr); ok {
								if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Code" {
									if _, isLit := kv.Value.(*ast.BasicLit); !isLit {
										check(kv.Value, "the Code of an Error")
									}
								}
							}
						}
					}
				case *ast.AssignStmt:
					for i, lhs := range x.Lhs {
						if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "Code" && len(x.Rhs) == len(x.Lhs) {
							if _, isLit := x.Rhs[i].(*ast.BasicLit); isLit {
								check(x.Rhs[i], "an assignment to .Code")
							}
						}
					}
				case *ast.BinaryExpr:
					if x.Op == token.EQL || x.Op == token.NEQ {
						if isErrorCodeCall(x.X) {
							check(x.Y, "a comparison with ErrorCode")
						} else if isErrorCodeCall(x.Y) {
							check(x.X, "a comparison with ErrorCode")
						}
					}
				case *ast.SwitchStmt:
					if x.Tag != nil && isErrorCodeCall(x.Tag) {
						for _, st := range x.Body.List {
							for _, e := range st.(*ast.CaseClause).List {
								check(e, "a case of a switch on ErrorCode")
							}
						}
					}
				case *ast.FuncDecl:
					if ip == modulePath && x.Name.Name == "Errorf" && x.Recv == nil {
						return false // it passes its parameter on; its callers are checked
					}
					if ip == modulePath && x.Name.Name == "ErrorCode" && x.Recv == nil {
						ast.Inspect(x.Body, func(n ast.Node) bool {
							if ret, ok := n.(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
								if lit, ok := ret.Results[0].(*ast.BasicLit); !ok || lit.Value != `""` {
									if _, isSel := ret.Results[0].(*ast.SelectorExpr); !isSel {
										check(ret.Results[0], "a code ErrorCode returns")
									}
								}
							}
							return true
						})
					}
				}
				return true
			})
		}
	}
	if checked < 50 {
		t.Errorf("only %d code expressions checked: is the scan still finding the sources?", checked)
	}
}

// TestErrorCodesAreDocumented fails when a declared code is missing from
// the OpenAPI document's ErrorCode enum or from the error-code table of
// docs/api.md (with the status its doc comment names), or when either
// lists a code that is not declared.
func TestErrorCodesAreDocumented(t *testing.T) {
	t.Parallel()
	codes := declaredCodes(t)
	declared := map[string]int{}
	for _, c := range codes {
		declared[c.value] = c.status
	}

	raw, err := os.ReadFile("web/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct {
			Description string `json:"description"`
		} `json:"info"`
		Components struct {
			Schemas struct {
				ErrorCode struct {
					Enum []string `json:"enum"`
				} `json:"ErrorCode"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	inDoc := map[string]bool{}
	for _, v := range doc.Components.Schemas.ErrorCode.Enum {
		inDoc[v] = true
		if _, ok := declared[v]; !ok {
			t.Errorf("openapi.json: ErrorCode lists %q, which codes.go does not declare", v)
		}
	}
	// Every code an operation says it answers is a declared one too; and
	// every declared code is answered by some operation, or by any path
	// (said once, in info), or its comment says it is not the JSON API's.
	answered := map[string]bool{}
	for _, m := range regexp.MustCompile(`"code":\s*\{\s*"enum":\s*\[([^\]]*)\]`).FindAllSubmatch(raw, -1) {
		for _, q := range regexp.MustCompile(`"([a-z_]+)"`).FindAllSubmatch(m[1], -1) {
			if _, ok := declared[string(q[1])]; !ok {
				t.Errorf("openapi.json: an operation answers %q, which codes.go does not declare", q[1])
			}
			answered[string(q[1])] = true
		}
	}

	md, err := os.ReadFile("docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(md)
	start := strings.Index(section, "\n## Error codes\n")
	if start < 0 {
		t.Fatal(`docs/api.md has no "## Error codes" section`)
	}
	section = section[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	inTable := map[string]int{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (\\d{3}) \\| .+ \\|$").FindAllStringSubmatch(section, -1) {
		st, _ := strconv.Atoi(m[2])
		inTable[m[1]] = st
		if want, ok := declared[m[1]]; !ok {
			t.Errorf("docs/api.md: the error-code table lists %q, which codes.go does not declare", m[1])
		} else if st != want {
			t.Errorf("docs/api.md: %s is %d in the table, %d in codes.go", m[1], st, want)
		}
	}

	for _, c := range codes {
		if !answered[c.value] && !strings.Contains(doc.Info.Description, "`"+c.value+"`") && !strings.Contains(strings.Join(strings.Fields(c.doc), " "), "not the JSON API") {
			t.Errorf("%s (%q): no operation of openapi.json answers it, nor does its info, and its comment does not say it is not the JSON API's", c.name, c.value)
		}
		if !inDoc[c.value] {
			t.Errorf("%s (%q) is not in openapi.json's ErrorCode enum", c.name, c.value)
		}
		if _, ok := inTable[c.value]; !ok {
			t.Errorf("%s (%q) is not in the error-code table of docs/api.md", c.name, c.value)
		}
	}
}
