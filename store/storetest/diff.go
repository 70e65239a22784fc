package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// checkEqual fails the test with one line per differing field when got is
// not want. Times compare with Equal (a backend may hand them back in
// another location), nil and empty slices and maps are the same, and maps
// of any compare as JSON (what a backend stores them as).
func checkEqual(t *testing.T, what string, want, got any) bool {
	t.Helper()
	d := diff(want, got)
	if len(d) == 0 {
		return true
	}
	t.Errorf("%s differs (-want +got):\n\t%s", what, strings.Join(d, "\n\t"))
	return false
}

func diff(want, got any) []string {
	var out []string
	diffValue("", reflect.ValueOf(want), reflect.ValueOf(got), &out)
	return out
}

var timeType = reflect.TypeFor[time.Time]()

func diffValue(path string, w, g reflect.Value, out *[]string) {
	name := path
	if name == "" {
		name = "value"
	}
	if !w.IsValid() || !g.IsValid() {
		if w.IsValid() != g.IsValid() {
			*out = append(*out, fmt.Sprintf("%s: -%s +%s", name, show(w), show(g)))
		}
		return
	}
	if w.Type() != g.Type() {
		*out = append(*out, fmt.Sprintf("%s: type -%s +%s", name, w.Type(), g.Type()))
		return
	}
	if w.Type() == timeType {
		wt, gt := w.Interface().(time.Time), g.Interface().(time.Time)
		if !wt.Equal(gt) {
			*out = append(*out, fmt.Sprintf("%s: -%s +%s", name, show(w), show(g)))
		}
		return
	}
	switch w.Kind() {
	case reflect.Pointer:
		if w.IsNil() || g.IsNil() {
			if w.IsNil() != g.IsNil() {
				*out = append(*out, fmt.Sprintf("%s: -%s +%s", name, show(w), show(g)))
			}
			return
		}
		diffValue(path, w.Elem(), g.Elem(), out)
	case reflect.Struct:
		for i := range w.NumField() {
			f := w.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			diffValue(p, w.Field(i), g.Field(i), out)
		}
	case reflect.Slice, reflect.Array:
		if w.Type().Elem().Kind() == reflect.Uint8 {
			if !bytes.Equal(w.Bytes(), g.Bytes()) {
				*out = append(*out, fmt.Sprintf("%s: -%q +%q", name, w.Bytes(), g.Bytes()))
			}
			return
		}
		if w.Len() != g.Len() {
			*out = append(*out, fmt.Sprintf("%s: length -%d +%d: -%s +%s", name, w.Len(), g.Len(), show(w), show(g)))
			return
		}
		for i := range w.Len() {
			diffValue(fmt.Sprintf("%s[%d]", path, i), w.Index(i), g.Index(i), out)
		}
	case reflect.Map:
		if w.Len() == 0 && g.Len() == 0 {
			return
		}
		if w.Type().Elem().Kind() == reflect.Interface {
			wj, _ := json.Marshal(w.Interface())
			gj, _ := json.Marshal(g.Interface())
			if !bytes.Equal(wj, gj) {
				*out = append(*out, fmt.Sprintf("%s: -%s +%s", name, wj, gj))
			}
			return
		}
		if !reflect.DeepEqual(w.Interface(), g.Interface()) {
			*out = append(*out, fmt.Sprintf("%s: -%s +%s", name, show(w), show(g)))
		}
	default:
		if !reflect.DeepEqual(w.Interface(), g.Interface()) {
			*out = append(*out, fmt.Sprintf("%s: -%s +%s", name, show(w), show(g)))
		}
	}
}

// show formats a value for a failure message.
func show(v reflect.Value) string {
	if !v.IsValid() {
		return "<nothing>"
	}
	if v.Type() == timeType {
		return v.Interface().(time.Time).Format(time.RFC3339Nano)
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "nil"
		}
		return "&" + show(v.Elem())
	}
	if v.Kind() == reflect.String {
		return fmt.Sprintf("%q", v.String())
	}
	return fmt.Sprintf("%+v", v.Interface())
}

// ids lists the ids of a slice of rows, for failure messages and order checks.
func ids[T any](rows []T, id func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func fmtTimePtr(p *time.Time) string {
	if p == nil {
		return "nil"
	}
	return p.Format(time.RFC3339Nano)
}
