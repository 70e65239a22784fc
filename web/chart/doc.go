// Package chart draws the small charts of the organiser's dashboard as inline
// SVG, rendered on the server: seats taken against capacity (Capacity), the
// waitlist-to-capacity ratio (Ratio) and shares such as the acceptance rate
// by waitlist position or the no-show rate (Rates).
//
// The page carries no JavaScript and loads no assets, so a chart is one
// self-contained <svg> element returned as template.HTML, ready to be placed
// in an html/template. Colours are SVG presentation attributes (fill=,
// stroke=) rather than style= attributes, so the charts keep working under a
// Content-Security-Policy whose style-src forbids inline styles; each shape
// also carries a class (for example "seg seg-held") so that the page's own
// stylesheet can restyle it, since CSS rules win over presentation
// attributes. The palette is that of the staff pages' CSS variables
// (--green, --red, --line, --ink, --muted).
//
// Every chart is sized by a viewBox with width="100%", so it scales to the
// card it sits in; the text is sized for a card about 30rem wide. Each is an
// image to assistive technology: role="img", a <title>, and an aria-label
// that says the figures in words.
//
// The functions are total: negative figures count as zero, a zero denominator
// is drawn as "no data" (a zero capacity puts the capacity marker at the
// start of the track), huge figures are abbreviated in the
// drawing (but given exactly in the aria-label), and the same input always
// yields the same bytes. The SVG is written by hand rather than through
// html/template because every text must also be well-formed XML: characters
// XML forbids (most control characters) are replaced before escaping, which
// html/template does not do.
package chart
