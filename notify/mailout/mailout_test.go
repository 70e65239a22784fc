package mailout_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/mailout"
)

// parts walks a MIME body and returns each leaf part's media type and
// decoded content, with the filename of attachments.
func parts(t *testing.T, contentType string, body io.Reader) (types, files []string, content map[string]string) {
	t.Helper()
	content = map[string]string{}
	var walk func(ct string, r io.Reader)
	walk = func(ct string, r io.Reader) {
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil {
			t.Fatalf("content type %q: %v", ct, err)
		}
		if !strings.HasPrefix(mt, "multipart/") {
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			types = append(types, mt)
			content[mt] = string(b)
			return
		}
		types = append(types, mt)
		mr := multipart.NewReader(r, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.FileName() != "" {
				files = append(files, p.FileName())
			}
			var body io.Reader = p // multipart.Part decodes quoted-printable itself
			if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
				body = base64.NewDecoder(base64.StdEncoding, p)
			}
			walk(p.Header.Get("Content-Type"), body)
		}
	}
	walk(contentType, body)
	return types, files, content
}

func TestCompose(t *testing.T) {
	t.Parallel()
	msg := nextup.Message{ID: "msg_1", Channel: nextup.ChannelEmail, To: "ada@example.com", Subject: "Booked: haircut",
		Body: "See you at 2 pm.", HTML: "<p>See you at 2 pm.</p>",
		Calendar:       "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n",
		UnsubscribeURL: "https://nextup.example/u/biz_1/tok",
		CreatedAt:      time.Date(2031, 3, 10, 14, 0, 0, 0, time.UTC)}
	m, err := mailout.Compose("Salon <offers@salon.example>", "msg_1@salon.example", msg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := mail.ReadMessage(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"From":                  `"Salon" <offers@salon.example>`,
		"To":                    "<ada@example.com>",
		"Subject":               "Booked: haircut",
		"Message-Id":            "<msg_1@salon.example>",
		"X-Nextup-Message-Id":   "msg_1",
		"List-Unsubscribe":      "<https://nextup.example/u/biz_1/tok>",
		"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
	} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if d, err := r.Header.Date(); err != nil || !d.Equal(msg.CreatedAt) {
		t.Errorf("Date %v, %v", d, err)
	}
	types, files, content := parts(t, r.Header.Get("Content-Type"), r.Body)
	if got := strings.Join(types, " "); got != "multipart/mixed multipart/alternative text/plain text/html text/calendar" {
		t.Errorf("parts %s", got)
	}
	if len(files) != 1 || files[0] != "invite.ics" || !strings.Contains(content["text/calendar"], "BEGIN:VCALENDAR") ||
		content["text/plain"] != "See you at 2 pm." || content["text/html"] != "<p>See you at 2 pm.</p>" {
		t.Errorf("files %v, content %q", files, content)
	}

	// Transactional mail: no unsubscribe headers; text only.
	msg.HTML, msg.Calendar, msg.UnsubscribeURL = "", "", ""
	if m, err = mailout.Compose("offers@salon.example", "msg_1@salon.example", msg); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if r, err = mail.ReadMessage(&buf); err != nil {
		t.Fatal(err)
	}
	if r.Header.Get("List-Unsubscribe") != "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("List-Unsubscribe %q, Content-Type %q", r.Header.Get("List-Unsubscribe"), r.Header.Get("Content-Type"))
	}

	msg.To = "not an address"
	if _, err := mailout.Compose("offers@salon.example", "x@salon.example", msg); !errors.Is(err, nextup.ErrInvalid) || nextup.ErrorCode(err) != "bad_address" {
		t.Errorf("bad address: %v, want ErrInvalid bad_address", err)
	}
}
