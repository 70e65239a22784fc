package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// templatePath is the template, from this package's directory (go test
// runs a package's tests in its own directory).
var templatePath = filepath.Join("..", "..", "deploy", "aws", "template.yaml")

// tmpl is a parsed template: maps, lists and scalars, with every
// intrinsic function in its long form ({"Ref": X}, {"Fn::Sub": ...}).
type tmpl struct {
	root map[string]any
}

// load parses the template; it fails t on anything CloudFormation would
// not read the same way.
func load(t testing.TB) *tmpl {
	t.Helper()
	b, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := parse(b)
	if err != nil {
		t.Fatalf("%s: %v", templatePath, err)
	}
	return tp
}

func parse(b []byte) (*tmpl, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("not one YAML document")
	}
	v, err := convert(doc.Content[0])
	if err != nil {
		return nil, err
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document is not a mapping")
	}
	return &tmpl{root: root}, nil
}

// convert turns a node into plain values. CloudFormation's short tags
// become the long forms (!GetAtt A.B becomes {"Fn::GetAtt": [A, B]}), so
// the checks see one shape whichever form the template uses.
func convert(n *yaml.Node) (any, error) {
	var v any
	switch n.Kind {
	case yaml.ScalarNode:
		v = scalar(n)
	case yaml.SequenceNode:
		l := []any{}
		for _, c := range n.Content {
			cv, err := convert(c)
			if err != nil {
				return nil, err
			}
			l = append(l, cv)
		}
		v = l
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if _, dup := m[k]; dup {
				// YAML parsers disagree on which one wins; CloudFormation refuses it.
				return nil, fmt.Errorf("line %d: key %q twice", n.Content[i].Line, k)
			}
			cv, err := convert(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k] = cv
		}
		v = m
	case yaml.AliasNode:
		return nil, fmt.Errorf("line %d: a YAML alias (*%s): CloudFormation's own parser does not promise them", n.Line, n.Value)
	default:
		return nil, fmt.Errorf("line %d: unexpected YAML node kind %v", n.Line, n.Kind)
	}
	if !strings.HasPrefix(n.Tag, "!") || strings.HasPrefix(n.Tag, "!!") {
		return v, nil
	}
	name := strings.TrimPrefix(n.Tag, "!")
	switch name {
	case "Ref", "Condition":
		return map[string]any{name: v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok {
			res, attr, found := strings.Cut(s, ".")
			if !found {
				return nil, fmt.Errorf("line %d: !GetAtt %q is not RESOURCE.ATTRIBUTE", n.Line, s)
			}
			v = []any{res, attr}
		}
		return map[string]any{"Fn::GetAtt": v}, nil
	case "Sub", "Join", "Select", "Split", "If", "Equals", "Not", "And", "Or", "FindInMap",
		"Base64", "Cidr", "GetAZs", "ImportValue", "Length", "ToJsonString":
		return map[string]any{"Fn::" + name: v}, nil
	}
	return nil, fmt.Errorf("line %d: unknown tag %s", n.Line, n.Tag)
}

func scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return int(i)
		}
	case "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return f
		}
	case "!!bool":
		if b, err := strconv.ParseBool(n.Value); err == nil {
			return b
		}
	case "!!null":
		return nil
	}
	return n.Value
}

// clone is a deep copy, for a test that breaks the template on purpose.
func (tp *tmpl) clone() *tmpl {
	return &tmpl{root: deepCopy(tp.root).(map[string]any)}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

// at follows a dotted path of keys and list indexes ("Resources.Table.
// Properties.KeySchema.0"); nil when it leads nowhere.
func at(v any, path string) any {
	if path == "" {
		return v
	}
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// set puts v at path (the parent must exist); v == nil deletes a map key
// or a list element.
func set(root any, path string, v any) {
	i := strings.LastIndex(path, ".")
	parentPath, key := "", path
	if i >= 0 {
		parentPath, key = path[:i], path[i+1:]
	}
	switch p := at(root, parentPath).(type) {
	case map[string]any:
		if v == nil {
			delete(p, key)
		} else {
			p[key] = v
		}
	case []any:
		n, err := strconv.Atoi(key)
		if err != nil || n < 0 || n >= len(p) {
			panic("set: no element " + path)
		}
		if v == nil {
			set(root, parentPath, slices.Delete(slices.Clone(p), n, n+1))
		} else {
			p[n] = v
		}
	default:
		panic("set: no parent of " + path)
	}
}

// resources returns the template's resources.
func (tp *tmpl) resources() map[string]any {
	r, _ := tp.root["Resources"].(map[string]any)
	return r
}

// resource returns a resource's Type and Properties.
func (tp *tmpl) resource(id string) (typ string, props map[string]any) {
	r, _ := tp.resources()[id].(map[string]any)
	typ, _ = r["Type"].(string)
	props, _ = r["Properties"].(map[string]any)
	return typ, props
}

// ofType lists the logical ids of the resources of one type, sorted.
func (tp *tmpl) ofType(typ string) []string {
	var ids []string
	for id := range tp.resources() {
		if t, _ := tp.resource(id); t == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// list reads a value CloudFormation takes as one item or a list of them.
func list(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	}
	return []any{v}
}

// render writes a value as one string, intrinsics included: {"Ref": X}
// is "${X}", !GetAtt A.B is "${A.B}", !Sub's template is itself with its
// own variables put in, !Join joins; any other function is
// "${Fn::Name(args)}". Two values that render the same are the same
// expression.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		if len(x) != 1 {
			break
		}
		for k, a := range x {
			switch k {
			case "Ref":
				return "${" + render(a) + "}"
			case "Fn::GetAtt":
				parts := []string{}
				for _, p := range list(a) {
					parts = append(parts, render(p))
				}
				return "${" + strings.Join(parts, ".") + "}"
			case "Fn::Sub":
				l, ok := a.([]any)
				if !ok {
					return render(a)
				}
				s := render(at(l, "0"))
				vars, _ := at(l, "1").(map[string]any)
				for name, val := range vars {
					s = strings.ReplaceAll(s, "${"+name+"}", render(val))
				}
				return s
			case "Fn::Join":
				sep := render(at(a, "0"))
				parts := []string{}
				for _, p := range list(at(a, "1")) {
					parts = append(parts, render(p))
				}
				return strings.Join(parts, sep)
			}
			if strings.HasPrefix(k, "Fn::") {
				parts := []string{}
				for _, p := range list(a) {
					parts = append(parts, render(p))
				}
				return "${" + k + "(" + strings.Join(parts, ",") + ")}"
			}
		}
	}
	return fmt.Sprint(v)
}

// num reads a number the template may write as a number or a string.
func num(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// refs lists the names an expression refers to: Ref targets, GetAtt
// resources and the ${NAME} and ${NAME.ATTR} of Sub templates (not
// ${!literal} nor the Sub's own variables).
func refs(v any) []string {
	var out []string
	var walk func(v any)
	subVar := regexp.MustCompile(`\$\{([^!}][^}]*)\}`)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if len(x) == 1 {
				if r, ok := x["Ref"].(string); ok {
					out = append(out, r)
					return
				}
				if a, ok := x["Fn::GetAtt"]; ok {
					out = append(out, render(at(a, "0")))
					return
				}
				if a, ok := x["Fn::Sub"]; ok {
					s, vars := a, map[string]any(nil)
					if l, isList := a.([]any); isList {
						s = at(l, "0")
						vars, _ = at(l, "1").(map[string]any)
					}
					mine := map[string]bool{}
					for name, val := range vars {
						mine[name] = true
						walk(val)
					}
					if str, ok := s.(string); ok {
						for _, m := range subVar.FindAllStringSubmatch(str, -1) {
							name, _, _ := strings.Cut(m[1], ".")
							if !mine[name] {
								out = append(out, name)
							}
						}
					}
					return
				}
			}
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

func TestParseShortTags(t *testing.T) {
	t.Parallel()
	tp, err := parse([]byte(`
A: !Ref X
B: !GetAtt R.Arn
C: !Sub "${R.Arn}/x"
D: !Sub ["a/${D}", {D: !Select [1, !Split ["@", !Ref M]]}]
E: !Join [":", [a, !Ref Y]]
F: 7
`))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"A": "${X}", "B": "${R.Arn}", "C": "${R.Arn}/x",
		"D": "a/${Fn::Select(1,${Fn::Split(@,${M})})}", "E": "a:${Y}", "F": "7",
	} {
		if got := render(at(tp.root, path)); got != want {
			t.Errorf("%s renders %q, want %q", path, got, want)
		}
	}
	if _, err := parse([]byte("A: 1\nA: 2\n")); err == nil {
		t.Error("a key twice is taken")
	}
	if _, err := parse([]byte("A: &x 1\nB: *x\n")); err == nil {
		t.Error("an alias is taken")
	}
	if _, err := parse([]byte("A: !Nope x\n")); err == nil {
		t.Error("an unknown tag is taken")
	}
}
