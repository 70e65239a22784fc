package mailmsg

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToText renders an HTML mail body as the plain text a mail client
// would have written: blocks on their own lines, <br> as a line break,
// <blockquote> as "> " lines, <hr> as Outlook's underscore separator, and
// a "-- " line before the signature blocks Gmail and Outlook mark. Scripts,
// styles and the head are dropped. The tree is walked without recursion, so
// deep nesting costs no stack.
func htmlToText(s string) string {
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		return s
	}
	t := textWriter{}
	type frame struct {
		n    *html.Node
		exit bool
	}
	stack := []frame{{n: doc}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := f.n
		if f.exit {
			t.leave(n)
			continue
		}
		switch n.Type {
		case html.TextNode:
			t.text(n.Data)
			continue
		case html.CommentNode, html.DoctypeNode:
			continue
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Head, atom.Title, atom.Template, atom.Noscript:
				continue
			}
			t.enter(n)
		}
		stack = append(stack, frame{n: n, exit: true})
		// Children are pushed last first so they pop in order.
		var kids []*html.Node
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			kids = append(kids, c)
		}
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, frame{n: kids[i]})
		}
	}
	return t.b.String()
}

type textWriter struct {
	b         strings.Builder
	quote     int  // blockquote depth
	pre       int  // <pre> depth
	lineStart bool // nothing written on the current line yet
	space     bool // a space is owed before the next word
}

func (t *textWriter) newline() {
	t.b.WriteByte('\n')
	t.lineStart = true
	t.space = false
}

// block ends the current line unless it is already empty.
func (t *textWriter) block() {
	if !t.lineStart && t.b.Len() > 0 {
		t.newline()
	}
}

func (t *textWriter) write(s string) {
	if s == "" {
		return
	}
	if t.lineStart {
		if t.quote > 0 {
			t.b.WriteString(strings.Repeat("> ", min(t.quote, 16)))
		}
		t.lineStart = false
	} else if t.space {
		t.b.WriteByte(' ')
	}
	t.space = false
	t.b.WriteString(s)
}

func (t *textWriter) text(s string) {
	if t.pre > 0 {
		for i, line := range strings.Split(s, "\n") {
			if i > 0 {
				t.newline()
			}
			t.write(line)
		}
		return
	}
	if s != "" && isSpace(s[0]) {
		t.space = true
	}
	words := strings.Fields(s)
	for i, w := range words {
		if i > 0 {
			t.space = true
		}
		t.write(w)
	}
	if len(words) > 0 && isSpace(s[len(s)-1]) {
		t.space = true
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

func isSignatureBlock(n *html.Node) bool {
	for _, a := range n.Attr {
		switch a.Key {
		case "class":
			for _, c := range strings.Fields(a.Val) {
				if c == "gmail_signature" || c == "moz-signature" {
					return true
				}
			}
		case "id":
			if a.Val == "Signature" || a.Val == "signature" {
				return true
			}
		case "data-smartmail":
			if a.Val == "gmail_signature" {
				return true
			}
		}
	}
	return false
}

func (t *textWriter) enter(n *html.Node) {
	switch n.DataAtom {
	case atom.Br:
		if t.lineStart && t.quote > 0 {
			t.write(">")
		}
		t.newline()
	case atom.Hr:
		t.block()
		t.write("________________________________")
		t.newline()
	case atom.Blockquote:
		t.block()
		t.quote++
	case atom.Pre:
		t.block()
		t.pre++
	case atom.Li:
		t.block()
		t.write("-")
		t.space = true
	case atom.Td, atom.Th:
		t.space = true
	case atom.P, atom.Div, atom.Tr, atom.Table, atom.Ul, atom.Ol, atom.H1, atom.H2, atom.H3,
		atom.H4, atom.H5, atom.H6, atom.Section, atom.Article, atom.Header, atom.Footer,
		atom.Address, atom.Center, atom.Dl, atom.Dt, atom.Dd, atom.Tbody, atom.Form:
		t.block()
		if isSignatureBlock(n) {
			t.b.WriteString("-- \n")
			t.lineStart = true
		}
	case atom.Img:
		// Pictures carry no booking details; their alt text is usually
		// a logo's name.
	}
}

func (t *textWriter) leave(n *html.Node) {
	switch n.DataAtom {
	case atom.Blockquote:
		t.block()
		t.quote--
	case atom.Pre:
		t.block()
		t.pre--
	case atom.P:
		t.block()
		t.newline()
	case atom.Div, atom.Tr, atom.Table, atom.Ul, atom.Ol, atom.H1, atom.H2, atom.H3,
		atom.H4, atom.H5, atom.H6, atom.Section, atom.Article, atom.Header, atom.Footer,
		atom.Address, atom.Center, atom.Dl, atom.Dt, atom.Dd, atom.Li, atom.Tbody, atom.Form:
		t.block()
	}
}
