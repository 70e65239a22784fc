package chart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// node is one element of a parsed chart, in document order.
type node struct {
	name  string
	attr  map[string]string
	text  string // character data directly inside the element
	depth int
}

// parse checks that out is one well-formed <svg> element and returns its
// elements in document order.
func parse(t testing.TB, out template.HTML) []*node {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(string(out)))
	dec.Strict = true
	var all, stack []*node
	roots := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, out)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attr: map[string]string{}, depth: len(stack)}
			for _, a := range tok.Attr {
				n.attr[a.Name.Local] = a.Value
			}
			if len(stack) == 0 {
				roots++
			}
			all = append(all, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				t.Fatalf("text outside the svg element: %q", tok)
			}
			stack[len(stack)-1].text += string(tok)
		default:
			t.Fatalf("unexpected token %T in %s", tok, out)
		}
	}
	if roots != 1 || all[0].name != "svg" {
		t.Fatalf("want exactly one svg root element:\n%s", out)
	}
	root := all[0]
	for _, k := range []string{"role", "aria-label", "viewBox", "width"} {
		if root.attr[k] == "" {
			t.Fatalf("svg lacks %s: %s", k, out)
		}
	}
	if root.attr["role"] != "img" || root.attr["width"] != "100%" {
		t.Fatalf("svg role=%q width=%q", root.attr["role"], root.attr["width"])
	}
	if len(all) < 2 || all[1].name != "title" || all[1].depth != 1 {
		t.Fatalf("the first child is not a <title>: %s", out)
	}
	if strings.Contains(string(out), "style=") {
		t.Fatalf("style attribute in %s", out)
	}
	// Every coordinate is a finite, non-negative number, and every shape
	// lies inside the viewBox.
	var vbW, vbH float64
	if _, err := fmt.Sscanf(root.attr["viewBox"], "0 0 %g %g", &vbW, &vbH); err != nil {
		t.Fatalf("viewBox %q: %v", root.attr["viewBox"], err)
	}
	for _, n := range all[1:] {
		c := map[string]float64{}
		for _, k := range []string{"x", "y", "width", "height", "x1", "y1", "x2", "y2", "font-size", "stroke-width"} {
			v, ok := n.attr[k]
			if !ok {
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || math.IsInf(f, 0) {
				t.Fatalf("<%s %s=%q> in %s", n.name, k, v, out)
			}
			c[k] = f
		}
		if c["x"]+c["width"] > vbW+0.011 || c["x1"] > vbW+0.011 || c["x2"] > vbW+0.011 ||
			c["y"]+c["height"] > vbH+0.011 || c["y1"] > vbH+0.011 || c["y2"] > vbH+0.011 {
			t.Fatalf("<%s %v> outside the viewBox %vx%v in %s", n.name, n.attr, vbW, vbH, out)
		}
	}
	return all
}

// find returns the elements named name whose class list holds class.
func find(nodes []*node, name, class string) []*node {
	var out []*node
	for _, n := range nodes {
		if n.name != name {
			continue
		}
		for _, c := range strings.Fields(n.attr["class"]) {
			if c == class {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

func one(t *testing.T, nodes []*node, name, class string) *node {
	t.Helper()
	got := find(nodes, name, class)
	if len(got) != 1 {
		t.Fatalf("want one <%s class=%s>, got %d", name, class, len(got))
	}
	return got[0]
}

func f(t *testing.T, n *node, attr string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(n.attr[attr], 64)
	if err != nil {
		t.Fatalf("<%s> %s=%q: %v", n.name, attr, n.attr[attr], err)
	}
	return v
}

// near says whether a and b agree to the two decimals the charts write.
func near(a, b float64) bool { return math.Abs(a-b) < 0.011 }

func texts(nodes []*node, class string) []string {
	var out []string
	for _, n := range find(nodes, "text", class) {
		out = append(out, n.text)
	}
	return out
}

func TestCapacityProportional(t *testing.T) {
	t.Parallel()
	nodes := parse(t, Capacity("Jazz night", 100, []Segment{
		{"Confirmed", 30, "confirmed"}, {"Held", 5, "held"}, {"Waitlisted", 0, "waitlisted"},
	}))
	track := one(t, nodes, "rect", "track")
	tw := f(t, track, "width")
	conf := find(nodes, "rect", "seg-confirmed")[0] // the bar's, before the legend's swatch
	if got := f(t, conf, "width"); !near(got, 0.30*tw) {
		t.Errorf("confirmed is %v wide on a %v track, want 30%%", got, tw)
	}
	held := find(nodes, "rect", "seg-held")[0]
	if !near(f(t, held, "width"), 0.05*tw) || !near(f(t, held, "x"), f(t, conf, "x")+f(t, conf, "width")) {
		t.Errorf("held x=%s width=%s, want right after confirmed and 5%% wide", held.attr["x"], held.attr["width"])
	}
	// A zero segment is in the legend but draws no bar.
	if n := len(find(nodes, "rect", "seg-waitlisted")); n != 1 {
		t.Errorf("waitlisted 0: %d rects, want only the legend swatch", n)
	}
	if len(find(nodes, "line", "cap-marker")) != 0 {
		t.Error("a capacity marker although the segments fit")
	}
	if got := one(t, nodes, "text", "chart-figure").text; got != "35 of 100" {
		t.Errorf("figure %q", got)
	}
	if got, want := strings.Join(texts(nodes, "legend"), "|"), "Confirmed 30|Held 5|Waitlisted 0"; got != want {
		t.Errorf("legend %q, want %q", got, want)
	}
	label := nodes[0].attr["aria-label"]
	for _, want := range []string{"Jazz night", "Confirmed 30", "Held 5", "Waitlisted 0", "capacity 100"} {
		if !strings.Contains(label, want) {
			t.Errorf("aria-label %q lacks %q", label, want)
		}
	}
}

func TestCapacityOver(t *testing.T) {
	t.Parallel()
	nodes := parse(t, Capacity("Sold out", 40, []Segment{
		{"Confirmed", 30, "confirmed"}, {"Held", 10, "held"}, {"Waitlisted", 40, "waitlisted"},
	}))
	tw := f(t, one(t, nodes, "rect", "track"), "width")
	marker := one(t, nodes, "line", "cap-marker")
	// 80 in all on the track, so capacity ends half way.
	if !near(f(t, marker, "x1"), tw/2) || marker.attr["x1"] != marker.attr["x2"] {
		t.Errorf("marker at x1=%s x2=%s, want %v", marker.attr["x1"], marker.attr["x2"], tw/2)
	}
	wl := find(nodes, "rect", "seg-waitlisted")[0]
	if !near(f(t, wl, "x"), tw/2) || !near(f(t, wl, "x")+f(t, wl, "width"), tw) {
		t.Errorf("waitlisted x=%s width=%s, want from the marker to the end", wl.attr["x"], wl.attr["width"])
	}
	if got := one(t, nodes, "text", "cap-label").text; got != "capacity 40" {
		t.Errorf("marker label %q", got)
	}
	if label := nodes[0].attr["aria-label"]; !strings.Contains(label, "capacity 40, 40 over capacity") {
		t.Errorf("aria-label %q", label)
	}
}

func TestCapacityManySegments(t *testing.T) {
	t.Parallel()
	segs := make([]Segment, 30)
	for i := range segs {
		segs[i] = Segment{Label: "s" + strconv.Itoa(i), Value: 1, Class: "held"}
	}
	nodes := parse(t, Capacity("", 30, segs))
	legend := texts(nodes, "legend")
	if len(legend) != MaxSegments+1 || legend[MaxSegments] != "Other 22" {
		t.Errorf("legend %q, want %d entries ending in Other 22", legend, MaxSegments+1)
	}
	bars := find(nodes, "rect", "seg")
	var w float64
	for _, b := range bars[:MaxSegments+1] {
		w += f(t, b, "width")
	}
	// Each width is written to the hundredth: their sum may be off by
	// half a hundredth each.
	if math.Abs(w-Width) > 0.005*float64(MaxSegments+1) {
		t.Errorf("30 of 30 segments fill %v of %v", w, Width)
	}
}

func TestRatesProportional(t *testing.T) {
	t.Parallel()
	nodes := parse(t, Rates("Acceptance by position", []Bar{
		{"1", 8, 12}, {"2", 3, 6}, {"3", 0, 0}, {"4", 0, 5}, {"5", 7, 5},
	}))
	tracks := find(nodes, "rect", "track")
	if len(tracks) != 5 {
		t.Fatalf("%d tracks, want 5", len(tracks))
	}
	th := f(t, tracks[0], "height")
	bars := find(nodes, "rect", "bar")
	if len(bars) != 4 { // position 3 has no data
		t.Fatalf("%d bars, want 4", len(bars))
	}
	for i, want := range []float64{8.0 / 12, 0.5, 0, 1} {
		if got := f(t, bars[i], "height"); !near(got, want*th) {
			t.Errorf("bar %d height %v, want %v", i, got, want*th)
		}
		// Bars stand on the track's foot.
		if !near(f(t, bars[i], "y")+f(t, bars[i], "height"), f(t, tracks[0], "y")+th) {
			t.Errorf("bar %d does not stand on the base line", i)
		}
	}
	if got, want := strings.Join(texts(nodes, "pct"), "|"), "67%|50%|–|0%|>100%"; got != want {
		t.Errorf("percentages %q, want %q", got, want)
	}
	if got, want := strings.Join(texts(nodes, "bar-count"), "|"), "8 of 12|3 of 6|0 of 0|0 of 5|7 of 5"; got != want {
		t.Errorf("counts %q, want %q", got, want)
	}
	label := nodes[0].attr["aria-label"]
	for _, want := range []string{"Acceptance by position: ", "1 67% (8 of 12)", "2 50% (3 of 6)", "3 no data", "4 0% (0 of 5)"} {
		if !strings.Contains(label, want) {
			t.Errorf("aria-label %q lacks %q", label, want)
		}
	}
}

func TestRatesManyBars(t *testing.T) {
	t.Parallel()
	bars := make([]Bar, 1000)
	for i := range bars {
		bars[i] = Bar{Label: strconv.Itoa(i + 1), Value: i, Of: 1000}
	}
	out := Rates("Acceptance", bars)
	nodes := parse(t, out)
	if n := len(find(nodes, "rect", "track")); n != MaxBars {
		t.Errorf("%d bars drawn, want %d", n, MaxBars)
	}
	if got := one(t, nodes, "text", "more").text; got != "988 more not shown" {
		t.Errorf("note %q", got)
	}
	if label := nodes[0].attr["aria-label"]; !strings.HasSuffix(label, "; 988 more not shown.") {
		t.Errorf("aria-label %q", label)
	}
	if len(out) > 20000 {
		t.Errorf("1000 bars made %d bytes", len(out))
	}
}

func TestRatio(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value, of int
		text      string
		share     float64 // of the track, -1 for no bar
		aria      string
	}{
		{12, 5, "2.4×", 2.4 / 5, "Waitlist: 2.4× (12 to 5)."},
		{3, 4, "0.8×", 0.75 / 2, "Waitlist: 0.8× (3 to 4)."},
		{0, 4, "0.0×", 0, "Waitlist: 0.0× (0 to 4)."},
		{70, 5, "14.0×", 14.0 / 20, "Waitlist: 14.0× (70 to 5)."},
		{7, 0, "–", -1, "Waitlist: no data (7 to 0)."},
		{-3, -1, "–", -1, "Waitlist: no data (0 to 0)."},
	} {
		nodes := parse(t, Ratio("Waitlist", tc.value, tc.of))
		if got := one(t, nodes, "text", "ratio").text; got != tc.text {
			t.Errorf("%d/%d: text %q, want %q", tc.value, tc.of, got, tc.text)
		}
		if got := nodes[0].attr["aria-label"]; got != tc.aria {
			t.Errorf("%d/%d: aria-label %q, want %q", tc.value, tc.of, got, tc.aria)
		}
		bars := find(nodes, "rect", "bar")
		if tc.share < 0 {
			if len(bars) != 0 {
				t.Errorf("%d/%d: a bar without data", tc.value, tc.of)
			}
			continue
		}
		tw := f(t, one(t, nodes, "rect", "track"), "width")
		if len(bars) != 1 || !near(f(t, bars[0], "width"), tc.share*tw) {
			t.Errorf("%d/%d: bar %v, want %v of %v", tc.value, tc.of, bars, tc.share, tw)
		}
	}
}

// hostile is a title or label a user might type; it has to come out as text.
const hostile = `<script>alert("x")</script> & 'quotes' </svg><img src=x onerror=alert(1)>`

func TestEscaped(t *testing.T) {
	t.Parallel()
	outs := []template.HTML{
		Capacity(hostile, 3, []Segment{{hostile, 1, `x" onload="alert(1)`}}),
		Rates(hostile, []Bar{{hostile, 1, 2}}),
		Ratio(hostile, 1, 2),
	}
	for _, out := range outs {
		for _, bad := range []string{"<script", "<img", "</svg><", `" onload`} {
			if strings.Contains(string(out), bad) {
				t.Errorf("%q unescaped in %s", bad, out)
			}
		}
		nodes := parse(t, out)
		if nodes[1].text != hostile {
			t.Errorf("title %q, want %q", nodes[1].text, hostile)
		}
		if !strings.HasPrefix(nodes[0].attr["aria-label"], hostile+": ") {
			t.Errorf("aria-label %q", nodes[0].attr["aria-label"])
		}
		for _, n := range nodes {
			if n.name == "script" || n.name == "img" || n.attr["onload"] != "" || n.attr["onerror"] != "" {
				t.Errorf("injected <%s %v>", n.name, n.attr)
			}
		}
		// As the page will use it: inside an html/template, read by an HTML5
		// parser, the chart is one svg with no script and no handlers.
		var buf bytes.Buffer
		page := template.Must(template.New("").Parse(`<!doctype html><main>{{.}}</main>`))
		if err := page.Execute(&buf, out); err != nil {
			t.Fatal(err)
		}
		doc, err := html.Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		svgs := 0
		for n := range doc.Descendants() {
			if n.Type != html.ElementNode {
				continue
			}
			if n.Data == "svg" {
				svgs++
			}
			if n.Data == "script" || n.Data == "img" {
				t.Errorf("HTML parser found <%s>", n.Data)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("HTML parser found %s=%q", a.Key, a.Val)
				}
				if a.Key == "aria-label" && !strings.HasPrefix(a.Val, hostile) {
					t.Errorf("HTML parser read aria-label %q", a.Val)
				}
			}
		}
		if svgs != 1 {
			t.Errorf("HTML parser found %d svg elements", svgs)
		}
	}
	// A class that is not a plain token is dropped rather than escaped.
	nodes := parse(t, outs[0])
	if got := find(nodes, "rect", "seg")[0].attr["class"]; got != "seg" {
		t.Errorf("class %q", got)
	}
}

func TestBadText(t *testing.T) {
	t.Parallel()
	// Control characters, invalid UTF-8 and non-characters are not XML.
	bad := "a\x00b\x01c\x1b[0m\xff\xfe\uFFFE\uFFFF\u0085d\te\nf"
	nodes := parse(t, Capacity(bad, 1, []Segment{{bad, 1, bad}}))
	if got := nodes[1].text; got != "a\uFFFDb\uFFFDc\uFFFD[0m\uFFFD\uFFFD\uFFFD\uFFFD\uFFFDd e f" {
		t.Errorf("title %q", got)
	}
	parse(t, Rates(bad, []Bar{{bad, 1, 1}}))
	parse(t, Ratio(bad, 1, 1))
	long := strings.Repeat("é", 500)
	nodes = parse(t, Rates(long, []Bar{{long, 1, 1}}))
	if got := one(t, nodes, "text", "chart-title").text; !strings.HasSuffix(got, "…") || len([]rune(got)) != 48 {
		t.Errorf("a 500-rune title is drawn as %d runes", len([]rune(got)))
	}
	if nodes[1].text != long {
		t.Error("the <title> is cut")
	}
}

func TestEdgeInputs(t *testing.T) {
	t.Parallel()
	big := math.MaxInt
	for name, out := range map[string]template.HTML{
		"capacity empty":        Capacity("", 0, nil),
		"capacity zero max":     Capacity("t", 0, []Segment{{"Waitlisted", 5, "waitlisted"}}),
		"capacity negatives":    Capacity("t", -10, []Segment{{"A", -5, "confirmed"}, {"B", -1, ""}}),
		"capacity huge":         Capacity("t", big, []Segment{{"A", big, "confirmed"}, {"B", big, "held"}}),
		"capacity huge max":     Capacity("t", big, []Segment{{"A", 1, "confirmed"}}),
		"capacity min int":      Capacity("t", math.MinInt, []Segment{{"A", math.MinInt, "confirmed"}}),
		"rates empty":           Rates("", nil),
		"rates zero":            Rates("t", []Bar{{"", 0, 0}}),
		"rates negative":        Rates("t", []Bar{{"a", -4, 10}, {"b", 4, -10}, {"c", math.MinInt, math.MinInt}}),
		"rates huge":            Rates("t", []Bar{{"a", big, big}, {"b", big, 1}, {"c", 1, big}}),
		"ratio zero":            Ratio("", 0, 0),
		"ratio huge":            Ratio("t", big, 1),
		"ratio huge of":         Ratio("t", 1, big),
		"ratio min int":         Ratio("t", math.MinInt, math.MinInt),
		"capacity empty labels": Capacity("", 3, []Segment{{}, {}}),
	} {
		t.Run(name, func(t *testing.T) {
			nodes := parse(t, out)
			for _, n := range nodes {
				for _, k := range []string{"width", "height"} {
					if n.name == "rect" && f(t, n, k) < 0 {
						t.Errorf("negative %s in %v", k, n.attr)
					}
				}
			}
		})
	}
	if got := parse(t, Capacity("t", big, []Segment{{"A", big, "confirmed"}, {"B", big, "held"}}))[0].attr["aria-label"]; !strings.Contains(got, "A 9223372036854775807") {
		t.Errorf("aria-label %q", got)
	}
	if got := parse(t, Capacity("t", 1, []Segment{{"A", big, ""}, {"B", big, ""}}))[0].attr["aria-label"]; !strings.HasSuffix(got, "capacity 1, 18446744073709551613 over capacity.") {
		t.Errorf("aria-label %q", got)
	}
	if got := parse(t, Ratio("t", big, 1))[0].attr["aria-label"]; got != "t: 9223372T× (9223372036854775807 to 1)." {
		t.Errorf("aria-label %q", got)
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	segs := []Segment{{"Confirmed", 30, "confirmed"}, {"Held", 7, "held"}, {"Waitlisted", 19, "waitlisted"}}
	bars := []Bar{{"1", 3, 7}, {"2", 0, 0}, {"3", 1, 3}}
	a := Capacity("x", 31, segs) + Rates("y", bars) + Ratio("z", 19, 31)
	for range 20 {
		if b := Capacity("x", 31, segs) + Rates("y", bars) + Ratio("z", 19, 31); a != b {
			t.Fatal("the same input gave different bytes")
		}
	}
}

func FuzzCharts(f *testing.F) {
	f.Add("Jazz night", "Confirmed", "confirmed", 30, 5, 40, uint16(3))
	f.Add(hostile, hostile, hostile, -1, -1, 0, uint16(0))
	f.Add("\x00\xff", "\uFFFE", "", math.MaxInt, math.MinInt, math.MaxInt, uint16(1000))
	f.Fuzz(func(t *testing.T, title, label, class string, a, b, c int, n uint16) {
		n %= 2000
		segs := make([]Segment, n)
		bars := make([]Bar, n)
		for i := range segs {
			segs[i] = Segment{Label: label, Value: a + i, Class: class}
			bars[i] = Bar{Label: label, Value: b - i, Of: c}
		}
		for _, out := range []template.HTML{Capacity(title, c, segs), Rates(title, bars), Ratio(title, a, b)} {
			nodes := parse(t, out)
			if nodes[1].text != clean(title) {
				t.Fatalf("title %q, want %q", nodes[1].text, clean(title))
			}
		}
		if first, again := Capacity(title, c, segs), Capacity(title, c, segs); first != again {
			t.Fatal("not deterministic")
		}
	})
}

func TestCountsProportional(t *testing.T) {
	t.Parallel()
	nodes := parse(t, Counts("Cancellations by weekday", []Count{{"Mon", 4}, {"Tue", 0}, {"Wed", 7}, {"Thu", -2}, {"Fri", 10}}))
	bars := find(nodes, "rect", "bar")
	if len(bars) != 3 { // Tue and Thu (negative: none) have no bar
		t.Fatalf("%d bars, want 3", len(bars))
	}
	// The scale is 0 to 10: Fri's bar is the plot's height, Mon's 0.4 of it.
	full := f(t, bars[2], "height")
	for i, want := range []float64{0.4, 0.7, 1} {
		if got := f(t, bars[i], "height"); !near(got, want*full) {
			t.Errorf("bar %d height %v, want %v", i, got, want*full)
		}
		if !near(f(t, bars[i], "y")+f(t, bars[i], "height"), f(t, bars[2], "y")+full) {
			t.Errorf("bar %d does not stand on the base line", i)
		}
	}
	if got, want := strings.Join(texts(nodes, "count"), "|"), "4|7|10"; got != want {
		t.Errorf("counts %q, want %q", got, want)
	}
	if got, want := strings.Join(texts(nodes, "bar-label"), "|"), "Mon|Tue|Wed|Thu|Fri"; got != want {
		t.Errorf("labels %q, want %q", got, want)
	}
	if label := nodes[0].attr["aria-label"]; label != "Cancellations by weekday: Mon 4; Tue 0; Wed 7; Thu 0; Fri 10." {
		t.Errorf("aria-label %q", label)
	}
	// Every text is at least 11 px, readable at phone width.
	for _, n := range nodes {
		if n.name == "text" && f(t, n, "font-size") < 11 {
			t.Errorf("text %q at %s px", n.text, n.attr["font-size"])
		}
	}
	none := parse(t, Counts("Nothing", []Count{{"Mon", 0}}))
	if len(find(none, "rect", "bar")) != 0 || one(t, none, "text", "no-data").text != "None" {
		t.Errorf("a chart of zeros draws bars or no note")
	}
	many := make([]Count, 30)
	if got := one(t, parse(t, Counts("Many", many)), "text", "more").text; got != "6 more not shown" {
		t.Errorf("note %q", got)
	}
}
