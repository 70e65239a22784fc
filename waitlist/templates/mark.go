package templates

import (
	htmltemplate "html/template"
	"strings"

	"github.com/nextup-dev/nextup"
)

// testMark starts the subject of a message sent to the business to try
// what its people will get.
const testMark = "[Test] "

// MarkTest marks a composed email as a test the business sends itself:
// its subject (and the HTML layout's title) start with "[Test]"; the
// words are left as the person would get them.
func MarkTest(m *nextup.Message) {
	m.Subject = testMark + m.Subject
	m.HTML = strings.Replace(m.HTML, "<title>", "<title>"+htmltemplate.HTMLEscapeString(testMark), 1)
}
