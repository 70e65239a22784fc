package chart

import (
	"html/template"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Width is the viewBox width of Capacity and Ratio, and the least width of
// Rates; the SVG scales to its container, so this only sets how large the
// text is relative to the drawing.
const Width = 340

// MaxSegments is how many segments Capacity draws one by one; any beyond are
// drawn and counted together as one "Other" segment, so the total against
// capacity stays right.
const MaxSegments = 8

// MaxBars is how many bars Rates draws. Bars beyond it are left out and the
// chart says how many; bucketing (say positions 1–10 and "11+") is the
// caller's business.
const MaxBars = 12

// Segment is one part of a stacked bar.
//
// Class picks the fill colour: "confirmed" green, "held" amber, "waitlisted"
// blue, "free" the light line grey, "noshow" red; any other class is a neutral
// grey. It is also added to the shape as the CSS class "seg-<Class>" when it is
// a plain token (letters, digits, '-' and '_').
type Segment struct {
	Label string
	Value int
	Class string
}

// Bar is one bar of a bar chart: Value of Of succeeded (say, offers claimed
// of offers made at waitlist position 2). Of == 0 means no data and is drawn
// as an empty bar with "–".
type Bar struct {
	Label     string
	Value, Of int
}

// Capacity draws one horizontal stacked bar of the segments against max, the
// capacity, with a legend giving each segment's label and value. While the
// segments fit, the track is max wide and what is left of it is free; when
// they exceed max, the track is their total, a marker shows where capacity
// ends, and whatever is beyond it (typically the waitlisted) is drawn past
// the marker. Negative values count as zero.
func Capacity(title string, max int, segs []Segment) template.HTML {
	max = nonneg(max)
	segs = capSegments(segs)
	// The total is exact however large the values (a sum of ints can
	// overflow int); the geometry is in float64, where it cannot.
	total := new(big.Int)
	totalF := 0.0
	for _, sg := range segs {
		v := nonneg(sg.Value)
		total.Add(total, big.NewInt(int64(v)))
		totalF += float64(v)
	}
	maxBig := big.NewInt(int64(max))
	over := total.Cmp(maxBig) > 0
	scale := math.Max(float64(max), totalF)

	// The summary, in words and exact figures.
	var sum strings.Builder
	if t := clean(title); t != "" {
		sum.WriteString(t + ": ")
	}
	if len(segs) == 0 {
		sum.WriteString("nothing counted")
	}
	for i, sg := range segs {
		if i > 0 {
			sum.WriteString(", ")
		}
		sum.WriteString(segLabel(sg) + " " + strconv.Itoa(nonneg(sg.Value)))
	}
	sum.WriteString("; capacity " + strconv.Itoa(max))
	if over {
		sum.WriteString(", " + new(big.Int).Sub(total, maxBig).String() + " over capacity")
	}
	sum.WriteString(".")

	const trackY, trackH, rowH, colW = 30.0, 24.0, 20.0, Width / 3.0
	legendY := 78.0
	if over {
		legendY = 92
	}
	rows := (len(segs) + 2) / 3
	h := legendY - 14
	if rows > 0 {
		h = legendY + float64(rows-1)*rowH + 8
	}

	var s svg
	s.open(Width, h, clean(title), sum.String())
	s.text("chart-title", 0, 18, 15, "start", colInk, true, trunc(clean(title), 40))
	s.text("chart-figure", Width, 18, 13, "end", colMuted, false, compactTotal(total, totalF)+" of "+compact(max))
	s.rect("track", 0, trackY, Width, trackH, colTrack)
	x := 0.0
	for _, sg := range segs {
		v := nonneg(sg.Value)
		if v == 0 || scale == 0 {
			continue
		}
		w := math.Min(Width*(float64(v)/scale), Width-x) // no float drift past the end
		s.rect(segClass(sg), x, trackY, w, trackH, fill(sg.Class))
		x += w
	}
	if over {
		mx := Width * (float64(max) / scale)
		s.line("cap-marker", mx, trackY-4, mx, trackY+trackH+4, colInk, 2)
		anchor := "middle"
		switch {
		case mx < Width/4:
			anchor = "start"
		case mx > Width*3/4:
			anchor = "end"
		}
		s.text("cap-label", mx, trackY+trackH+18, 12, anchor, colInk, false, "capacity "+compact(max))
	}
	for i, sg := range segs {
		lx := float64(i%3) * colW
		ly := legendY + float64(i/3)*rowH
		s.rect(segClass(sg), lx, ly-10, 12, 12, fill(sg.Class))
		s.text("legend", lx+18, ly, 13, "start", colInk, false,
			trunc(segLabel(sg), 14)+" "+compact(nonneg(sg.Value)))
	}
	return template.HTML(s.close())
}

// compactTotal abbreviates a total that may not fit an int.
func compactTotal(total *big.Int, f float64) string {
	if total.IsInt64() && total.Int64() < 10000 {
		return total.String()
	}
	return compactFloat(f)
}

// capSegments folds the segments past MaxSegments into one "Other", whose
// value saturates at math.MaxInt.
func capSegments(segs []Segment) []Segment {
	if len(segs) <= MaxSegments {
		return segs
	}
	out := make([]Segment, MaxSegments, MaxSegments+1)
	copy(out, segs)
	other := Segment{Label: "Other", Class: "other"}
	for _, sg := range segs[MaxSegments:] {
		other.Value = add(other.Value, nonneg(sg.Value))
	}
	return append(out, other)
}

// segLabel is the segment's label, or its class when it has none.
func segLabel(sg Segment) string {
	if l := clean(sg.Label); l != "" {
		return l
	}
	if c := clean(sg.Class); c != "" {
		return c
	}
	return "–"
}

func segClass(sg Segment) string {
	if c := classToken(sg.Class); c != "" {
		return "seg seg-" + c
	}
	return "seg"
}

// Rates draws a vertical bar chart of shares, 0 to 100 %, one bar per item in
// order, each labelled with its percentage and "n of m". A bar whose Of is
// zero (or negative) has no data: its track is empty and it reads "–". A
// Value above Of is drawn as a full bar reading ">100%". Only the first
// MaxBars bars are drawn; the chart says how many more there were.
func Rates(title string, bars []Bar) template.HTML {
	shown := bars
	if len(shown) > MaxBars {
		shown = shown[:MaxBars]
	}
	more := len(bars) - len(shown)

	var sum strings.Builder
	if t := clean(title); t != "" {
		sum.WriteString(t + ": ")
	}
	if len(shown) == 0 {
		sum.WriteString("no data")
	}
	for i, b := range shown {
		if i > 0 {
			sum.WriteString("; ")
		}
		v, of := nonneg(b.Value), nonneg(b.Of)
		if l := clean(b.Label); l != "" {
			sum.WriteString(l + " ")
		}
		if of == 0 {
			sum.WriteString("no data")
			continue
		}
		sum.WriteString(pct(float64(v)/float64(of)) + " (" + strconv.Itoa(v) + " of " + strconv.Itoa(of) + ")")
	}
	if more > 0 {
		sum.WriteString("; " + strconv.Itoa(more) + " more not shown")
	}
	sum.WriteString(".")

	const top, plotH = 40.0, 120.0
	const base = top + plotH
	w := float64(Width)
	if n := float64(len(shown)) * 56; n > w {
		w = n
	}
	h := base + 38
	if more > 0 {
		h = base + 56
	}

	var s svg
	s.open(w, h, clean(title), sum.String())
	s.text("chart-title", 0, 18, 15, "start", colInk, true, trunc(clean(title), 48))
	if len(shown) == 0 {
		s.text("no-data", w/2, top+plotH/2, 13, "middle", colMuted, false, "No data")
	}
	slot := w / math.Max(1, float64(len(shown)))
	bw := math.Min(40, slot*0.6)
	labelRunes := int(slot / 7)
	if labelRunes < 3 {
		labelRunes = 3
	}
	for i, b := range shown {
		v, of := nonneg(b.Value), nonneg(b.Of)
		cx := float64(i)*slot + slot/2
		bx := cx - bw/2
		s.rect("track", bx, top, bw, plotH, colTrack)
		if of == 0 {
			s.text("pct", cx, top+plotH/2, 16, "middle", colMuted, true, "–")
		} else {
			share := float64(v) / float64(of)
			bh := plotH * math.Min(share, 1)
			s.rect("bar", bx, base-bh, bw, bh, colGreen)
			s.text("pct", cx, base-bh-5, 12, "middle", colInk, true, pct(share))
		}
		s.text("bar-label", cx, base+16, 12, "middle", colInk, false, trunc(clean(b.Label), labelRunes))
		s.text("bar-count", cx, base+31, 11, "middle", colMuted, false, compact(v)+" of "+compact(of))
	}
	s.line("axis", 0, base, w, base, colMuted, 1)
	if more > 0 {
		s.text("more", 0, base+50, 12, "start", colMuted, false, strconv.Itoa(more)+" more not shown")
	}
	return template.HTML(s.close())
}

// Ratio draws a single meter of value against of, such as the waitlisted
// against the seats: a bar on a scale of 0 to 2×, 5×, 10×, 20×, … (the first
// that holds it), a marker at 1×, and the ratio as text, "2.4×". When of is
// zero (or negative) there is no ratio and the text is "–". Negative values
// count as zero.
func Ratio(title string, value, of int) template.HTML {
	value, of = nonneg(value), nonneg(of)
	ok := of > 0
	r := 0.0
	text := "–"
	if ok {
		r = float64(value) / float64(of)
		text = ratioText(r) + "×"
	}
	figures := strconv.Itoa(value) + " to " + strconv.Itoa(of)

	var sum strings.Builder
	if t := clean(title); t != "" {
		sum.WriteString(t + ": ")
	}
	if ok {
		sum.WriteString(text)
	} else {
		sum.WriteString("no data")
	}
	sum.WriteString(" (" + figures + ").")

	const trackY, trackH = 34.0, 16.0
	var s svg
	s.open(Width, 90, clean(title), sum.String())
	s.text("chart-title", 0, 20, 15, "start", colInk, true, trunc(clean(title), 36))
	s.text("ratio", Width, 22, 22, "end", colInk, true, text)
	s.rect("track", 0, trackY, Width, trackH, colTrack)
	if ok {
		scale := niceCeil(math.Max(r, 2))
		s.rect("bar", 0, trackY, Width*math.Min(r/scale, 1), trackH, colBlue)
		mx := Width / scale
		s.line("one-marker", mx, trackY-4, mx, trackY+trackH+4, colInk, 2)
		s.text("tick", mx, trackY+trackH+16, 12, "middle", colMuted, false, "1×")
		s.text("tick", Width, trackY+trackH+16, 12, "end", colMuted, false, compactFloat(scale)+"×")
	}
	s.text("chart-figure", 0, 84, 12, "start", colMuted, false, compact(value)+" to "+compact(of))
	return template.HTML(s.close())
}

// ratioText gives a ratio to one decimal, abbreviated when it is large.
func ratioText(r float64) string {
	if r >= 1000 {
		return compactFloat(r)
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

// niceCeil returns the least of 1, 2, 5, 10, 20, 50, … that is at least x.
func niceCeil(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x <= 1 {
		return 1
	}
	for p := 1.0; ; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if m*p >= x {
				return m * p
			}
		}
	}
}

// Count is one bar of Counts: how many of something, say the
// cancellations on Mondays.
type Count struct {
	Label string
	Value int
}

// MaxCountBars is how many bars Counts draws (a day's hours fit).
const MaxCountBars = 24

// CountsWidth is the viewBox width of Counts: about as wide as a card on a
// phone (390 px) or in the dashboard's grid of charts, so that its 11 px
// text is drawn at least about 11 px on either.
const CountsWidth = 280

// Counts draws a vertical bar chart of counts, one bar per item in order,
// on a scale from 0 to the largest rounded up (1, 2, 5, 10, …), each bar
// labelled below and its count above it. Only the first MaxCountBars bars
// are drawn; the chart says how many more there were. Negative values
// count as zero.
func Counts(title string, bars []Count) template.HTML {
	shown := bars
	if len(shown) > MaxCountBars {
		shown = shown[:MaxCountBars]
	}
	more := len(bars) - len(shown)
	top := 0
	for _, b := range shown {
		top = max(top, nonneg(b.Value))
	}

	var sum strings.Builder
	if t := clean(title); t != "" {
		sum.WriteString(t + ": ")
	}
	if len(shown) == 0 {
		sum.WriteString("no data")
	}
	for i, b := range shown {
		if i > 0 {
			sum.WriteString("; ")
		}
		if l := clean(b.Label); l != "" {
			sum.WriteString(l + " ")
		}
		sum.WriteString(strconv.Itoa(nonneg(b.Value)))
	}
	if more > 0 {
		sum.WriteString("; " + strconv.Itoa(more) + " more not shown")
	}
	sum.WriteString(".")

	const top0, plotH = 40.0, 120.0
	const base = top0 + plotH
	w := float64(CountsWidth)
	h := base + 24
	if more > 0 {
		h = base + 44
	}
	scale := niceCeil(math.Max(float64(top), 1))

	var s svg
	s.open(w, h, clean(title), sum.String())
	s.text("chart-title", 0, 18, 15, "start", colInk, true, trunc(clean(title), 34))
	if len(shown) == 0 || top == 0 {
		s.text("no-data", w/2, top0+plotH/2, 13, "middle", colMuted, false, map[bool]string{true: "No data", false: "None"}[len(shown) == 0])
	}
	slot := w / math.Max(1, float64(len(shown)))
	bw := math.Min(40, slot*0.7)
	labelRunes := max(int(slot/7), 2)
	for i, b := range shown {
		v := nonneg(b.Value)
		cx := float64(i)*slot + slot/2
		bh := plotH * float64(v) / scale
		if v > 0 {
			s.rect("bar", cx-bw/2, base-bh, bw, bh, colBlue)
			s.text("count", cx, base-bh-5, 11, "middle", colInk, true, compact(v))
		}
		s.text("bar-label", cx, base+16, 11, "middle", colInk, false, trunc(clean(b.Label), labelRunes))
	}
	s.line("axis", 0, base, w, base, colMuted, 1)
	if more > 0 {
		s.text("more", 0, base+38, 12, "start", colMuted, false, strconv.Itoa(more)+" more not shown")
	}
	return template.HTML(s.close())
}

// Place is one point of Places: from At on, the place in line was Place
// (0: not in line).
type Place struct {
	At    time.Time
	Place int
}

// Places draws a place in line as steps, one step per move in order
// (not to scale in time: a day of quiet between two busy hours would
// squeeze them), place 1 at the top (higher is better), the first and
// last move's times below and the places on the left; spans out of line
// (holding an offer, booked, left) are gaps. Negative places count as 0.
func Places(title string, pts []Place, loc *time.Location) template.HTML {
	if loc == nil {
		loc = time.UTC
	}
	top := 1
	for _, p := range pts {
		top = max(top, nonneg(p.Place))
	}
	var sum strings.Builder
	if t := clean(title); t != "" {
		sum.WriteString(t + ": ")
	}
	if len(pts) == 0 {
		sum.WriteString("no data")
	}
	for i, p := range pts {
		if i > 0 {
			sum.WriteString("; ")
		}
		sum.WriteString(p.At.In(loc).Format("2 Jan 15:04") + " ")
		if v := nonneg(p.Place); v > 0 {
			sum.WriteString("place " + strconv.Itoa(v))
		} else {
			sum.WriteString("not in line")
		}
	}
	sum.WriteString(".")

	const w, left, top0, plotH = float64(CountsWidth), 34.0, 34.0, 110.0
	const base = top0 + plotH
	var s svg
	s.open(w, base+26, clean(title), sum.String())
	s.text("chart-title", 0, 18, 15, "start", colInk, true, trunc(clean(title), 34))
	if len(pts) == 0 {
		s.text("no-data", w/2, top0+plotH/2, 13, "middle", colMuted, false, "No data")
		return template.HTML(s.close())
	}
	step := (w - left - 4) / float64(len(pts))
	x := func(i int) float64 { return left + step*float64(i) }
	y := func(place int) float64 {
		if top == 1 {
			return top0 + plotH/2
		}
		return top0 + plotH*float64(place-1)/float64(top-1)
	}
	// The places on the left: first, last and one between.
	for _, v := range []int{1, (top + 1) / 2, top} {
		s.text("place-label", left-6, y(v)+4, 11, "end", colMuted, false, "#"+strconv.Itoa(v))
		s.line("grid", left, y(v), w-4, y(v), "#e4e4e4", 1)
	}
	for i, p := range pts {
		if v := nonneg(p.Place); v > 0 {
			s.line("step", x(i), y(v), x(i+1), y(v), colBlue, 3)
			if i+1 < len(pts) && nonneg(pts[i+1].Place) > 0 {
				s.line("step", x(i+1), y(v), x(i+1), y(nonneg(pts[i+1].Place)), colBlue, 1.5)
			}
		} else {
			s.line("out", x(i), base-2, x(i+1), base-2, colMuted, 1)
		}
	}
	s.line("axis", left, base+2, w-4, base+2, colMuted, 1)
	s.text("time-label", left, base+18, 11, "start", colInk, false, pts[0].At.In(loc).Format("2 Jan 15:04"))
	if n := len(pts); n > 1 {
		s.text("time-label", w-4, base+18, 11, "end", colInk, false, pts[n-1].At.In(loc).Format("2 Jan 15:04"))
	}
	return template.HTML(s.close())
}
